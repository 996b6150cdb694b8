/* SPDX-License-Identifier: BSD-3-Clause
 * metrics_track.h — the metrics stage's per-message work, inlined into each
 * process loop (metrics.c, metrics_naive.c): the latency sample and its
 * publication, the symbol table (hash, lookup, insert, the sequence check), the
 * per-connection and first/last bookkeeping.
 */
#ifndef LCP_PLUGIN_METRICS_TRACK_H
#define LCP_PLUGIN_METRICS_TRACK_H

#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>

#include "metrics.h"

/* the bucket of d cycles (lcp/hist_log4.h) */
static __rte_always_inline unsigned
mt_bucket(uint64_t d)
{
	return lcp_hist_log4_bucket(d);
}

/* n latency samples of one rx TSC; c[] is the per-burst local block. The
 * histogram is not added to here: [*lo, *hi] widens to cover the buckets
 * touched, and mt_hist_publish() adds what they gained once per burst. */
static __rte_always_inline void
mt_sample_n(struct metrics_ctx *x, uint64_t rx_tsc, uint64_t now, uint64_t n, uint64_t *c,
	    unsigned *lo, unsigned *hi)
{
	uint64_t d;
	unsigned b;

	if (unlikely(rx_tsc == 0)) {
		c[MT_L(MT_NO_RX_TSC)] += n;
		return;
	}
	if (unlikely(rx_tsc > now)) {
		c[MT_L(MT_LAT_FUTURE)] += n;
		return;
	}
	d = now - rx_tsc;
	b = mt_bucket(d);
	x->hist[b] += n;
	x->hist_sum += d * n;
	if (d > x->lat_max)
		x->lat_max = d;
	if (b < *lo)
		*lo = b;
	if (b > *hi)
		*hi = b;
}

/* one latency sample, for a process loop: the messages cut from one segment
 * carry its rx TSC, so consecutive samples of the same TSC are counted as a
 * run (*run_tsc, *run_n) and judged and bucketed once, by mt_sample_n, when
 * the run ends — and at the burst's end (mt_sample_end). A run starts empty
 * with *run_n == 0. */
static __rte_always_inline void
mt_sample(struct metrics_ctx *x, uint64_t rx_tsc, uint64_t now, uint64_t *run_tsc,
	  uint64_t *run_n, uint64_t *c, unsigned *lo, unsigned *hi)
{
	if (likely(rx_tsc == *run_tsc)) {
		(*run_n)++;
		return;
	}
	if (*run_n != 0)
		mt_sample_n(x, *run_tsc, now, *run_n, c, lo, hi);
	*run_tsc = rx_tsc;
	*run_n = 1;
}

static __rte_always_inline void
mt_sample_end(struct metrics_ctx *x, uint64_t now, uint64_t run_tsc, uint64_t run_n, uint64_t *c,
	      unsigned *lo, unsigned *hi)
{
	if (run_n != 0)
		mt_sample_n(x, run_tsc, now, run_n, c, lo, hi);
}

/* the histogram's buckets lo..hi and its sum catch up with hist[] */
static __rte_always_inline void
mt_hist_publish(struct lcp_stage *st, struct metrics_ctx *x, unsigned lo, unsigned hi)
{
	uint64_t sum = x->hist_sum - x->hist_sum_pub;

	for (unsigned b = lo; b <= hi && b < MT_NB; b++) {
		uint64_t d = x->hist[b] - x->hist_pub[b];

		if (d != 0) {
			lcp_hist_add(st, MT_H_LATENCY, b, d, sum);
			sum = 0;
			x->hist_pub[b] = x->hist[b];
		}
	}
	x->hist_sum_pub = x->hist_sum;
}

/* ---- the symbol table ---- */

/* The home slot of (conn, symbol): Fibonacci hashing — each word multiplied
 * by its own odd constant, the products added, the slot taken from the top
 * bits (x->shift = 64 - log2(slots)). A product's top bits depend on every bit
 * of its word, so symbols such as "SYM00042" that differ only in their last
 * bytes (the high bits of key[0]) spread over the table; the low bits of such
 * a hash would not (B12 found it with a hash taken from the low bits: 100
 * symbols sharing 8 of 8192 slots, ~1,160 instructions per message probing).
 * Not keyed: the feed is the venue's, and a collision costs a probe, never a
 * wrong answer (the whole key is compared). */
static __rte_always_inline uint64_t
mt_hash(uint64_t conn, const uint64_t key[4], uint32_t len, unsigned shift)
{
	uint64_t h = key[0] * 0x9e3779b97f4a7c15ull + key[1] * 0xc2b2ae3d27d4eb4full +
		     (conn * 64 + len) * 0xff51afd7ed558ccdull;

	if (unlikely(len > 16))
		h += key[2] * 0x165667b19e3779f9ull + key[3] * 0xd6e8feb86659fd93ull;
	return h >> shift;
}

/* the entry of (conn, symbol), or the free slot where it belongs (len == 0) */
static __rte_always_inline struct mt_sym *
mt_lookup(struct metrics_ctx *x, uint64_t conn, const uint64_t key[4], uint32_t len)
{
	uint64_t i = mt_hash(conn, key, len, x->shift);
	struct mt_sym *e;

	for (;;) {
		e = &x->tab[i];
		/* keys are zero-padded: a symbol of 16 bytes or fewer is its
		 * first two words */
		if (e->len == 0 ||
		    (e->len == len && e->conn == conn && e->key[0] == key[0] && e->key[1] == key[1] &&
		     (len <= 16 || (e->key[2] == key[2] && e->key[3] == key[3]))))
			return e;
		i = (i + 1) & x->mask;
	}
}

/* a new (conn, symbol) into the free slot e; MT_SYMBOLS or MT_SYMBOL_TABLE_FULL */
static __rte_always_inline unsigned
mt_insert(struct metrics_ctx *x, struct mt_sym *e, uint64_t conn, const uint64_t key[4],
	  uint32_t len, uint64_t seq, uint32_t ep)
{
	/* a free slot: the table always has one (twice as many slots as symbols) */
	if (unlikely(x->n_syms >= x->max_syms))
		return MT_SYMBOL_TABLE_FULL;
	memcpy(e->key, key, sizeof(e->key));
	e->conn = conn;
	e->last = seq;
	e->len = len;
	e->epoch = ep;
	x->n_syms++;
	return MT_SYMBOLS;
}

/* (conn, symbol)'s entry for sequence number seq: MT_N_COUNTERS, with *out set,
 * when it is tracked in the connection's current session; else the outcome
 * already decided (MT_SYMBOLS: a new symbol, seq its start; MT_SYMBOL_TABLE_FULL;
 * MT_SEQ_RESYNCS: the connection re-opened, seq its new start) */
static __rte_always_inline unsigned
mt_entry(struct metrics_ctx *x, uint64_t conn, const uint64_t key[4], uint32_t len,
	 uint64_t seq, struct mt_sym **out)
{
	uint32_t ep = x->epoch[conn % MT_EPOCHS];
	struct mt_sym *e = mt_lookup(x, conn, key, len);

	if (e->len == 0)
		return mt_insert(x, e, conn, key, len, seq, ep);
	if (unlikely(e->epoch != ep)) { /* the connection re-opened */
		e->epoch = ep;
		e->last = seq;
		return MT_SEQ_RESYNCS;
	}
	*out = e;
	return MT_N_COUNTERS;
}

/* seq after e's last number: MT_SEQ_IN_ORDER, MT_SEQ_GAPS (a gap of *missing)
 * or MT_SEQ_DUPS */
static __rte_always_inline unsigned
mt_next(struct mt_sym *e, uint64_t seq, uint64_t *missing)
{
	uint64_t last = e->last;

	if (likely(seq > last)) {
		e->last = seq;
		if (likely(seq - last == 1))
			return MT_SEQ_IN_ORDER;
		*missing = seq - last - 1;
		return MT_SEQ_GAPS;
	}
	return MT_SEQ_DUPS;
}

/* Track sequence number seq of (conn, symbol); returns the outcome's counter
 * (mt_entry's, or mt_next's). */
static __rte_always_inline unsigned
mt_track(struct metrics_ctx *x, uint64_t conn, const uint64_t key[4], uint32_t len,
	 uint64_t seq, uint64_t *missing)
{
	struct mt_sym *e = NULL;
	unsigned r = mt_entry(x, conn, key, len, seq, &e);

	return r != MT_N_COUNTERS ? r : mt_next(e, seq, missing);
}

static __rte_always_inline void
mt_conn_add(struct lcp_stage *st, const struct metrics_ctx *x, uint64_t conn, uint64_t msgs,
	    uint64_t bytes)
{
	unsigned c = conn < x->max_conns ? MT_CONN0_MSGS + 2 * (unsigned)conn : MT_CONN_OTHER_MSGS;

	lcp_count(st, c, msgs);
	lcp_count(st, c + 1, bytes);
}

static __rte_always_inline void
mt_first_last(struct metrics_ctx *x, uint64_t now, uint64_t msgs, uint64_t bytes)
{
	if (unlikely(x->msgs == 0)) {
		x->first_tsc = now;
		x->first_msgs = msgs;
		x->first_bytes = bytes;
	}
	x->last_tsc = now;
}

#endif
