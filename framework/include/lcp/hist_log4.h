/* SPDX-License-Identifier: BSD-3-Clause
 * lcp/hist_log4.h — a ready-made bucket layout for an SDK histogram (ABI 2.2,
 * struct lcp_hist_def in lcp/stage.h) of durations in TSC cycles: log-linear,
 * four linear steps per power of two, so a bucket is at most 25 % of its lower
 * bound wide, from 16 cycles to 2^41 (about 12 minutes at 3 GHz).
 *
 *   bucket 0                     [0, 16)
 *   bucket 1 + 4 (k - 4) + s     [2^k + s 2^(k-2), 2^k + (s+1) 2^(k-2)),
 *                                k = 4 .. 40, s = 0 .. 3
 *   bucket 149                   2^41 and more (le="+Inf")
 *
 * The metrics stage's latency_seconds, ws_rtt's round trips and the engine's
 * stage timing (the per-call quantiles of engine.stage_timing) use it:
 *
 *   static const struct lcp_hist_def h[] = {
 *       { .name = "x_seconds", .help = "...", .le = lcp_hist_log4_le, .n_le = LCP_HIST_LOG4_N_LE },
 *       { .name = NULL } };
 *   lcp_hist_set_scale(st, 0, 1.0 / rte_get_tsc_hz());   // in init()
 *   lcp_hist_add(st, 0, lcp_hist_log4_bucket(cycles), 1, cycles);
 *
 * Include it only where it is used: the table is a static const array.
 */
#ifndef LCP_HIST_LOG4_H
#define LCP_HIST_LOG4_H

#include <stdint.h>

#define LCP_HIST_LOG4_K_MIN 4
#define LCP_HIST_LOG4_K_MAX 40
#define LCP_HIST_LOG4_BUCKETS 150
#define LCP_HIST_LOG4_N_LE (LCP_HIST_LOG4_BUCKETS - 1)

/* the inclusive upper bounds of the four buckets of 2^k */
#define LCP_HIST_LOG4_LE_K(k)                                                                  \
	((1ull << (k)) + (1ull << ((k)-2)) - 1), ((1ull << (k)) + (2ull << ((k)-2)) - 1),      \
		((1ull << (k)) + (3ull << ((k)-2)) - 1), ((1ull << (k)) + (4ull << ((k)-2)) - 1)

static const uint64_t lcp_hist_log4_le[LCP_HIST_LOG4_N_LE] = {
	15,                     LCP_HIST_LOG4_LE_K(4),  LCP_HIST_LOG4_LE_K(5),  LCP_HIST_LOG4_LE_K(6),
	LCP_HIST_LOG4_LE_K(7),  LCP_HIST_LOG4_LE_K(8),  LCP_HIST_LOG4_LE_K(9),  LCP_HIST_LOG4_LE_K(10),
	LCP_HIST_LOG4_LE_K(11), LCP_HIST_LOG4_LE_K(12), LCP_HIST_LOG4_LE_K(13), LCP_HIST_LOG4_LE_K(14),
	LCP_HIST_LOG4_LE_K(15), LCP_HIST_LOG4_LE_K(16), LCP_HIST_LOG4_LE_K(17), LCP_HIST_LOG4_LE_K(18),
	LCP_HIST_LOG4_LE_K(19), LCP_HIST_LOG4_LE_K(20), LCP_HIST_LOG4_LE_K(21), LCP_HIST_LOG4_LE_K(22),
	LCP_HIST_LOG4_LE_K(23), LCP_HIST_LOG4_LE_K(24), LCP_HIST_LOG4_LE_K(25), LCP_HIST_LOG4_LE_K(26),
	LCP_HIST_LOG4_LE_K(27), LCP_HIST_LOG4_LE_K(28), LCP_HIST_LOG4_LE_K(29), LCP_HIST_LOG4_LE_K(30),
	LCP_HIST_LOG4_LE_K(31), LCP_HIST_LOG4_LE_K(32), LCP_HIST_LOG4_LE_K(33), LCP_HIST_LOG4_LE_K(34),
	LCP_HIST_LOG4_LE_K(35), LCP_HIST_LOG4_LE_K(36), LCP_HIST_LOG4_LE_K(37), LCP_HIST_LOG4_LE_K(38),
	LCP_HIST_LOG4_LE_K(39), LCP_HIST_LOG4_LE_K(40),
};

/* the bucket of d cycles: no search, a bit scan */
static inline __attribute__((always_inline)) unsigned
lcp_hist_log4_bucket(uint64_t d)
{
	unsigned k;

	if (d < (1ull << LCP_HIST_LOG4_K_MIN))
		return 0;
	k = 63u - (unsigned)__builtin_clzll(d);
	if (k > LCP_HIST_LOG4_K_MAX)
		return LCP_HIST_LOG4_BUCKETS - 1;
	return 1 + (k - LCP_HIST_LOG4_K_MIN) * 4 + (unsigned)((d >> (k - 2)) & 3);
}

/* the smallest value of bucket b: bucket b holds [low(b), low(b + 1)), the last
 * one [2^41, inf) */
static inline __attribute__((always_inline)) uint64_t
lcp_hist_log4_low(unsigned b)
{
	unsigned k;

	if (b == 0)
		return 0;
	if (b >= LCP_HIST_LOG4_BUCKETS - 1)
		return 1ull << (LCP_HIST_LOG4_K_MAX + 1);
	k = LCP_HIST_LOG4_K_MIN + (b - 1) / 4;
	return (1ull << k) + ((uint64_t)((b - 1) % 4) << (k - 2));
}

#endif
