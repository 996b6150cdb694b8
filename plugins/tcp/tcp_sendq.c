/* SPDX-License-Identifier: BSD-3-Clause
 * tcp_sendq.c — send-side backpressure of the tcp stage: SENDs the
 * connection's send buffer cannot take yet are held here, in order, and
 * handed to the stack as acknowledgements free room (from poll); the
 * application is told when a connection starts holding (SEND_FULL) and when
 * it has drained (SEND_ROOM), so it stops producing instead of tearing the
 * stream. A SEND is never refused for a full send buffer and never
 * half-taken: the stack takes whole mbufs. A CLOSE behind held data waits
 * for it (the FIN goes after the last byte). A connection that dies frees
 * what it held (counted: sendq_freed_bytes); the application learns it from
 * the RESET / TIMEOUT / CLOSED event.
 *
 * One entry per connection slot (the low 16 bits of a connection id), the
 * held mbufs linked through their `next` field (SEND mbufs are single
 * segment; the link is cleared before the stack gets one), and a list of the
 * slots holding something, so that poll costs nothing while none does. */
#include <errno.h>
#include <stdlib.h>

#include <rte_malloc.h>
#include <rte_mbuf.h>

#include <stk/tcp.h>

#include "tcp.h"

struct tcp_sq_ent {
	struct rte_mbuf *head, *tail;
	uint32_t conn;      /* the connection the entry holds for (ids reuse slots) */
	uint32_t user;      /* its cookie, for the events */
	uint32_t bytes;
	bool listed;        /* on the busy list */
	bool full;          /* SEND_FULL told: SEND_ROOM is due once drained */
	bool close;         /* a CLOSE waits behind the held data */
	uint32_t next_busy; /* slot + 1 of the next busy entry; 0: the end */
};

struct tcp_sendq {
	unsigned n;
	uint32_t busy; /* slot + 1 of the first busy entry; 0: none */
	struct tcp_sq_ent e[];
};

struct tcp_sendq *
tcp_sq_create(struct lcp_stage *st, unsigned max_conns)
{
	/* slots are the low 16 bits of an id: at most 65536 */
	unsigned n = max_conns + 1 > 65536 ? 65536 : max_conns + 1;
	struct tcp_sendq *q = lcp_stage_zmalloc(st, "the send queue", sizeof(*q) + n * sizeof(q->e[0]));

	if (q != NULL)
		q->n = n;
	return q;
}

static struct tcp_sq_ent *
sq_ent(struct tcp_sendq *q, uint32_t conn)
{
	unsigned s = conn & 0xffff;

	return s < q->n ? &q->e[s] : NULL;
}

/* free what e holds; the bytes */
static uint32_t
sq_clear(struct tcp_sq_ent *e)
{
	uint32_t bytes = e->bytes;

	tcp_mbuf_list_free(e->head);
	e->head = e->tail = NULL;
	e->bytes = 0;
	e->full = e->close = false;
	return bytes;
}

void
tcp_sq_free(struct tcp_sendq *q)
{
	if (q == NULL)
		return;
	for (unsigned i = 0; i < q->n; i++)
		sq_clear(&q->e[i]);
	rte_free(q);
}

int
tcp_sq_send(struct tcp_sendq *q, struct stk *stk, struct stk_tcb *c, struct rte_mbuf *m, uint32_t user,
	    bool *full_now)
{
	uint32_t conn = stk_tcp_id(c);
	struct tcp_sq_ent *e = sq_ent(q, conn);
	int rc;

	*full_now = false;
	if (e != NULL && e->head != NULL && e->conn != conn)
		sq_clear(e); /* what an older connection of the slot left (it died unseen) */
	if (e == NULL || e->head == NULL) {
		rc = stk_tcp_send(stk, c, (struct stk_buf *)m, rte_pktmbuf_mtod(m, uint8_t *), m->data_len);
		if (rc != -ENOBUFS || e == NULL)
			return rc;
	}
	/* behind what is held, or the send buffer is full: hold it */
	if (e->head == NULL) {
		e->conn = conn;
		e->user = user;
		e->head = m;
	} else {
		e->tail->next = m;
	}
	e->tail = m;
	m->next = NULL;
	e->bytes += m->data_len;
	if (!e->listed) {
		e->listed = true;
		e->next_busy = q->busy;
		q->busy = (conn & 0xffff) + 1;
	}
	if (!e->full) {
		e->full = true;
		*full_now = true;
	}
	return 1;
}

bool
tcp_sq_close_later(struct tcp_sendq *q, uint32_t conn)
{
	struct tcp_sq_ent *e = sq_ent(q, conn);

	if (e == NULL || e->head == NULL || e->conn != conn)
		return false;
	e->close = true;
	return true;
}

uint32_t
tcp_sq_drop(struct tcp_sendq *q, uint32_t conn)
{
	struct tcp_sq_ent *e = sq_ent(q, conn);

	if (e == NULL || e->head == NULL || e->conn != conn)
		return 0;
	return sq_clear(e); /* the busy list drops it at the next drain */
}

unsigned
tcp_sq_drain(struct tcp_sendq *q, struct stk *stk, const struct tcp_sq_cb *cb)
{
	uint32_t *link = &q->busy;
	unsigned work = 0;

	while (*link != 0) {
		struct tcp_sq_ent *e = &q->e[*link - 1];
		struct stk_tcb *c = e->head != NULL ? stk_tcp_by_id(stk, e->conn) : NULL;

		if (e->head != NULL && c == NULL) {
			cb->freed(cb->arg, e->conn, sq_clear(e)); /* the connection is gone */
		}
		while (c != NULL && e->head != NULL) {
			struct rte_mbuf *m = e->head;
			int rc;

			if (m->data_len > stk_tcp_sndbuf_space(c))
				break;
			e->head = m->next;
			m->next = NULL;
			e->bytes -= m->data_len;
			rc = stk_tcp_send(stk, c, (struct stk_buf *)m, rte_pktmbuf_mtod(m, uint8_t *), m->data_len);
			work++;
			if (rc != 0) {
				/* no longer able to send (the peer reset, we closed): what
				 * is held cannot go either */
				uint32_t len = m->data_len;

				rte_pktmbuf_free(m);
				cb->error(cb->arg, e->conn, e->user, -rc);
				cb->freed(cb->arg, e->conn, len + sq_clear(e));
				break;
			}
		}
		if (e->head == NULL) {
			e->tail = NULL;
			if (e->close) {
				e->close = false;
				if (c != NULL)
					cb->close(cb->arg, c);
			}
			if (e->full) {
				e->full = false;
				cb->room(cb->arg, e->conn, e->user);
			}
			*link = e->next_busy; /* off the list */
			e->listed = false;
			e->next_busy = 0;
			continue;
		}
		link = &e->next_busy;
	}
	return work;
}
