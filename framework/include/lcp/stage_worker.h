/* SPDX-License-Identifier: BSD-3-Clause
 * lcp/stage_worker.h — fast-path inlines for stage plugins: emit a burst, count.
 *
 * Split from lcp/stage.h as DPDK splits rte_graph.h from rte_graph_worker.h: this
 * is the only part of the SDK that runs per burst, so it is inline and touches
 * nothing but the stage and its edges.
 *
 * Ownership: lcp_emit() always consumes all n objects. What cannot be delivered
 * (ring full, port not linked) is freed and counted under
 * "<port>.drop_ring_full" / "<port>.drop_unlinked".
 */
#ifndef LCP_STAGE_WORKER_H
#define LCP_STAGE_WORKER_H

#include <stdint.h>
#include <rte_branch_prediction.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <lcp/stage.h>
#include <lcp/counters.h>
#include <lcp/msg.h>

#ifdef __cplusplus
extern "C" {
#endif

/* engine run states, see lcp_stage_stopping() */
#define LCP_RUN_RUNNING 0u
#define LCP_RUN_DRAIN 1u /* sources stop producing; rings drain */
#define LCP_RUN_STOP 2u  /* stages' stop() runs on their lcores */
#define LCP_RUN_EXIT 3u

/* An output port's link. Exactly one of ring / dst is set when linked.
 * Every cross-lcore link has its own ring, so rings are always SP/SC. */
struct lcp_edge {
	struct rte_ring *ring;   /* link to a stage on another lcore */
	struct lcp_stage *dst;   /* link to a stage on the same lcore: direct call */
	uint16_t dst_port;       /* input port number at dst */
	uint16_t unit;           /* enum lcp_unit: how to free what is dropped */
	uint32_t ctr_out;        /* our counter "<port>.out" */
	uint32_t ctr_drop;       /* our counter "<port>.drop_ring_full" or ".drop_unlinked" */
	uint32_t dst_ctr_in;     /* dst's counter "<port>.in" (direct links) */
};

struct lcp_stage_priv;

/* Public part of a stage instance; the engine owns it. Plugins read it only
 * through the inlines and accessors of the SDK. */
struct lcp_stage {
	void *ctx;                        /* what init returned */
	const struct lcp_stage_ops *ops;
	void *ctrs;                       /* counter set (strategy-private) */
	lcp_counters_add_t ctr_add;       /* strategy fast path */
	unsigned slot;                    /* writer slot of this stage's lcore */
	unsigned ctr_own;                 /* index of the stage's first own counter */
	struct lcp_edge *edges;           /* by port number (input ports unused) */
	const volatile uint32_t *run_state;
	struct lcp_stage_priv *priv;      /* engine-private */
};

/* true once the engine is shutting down: sources stop producing */
static inline int
lcp_stage_stopping(const struct lcp_stage *st)
{
	return *st->run_state != LCP_RUN_RUNNING;
}

/* add v to the stage's own counter idx (index into ops->counters) */
static inline void
lcp_count(struct lcp_stage *st, unsigned idx, uint64_t v)
{
	st->ctr_add(st->ctrs, st->slot, st->ctr_own + idx, v);
}

/* free n objects of a unit */
static inline void
lcp_objs_free(unsigned unit, void **objs, unsigned n)
{
	if (unit == LCP_UNIT_MSG) {
		for (unsigned i = 0; i < n; i++)
			lcp_msg_free((struct lcp_msg *)objs[i]);
	} else {
		rte_pktmbuf_free_bulk((struct rte_mbuf **)objs, n);
	}
}

/* Hand n objects to whatever output port `port` is linked to. Same lcore: the
 * next stage's process() runs now (run to completion). Other lcore: an SP/SC
 * ring enqueue. Always consumes all n objects. */
static inline void
lcp_emit(struct lcp_stage *st, unsigned port, void **objs, unsigned n)
{
	struct lcp_edge *e = &st->edges[port];

	if (unlikely(n == 0))
		return;
	if (e->ring != NULL) {
		unsigned k = rte_ring_sp_enqueue_burst(e->ring, objs, n, NULL);

		st->ctr_add(st->ctrs, st->slot, e->ctr_out, k);
		if (unlikely(k < n)) {
			lcp_objs_free(e->unit, objs + k, n - k);
			st->ctr_add(st->ctrs, st->slot, e->ctr_drop, n - k);
		}
	} else if (e->dst != NULL) {
		struct lcp_stage *d = e->dst;

		st->ctr_add(st->ctrs, st->slot, e->ctr_out, n);
		d->ctr_add(d->ctrs, d->slot, e->dst_ctr_in, n);
		d->ops->process(d, d->ctx, e->dst_port, objs, n);
	} else {
		lcp_objs_free(e->unit, objs, n);
		st->ctr_add(st->ctrs, st->slot, e->ctr_drop, n);
	}
}

#ifdef __cplusplus
}
#endif
#endif
