/* SPDX-License-Identifier: BSD-3-Clause
 * metrics_scan — the tick scan of the metrics stage (doc/metrics.md): the symbol
 * and the sequence number of a JSON tick {"s":"SYM00042","n":12345,...} found
 * without a JSON library, in two ways that give the same outcome:
 *
 *   metrics_scan_general  walks the message's strings with memchr: each string
 *                         is skipped whole (escaped quotes respected), a string
 *                         followed by ':' is a key; the first occurrence of each
 *                         wanted key wins, at whatever depth; the scan stops
 *                         once both are found, so padding after them is never
 *                         read
 *   metrics_scan_tick     the known layout first: a tick that opens with
 *                         {"<symbol field>":"<symbol>","<seq field>":<digits>,
 *                         compact, as this project's feeds and most venues' flat
 *                         ticks are, is read with three 16-byte compares (SSE2,
 *                         the x86-64 baseline); anything else — blanks, another
 *                         first key, an escape or no closing quote within the
 *                         symbol's first 16 bytes, fewer than 16 bytes left to
 *                         read at a step, no SSE2 — takes metrics_scan_general
 *
 * Hand-written rather than a JSON library: reading two fields at a known place
 * costs a few compares, a full parse costs a pass over every byte (B13 measured
 * the general walk at ~60 cycles per 64-byte tick). No DPDK, no allocation:
 * tests/unit/test_metrics_json.c compares the two on crafted and mutated
 * messages, and tests/fuzz/fuzz_metrics_json.c on arbitrary ones.
 */
#ifndef METRICS_SCAN_H
#define METRICS_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "metrics_json.h"

#define METRICS_FIELD_MAX 31 /* bytes of a field name */
#define METRICS_SYM_MAX 31   /* bytes of a symbol */

enum { METRICS_SCAN_TICK, METRICS_SCAN_NON_TICK, METRICS_SCAN_BAD };

struct metrics_scan {
	uint32_t sym_len, seq_len;
	char sym_name[METRICS_FIELD_MAX + 1];
	char seq_name[METRICS_FIELD_MAX + 1];
	/* the known layout: {"<sym>":" and ","<seq>": as 16-byte patterns and
	 * the masks of their bytes; fast is off when either is longer */
	bool fast;
	uint8_t pre[16], mid[16];
	uint32_t pre_len, mid_len, pre_mask, mid_mask;
};

static inline void
metrics_scan_init(struct metrics_scan *sc, const char *sym_field, const char *seq_field)
{
	char pre[METRICS_FIELD_MAX + 8], mid[METRICS_FIELD_MAX + 8];
	int np, nm;

	memset(sc, 0, sizeof(*sc));
	snprintf(sc->sym_name, sizeof(sc->sym_name), "%s", sym_field);
	snprintf(sc->seq_name, sizeof(sc->seq_name), "%s", seq_field);
	sc->sym_len = (uint32_t)strlen(sc->sym_name);
	sc->seq_len = (uint32_t)strlen(sc->seq_name);
	np = snprintf(pre, sizeof(pre), "{\"%s\":\"", sc->sym_name);
	nm = snprintf(mid, sizeof(mid), "\",\"%s\":", sc->seq_name);
	sc->fast = np > 0 && np <= 16 && nm > 0 && nm <= 16;
	if (!sc->fast)
		return;
	memcpy(sc->pre, pre, (size_t)np);
	memcpy(sc->mid, mid, (size_t)nm);
	sc->pre_len = (uint32_t)np;
	sc->mid_len = (uint32_t)nm;
	sc->pre_mask = np == 16 ? 0xffffu : (1u << np) - 1;
	sc->mid_mask = nm == 16 ? 0xffffu : (1u << nm) - 1;
}

static inline __attribute__((always_inline)) const uint8_t *
metrics_scan_skip_ws(const uint8_t *p, const uint8_t *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/* an unsigned decimal at p: digits, not followed by a fraction or exponent;
 * the byte after it, or NULL */
static inline __attribute__((always_inline)) const uint8_t *
metrics_scan_uint(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	uint64_t n = 0;
	const uint8_t *p0 = p, *safe;

	/* up to 8 digits at once (SWAR, little-endian): the bytes that are not
	 * digits are found with two subtractions, the digits before the first
	 * of them shifted to the top and combined pairwise (x10, x100, x10^4) */
	if (end - p >= 8) {
		uint64_t w, x, nd;
		unsigned k;

		memcpy(&w, p, 8);
		x = w - 0x3030303030303030ull;
		nd = (w & 0x8080808080808080ull) | (x & 0x8080808080808080ull) |
		     ((x + 0x7676767676767676ull) & 0x8080808080808080ull);
		k = nd ? (unsigned)__builtin_ctzll(nd) >> 3 : 8;
		if (k != 0) {
			x <<= 8 * (8 - k);
			x = x * 10 + (x >> 8);
			x = (((x & 0x000000ff000000ffull) * (100 + (1000000ull << 32))) +
			     (((x >> 16) & 0x000000ff000000ffull) * (1 + (10000ull << 32)))) >> 32;
			n = x;
			p += k;
			if (k < 8)
				goto done;
		}
	}
	safe = end - p0 > 19 ? p0 + 19 : end;
	/* 19 digits cannot overflow 64 bits: no check until then */
	while (p < safe && (unsigned)(*p - '0') <= 9)
		n = n * 10 + (unsigned)(*p++ - '0');
	while (p < end && (unsigned)(*p - '0') <= 9) {
		unsigned d = (unsigned)(*p - '0');

		if (__builtin_expect(n > (UINT64_MAX - d) / 10, 0))
			return NULL;
		n = n * 10 + d;
		p++;
	}
done:
	if (p == p0 || (p < end && (*p == '.' || *p == 'e' || *p == 'E')))
		return NULL;
	*v = n;
	return p;
}

/* the symbol string whose body starts at s into key[4] (zero-padded) and len;
 * the end quote, or NULL (unterminated, empty, longer than METRICS_SYM_MAX) */
static inline __attribute__((always_inline)) const uint8_t *
metrics_scan_symbol(const uint8_t *s, const uint8_t *end, uint64_t key[4], uint32_t *len)
{
	const uint8_t *q = mj_str_end(s, end);
	size_t n;

	if (q == NULL)
		return NULL;
	n = (size_t)(q - s);
	if (n == 0 || n > METRICS_SYM_MAX)
		return NULL;
	key[0] = key[1] = key[2] = key[3] = 0;
	memcpy(key, s, n);
	*len = (uint32_t)n;
	return q;
}

/* the general walk; METRICS_SCAN_TICK with key, len and seq set, or
 * METRICS_SCAN_NON_TICK (a wanted key missing), METRICS_SCAN_BAD (a wanted key
 * whose value is not a symbol string / an unsigned decimal) */
static inline __attribute__((always_inline)) int
metrics_scan_general(const struct metrics_scan *sc, const uint8_t *p, const uint8_t *end,
		     uint64_t key[4], uint32_t *len, uint64_t *seq)
{
	bool have_sym = false, have_seq = false;

	while (p < end) {
		const uint8_t *s, *q, *v;
		size_t klen;

		s = memchr(p, '"', (size_t)(end - p));
		if (s == NULL)
			break;
		s++;
		q = mj_str_end(s, end);
		if (q == NULL)
			break;
		p = q + 1;
		v = metrics_scan_skip_ws(p, end);
		if (v >= end || *v != ':')
			continue; /* a value, not a key */
		klen = (size_t)(q - s);
		v = metrics_scan_skip_ws(v + 1, end);
		if (!have_sym && klen == sc->sym_len && memcmp(s, sc->sym_name, klen) == 0) {
			if (v >= end || *v != '"' || (q = metrics_scan_symbol(v + 1, end, key, len)) == NULL)
				return METRICS_SCAN_BAD;
			p = q + 1;
			have_sym = true;
		} else if (!have_seq && klen == sc->seq_len && memcmp(s, sc->seq_name, klen) == 0) {
			if ((v = metrics_scan_uint(v, end, seq)) == NULL)
				return METRICS_SCAN_BAD;
			p = v;
			have_seq = true;
		} else {
			continue;
		}
		if (have_sym && have_seq)
			return METRICS_SCAN_TICK;
	}
	return METRICS_SCAN_NON_TICK;
}

/* the known layout only: the outcome, or -1 when the message is not in it
 * (or the build has no SSE2) and the general walk must decide */
static inline __attribute__((always_inline)) int
metrics_scan_known(const struct metrics_scan *sc, const uint8_t *p, const uint8_t *end,
		   uint64_t key[4], uint32_t *len, uint64_t *seq)
{
#if defined(__SSE2__)
	const __m128i idx = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
	const uint8_t *s = p + sc->pre_len, *q;
	__m128i v, w, keep;
	unsigned qm, bm, n;

	if (!sc->fast || end - p < (ptrdiff_t)(sc->pre_len + 16))
		return -1;
	v = _mm_loadu_si128((const __m128i *)(const void *)p);
	if (((unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(
		     v, _mm_loadu_si128((const __m128i *)(const void *)sc->pre))) & sc->pre_mask) != sc->pre_mask)
		return -1;
	/* the symbol: its closing quote in the next 16 bytes, no escape before it */
	w = _mm_loadu_si128((const __m128i *)(const void *)s);
	qm = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(w, _mm_set1_epi8('"')));
	bm = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(w, _mm_set1_epi8('\\')));
	if (qm == 0)
		return -1;
	n = (unsigned)__builtin_ctz(qm);
	if (n == 0 || (bm & ((1u << n) - 1)) != 0)
		return -1;
	q = s + n;
	if (end - q < (ptrdiff_t)(sc->mid_len + 16) ||
	    ((unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(
		     _mm_loadu_si128((const __m128i *)(const void *)q),
		     _mm_loadu_si128((const __m128i *)(const void *)sc->mid))) & sc->mid_mask) != sc->mid_mask)
		return -1;
	if (metrics_scan_uint(q + sc->mid_len, end, seq) == NULL)
		return -1; /* not a plain number there (a blank, a sign...): the walk judges */
	keep = _mm_cmplt_epi8(idx, _mm_set1_epi8((char)n));
	_mm_storeu_si128((__m128i *)(void *)key, _mm_and_si128(w, keep));
	key[2] = key[3] = 0;
	*len = n;
	return METRICS_SCAN_TICK;
#else
	(void)sc, (void)p, (void)end, (void)key, (void)len, (void)seq;
	return -1;
#endif
}

/* the known layout, else the general walk: the same outcome (see the top) */
static inline __attribute__((always_inline)) int
metrics_scan_tick(const struct metrics_scan *sc, const uint8_t *p, const uint8_t *end,
		  uint64_t key[4], uint32_t *len, uint64_t *seq)
{
	int r = metrics_scan_known(sc, p, end, key, len, seq);

	return __builtin_expect(r >= 0, 1) ? r : metrics_scan_general(sc, p, end, key, len, seq);
}

#endif
