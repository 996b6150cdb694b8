/* SPDX-License-Identifier: BSD-3-Clause
 * B4 — pool strategies: cycles per object, one module setting per process.
 *
 * BENCHMARKS.md rule 8 (allocators: a fresh process per allocator setting, warm-up
 * first) is why this program measures ONE setting — a pool module with its
 * options — and b4.sh runs it once per setting per round, rotating the order
 * (ABAB...) over >= 9 rounds, and compares the settings round by round
 * (tests/bench/b4_summary.py). glibc's state (arenas, tcache, thresholds set by
 * mallopt) and DPDK's heap then never carry over from one setting to another.
 *
 * The module is loaded as the engine loads it: the build tree's .so through the
 * registry (lcp_registry_get), options filled by the option walker from
 * --options JSON; the stage-side calls are the SDK's lcp_pool_get_bulk /
 * lcp_pool_put_bulk inlines on a struct lcp_pool built as the engine builds it
 * (an indirect call into the module, the failed-get counter). Objects are not
 * written: the figures are the allocator's own cost.
 *
 * Patterns, at obj_size 512, 1400 and 2048 B, pools of 4096 objects:
 *   keep1      lcore 1: get 1, put 1                         cycles / object
 *   keepburst  lcore 1: get 32, put 32                       cycles / object
 *   xlcore32   lcore 1 gets 32 and enqueues them on an SP/SC rte_ring of 1024;
 *              lcore 2 dequeues up to 32 and puts them back   elapsed cycles on
 *              lcore 1 until lcore 2 has put back every object / objects
 *   xlcore1    the same with bursts of 1
 * In xlcore a get that finds the pool empty (every object in the ring or in
 * lcore 2's cache) is retried; the retries are reported.
 *
 * Per case: a warm-up of 3 x --ms (its first part sizes the repetitions to about
 * --ms each), then --reps measured repetitions, each between two runs of the
 * calibrated spin loop on every lcore involved; a repetition whose spin drifted
 * more than 10 %, or whose lcore was preempted (an involuntary context switch)
 * and off-CPU more than 5 % of the time, is re-run (at most 5 times, then kept
 * and counted noisy). Off-CPU time without preemption is the allocator going to
 * sleep (glibc's arena lock is a futex): that is its cost, kept, and reported
 * as voluntary context switches ("sleeps") per 1000 objects. The process prints
 * every repetition and their median; b4.sh takes the median as the round's value.
 *
 * --callgrind ITERS: no timing, no second lcore; keep1 and keepburst at each size
 * on the main lcore, ITERS objects each, between CALLGRIND_ZERO_STATS and
 * CALLGRIND_DUMP_STATS_AT("b4.<setting>.<pattern>.s<size>").
 *
 * Usage: b4_pools EAL-args -- --setting NAME --module PLUGIN [--options JSON]
 *        [--reps N] [--ms M] [--rt] [--callgrind ITERS] [--quick]
 * Placement: --lcores=0@0,1@1,2@0 (main lcore asleep on CPU 0, lcore 1 on CPU 1,
 * lcore 2 on CPU 0).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include <lcp/pool.h>

#include "lcp_priv.h"
#include "bench_util.h"

#define B4_POOL_N 4096
#define B4_RING_SIZE 1024 /* the engine's default engine.ring_size */
#define B4_BURST 32

static const unsigned b4_sizes[] = {512, 1400, 2048};

enum b4_pattern { P_KEEP1, P_KEEPBURST, P_XLCORE32, P_XLCORE1, P_COUNT };
static const char *const b4_pname[P_COUNT] = {"keep1", "keepburst", "xlcore32", "xlcore1"};
static const unsigned b4_pburst[P_COUNT] = {1, B4_BURST, B4_BURST, 1};

/* A measured thread's context switches (getrusage RUSAGE_THREAD): voluntary =
 * it slept (a futex in glibc's arena lock, a syscall), involuntary = it was
 * preempted. Off-CPU time with no involuntary switch is the allocator's own
 * (it went to sleep): part of the measurement, not noise. */
struct b4_csw {
	long vol, invol;
};

static void
b4_csw_mark(struct b4_csw *c, int sign)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	c->vol += sign * ru.ru_nvcsw;
	c->invol += sign * ru.ru_nivcsw;
}

struct b4 {
	const char *setting, *module, *options;
	const struct lcp_plugin *desc;
	void *conf;
	unsigned lc1, lc2;
	struct lcp_pool pool[RTE_DIM(b4_sizes)];
	struct rte_ring *r;
	struct bench_gate gate[RTE_MAX_LCORE];
	/* the repetition being run */
	struct lcp_pool *p;
	enum b4_pattern pat;
	uint64_t nobj;
	uint64_t cycles;
	uint64_t retries;
	uint64_t consumed; /* by lcore 2, total */
	uint64_t target;
	volatile uint32_t cons_ready, stop;
	uint64_t spin_before[2], spin_after[2];
	double offcpu[2];
	struct b4_csw csw[2]; /* context switches during the repetition, per lcore */
};

/* ---- the module ---- */

static void
b4_load(struct b4 *b)
{
	static struct lcp_registry reg;
	struct lcp_errs errs = {0};
	struct lcp_plugin_file *pf;
	char dir[1024];
	const char *dirs[] = {dir};
	json_t *opts = NULL, *keep = json_array();

	snprintf(dir, sizeof(dir), "%s/plugins/%s/.libs", BENCH_TOP_BUILDDIR, b->module);
	lcp_registry_init(&reg, dirs, 1);
	pf = lcp_registry_get(&reg, b->module, NULL);
	if (pf == NULL || pf->kind != LCP_KIND_POOL) {
		fprintf(stderr, "b4: pool module %s not found in %s\n", b->module, dir);
		exit(1);
	}
	b->desc = pf->desc;
	b->conf = calloc(1, b->desc->conf_size + 1);
	if (b->options != NULL && (opts = json_loads(b->options, 0, NULL)) == NULL) {
		fprintf(stderr, "b4: --options is not JSON: %s\n", b->options);
		exit(2);
	}
	lcp_opt_apply(b->desc->options, b->desc->conf_size, opts, b->conf, "options", &errs, keep);
	if (errs.n > 0) {
		fprintf(stderr, "b4: %s: %s\n", b->module, errs.v[0]);
		exit(2);
	}
}

/* as the engine's lcp_pool_create() fills struct lcp_pool */
static void
b4_pool(struct b4 *b, struct lcp_pool *p, size_t size)
{
	const struct lcp_pool_ops *ops = b->desc->ops;

	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "b4_%zu", size);
	p->pool = ops->create(b->conf, p->name, size, B4_POOL_N, 0, (int)rte_socket_id());
	if (p->pool == NULL) {
		fprintf(stderr, "b4: %s create(%zu B x %u): %s\n", b->module, size, B4_POOL_N,
			strerror(errno));
		exit(1);
	}
	p->ops = ops;
	p->get_bulk = ops->get_bulk;
	p->put_bulk = ops->put_bulk;
	p->obj_size = size;
	p->n = B4_POOL_N;
	p->module = b->module;
}

/* ---- one lcore: keep1, keepburst ---- */

static __attribute__((noinline)) uint64_t
b4_keep(struct lcp_pool *p, unsigned burst, uint64_t it)
{
	void *o[B4_BURST];
	uint64_t t0 = rte_rdtsc_precise();

	for (uint64_t i = 0; i < it; i++) {
		if (unlikely(lcp_pool_get_bulk(p, o, burst) != 0))
			continue; /* counted in p->get_fail, reported */
		lcp_pool_put_bulk(p, o, burst);
	}
	return rte_rdtsc_precise() - t0;
}

/* the measured window of lane i (0: the only or producing lcore, 1: the
 * consuming one): its context switches and off-CPU share over it */
static void
b4_window_open(struct b4 *b, unsigned i, struct bench_oncpu *oc)
{
	b4_csw_mark(&b->csw[i], -1);
	bench_oncpu_start(oc);
}

static void
b4_window_close(struct b4 *b, unsigned i, const struct bench_oncpu *oc)
{
	b->offcpu[i] = bench_oncpu_offcpu(oc);
	b4_csw_mark(&b->csw[i], 1);
}

static int
b4_keep_main(void *arg)
{
	struct b4 *b = arg;
	const struct bench_gate *g = &b->gate[rte_lcore_id()];
	struct bench_oncpu oc;

	b->spin_before[0] = bench_spin(g->iters);
	b4_window_open(b, 0, &oc);
	b->cycles = b4_keep(b->p, b4_pburst[b->pat], b->nobj / b4_pburst[b->pat]);
	b4_window_close(b, 0, &oc);
	b->spin_after[0] = bench_spin(g->iters);
	return 0;
}

/* ---- two lcores: xlcore ---- */

static __attribute__((noinline)) uint64_t
b4_produce(struct b4 *b, struct lcp_pool *p, struct rte_ring *r, unsigned burst, uint64_t nb)
{
	void *o[B4_BURST];
	uint64_t retries = 0;

	for (uint64_t i = 0; i < nb; i++) {
		while (unlikely(lcp_pool_get_bulk(p, o, burst) != 0)) {
			retries++;
			rte_pause();
		}
		while (rte_ring_free_count(r) < burst)
			rte_pause();
		if (unlikely(rte_ring_sp_enqueue_bulk(r, o, burst, NULL) == 0))
			abort(); /* room was checked: one producer */
	}
	return retries;
}

static int
b4_prod_main(void *arg)
{
	struct b4 *b = arg;
	const struct bench_gate *g = &b->gate[rte_lcore_id()];
	unsigned burst = b4_pburst[b->pat];
	struct bench_oncpu oc;
	uint64_t t0;

	b->spin_before[0] = bench_spin(g->iters);
	while (!b->cons_ready)
		rte_pause();
	b4_window_open(b, 0, &oc);
	t0 = rte_rdtsc_precise();
	b->retries = b4_produce(b, b->p, b->r, burst, b->nobj / burst);
	while (__atomic_load_n(&b->consumed, __ATOMIC_ACQUIRE) < b->target)
		rte_pause();
	b->cycles = rte_rdtsc_precise() - t0;
	b4_window_close(b, 0, &oc);
	__atomic_store_n(&b->stop, 1, __ATOMIC_RELEASE);
	b->spin_after[0] = bench_spin(g->iters);
	return 0;
}

static __attribute__((noinline)) void
b4_consume(struct b4 *b, struct lcp_pool *p, struct rte_ring *r, unsigned burst)
{
	void *o[B4_BURST];

	while (!__atomic_load_n(&b->stop, __ATOMIC_ACQUIRE)) {
		unsigned n = rte_ring_sc_dequeue_burst(r, o, burst, NULL);

		if (n == 0) {
			rte_pause();
			continue;
		}
		lcp_pool_put_bulk(p, o, n);
		__atomic_store_n(&b->consumed, b->consumed + n, __ATOMIC_RELEASE);
	}
}

static int
b4_cons_main(void *arg)
{
	struct b4 *b = arg;
	const struct bench_gate *g = &b->gate[rte_lcore_id()];
	struct bench_oncpu oc;

	b->spin_before[1] = bench_spin(g->iters);
	b4_window_open(b, 1, &oc);
	b->cons_ready = 1;
	b4_consume(b, b->p, b->r, b4_pburst[b->pat]);
	b4_window_close(b, 1, &oc);
	b->spin_after[1] = bench_spin(g->iters);
	return 0;
}

/* one repetition, spin loops included: cycles per object; *ok = the gate passed */
static double
b4_once(struct b4 *b, struct lcp_pool *p, enum b4_pattern pat, uint64_t nobj, bool *ok)
{
	bool two = pat == P_XLCORE32 || pat == P_XLCORE1;
	double d = 0;

	b->p = p;
	b->pat = pat;
	b->nobj = nobj - nobj % b4_pburst[pat];
	b->retries = 0;
	memset(b->offcpu, 0, sizeof(b->offcpu));
	memset(b->csw, 0, sizeof(b->csw));
	if (!two) {
		bench_launch(b->lc1, b4_keep_main, b);
		bench_wait();
	} else {
		b->cons_ready = 0;
		b->stop = 0;
		b->target = b->consumed + b->nobj;
		/* the producer first: lcore 2 shares CPU 0 with this (main) thread and,
		 * under SCHED_FIFO, would keep it off the CPU until the kernel's RT
		 * throttling stepped in (~50 ms) before it could launch lcore 1 */
		bench_launch(b->lc1, b4_prod_main, b);
		bench_launch(b->lc2, b4_cons_main, b);
		bench_wait();
		if (rte_ring_count(b->r) != 0) {
			fprintf(stderr, "b4: ring not empty after a repetition\n");
			exit(1);
		}
	}
	for (unsigned i = 0; i < (two ? 2u : 1u); i++) {
		const struct bench_gate *g = &b->gate[i ? b->lc2 : b->lc1];
		double x = bench_gate_drift(g, b->spin_before[i]);
		double y = bench_gate_drift(g, b->spin_after[i]);

		if (x > d)
			d = x;
		if (y > d)
			d = y;
	}
	/* off-CPU counts as noise only when the thread was preempted */
	*ok = d <= BENCH_DRIFT_MAX &&
	      (b->offcpu[0] <= BENCH_OFFCPU_MAX || b->csw[0].invol == 0) &&
	      (b->offcpu[1] <= BENCH_OFFCPU_MAX || b->csw[1].invol == 0);
	if (!*ok && getenv("BENCH_DEBUG"))
		fprintf(stderr,
			"b4: %s %s s%zu rejected: spin drift %.3f, off-CPU %.4f/%.4f, "
			"switches vol %ld/%ld invol %ld/%ld\n",
			b->setting, b4_pname[pat], p->obj_size, d, b->offcpu[0], b->offcpu[1],
			b->csw[0].vol, b->csw[1].vol, b->csw[0].invol, b->csw[1].invol);
	/* nothing may be left out: every pattern puts back what it took */
	if (p->ops->in_use(p->pool) != 0) {
		fprintf(stderr, "b4: %s: %u objects still out after %s\n", b->setting,
			p->ops->in_use(p->pool), b4_pname[pat]);
		exit(1);
	}
	return (double)b->cycles / (double)b->nobj;
}

/* ---- callgrind ---- */

static void
b4_callgrind(struct b4 *b, uint64_t it)
{
	char name[96];

	for (unsigned k = 0; k < RTE_DIM(b4_sizes); k++) {
		struct lcp_pool *p = &b->pool[k];

		for (enum b4_pattern pat = P_KEEP1; pat <= P_KEEPBURST; pat++) {
			unsigned burst = b4_pburst[pat];

			b4_keep(p, burst, 1000); /* warm */
			CALLGRIND_ZERO_STATS;
			b4_keep(p, burst, it / burst);
			snprintf(name, sizeof(name), "b4.%s.%s.s%u", b->setting, b4_pname[pat],
				 b4_sizes[k]);
			CALLGRIND_DUMP_STATS_AT(name);
			printf("callgrind-case %s objects %" PRIu64 " get_fail %" PRIu64 "\n", name,
			       it / burst * burst, p->get_fail);
		}
	}
}

/* ---- main ---- */

/* take --setting, --module, --options out of argv (the rest is bench_parse_opts') */
static int
b4_own_opts(struct b4 *b, int *argc, char **argv)
{
	int j = 1;

	for (int i = 1; i < *argc; i++) {
		const char **dst = strcmp(argv[i], "--setting") == 0   ? &b->setting
				   : strcmp(argv[i], "--module") == 0  ? &b->module
				   : strcmp(argv[i], "--options") == 0 ? &b->options
								       : NULL;

		if (dst != NULL) {
			if (i + 1 >= *argc)
				return -1;
			*dst = argv[++i];
			continue;
		}
		argv[j++] = argv[i];
	}
	*argc = j;
	argv[j] = NULL;
	return b->module != NULL ? 0 : -1;
}

int
main(int argc, char **argv)
{
	struct bench_opts o;
	struct b4 *b;
	unsigned lcores[2];
	struct bench_where where;
	double hz;
	int n, rest;

	n = rte_eal_init(argc, argv);
	if (n < 0) {
		fprintf(stderr, "b4: EAL init failed\n");
		return 1;
	}
	b = rte_zmalloc("b4", sizeof(*b), RTE_CACHE_LINE_SIZE);
	if (b == NULL)
		return 1;
	rest = argc - n;
	if (b4_own_opts(b, &rest, argv + n) < 0) {
		fprintf(stderr, "usage: %s EAL-args -- --setting NAME --module PLUGIN "
				"[--options JSON] [--reps N] [--ms M] [--rt] [--callgrind ITERS]\n",
			argv[0]);
		return 2;
	}
	if (b->setting == NULL)
		b->setting = b->module;
	if (bench_parse_opts(rest, argv + n, &o) < 0)
		return 2;
	hz = (double)rte_get_tsc_hz();
	b4_load(b);
	for (unsigned k = 0; k < RTE_DIM(b4_sizes); k++)
		b4_pool(b, &b->pool[k], b4_sizes[k]);

	if (o.cg_iters > 0) {
		b4_callgrind(b, o.cg_iters);
		for (unsigned k = 0; k < RTE_DIM(b4_sizes); k++)
			b->pool[k].ops->destroy(b->pool[k].pool);
		rte_eal_cleanup();
		return 0;
	}

	if (bench_workers("b4", lcores, 2) < 0)
		return 77;
	b->lc1 = lcores[0];
	b->lc2 = lcores[1];
	b->r = rte_ring_create("b4_xlcore", B4_RING_SIZE, (int)rte_socket_id(),
			       RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (b->r == NULL)
		return 1;
	bench_place(lcores, 2, o.rt, &where);
	for (unsigned i = 0; i < 2; i++)
		bench_gate_calibrate_on(lcores[i], &b->gate[lcores[i]]);
	printf("B4 %s: module %s, options %s; TSC %.1f MHz; %s; pools of %u, ring %u SP/SC; "
	       "%u repetitions of ~%.0f ms per case after a warm-up; noise gate %.0f %% "
	       "(spin ~1 ms: lcore %u %.0f, lcore %u %.0f cycles), %.0f %% off-CPU; %s\n",
	       b->setting, b->module, b->options ? b->options : "{}", hz / 1e6, where.text,
	       B4_POOL_N, B4_RING_SIZE, o.reps, o.ms, BENCH_DRIFT_MAX * 100, b->lc1,
	       b->gate[b->lc1].ref, b->lc2, b->gate[b->lc2].ref, BENCH_OFFCPU_MAX * 100,
	       where.sched);
	printf("%-10s %5s %9s %9s %9s %8s %5s %5s %9s %9s %10s\n", "pattern", "size", "min",
	       "median", "max", "objs/rep", "rerun", "noisy", "retries", "get_fail", "sleeps/kobj");
	fflush(stdout);

	for (unsigned k = 0; k < RTE_DIM(b4_sizes); k++) {
		struct lcp_pool *p = &b->pool[k];

		for (enum b4_pattern pat = 0; pat < P_COUNT; pat++) {
			double v[BENCH_MAX_REPS], cpo, warm_ms = 0;
			unsigned rerun = 0, noisy = 0;
			uint64_t nobj = 8192, retries = 0, fail0 = p->get_fail;
			long sleeps = 0; /* voluntary context switches in the kept repetitions */
			struct bench_summary s;
			bool ok;

			/* warm-up: 3 x --ms, the last run sizing the repetitions */
			while (warm_ms < 3 * o.ms) {
				cpo = b4_once(b, p, pat, nobj, &ok);
				warm_ms += cpo * (double)nobj / hz * 1e3;
				nobj = (uint64_t)(o.ms * 1e-3 * hz / cpo);
				if (nobj < 1024)
					nobj = 1024;
			}
			for (unsigned rep = 0; rep < o.reps; rep++) {
				for (unsigned t = 0;; t++) {
					v[rep] = b4_once(b, p, pat, nobj, &ok);
					if (bench_rep_kept(ok, t, BENCH_RERUNS_MAX, &rerun, &noisy))
						break;
				}
				retries += b->retries;
				sleeps += b->csw[0].vol + b->csw[1].vol;
			}
			bench_summarize(v, o.reps, &s);
			printf("%-10s %5u %9.2f %9.2f %9.2f %8" PRIu64 " %5u %5u %9" PRIu64
			       " %9" PRIu64 " %10.2f\n",
			       b4_pname[pat], b4_sizes[k], s.min, s.med, s.max, nobj, rerun, noisy,
			       retries, p->get_fail - fail0,
			       1e3 * (double)sleeps / ((double)nobj * o.reps));
			printf("{\"bench\":\"B4\",\"setting\":\"%s\",\"module\":\"%s\",\"options\":%s,"
			       "\"pattern\":\"%s\",\"size\":%u,\"burst\":%u,\"unit\":\"cycles/object\","
			       "\"tsc_hz\":%.0f,\"objects_per_rep\":%" PRIu64 ",\"reps\":[",
			       b->setting, b->module, b->options ? b->options : "{}", b4_pname[pat],
			       b4_sizes[k], b4_pburst[pat], hz, nobj);
			for (unsigned rep = 0; rep < o.reps; rep++)
				printf("%s%.3f", rep ? "," : "", v[rep]);
			printf("],\"min\":%.3f,\"median\":%.3f,\"max\":%.3f,\"gate_reruns\":%u,"
			       "\"gate_noisy\":%u,\"get_retries\":%" PRIu64 ",\"get_fail\":%" PRIu64
			       ",\"sleeps\":%ld,\"pool_n\":%u,\"ring_size\":%u,\"placement\":%s}\n",
			       s.min, s.med, s.max, rerun, noisy, retries, p->get_fail - fail0,
			       sleeps, B4_POOL_N, B4_RING_SIZE, where.json);
			fflush(stdout);
		}
	}
	for (unsigned k = 0; k < RTE_DIM(b4_sizes); k++)
		b->pool[k].ops->destroy(b->pool[k].pool);
	rte_ring_free(b->r);
	rte_eal_cleanup();
	return 0;
}
