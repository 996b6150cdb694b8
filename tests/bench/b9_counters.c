/* SPDX-License-Identifier: BSD-3-Clause
 * B9 — counter strategies: cycles per add with 1 and 2 writers, cycles per read.
 *
 * The four modules (plugins/counters_{percore,atomic,sharded,batched}), loaded
 * through the engine's registry from the build tree and configured by the
 * engine's option walker with their defaults (counters_sharded also with
 * {"shards": 1}); one set each of 12 counters (a row spans two cache lines) and
 * 3 writer slots (two workers + the control thread, as the engine creates them).
 *
 * Adds go through the SDK's lcp_ctr_add() on a struct lcp_stage whose counter
 * fields are set as engine.c build_counters() sets them: with counters_percore
 * `ctr_row` is its row and the add is inline (a relaxed load + store, no call);
 * with the others `ctr_row` is NULL and the add is an indirect call of add().
 * "percore.call" forces the call path on counters_percore (ctr_row NULL) to
 * separate the call from what the module does. Each writer adds 1 to counters
 * base+0..3 in turn (a stage bumps a few counters per burst).
 *
 * Cases (all interleaved in every repetition, A B C … A B C …):
 *   add1.*  one writer, lcore A, slot 0
 *   add2.*  two writers at once, lcore A slot 0 and lcore B slot 1, same set,
 *           each on its own slot (the engine's case); both run until the first
 *           has done its share, so they overlap for the whole measurement; the
 *           result is the mean of the two writers' cycles per add. For
 *           counters_atomic the slot is ignored, so "same" is both writers on the
 *           same counters; "false_sharing" writer B on counters 4..7 (same cache
 *           line, other words); "own_line" writer B on counters 8..11 (as two
 *           stages with their own sets). counters_sharded's writers each add to
 *           the shard their thread hashes to (printed); "shards1" puts both in one.
 *   read.*  one read() of one counter through the ops (as stats.c reads), lcore A
 * Anchor: counters_percore's inline row path in the same group and repetition;
 * ratios are medians of per-repetition ratios (reads: to percore's read()).
 *
 * Method (BENCHMARKS.md): --reps repetitions of about --ms ms per case (sized
 * from a warm run); a ~1 ms calibrated spin on every measured lcore before and
 * after each repetition (for add2 on both lcores at once, against a reference
 * calibrated on both at once: this VM's two vCPUs slow each other down by ~20 %
 * when both spin), re-run on more than 10 % drift or more than 5 % off-CPU,
 * kept and counted noisy after 5 re-runs; min / median / IQR per case. At the end
 * every set is flushed and each module's sum over its counters must equal the adds
 * the bench made (exit 1 otherwise).
 * --callgrind ITERS: no timing; one lcore; each add1 case (and an empty loop, and
 * each read case) once between CALLGRIND_ZERO_STATS and
 * CALLGRIND_DUMP_STATS_AT("<case>"), ITERS operations (tests/bench/b9.sh).
 *
 * Placement: --lcores=0@0,1@1,2@0 — lcore A = 1 on CPU 1, lcore B = 2 on CPU 0,
 * which it shares with the main lcore (asleep in usleep()).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_pause.h>

#include <lcp/lcp.h>

#include "lcp_priv.h"
#include "bench_util.h"

#define B9_CTRS 12
#define B9_SLOTS 3
#define B9_CHUNK 1024 /* adds between two looks at the stop flag (add2) */

static const char *const b9_names[B9_CTRS] = {
	"in.in",
	"out.out",
	"out.drop_ring_full",
	"out.drop_unlinked",
	"drop_shutdown",
	"c5",
	"c6",
	"c7",
	"c8",
	"c9",
	"c10",
	"c11",
};

/* ---- the modules ---- */

enum { M_PERCORE, M_ATOMIC, M_SHARDED, M_SHARDED1, M_BATCHED, M_COUNT };

static const struct {
	const char *label;
	const char *plugin;
	const char *options; /* JSON, NULL = defaults */
} b9_mods[M_COUNT] = {
	[M_PERCORE] = {"percore", "counters_percore", NULL},
	[M_ATOMIC] = {"atomic", "counters_atomic", NULL},
	[M_SHARDED] = {"sharded", "counters_sharded", NULL},
	[M_SHARDED1] = {"sharded(shards=1)", "counters_sharded", "{\"shards\": 1}"},
	[M_BATCHED] = {"batched", "counters_batched", NULL},
};

struct b9_mod {
	const struct lcp_counters_ops *ops;
	void *set;
	uint64_t added; /* by the bench, over all counters */
};

/* ---- cases ---- */

enum b9_kind { K_ADD1, K_ADD2, K_READ };

struct b9_case {
	const char *name;
	const char *label;
	enum b9_kind kind;
	unsigned mod;
	bool call;	/* the call path even when the module has a row */
	unsigned base2; /* K_ADD2: writer B's first counter (0: writer A's) */
};

static const struct b9_case b9_cases[] = {
	{"add1.percore.row", "percore, inline row (anchor)", K_ADD1, M_PERCORE, false, 0},
	{"add1.percore.call", "percore, add() call", K_ADD1, M_PERCORE, true, 0},
	{"add1.atomic", "atomic", K_ADD1, M_ATOMIC, false, 0},
	{"add1.sharded", "sharded (16 shards)", K_ADD1, M_SHARDED, false, 0},
	{"add1.batched", "batched (every 64)", K_ADD1, M_BATCHED, false, 0},
	{"add2.percore.row", "percore, inline row (anchor)", K_ADD2, M_PERCORE, false, 0},
	{"add2.percore.call", "percore, add() call", K_ADD2, M_PERCORE, true, 0},
	{"add2.atomic.same", "atomic, same counters", K_ADD2, M_ATOMIC, false, 0},
	{"add2.atomic.false_sharing", "atomic, own counters, one line", K_ADD2, M_ATOMIC, false, 4},
	{"add2.atomic.own_line", "atomic, own counters, own lines", K_ADD2, M_ATOMIC, false, 8},
	{"add2.sharded", "sharded (16 shards)", K_ADD2, M_SHARDED, false, 0},
	{"add2.sharded.shards1", "sharded, 1 shard", K_ADD2, M_SHARDED1, false, 0},
	{"add2.batched", "batched (every 64)", K_ADD2, M_BATCHED, false, 0},
	{"read.percore", "percore (3 slots) (anchor)", K_READ, M_PERCORE, false, 0},
	{"read.atomic", "atomic", K_READ, M_ATOMIC, false, 0},
	{"read.sharded", "sharded (16 shards)", K_READ, M_SHARDED, false, 0},
	{"read.batched", "batched (3 slots)", K_READ, M_BATCHED, false, 0},
};
#define B9_N_CASES RTE_DIM(b9_cases)

/* the anchor of a case: the first case of its kind */
static unsigned
b9_anchor(unsigned c)
{
	for (unsigned i = 0; i < B9_N_CASES; i++)
		if (b9_cases[i].kind == b9_cases[c].kind)
			return i;
	return c;
}

struct b9 {
	struct lcp_registry reg;
	struct b9_mod mod[M_COUNT];
	unsigned lc_a, lc_b;
	/* noise gate references per lcore: spinning alone (add1, read) and while
	 * the other lcore spins too (add2: the two vCPUs may share a core) */
	struct bench_gate gate[RTE_MAX_LCORE], gate2[RTE_MAX_LCORE];
};

/* ---- the measured loops ---- */

/* n adds of 1 to counters base+0..3 in turn, as a stage adds */
static __attribute__((noinline)) void
b9_adds(struct lcp_stage *st, unsigned base, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		lcp_ctr_add(st, base + (unsigned)(i & 3), 1);
}

/* the loop alone (callgrind baseline) */
static __attribute__((noinline)) void
b9_empty(struct lcp_stage *st, unsigned base, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		__asm__ volatile("" : : "r"(st), "r"(base + (unsigned)(i & 3)) : "memory");
}

static __attribute__((noinline)) uint64_t
b9_reads(const struct lcp_counters_ops *ops, void *set, uint64_t n)
{
	uint64_t sum = 0;

	for (uint64_t i = 0; i < n; i++)
		sum += ops->read(set, (unsigned)(i & 3));
	return sum;
}

/* a stage's counter fields, as engine.c build_counters() sets them */
static void
b9_stage(struct lcp_stage *st, const struct b9_mod *m, unsigned slot, bool call)
{
	memset(st, 0, sizeof(*st));
	st->ctrs = m->set;
	st->ctr_add = m->ops->add;
	st->slot = slot;
	st->ctr_row = !call && m->ops->row != NULL ? m->ops->row(m->set, slot) : NULL;
}

/* ---- one repetition ---- */

struct b9_job {
	struct b9 *b;
	const struct b9_case *c;
	unsigned slot, base;
	uint64_t n;		  /* operations to do (add2: until the other is done) */
	volatile uint32_t *ready; /* add2: start barrier */
	volatile uint32_t *stop;  /* add2: the first to finish stops the other */
	/* out */
	uint64_t done, cycles, spin_before, spin_after;
	double offcpu;
};

static int
b9_job_main(void *arg)
{
	struct b9_job *j = arg;
	struct b9_mod *m = &j->b->mod[j->c->mod];
	const struct bench_gate *g =
		j->c->kind == K_ADD2 ? &j->b->gate2[rte_lcore_id()] : &j->b->gate[rte_lcore_id()];
	struct bench_oncpu oc;
	struct lcp_stage st;
	uint64_t t0;

	b9_stage(&st, m, j->slot, j->c->call);
	j->spin_before = bench_spin(g->iters);
	if (j->ready != NULL) {
		__atomic_fetch_add(j->ready, 1, __ATOMIC_ACQ_REL);
		while (__atomic_load_n(j->ready, __ATOMIC_ACQUIRE) < 2)
			rte_pause();
	}
	bench_oncpu_start(&oc);
	t0 = rte_rdtsc_precise();
	switch (j->c->kind) {
	case K_ADD1:
		b9_adds(&st, j->base, j->n);
		j->done = j->n;
		break;
	case K_ADD2:
		/* at least one chunk, so a writer that was descheduled while the other
		 * did its share still has a (gated, re-run) figure */
		j->done = 0;
		do {
			b9_adds(&st, j->base, B9_CHUNK);
			j->done += B9_CHUNK;
		} while (j->done < j->n && !*j->stop);
		*j->stop = 1;
		break;
	case K_READ:
		bench_sink_u64 += b9_reads(m->ops, m->set, j->n);
		j->done = j->n;
		break;
	}
	j->cycles = rte_rdtsc_precise() - t0;
	j->offcpu = bench_oncpu_offcpu(&oc);
	j->spin_after = bench_spin(g->iters);
	return 0;
}

static bool
b9_job_ok(const struct b9 *b, const struct b9_job *j, unsigned lcore)
{
	const struct bench_gate *g = j->c->kind == K_ADD2 ? &b->gate2[lcore] : &b->gate[lcore];

	return bench_gate_ok(g, j->spin_before, j->spin_after, j->offcpu);
}

/* cycles per operation; *ok false when the gate rejects it */
static double
b9_once(struct b9 *b, const struct b9_case *c, uint64_t n, bool *ok, double *per_writer)
{
	volatile uint32_t ready = 0, stop = 0;
	struct b9_job ja = {.b = b, .c = c, .slot = 0, .base = 0, .n = n};
	struct b9_job jb = {.b = b, .c = c, .slot = 1, .base = c->base2, .n = n};
	struct b9_mod *m = &b->mod[c->mod];
	double v;

	if (c->kind != K_ADD2) {
		bench_launch(b->lc_a, b9_job_main, &ja);
		bench_wait();
		*ok = b9_job_ok(b, &ja, b->lc_a);
		if (c->kind == K_ADD1)
			m->added += ja.done;
		per_writer[0] = per_writer[1] = (double)ja.cycles / (double)ja.done;
		return per_writer[0];
	}
	ja.ready = jb.ready = &ready;
	ja.stop = jb.stop = &stop;
	/* A first: B shares CPU 0 with this (main) thread and, under SCHED_FIFO,
	 * would keep it from launching A until RT throttling stops B */
	bench_launch(b->lc_a, b9_job_main, &ja);
	bench_launch(b->lc_b, b9_job_main, &jb);
	bench_wait();
	m->added += ja.done + jb.done;
	*ok = b9_job_ok(b, &ja, b->lc_a) && b9_job_ok(b, &jb, b->lc_b);
	per_writer[0] = (double)ja.cycles / (double)ja.done;
	per_writer[1] = (double)jb.cycles / (double)jb.done;
	v = (per_writer[0] + per_writer[1]) / 2;
	if (getenv("BENCH_DEBUG") && !*ok)
		fprintf(stderr, "b9: %s rejected: drift %.3f/%.3f %.3f/%.3f off-CPU %.4f %.4f\n",
			c->name, bench_gate_drift(&b->gate2[b->lc_a], ja.spin_before),
			bench_gate_drift(&b->gate2[b->lc_a], ja.spin_after),
			bench_gate_drift(&b->gate2[b->lc_b], jb.spin_before),
			bench_gate_drift(&b->gate2[b->lc_b], jb.spin_after), ja.offcpu, jb.offcpu);
	return v;
}

static double
b9_rep(struct b9 *b, const struct b9_case *c, uint64_t n, unsigned *rejected, unsigned *noisy,
       double *per_writer)
{
	for (unsigned t = 0;; t++) {
		bool ok;
		double v = b9_once(b, c, n, &ok, per_writer);

		if (bench_rep_kept(ok, t, BENCH_RERUNS_MAX, rejected, noisy))
			return v;
	}
}

/* ---- setup ---- */

static void
b9_load(struct b9 *b)
{
	unsetenv("LCP_PLUGIN_PATH");
	lcp_registry_init(&b->reg, NULL, 0); /* the build tree's plugins */
	for (unsigned i = 0; i < M_COUNT; i++) {
		struct lcp_plugin_file *pf = lcp_registry_get(&b->reg, b9_mods[i].plugin, NULL);
		struct lcp_errs errs = {0};
		json_t *obj = NULL, *keep = json_array();
		void *conf;

		if (pf == NULL || pf->kind != LCP_KIND_COUNTERS) {
			fprintf(stderr, "b9: counters plugin %s not found in the build tree\n",
				b9_mods[i].plugin);
			exit(1);
		}
		if (b9_mods[i].options != NULL)
			obj = json_loads(b9_mods[i].options, 0, NULL);
		conf = calloc(1, pf->desc->conf_size + 1);
		if (conf == NULL || lcp_opt_apply(pf->desc->options, pf->desc->conf_size, obj, conf,
						  "options", &errs, keep) != 0) {
			fprintf(stderr, "b9: %s: options refused\n", b9_mods[i].plugin);
			exit(1);
		}
		b->mod[i].ops = pf->desc->ops;
		b->mod[i].set = b->mod[i].ops->create(conf, b9_names, B9_CTRS, B9_SLOTS,
						      (int)rte_socket_id());
		if (b->mod[i].set == NULL) {
			fprintf(stderr, "b9: %s: create failed\n", b9_mods[i].plugin);
			exit(1);
		}
		/* the set keeps nothing of conf (strings would be in keep) */
		free(conf);
		json_decref(obj);
		json_decref(keep);
	}
}

/* every slot flushed: each module's counters sum to what the bench added */
static int
b9_check(struct b9 *b)
{
	int rc = 0;

	printf("\ncounters after the run (flushed):");
	for (unsigned i = 0; i < M_COUNT; i++) {
		struct b9_mod *m = &b->mod[i];
		uint64_t sum = 0;

		if (m->ops->flush != NULL)
			for (unsigned s = 0; s < B9_SLOTS; s++)
				m->ops->flush(m->set, s);
		for (unsigned k = 0; k < B9_CTRS; k++)
			sum += m->ops->read(m->set, k);
		printf(" %s %" PRIu64 "%s;", b9_mods[i].label, sum, sum == m->added ? "" : " (!)");
		if (sum != m->added) {
			fprintf(stderr,
				"b9: %s: counters sum to %" PRIu64 ", the bench added %" PRIu64
				"\n",
				b9_mods[i].label, sum, m->added);
			rc = 1;
		}
	}
	printf("\n");
	return rc;
}

/* counters_sharded's shard for a thread id: the plugin's hash (murmur3 fmix32),
 * repeated here only to print which shards the two writers got */
static unsigned
b9_shard_of(uint32_t tid, unsigned shards)
{
	uint32_t h = tid;

	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return (h | 0x80000000u) & (shards - 1);
}

static int
b9_tid_main(void *arg)
{
	((uint32_t *)arg)[rte_lcore_id()] = (uint32_t)rte_gettid();
	return 0;
}

static int
b9_calibrate_main(void *arg)
{
	bench_gate_calibrate(arg);
	return 0;
}

/* ---- callgrind ---- */

static void
b9_callgrind(struct b9 *b, uint64_t it)
{
	struct lcp_stage st;
	char name[64];

	b9_stage(&st, &b->mod[M_PERCORE], 0, false);
	CALLGRIND_ZERO_STATS;
	b9_empty(&st, 0, it);
	CALLGRIND_DUMP_STATS_AT("b9.add1.empty_loop");
	printf("callgrind-case b9.add1.empty_loop ops %" PRIu64 "\n", it);
	for (unsigned c = 0; c < B9_N_CASES; c++) {
		const struct b9_case *k = &b9_cases[c];
		struct b9_mod *m = &b->mod[k->mod];

		if (k->kind == K_ADD2)
			continue;
		b9_stage(&st, m, 0, k->call);
		if (k->kind == K_ADD1)
			b9_adds(&st, 0, 64); /* first adds (sharded: the thread's hash) */
		snprintf(name, sizeof(name), "b9.%s", k->name);
		CALLGRIND_ZERO_STATS;
		if (k->kind == K_ADD1)
			b9_adds(&st, 0, it);
		else
			bench_sink_u64 += b9_reads(m->ops, m->set, it);
		CALLGRIND_DUMP_STATS_AT(name);
		printf("callgrind-case %s ops %" PRIu64 "\n", name, it);
	}
}

/* ---- output ---- */

struct b9_result {
	struct bench_summary s;
	double ratio, ratio_min;
	double w_med[2]; /* add2: median per writer */
	unsigned rejected, noisy;
	uint64_t per_rep;
};

static const char *
b9_kind_title(enum b9_kind k)
{
	switch (k) {
	case K_ADD1:
		return "one writer (lcore A, slot 0), cycles per add";
	case K_ADD2:
		return "two writers at once (lcore A slot 0, lcore B slot 1), cycles per add, "
		       "mean of the two";
	default:
		return "read() of one counter, 3 slots, cycles per read";
	}
}

int
main(int argc, char **argv)
{
	static struct b9 b9;
	struct b9 *b = &b9;
	struct bench_opts o;
	struct b9_result res[B9_N_CASES];
	static double v[B9_N_CASES][BENCH_MAX_REPS], w[B9_N_CASES][2][BENCH_MAX_REPS];
	uint64_t n[B9_N_CASES];
	unsigned lcores[2];
	uint32_t tids[RTE_MAX_LCORE] = {0};
	struct bench_where where;
	double hz;
	int rc;

	rc = bench_init("b9", argc, argv, &o);
	if (rc != 0)
		return rc;
	hz = (double)rte_get_tsc_hz();
	b9_load(b);

	if (o.cg_iters > 0) {
		b9_callgrind(b, o.cg_iters);
		rte_eal_cleanup();
		return 0;
	}

	if (bench_workers("b9", lcores, 2) < 0)
		return 77;
	b->lc_a = lcores[0];
	b->lc_b = lcores[1];
	bench_place(lcores, 2, o.rt, &where);
	for (unsigned i = 0; i < 2; i++) {
		bench_gate_calibrate_on(lcores[i], &b->gate[lcores[i]]);
		bench_launch(lcores[i], b9_tid_main, tids);
		bench_wait();
	}
	for (unsigned i = 0; i < 2; i++) /* both at once; A (CPU 1) first, see b9_once */
		bench_launch(lcores[i], b9_calibrate_main, &b->gate2[lcores[i]]);
	bench_wait();

	printf("B9 counter strategies: TSC %.1f MHz; lcore A %u, lcore B %u; %s\n", hz / 1e6,
	       b->lc_a, b->lc_b, where.text);
	printf("sets of %u counters, %u slots; adds of 1 to counters base+0..3 in turn through "
	       "lcp_ctr_add(); counters_sharded: lcore A's thread on shard %u, lcore B's on "
	       "shard %u of 16%s\n",
	       B9_CTRS, B9_SLOTS, b9_shard_of(tids[b->lc_a], 16), b9_shard_of(tids[b->lc_b], 16),
	       b9_shard_of(tids[b->lc_a], 16) == b9_shard_of(tids[b->lc_b], 16)
		       ? " (the same shard: they contend)"
		       : "");
	printf("%u repetitions of ~%.0f ms per case, interleaved; noise gate %.0f %% (spin ~1 ms "
	       "alone: lcore %u %.0f cycles, lcore %u %.0f; both at once (add2): %.0f, %.0f) and "
	       "%.0f %% off-CPU; %s\n",
	       o.reps, o.ms, BENCH_DRIFT_MAX * 100, b->lc_a, b->gate[b->lc_a].ref, b->lc_b,
	       b->gate[b->lc_b].ref, b->gate2[b->lc_a].ref, b->gate2[b->lc_b].ref,
	       BENCH_OFFCPU_MAX * 100, where.sched);
	fflush(stdout);

	/* size each case to ~o.ms from a warm run */
	for (unsigned c = 0; c < B9_N_CASES; c++) {
		double pw[2], cpo;
		bool ok;

		b9_once(b, &b9_cases[c], 200000, &ok, pw);
		cpo = b9_once(b, &b9_cases[c], 200000, &ok, pw);
		n[c] = (uint64_t)(o.ms * 1e-3 * hz / cpo);
		n[c] -= n[c] % B9_CHUNK;
		if (n[c] < 100 * B9_CHUNK)
			n[c] = 100 * B9_CHUNK;
	}
	memset(res, 0, sizeof(res));
	for (unsigned rep = 0; rep < o.reps; rep++)
		for (unsigned c = 0; c < B9_N_CASES; c++) {
			double pw[2];

			v[c][rep] =
				b9_rep(b, &b9_cases[c], n[c], &res[c].rejected, &res[c].noisy, pw);
			w[c][0][rep] = pw[0];
			w[c][1][rep] = pw[1];
		}
	for (unsigned c = 0; c < B9_N_CASES; c++) {
		unsigned a = b9_anchor(c);
		double ratios[BENCH_MAX_REPS];
		struct bench_summary sa;

		bench_summarize(v[c], o.reps, &res[c].s);
		bench_summarize(v[a], o.reps, &sa);
		for (unsigned rep = 0; rep < o.reps; rep++)
			ratios[rep] = v[c][rep] / v[a][rep];
		res[c].ratio = bench_median(ratios, o.reps);
		res[c].ratio_min = res[c].s.min / sa.min;
		res[c].w_med[0] = bench_median(w[c][0], o.reps);
		res[c].w_med[1] = bench_median(w[c][1], o.reps);
		res[c].per_rep = n[c];
	}

	rc = b9_check(b);
	for (enum b9_kind k = K_ADD1; k <= K_READ; k++) {
		printf("\nB9 %s; ratio = median of per-repetition ratios to the anchor\n",
		       b9_kind_title(k));
		printf("%-34s %8s %8s %8s %8s %8s %8s %4s %5s%s\n", "case", "min", "median", "q1",
		       "q3", "ratio", "min/min", "rej", "noisy",
		       k == K_ADD2 ? "   writer A / B (medians)" : "");
		for (unsigned c = 0; c < B9_N_CASES; c++) {
			const struct b9_result *r = &res[c];

			if (b9_cases[c].kind != k)
				continue;
			printf("%-34s %8.2f %8.2f %8.2f %8.2f %8.3f %8.3f %4u %5u",
			       b9_cases[c].label, r->s.min, r->s.med, r->s.q1, r->s.q3, r->ratio,
			       r->ratio_min, r->rejected, r->noisy);
			if (k == K_ADD2)
				printf("   %.2f / %.2f", r->w_med[0], r->w_med[1]);
			printf("\n");
		}
	}
	printf("\n");
	for (unsigned c = 0; c < B9_N_CASES; c++) {
		const struct b9_result *r = &res[c];

		printf("{\"bench\":\"B9\",\"case\":\"%s\",\"module\":\"%s\",\"unit\":\"%s\","
		       "\"tsc_hz\":%.0f,\"reps\":%u,\"rep_ms\":%.0f,\"ops_per_rep\":%" PRIu64 ","
		       "\"min\":%.3f,\"q1\":%.3f,\"median\":%.3f,\"q3\":%.3f,\"iqr\":%.3f,"
		       "\"max\":%.3f,\"anchor\":\"%s\",\"ratio_median_of_pairs\":%.4f,"
		       "\"ratio_of_minima\":%.4f",
		       b9_cases[c].name, b9_mods[b9_cases[c].mod].plugin,
		       b9_cases[c].kind == K_READ ? "cycles/read" : "cycles/add", hz, o.reps, o.ms,
		       r->per_rep, r->s.min, r->s.q1, r->s.med, r->s.q3, r->s.q3 - r->s.q1,
		       r->s.max, b9_cases[b9_anchor(c)].name, r->ratio, r->ratio_min);
		if (b9_cases[c].kind == K_ADD2)
			printf(",\"writer_a_median\":%.3f,\"writer_b_median\":%.3f", r->w_med[0],
			       r->w_med[1]);
		printf(",\"gate_reruns\":%u,\"gate_noisy\":%u,\"placement\":%s}\n", r->rejected,
		       r->noisy, where.json);
	}
	for (unsigned i = 0; i < M_COUNT; i++)
		b->mod[i].ops->destroy(b->mod[i].set);
	lcp_registry_fini(&b->reg);
	rte_eal_cleanup();
	return rc;
}
