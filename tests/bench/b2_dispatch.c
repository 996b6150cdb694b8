/* SPDX-License-Identifier: BSD-3-Clause
 * B2 — stage dispatch: N pass-through stages on one lcore, cycles per stage call.
 *
 * The engine's same-lcore dispatch, built from engine_priv.h as
 * lcp_engine_build() builds same-lcore links: a source stage (poll() emits `burst`
 * dummy pointers) -> N pass-through stages (process() = lcp_emit() on its output
 * port) -> a sink (process() counts). Every edge is same-lcore (lcp_edge.dst and
 * its input vector lcp_edge.pend), every stage has its counter set from the real
 * counters_percore plugin, so each hop costs what ABI 2.0's dispatch costs: the
 * emit (two counter adds, the pointers appended to the next stage's vector) and
 * the walk's indirect process() call on that vector.
 * N = 1, 4, 8, 16; bursts 1, 32, 256; N + 2 stage calls per burst.
 *
 * Variants, interleaved per repetition:
 *   graph        rte_graph walk of source -> N workers -> sink, the nodes of
 *                dpdk-test graph_perf_autotest, with DPDK's build setting
 *                (stats on: two rdtsc per node call) — the anchor
 *   graph_nostats the same walk compiled without stats
 *   lcp_chain    a bare loop: the source's poll() through its ops, then
 *                lcp_worker_walk() (the walk the worker runs every turn)
 *   lcp_worker   the engine's lcp_worker_main() with the source as poller (per-turn
 *                run-state load, rdtsc, stats stores included)
 *   call_chain   ABI 1.x's run to completion, for before / after in one run: the
 *                emit calls the next stage's process() from inside the current
 *                one (forced inline, counters added inline to a per-slot row)
 * Cycles per stage call = cycles / (bursts x (N + 2)); per object: / burst.
 * The marginal cost of one more stage is the slope between N = 1 and N = 16.
 *
 * Noise gate: a calibrated spin before and after each repetition (re-run when it
 * drifted more than 10 %), and a re-run when the lcore was off its CPU for more
 * than 5 % of the repetition (thread CPU time against wall time).
 *
 * Placement: --lcores=0@0,1@1 — everything measured on lcore 1 (CPU 1); the main
 * lcore sleeps on CPU 0. --callgrind ITERS: no timing, every case once between
 * CALLGRIND_ZERO_STATS and CALLGRIND_DUMP_STATS_AT (tests/bench/callgrind.sh).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "engine_priv.h"
#include "bench_util.h"
#include "b2_graph.h"

#define B2_NMAX 16

static const unsigned b2_ns[] = {1, 4, 8, 16};
static const unsigned b2_bursts[] = {1, 32, 256};

enum b2_variant { V_GRAPH, V_GRAPH_NOSTATS, V_CHAIN, V_WORKER, V_CALL, V_COUNT };
static const char *const b2_vname[V_COUNT] = {"graph", "graph_nostats", "lcp_chain", "lcp_worker",
					      "call_chain"};
static const char *const b2_vlabel[V_COUNT] = {
	"rte_graph walk, stats on (anchor)",	"rte_graph walk, stats off",
	"lcp chain (poll, lcp_worker_walk)",	"lcp chain in lcp_worker_main",
	"1.x: emit calls process() inside",
};

/* ---- stages ---- */

struct b2_src_ctx {
	void **objs;
	unsigned burst;
	uint64_t polls, limit;
	struct lcp_engine *eng;
};

struct b2_sink_ctx {
	uint64_t count __rte_cache_aligned;
};

/* flatten: lcp_emit() inlined, as in a plugin with one lcp_emit() call site
 * (with several, GCC -O2 emits it out of line: doc/benchmarks.md) */
static __attribute__((flatten)) unsigned
b2_src_poll(struct lcp_stage *st, void *ctx)
{
	struct b2_src_ctx *c = ctx;

	if (unlikely(++c->polls >= c->limit))
		__atomic_store_n(&c->eng->run_state, LCP_RUN_EXIT, __ATOMIC_RELEASE);
	lcp_emit(st, 0, c->objs, c->burst);
	return c->burst;
}

static __attribute__((flatten)) void
b2_pass_process(struct lcp_stage *st, void *ctx, unsigned port, void **objs, unsigned n)
{
	lcp_emit(st, 1, objs, n);
}

static void
b2_sink_process(struct lcp_stage *st, void *ctx, unsigned port, void **objs, unsigned n)
{
	struct b2_sink_ctx *c = ctx;

	__atomic_store_n(&c->count, c->count + n, __ATOMIC_RELAXED);
}

/* ---- ABI 1.x's run to completion: the emit calls the next process() ---- */

static void
b2_row_add(void *set, unsigned slot, unsigned idx, uint64_t v)
{
	((uint64_t *)set)[idx] += v;
}

static __attribute__((noinline, cold)) void
b2_call_emit_slow(struct lcp_stage *st, struct lcp_edge *e, void **objs, unsigned n)
{
	uint64_t *row = st->ctrs;

	if (e->ring != NULL) {
		unsigned k = rte_ring_sp_enqueue_burst(e->ring, objs, n, NULL);

		row[e->ctr_out] += k;
		objs += k;
		n -= k;
	}
	if (n > 0) {
		lcp_objs_free(e->unit, objs, n);
		row[e->ctr_drop] += n;
	}
}

static __rte_always_inline void
b2_call_emit(struct lcp_stage *st, unsigned port, void **objs, unsigned n)
{
	struct lcp_edge *e = &st->edges[port];
	struct lcp_stage *d = e->dst;

	if (likely(d != NULL)) {
		((uint64_t *)st->ctrs)[e->ctr_out] += n;
		((uint64_t *)d->ctrs)[e->dst_ctr_in] += n;
		d->ops->process(d, d->ctx, e->dst_port, objs, n);
	} else {
		b2_call_emit_slow(st, e, objs, n);
	}
}

static unsigned
b2_call_src_poll(struct lcp_stage *st, void *ctx)
{
	struct b2_src_ctx *c = ctx;

	if (unlikely(++c->polls >= c->limit))
		__atomic_store_n(&c->eng->run_state, LCP_RUN_EXIT, __ATOMIC_RELEASE);
	b2_call_emit(st, 0, c->objs, c->burst);
	return c->burst;
}

static void
b2_call_pass_process(struct lcp_stage *st, void *ctx, unsigned port, void **objs, unsigned n)
{
	b2_call_emit(st, 1, objs, n);
}

static int
b2_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	return 0;
}

static const struct lcp_port_def b2_src_ports[] = {
	{.name = "out", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_MSG},
	LCP_PORT_END,
};
static const struct lcp_port_def b2_pass_ports[] = {
	{.name = "in", .dir = LCP_PORT_IN, .unit = LCP_UNIT_MSG},
	{.name = "out", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_MSG},
	LCP_PORT_END,
};
static const struct lcp_port_def b2_sink_ports[] = {
	{.name = "in", .dir = LCP_PORT_IN, .unit = LCP_UNIT_MSG},
	LCP_PORT_END,
};
static const struct lcp_stage_ops b2_src_ops = {
	.ports = b2_src_ports, .init = b2_init, .poll = b2_src_poll};
static const struct lcp_stage_ops b2_pass_ops = {
	.ports = b2_pass_ports, .init = b2_init, .process = b2_pass_process};
static const struct lcp_stage_ops b2_sink_ops = {
	.ports = b2_sink_ports, .init = b2_init, .process = b2_sink_process};
static const struct lcp_stage_ops b2_call_src_ops = {
	.ports = b2_src_ports, .init = b2_init, .poll = b2_call_src_poll};
static const struct lcp_stage_ops b2_call_pass_ops = {
	.ports = b2_pass_ports, .init = b2_init, .process = b2_call_pass_process};

struct b2_chain {
	unsigned n;
	struct lcp_engine *eng;
	struct lcp_worker *w;
	struct lcp_stage_priv *st[B2_NMAX + 2];	 /* source, pass 1..n, sink */
	struct lcp_stage_priv *pst[B2_NMAX + 2]; /* the same, ABI 1.x call chain */
	struct b2_src_ctx *sctx, *psctx;
	struct b2_sink_ctx *kctx, *pkctx;
	struct rte_graph *g;
};

struct b2 {
	const struct lcp_counters_ops *cops;
	void *objs[LCP_BURST_MAX];
	struct b2_chain ch[RTE_DIM(b2_ns)];
	unsigned lc;
	struct bench_gate gate;
};

/* counter layout of engine.c build_counters(): per port "<p>.in" or
 * "<p>.out", "<p>.drop_ring_full", "<p>.drop_unlinked"; then "drop_shutdown" */
static struct lcp_stage_priv *
b2_stage(struct b2 *b, struct lcp_engine *e, const struct lcp_stage_ops *ops, void *ctx)
{
	struct lcp_stage_priv *sp = rte_zmalloc("lcp_stage", sizeof(*sp), RTE_CACHE_LINE_SIZE);
	const char *names[16];
	unsigned n = 0, k = 0;

	if (sp == NULL)
		exit(1);
	sp->edges = rte_zmalloc("lcp_edges", 3 * sizeof(struct lcp_edge), RTE_CACHE_LINE_SIZE);
	sp->ctr_in = calloc(3, sizeof(uint32_t));
	if (sp->edges == NULL || sp->ctr_in == NULL)
		exit(1);
	for (const struct lcp_port_def *p = ops->ports; p->name; p++, k++) {
		if (p->dir == LCP_PORT_IN) {
			sp->ctr_in[k] = n;
			names[n++] = "in.in";
		} else {
			sp->edges[k].ctr_out = n;
			sp->edges[k].ctr_drop = n + 2; /* drop_unlinked until linked */
			sp->edges[k].unit = p->unit;
			names[n++] = "out.out";
			names[n++] = "out.drop_ring_full";
			names[n++] = "out.drop_unlinked";
		}
	}
	sp->ctr_drop_shutdown = n;
	names[n++] = "drop_shutdown";
	sp->n_ctrs = n;
	sp->eng = e;
	sp->cops = b->cops;
	sp->pub.ops = ops;
	sp->pub.ctx = ctx;
	sp->pub.slot = 0;
	sp->pub.run_state = &e->run_state;
	sp->pub.priv = sp;
	sp->pub.edges = sp->edges;
	sp->pub.ctrs = b->cops->create(NULL, names, n, 2, (int)rte_socket_id());
	sp->pub.ctr_add = b->cops->add;
	/* as engine.c build_counters(): the strategy's row when it has one (ABI 1.1) */
	sp->pub.ctr_row = b->cops->row && sp->pub.ctrs ? b->cops->row(sp->pub.ctrs, sp->pub.slot) : NULL;
	if (sp->pub.ctrs == NULL)
		exit(1);
	return sp;
}

/* link src's output port `port` to dst's input port 0: a same-lcore edge, with
 * dst's input vector (the call chain's emit ignores it) */
static struct lcp_pend_q *
b2_link(struct lcp_stage_priv *src, unsigned port, struct lcp_stage_priv *dst)
{
	struct lcp_edge *ed = &src->edges[port];
	struct lcp_pend_q *q = lcp_pend_new(&dst->pub, 0, LCP_UNIT_MSG, (int)rte_socket_id());

	if (q == NULL)
		exit(1);
	q->process = dst->pub.ops->process;
	q->ctx = dst->pub.ctx;
	ed->dst = &dst->pub;
	ed->pend = &q->pub;
	ed->dst_port = 0;
	ed->dst_ctr_in = dst->ctr_in[0];
	return q;
}

static void
b2_build(struct b2 *b)
{
	b->cops = bench_counters_ops();
	for (unsigned i = 0; i < LCP_BURST_MAX; i++)
		b->objs[i] = (void *)(uintptr_t)(0x10000 + 64 * i); /* never dereferenced */
	if (b2_graph_register() < 0) {
		fprintf(stderr, "b2: cannot register rte_graph nodes\n");
		exit(1);
	}
	for (unsigned c = 0; c < RTE_DIM(b2_ns); c++) {
		struct b2_chain *ch = &b->ch[c];
		unsigned n = b2_ns[c];

		ch->n = n;
		ch->eng = rte_zmalloc("lcp_engine", sizeof(*ch->eng), RTE_CACHE_LINE_SIZE);
		ch->w = rte_zmalloc("lcp_workers", sizeof(*ch->w), RTE_CACHE_LINE_SIZE);
		ch->sctx = rte_zmalloc("b2_src", sizeof(*ch->sctx), RTE_CACHE_LINE_SIZE);
		ch->kctx = rte_zmalloc("b2_sink", sizeof(*ch->kctx), RTE_CACHE_LINE_SIZE);
		if (ch->eng == NULL || ch->w == NULL || ch->sctx == NULL || ch->kctx == NULL)
			exit(1);
		ch->eng->tsc_hz = rte_get_tsc_hz();
		ch->sctx->objs = b->objs;
		ch->sctx->eng = ch->eng;
		ch->sctx->limit = UINT64_MAX;
		ch->st[0] = b2_stage(b, ch->eng, &b2_src_ops, ch->sctx);
		for (unsigned i = 1; i <= n; i++)
			ch->st[i] = b2_stage(b, ch->eng, &b2_pass_ops, NULL);
		ch->st[n + 1] = b2_stage(b, ch->eng, &b2_sink_ops, ch->kctx);
		/* the worker: every stage on it, the source as its only poller, the
		 * input vectors in chain order (what plan_walk() finds) */
		ch->w->pends = calloc(n + 1, sizeof(*ch->w->pends));
		if (ch->w->pends == NULL)
			exit(1);
		ch->w->pends[0] = b2_link(ch->st[0], 0, ch->st[1]);
		for (unsigned i = 1; i <= n; i++)
			ch->w->pends[i] = b2_link(ch->st[i], 1, ch->st[i + 1]);
		ch->w->n_pends = n + 1;
		ch->w->eng = ch->eng;
		ch->w->slot = 0;
		ch->w->stages = calloc(n + 2, sizeof(*ch->w->stages));
		ch->w->pollers = calloc(1, sizeof(*ch->w->pollers));
		for (unsigned i = 0; i < n + 2; i++)
			ch->w->stages[i] = &ch->st[i]->pub;
		ch->w->n_stages = n + 2;
		ch->w->pollers[0] = &ch->st[0]->pub;
		ch->w->n_pollers = 1;
		/* the 1.x call chain: same stages, row counters, process() called inside the emit */
		ch->psctx = rte_zmalloc("b2_src", sizeof(*ch->psctx), RTE_CACHE_LINE_SIZE);
		ch->pkctx = rte_zmalloc("b2_sink", sizeof(*ch->pkctx), RTE_CACHE_LINE_SIZE);
		if (ch->psctx == NULL || ch->pkctx == NULL)
			exit(1);
		*ch->psctx = *ch->sctx;
		ch->pst[0] = b2_stage(b, ch->eng, &b2_call_src_ops, ch->psctx);
		for (unsigned i = 1; i <= n; i++)
			ch->pst[i] = b2_stage(b, ch->eng, &b2_call_pass_ops, NULL);
		ch->pst[n + 1] = b2_stage(b, ch->eng, &b2_sink_ops, ch->pkctx);
		for (unsigned i = 0; i < n + 2; i++) {
			b->cops->destroy(ch->pst[i]->pub.ctrs);
			ch->pst[i]->pub.ctrs =
				rte_zmalloc("b2_row", RTE_CACHE_LINE_SIZE, RTE_CACHE_LINE_SIZE);
			ch->pst[i]->pub.ctr_add = b2_row_add;
			ch->pst[i]->pub.ctr_row = ch->pst[i]->pub.ctrs; /* the same plain row */
			if (ch->pst[i]->pub.ctrs == NULL)
				exit(1);
		}
		b2_link(ch->pst[0], 0, ch->pst[1]);
		for (unsigned i = 1; i <= n; i++)
			b2_link(ch->pst[i], 1, ch->pst[i + 1]);
		ch->g = b2_graph_create(n);
		if (ch->g == NULL)
			exit(1);
	}
}

/* ---- runs ---- */

static __attribute__((noinline)) uint64_t
b2_drive_chain(struct lcp_stage *src, struct lcp_worker *w, uint64_t bursts)
{
	uint64_t t0 = rte_rdtsc_precise();

	for (uint64_t i = 0; i < bursts; i++) {
		src->ops->poll(src, src->ctx);
		if (w != NULL)
			lcp_worker_walk(w);
	}
	return rte_rdtsc_precise() - t0;
}

static __attribute__((noinline)) uint64_t
b2_drive_worker(struct b2_chain *ch, uint64_t bursts)
{
	uint64_t t0;

	ch->sctx->polls = 0;
	ch->sctx->limit = bursts;
	__atomic_store_n(&ch->eng->run_state, LCP_RUN_RUNNING, __ATOMIC_RELEASE);
	t0 = rte_rdtsc_precise();
	lcp_worker_main(ch->w);
	t0 = rte_rdtsc_precise() - t0;
	ch->sctx->limit = UINT64_MAX;
	return t0;
}

static uint64_t
b2_run(struct b2_chain *ch, enum b2_variant v, unsigned burst, uint64_t bursts)
{
	ch->sctx->burst = burst;
	ch->psctx->burst = burst;
	b2_graph_set_burst(ch->g, ch->n, burst);
	switch (v) {
	case V_GRAPH:
		return b2_graph_walk_stats(ch->g, bursts);
	case V_GRAPH_NOSTATS:
		return b2_graph_walk_nostats(ch->g, bursts);
	case V_CHAIN:
		return b2_drive_chain(&ch->st[0]->pub, ch->w, bursts);
	case V_WORKER:
		return b2_drive_worker(ch, bursts);
	case V_CALL:
		return b2_drive_chain(&ch->pst[0]->pub, NULL, bursts);
	default:
		abort();
	}
}

struct b2_job {
	struct b2 *b;
	struct b2_chain *ch;
	enum b2_variant v;
	unsigned burst;
	uint64_t bursts;
	uint64_t cycles, spin_before, spin_after;
	double offcpu;
};

static int
b2_job_main(void *arg)
{
	struct b2_job *j = arg;
	struct bench_oncpu oc;

	j->spin_before = bench_spin(j->b->gate.iters);
	bench_oncpu_start(&oc);
	j->cycles = b2_run(j->ch, j->v, j->burst, j->bursts);
	j->offcpu = bench_oncpu_offcpu(&oc);
	j->spin_after = bench_spin(j->b->gate.iters);
	return 0;
}

/* one gated repetition: cycles per stage call */
static double
b2_rep(struct b2 *b, struct b2_chain *ch, enum b2_variant v, unsigned burst, uint64_t bursts,
       unsigned *rejected, unsigned *noisy)
{
	struct b2_job j = {.b = b, .ch = ch, .v = v, .burst = burst, .bursts = bursts};

	for (unsigned t = 0;; t++) {
		bool ok;

		bench_launch(b->lc, b2_job_main, &j);
		bench_wait();
		ok = bench_gate_ok(&b->gate, j.spin_before, j.spin_after, j.offcpu);
		if (!ok && getenv("BENCH_DEBUG"))
			fprintf(stderr,
				"b2: %s n%u b%u rejected: spin drift %.3f/%.3f, off-CPU %.4f\n",
				b2_vname[v], ch->n, burst,
				bench_gate_drift(&b->gate, j.spin_before),
				bench_gate_drift(&b->gate, j.spin_after), j.offcpu);
		if (bench_rep_kept(ok, t, BENCH_RERUNS_MAX, rejected, noisy))
			return (double)j.cycles / ((double)bursts * (ch->n + 2));
	}
}

/* ---- callgrind ---- */

static void
b2_callgrind(struct b2 *b, uint64_t it)
{
	char name[64];

	for (unsigned k = 0; k < RTE_DIM(b2_bursts); k++)
		for (unsigned c = 0; c < RTE_DIM(b2_ns); c++)
			for (unsigned v = 0; v < V_COUNT; v++) {
				struct b2_chain *ch = &b->ch[c];

				b2_run(ch, v, b2_bursts[k], 64); /* warm */
				CALLGRIND_ZERO_STATS;
				b2_run(ch, v, b2_bursts[k], it);
				snprintf(name, sizeof(name), "b2.%s.n%u.b%u", b2_vname[v], ch->n,
					 b2_bursts[k]);
				CALLGRIND_DUMP_STATS_AT(name);
				printf("callgrind-case %s objects %" PRIu64 " calls %" PRIu64 "\n",
				       name, it * b2_bursts[k], it * (ch->n + 2));
			}
}

/* ---- main ---- */

struct b2_res {
	unsigned burst, n;
	enum b2_variant v;
	struct bench_summary s; /* cycles per stage call */
	double ratio, ratio_nostats;
	unsigned rejected, noisy;
	uint64_t bursts;
};

int
main(int argc, char **argv)
{
	static struct b2_res res[RTE_DIM(b2_bursts) * RTE_DIM(b2_ns) * V_COUNT];
	struct bench_opts o;
	struct b2 *b;
	unsigned nres = 0;
	struct bench_where where;
	double hz;
	int rc;

	rc = bench_init("b2", argc, argv, &o);
	if (rc != 0)
		return rc;
	b = rte_zmalloc("b2", sizeof(*b), RTE_CACHE_LINE_SIZE);
	if (b == NULL)
		return 1;
	hz = (double)rte_get_tsc_hz();
	b2_build(b);

	if (o.cg_iters > 0) {
		b2_callgrind(b, o.cg_iters);
		rte_eal_cleanup();
		return 0;
	}

	if (bench_workers("b2", &b->lc, 1) < 0)
		return 77;
	bench_place(&b->lc, 1, o.rt, &where);
	bench_gate_calibrate_on(b->lc, &b->gate);
	printf("B2 stage dispatch: TSC %.1f MHz; measured on lcore %u; %s\n", hz / 1e6, b->lc,
	       where.text);
	printf("%u repetitions of ~%.0f ms, interleaved; noise gate %.0f %% (spin ~1 ms: %.0f "
	       "cycles) "
	       "and %.0f %% off-CPU; %s; RTE_GRAPH_BURST_SIZE %u\n",
	       o.reps, o.ms, BENCH_DRIFT_MAX * 100, b->gate.ref, BENCH_OFFCPU_MAX * 100,
	       where.sched, RTE_GRAPH_BURST_SIZE);
	fflush(stdout);

	for (unsigned k = 0; k < RTE_DIM(b2_bursts); k++) {
		unsigned burst = b2_bursts[k];

		for (unsigned c = 0; c < RTE_DIM(b2_ns); c++) {
			struct b2_chain *ch = &b->ch[c];
			double v[V_COUNT][BENCH_MAX_REPS], per_call;
			unsigned rej[V_COUNT] = {0}, noisy[V_COUNT] = {0}, dummy = 0;
			uint64_t bursts[V_COUNT];

			/* size each variant's repetition to ~o.ms from a short warm run */
			for (unsigned x = 0; x < V_COUNT; x++) {
				per_call = b2_rep(b, ch, x, burst, 4096, &dummy, &dummy);
				bursts[x] = (uint64_t)(o.ms * 1e-3 * hz / (per_call * (ch->n + 2)));
				if (bursts[x] < 1000)
					bursts[x] = 1000;
			}
			for (unsigned rep = 0; rep < o.reps; rep++)
				for (unsigned x = 0; x < V_COUNT; x++)
					v[x][rep] = b2_rep(b, ch, x, burst, bursts[x], &rej[x],
							   &noisy[x]);
			for (unsigned x = 0; x < V_COUNT; x++) {
				struct b2_res *r = &res[nres++];
				double ra[BENCH_MAX_REPS], rn[BENCH_MAX_REPS];

				r->burst = burst;
				r->n = ch->n;
				r->v = x;
				r->rejected = rej[x];
				r->noisy = noisy[x];
				r->bursts = bursts[x];
				bench_summarize(v[x], o.reps, &r->s);
				for (unsigned rep = 0; rep < o.reps; rep++) {
					ra[rep] = v[x][rep] / v[V_GRAPH][rep];
					rn[rep] = v[x][rep] / v[V_GRAPH_NOSTATS][rep];
				}
				r->ratio = bench_median(ra, o.reps);
				r->ratio_nostats = bench_median(rn, o.reps);
			}
		}
	}

	/* the engine's counters agree with the sinks */
	for (unsigned c = 0; c < RTE_DIM(b2_ns); c++) {
		struct b2_chain *ch = &b->ch[c];
		uint64_t in = b->cops->read(ch->st[ch->n + 1]->pub.ctrs, 0);

		uint64_t pin = ((uint64_t *)ch->pst[ch->n + 1]->pub.ctrs)[0];

		if (in != ch->kctx->count || pin != ch->pkctx->count) {
			fprintf(stderr, "b2: N=%u sink in.in %" PRIu64 " != count %" PRIu64 "\n",
				ch->n, in, ch->kctx->count);
			return 1;
		}
	}

	printf("\nB2 cycles per stage call (per node call for rte_graph); N + 2 calls per burst;\n"
	       "ratio = median of per-repetition ratios to rte_graph stats on / stats off\n");
	printf("%5s %3s %-36s %8s %8s %8s %8s %9s %7s %7s %4s\n", "burst", "N", "variant", "min",
	       "median", "q1", "q3", "per obj", "ratio", "r.nost", "rej");
	for (unsigned i = 0; i < nres; i++) {
		struct b2_res *r = &res[i];

		printf("%5u %3u %-36s %8.2f %8.2f %8.2f %8.2f %9.4f %7.3f %7.3f %4u%s\n", r->burst,
		       r->n, b2_vlabel[r->v], r->s.min, r->s.med, r->s.q1, r->s.q3,
		       r->s.med / r->burst, r->ratio, r->ratio_nostats, r->rejected,
		       r->noisy ? " noisy" : "");
	}

	/* marginal cost of one more stage: slope of cycles per burst, N = 1 -> 16 */
	printf("\nB2 marginal cycles per added stage (slope N=1 -> N=%u, cycles per burst / 15)\n",
	       b2_ns[RTE_DIM(b2_ns) - 1]);
	printf("%5s", "burst");
	for (unsigned x = 0; x < V_COUNT; x++)
		printf(" %16s", b2_vname[x]);
	printf(" %12s %12s\n", "chain/graph", "chain/nost");
	for (unsigned k = 0; k < RTE_DIM(b2_bursts); k++) {
		double slope[V_COUNT];
		unsigned n1 = b2_ns[0], n16 = b2_ns[RTE_DIM(b2_ns) - 1];

		for (unsigned x = 0; x < V_COUNT; x++) {
			double c1 = 0, c16 = 0;

			for (unsigned i = 0; i < nres; i++) {
				if (res[i].burst != b2_bursts[k] || res[i].v != x)
					continue;
				if (res[i].n == n1)
					c1 = res[i].s.med * (n1 + 2);
				if (res[i].n == n16)
					c16 = res[i].s.med * (n16 + 2);
			}
			slope[x] = (c16 - c1) / (n16 - n1);
		}
		printf("%5u", b2_bursts[k]);
		for (unsigned x = 0; x < V_COUNT; x++)
			printf(" %16.2f", slope[x]);
		printf(" %12.3f %12.3f\n", slope[V_CHAIN] / slope[V_GRAPH],
		       slope[V_CHAIN] / slope[V_GRAPH_NOSTATS]);
		printf("{\"bench\":\"B2\",\"case\":\"marginal_stage\",\"burst\":%u,\"unit\":"
		       "\"cycles/stage-call\","
		       "\"tsc_hz\":%.0f,\"graph\":%.3f,\"graph_nostats\":%.3f,\"lcp_chain\":%.3f,"
		       "\"lcp_worker\":%.3f,\"call_chain\":%.3f,\"chain_over_graph\":%.4f,"
		       "\"chain_over_graph_nostats\":%.4f,\"placement\":%s}\n",
		       b2_bursts[k], hz, slope[V_GRAPH], slope[V_GRAPH_NOSTATS], slope[V_CHAIN],
		       slope[V_WORKER], slope[V_CALL], slope[V_CHAIN] / slope[V_GRAPH],
		       slope[V_CHAIN] / slope[V_GRAPH_NOSTATS], where.json);
	}
	printf("\n");
	for (unsigned i = 0; i < nres; i++) {
		struct b2_res *r = &res[i];

		printf("{\"bench\":\"B2\",\"case\":\"%s\",\"n_stages\":%u,\"burst\":%u,"
		       "\"unit\":\"cycles/"
		       "stage-call\",\"calls_per_burst\":%u,\"tsc_hz\":%.0f,\"reps\":%u,"
		       "\"rep_ms\":%.0f,\"bursts_per_rep\":%" PRIu64 ",\"min\":%.3f,\"q1\":%.3f,"
		       "\"median\":%.3f,\"q3\":%.3f,\"iqr\":%.3f,\"max\":%.3f,"
		       "\"median_per_object\":%.5f,\"anchor\":\"graph\",\"ratio_median_of_pairs\":%"
		       ".4f,"
		       "\"ratio_vs_graph_nostats\":%.4f",
		       b2_vname[r->v], r->n, r->burst, r->n + 2, hz, o.reps, o.ms, r->bursts,
		       r->s.min, r->s.q1, r->s.med, r->s.q3, r->s.q3 - r->s.q1, r->s.max,
		       r->s.med / r->burst, r->ratio, r->ratio_nostats);
		if (r->v == V_CHAIN || r->v == V_WORKER)
			printf(",\"target_ratio\":2.0,\"target_met\":%s,\"target_met_vs_graph_"
			       "nostats\":%s",
			       r->ratio <= 2.0 ? "true" : "false",
			       r->ratio_nostats <= 2.0 ? "true" : "false");
		printf(",\"gate_reruns\":%u,\"gate_noisy\":%u,\"placement\":%s}\n", r->rejected,
		       r->noisy, where.json);
	}
	rte_eal_cleanup();
	return 0;
}
