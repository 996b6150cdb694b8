/* SPDX-License-Identifier: BSD-3-Clause
 * B1 — the link between two stages: cycles per object.
 *
 * Cross lcore (bursts 1, 8, 32). The engine's real paths, built from
 * engine_priv.h as lcp_engine_build() builds them: the producer stage calls
 * lcp_emit() on an edge whose ring is an SP/SC rte_ring (the counters strategy is
 * the real counters_percore plugin, loaded through the registry); the consumer
 * lcore runs the engine's lcp_worker_main() with one lcp_ring_in feeding a sink
 * stage whose process() only counts. Objects are dummy pointers (never
 * dereferenced). The producer waits for room before each burst (lcp_emit would
 * otherwise drop, and free, what does not fit), and so does the anchor.
 *
 * Same-run anchor: raw rte_ring SP/SC on the same ring, same lcores, same burst:
 * rte_ring_sp_enqueue_bulk on the producer lcore, rte_ring_sc_dequeue_burst in a
 * bare loop on the consumer lcore.
 *
 * Diagnostics (same interleaving) attribute the link's overhead to its parts:
 * lcp_emit + raw consumer; raw producer + lcp_worker_main; raw producer + a copy
 * of the worker loop (since 17:02 UTC the loop before that day's changes); the
 * raw consumer plus a run-state load (rawprod_rawstate), and plus an out-of-line
 * call of the sink (rawprod_rawcall). Prototypes of the
 * changes doc/benchmarks.md recommends, measured the same way: "proto emit" is
 * lcp_emit forced inline with the counter added inline to a plain per-slot row
 * (no indirect call) and the drop path out of line; "proto worker" is the loop
 * copy taking rte_rdtsc() once every 64 turns (busy/idle split by the turns that
 * did work) and adding its "<port>.in" counter inline.
 *
 * Same lcore (bursts 1, 8, 32): lcp_emit() on a same-lcore edge (two counter adds,
 * the pointers appended to the sink's input vector) and lcp_worker_walk() (the
 * indirect process() call on that vector), ABI 2.0's dispatch, against a plain
 * call of the same process function; "proto" is ABI 1.x's emit that called
 * process() from inside.
 *
 * The functions that call lcp_emit() are `flatten`ed so that it is inlined into
 * each, as it is in a plugin with a single lcp_emit() call site; with several
 * call sites GCC -O2 emits it out of line (doc/benchmarks.md).
 *
 * Method (BENCHMARKS.md): cases interleaved A B C… per repetition, --reps
 * repetitions of about --ms ms; a calibrated spin loop on every lcore involved
 * before and after each repetition, re-run when it drifted more than 10 %;
 * a repetition during which a measured lcore thread was off its CPU for more than
 * 5 % of the time (thread CPU time against wall time) is re-run as well;
 * min / median / IQR per case, the median of per-repetition ratios to the anchor.
 * --callgrind ITERS: no timing; single-lcore paths only, each between
 * CALLGRIND_ZERO_STATS and CALLGRIND_DUMP_STATS_AT("<case>") (tests/bench/callgrind.sh).
 *
 * Placement: run with --lcores=0@0,1@1,2@0 — producer lcore 1 on CPU 1, consumer
 * lcore 2 on CPU 0, which it shares with the main lcore (asleep in usleep()).
 */
#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include "engine_priv.h"
#include "bench_util.h"

#define B1_RING_SIZE 1024 /* the engine's default engine.ring_size */

static const unsigned b1_bursts[] = {1, 8, 32};

/* ---- the sink stage: process() only counts ---- */

struct b1_sink_ctx {
	uint64_t count __rte_cache_aligned; /* read by the producer at the end */
};

static __attribute__((noinline, noipa)) void
b1_sink_process(struct lcp_stage *st, void *ctx, unsigned port, void **objs, unsigned n)
{
	struct b1_sink_ctx *c = ctx;

	__atomic_store_n(&c->count, c->count + n, __ATOMIC_RELAXED);
}

static int
b1_stage_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	return 0;
}

static const struct lcp_port_def b1_sink_ports[] = {
	{.name = "in", .dir = LCP_PORT_IN, .unit = LCP_UNIT_MSG},
	LCP_PORT_END,
};
static const struct lcp_stage_ops b1_sink_ops = {
	.ports = b1_sink_ports,
	.init = b1_stage_init,
	.process = b1_sink_process,
};
static const struct lcp_port_def b1_prod_ports[] = {
	{.name = "out", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_MSG},
	LCP_PORT_END,
};
static const struct lcp_stage_ops b1_prod_ops = {
	.ports = b1_prod_ports,
	.init = b1_stage_init,
};

/* ---- the pieces, built as engine.c builds them ---- */

enum b1_prod { PROD_RAW, PROD_EMIT, PROD_PROTO, PROD_RAWCTR };
enum b1_cons { CONS_RAW, CONS_ENGINE, CONS_COPY, CONS_PROTO, CONS_RAWSTATE, CONS_RAWCALL };

struct b1_case {
	const char *name;  /* machine name */
	const char *label; /* table label */
	enum b1_prod prod;
	enum b1_cons cons;
};

static const struct b1_case b1_cases[] = {
	{"raw", "raw rte_ring SP/SC (anchor)", PROD_RAW, CONS_RAW},
	{"lcp", "lcp link: lcp_emit -> lcp_worker_main", PROD_EMIT, CONS_ENGINE},
	{"emit_rawcons", "diag: lcp_emit -> raw dequeue", PROD_EMIT, CONS_RAW},
	{"rawprod_worker", "diag: raw enqueue -> lcp_worker_main", PROD_RAW, CONS_ENGINE},
	{"rawprod_copy", "diag: raw enqueue -> previous worker loop", PROD_RAW, CONS_COPY},
	{"rawprod_proto_worker", "proto: raw enqueue -> proto worker", PROD_RAW, CONS_PROTO},
	{"proto_emit_rawcons", "proto: proto emit -> raw dequeue", PROD_PROTO, CONS_RAW},
	{"proto_link", "proto: proto emit -> proto worker", PROD_PROTO, CONS_PROTO},
	{"rawctr_rawcons", "diag: raw enqueue + 1 counter add -> raw dequeue", PROD_RAWCTR, CONS_RAW},
	{"rawprod_rawstate", "diag: raw enqueue -> raw dequeue + run-state load", PROD_RAW, CONS_RAWSTATE},
	{"rawprod_rawcall", "diag: raw enqueue -> raw dequeue + run-state + call", PROD_RAW, CONS_RAWCALL},
};
#define B1_N_CASES (sizeof(b1_cases) / sizeof(b1_cases[0]))

struct b1 {
	unsigned lc_prod, lc_cons;
	unsigned cons_burst; /* --cons-burst: consumer dequeue size (0: the producer's) */
	const struct lcp_counters_ops *cops;
	struct rte_ring *r;
	void *objs[LCP_BURST_MAX];
	/* cross lcore */
	struct lcp_engine *eng;
	struct lcp_worker *w;
	struct lcp_stage_priv *prod, *sink;
	struct b1_sink_ctx *sctx;
	/* prototype counter rows (slot 0 = producer, slot 1 = consumer) */
	uint64_t *proto_row[2];
	/* same lcore; dpprod/dpsink: the prototype, whose ctrs is a plain row */
	struct lcp_stage_priv *dprod, *dsink, *dpprod, *dpsink;
	struct lcp_worker *dw; /* the same-lcore pair's worker: the sink's input vector */
	struct b1_sink_ctx *dsctx, *dpsctx;
	/* the repetition being run */
	const struct b1_case *c;
	unsigned burst;
	uint64_t nobj;
	uint64_t target;
	volatile uint32_t cons_ready;
	volatile uint32_t raw_stop;
	uint64_t cycles;
	double off_prod, off_cons; /* off-CPU fraction of each lcore during the run */
	uint64_t sent;		   /* by every producer, to check the counters */
	/* noise gate, per lcore */
	struct bench_gate gate[RTE_MAX_LCORE];
};

/* the prototype's counters: set = the writer slot's row of plain uint64_t */
static void
b1_row_add(void *set, unsigned slot, unsigned idx, uint64_t v)
{
	((uint64_t *)set)[idx] += v;
}

static struct lcp_stage_priv *
b1_stage(struct b1 *b, const struct lcp_stage_ops *ops, const char *const *names, unsigned n,
	 unsigned slot, unsigned n_ports, void *ctx)
{
	struct lcp_stage_priv *sp = rte_zmalloc("lcp_stage", sizeof(*sp), RTE_CACHE_LINE_SIZE);

	if (sp == NULL)
		goto fail;
	sp->eng = b->eng;
	sp->cops = b->cops;
	sp->n_ctrs = n;
	sp->pub.ops = ops;
	sp->pub.ctx = ctx;
	sp->pub.slot = slot;
	sp->pub.run_state = &b->eng->run_state;
	sp->pub.priv = sp;
	/* the engine: n_workers + 1 writer slots */
	sp->pub.ctrs = b->cops->create(NULL, names, n, 3, (int)rte_socket_id());
	sp->pub.ctr_add = b->cops->add;
	/* as engine.c build_counters(): the strategy's row when it has one (ABI 1.1) */
	sp->pub.ctr_row = b->cops->row && sp->pub.ctrs ? b->cops->row(sp->pub.ctrs, sp->pub.slot) : NULL;
	sp->edges = rte_zmalloc("lcp_edges", (n_ports + 1) * sizeof(struct lcp_edge),
				RTE_CACHE_LINE_SIZE);
	sp->pub.edges = sp->edges;
	if (sp->pub.ctrs == NULL || sp->edges == NULL)
		goto fail;
	return sp;
fail:
	fprintf(stderr, "b1: cannot build a stage\n");
	exit(1);
}

static void
b1_build(struct b1 *b)
{
	static const char *const prod_ctrs[] = {"out.out", "out.drop_ring_full",
						"out.drop_unlinked", "drop_shutdown"};
	static const char *const sink_ctrs[] = {"in.in", "drop_shutdown"};
	struct lcp_ring_in *ri;

	b->cops = bench_counters_ops();
	for (unsigned i = 0; i < LCP_BURST_MAX; i++)
		b->objs[i] = (void *)(uintptr_t)(0x10000 + 64 * i); /* never dereferenced */
	b->eng = rte_zmalloc("lcp_engine", sizeof(*b->eng), RTE_CACHE_LINE_SIZE);
	b->sctx = rte_zmalloc("b1_sink", sizeof(*b->sctx), RTE_CACHE_LINE_SIZE);
	b->dsctx = rte_zmalloc("b1_dsink", sizeof(*b->dsctx), RTE_CACHE_LINE_SIZE);
	b->r = rte_ring_create("b1_link", B1_RING_SIZE, (int)rte_socket_id(),
			       RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (b->eng == NULL || b->sctx == NULL || b->dsctx == NULL || b->r == NULL) {
		fprintf(stderr, "b1: out of memory\n");
		exit(1);
	}
	b->eng->tsc_hz = rte_get_tsc_hz();
	for (unsigned i = 0; i < 2; i++) {
		b->proto_row[i] = rte_zmalloc("b1_row", RTE_CACHE_LINE_SIZE, RTE_CACHE_LINE_SIZE);
		if (b->proto_row[i] == NULL)
			exit(1);
	}

	/* cross lcore: producer slot 0 (lcore P), sink slot 1 (lcore C) */
	b->prod = b1_stage(b, &b1_prod_ops, prod_ctrs, 4, 0, 1, NULL);
	b->prod->edges[0].unit = LCP_UNIT_MSG;
	b->prod->edges[0].ctr_out = 0;
	b->prod->edges[0].ctr_drop = 1; /* drop_ring_full */
	b->prod->edges[0].ring = b->r;
	b->sink = b1_stage(b, &b1_sink_ops, sink_ctrs, 2, 1, 1, b->sctx);

	b->w = rte_zmalloc("lcp_workers", sizeof(*b->w), RTE_CACHE_LINE_SIZE);
	/* engine.c: the rins array in cache-aligned memory, the tally apart */
	ri = rte_zmalloc("lcp_ring_in", sizeof(*ri), RTE_CACHE_LINE_SIZE);
	if (b->w == NULL || ri == NULL)
		exit(1);
	ri->tally = rte_zmalloc("lcp_ring_tally", sizeof(*ri->tally), RTE_CACHE_LINE_SIZE);
	if (ri->tally == NULL)
		exit(1);
	rte_spinlock_init(&ri->tally->lock);
	b->w->eng = b->eng;
	b->w->lcore = b->lc_cons;
	b->w->slot = 1;
	b->w->stages = calloc(1, sizeof(*b->w->stages));
	b->w->stages[0] = &b->sink->pub;
	b->w->n_stages = 1;
	ri->r = b->r;
	ri->dst = &b->sink->pub;
	ri->port = 0;
	ri->unit = LCP_UNIT_MSG;
	ri->ctr_in = 0;
	ri->link = 0;
	b->w->rins = ri;
	b->w->n_rins = 1;

	/* same lcore: both slot 0 */
	b->dsink = b1_stage(b, &b1_sink_ops, sink_ctrs, 2, 0, 1, b->dsctx);
	b->dprod = b1_stage(b, &b1_prod_ops, prod_ctrs, 4, 0, 1, NULL);
	b->dprod->edges[0].unit = LCP_UNIT_MSG;
	b->dprod->edges[0].ctr_out = 0;
	b->dprod->edges[0].ctr_drop = 2;
	b->dprod->edges[0].dst = &b->dsink->pub;
	b->dprod->edges[0].dst_port = 0;
	b->dprod->edges[0].dst_ctr_in = 0;
	b->dw = rte_zmalloc("b1_dw", sizeof(*b->dw), RTE_CACHE_LINE_SIZE);
	if (b->dw == NULL || (b->dw->pends = calloc(1, sizeof(*b->dw->pends))) == NULL ||
	    (b->dw->pends[0] = lcp_pend_new(&b->dsink->pub, 0, LCP_UNIT_MSG, (int)rte_socket_id())) == NULL)
		exit(1);
	b->dw->n_pends = 1;
	b->dw->pends[0]->process = b->dsink->pub.ops->process;
	b->dw->pends[0]->ctx = b->dsink->pub.ctx;
	b->dprod->edges[0].pend = &b->dw->pends[0]->pub;

	/* the same pair for the prototype: counters are a plain row per stage */
	b->dpsctx = rte_zmalloc("b1_dpsink", sizeof(*b->dpsctx), RTE_CACHE_LINE_SIZE);
	if (b->dpsctx == NULL)
		exit(1);
	b->dpsink = b1_stage(b, &b1_sink_ops, sink_ctrs, 2, 0, 1, b->dpsctx);
	b->dpprod = b1_stage(b, &b1_prod_ops, prod_ctrs, 4, 0, 1, NULL);
	b->dpprod->edges[0] = b->dprod->edges[0];
	b->dpprod->edges[0].dst = &b->dpsink->pub;
	for (unsigned i = 0; i < 2; i++) {
		struct lcp_stage_priv *sp = i ? b->dpsink : b->dpprod;

		sp->pub.ctrs = rte_zmalloc("b1_row", RTE_CACHE_LINE_SIZE, RTE_CACHE_LINE_SIZE);
		sp->pub.ctr_add = b1_row_add;
		sp->pub.ctr_row = sp->pub.ctrs; /* the same plain row */
		if (sp->pub.ctrs == NULL)
			exit(1);
	}
}

/* ---- producers ---- */

static inline void
b1_wait_room(struct rte_ring *r, unsigned n)
{
	while (rte_ring_free_count(r) < n)
		rte_pause();
}

static __attribute__((noinline)) void
b1_prod_raw(struct rte_ring *r, void **objs, unsigned burst, uint64_t nb)
{
	for (uint64_t i = 0; i < nb; i++) {
		b1_wait_room(r, burst);
		if (unlikely(rte_ring_sp_enqueue_bulk(r, objs, burst, NULL) == 0))
			abort(); /* room was checked: cannot happen with one producer */
	}
}

/* rawctr_rawcons: the anchor's producer plus what lcp_emit() did per burst on
 * a ring link before ABI 1.4 — one relaxed add to a counter in a row that only
 * this lcore writes (the cost that made the engine read ring-link counts off
 * the ring instead; doc/benchmarks.md) */
static uint64_t b1_ctr_row[8] __rte_cache_aligned;

static __attribute__((noinline)) void
b1_prod_rawctr(struct rte_ring *r, uint64_t *row, void **objs, unsigned burst, uint64_t nb)
{
	for (uint64_t i = 0; i < nb; i++) {
		b1_wait_room(r, burst);
		if (unlikely(rte_ring_sp_enqueue_bulk(r, objs, burst, NULL) == 0))
			abort();
		__atomic_store_n(&row[0], __atomic_load_n(&row[0], __ATOMIC_RELAXED) + burst,
				 __ATOMIC_RELAXED);
	}
}

static __attribute__((noinline, flatten)) void
b1_prod_emit(struct lcp_stage *st, struct rte_ring *r, void **objs, unsigned burst, uint64_t nb)
{
	for (uint64_t i = 0; i < nb; i++) {
		b1_wait_room(r, burst);
		lcp_emit(st, 0, objs, burst);
	}
}

/* ---- prototype of the recommended lcp_emit (ring path) ---- */

static __attribute__((noinline, cold)) void
b1_proto_drop(struct lcp_stage *st, uint64_t *row, struct lcp_edge *e, void **objs, unsigned n)
{
	lcp_objs_free(e->unit, objs, n);
	row[e->ctr_drop] += n;
}

static __rte_always_inline void
b1_proto_emit(struct lcp_stage *st, uint64_t *row, unsigned port, void **objs, unsigned n)
{
	struct lcp_edge *e = &st->edges[port];
	unsigned k = rte_ring_sp_enqueue_burst(e->ring, objs, n, NULL);

	row[e->ctr_out] += k;
	if (unlikely(k < n))
		b1_proto_drop(st, row, e, objs + k, n - k);
}

static __attribute__((noinline)) void
b1_prod_proto(struct lcp_stage *st, uint64_t *row, struct rte_ring *r, void **objs, unsigned burst,
	      uint64_t nb)
{
	for (uint64_t i = 0; i < nb; i++) {
		b1_wait_room(r, burst);
		b1_proto_emit(st, row, 0, objs, burst);
	}
}

static int
b1_prod_main(void *arg)
{
	struct b1 *b = arg;
	uint64_t nb = b->nobj / b->burst, t0;
	struct bench_oncpu oc;

	bench_oncpu_start(&oc);

	while (!b->cons_ready)
		rte_pause();
	t0 = rte_rdtsc_precise();
	if (b->c->prod == PROD_RAW)
		b1_prod_raw(b->r, b->objs, b->burst, nb);
	else if (b->c->prod == PROD_EMIT)
		b1_prod_emit(&b->prod->pub, b->r, b->objs, b->burst, nb);
	else if (b->c->prod == PROD_RAWCTR)
		b1_prod_rawctr(b->r, b1_ctr_row, b->objs, b->burst, nb);
	else
		b1_prod_proto(&b->prod->pub, b->proto_row[0], b->r, b->objs, b->burst, nb);
	while (__atomic_load_n(&b->sctx->count, __ATOMIC_ACQUIRE) < b->target)
		rte_pause();
	b->cycles = rte_rdtsc_precise() - t0;
	b->off_prod = bench_oncpu_offcpu(&oc);
	b->sent += nb * b->burst;
	__atomic_store_n(&b->eng->run_state, LCP_RUN_EXIT, __ATOMIC_RELEASE);
	b->raw_stop = 1;
	return 0;
}

/* ---- consumers ---- */

static int
b1_cons_raw(struct b1 *b)
{
	struct rte_ring *r = b->r;
	struct b1_sink_ctx *c = b->sctx;
	unsigned burst = b->w->rins[0].burst;
	void *objs[LCP_BURST_MAX];

	while (!b->raw_stop) {
		unsigned n = rte_ring_sc_dequeue_burst(r, objs, burst, NULL);

		if (n == 0) {
			rte_pause();
			continue;
		}
		__atomic_store_n(&c->count, c->count + n, __ATOMIC_RELAXED);
	}
	return 0;
}

/* rawprod_rawstate: the anchor's consumer loop with one more load per turn
 * (the engine's run state, as every worker loop checks it), in a function of
 * its own: what its ratio to the anchor moves by is this host's noise floor for
 * two consumer loops of the same work. rawprod_rawcall: the same loop calling
 * the sink's process() through its pointer instead of doing its one store
 * inline — what any consumer of a stage in another object file pays, and in
 * some host states most of what lcp_worker_main costs over the anchor
 * (doc/benchmarks.md). */
static __rte_always_inline int
b1_cons_rawloop(struct b1 *b, const bool call)
{
	struct rte_ring *r = b->r;
	struct b1_sink_ctx *c = b->sctx;
	struct lcp_stage *dst = b->w->rins[0].dst;
	const lcp_stage_process_t process = dst->ops->process;
	void *ctx = dst->ctx;
	unsigned burst = b->w->rins[0].burst;
	const volatile uint32_t *state = &b->eng->run_state;
	void *objs[LCP_BURST_MAX];

	while (*state < LCP_RUN_STOP) {
		unsigned n = rte_ring_sc_dequeue_burst(r, objs, burst, NULL);

		if (n == 0) {
			rte_pause();
			continue;
		}
		if (call)
			process(dst, ctx, 0, objs, n);
		else
			__atomic_store_n(&c->count, c->count + n, __ATOMIC_RELAXED);
	}
	return 0;
}

static __attribute__((noinline)) int
b1_cons_rawstate(struct b1 *b)
{
	return b1_cons_rawloop(b, false);
}

static __attribute__((noinline)) int
b1_cons_rawcall(struct b1 *b)
{
	return b1_cons_rawloop(b, true);
}

/* A copy of lcp_worker_main (framework/runner.c) reduced to what runs here (no
 * pollers, no STOP state). proto = false: the loop as it was until 2026-11-30
 * 16:57 UTC (rte_rdtsc() on idle turns and every 64th busy one; per turn
 * process(), ctx and the counter reached through the destination stage, the
 * "<port>.in" counter through the strategy's add(), the turn and work counts
 * stored on every turn): the same-process "before" of that change, whose
 * effect is otherwise lost in this host's run-to-run noise (doc/benchmarks.md).
 * proto = true: the recommended loop — the TSC
 * read once every 64 turns, the elapsed cycles split into busy and idle by the
 * number of turns that did work, the counter added inline to a per-slot row. */
#define B1_TSC_EVERY 64

static __rte_always_inline int
b1_worker_copy(struct lcp_worker *w, uint64_t *row, const bool proto)
{
	struct lcp_engine *e = w->eng;
	void *objs[LCP_BURST_MAX];
	uint64_t t0 = rte_rdtsc(), busy = 0, idle = 0, loops = 0, work_total = 0;
	unsigned busy_turns = 0, run_turns = 0;
	bool was_busy = false;

	for (;;) {
		uint32_t state = __atomic_load_n(&e->run_state, __ATOMIC_ACQUIRE);
		unsigned work = 0;

		if (unlikely(state >= LCP_RUN_STOP))
			break;
		for (unsigned i = 0; i < w->n_rins; i++) {
			struct lcp_ring_in *ri = &w->rins[i];
			unsigned avail, n;
			struct lcp_stage *d;

			n = rte_ring_sc_dequeue_burst(ri->r, objs, ri->burst, &avail);
			if (n == 0)
				continue;
			if (unlikely(n + avail > ri->hwm))
				__atomic_store_n(&ri->hwm, n + avail, __ATOMIC_RELAXED);
			d = ri->dst;
			if (proto)
				row[ri->ctr_in] += n;
			else
				d->ctr_add(d->ctrs, d->slot, ri->ctr_in, n);
			d->ops->process(d, d->ctx, ri->port, objs, n);
			work += n;
		}
		if (!proto) {
			/* as runner.c: TSC on idle turns and every LCP_TSC_EVERY busy ones */
			if (work) {
				work_total += work;
				__atomic_store_n(&w->work, work_total, __ATOMIC_RELAXED);
				was_busy = true;
				if (unlikely(++run_turns == B1_TSC_EVERY)) {
					uint64_t t1 = rte_rdtsc();

					busy += t1 - t0;
					t0 = t1;
					run_turns = 0;
					__atomic_store_n(&w->busy_cycles, busy, __ATOMIC_RELAXED);
				}
			} else {
				uint64_t t1 = rte_rdtsc();

				if (was_busy) {
					busy += t1 - t0;
					run_turns = 0;
					was_busy = false;
					__atomic_store_n(&w->busy_cycles, busy, __ATOMIC_RELAXED);
				} else {
					idle += t1 - t0;
					__atomic_store_n(&w->idle_cycles, idle, __ATOMIC_RELAXED);
				}
				t0 = t1;
				rte_pause();
			}
		} else {
			if (work) {
				busy_turns++;
				work_total += work;
				__atomic_store_n(&w->work, work_total, __ATOMIC_RELAXED);
			} else {
				rte_pause();
			}
			if (unlikely((loops + 1) % B1_TSC_EVERY == 0)) {
				uint64_t t1 = rte_rdtsc(), dt = t1 - t0,
					 db = dt * busy_turns / B1_TSC_EVERY;

				busy += db;
				idle += dt - db;
				busy_turns = 0;
				t0 = t1;
				__atomic_store_n(&w->busy_cycles, busy, __ATOMIC_RELAXED);
				__atomic_store_n(&w->idle_cycles, idle, __ATOMIC_RELAXED);
			}
		}
		__atomic_store_n(&w->loops, ++loops, __ATOMIC_RELEASE);
	}
	return 0;
}

static __attribute__((noinline)) int
b1_worker_copy_runner(struct lcp_worker *w)
{
	return b1_worker_copy(w, NULL, false);
}

static __attribute__((noinline)) int
b1_worker_proto(struct lcp_worker *w, uint64_t *row)
{
	return b1_worker_copy(w, row, true);
}

static int
b1_cons_main(void *arg)
{
	struct b1 *b = arg;
	struct bench_oncpu oc;

	bench_oncpu_start(&oc);
	b->cons_ready = 1;
	switch (b->c->cons) {
	case CONS_RAW:
		b1_cons_raw(b);
		break;
	case CONS_ENGINE:
		lcp_worker_main(b->w);
		break;
	case CONS_COPY:
		b1_worker_copy_runner(b->w);
		break;
	case CONS_PROTO:
		b1_worker_proto(b->w, b->proto_row[1]);
		break;
	case CONS_RAWSTATE:
		b1_cons_rawstate(b);
		break;
	case CONS_RAWCALL:
		b1_cons_rawcall(b);
		break;
	}
	b->off_cons = bench_oncpu_offcpu(&oc);
	return 0;
}

/* ---- same lcore ---- */

static __attribute__((noinline)) uint64_t
b1_loop_plain(struct lcp_stage *sink, void **objs, unsigned burst, uint64_t it)
{
	uint64_t t0 = rte_rdtsc_precise();

	for (uint64_t i = 0; i < it; i++)
		b1_sink_process(sink, sink->ctx, 0, objs, burst);
	return rte_rdtsc_precise() - t0;
}

static __attribute__((noinline, flatten)) uint64_t
b1_loop_emit(struct lcp_stage *st, struct lcp_worker *w, void **objs, unsigned burst, uint64_t it)
{
	uint64_t t0 = rte_rdtsc_precise();

	for (uint64_t i = 0; i < it; i++) {
		lcp_emit(st, 0, objs, burst);
		lcp_worker_walk(w);
	}
	return rte_rdtsc_precise() - t0;
}

/* the recommended lcp_emit, direct path: counters added inline to the rows
 * (st->ctrs is the slot's row for a row-based strategy), process() tail-called */
static __rte_always_inline void
b1_proto_emit_direct(struct lcp_stage *st, unsigned port, void **objs, unsigned n)
{
	struct lcp_edge *e = &st->edges[port];
	struct lcp_stage *d = e->dst;

	((uint64_t *)st->ctrs)[e->ctr_out] += n;
	((uint64_t *)d->ctrs)[e->dst_ctr_in] += n;
	d->ops->process(d, d->ctx, e->dst_port, objs, n);
}

static __attribute__((noinline)) uint64_t
b1_loop_proto(struct lcp_stage *st, void **objs, unsigned burst, uint64_t it)
{
	uint64_t t0 = rte_rdtsc_precise();

	for (uint64_t i = 0; i < it; i++)
		b1_proto_emit_direct(st, 0, objs, burst);
	return rte_rdtsc_precise() - t0;
}

enum b1_direct { D_PLAIN, D_EMIT, D_PROTO, D_COUNT };
static const char *const b1_dname[D_COUNT] = {"plain_call", "lcp_emit_direct", "proto_emit_direct"};
static const char *const b1_dlabel[D_COUNT] = {
	"plain call of process (anchor)",
	"lcp_emit + walk (same lcore)",
	"1.x: emit calls process() inside",
};

struct b1_direct_job {
	struct b1 *b;
	enum b1_direct d;
	unsigned burst;
	uint64_t it;
	uint64_t cycles;
	uint64_t spin_before, spin_after;
	double offcpu;
};

static int
b1_direct_main(void *arg)
{
	struct b1_direct_job *j = arg;
	struct b1 *b = j->b;
	struct bench_oncpu oc;

	j->spin_before = bench_spin(b->gate[rte_lcore_id()].iters);
	bench_oncpu_start(&oc);
	if (j->d == D_EMIT)
		j->cycles = b1_loop_emit(&b->dprod->pub, b->dw, b->objs, j->burst, j->it);
	else if (j->d == D_PROTO)
		j->cycles = b1_loop_proto(&b->dpprod->pub, b->objs, j->burst, j->it);
	else
		j->cycles = b1_loop_plain(&b->dsink->pub, b->objs, j->burst, j->it);
	j->offcpu = bench_oncpu_offcpu(&oc);
	j->spin_after = bench_spin(b->gate[rte_lcore_id()].iters);
	return 0;
}

/* ---- gate ---- */

struct b1_spin_job {
	uint64_t iters, cycles;
};

static int
b1_spin_main(void *arg)
{
	struct b1_spin_job *j = arg;

	j->cycles = bench_spin(j->iters);
	return 0;
}

/* spin on both lcores at once; the larger drift */
static double
b1_gate(struct b1 *b)
{
	struct b1_spin_job jp = {.iters = b->gate[b->lc_prod].iters};
	struct b1_spin_job jc = {.iters = b->gate[b->lc_cons].iters};
	double dp, dc;

	/* the lcore that does not share the main thread's CPU first (see below) */
	bench_launch(b->lc_prod, b1_spin_main, &jp);
	bench_launch(b->lc_cons, b1_spin_main, &jc);
	bench_wait();
	dp = bench_gate_drift(&b->gate[b->lc_prod], jp.cycles);
	dc = bench_gate_drift(&b->gate[b->lc_cons], jc.cycles);
	return dp > dc ? dp : dc;
}

/* one cross-lcore repetition: cycles per object */
static double
b1_cross_once(struct b1 *b, const struct b1_case *c, unsigned burst, uint64_t nobj)
{
	b->c = c;
	b->burst = burst;
	b->nobj = nobj;
	b->w->rins[0].burst = b->cons_burst ? b->cons_burst : burst;
	b->target = __atomic_load_n(&b->sctx->count, __ATOMIC_ACQUIRE) + nobj;
	b->cons_ready = 0;
	b->raw_stop = 0;
	__atomic_store_n(&b->eng->run_state, LCP_RUN_RUNNING, __ATOMIC_RELEASE);
	/* producer first: the consumer's lcore 2 shares CPU 0 with the main
	 * thread, and under SCHED_FIFO a consumer launched first keeps the main
	 * thread from launching the producer until RT throttling (found by B4) */
	bench_launch(b->lc_prod, b1_prod_main, b);
	bench_launch(b->lc_cons, b1_cons_main, b);
	bench_wait();
	if (getenv("B1_TRACE") && c->cons == CONS_ENGINE)
		fprintf(stderr, "trace %s b%u: loops/obj %.3f busy %.0f%% cyc/obj %.1f\n", c->name, burst,
			(double)b->w->loops / (double)nobj,
			100.0 * (double)b->w->busy_cycles / (double)(b->w->busy_cycles + b->w->idle_cycles + 1),
			(double)b->cycles / (double)nobj);
	lcp_ring_tally(&b->w->rins[0], NULL, NULL); /* well within 2^32 objects */
	if (rte_ring_count(b->r) != 0) {
		fprintf(stderr, "b1: ring not empty after a repetition\n");
		exit(1);
	}
	return (double)b->cycles / (double)nobj;
}

/* with the noise gate: re-run while the spin loop drifted more than 10 % */
static double
b1_cross_rep(struct b1 *b, const struct b1_case *c, unsigned burst, uint64_t nobj,
	     unsigned *rejected, unsigned *noisy)
{
	for (unsigned t = 0;; t++) {
		double before = b1_gate(b), v = b1_cross_once(b, c, burst, nobj),
		       after = b1_gate(b);
		bool ok = before <= BENCH_DRIFT_MAX && after <= BENCH_DRIFT_MAX &&
			  b->off_prod <= BENCH_OFFCPU_MAX && b->off_cons <= BENCH_OFFCPU_MAX;

		if (!ok && getenv("BENCH_DEBUG"))
			fprintf(stderr,
				"b1: %s b%u rejected: spin drift %.3f/%.3f, off-CPU %.4f/%.4f\n",
				c->name, burst, before, after, b->off_prod, b->off_cons);

		if (bench_rep_kept(ok, t, BENCH_RERUNS_MAX, rejected, noisy))
			return v;
	}
}

static double
b1_direct_rep(struct b1 *b, enum b1_direct d, unsigned burst, uint64_t it, unsigned *rejected,
	      unsigned *noisy)
{
	struct b1_direct_job j = {.b = b, .d = d, .burst = burst, .it = it};

	for (unsigned t = 0;; t++) {
		const struct bench_gate *g = &b->gate[b->lc_prod];
		bool ok;

		bench_launch(b->lc_prod, b1_direct_main, &j);
		bench_wait();
		ok = bench_gate_ok(g, j.spin_before, j.spin_after, j.offcpu);
		if (!ok && getenv("BENCH_DEBUG"))
			fprintf(stderr,
				"b1: direct %s b%u rejected: spin drift %.3f/%.3f, off-CPU %.4f\n",
				b1_dname[d], burst, bench_gate_drift(g, j.spin_before),
				bench_gate_drift(g, j.spin_after), j.offcpu);
		if (bench_rep_kept(ok, t, BENCH_RERUNS_MAX, rejected, noisy))
			return (double)j.cycles / ((double)it * burst);
	}
}

/* ---- output ---- */

struct b1_result {
	const char *group; /* "cross" / "direct" */
	const char *name, *label;
	unsigned burst;
	struct bench_summary s;
	double ratio;	  /* median of per-repetition ratios to the anchor; 0 for the anchor */
	double ratio_min; /* min over min of the anchor */
	unsigned rejected, noisy;
	uint64_t per_rep; /* objects per repetition */
};

static void
b1_table(const struct b1_result *r, unsigned n, const char *title)
{
	printf("\n%s (cycles/object)\n", title);
	printf("%-42s %5s %8s %8s %8s %8s %8s %8s %4s %5s\n", "case", "burst", "min", "median",
	       "q1", "q3", "ratio", "min/min", "rej", "noisy");
	for (unsigned i = 0; i < n; i++) {
		char ratio[16], rmin[16];

		if (r[i].ratio > 0) {
			snprintf(ratio, sizeof(ratio), "%.3f", r[i].ratio);
			snprintf(rmin, sizeof(rmin), "%.3f", r[i].ratio_min);
		} else {
			snprintf(ratio, sizeof(ratio), "anchor");
			snprintf(rmin, sizeof(rmin), "-");
		}
		printf("%-42s %5u %8.2f %8.2f %8.2f %8.2f %8s %8s %4u %5u\n", r[i].label,
		       r[i].burst, r[i].s.min, r[i].s.med, r[i].s.q1, r[i].s.q3, ratio, rmin,
		       r[i].rejected, r[i].noisy);
	}
}

static void
b1_json(const struct b1_result *r, unsigned n, double hz, const char *placement, const char *anchor,
	double target, unsigned reps, double ms, unsigned cons_burst)
{
	for (unsigned i = 0; i < n; i++) {
		printf("{\"bench\":\"B1\",\"group\":\"%s\",\"case\":\"%s\",\"burst\":%u,"
		       "\"unit\":\"cycles/object\",\"tsc_hz\":%.0f,\"reps\":%u,\"rep_ms\":%.0f,"
		       "\"objects_per_rep\":%" PRIu64 ",\"min\":%.3f,\"q1\":%.3f,\"median\":%.3f,"
		       "\"q3\":%.3f,\"iqr\":%.3f,\"max\":%.3f,\"anchor\":\"%s\"",
		       r[i].group, r[i].name, r[i].burst, hz, reps, ms, r[i].per_rep, r[i].s.min,
		       r[i].s.q1, r[i].s.med, r[i].s.q3, r[i].s.q3 - r[i].s.q1, r[i].s.max, anchor);
		if (r[i].ratio > 0) {
			printf(",\"ratio_median_of_pairs\":%.4f,\"ratio_of_minima\":%.4f",
			       r[i].ratio, r[i].ratio_min);
			if (target > 0 && strcmp(r[i].name, "lcp") == 0)
				printf(",\"target_ratio\":%.2f,\"target_met\":%s", target,
				       r[i].ratio <= target ? "true" : "false");
		}
		printf(",\"gate_reruns\":%u,\"gate_noisy\":%u,\"ring_size\":%u,\"cons_burst\":%u,"
		       "\"placement\":%s}\n",
		       r[i].rejected, r[i].noisy, B1_RING_SIZE,
		       cons_burst ? cons_burst : r[i].burst, placement);
	}
}

/* ---- callgrind: single-lcore paths, fixed iteration counts ---- */

static __attribute__((noinline)) void
b1_cg_ring_raw(struct rte_ring *r, void **objs, void **out, unsigned burst, uint64_t it)
{
	for (uint64_t i = 0; i < it; i++) {
		rte_ring_sp_enqueue_bulk(r, objs, burst, NULL);
		rte_ring_sc_dequeue_burst(r, out, burst, NULL);
	}
}

static __attribute__((noinline, flatten)) void
b1_cg_ring_emit(struct lcp_stage *st, struct rte_ring *r, void **objs, void **out, unsigned burst,
		uint64_t it)
{
	for (uint64_t i = 0; i < it; i++) {
		lcp_emit(st, 0, objs, burst);
		rte_ring_sc_dequeue_burst(r, out, burst, NULL);
	}
}

static __attribute__((noinline)) void
b1_cg_ring_proto(struct lcp_stage *st, uint64_t *row, struct rte_ring *r, void **objs, void **out,
		 unsigned burst, uint64_t it)
{
	for (uint64_t i = 0; i < it; i++) {
		b1_proto_emit(st, row, 0, objs, burst);
		rte_ring_sc_dequeue_burst(r, out, burst, NULL);
	}
}

static void
b1_callgrind(struct b1 *b, uint64_t it)
{
	void *out[LCP_BURST_MAX];
	char name[64];

	for (unsigned k = 0; k < RTE_DIM(b1_bursts); k++) {
		unsigned burst = b1_bursts[k];

		CALLGRIND_ZERO_STATS;
		b1_loop_plain(&b->dsink->pub, b->objs, burst, it);
		snprintf(name, sizeof(name), "b1.direct.plain.b%u", burst);
		CALLGRIND_DUMP_STATS_AT(name);
		printf("callgrind-case %s objects %" PRIu64 "\n", name, it * burst);

		CALLGRIND_ZERO_STATS;
		b1_loop_emit(&b->dprod->pub, b->dw, b->objs, burst, it);
		snprintf(name, sizeof(name), "b1.direct.lcp_emit.b%u", burst);
		CALLGRIND_DUMP_STATS_AT(name);
		printf("callgrind-case %s objects %" PRIu64 "\n", name, it * burst);

		/* one lcore: enqueue then dequeue (no second lcore under valgrind) */
		CALLGRIND_ZERO_STATS;
		b1_loop_proto(&b->dpprod->pub, b->objs, burst, it);
		snprintf(name, sizeof(name), "b1.direct.proto_emit.b%u", burst);
		CALLGRIND_DUMP_STATS_AT(name);
		printf("callgrind-case %s objects %" PRIu64 "\n", name, it * burst);

		CALLGRIND_ZERO_STATS;
		b1_cg_ring_raw(b->r, b->objs, out, burst, it);
		snprintf(name, sizeof(name), "b1.ring1.raw_enq_deq.b%u", burst);
		CALLGRIND_DUMP_STATS_AT(name);
		printf("callgrind-case %s objects %" PRIu64 "\n", name, it * burst);

		CALLGRIND_ZERO_STATS;
		b1_cg_ring_emit(&b->prod->pub, b->r, b->objs, out, burst, it);
		snprintf(name, sizeof(name), "b1.ring1.lcp_emit_deq.b%u", burst);
		CALLGRIND_DUMP_STATS_AT(name);
		printf("callgrind-case %s objects %" PRIu64 "\n", name, it * burst);

		CALLGRIND_ZERO_STATS;
		b1_cg_ring_proto(&b->prod->pub, b->proto_row[0], b->r, b->objs, out, burst, it);
		snprintf(name, sizeof(name), "b1.ring1.proto_emit_deq.b%u", burst);
		CALLGRIND_DUMP_STATS_AT(name);
		printf("callgrind-case %s objects %" PRIu64 "\n", name, it * burst);
	}
}

/* ---- main ---- */

int
main(int argc, char **argv)
{
	struct bench_opts o;
	struct b1 *b;
	struct b1_result res[RTE_DIM(b1_bursts) * B1_N_CASES], dres[RTE_DIM(b1_bursts) * D_COUNT];
	unsigned nres = 0, ndres = 0, lcores[2];
	struct bench_where where;
	double hz;
	int rc;

	rc = bench_init("b1", argc, argv, &o);
	if (rc != 0)
		return rc;
	b = rte_zmalloc("b1", sizeof(*b), RTE_CACHE_LINE_SIZE);
	if (b == NULL)
		return 1;
	hz = (double)rte_get_tsc_hz();

	if (o.cg_iters > 0) {
		b->lc_prod = b->lc_cons = rte_lcore_id();
		b1_build(b);
		b1_callgrind(b, o.cg_iters);
		rte_eal_cleanup();
		return 0;
	}

	b->cons_burst = o.cons_burst;
	if (bench_workers("b1", lcores, 2) < 0)
		return 77;
	b->lc_prod = lcores[0];
	b->lc_cons = lcores[1];
	bench_place(lcores, 2, o.rt, &where);
	b1_build(b);
	for (unsigned i = 0; i < 2; i++)
		bench_gate_calibrate_on(lcores[i], &b->gate[lcores[i]]);

	printf("B1 ring link: TSC %.1f MHz; producer lcore %u, consumer lcore %u; %s\n", hz / 1e6,
	       b->lc_prod, b->lc_cons, where.text);
	printf("consumers dequeue %s\n",
	       b->cons_burst ? "--cons-burst objects per turn (both raw and engine)"
			     : "the producer's burst (the same burst on both sides)");
	if (b->cons_burst)
		printf("--cons-burst %u\n", b->cons_burst);
	printf("ring %u slots SP/SC, %u repetitions of ~%.0f ms, interleaved; noise gate %.0f %% "
	       "(spin ~1 ms: lcore %u %.0f cycles, lcore %u %.0f cycles) and %.0f %% off-CPU; %s\n",
	       B1_RING_SIZE, o.reps, o.ms, BENCH_DRIFT_MAX * 100, b->lc_prod,
	       b->gate[b->lc_prod].ref, b->lc_cons, b->gate[b->lc_cons].ref, BENCH_OFFCPU_MAX * 100,
	       where.sched);
	fflush(stdout);

	/* cross lcore */
	for (unsigned k = 0; k < RTE_DIM(b1_bursts); k++) {
		unsigned burst = b1_bursts[k];
		double v[B1_N_CASES][BENCH_MAX_REPS], cpo;
		unsigned rej[B1_N_CASES] = {0}, noisy[B1_N_CASES] = {0};
		uint64_t nobj[B1_N_CASES];

		/* size each case's repetition to ~o.ms from a short run after a warm one */
		for (unsigned c = 0; c < B1_N_CASES; c++) {
			b1_cross_once(b, &b1_cases[c], burst, 65536 - 65536 % burst);
			cpo = b1_cross_once(b, &b1_cases[c], burst, 65536 - 65536 % burst);
			nobj[c] = (uint64_t)(o.ms * 1e-3 * hz / cpo);
			nobj[c] -= nobj[c] % burst;
			if (nobj[c] < 1024)
				nobj[c] = 1024 - 1024 % burst;
		}
		for (unsigned rep = 0; rep < o.reps; rep++)
			for (unsigned c = 0; c < B1_N_CASES; c++)
				v[c][rep] = b1_cross_rep(b, &b1_cases[c], burst, nobj[c], &rej[c],
							 &noisy[c]);
		for (unsigned c = 0; c < B1_N_CASES; c++) {
			struct b1_result *r = &res[nres++];
			double ratios[BENCH_MAX_REPS];

			r->group = "cross";
			r->name = b1_cases[c].name;
			r->label = b1_cases[c].label;
			r->burst = burst;
			r->rejected = rej[c];
			r->noisy = noisy[c];
			r->per_rep = nobj[c];
			bench_summarize(v[c], o.reps, &r->s);
			for (unsigned rep = 0; rep < o.reps; rep++)
				ratios[rep] = v[c][rep] / v[0][rep];
			r->ratio = c == 0 ? 0 : bench_median(ratios, o.reps);
			r->ratio_min = r->s.min / res[nres - 1 - c].s.min;
		}
	}

	/* same lcore */
	for (unsigned k = 0; k < RTE_DIM(b1_bursts); k++) {
		unsigned burst = b1_bursts[k];
		double v[D_COUNT][BENCH_MAX_REPS], ratios[BENCH_MAX_REPS], cpo;
		unsigned rej[D_COUNT] = {0}, noisy[D_COUNT] = {0}, dummy = 0;
		uint64_t it[D_COUNT];

		for (unsigned d = 0; d < D_COUNT; d++) {
			cpo = b1_direct_rep(b, d, burst, 100000, &dummy, &dummy) *
			      burst; /* per burst */
			it[d] = (uint64_t)(o.ms * 1e-3 * hz / cpo);
		}
		for (unsigned rep = 0; rep < o.reps; rep++)
			for (unsigned d = 0; d < D_COUNT; d++)
				v[d][rep] = b1_direct_rep(b, d, burst, it[d], &rej[d], &noisy[d]);
		for (unsigned d = 0; d < D_COUNT; d++) {
			struct b1_result *r = &dres[ndres++];

			r->group = "direct";
			r->name = b1_dname[d];
			r->label = b1_dlabel[d];
			r->burst = burst;
			r->rejected = rej[d];
			r->noisy = noisy[d];
			r->per_rep = it[d] * burst;
			bench_summarize(v[d], o.reps, &r->s);
			for (unsigned rep = 0; rep < o.reps; rep++)
				ratios[rep] = v[d][rep] / v[D_PLAIN][rep];
			r->ratio = d == D_PLAIN ? 0 : bench_median(ratios, o.reps);
			r->ratio_min = r->s.min / dres[ndres - 1 - d].s.min;
		}
	}

	/* the counters the engine keeps agree with what was sent: a ring link's
	 * out and in are read off the ring (lcp_ring_tally, as lcp_stage_ctr()
	 * does), nothing is added to the module's out.out / in.in for it */
	{
		uint64_t out = b->cops->read(b->prod->pub.ctrs, 0);
		uint64_t drops = b->cops->read(b->prod->pub.ctrs, 1);
		uint64_t in = b->cops->read(b->sink->pub.ctrs, 0);
		uint64_t enq, deq;

		lcp_ring_tally(&b->w->rins[0], &enq, &deq);
		printf("\ncounters: ring link out (read off the ring) %" PRIu64 ", in %" PRIu64
		       " (all producers sent %" PRIu64 ", the sink counted %" PRIu64
		       "); module out.out %" PRIu64 " (0: not added per burst), in.in %" PRIu64
		       " (only what the copy of the previous loop added), "
		       "out.drop_ring_full %" PRIu64 "; worker hwm %u\n",
		       enq, deq, b->sent, b->sctx->count, out, in, drops, b->w->rins[0].hwm);
		if (enq != b->sent || deq != b->sent || b->sctx->count != b->sent || out != 0 ||
		    drops != 0) {
			fprintf(stderr, "b1: counters disagree with what was sent\n");
			return 1;
		}
	}
	b1_table(res, nres,
		 "B1 cross-lcore link, ratio = median of per-repetition ratios to the raw rte_ring "
		 "anchor");
	b1_table(dres, ndres,
		 "B1 same-lcore link, ratio = median of per-repetition ratios to the plain call");
	{
		double d[RTE_DIM(b1_bursts)];

		printf("\nsame-lcore overhead over the plain call, cycles per burst (medians):");
		for (unsigned k = 0; k < RTE_DIM(b1_bursts); k++) {
			const struct b1_result *r = &dres[D_COUNT * k];

			d[k] = (r[D_EMIT].s.med - r[D_PLAIN].s.med) * b1_bursts[k];
			printf(" b%u lcp_emit %.1f, proto %.1f;", b1_bursts[k], d[k],
			       (r[D_PROTO].s.med - r[D_PLAIN].s.med) * b1_bursts[k]);
		}
		printf("\n\n");
	}
	b1_json(res, nres, hz, where.json, "raw_rte_ring_sp_sc", 1.1, o.reps, o.ms, o.cons_burst);
	b1_json(dres, ndres, hz, where.json, "plain_call", 0, o.reps, o.ms, 0);
	rte_eal_cleanup();
	return 0;
}
