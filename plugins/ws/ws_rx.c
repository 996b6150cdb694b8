/* SPDX-License-Identifier: BSD-3-Clause
 * ws_rx.c — what the ws stage receives: the upgrade response, then frames.
 *
 *   ws_on_data       a tcp DATA event: through TLS (ws_tls.c) or as it is
 *   ws_on_plain      the stream's plaintext: handshake response, then frames
 *   ws_frames        stk_ws_dec_next -> msgs: zero copy when a message lies in
 *                    one buffer, else assembled (pool, then heap); control
 *                    frames: ping -> pong, pong, close -> close + reconnect
 *   ws_msg_*         msg objects from the stage's pool, released by consumers
 *
 * A message wholly inside one buffer is handed on by reference: its lcp_msg
 * points into the mbuf, whose reference count it holds. A message that spans
 * buffers is assembled into a buffer from the stage's assembly pool
 * (assembly_size bytes each); one that outgrows it moves to an rte_malloc
 * buffer grown by doubling up to max_msg (msgs_assembled_heap). The msg owns the
 * buffer. Either way the msg carries the rx TSC of the segment that completed it. */
#include <stdio.h>
#include <string.h>

#include <rte_malloc.h>

#include "ws.h"

static void
ws_asm_free(struct ws_ctx *x, uint8_t kind, void *buf)
{
	if (kind == WS_ASM_POOL)
		lcp_pool_put(x->asm_pool, buf);
	else if (kind == WS_ASM_HEAP)
		rte_free(buf);
}

/* give back a connection's partly assembled message */
void
ws_asm_release(struct ws_ctx *x, struct ws_conn *c)
{
	ws_asm_free(x, c->asm_kind, c->asm_buf);
	c->asm_buf = NULL;
	c->asm_kind = WS_ASM_NONE;
	c->asm_len = c->asm_cap = 0;
	c->asm_drop = false;
}


static void
ws_msg_release(struct lcp_msg *pm)
{
	struct ws_msg *m = (struct ws_msg *)pm;

	if (pm->backing[0] != NULL)
		rte_pktmbuf_free(pm->backing[0]);
	if (pm->backing[1] != NULL)
		ws_asm_free(m->x, m->asm_kind, pm->backing[1]);
	lcp_pool_put(m->x->msgs, m);
}


/* an object from pool p; empty: wait up to pool_wait_us (backpressure), counted.
 * What this lcore has staged is emitted first: the messages waiting in our own
 * output buffer are the ones whose release would refill the pool. */
static inline void *
ws_pool_get(struct ws_ctx *x, struct lcp_pool *p)
{
	uint64_t waited;
	void *o;

	if (likely(x->pool_wait == 0))
		return lcp_pool_get(p);
	if (likely(p->get_bulk(p->pool, &o, 1) == 0))
		return o;
	ws_flush(x);
	o = lcp_pool_get_wait(p, x->pool_wait, &waited);
	lcp_count(x->st, WS_C_POOL_WAITS, 1);
	lcp_count(x->st, WS_C_POOL_WAIT_CYCLES, waited);
	return o;
}

static struct lcp_msg *
ws_msg_new(struct ws_ctx *x, struct ws_conn *c, unsigned op, const uint8_t *data, size_t len, uint64_t tsc)
{
	struct ws_msg *m;

	m = ws_pool_get(x, x->msgs);
	if (m == NULL) {
		lcp_count(x->st, WS_C_DROP_NO_MSG, 1);
		return NULL;
	}
	m->x = x;
	m->asm_kind = WS_ASM_NONE;
	m->pub.conn_id = c->idx;
	m->pub.rx_tsc = tsc;
	m->pub.data = data;
	m->pub.len = (uint32_t)len;
	m->pub.opcode = (uint16_t)op;
	m->pub.flags = c->session_start ? LCP_MSG_F_SESSION_START : 0;
	c->session_start = false;
	m->pub.release = ws_msg_release;
	m->pub.owner = x;
	m->pub.backing[0] = m->pub.backing[1] = NULL;
	return &m->pub;
}

static void
ws_emit_msg(struct ws_ctx *x, struct ws_conn *c, struct lcp_msg *m)
{
	c->msgs++;
	c->bytes += m->len;
	c->t_last_msg = m->rx_tsc != 0 ? m->rx_tsc : ws_now(); /* the stale-feed watchdog */
	lcp_count(x->st, WS_C_MSGS, 1);
	lcp_count(x->st, WS_C_MSG_BYTES, m->len);
	lcp_obuf_put(x->st, &x->msg, m);
}


/* the assembly buffer of a message that spans buffers: one of the pool first
 * (most such messages are small, and a pool is what the strategy measures); none
 * left: the heap with on_pool_empty "heap", else the message is skipped
 * (drop_assembly_pool_empty; asm_drop unless this was its last piece) */
static bool
ws_asm_start(struct ws_ctx *x, struct ws_conn *c, bool last)
{
	c->asm_buf = ws_pool_get(x, x->asm_pool);
	if (c->asm_buf != NULL) {
		c->asm_kind = WS_ASM_POOL;
		c->asm_cap = x->asm_size;
		return true;
	}
	if (x->asm_heap_fallback)
		return true; /* ws_asm_grow allocates */
	lcp_count(x->st, WS_C_DROP_ASSEMBLY_POOL_EMPTY, 1);
	c->asm_drop = !last;
	return false;
}

/* room for need bytes: longer than a pool buffer grows on the heap (doubling,
 * up to max_msg); false after failing the connection */
static bool
ws_asm_grow(struct ws_ctx *x, struct ws_conn *c, size_t need)
{
	size_t cap = c->asm_cap ? c->asm_cap * 2 : 4096;
	uint8_t *nb;

	while (cap < need)
		cap *= 2;
	if (cap > x->max_msg)
		cap = x->max_msg;
	nb = cap > c->asm_cap ? rte_malloc("ws_asm", cap, 0) : NULL;
	if (nb == NULL) {
		lcp_count(x->st, WS_C_DROP_ASSEMBLY_NOMEM, 1);
		ws_fail(x, c, STK_WS_CLOSE_INTERNAL, "no memory to assemble a message");
		return false;
	}
	if (c->asm_len > 0)
		memcpy(nb, c->asm_buf, c->asm_len);
	ws_asm_free(x, c->asm_kind, c->asm_buf);
	c->asm_buf = nb;
	c->asm_kind = WS_ASM_HEAP;
	c->asm_cap = cap;
	return true;
}

/* the assembled (or inflated) message out; the msg owns the buffer */
static void
ws_asm_emit(struct ws_ctx *x, struct ws_conn *c, uint64_t tsc, bool inflated)
{
	struct lcp_msg *m = ws_msg_new(x, c, c->asm_op, c->asm_buf, c->asm_len, tsc);

	if (m == NULL) {
		ws_asm_release(x, c);
		return;
	}
	m->backing[1] = c->asm_buf;
	((struct ws_msg *)m)->asm_kind = c->asm_kind;
	lcp_count(x->st, inflated ? WS_C_MSGS_INFLATED
		  : c->asm_kind == WS_ASM_HEAP ? WS_C_MSGS_ASSEMBLED_HEAP : WS_C_MSGS_ASSEMBLED, 1);
	c->asm_buf = NULL;
	c->asm_kind = WS_ASM_NONE;
	c->asm_len = c->asm_cap = 0;
	ws_emit_msg(x, c, m);
}

/* a piece of a compressed message (permessage-deflate): inflated into the
 * assembly buffer, grown as the inflater asks; a message without a buffer is
 * inflated into scratch space and dropped, so that the shared context stays
 * whole. The inflater bounds the message at max_msg (1009 as soon as it is
 * crossed). false after failing the connection. */
static bool
ws_inflate_piece(struct ws_ctx *x, struct ws_conn *c, const struct stk_ws_out *o, uint64_t tsc)
{
	const uint8_t *in = o->data, *ie = o->data + o->len;
	unsigned fl = (o->last ? STK_WS_Z_LAST : 0) | (c->asm_op == STK_WS_OP_TEXT ? STK_WS_Z_TEXT : 0);

	lcp_count(x->st, WS_C_DEFLATE_BYTES_RX, o->len);
	if (o->first && c->asm_buf == NULL && !ws_asm_start(x, c, false))
		c->asm_drop = true;
	for (;;) {
		uint8_t *out, *oe, *o0;
		int r;

		if (c->asm_drop) {
			out = x->zscratch;
			oe = out + sizeof(x->zscratch);
		} else {
			/* at max_msg the inflater needs no room: it ends the message or
			 * fails it with 1009 itself */
			if (c->asm_len == c->asm_cap && c->asm_cap < x->max_msg && !ws_asm_grow(x, c, c->asm_cap + 1))
				return false;
			out = c->asm_buf + c->asm_len;
			oe = c->asm_buf + c->asm_cap;
		}
		o0 = out;
		r = stk_ws_inflate(&c->inf, &in, ie, fl, &out, oe);
		lcp_count(x->st, WS_C_INFLATED_BYTES, (uint64_t)(out - o0));
		if (!c->asm_drop)
			c->asm_len += (size_t)(out - o0);
		if (r == STK_WS_Z_SPACE)
			continue;
		if (r == STK_WS_Z_ERROR) {
			lcp_count(x->st, c->inf.err_code == STK_WS_CLOSE_TOO_BIG ? WS_C_FAIL_1009
					 : c->inf.err_code == STK_WS_CLOSE_BAD_DATA ? WS_C_FAIL_1007
										    : WS_C_FAIL_1002,
				  1);
			ws_fail(x, c, c->inf.err_code, c->inf.err);
			return false;
		}
		if (r == STK_WS_Z_END) {
			if (c->asm_drop)
				c->asm_drop = false;
			else
				ws_asm_emit(x, c, tsc, true);
		}
		return true;
	}
}

/* frames in [p, end) of segment m */
static void
ws_frames(struct ws_ctx *x, struct ws_conn *c, struct rte_mbuf *seg, uint8_t *p, uint8_t *end)
{
	uint64_t tsc = lcp_mbuf_rx_tsc(seg);
	uint32_t gen = c->gen;
	struct stk_ws_out o;
	enum stk_ws_ev ev;

	/* a send that fails (TLS) ends the connection: stop there */
	while (likely(c->gen == gen) && (ev = stk_ws_dec_next(&c->dec, &p, end, &o)) != STK_WS_NEED_MORE) {
		if (likely(ev == STK_WS_DATA)) {
			struct lcp_msg *m;

			if (likely(o.first && o.last && !o.compressed)) {
				/* wholly inside this segment: by reference */
				m = ws_msg_new(x, c, o.opcode, o.data, o.len, tsc);
				if (m == NULL)
					continue;
				rte_mbuf_refcnt_update(seg, 1);
				m->backing[0] = seg;
				lcp_count(x->st, WS_C_MSGS_ZERO_COPY, 1);
				ws_emit_msg(x, c, m);
				continue;
			}
			if (o.first) {
				c->asm_len = 0;
				c->asm_op = o.opcode;
				c->asm_drop = false;
			}
			if (o.compressed) {
				if (!ws_inflate_piece(x, c, &o, tsc))
					return;
				continue;
			}
			if (c->asm_drop) { /* the message had no buffer: skip its rest */
				if (o.last)
					c->asm_drop = false;
				continue;
			}
			if (c->asm_buf == NULL && !ws_asm_start(x, c, o.last))
				continue;
			if (c->asm_len + o.len > c->asm_cap && !ws_asm_grow(x, c, c->asm_len + o.len))
				return;
			memcpy(c->asm_buf + c->asm_len, o.data, o.len);
			c->asm_len += o.len;
			if (o.last)
				ws_asm_emit(x, c, tsc, false);
			continue;
		}
		if (ev == STK_WS_CONTROL) {
			lcp_count(x->st, WS_C_FRAMES_CONTROL, 1);
			if (o.opcode == STK_WS_OP_PING) {
				lcp_count(x->st, WS_C_PINGS_RX, 1);
				if (!c->close_sent) {
					ws_send_frame(x, c, STK_WS_OP_PONG, o.data, o.len);
					lcp_count(x->st, WS_C_PONGS_TX, 1);
				}
			} else if (o.opcode == STK_WS_OP_PONG) {
				lcp_count(x->st, WS_C_PONGS_RX, 1);
				c->t_pong = 0;
			} else {
				char why[96];

				lcp_count(x->st, WS_C_CLOSES_RX, 1);
				if (c->state == WC_CLOSING) {
					/* the answer to our close 1001: TCP goes next */
					lcp_count(x->st, WS_C_STOP_CLOSES_ANSWERED, 1);
					c->close_rcvd = true;
					lcp_log(x->st, LCP_LOG_INFO, "conn %u: the server answered our close with %u",
						c->idx, o.close_code);
					ws_close_fin(x, c);
					return;
				}
				snprintf(why, sizeof(why), "server closed with %u", o.close_code);
				if (!c->close_sent) {
					uint8_t pl[2] = { (uint8_t)(o.close_code >> 8), (uint8_t)o.close_code };

					/* echo the code (RFC 6455 5.5.1); none if it sent none */
					ws_send_frame(x, c, STK_WS_OP_CLOSE, pl,
						      o.close_code == STK_WS_CLOSE_NO_STATUS ? 0 : 2);
					lcp_count(x->st, WS_C_CLOSES_TX, 1);
					c->close_sent = true;
				}
				if (x->stopping) {
					/* the server closed while we stop: wait for TCP too */
					c->state = WC_CLOSING;
					c->close_rcvd = true;
					c->fin_sent = false;
					ws_close_fin(x, c);
					return;
				}
				ws_close_tcp(x, c, false);
				lcp_count(x->st, WS_C_RECONNECTS, 1);
				ws_schedule_reconnect(x, c, why);
				return;
			}
			continue;
		}
		/* protocol error */
		lcp_count(x->st, o.close_code == STK_WS_CLOSE_BAD_DATA ? WS_C_FAIL_1007
				 : o.close_code == STK_WS_CLOSE_TOO_BIG ? WS_C_FAIL_1009
									: WS_C_FAIL_1002,
			  1);
		ws_fail(x, c, o.close_code, o.reason);
		return;
	}
}


/* plaintext of the WebSocket stream in m (a tcp segment, or a TLS record's
 * plaintext): the upgrade response, then frames */
void
ws_on_plain(struct ws_ctx *x, struct ws_conn *c, struct rte_mbuf *m)
{
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *), *end = p + m->data_len;

	if (c->state == WC_HANDSHAKE) {
		size_t used = 0;
		int rc = stk_ws_client_response(c->hs, p, m->data_len, &used);

		if (rc < 0) {
			char why[160];

			snprintf(why, sizeof(why), "handshake failed: %s", c->hs->err);
			lcp_count(x->st, WS_C_FAIL_HANDSHAKE, 1);
			ws_fail(x, c, 0, why);
			return;
		}
		if (rc == 0)
			return;
		ws_on_open(x, c);
		if (c->state != WC_OPEN)
			return; /* a subscription could not be sent */
		p += used;
	}
	if (c->state == WC_CLOSING) {
		/* stopping: frames up to the server's close are still read (and
		 * delivered) */
		if (!c->close_rcvd && p < end)
			ws_frames(x, c, m, p, end);
		return;
	}
	if (c->state != WC_OPEN || c->close_sent) {
		lcp_count(x->st, WS_C_DROP_AFTER_CLOSE, 1);
		return;
	}
	if (p < end)
		ws_frames(x, c, m, p, end);
}

/* a DATA event of the connection's tcp connection */
void
ws_on_data(struct ws_ctx *x, struct ws_conn *c, struct rte_mbuf *m)
{
	if (c->state == WC_CLOSING && c->close_rcvd) {
		/* stopping, nothing more to read: what follows the server's close
		 * frame (its close_notify), or a late answer on a connection closed
		 * in its handshake */
		lcp_count(x->st, WS_C_EVENTS_OLD_CONN, 1);
		return;
	}
	if (c->tls && (c->state == WC_TLS || c->t != NULL))
		ws_tls_data(x, c, m);
	else
		ws_on_plain(x, c, m);
}
