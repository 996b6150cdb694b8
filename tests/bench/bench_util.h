/* SPDX-License-Identifier: BSD-3-Clause
 * bench_util.h — what every lcpipe benchmark shares (doc/benchmarks.md,
 * shared/design/BENCHMARKS.md): summaries (min / median / IQR), the noise gate
 * (a calibrated spin loop run before and after each repetition), the placement
 * line, JSON result lines, callgrind markers, the counters plugin.
 *
 * Map: bench_summarize / bench_median -> statistics (bench_stats.h); bench_gate_* -> noise gate;
 * bench_launch / bench_wait -> run a function on a worker lcore while the main
 * lcore sleeps (rte_eal_wait_lcore would busy-wait on the main lcore's CPU);
 * bench_counters_ops -> counters_percore through the engine's plugin registry.
 */
#ifndef LCP_BENCH_UTIL_H
#define LCP_BENCH_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_cycles.h>

#include "bench_stats.h"

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define BENCH_HAVE_CALLGRIND 1
#endif
#endif
#ifndef BENCH_HAVE_CALLGRIND
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(s) ((void)(s))
#define RUNNING_ON_VALGRIND 0
#endif

#define BENCH_DRIFT_MAX 0.10 /* a repetition whose spin loop drifted more is re-run */
#define BENCH_RERUNS_MAX 5   /* then it is kept, and counted as noisy */

struct lcp_counters_ops;

/* The noise gate: a dependent multiply-add chain of a fixed iteration count,
 * calibrated once per lcore at start (median of 7 runs, ~1 ms each). */
struct bench_gate {
	uint64_t iters;
	double ref; /* TSC cycles of one spin of `iters` on this lcore */
};
uint64_t bench_spin(uint64_t iters);
/* calibrate on the calling lcore */
void bench_gate_calibrate(struct bench_gate *g);
/* relative drift of a spin of g->iters that took `cycles` */
double bench_gate_drift(const struct bench_gate *g, uint64_t cycles);

/* Off-CPU time of a measured lcore thread: CLOCK_THREAD_CPUTIME_ID against
 * CLOCK_MONOTONIC over the repetition. A repetition during which a measured lcore
 * spent more than BENCH_OFFCPU_MAX of the time descheduled (another task ran on
 * its CPU, or interrupts were handled on it) is re-run like one whose spin
 * loop drifted. */
#define BENCH_OFFCPU_MAX 0.05
struct bench_oncpu {
	uint64_t cpu_ns, wall_ns;
};
void bench_oncpu_start(struct bench_oncpu *o);
/* fraction of the wall time since start that the thread was not running */
double bench_oncpu_offcpu(const struct bench_oncpu *o);

/* The gate's verdict on one repetition of an lcore: its spins before and after
 * within BENCH_DRIFT_MAX of g's reference, and off its CPU at most
 * BENCH_OFFCPU_MAX of the time. */
bool bench_gate_ok(const struct bench_gate *g, uint64_t spin_before, uint64_t spin_after,
		   double offcpu);
/* After try t (0: the first run) of a repetition the gate found ok or not: true
 * when the repetition is kept (counted in *noisy when kept not ok, after
 * `reruns` re-runs), false when it is to be run again (counted in *rejected). */
bool bench_rep_kept(bool ok, unsigned t, unsigned reruns, unsigned *rejected, unsigned *noisy);

/* Launch f(arg) on worker lcore `lcore`; bench_wait sleeps (1 ms steps) until
 * every launched lcore has returned. */
void bench_launch(unsigned lcore, int (*f)(void *), void *arg);
void bench_wait(void);

/* "lcore 1 -> CPU 1, lcore 2 -> CPU 0 (main lcore 0 -> CPU 0)" for `lcores` */
void bench_placement(char *buf, size_t len, const unsigned *lcores, unsigned n);
/* the same as a JSON object, for the result lines */
void bench_placement_json(char *buf, size_t len, const unsigned *lcores, unsigned n);

/* counters_percore, loaded through the engine's registry (build tree first) */
const struct lcp_counters_ops *bench_counters_ops(void);

/* common options after EAL's: --reps N --ms M --callgrind ITERS --rt --quick
 * --cons-burst N (B1) */
struct bench_opts {
	unsigned reps;	     /* repetitions per case (>= 9 unless --quick) */
	double ms;	     /* target duration of one repetition */
	uint64_t cg_iters;   /* callgrind mode: fixed iteration count, no timing */
	bool rt;	     /* SCHED_FIFO for the measured worker lcores */
	unsigned cons_burst; /* B1: consumer dequeue size, 0 = the producer's burst */
	bool quick;
};
int bench_parse_opts(int argc, char **argv, struct bench_opts *o);

/* EAL, then the options after EAL's: 0, or main's exit status after saying why
 * as name (1: EAL init failed, 2: bad options) */
int bench_init(const char *name, int argc, char **argv, struct bench_opts *o);

/* the first n (1 or 2) worker lcores into lcores; -1 after saying that name
 * needs them */
int bench_workers(const char *name, unsigned *lcores, unsigned n);

/* calibrate g (bench_gate_calibrate) on worker lcore `lcore` */
void bench_gate_calibrate_on(unsigned lcore, struct bench_gate *g);

/* where the measured lcores run, for the report: as text, as JSON (with
 * "sched"), and what bench_set_rt() did */
struct bench_where {
	char text[256];
	char json[512];
	char sched[128];
};
/* w for the n lcores, after bench_set_rt(rt) */
void bench_place(const unsigned *lcores, unsigned n, bool rt, struct bench_where *w);

/* --rt: put every worker lcore thread in SCHED_FIFO priority 1 (the main lcore
 * stays SCHED_OTHER: it sleeps while they measure). Other tasks then cannot
 * preempt a repetition; the kernel's RT throttling (sched_rt_runtime_us) still
 * leaves them 5 % of each CPU. Writes what it did into buf. */
void bench_set_rt(bool rt, char *buf, size_t len);

extern volatile uint64_t bench_sink_u64;

#endif
