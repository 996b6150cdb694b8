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
 *
 * Dispatch (ABI 2.0): an emit to a stage on the same lcore appends the objects
 * to that stage's input vector (struct lcp_pend) and returns; the worker then
 * walks the lcore's input vectors in graph order (the rte_graph walk model),
 * handing each stage all that is queued for an input port in one process()
 * call. No process() ever runs inside another: a stage may emit from anywhere
 * in its own call, and a stage that answers the stage that fed it (tcp <-> ws)
 * is called again later in the same walk, not from inside the emit.
 */
#ifndef LCP_STAGE_WORKER_H
#define LCP_STAGE_WORKER_H

#include <stdint.h>
#include <string.h>
#include <rte_branch_prediction.h>
#include <rte_cycles.h>
#include <rte_pause.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <lcp/stage.h>
#include <lcp/counters.h>
#include <lcp/msg.h>
#include <lcp/pool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* engine run states, see lcp_stage_stopping() */
#define LCP_RUN_RUNNING 0u
#define LCP_RUN_DRAIN 1u /* sources stop producing; rings drain */
#define LCP_RUN_STOP 2u  /* stages' stop() runs on their lcores */
#define LCP_RUN_EXIT 3u

/* ABI 2.0: the input vector of one input port of a stage, fed by the links
 * from stages on the same lcore (several links into one port share it). The
 * engine owns it: objs grows on demand (lcp_pend_grow), the worker hands
 * objs[0..n) to the stage and empties it. */
struct lcp_pend {
	void **objs;   /* queued objects, in the order they were emitted */
	uint32_t n;    /* how many */
	uint32_t cap;  /* room in objs */
};

/* An output port's link. Exactly one of ring / dst is set when linked.
 * Every cross-lcore link has its own ring, so rings are always SP/SC. */
struct lcp_edge {
	struct rte_ring *ring;   /* link to a stage on another lcore */
	struct lcp_stage *dst;   /* link to a stage on the same lcore: queued on pend */
	struct lcp_pend *pend;   /* ABI 2.0: dst's input vector of dst_port (same lcore) */
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
	uint64_t *ctr_row;                /* ABI 1.1: the slot's counter row, or NULL */
	uint32_t timed;                   /* ABI 1.3: engine.stage_timing is on */
	/* ABI 2.0: the input vector the walk handed to the running process()
	 * (NULL outside it): lcp_emit() of all of it to an empty input vector
	 * moves the array instead of copying it, as rte_node_next_stream_move() */
	void **in_vec;
	uint32_t in_n;
	uint32_t in_cap;
	/* ABI 2.2: per histogram of ops->hists, the counter of its bucket 0;
	 * buckets 0..n_le follow it, then the sum */
	const uint32_t *hist_ctr;
};

/* ABI 2.0, out of line and cold: make room in e->pend for n more objects.
 * Returns 0, or -1 when it cannot grow (no memory): then the n objects of the
 * emit are freed and counted under the edge's "<port>.drop_ring_full",
 * logged once. */
int lcp_pend_grow(struct lcp_stage *st, const struct lcp_edge *e, void **objs, unsigned n) __rte_cold;

/* Out of line and cold: free what could not be delivered and count it under
 * the edge's drop counter ("<port>.drop_ring_full" / ".drop_unlinked"). */
void lcp_emit_drop(struct lcp_stage *st, const struct lcp_edge *e, void **objs, unsigned n)
	__rte_cold;

/* add v to counter idx of st: inline on the strategy's row when it has one */
static __rte_always_inline void
lcp_ctr_add(struct lcp_stage *st, unsigned idx, uint64_t v)
{
	uint64_t *row = st->ctr_row;

	if (likely(row != NULL))
		__atomic_store_n(&row[idx], __atomic_load_n(&row[idx], __ATOMIC_RELAXED) + v,
				 __ATOMIC_RELAXED);
	else
		st->ctr_add(st->ctrs, st->slot, idx, v);
}

/* true once the engine is shutting down: sources stop producing */
static inline int
lcp_stage_stopping(const struct lcp_stage *st)
{
	return *st->run_state != LCP_RUN_RUNNING;
}

/* Backpressure on an empty pool (header only, no ABI change): one object from
 * p, waiting up to timeout TSC cycles for another lcore to put one back. Gives
 * up at once when the engine reaches LCP_RUN_STOP. A get that gives up counts
 * once in the pool's get_fail. *waited: cycles spent waiting, 0 when an object
 * was there at once. While it waits nothing else runs on this lcore: that is
 * the backpressure (rings into this lcore fill, then their producers block or
 * drop as their links say; an ethdev rx queue fills and TCP peers retransmit).
 * Waiting helps only when the objects are released on another lcore. */
static inline void *
lcp_pool_get_wait(struct lcp_pool *p, uint64_t timeout, uint64_t *waited)
{
	void *o;
	uint64_t t0;

	*waited = 0;
	if (likely(p->get_bulk(p->pool, &o, 1) == 0))
		return o;
	t0 = rte_rdtsc();
	while (p->get_bulk(p->pool, &o, 1) != 0) {
		if (rte_rdtsc() - t0 >= timeout ||
		    __atomic_load_n(p->st->run_state, __ATOMIC_RELAXED) >= LCP_RUN_STOP) {
			__atomic_fetch_add(&p->get_fail, 1, __ATOMIC_RELAXED);
			o = NULL;
			break;
		}
		rte_pause();
	}
	*waited = rte_rdtsc() - t0;
	return o;
}

/* add v to the stage's own counter idx (index into ops->counters) */
static __rte_always_inline void
lcp_count(struct lcp_stage *st, unsigned idx, uint64_t v)
{
	lcp_ctr_add(st, st->ctr_own + idx, v);
}

/* ABI 2.2: n values in bucket b (0 .. n_le; n_le is +Inf) of histogram h
 * (index into ops->hists), whose sum is sum (the stage's unit). A stage that
 * buckets its values itself (per burst) adds them here; one value at a time is
 * lcp_hist_observe(). */
static __rte_always_inline void
lcp_hist_add(struct lcp_stage *st, unsigned h, unsigned b, uint64_t n, uint64_t sum)
{
	uint32_t c = st->hist_ctr[h];

	lcp_ctr_add(st, c + b, n);
	lcp_ctr_add(st, c + st->ops->hists[h].n_le + 1, sum);
}

/* ABI 2.2: the bucket of v in histogram h: a binary search over its bounds */
static inline unsigned
lcp_hist_bucket(const struct lcp_stage *st, unsigned h, uint64_t v)
{
	const struct lcp_hist_def *d = &st->ops->hists[h];
	unsigned lo = 0, hi = d->n_le; /* the first bound >= v, or n_le */

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (d->le[mid] >= v)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* ABI 2.2: record one value v in histogram h */
static inline void
lcp_hist_observe(struct lcp_stage *st, unsigned h, uint64_t v)
{
	lcp_hist_add(st, h, lcp_hist_bucket(st, h, v), 1, v);
}

/* free n objects of a unit */
static inline void
lcp_objs_free(unsigned unit, void **objs, unsigned n)
{
	if (unit == LCP_UNIT_MSG) {
		lcp_msgs_free((struct lcp_msg *const *)objs, n);
	} else {
		rte_pktmbuf_free_bulk((struct rte_mbuf **)objs, n);
	}
}

/* Hand n objects to whatever output port `port` is linked to. Same lcore: they
 * are appended to the destination's input vector, which the worker hands to its
 * process() later in this turn's walk. Other lcore: an SP/SC ring enqueue.
 * Always consumes all n objects. objs itself stays the caller's, except that
 * when a stage emits exactly the vector it was handed (objs, n as received) to
 * a same-lcore vector with nothing queued, the array moves there (no copy):
 * do not read objs after emitting it, as the objects themselves are no
 * longer yours either. Always inlined: a plugin calling it from
 * several places would otherwise get an out-of-line copy. */
static __rte_always_inline void
lcp_emit(struct lcp_stage *st, unsigned port, void **objs, unsigned n)
{
	const struct lcp_edge *e = &st->edges[port];
	struct lcp_stage *d = e->dst;

	if (likely(d != NULL)) {
		struct lcp_pend *q = e->pend;

		if (objs == st->in_vec && n == st->in_n && q->n == 0) {
			/* all we were handed, to a vector with nothing queued: swap
			 * the arrays (the walk takes back whichever in_vec holds) */
			void **empty = q->objs;
			uint32_t cap = q->cap;

			q->objs = objs;
			q->cap = st->in_cap;
			q->n = n;
			st->in_vec = empty;
			st->in_cap = cap;
			st->in_n = 0;
		} else {
			void **to;

			if (unlikely(q->n + n > q->cap) && lcp_pend_grow(st, e, objs, n) != 0)
				return;
			to = q->objs + q->n;
			if (n == 1) /* the common answer of one object: no loop set-up */
				to[0] = objs[0];
			else
				memcpy(to, objs, n * sizeof(*objs));
			q->n += n;
		}
		lcp_ctr_add(st, e->ctr_out, n);
		lcp_ctr_add(d, e->dst_ctr_in, n);
	} else if (likely(e->ring != NULL)) {
		/* "<port>.out" of a ring link is not added here (ABI 1.4): the
		 * engine reads it off the ring's producer index, so the producer
		 * stores nothing but the ring's own lines; n == 0 enqueues nothing */
		unsigned k = rte_ring_sp_enqueue_burst(e->ring, objs, n, NULL);

		if (unlikely(k < n))
			lcp_emit_drop(st, e, objs + k, n - k);
	} else if (n != 0) {
		lcp_emit_drop(st, e, objs, n);
	}
}

/* ABI 1.8, out of line: lcp_emit_try() on a link to another lcore */
unsigned lcp_emit_try_link(struct lcp_stage *st, const struct lcp_edge *e, void **objs, unsigned n);

/* ABI 1.8: like lcp_emit(), but what a full ring cannot take stays with the
 * caller instead of being dropped: returns k, the objects objs[0..k) were
 * handed on, objs[k..n) are still the caller's (keep them, in order, and try
 * again later). A same-lcore link takes all n (queued, as lcp_emit
 * does); a link that blocks when full waits as lcp_emit does; an
 * unlinked port frees and counts all n. For producers that must not lose what
 * they emit, such as stream bytes a transport has acknowledged. */
static __rte_always_inline unsigned
lcp_emit_try(struct lcp_stage *st, unsigned port, void **objs, unsigned n)
{
	const struct lcp_edge *e = &st->edges[port];

	if (likely(e->dst != NULL)) {
		lcp_emit(st, port, objs, n);
		return n;
	}
	return lcp_emit_try_link(st, e, objs, n);
}

/* Staging of what a stage produces inside one call, emitted in bursts
 * afterwards (ABI 1.2, header only): one emit, and one ring enqueue on a link
 * to another lcore, per burst instead of per object. lcp_obuf_put() flushes
 * when full. Since ABI 2.0 an emit never calls back into the emitting stage,
 * so lcp_obuf_flush() emits the buffer in place. */
#define LCP_OBUF_MAX 256

struct lcp_obuf {
	unsigned port; /* output port the objects go to */
	unsigned cap;  /* flush threshold, 1..LCP_OBUF_MAX */
	unsigned n;
	void *objs[LCP_OBUF_MAX];
};

static inline void
lcp_obuf_init(struct lcp_obuf *b, unsigned port, unsigned cap)
{
	b->port = port;
	b->cap = cap == 0 || cap > LCP_OBUF_MAX ? LCP_OBUF_MAX : cap;
	b->n = 0;
}

static inline void
lcp_obuf_flush(struct lcp_stage *st, struct lcp_obuf *b)
{
	unsigned n = b->n;

	if (n == 0)
		return;
	b->n = 0;
	lcp_emit(st, b->port, b->objs, n);
}

static inline void
lcp_obuf_put(struct lcp_stage *st, struct lcp_obuf *b, void *obj)
{
	if (unlikely(b->n >= b->cap))
		lcp_obuf_flush(st, b);
	b->objs[b->n++] = obj;
}

#ifdef __cplusplus
}
#endif
#endif
