/* SPDX-License-Identifier: BSD-3-Clause
 * runner.c — the worker lcore loop and the shutdown protocol.
 *
 * Worker loop, per turn: poll every source stage on the lcore, dequeue a burst
 * from every ring feeding the lcore and hand it to its stage, then walk the
 * lcore's input vectors: what those calls emitted to stages on the same lcore
 * was queued there (lcp_emit, ABI 2.0), and the walk hands each stage all that
 * is queued for it, in graph order, round after round until nothing is left —
 * as rte_graph_walk() does. No stage's call runs inside another's. Cycles of
 * turns that did work count as busy, the rest as idle.
 *
 * Shutdown (control thread): DRAIN — sources see lcp_stage_stopping() and stop
 * producing, stages with a linger op are called on every turn and close their
 * connections, everything keeps running; first the linger (until every linger
 * op answered 0 while the pipeline was quiet, at most engine.linger), then
 * until the pipeline is quiet (no work on any lcore for two whole turns and
 * every ring empty); STOP — each worker runs its stages' stop() (flush what
 * they hold, reset what is still open) and keeps serving its rings until quiet
 * again; EXIT — workers return. The linger is bounded by engine.linger, the
 * drain and the stop each by drain_timeout, the whole shutdown by
 * engine.stop_timeout (a second SIGINT / SIGTERM ends it at once): a worker
 * that does not return by then is inside a stage that does not (a plugin's
 * poll or process stuck); the engine names the stage and lcpipe exits without
 * tearing anything down under it.
 */
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_pause.h>

#include <lcp/log.h>

#include "engine_priv.h"

/* a busy run publishes its cycles at least every this many turns */
#define LCP_TSC_EVERY 64

/* ---- engine.stage_timing ---- */

/* charge one call of `elapsed` cycles over n objects to sp */
static inline void
tm_account(struct lcp_stage_priv *sp, uint64_t elapsed, unsigned n)
{
	struct lcp_timing *t = sp->tm;

	t->calls++;
	t->objs += n;
	t->cycles += elapsed;
	if (elapsed > t->max)
		t->max = elapsed;
	t->hist[lcp_hist_log4_bucket(elapsed)]++;
}

/* engine.stage_timing: process() timed, with process()'s signature */
static void
process_timed(struct lcp_stage *d, void *ctx, unsigned port, void **objs, unsigned n)
{
	uint64_t t0 = rte_rdtsc();

	d->ops->process(d, ctx, port, objs, n);
	tm_account((struct lcp_stage_priv *)d, rte_rdtsc() - t0, n);
}

unsigned
lcp_poll_timed(struct lcp_stage *st)
{
	uint64_t t0 = rte_rdtsc();
	unsigned n = st->ops->poll(st, st->ctx);

	if (n != 0) /* an idle poll is not a call worth timing */
		tm_account((struct lcp_stage_priv *)st, rte_rdtsc() - t0, n);
	return n;
}

/* What is still queued after LCP_WALK_ROUNDS rounds goes round a message loop
 * among this lcore's stages: dropped, counted on the stage it was queued for,
 * logged once per stage. */
static __rte_noinline __rte_cold void
walk_drop_loop(struct lcp_worker *w)
{
	for (unsigned i = 0; i < w->n_pends; i++) {
		struct lcp_pend_q *q = w->pends[i];
		struct lcp_stage_priv *dp = (struct lcp_stage_priv *)q->dst;
		unsigned n = q->pub.n;

		if (n == 0)
			continue;
		lcp_objs_free(q->unit, q->pub.objs, n);
		q->pub.n = 0;
		lcp_ctr_add(q->dst, dp->ctr_drop_loop, n);
		if (!dp->loop_logged) {
			dp->loop_logged = true;
			lcp_log(q->dst, LCP_LOG_ERR,
				"message loop: objects are still queued for its input \"%s\" after %u rounds of "
				"lcore %u's walk; %u dropped (drop_loop). The links among its stages on this lcore form a "
				"loop that never ends; put one of them on another lcore",
				((const struct lcp_stage_ops *)dp->pub.ops)->ports[q->port].name, LCP_WALK_ROUNDS,
				w->lcore, n);
		}
	}
}

static unsigned walk_pieces(struct lcp_worker *w, unsigned i, void **v, uint32_t n, uint32_t cap);

/* Hand what input vector i holds to its stage: whole, or, when its links set
 * a burst (q->chunk), that many at a time (walk_pieces). The vector is
 * swapped for its spare first, so the stage reads an array nothing appends to;
 * what arrives for it meanwhile waits for the next round. */
static __rte_always_inline unsigned
walk_hand(struct lcp_worker *w, unsigned i)
{
	struct lcp_pend_q *q = w->pends[i];
	struct lcp_stage *d = q->dst;
	void **v = q->pub.objs;
	uint32_t n = q->pub.n, cap = q->pub.cap;

	q->pub.objs = q->spare;
	q->pub.cap = q->spare_cap;
	q->pub.n = 0;
	__atomic_store_n(&w->cur, (struct lcp_stage_priv *)d, __ATOMIC_RELAXED);
	if (unlikely(q->chunk != 0 && n > q->chunk))
		return walk_pieces(w, i, v, n, cap);
	d->in_vec = v;
	d->in_n = n;
	d->in_cap = cap;
	q->process(d, q->ctx, q->port, v, n);
	/* v, or the empty array lcp_emit() swapped in for it */
	q->spare = d->in_vec;
	q->spare_cap = d->in_cap;
	d->in_vec = NULL;
	return n;
}

/* one pass over the input vectors from i0 on, in walk order */
static __rte_always_inline unsigned
walk_from(struct lcp_worker *w, unsigned i0)
{
	unsigned did = 0;

	for (unsigned i = i0; i < w->n_pends; i++)
		if (w->pends[i]->pub.n != 0) /* an empty vector costs a load, no more */
			did += walk_hand(w, i);
	return did;
}

/* Vector i's n objects (v, taken off it by walk_hand) handed q->chunk at a
 * time, with the stages after it in walk order run between the pieces, so
 * that what one piece produced is consumed while it is still in cache (a
 * stage that turns one segment into twenty messages would otherwise hand its
 * consumer thousands at once). Pieces are never moved on (in_vec stays NULL):
 * they are parts of one array. Out of line: the whole-vector path stays short. */
static __rte_noinline unsigned
walk_pieces(struct lcp_worker *w, unsigned i, void **v, uint32_t n, uint32_t cap)
{
	struct lcp_pend_q *q = w->pends[i];
	struct lcp_stage *d = q->dst;
	unsigned did = n;

	for (uint32_t off = 0; off < n;) {
		uint32_t k = RTE_MIN(q->chunk, n - off);

		q->process(d, q->ctx, q->port, v + off, k);
		off += k;
		if (off < n) {
			did += walk_from(w, i + 1);
			__atomic_store_n(&w->cur, (struct lcp_stage_priv *)d, __ATOMIC_RELAXED);
		}
	}
	q->spare = v;
	q->spare_cap = cap;
	return did;
}

/* Hand every non-empty input vector of this lcore to its stage, in walk order,
 * round after round until one finds them all empty; returns the objects
 * handed. */
unsigned
lcp_worker_walk(struct lcp_worker *w)
{
	unsigned work = 0;

	for (unsigned round = 0; round < LCP_WALK_ROUNDS; round++) {
		unsigned did = walk_from(w, 0);

		if (did == 0)
			return work;
		work += did;
	}
	walk_drop_loop(w);
	return work;
}

/* read after the workers stopped (or racy but harmless while running) */
json_t *
lcp_timing_json(const struct lcp_engine *e, const struct lcp_stage_priv *sp)
{
	const struct lcp_timing *t = sp->tm;
	double ns = 1e9 / (double)e->tsc_hz;
	const double q[3] = { 0.5, 0.99, 0.999 };
	const char *const qn[3] = { "call_p50_ns", "call_p99_ns", "call_p999_ns" };
	json_t *o = json_object();
	uint64_t acc = 0;
	unsigned k = 0;

	json_object_set_new(o, "calls", json_integer((json_int_t)t->calls));
	json_object_set_new(o, "objects", json_integer((json_int_t)t->objs));
	json_object_set_new(o, "cycles", json_integer((json_int_t)t->cycles));
	json_object_set_new(o, "cycles_per_object", json_real(t->objs ? (double)t->cycles / (double)t->objs : 0));
	json_object_set_new(o, "cycles_per_call", json_real(t->calls ? (double)t->cycles / (double)t->calls : 0));
	for (unsigned b = 0; b < LCP_HIST_LOG4_BUCKETS && k < 3 && t->calls > 0; b++) {
		acc += t->hist[b];
		while (k < 3 && (double)acc >= q[k] * (double)t->calls) {
			json_object_set_new(o, qn[k], json_real((double)lcp_hist_log4_low(b) * ns));
			k++;
		}
	}
	json_object_set_new(o, "call_max_ns", json_real((double)t->max * ns));
	return o;
}

unsigned
lcp_ring_enqueue_wait(struct lcp_stage *st, const struct lcp_edge_full *f, struct rte_ring *r,
		      void **objs, unsigned n)
{
	uint64_t t0 = rte_rdtsc();
	unsigned k = 0, spins = 0;

	lcp_ctr_add(st, f->ctr_waits, 1);
	for (;;) {
		k += rte_ring_sp_enqueue_burst(r, objs + k, n - k, NULL);
		if (k == n || __atomic_load_n(st->run_state, __ATOMIC_RELAXED) >= LCP_RUN_STOP)
			break;
		if (f->timeout != 0 && rte_rdtsc() - t0 >= f->timeout)
			break;
		/* the consumer may share this CPU (more lcores than cores): let it
		 * run now and then instead of spinning through our whole time slice */
		if (++spins % 4096 == 0)
			sched_yield();
		else
			rte_pause();
	}
	lcp_ctr_add(st, f->ctr_cycles, rte_rdtsc() - t0);
	return k;
}

/* enqueue what a staged link holds (its producer's lcore, or the control
 * thread once the workers are done); what the ring refuses is dropped and
 * counted like any ring-full drop */
unsigned
lcp_stage_buf_flush(struct lcp_stage_buf *b)
{
	unsigned n = b->n, k;

	if (n == 0)
		return 0;
	/* "<port>.out": read off the ring (lcp_ring_tally) */
	k = rte_ring_sp_enqueue_burst(b->r, b->objs, n, NULL);
	if (unlikely(k < n) && b->full != NULL)
		k += lcp_ring_enqueue_wait(b->src, b->full, b->r, &b->objs[k], n - k);
	if (unlikely(k < n)) {
		lcp_objs_free(b->e->unit, &b->objs[k], n - k);
		lcp_ctr_add(b->src, b->e->ctr_drop, n - k);
	}
	__atomic_store_n(&b->n, 0, __ATOMIC_RELAXED);
	return n;
}

/* staged links of this lcore: flush those whose oldest object reached the
 * module's age limit (or at once: no limit, or the pipeline is draining) */
static unsigned
flush_staged(struct lcp_worker *w, uint32_t state)
{
	uint64_t now = 0;
	unsigned work = 0;

	for (unsigned i = 0; i < w->n_sbufs; i++) {
		struct lcp_stage_buf *b = w->sbufs[i];

		if (b->n == 0)
			continue;
		if (b->max_age != 0 && state == LCP_RUN_RUNNING) {
			if (now == 0)
				now = rte_rdtsc();
			if (now - b->first_tsc < b->max_age)
				continue;
		}
		work += lcp_stage_buf_flush(b);
	}
	return work;
}

static inline void
tick_counters(struct lcp_worker *w, uint64_t now)
{
	for (unsigned i = 0; i < w->n_tickers; i++) {
		struct lcp_stage_priv *sp = (struct lcp_stage_priv *)w->tickers[i];

		sp->cops->tick(sp->pub.ctrs, w->slot, now);
	}
}

/* publish what slot has accumulated in every stage's counter set */
static void
flush_counters_slot(struct lcp_engine *e, unsigned slot)
{
	for (unsigned i = 0; i < e->n_stages; i++) {
		struct lcp_stage_priv *sp = e->stages[i];

		if (sp != NULL && sp->pub.ctrs != NULL && sp->cops->flush != NULL)
			sp->cops->flush(sp->pub.ctrs, slot);
	}
}

void
lcp_engine_flush_counters(struct lcp_engine *e)
{
	for (unsigned s = 0; s <= e->n_workers; s++)
		flush_counters_slot(e, s);
}

/* A worker's busy/idle accounting, kept in registers by the loops below.
 *
 * Without a TSC read on every busy turn (rte_rdtsc costs ~40 cycles here, as
 * much as a burst-1 hop): idle turns read it every time (their cycles are
 * spare, and it keeps t0 at the start of the next turn, so an idle->busy
 * transition is exact); busy turns read it every LCP_TSC_EVERY turns; the turn
 * that ends a busy run (the first idle one) reads it and charges the whole
 * interval to busy, so the only error is one empty poll per busy->idle
 * transition counted as busy (doc/architecture.md). The turn and work counts
 * the control thread reads (stats, the drain's quiet check) are published on
 * the same turns: every idle turn and every LCP_TSC_EVERY-th busy one, so a
 * busy turn stores nothing shared. */
struct lcp_wacct {
	uint64_t t0, busy, idle, loops, work;
	unsigned busy_turns;
	bool was_busy;
};

static inline void
wacct_publish(struct lcp_worker *w, const struct lcp_wacct *a)
{
	__atomic_store_n(&w->work, a->work, __ATOMIC_RELAXED);
	__atomic_store_n(&w->loops, a->loops, __ATOMIC_RELEASE);
}

/* the cycles since t0 (up to t1) to the run they end, busy or idle, published */
static inline void
wacct_charge(struct lcp_worker *w, struct lcp_wacct *a, uint64_t t1)
{
	if (a->was_busy) {
		a->busy += t1 - a->t0;
		a->busy_turns = 0;
		a->was_busy = false;
		__atomic_store_n(&w->busy_cycles, a->busy, __ATOMIC_RELAXED);
	} else {
		a->idle += t1 - a->t0;
		__atomic_store_n(&w->idle_cycles, a->idle, __ATOMIC_RELAXED);
	}
	a->t0 = t1;
}

/* the end of a turn that did `work` objects */
static __rte_always_inline void
wacct_turn(struct lcp_worker *w, struct lcp_wacct *a, unsigned work)
{
	uint64_t t1;

	a->loops++;
	if (work) {
		a->work += work;
		a->was_busy = true;
		if (likely(++a->busy_turns != LCP_TSC_EVERY))
			return;
		t1 = rte_rdtsc();
		a->busy += t1 - a->t0;
		a->t0 = t1;
		a->busy_turns = 0;
		__atomic_store_n(&w->busy_cycles, a->busy, __ATOMIC_RELAXED);
		wacct_publish(w, a);
		if (w->n_tickers != 0)
			tick_counters(w, t1);
		return;
	}
	t1 = rte_rdtsc();
	wacct_charge(w, a, t1);
	wacct_publish(w, a);
	if (w->n_tickers != 0)
		tick_counters(w, t1);
	rte_pause();
}

/* The lcore of one input ring with the default batch, no source stage and no
 * staged link — most lcores of a pipeline. The general loop below re-loads
 * every field of every ring entry on every turn (the indirect process() call
 * may change any memory); here they are locals, so the turn is the dequeue,
 * the high-water compare, the call and two register adds: what a ring link
 * adds to raw rte_ring is little more than the call of the stage (B1,
 * doc/benchmarks.md). Runs while the pipeline is RUNNING or DRAINing; at STOP
 * it returns and the general loop takes over (stop(), the drain, exit). */
static __rte_noinline void
worker_one_ring(struct lcp_worker *w, struct lcp_wacct *acct)
{
	struct lcp_wacct a = *acct; /* a local: in registers across process() */
	struct lcp_ring_in *ri = &w->rins[0];
	struct rte_ring *r = ri->r;
	const lcp_stage_process_t process = ri->process;
	struct lcp_stage *const dst = ri->dst;
	void *const ctx = ri->ctx;
	const unsigned port = ri->port, burst = ri->burst;
	const volatile uint32_t *state = &w->eng->run_state;
	uint32_t hwm = ri->hwm;
	void *objs[LCP_BURST_MAX];

	__atomic_store_n(&w->cur, (struct lcp_stage_priv *)dst, __ATOMIC_RELAXED);
	while (likely(__atomic_load_n(state, __ATOMIC_ACQUIRE) < LCP_RUN_STOP)) {
		unsigned avail, n = rte_ring_sc_dequeue_burst(r, objs, burst, &avail);

		if (n != 0) {
			if (unlikely(n + avail > hwm)) {
				hwm = n + avail;
				__atomic_store_n(&ri->hwm, hwm, __ATOMIC_RELAXED);
			}
			/* "<port>.in" is the ring's consumer index (lcp_ring_tally) */
			process(dst, ctx, port, objs, n);
		}
		wacct_turn(w, &a, n);
	}
	*acct = a;
}

/* the stages of this lcore that linger: ask each how much it still closes */
static __rte_noinline void
linger_turn(struct lcp_worker *w)
{
	for (unsigned i = 0; i < w->n_lingerers; i++) {
		struct lcp_stage_priv *sp = w->lingerers[i];
		bool last = __atomic_load_n(&sp->linger_last, __ATOMIC_ACQUIRE) != 0;
		unsigned n;

		__atomic_store_n(&w->cur, sp, __ATOMIC_RELAXED);
		n = sp->linger(&sp->pub, sp->pub.ctx, last);

		__atomic_store_n(&sp->linger_n, n == LCP_LINGER_UNSEEN ? n - 1 : n, __ATOMIC_RELAXED);
	}
}

/* what the ring path and the walk call, resolved once the stages' init has run */
void
lcp_worker_resolve(struct lcp_worker *w)
{
	for (unsigned i = 0; i < w->n_rins; i++) {
		struct lcp_ring_in *ri = &w->rins[i];
		struct lcp_stage *d = ri->dst;

		ri->process = d->timed ? process_timed : d->ops->process;
		ri->ctx = d->ctx;
	}
	for (unsigned i = 0; i < w->n_pends; i++) {
		struct lcp_pend_q *q = w->pends[i];

		q->process = q->dst->timed ? process_timed : q->dst->ops->process;
		q->ctx = q->dst->ctx;
	}
}

/* every stage of the lcore's stop(), in config order */
static __rte_always_inline void
worker_stop_stages(struct lcp_worker *w)
{
	for (unsigned i = 0; i < w->n_stages; i++)
		if (w->stages[i]->ops->stop != NULL) {
			__atomic_store_n(&w->cur, (struct lcp_stage_priv *)w->stages[i], __ATOMIC_RELAXED);
			w->stages[i]->ops->stop(w->stages[i], w->stages[i]->ctx);
		}
}

/* One turn of the general loop, after the stop and linger handling: the
 * sources' polls (not once stopped), a burst from every ring into its stage,
 * the walk, the staged links. Returns the work done. */
static __rte_always_inline unsigned
worker_turn(struct lcp_worker *w, uint32_t state, bool stopped, void **objs)
{
	unsigned work = 0;

	if (likely(!stopped))
		for (unsigned i = 0; i < w->n_pollers; i++) {
			/* for the shutdown's report of a stage that never returns */
			__atomic_store_n(&w->cur, (struct lcp_stage_priv *)w->pollers[i], __ATOMIC_RELAXED);
			work += unlikely(w->pollers[i]->timed) ? lcp_poll_timed(w->pollers[i])
				: w->pollers[i]->ops->poll(w->pollers[i], w->pollers[i]->ctx);
		}
	for (unsigned i = 0; i < w->n_rins; i++) {
		struct lcp_ring_in *ri = &w->rins[i];
		unsigned avail, n;

		if (ri->dequeue_size != NULL) {
			unsigned want = ri->dequeue_size(ri->batch, ri->last, ri->avail);

			if (unlikely(want == 0 || want > LCP_BURST_MAX))
				want = want == 0 ? 1 : LCP_BURST_MAX;
			n = rte_ring_sc_dequeue_burst(ri->r, objs, want, &avail);
			ri->last = n;
			ri->avail = avail;
		} else {
			n = rte_ring_sc_dequeue_burst(ri->r, objs, ri->burst, &avail);
		}
		if (n == 0)
			continue;
		if (unlikely(n + avail > ri->hwm))
			__atomic_store_n(&ri->hwm, n + avail, __ATOMIC_RELAXED);
		/* "<port>.in" is the ring's consumer index (lcp_ring_tally) */
		__atomic_store_n(&w->cur, (struct lcp_stage_priv *)ri->dst, __ATOMIC_RELAXED);
		ri->process(ri->dst, ri->ctx, ri->port, objs, n);
		work += n;
	}
	/* what the stop(), linger, poll and ring calls above queued on this lcore */
	if (w->n_pends != 0)
		work += lcp_worker_walk(w);
	if (w->n_sbufs != 0)
		work += flush_staged(w, state);
	return work;
}

unsigned
lcp_worker_turn(struct lcp_worker *w, bool stopped)
{
	uint32_t state = __atomic_load_n(&w->eng->run_state, __ATOMIC_ACQUIRE);
	void *objs[LCP_BURST_MAX];

	if (state == LCP_RUN_DRAIN && w->n_lingerers != 0)
		linger_turn(w);
	return worker_turn(w, state, stopped, objs);
}

void
lcp_worker_stop_stages(struct lcp_worker *w)
{
	worker_stop_stages(w);
}

int
lcp_worker_main(void *arg)
{
	struct lcp_worker *w = arg;
	struct lcp_engine *e = w->eng;
	void *objs[LCP_BURST_MAX];
	struct lcp_wacct a = {.t0 = rte_rdtsc()};
	bool stopped = false;

	lcp_worker_resolve(w);
	if (w->n_rins == 1 && w->n_pollers == 0 && w->n_sbufs == 0 && w->n_lingerers == 0 &&
	    w->n_pends == 0 && w->rins[0].dequeue_size == NULL)
		worker_one_ring(w, &a);
	for (;;) {
		uint32_t state = __atomic_load_n(&e->run_state, __ATOMIC_ACQUIRE);
		unsigned work;

		if (unlikely(state >= LCP_RUN_STOP)) {
			if (state == LCP_RUN_EXIT)
				break;
			if (!stopped) {
				worker_stop_stages(w);
				stopped = true;
				__atomic_store_n(&w->stopped, 1, __ATOMIC_RELEASE);
			}
		}
		if (unlikely(state == LCP_RUN_DRAIN) && w->n_lingerers != 0)
			linger_turn(w);
		work = worker_turn(w, state, stopped, objs);
		wacct_turn(w, &a, work);
	}
	/* busy_cycles and idle_cycles are published whenever they change */
	wacct_charge(w, &a, rte_rdtsc());
	wacct_publish(w, &a);
	/* whatever this lcore's counter slot holds privately becomes visible */
	flush_counters_slot(e, w->slot);
	__atomic_store_n(&w->exited, 1, __ATOMIC_RELEASE);
	return 0;
}

static bool
rings_empty(struct lcp_engine *e)
{
	for (unsigned w = 0; w < e->n_workers; w++)
		for (unsigned r = 0; r < e->workers[w].n_rins; r++)
			if (rte_ring_count(e->workers[w].rins[r].r) != 0)
				return false;
	for (unsigned w = 0; w < e->n_workers; w++)
		for (unsigned b = 0; b < e->workers[w].n_sbufs; b++)
			if (__atomic_load_n(&e->workers[w].sbufs[b]->n, __ATOMIC_RELAXED) != 0)
				return false;
	return true;
}

/* one 1 ms window: was the pipeline quiet over it — every worker completed at
 * least two turns, none did any work, every ring is empty (and, if asked,
 * every worker has stopped)? */
static bool
quiet_window(struct lcp_engine *e, bool need_stopped)
{
	uint64_t loops[e->n_workers + 1], work[e->n_workers + 1];
	bool quiet = true;

	for (unsigned w = 0; w < e->n_workers; w++) {
		loops[w] = __atomic_load_n(&e->workers[w].loops, __ATOMIC_ACQUIRE);
		work[w] = __atomic_load_n(&e->workers[w].work, __ATOMIC_RELAXED);
	}
	usleep(1000);
	for (unsigned w = 0; w < e->n_workers; w++) {
		struct lcp_worker *wk = &e->workers[w];

		if (__atomic_load_n(&wk->loops, __ATOMIC_ACQUIRE) < loops[w] + 2 ||
		    __atomic_load_n(&wk->work, __ATOMIC_RELAXED) != work[w] ||
		    (need_stopped && !__atomic_load_n(&wk->stopped, __ATOMIC_ACQUIRE)))
			quiet = false;
	}
	return quiet && rings_empty(e);
}

/* the shutdown's hard limit passed, or a second signal came. Signals in its
 * first half second are the first one again (a wrapper such as timeout(1)
 * passes a signal on to its child and to its process group: two at once). */
static bool
cut_short(struct lcp_engine *e)
{
	uint64_t now = rte_rdtsc();

	if (now < e->t_shutdown + e->tsc_hz / 2)
		e->signals_at_stop = (unsigned)lcp_signals;
	return lcp_signals > (sig_atomic_t)e->signals_at_stop || now > e->hard_deadline;
}

static bool
wait_quiet(struct lcp_engine *e, uint64_t deadline, bool need_stopped)
{
	for (;;) {
		if (quiet_window(e, need_stopped))
			return true;
		if (rte_rdtsc() > deadline || cut_short(e))
			return false;
	}
}

/* EXIT: every worker returned, by the hard limit (at least 200 ms after the
 * EXIT: a worker in a turn that is not stuck returns at its next turn); false
 * with e->stuck naming the stages still running */
static bool
wait_exit(struct lcp_engine *e)
{
	uint64_t grace_end = rte_rdtsc() + e->tsc_hz / 5;
	size_t o = 0;

	for (;;) {
		unsigned left = 0;

		for (unsigned w = 0; w < e->n_workers; w++)
			left += !__atomic_load_n(&e->workers[w].exited, __ATOMIC_ACQUIRE);
		if (left == 0)
			return true;
		if (rte_rdtsc() > grace_end && cut_short(e))
			break;
		usleep(1000);
	}
	for (unsigned w = 0; w < e->n_workers; w++) {
		struct lcp_worker *wk = &e->workers[w];
		struct lcp_stage_priv *sp = __atomic_load_n(&wk->cur, __ATOMIC_RELAXED);

		const char *chain = sp != NULL ? sp->cs->name : "?";

		if (__atomic_load_n(&wk->exited, __ATOMIC_ACQUIRE))
			continue;
		/* the stage the worker called: since ABI 2.0 no stage's call runs
		 * inside another's, so it is the one that does not return */
		if (o < sizeof(e->stuck))
			o += (size_t)snprintf(e->stuck + o, sizeof(e->stuck) - o, "%s%s (lcore %u)", o ? ", " : "",
					      chain, wk->lcore);
		lcp_log(NULL, LCP_LOG_ERR,
			"stop: lcore %u still inside stage %s (a poll, process or stop that does not return) %.1f s "
			"into the shutdown (%s); exiting without it (status 4)",
			wk->lcore, chain,
			(double)(rte_rdtsc() - e->t_shutdown) / (double)e->tsc_hz,
			lcp_signals > (sig_atomic_t)e->signals_at_stop ? "a second signal" : "engine.stop_timeout");
	}
	return false;
}

/* The linger, in two rounds, until the deadline at most. A round ends when
 * every stage with a linger op answered 0 after a quiet window (what they
 * answer then is not about to change: nothing is in a ring or being processed,
 * and each was asked again during the window, in a turn that began after the
 * window did). After the first, every linger op is called with last = true
 * (the applications are done: a transport closes what nobody closed), and the
 * second round waits for those. Returns what the linger ops still report. */
static uint64_t
wait_linger(struct lcp_engine *e, uint64_t deadline)
{
	uint64_t left = 0;
	bool last = false;
	char list[512];
	size_t o = 0;

	for (;;) {
		unsigned busy = 0;

		if (quiet_window(e, false)) {
			for (unsigned i = 0; i < e->n_stages; i++)
				if (e->stages[i]->linger != NULL &&
				    __atomic_load_n(&e->stages[i]->linger_n, __ATOMIC_RELAXED) != 0)
					busy++;
			if (busy == 0 && last)
				return 0;
			if (busy == 0) {
				last = true;
				for (unsigned i = 0; i < e->n_stages; i++)
					if (e->stages[i]->linger != NULL)
						__atomic_store_n(&e->stages[i]->linger_last, 1, __ATOMIC_RELEASE);
				continue; /* the next window's answers are those to last */
			}
		}
		if (rte_rdtsc() > deadline || cut_short(e))
			break;
	}
	/* expired: who is still closing what */
	list[0] = '\0';
	for (unsigned i = 0; i < e->n_stages; i++) {
		struct lcp_stage_priv *sp = e->stages[i];
		uint32_t n = __atomic_load_n(&sp->linger_n, __ATOMIC_RELAXED);
		char v[16];

		if (sp->linger == NULL || n == 0)
			continue;
		left += n == LCP_LINGER_UNSEEN ? 1 : n;
		snprintf(v, sizeof(v), "%u", n);
		if (o < sizeof(list))
			o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s %s", o ? ", " : "", sp->cs->name,
					      n == LCP_LINGER_UNSEEN ? "(never answered)" : v);
	}
	lcp_log(NULL, LCP_LOG_WARNING,
		"linger: still closing after %.2f s (engine.linger): %s; stopping anyway (what is still open gets reset)",
		e->cfg->eng.linger, list);
	return left;
}

bool
lcp_engine_shutdown(struct lcp_engine *e)
{
	uint64_t budget = (uint64_t)(e->cfg->eng.drain_timeout * (double)e->tsc_hz);
	bool ok;

	e->stop_limit_s = e->cfg->eng.stop_timeout > 0 ? e->cfg->eng.stop_timeout
						       : e->cfg->eng.linger + 2 * e->cfg->eng.drain_timeout + 3;
	e->signals_at_stop = (unsigned)lcp_signals;
	e->t_shutdown = rte_rdtsc();
	e->hard_deadline = e->t_shutdown + (uint64_t)(e->stop_limit_s * (double)e->tsc_hz);
	__atomic_store_n(&e->run_state, LCP_RUN_DRAIN, __ATOMIC_RELEASE);
	if (e->n_lingerers != 0 && e->cfg->eng.linger > 0) {
		uint64_t t0 = rte_rdtsc();

		e->linger_left = wait_linger(e, t0 + (uint64_t)(e->cfg->eng.linger * (double)e->tsc_hz));
		e->linger_s = (double)(rte_rdtsc() - t0) / (double)e->tsc_hz;
	}
	ok = wait_quiet(e, rte_rdtsc() + budget, false);
	if (!ok)
		lcp_log(NULL, LCP_LOG_WARNING, "drain: pipeline not quiet after %.2f s (engine.drain_timeout); stopping anyway",
			e->cfg->eng.drain_timeout);
	__atomic_store_n(&e->run_state, LCP_RUN_STOP, __ATOMIC_RELEASE);
	if (!wait_quiet(e, rte_rdtsc() + budget, true)) {
		lcp_log(NULL, LCP_LOG_WARNING, "stop: pipeline not quiet after %.2f s; what is left in rings is dropped (drop_shutdown)",
			e->cfg->eng.drain_timeout);
		ok = false;
	}
	e->drained = ok;
	__atomic_store_n(&e->run_state, LCP_RUN_EXIT, __ATOMIC_RELEASE);
	if (!wait_exit(e))
		return false;
	rte_eal_mp_wait_lcore();
	/* a stage's stop() may have staged objects after the last turn looked */
	for (unsigned w = 0; w < e->n_workers; w++)
		for (unsigned b = 0; b < e->workers[w].n_sbufs; b++)
			lcp_stage_buf_flush(e->workers[w].sbufs[b]);
	lcp_engine_flush_counters(e);
	return true;
}
