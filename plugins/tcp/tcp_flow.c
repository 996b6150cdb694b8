/* SPDX-License-Identifier: BSD-3-Clause
 * tcp_flow.c — flow control toward the application, and the receive reserve.
 *
 *   tcp_flow_init    the credits table, offered on "data", when the consumer's
 *                    port releases (LCP_PORT_F_RELEASES)
 *   tcp_flow_start   hold mode when "data" is a ring to another lcore
 *   tcp_ev_flush     hold mode: emit what the stack produced; what the ring
 *                    refuses waits in the held-back queue, in order
 *   tcp_flow_poll    the held-back queue again, the consumer's releases, the
 *                    receive reserve
 *
 * In hold mode the stack counts delivered payload against the receive window
 * until stk_tcp_rx_release(): objects waiting here and (with credits) in the
 * ring and in the consumer count, so a consumer that falls behind closes the
 * window instead of making a ring drop bytes TCP acknowledged. The held-back
 * queue links its mbufs through m->next: every stream object the stage emits
 * is one segment (multi-segment frames are refused at rx), and next is reset
 * before an object leaves. */
#include <errno.h>
#include <string.h>

#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "tcp.h"

#define TCP_DQ_BURST 64

int
tcp_flow_init(struct tcp_ctx *x, const struct tcp_conf *c)
{
	x->rx_reserve = c->rx_reserve;
	x->reserve_every = rte_get_tsc_hz() / 10000; /* 100 us */
	if (!lcp_port_consumer_releases(x->st, TCP_P_DATA))
		return 0;
	{
		/* slot = conn & mask: ids are (generation << 16) | slot, slot 1..max_conns */
		uint32_t slots = rte_align32pow2(c->stk.max_conns + 1);

		x->cr = lcp_stage_zmalloc(x->st, "the stream credits",
					  sizeof(*x->cr) + slots * sizeof(x->cr->slot[0]));
		x->out = lcp_stage_zmalloc(x->st, "the output slots", slots * sizeof(x->out[0]));
		x->out_in = lcp_stage_zmalloc(x->st, "the output slot marks", slots);
		if (x->cr == NULL || x->out == NULL || x->out_in == NULL) {
			tcp_flow_fini(x);
			return -ENOMEM;
		}
		x->cr->mask = slots - 1;
	}
	lcp_stream_credits_offer(x->st, TCP_P_DATA, x->cr);
	return 0;
}

void
tcp_flow_start(struct tcp_ctx *x)
{
	const struct lcp_edge *e = &x->st->edges[TCP_P_DATA];

	/* a ring to another lcore (same lcore: queued for this turn's walk, no hold) */
	x->hold = lcp_port_is_linked(x->st, TCP_P_DATA) && e->dst == NULL;
	x->k.rx_hold = x->hold;
	if (x->hold)
		lcp_log(x->st, LCP_LOG_INFO,
			"data: a ring to another lcore; the receive window counts what %s (never dropped)",
			x->cr != NULL ? "the consumer has not released" : "has not entered the ring");
}

void
tcp_flow_fini(struct tcp_ctx *x)
{
	tcp_mbuf_list_free(x->dq_head);
	x->dq_head = x->dq_tail = NULL;
	x->dq_n = 0;
	rte_free(x->cr);
	rte_free(x->out);
	rte_free(x->out_in);
	x->cr = NULL;
	x->out = NULL;
	x->out_in = NULL;
}

/* objs[0..k) were handed on: without credits their bytes are released now;
 * with credits their connections join the set polled for releases. rel[i] is
 * what objs[i] was (conn, end offset; conn 0: not DATA), read before the
 * hand-over since the consumer may free an object at once. */
struct tcp_rel {
	uint32_t conn, end;
};

static void
tcp_handed(struct tcp_ctx *x, const struct tcp_rel *rel, unsigned k)
{
	for (unsigned i = 0; i < k; i++) {
		uint32_t conn = rel[i].conn;
		struct stk_tcb *c;

		if (conn == 0)
			continue;
		if (x->cr != NULL) {
			uint32_t s = conn & x->cr->mask;

			if (!x->out_in[s]) {
				x->out_in[s] = 1;
				x->out[x->n_out++] = conn;
			}
			continue;
		}
		/* the last DATA of a run on one connection says it all */
		while (i + 1 < k && rel[i + 1].conn == conn)
			i++;
		c = stk_tcp_by_id(x->stk, conn);
		if (c != NULL)
			stk_tcp_rx_release(x->stk, c, rel[i].end);
	}
}

static void
tcp_rel_of(struct rte_mbuf **ms, unsigned n, struct tcp_rel *rel)
{
	for (unsigned i = 0; i < n; i++) {
		const struct lcp_stream_meta *meta = lcp_stream_meta(ms[i]);

		rel[i].conn = meta->ev == LCP_STREAM_EV_DATA ? meta->conn : 0;
		rel[i].end = meta->off + rte_pktmbuf_pkt_len(ms[i]);
	}
}

static void
tcp_dq_append(struct tcp_ctx *x, struct rte_mbuf **ms, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		ms[i]->next = NULL;
		if (x->dq_tail != NULL)
			x->dq_tail->next = ms[i];
		else
			x->dq_head = ms[i];
		x->dq_tail = ms[i];
	}
	x->dq_n += n;
}

/* hand on what is held back, in order, as far as the ring takes it */
static unsigned
tcp_dq_drain(struct tcp_ctx *x)
{
	unsigned done = 0;

	while (x->dq_head != NULL) {
		struct rte_mbuf *ms[TCP_DQ_BURST];
		struct tcp_rel rel[TCP_DQ_BURST];
		unsigned n = 0, k;

		while (n < TCP_DQ_BURST && x->dq_head != NULL) {
			ms[n] = x->dq_head;
			x->dq_head = ms[n]->next;
			ms[n++]->next = NULL;
		}
		if (x->dq_head == NULL)
			x->dq_tail = NULL;
		x->dq_n -= n;
		tcp_rel_of(ms, n, rel);
		k = lcp_emit_try(x->st, TCP_P_DATA, (void **)ms, n);
		tcp_handed(x, rel, k);
		done += k;
		if (k < n) {
			/* back in front, in order */
			struct rte_mbuf *rest = x->dq_head;

			for (unsigned i = n; i-- > k;) {
				ms[i]->next = rest;
				rest = ms[i];
			}
			if (x->dq_head == NULL)
				x->dq_tail = ms[n - 1];
			x->dq_head = rest;
			x->dq_n += n - k;
			break;
		}
	}
	return done;
}

void
tcp_ev_flush(struct tcp_ctx *x)
{
	/* emitted in place: a ring link never calls back into this stage */
	struct rte_mbuf **ms = (struct rte_mbuf **)x->ev.objs;
	struct tcp_rel rel[LCP_OBUF_MAX];
	unsigned n = x->ev.n, k = 0;

	if (n == 0)
		return;
	x->ev.n = 0;
	if (x->dq_head == NULL) {
		tcp_rel_of(ms, n, rel);
		k = lcp_emit_try(x->st, TCP_P_DATA, (void **)ms, n);
		tcp_handed(x, rel, k);
	}
	if (k < n) {
		TCP_COUNT(x, DATA_HELD_BACK, n - k);
		tcp_dq_append(x, ms + k, n - k);
		tcp_dq_drain(x);
	}
}

/* the consumer's releases, for the connections with bytes out */
static unsigned
tcp_credits_poll(struct tcp_ctx *x)
{
	unsigned work = 0;

	for (unsigned i = 0; i < x->n_out;) {
		uint32_t conn = x->out[i], off;
		struct stk_tcb *c = stk_tcp_by_id(x->stk, conn);

		if (c != NULL && lcp_stream_released(x->cr, conn, &off)) {
			uint32_t held = stk_tcp_rx_held(c);

			stk_tcp_rx_release(x->stk, c, off);
			work += held != stk_tcp_rx_held(c);
		}
		if (c == NULL || stk_tcp_rx_held(c) == 0) {
			x->out_in[conn & x->cr->mask] = 0;
			x->out[i] = x->out[--x->n_out];
			continue;
		}
		i++;
	}
	return work;
}

/* the packet pool against rx_reserve: pressure on below it, off at twice it */
static void
tcp_reserve_check(struct tcp_ctx *x)
{
	struct rte_mempool *mp = x->rx_pool != NULL ? x->rx_pool : x->pool;
	unsigned avail = rte_mempool_avail_count(mp);
	const uint64_t *ctr = stk_counters(x->stk);

	if (!x->pressure && avail < x->rx_reserve) {
		x->pressure = true;
		x->pressure_drops0 = ctr[STK_C_DROP_TCP_RX_PRESSURE];
		stk_rx_pressure(x->stk, true);
		TCP_COUNT(x, RX_PRESSURE_EPISODES, 1);
		lcp_log(x->st, LCP_LOG_WARNING,
			"packet pool %s down to %u free mbufs (rx_reserve %u): refusing new payload, taking ACKs "
			"(drop_tcp_rx_pressure) until it is back to %u",
			mp->name, avail, x->rx_reserve, 2 * x->rx_reserve);
	} else if (x->pressure && avail >= 2 * x->rx_reserve) {
		x->pressure = false;
		stk_rx_pressure(x->stk, false);
		lcp_log(x->st, LCP_LOG_INFO, "packet pool %s back to %u free mbufs: %lu segment(s) were refused",
			mp->name, avail,
			(unsigned long)(ctr[STK_C_DROP_TCP_RX_PRESSURE] - x->pressure_drops0));
	}
}

unsigned
tcp_flow_poll(struct tcp_ctx *x)
{
	unsigned work = 0;

	if (x->rx_reserve != 0) {
		uint64_t now = rte_rdtsc();

		if (now >= x->next_reserve_check) {
			x->next_reserve_check = now + x->reserve_every;
			tcp_reserve_check(x);
		}
	}
	if (!x->hold)
		return 0;
	if (x->dq_head != NULL)
		work += tcp_dq_drain(x);
	if (x->n_out > 0)
		work += tcp_credits_poll(x);
	return work;
}
