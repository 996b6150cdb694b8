/* SPDX-License-Identifier: BSD-3-Clause
 * ws_rtt_hist.h — the WebSocket echo RTT probe and its fine log-linear
 * histogram, shared by the ws_rtt stage (plugins/ws_rtt) and B8's
 * kernel-socket client and echo server (tests/bench/b8_*.c), so both sides
 * bucket, rank and report the same way. Header-only, no DPDK, no allocation.
 *
 * Histogram: values in TSC cycles. Below 2^B8_SUB_BITS every value has its own
 * bucket; above, each power of two [2^e, 2^(e+1)) is split into 2^B8_SUB_BITS
 * equal buckets, so a bucket is at most 1/64 (1.6 %) of its values wide.
 * Percentile q of n samples = the sample of rank ceil(q * n) (1-based): the
 * midpoint of its bucket, clamped to the exact min and max. 2^40 cycles
 * (≈ 9 minutes at 2 GHz) and above land in the last bucket.
 *
 * Probe payload (B8_PROBE_MIN..B8_PROBE_MAX bytes, ASCII so it is valid UTF-8
 * for a text frame): "b8 " SEQ(16 hex) " " TSC(16 hex) " " then 'x' padding. */
#ifndef B8_HIST_H
#define B8_HIST_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define B8_SUB_BITS 6u
#define B8_SUB (1u << B8_SUB_BITS)
#define B8_MAX_EXP 40u
#define B8_BUCKETS ((B8_MAX_EXP - B8_SUB_BITS + 2u) * B8_SUB)

struct b8_hist {
	uint64_t n, min, max, sum;
	uint32_t b[B8_BUCKETS];
};

static inline void
b8_hist_reset(struct b8_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

static inline unsigned
b8_hist_index(uint64_t v)
{
	unsigned e, i;

	if (v < B8_SUB)
		return (unsigned)v;
	e = 63u - (unsigned)__builtin_clzll(v);
	if (e > B8_MAX_EXP)
		return B8_BUCKETS - 1;
	i = (e - B8_SUB_BITS + 1u) * B8_SUB + (unsigned)((v >> (e - B8_SUB_BITS)) - B8_SUB);
	return i;
}

/* the lowest value of bucket i, and its width */
static inline uint64_t
b8_hist_lo(unsigned i, uint64_t *width)
{
	unsigned k = i / B8_SUB, s = i % B8_SUB, e;

	if (k == 0) {
		*width = 1;
		return i;
	}
	e = k + B8_SUB_BITS - 1u;
	*width = 1ull << (e - B8_SUB_BITS);
	return (1ull << e) + (uint64_t)s * *width;
}

static inline void
b8_hist_add(struct b8_hist *h, uint64_t v)
{
	h->b[b8_hist_index(v)]++;
	h->n++;
	h->sum += v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

/* percentile q (0 < q <= 1), in cycles; 0 when empty */
static inline double
b8_hist_pct(const struct b8_hist *h, double q)
{
	uint64_t rank, acc = 0;

	if (h->n == 0)
		return 0;
	rank = (uint64_t)(q * (double)h->n + 0.999999);
	if (rank < 1)
		rank = 1;
	if (rank > h->n)
		rank = h->n;
	for (unsigned i = 0; i < B8_BUCKETS; i++) {
		acc += h->b[i];
		if (acc >= rank) {
			uint64_t w, lo = b8_hist_lo(i, &w);
			double v = (double)lo + (double)(w - 1) / 2.0;

			if (v < (double)h->min)
				v = (double)h->min;
			if (v > (double)h->max)
				v = (double)h->max;
			return v;
		}
	}
	return (double)h->max;
}

/* JSON members (no braces): "n","min","max","mean","p50","p90","p99","p99_9"
 * in cycles (p99_9 null below 10,000 samples, BENCHMARKS.md rule 7), then
 * "hist": [[lowest value of the bucket, count], ...] over non-empty buckets */
static inline void
b8_hist_json(FILE *f, const struct b8_hist *h)
{
	int first = 1;

	fprintf(f, "\"n\":%" PRIu64 ",\"min\":%" PRIu64 ",\"max\":%" PRIu64 ",\"mean\":%.1f,", h->n,
		h->n ? h->min : 0, h->max, h->n ? (double)h->sum / (double)h->n : 0.0);
	fprintf(f, "\"p50\":%.1f,\"p90\":%.1f,\"p99\":%.1f,", b8_hist_pct(h, 0.50), b8_hist_pct(h, 0.90),
		b8_hist_pct(h, 0.99));
	if (h->n >= 10000)
		fprintf(f, "\"p99_9\":%.1f,", b8_hist_pct(h, 0.999));
	else
		fprintf(f, "\"p99_9\":null,");
	fprintf(f, "\"sub_bits\":%u,\"hist\":[", B8_SUB_BITS);
	for (unsigned i = 0; i < B8_BUCKETS; i++) {
		uint64_t w;

		if (h->b[i] == 0)
			continue;
		fprintf(f, "%s[%" PRIu64 ",%" PRIu32 "]", first ? "" : ",", b8_hist_lo(i, &w), h->b[i]);
		first = 0;
	}
	fprintf(f, "]");
}

/* ---- the probe payload ---- */
#define B8_PROBE_MIN 40u
#define B8_PROBE_MAX 125u

static inline void
b8_hex16(char *o, uint64_t v)
{
	static const char d[] = "0123456789abcdef";

	for (int i = 15; i >= 0; i--) {
		o[i] = d[v & 15];
		v >>= 4;
	}
}

static inline void
b8_probe_fill(uint8_t *p, unsigned len, uint64_t seq, uint64_t tsc)
{
	char *c = (char *)p;

	memcpy(c, "b8 ", 3);
	b8_hex16(c + 3, seq);
	c[19] = ' ';
	b8_hex16(c + 20, tsc);
	c[36] = ' ';
	memset(c + 37, 'x', len - 37);
}

static inline int
b8_unhex16(const uint8_t *p, uint64_t *v)
{
	uint64_t r = 0;

	for (int i = 0; i < 16; i++) {
		unsigned c = p[i], d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else
			return -1;
		r = (r << 4) | d;
	}
	*v = r;
	return 0;
}

/* 0 and seq/tsc when p holds a probe of len bytes, -1 otherwise */
static inline int
b8_probe_parse(const uint8_t *p, size_t len, uint64_t *seq, uint64_t *tsc)
{
	if (len < B8_PROBE_MIN || memcmp(p, "b8 ", 3) != 0 || p[19] != ' ' || p[36] != ' ')
		return -1;
	if (b8_unhex16(p + 3, seq) < 0 || b8_unhex16(p + 20, tsc) < 0)
		return -1;
	return 0;
}

#endif
