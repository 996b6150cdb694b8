/* SPDX-License-Identifier: BSD-3-Clause
 * bench_stats.h — the summary of a benchmark's repetitions (min, quartiles,
 * median, max), without DPDK: bench_util.h (the EAL benchmarks) and
 * b7_tcp_rx.c (libstk alone) both use it. */
#ifndef LCP_BENCH_STATS_H
#define LCP_BENCH_STATS_H

#define BENCH_MAX_REPS 101

/* min, quartiles, median, max of v[0..n-1] (v is not modified; at most
 * BENCH_MAX_REPS values count; n == 0: all 0) */
struct bench_summary {
	unsigned n;
	double min, q1, med, q3, max;
};
void bench_summarize(const double *v, unsigned n, struct bench_summary *s);
double bench_median(const double *v, unsigned n);

#endif
