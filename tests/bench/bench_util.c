/* SPDX-License-Identifier: BSD-3-Clause
 * bench_util.c — see bench_util.h. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include <lcp/counters.h>

#include "lcp_priv.h"
#include "bench_opt.h"
#include "bench_util.h"

volatile uint64_t bench_sink_u64;

uint64_t
bench_spin(uint64_t iters)
{
	uint64_t x = 1, t0, t1;

	t0 = rte_rdtsc_precise();
	for (uint64_t i = 0; i < iters; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	t1 = rte_rdtsc_precise();
	bench_sink_u64 = x;
	return t1 - t0;
}

void
bench_gate_calibrate(struct bench_gate *g)
{
	double v[7];
	uint64_t c = bench_spin(100000);

	/* ~1 ms of TSC */
	g->iters = (uint64_t)(100000.0 * (rte_get_tsc_hz() / 1000.0) / (double)(c ? c : 1));
	if (g->iters < 1000)
		g->iters = 1000;
	for (unsigned i = 0; i < 7; i++)
		v[i] = (double)bench_spin(g->iters);
	/* the typical time (median): on this kind of VM the vCPU's speed moves by
	 * tens of % at millisecond scale even when nothing else runs, so the
	 * fastest run is an outlier, not a reference */
	g->ref = bench_median(v, 7);
}

double
bench_gate_drift(const struct bench_gate *g, uint64_t cycles)
{
	double d = ((double)cycles - g->ref) / g->ref;

	return d < 0 ? -d : d;
}

static uint64_t
ns_of(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void
bench_oncpu_start(struct bench_oncpu *o)
{
	o->cpu_ns = ns_of(CLOCK_THREAD_CPUTIME_ID);
	o->wall_ns = ns_of(CLOCK_MONOTONIC);
}

double
bench_oncpu_offcpu(const struct bench_oncpu *o)
{
	uint64_t cpu = ns_of(CLOCK_THREAD_CPUTIME_ID) - o->cpu_ns;
	uint64_t wall = ns_of(CLOCK_MONOTONIC) - o->wall_ns;

	if (wall == 0 || cpu >= wall)
		return 0;
	return (double)(wall - cpu) / (double)wall;
}

bool
bench_gate_ok(const struct bench_gate *g, uint64_t spin_before, uint64_t spin_after, double offcpu)
{
	return bench_gate_drift(g, spin_before) <= BENCH_DRIFT_MAX &&
	       bench_gate_drift(g, spin_after) <= BENCH_DRIFT_MAX && offcpu <= BENCH_OFFCPU_MAX;
}

bool
bench_rep_kept(bool ok, unsigned t, unsigned reruns, unsigned *rejected, unsigned *noisy)
{
	if (ok || t >= reruns) {
		if (!ok)
			(*noisy)++;
		return true;
	}
	(*rejected)++;
	return false;
}

static bool launched[RTE_MAX_LCORE];

void
bench_launch(unsigned lcore, int (*f)(void *), void *arg)
{
	if (rte_eal_remote_launch(f, arg, lcore) != 0) {
		fprintf(stderr, "bench: cannot launch on lcore %u\n", lcore);
		exit(1);
	}
	launched[lcore] = true;
}

void
bench_wait(void)
{
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++) {
		if (!launched[l])
			continue;
		while (rte_eal_get_lcore_state(l) == RUNNING)
			usleep(1000);
		rte_eal_wait_lcore(l);
		launched[l] = false;
	}
}

static void
cpus_of(unsigned lcore, char *buf, size_t len)
{
	rte_cpuset_t set = rte_lcore_cpuset(lcore);
	size_t o = 0;

	buf[0] = '\0';
	for (unsigned c = 0; c < CPU_SETSIZE && o + 8 < len; c++)
		if (CPU_ISSET(c, &set))
			o += (size_t)snprintf(buf + o, len - o, "%s%u", o ? "," : "", c);
}

void
bench_placement(char *buf, size_t len, const unsigned *lcores, unsigned n)
{
	char cpus[64];
	size_t o;

	cpus_of(rte_get_main_lcore(), cpus, sizeof(cpus));
	o = (size_t)snprintf(buf, len, "main lcore %u -> CPU %s", rte_get_main_lcore(), cpus);
	for (unsigned i = 0; i < n && o < len; i++) {
		cpus_of(lcores[i], cpus, sizeof(cpus));
		o += (size_t)snprintf(buf + o, len - o, ", lcore %u -> CPU %s", lcores[i], cpus);
	}
}

void
bench_placement_json(char *buf, size_t len, const unsigned *lcores, unsigned n)
{
	char cpus[64];
	size_t o;

	cpus_of(rte_get_main_lcore(), cpus, sizeof(cpus));
	o = (size_t)snprintf(buf, len, "{\"main\":{\"lcore\":%u,\"cpus\":\"%s\"}",
			     rte_get_main_lcore(), cpus);
	for (unsigned i = 0; i < n && o < len; i++) {
		cpus_of(lcores[i], cpus, sizeof(cpus));
		o += (size_t)snprintf(buf + o, len - o, ",\"lcore%u\":\"%s\"", lcores[i], cpus);
	}
	if (o < len)
		snprintf(buf + o, len - o, "}");
}

const struct lcp_counters_ops *
bench_counters_ops(void)
{
	static struct lcp_registry reg;
	static const struct lcp_counters_ops *ops;
	const char *dirs[] = {BENCH_PLUGIN_DIR};
	struct lcp_plugin_file *pf;

	if (ops != NULL)
		return ops;
	lcp_registry_init(&reg, dirs, 1);
	pf = lcp_registry_get(&reg, "counters_percore", NULL);
	if (pf == NULL || pf->kind != LCP_KIND_COUNTERS) {
		fprintf(stderr,
			"bench: counters_percore not found (looked in %s, LCP_PLUGIN_PATH, the "
			"build tree)\n",
			BENCH_PLUGIN_DIR);
		exit(1);
	}
	ops = pf->desc->ops;
	return ops;
}

int
bench_parse_opts(int argc, char **argv, struct bench_opts *o)
{
	const struct bench_opt opts[] = {
		BENCH_OPT_UINT("reps", &o->reps),
		BENCH_OPT_DOUBLE("ms", &o->ms),
		BENCH_OPT_U64("callgrind", &o->cg_iters),
		BENCH_OPT_FLAG("quick", &o->quick),
		BENCH_OPT_FLAG("rt", &o->rt),
		BENCH_OPT_UINT("cons-burst", &o->cons_burst),
		BENCH_OPT_END,
	};

	o->reps = 9;
	o->ms = 20;
	o->cg_iters = 0;
	o->quick = false;
	o->rt = false;
	o->cons_burst = 0;
	if (bench_opt_parse(argc, argv, opts, argv[0],
			    "[EAL args] -- [--reps N] [--ms M] [--callgrind ITERS] [--rt] "
			    "[--cons-burst N] [--quick]") < 0)
		return -1;
	if (o->cons_burst > 1024)
		o->cons_burst = 1024;
	if (o->reps < 1)
		o->reps = 1;
	if (o->reps > BENCH_MAX_REPS)
		o->reps = BENCH_MAX_REPS;
	if (!o->quick && o->reps < 9)
		fprintf(stderr, "bench: --reps %u is below the 9 BENCHMARKS.md asks for\n",
			o->reps);
	return 0;
}

static int
set_fifo(void *arg)
{
	struct sched_param sp = {.sched_priority = 1};
	int *rc = arg;

	rc[rte_lcore_id()] = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	return 0;
}

void
bench_set_rt(bool rt, char *buf, size_t len)
{
	static int rc[RTE_MAX_LCORE];
	unsigned l, ok = 0, bad = 0;
	int err = 0;

	if (!rt) {
		snprintf(buf, len, "SCHED_OTHER (nice as started)");
		return;
	}
	RTE_LCORE_FOREACH_WORKER(l)
	{
		bench_launch(l, set_fifo, rc);
		bench_wait();
		if (rc[l] == 0) {
			ok++;
		} else {
			bad++;
			err = rc[l];
		}
	}
	if (bad == 0)
		snprintf(buf, len, "SCHED_FIFO 1 on the %u worker lcores, main lcore SCHED_OTHER",
			 ok);
	else
		snprintf(buf, len, "SCHED_OTHER: SCHED_FIFO refused (%s)", strerror(err));
}

int
bench_init(const char *name, int argc, char **argv, struct bench_opts *o)
{
	int n = rte_eal_init(argc, argv);

	if (n < 0) {
		fprintf(stderr, "%s: EAL init failed\n", name);
		return 1;
	}
	return bench_parse_opts(argc - n, argv + n, o) < 0 ? 2 : 0;
}

int
bench_workers(const char *name, unsigned *lcores, unsigned n)
{
	unsigned l = (unsigned)-1;

	for (unsigned i = 0; i < n; i++) {
		l = rte_get_next_lcore(l, 1, 0);
		if (l >= RTE_MAX_LCORE) {
			fprintf(stderr, "%s: needs %s, e.g. --lcores=%s\n", name,
				n == 1 ? "one worker lcore" : "two worker lcores",
				n == 1 ? "0@0,1@1" : "0@0,1@1,2@0");
			return -1;
		}
		lcores[i] = l;
	}
	return 0;
}

static int
gate_calibrate_main(void *arg)
{
	bench_gate_calibrate(arg);
	return 0;
}

void
bench_gate_calibrate_on(unsigned lcore, struct bench_gate *g)
{
	bench_launch(lcore, gate_calibrate_main, g);
	bench_wait();
}

void
bench_place(const unsigned *lcores, unsigned n, bool rt, struct bench_where *w)
{
	size_t jlen = sizeof(w->json), slen = sizeof(w->sched);

	bench_placement(w->text, sizeof(w->text), lcores, n);
	bench_set_rt(rt, w->sched, slen);
	bench_placement_json(w->json, jlen - slen - 16, lcores, n);
	snprintf(w->json + strlen(w->json) - 1, slen + 16, ",\"sched\":\"%s\"}", w->sched);
}
