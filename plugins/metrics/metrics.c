/* SPDX-License-Identifier: BSD-3-Clause
 * metrics — measures a `msg` stream in passing (doc/metrics.md):
 *
 *   per connection   messages and bytes, counters conn<i>_msgs / conn<i>_bytes for
 *                    conn_id < max_conns (at most 16), conn_other_* above
 *   per symbol       sequence gaps and duplicates of exchange ticks
 *                    {"s":"SYM0042","n":12345,...}: the symbol and sequence fields are
 *                    found by one scan over the JSON strings (no JSON library), the
 *                    last sequence number per (conn_id, symbol) is kept in an
 *                    open-addressing table. Venue shapes (paths mode, any of the
 *                    options seq_first_field, seq_prev_field, select_field,
 *                    reset_field, or a dotted symbol/seq field): the fields are
 *                    paths from the top level ("data.s", "data.0.seqId") captured
 *                    by one walk (metrics_json.c), messages are selected by a
 *                    field's value, and a sequence may be a range (first, last) or
 *                    a chain (prev, this)
 *   latency          rx TSC (msg->rx_tsc) to this stage, in a log-linear histogram
 *                    of 150 buckets published live as the SDK histogram
 *                    latency_seconds (ABI 2.2: bounds, sum, count, quantiles in
 *                    the report, telemetry and the metrics endpoint); at stop
 *                    p50/p99/p99.9/max are added once (gauges) and one summary
 *                    line is logged
 *
 * Ports: "in" (msg, required); "out" (msg, optional): every message is passed on
 * unchanged, or freed with lcp_msg_free() when "out" is not linked. Nothing is
 * dropped.
 *
 * Cost: one rte_rdtsc() per burst (process() call), counters added once per burst
 * except the histogram bucket (one lcp_count per sample) and the per-connection
 * pair (once per run of messages of one connection). The option "naive" does the
 * same the slow way (rte_rdtsc, lcp_count and a memmem per field for every
 * message) so that the difference can be measured; its results are the same for
 * compact ticks.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_malloc.h>

#include <lcp/lcp.h>

#include <lcp/hist_log4.h>

#include "metrics.h"

enum { MT_P_IN, MT_P_OUT };

static const struct lcp_port_def metrics_ports[] = {
	[MT_P_IN] = { .name = "in", .dir = LCP_PORT_IN, .unit = LCP_UNIT_MSG,
		      .flags = LCP_PORT_F_REQUIRED, .doc = "messages to measure" },
	[MT_P_OUT] = { .name = "out", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_MSG,
		       .flags = LCP_PORT_F_FORWARDS(MT_P_IN), .doc = "the same messages, unchanged; if unlinked they are freed here" },
	LCP_PORT_END,
};

/* ---- counters ---- */


#define MT_CONN(X, i) X(CONN##i##_MSGS, "conn" #i "_msgs") X(CONN##i##_BYTES, "conn" #i "_bytes")

/* The block TICKS..LAT_FUTURE is accumulated per burst in a local array indexed
 * from MT_TICKS: keep it contiguous. */
#define METRICS_COUNTERS(X)                                                    \
	X(MSGS, "msgs")                                                        \
	X(BYTES, "bytes")                                                      \
	MT_CONN(X, 0) MT_CONN(X, 1) MT_CONN(X, 2) MT_CONN(X, 3)                \
	MT_CONN(X, 4) MT_CONN(X, 5) MT_CONN(X, 6) MT_CONN(X, 7)                \
	MT_CONN(X, 8) MT_CONN(X, 9) MT_CONN(X, 10) MT_CONN(X, 11)              \
	MT_CONN(X, 12) MT_CONN(X, 13) MT_CONN(X, 14) MT_CONN(X, 15)            \
	X(CONN_OTHER_MSGS, "conn_other_msgs")                                  \
	X(CONN_OTHER_BYTES, "conn_other_bytes")                                \
	X(TICKS, "ticks")                                                      \
	X(NON_TICK, "non_tick")                                                \
	X(BAD_TICK, "bad_tick")                                                \
	X(SYMBOLS, "symbols")                                                  \
	X(SYMBOL_TABLE_FULL, "symbol_table_full")                              \
	X(SEQ_IN_ORDER, "seq_in_order")                                        \
	X(SEQ_GAPS, "seq_gaps")                                                \
	X(GAP_EVENTS, "gap_events")                                            \
	X(SEQ_DUPS, "seq_dups")                                                \
	X(SEQ_RESYNCS, "seq_resyncs")                                          \
	X(SESSIONS, "sessions")                                                \
	X(NO_RX_TSC, "no_rx_tsc")                                              \
	X(LAT_FUTURE, "lat_future")                                            \
	X(UNSELECTED, "unselected")                                            \
	X(SEQ_RESETS, "seq_resets")                                            \
	X(LOSS_EVENTS, "loss_events")                                          \
	X(MSGS_LOST_UPSTREAM, "msgs_lost_upstream")                            \
	X(LAT_SAMPLES, "lat_samples")                                          \
	X(LAT_P50_NS, "lat_p50_ns")                                            \
	X(LAT_P99_NS, "lat_p99_ns")                                            \
	X(LAT_P999_NS, "lat_p999_ns")                                          \
	X(LAT_MAX_NS, "lat_max_ns")                                            \
	X(NAIVE_FIELD_S, "naive_field_s")                                      \
	X(NAIVE_FIELD_N, "naive_field_n")                                      \
	X(NAIVE_FIELD_P, "naive_field_p")                                      \
	X(NAIVE_FIELD_Q, "naive_field_q")                                      \
	X(NAIVE_FIELD_T, "naive_field_t")

enum {
#define X(e, s) MT_##e,
	METRICS_COUNTERS(X)
#undef X
	MT_N_COUNTERS
};

static const char *const metrics_counters[] = {
#define X(e, s) s,
	METRICS_COUNTERS(X)
#undef X
	NULL,
};

#define MT_NB 150                                     /* histogram buckets */
#define MT_NLOCAL (MT_LAT_FUTURE - MT_TICKS + 1)      /* per-burst local block */
#define MT_L(c) ((c) - MT_TICKS)                      /* its local index */

/* the histogram's buckets: lcp/hist_log4.h (bounds in TSC cycles) */
_Static_assert(MT_NB == LCP_HIST_LOG4_BUCKETS, "the log4 layout's buckets");

enum { MT_H_LATENCY };
static const struct lcp_hist_def metrics_hists[] = {
	[MT_H_LATENCY] = { .name = "latency_seconds",
			   .help = "time from the rx TSC of the frame that completed a message to the metrics stage",
			   .le = lcp_hist_log4_le, .n_le = LCP_HIST_LOG4_N_LE },
	{ .name = NULL },
};
_Static_assert(MT_CONN15_BYTES - MT_CONN0_MSGS == 2 * MT_MAX_CONNS - 1, "conn counters in pairs");
_Static_assert(MT_LAT_FUTURE - MT_TICKS == 12, "the per-burst block is contiguous");

/* ---- the context ---- */

/* Sessions: a msg flagged LCP_MSG_F_SESSION_START (the ws stage sets it on the
 * first message after each open) starts a new epoch for its connection; a
 * tracked symbol whose epoch is older takes the next sequence number as its new
 * start (seq_resyncs) instead of judging it against the last session's. Kept
 * per conn_id % MT_EPOCHS: connections sharing a slot resync together. */
#define MT_EPOCHS 64

/* One tracked (conn_id, symbol): a cache line. len == 0: free slot. */
struct mt_sym {
	uint64_t key[4]; /* the symbol's bytes, zero-padded */
	uint64_t conn;
	uint64_t last;   /* last sequence number seen */
	uint32_t len;
	uint32_t epoch;  /* session of the connection that set last */
	uint64_t pad2_;
};
_Static_assert(sizeof(struct mt_sym) == 64, "one cache line per symbol");

struct metrics_ctx {
	unsigned loss_logged;   /* LCP_MSG_F_LOSS events logged (at most 5) */
	/* read per message */
	bool naive;
	bool out_linked;
	uint32_t max_conns;
	uint32_t sample;
	uint32_t sample_left;  /* messages until the next sample */
	struct metrics_scan scan; /* the tick scan's field names and patterns */
	struct mt_sym *tab;
	uint64_t mask;         /* table slots - 1 (a power of two, >= 2 x symbols) */
	uint32_t epoch[MT_EPOCHS]; /* session count per conn_id % MT_EPOCHS */
	uint32_t n_syms, max_syms;
	uint64_t lat_max;      /* cycles */
	uint64_t hist[MT_NB];  /* the same as the histogram's buckets, for the quantiles */

	/* totals for the summary at stop (counters are write-only for a plugin) */
	uint64_t msgs, bytes, gaps, gap_events, dups, sessions, resyncs;
	uint64_t first_tsc, last_tsc;    /* TSC of the first and last burst */
	uint64_t first_msgs, first_bytes; /* what arrived with the first burst */
	uint64_t hz;
	/* what the histogram latency_seconds has: hist[] and hist_sum at the last burst's end */
	uint64_t hist_pub[MT_NB];
	uint64_t hist_sum, hist_sum_pub; /* the samples' sum, cycles */
	char naive_pat[5][MT_FIELD_MAX + 4]; /* naive: "\"s\":" ... */
	size_t naive_pat_len[5];

	/* paths mode (mt_pathconf): read per message when paths is set */
	bool paths;
	bool has_lo, has_sel, has_reset;
	unsigned seq_mode;
	unsigned sl_sym, sl_seq, sl_lo, sl_sel, sl_reset; /* capture slots */
	struct mt_values sel, reset;
	struct metrics_json_paths pj;
	uint64_t unselected, seq_resets;
};

/* ---- the latency histogram ----
 * Bucket 0: [0, 16) cycles. Buckets 1..148: for k = 4..40 and s = 0..3,
 * b = 1 + 4(k-4) + s holds [2^k + s 2^(k-2), 2^k + (s+1) 2^(k-2)) cycles: four
 * linear steps per power of two, each at most 25% of its lower bound wide.
 * Bucket 149: >= 2^41 cycles (about 12 minutes at 3 GHz). */
#define MT_K_MIN LCP_HIST_LOG4_K_MIN
#define MT_K_MAX LCP_HIST_LOG4_K_MAX

static __rte_always_inline unsigned
mt_bucket(uint64_t d)
{
	return lcp_hist_log4_bucket(d);
}

/* exclusive upper bound of bucket b in cycles; UINT64_MAX for the last one */
static uint64_t
mt_bucket_upper(unsigned b)
{
	unsigned k, s;

	if (b == 0)
		return 1ull << MT_K_MIN;
	if (b >= MT_NB - 1)
		return UINT64_MAX;
	k = MT_K_MIN + (b - 1) / 4;
	s = (b - 1) % 4;
	return (1ull << k) + ((uint64_t)(s + 1) << (k - 2));
}

static uint64_t
mt_ns(const struct metrics_ctx *x, uint64_t cycles)
{
	return (uint64_t)((double)cycles * 1e9 / (double)x->hz + 0.5);
}

/* LCP_MSG_F_LOSS: the producer dropped m->lost messages of this connection
 * before m: counted (the view from here on is incomplete); the first few
 * logged with the connection */
static __rte_noinline void
mt_loss(struct lcp_stage *st, struct metrics_ctx *x, const struct lcp_msg *m)
{
	lcp_count(st, MT_LOSS_EVENTS, 1);
	lcp_count(st, MT_MSGS_LOST_UPSTREAM, m->lost);
	if (x->loss_logged < 5) {
		x->loss_logged++;
		lcp_log(st, LCP_LOG_WARNING, "conn %" PRIu64 ": %u message(s) dropped upstream before this one "
			"(loss_events, msgs_lost_upstream)%s", m->conn_id, m->lost,
			x->loss_logged == 5 ? "; not logged again" : "");
	}
}

/* one latency sample; c[] is the per-burst local block. The histogram is not
 * added to here: [*lo, *hi] widens to cover the buckets touched, and
 * mt_hist_publish() adds what they gained once per burst. */
static __rte_always_inline void
mt_sample(struct metrics_ctx *x, uint64_t rx_tsc, uint64_t now, uint64_t *c, unsigned *lo,
	  unsigned *hi)
{
	uint64_t d;
	unsigned b;

	if (unlikely(rx_tsc == 0)) {
		c[MT_L(MT_NO_RX_TSC)]++;
		return;
	}
	if (unlikely(rx_tsc > now)) {
		c[MT_L(MT_LAT_FUTURE)]++;
		return;
	}
	d = now - rx_tsc;
	b = mt_bucket(d);
	x->hist[b]++;
	x->hist_sum += d;
	if (d > x->lat_max)
		x->lat_max = d;
	if (b < *lo)
		*lo = b;
	if (b > *hi)
		*hi = b;
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

static __rte_always_inline uint64_t
mt_hash(uint64_t conn, const uint64_t key[4], uint32_t len)
{
	uint64_t h = (conn + len) * 0x9e3779b97f4a7c15ull;

	for (unsigned i = 0; i < (len + 7) / 8; i++) {
		h ^= key[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	/* MurmurHash3's fmix64: the slot is taken from the low bits, and symbols
	 * such as "SYM00042" differ only in their last bytes, the high bits of
	 * key[0]; without a full finaliser 100 of them shared 8 of 8192 slots (B12
	 * found it: ~1,160 instructions per message spent probing) */
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 33);
}

/* the entry of (conn, symbol), or the free slot where it belongs (len == 0) */
static __rte_always_inline struct mt_sym *
mt_lookup(struct metrics_ctx *x, uint64_t conn, const uint64_t key[4], uint32_t len)
{
	uint64_t i = mt_hash(conn, key, len) & x->mask;
	struct mt_sym *e;

	for (;;) {
		e = &x->tab[i];
		if (e->len == 0 ||
		    (e->len == len && e->conn == conn && e->key[0] == key[0] && e->key[1] == key[1] &&
		     e->key[2] == key[2] && e->key[3] == key[3]))
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

/* Track sequence number seq of (conn, symbol); returns the outcome's counter
 * (MT_SYMBOLS: a new symbol, MT_SEQ_IN_ORDER, MT_SEQ_GAPS: a gap of *missing,
 * MT_SEQ_DUPS, MT_SEQ_RESYNCS: first tick of a new session, MT_SYMBOL_TABLE_FULL). */
static __rte_always_inline unsigned
mt_track(struct metrics_ctx *x, uint64_t conn, const uint64_t key[4], uint32_t len,
	 uint64_t seq, uint64_t *missing)
{
	uint64_t i = mt_hash(conn, key, len) & x->mask;
	uint32_t ep = x->epoch[conn % MT_EPOCHS];
	struct mt_sym *e;

	for (;;) {
		e = &x->tab[i];
		if (e->len == 0)
			break;
		/* keys are zero-padded: a symbol of 16 bytes or fewer is its
		 * first two words */
		if (e->len == len && e->conn == conn && e->key[0] == key[0] && e->key[1] == key[1] &&
		    (len <= 16 || (e->key[2] == key[2] && e->key[3] == key[3]))) {
			uint64_t last = e->last;

			if (unlikely(e->epoch != ep)) { /* the connection re-opened */
				e->epoch = ep;
				e->last = seq;
				return MT_SEQ_RESYNCS;
			}
			if (likely(seq > last)) {
				e->last = seq;
				if (likely(seq - last == 1))
					return MT_SEQ_IN_ORDER;
				*missing = seq - last - 1;
				return MT_SEQ_GAPS;
			}
			return MT_SEQ_DUPS;
		}
		i = (i + 1) & x->mask;
	}
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

/* paths mode: as mt_track, for a sequence that is a number (seq), a range
 * (lo = its first id, seq its last) or a chain (lo = the previous message's
 * number); reset: a snapshot that restarts the sequence (MT_SEQ_RESETS). */
static __rte_always_inline unsigned
mt_track_paths(struct metrics_ctx *x, uint64_t conn, const uint64_t key[4], uint32_t len,
	       uint64_t seq, uint64_t lo, bool reset, uint64_t *missing)
{
	uint32_t ep = x->epoch[conn % MT_EPOCHS];
	struct mt_sym *e = mt_lookup(x, conn, key, len);
	uint64_t last;

	if (e->len == 0)
		return mt_insert(x, e, conn, key, len, seq, ep);
	last = e->last;
	if (unlikely(e->epoch != ep)) {
		e->epoch = ep;
		e->last = seq;
		return MT_SEQ_RESYNCS;
	}
	if (unlikely(reset)) {
		e->last = seq;
		return MT_SEQ_RESETS;
	}
	switch (x->seq_mode) {
	case MT_SEQ_RANGE: /* lo <= seq */
		if (likely(lo > last)) {
			e->last = seq;
			if (likely(lo - last == 1))
				return MT_SEQ_IN_ORDER;
			*missing = lo - last - 1;
			return MT_SEQ_GAPS;
		}
		if (seq > last)
			e->last = seq; /* an overlap: some ids again, some new */
		return MT_SEQ_DUPS;
	case MT_SEQ_PREV:
		if (likely(lo == last)) {
			e->last = seq;
			return MT_SEQ_IN_ORDER;
		}
		if (seq <= last)
			return MT_SEQ_DUPS;
		e->last = seq;
		*missing = 1; /* the chain broke: one message or more */
		return MT_SEQ_GAPS;
	default:
		if (likely(seq > last)) {
			e->last = seq;
			if (likely(seq - last == 1))
				return MT_SEQ_IN_ORDER;
			*missing = seq - last - 1;
			return MT_SEQ_GAPS;
		}
		return MT_SEQ_DUPS;
	}
}

/* ---- paths mode: one message ---- */

/* a captured number: a JSON number or a string of digits, unsigned, integral */
static __rte_always_inline bool
mt_span_uint(const struct metrics_json_span *sp, uint64_t *v)
{
	const uint8_t *end = sp->p + sp->len;

	if (sp->kind != METRICS_JSON_LITERAL && sp->kind != METRICS_JSON_STRING)
		return false;
	return metrics_scan_uint(sp->p, end, v) == end;
}

/* a captured symbol: a string (or a number) of 1 .. 31 bytes */
static __rte_always_inline bool
mt_span_symbol(const struct metrics_json_span *sp, uint64_t key[4], uint32_t *len)
{
	if ((sp->kind != METRICS_JSON_STRING && sp->kind != METRICS_JSON_LITERAL) || sp->len == 0 ||
	    sp->len > METRICS_SYM_MAX)
		return false;
	key[0] = key[1] = key[2] = key[3] = 0;
	memcpy(key, sp->p, sp->len);
	*len = sp->len;
	return true;
}

static __rte_always_inline bool
mt_span_match(const struct mt_values *v, const struct metrics_json_span *sp)
{
	if (sp->kind != METRICS_JSON_STRING && sp->kind != METRICS_JSON_LITERAL)
		return false;
	for (unsigned i = 0; i < v->n; i++) {
		if ((v->prefix[i] ? sp->len >= v->len[i] : sp->len == v->len[i]) &&
		    memcmp(sp->p, v->buf + v->off[i], v->len[i]) == 0)
			return true;
	}
	return false;
}

/* classify and track one message; c[] is the per-burst block, ext[0]
 * unselected, ext[1] seq_resets */
static __rte_always_inline void
mt_paths_msg(struct metrics_ctx *x, const struct lcp_msg *m, uint64_t *c, uint64_t *ext)
{
	struct metrics_json_span sp[METRICS_JSON_MAX_PATHS];
	uint64_t key[4], seq = 0, lo = 0, missing = 0;
	uint32_t len = 0;
	bool reset = false;
	unsigned r;

	metrics_json_walk(&x->pj, m->data, m->data + m->len, sp);
	if (x->has_sel && !mt_span_match(&x->sel, &sp[x->sl_sel])) {
		ext[0]++;
		return;
	}
	if (x->has_reset)
		reset = mt_span_match(&x->reset, &sp[x->sl_reset]);
	if (sp[x->sl_sym].kind == METRICS_JSON_NONE || sp[x->sl_seq].kind == METRICS_JSON_NONE ||
	    (x->has_lo && !reset && sp[x->sl_lo].kind == METRICS_JSON_NONE)) {
		/* selected but incomplete is malformed; unselected traffic is not a tick */
		c[MT_L(x->has_sel ? MT_BAD_TICK : MT_NON_TICK)]++;
		return;
	}
	if (!mt_span_symbol(&sp[x->sl_sym], key, &len) || !mt_span_uint(&sp[x->sl_seq], &seq) ||
	    (x->has_lo && !reset &&
	     (!mt_span_uint(&sp[x->sl_lo], &lo) || (x->seq_mode == MT_SEQ_RANGE && lo > seq)))) {
		c[MT_L(MT_BAD_TICK)]++;
		return;
	}
	c[MT_L(MT_TICKS)]++;
	r = mt_track_paths(x, m->conn_id, key, len, seq, lo, reset, &missing);
	if (r == MT_SEQ_RESETS) {
		ext[1]++;
		return;
	}
	c[MT_L(r)]++;
	if (unlikely(r == MT_SEQ_GAPS)) {
		c[MT_L(MT_GAP_EVENTS)]++;
		c[MT_L(MT_SEQ_GAPS)] += missing - 1;
	}
}

/* ---- process ---- */

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

/* one burst; paths is a constant: the default (scan) and the paths mode each get
 * their own copy of the loop */
static __rte_always_inline void
metrics_burst(struct lcp_stage *st, struct metrics_ctx *x, void **objs, unsigned n, const bool paths)
{
	uint64_t now = rte_rdtsc(); /* once per burst */
	uint64_t c[MT_NLOCAL] = { 0 };
	uint64_t ext[2] = { 0, 0 };
	uint64_t bytes = 0, run_conn = 0, run_msgs = 0, run_bytes = 0;
	unsigned lo = MT_NB, hi = 0; /* histogram buckets touched */

	for (unsigned i = 0; i < n; i++) {
		const struct lcp_msg *m = objs[i];
		uint64_t key[4], seq = 0, missing = 0;
		uint32_t len = 0;
		unsigned r;

		bytes += m->len;
		if (unlikely(m->flags & LCP_MSG_F_SESSION_START)) {
			x->epoch[m->conn_id % MT_EPOCHS]++;
			c[MT_L(MT_SESSIONS)]++;
		}
		if (unlikely(m->flags & LCP_MSG_F_LOSS))
			mt_loss(st, x, m);
		if (m->conn_id != run_conn) { /* per-connection counts, per run */
			if (run_msgs != 0)
				mt_conn_add(st, x, run_conn, run_msgs, run_bytes);
			run_conn = m->conn_id;
			run_msgs = run_bytes = 0;
		}
		run_msgs++;
		run_bytes += m->len;

		if (--x->sample_left == 0) {
			x->sample_left = x->sample;
			mt_sample(x, m->rx_tsc, now, c, &lo, &hi);
		}

		if (paths) {
			mt_paths_msg(x, m, c, ext);
			continue;
		}
		r = m->len != 0 ? metrics_scan_tick(&x->scan, m->data, m->data + m->len, key, &len, &seq)
				: METRICS_SCAN_NON_TICK;
		if (unlikely(r != METRICS_SCAN_TICK)) {
			c[MT_L(r == METRICS_SCAN_BAD ? MT_BAD_TICK : MT_NON_TICK)]++;
			continue;
		}
		c[MT_L(MT_TICKS)]++;
		r = mt_track(x, m->conn_id, key, len, seq, &missing);
		c[MT_L(r)]++;
		if (unlikely(r == MT_SEQ_GAPS)) {
			c[MT_L(MT_GAP_EVENTS)]++;
			c[MT_L(MT_SEQ_GAPS)] += missing - 1; /* the ++ above counted 1 */
		}
	}
	if (run_msgs != 0)
		mt_conn_add(st, x, run_conn, run_msgs, run_bytes);
	mt_hist_publish(st, x, lo, hi);
	lcp_count(st, MT_MSGS, n);
	lcp_count(st, MT_BYTES, bytes);
	for (unsigned k = 0; k < MT_NLOCAL; k++)
		if (c[k] != 0)
			lcp_count(st, MT_TICKS + k, c[k]);

	mt_first_last(x, now, n, bytes);
	x->msgs += n;
	x->bytes += bytes;
	x->gaps += c[MT_L(MT_SEQ_GAPS)];
	x->gap_events += c[MT_L(MT_GAP_EVENTS)];
	x->dups += c[MT_L(MT_SEQ_DUPS)];
	x->sessions += c[MT_L(MT_SESSIONS)];
	x->resyncs += c[MT_L(MT_SEQ_RESYNCS)];
	if (paths) {
		if (ext[0] != 0)
			lcp_count(st, MT_UNSELECTED, ext[0]);
		if (ext[1] != 0)
			lcp_count(st, MT_SEQ_RESETS, ext[1]);
		x->unselected += ext[0];
		x->seq_resets += ext[1];
	}
}

static void
metrics_process_fast(struct lcp_stage *st, struct metrics_ctx *x, void **objs, unsigned n)
{
	metrics_burst(st, x, objs, n, false);
}

static __rte_noinline void
metrics_process_paths(struct lcp_stage *st, struct metrics_ctx *x, void **objs, unsigned n)
{
	metrics_burst(st, x, objs, n, true);
}

/* naive: what the fast path avoids — a TSC read, counter adds and five memmem
 * scans for every message, strtoull on a copy. Expects compact ticks
 * ("s":"...", no blanks around the colon); the same counters result. */
static const char *const mt_naive_fixed[3] = { "p", "q", "t" };

static void
metrics_process_naive(struct lcp_stage *st, struct metrics_ctx *x, void **objs, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		const struct lcp_msg *m = objs[i];
		uint64_t now = rte_rdtsc();
		uint64_t c[MT_NLOCAL] = { 0 };
		const uint8_t *f[5];
		uint64_t key[4], seq = 0, missing = 0;
		uint32_t len = 0;
		unsigned r;

		lcp_count(st, MT_MSGS, 1);
		lcp_count(st, MT_BYTES, m->len);
		if (m->flags & LCP_MSG_F_SESSION_START) {
			x->epoch[m->conn_id % MT_EPOCHS]++;
			c[MT_L(MT_SESSIONS)]++;
		}
		if (m->flags & LCP_MSG_F_LOSS)
			mt_loss(st, x, m);
		mt_conn_add(st, x, m->conn_id, 1, m->len);
		if (--x->sample_left == 0) {
			unsigned lo = MT_NB, hi = 0;

			x->sample_left = x->sample;
			mt_sample(x, m->rx_tsc, now, c, &lo, &hi);
			mt_hist_publish(st, x, lo, hi);
		}
		for (unsigned k = 0; k < 5; k++) {
			f[k] = m->len ? memmem(m->data, m->len, x->naive_pat[k], x->naive_pat_len[k]) : NULL;
			if (f[k] != NULL)
				lcp_count(st, MT_NAIVE_FIELD_S + k, 1);
		}
		if (f[0] == NULL || f[1] == NULL) {
			c[MT_L(MT_NON_TICK)]++;
		} else {
			const uint8_t *end = m->data + m->len;
			const uint8_t *s = f[0] + x->naive_pat_len[0];
			const uint8_t *v = f[1] + x->naive_pat_len[1];
			char buf[24];
			size_t nb = RTE_MIN((size_t)(end - v), sizeof(buf) - 1);
			char *ep;

			memcpy(buf, v, nb);
			buf[nb] = '\0';
			errno = 0;
			seq = strtoull(buf, &ep, 10);
			if (s >= end || *s != '"' || metrics_scan_symbol(s + 1, end, key, &len) == NULL ||
			    !(buf[0] >= '0' && buf[0] <= '9') || errno == ERANGE || *ep == '.' ||
			    *ep == 'e' || *ep == 'E') {
				c[MT_L(MT_BAD_TICK)]++;
			} else {
				c[MT_L(MT_TICKS)]++;
				r = mt_track(x, m->conn_id, key, len, seq, &missing);
				c[MT_L(r)]++;
				if (r == MT_SEQ_GAPS) {
					c[MT_L(MT_GAP_EVENTS)]++;
					c[MT_L(MT_SEQ_GAPS)] += missing - 1;
				}
			}
		}
		for (unsigned k = 0; k < MT_NLOCAL; k++)
			if (c[k] != 0)
				lcp_count(st, MT_TICKS + k, c[k]);
		mt_first_last(x, now, 1, m->len);
		x->msgs++;
		x->bytes += m->len;
		x->gaps += c[MT_L(MT_SEQ_GAPS)];
		x->gap_events += c[MT_L(MT_GAP_EVENTS)];
		x->dups += c[MT_L(MT_SEQ_DUPS)];
		x->sessions += c[MT_L(MT_SESSIONS)];
		x->resyncs += c[MT_L(MT_SEQ_RESYNCS)];
	}
}

static void
metrics_process(struct lcp_stage *st, void *ctx, unsigned port, void **objs, unsigned n)
{
	struct metrics_ctx *x = ctx;

	RTE_SET_USED(port); /* one input */
	if (likely(!x->naive)) {
		if (!x->paths)
			metrics_process_fast(st, x, objs, n);
		else
			metrics_process_paths(st, x, objs, n);
	} else {
		metrics_process_naive(st, x, objs, n);
	}
	if (x->out_linked)
		lcp_emit(st, MT_P_OUT, objs, n);
	else
		lcp_objs_free(LCP_UNIT_MSG, objs, n);
}

/* ---- init, stop, fini ---- */

static void
mt_log_buckets(struct lcp_stage *st, const struct metrics_ctx *x)
{
	char line[512];
	int o = 0;

	lcp_log(st, LCP_LOG_INFO,
		"latency histogram latency_seconds: buckets b000..b%03u, exclusive upper bounds in ns at a %.3f GHz TSC (bucket 0 is below %u cycles, bucket %u is 2^%u cycles and more):",
		MT_NB - 1, (double)x->hz / 1e9, 1u << MT_K_MIN, MT_NB - 1, MT_K_MAX + 1);
	for (unsigned b = 0; b < MT_NB; b++) {
		uint64_t u = mt_bucket_upper(b);

		if (u == UINT64_MAX)
			o += snprintf(line + o, sizeof(line) - (size_t)o, " b%03u:inf", b);
		else
			o += snprintf(line + o, sizeof(line) - (size_t)o, " b%03u:<%" PRIu64, b,
				      (uint64_t)((double)u * 1e9 / (double)x->hz + 0.999999));
		if (b % 10 == 9 || b == MT_NB - 1) {
			lcp_log(st, LCP_LOG_INFO, " %s", line);
			o = 0;
		}
	}
}

static int
metrics_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	const struct metrics_conf *c = conf;
	struct metrics_ctx *x;
	uint64_t slots = 1;

	x = rte_zmalloc_socket("metrics", sizeof(*x), RTE_CACHE_LINE_SIZE, lcp_stage_socket(st));
	if (x == NULL) {
		lcp_log(st, LCP_LOG_ERR, "cannot allocate the context on socket %d",
			lcp_stage_socket(st));
		return -ENOMEM;
	}
	while (slots < 2 * (uint64_t)c->symbols)
		slots <<= 1;
	x->tab = rte_zmalloc_socket("metrics_symbols", slots * sizeof(struct mt_sym),
				    RTE_CACHE_LINE_SIZE, lcp_stage_socket(st));
	if (x->tab == NULL) {
		lcp_log(st, LCP_LOG_ERR, "cannot allocate the symbol table (%" PRIu64 " slots, %" PRIu64 " bytes) on socket %d",
			slots, slots * sizeof(struct mt_sym), lcp_stage_socket(st));
		rte_free(x);
		return -ENOMEM;
	}
	x->mask = slots - 1;
	x->max_syms = c->symbols;
	x->naive = c->naive;
	x->out_linked = lcp_port_is_linked(st, MT_P_OUT);
	x->max_conns = c->max_conns;
	x->sample = c->sample;
	x->sample_left = 1; /* the first message is sampled */
	metrics_scan_init(&x->scan, c->symbol_field, c->seq_field);
	for (unsigned k = 0; k < 5; k++) {
		const char *f = k == 0 ? c->symbol_field : k == 1 ? c->seq_field : mt_naive_fixed[k - 2];

		snprintf(x->naive_pat[k], sizeof(x->naive_pat[k]), "\"%s\":", f);
		x->naive_pat_len[k] = strlen(x->naive_pat[k]);
	}
	x->hz = rte_get_tsc_hz();
	if (mt_paths_wanted(c)) {
		struct mt_pathconf pc;
		char msg[256];
		static const char *const modes[] = { [MT_SEQ_PLAIN] = "",
						     [MT_SEQ_RANGE] = "a range from",
						     [MT_SEQ_PREV] = "a chain after" };

		if (mt_paths_build(c, &pc, msg, sizeof(msg)) != 0) { /* validate() passed it */
			lcp_log(st, LCP_LOG_ERR, "%s", msg);
			rte_free(x->tab);
			rte_free(x);
			return -EINVAL;
		}
		x->paths = true;
		x->pj = pc.pj;
		x->seq_mode = pc.seq_mode;
		x->sl_sym = pc.slot[MT_PATH_SYM];
		x->sl_seq = pc.slot[MT_PATH_SEQ];
		x->has_lo = pc.path[MT_PATH_LO] != NULL;
		x->sl_lo = pc.slot[MT_PATH_LO];
		x->has_sel = pc.path[MT_PATH_SEL] != NULL;
		x->sl_sel = pc.slot[MT_PATH_SEL];
		x->sel = pc.sel;
		x->has_reset = pc.path[MT_PATH_RESET] != NULL;
		x->sl_reset = pc.slot[MT_PATH_RESET];
		x->reset = pc.reset;
		if (x->has_lo)
			snprintf(msg, sizeof(msg), " (%s %s)", modes[x->seq_mode], pc.path[MT_PATH_LO]);
		else
			msg[0] = '\0';
		lcp_log(st, LCP_LOG_INFO,
			"paths from the top level: symbol %s, sequence %s%s; ticks: %s%s%s; restarts: %s%s%s",
			c->symbol_field, c->seq_field, msg, x->has_sel ? c->select_field : "every message",
			x->has_sel ? " = " : "", x->has_sel ? c->select_value : "",
			x->has_reset ? c->reset_field : "new sessions only", x->has_reset ? " = " : "",
			x->has_reset ? c->reset_value : "");
	}
	lcp_hist_set_scale(st, MT_H_LATENCY, 1.0 / (double)x->hz); /* exported in seconds */
	if (c->log_buckets)
		mt_log_buckets(st, x);
	*ctx = x;
	return 0;
}

static uint64_t
mt_quantile(const struct metrics_ctx *x, uint64_t total, double q)
{
	uint64_t rank = (uint64_t)((double)total * q), cum = 0;

	if ((double)rank < (double)total * q)
		rank++; /* ceil */
	if (rank == 0)
		rank = 1;
	for (unsigned b = 0; b < MT_NB; b++) {
		cum += x->hist[b];
		if (cum >= rank)
			return RTE_MIN(mt_bucket_upper(b), x->lat_max);
	}
	return x->lat_max;
}

static void
mt_fmt_rate(char *buf, size_t n, double v, const char *unit)
{
	if (v >= 1e9)
		snprintf(buf, n, "%.2f G%s", v / 1e9, unit);
	else if (v >= 1e6)
		snprintf(buf, n, "%.2f M%s", v / 1e6, unit);
	else if (v >= 1e3)
		snprintf(buf, n, "%.2f k%s", v / 1e3, unit);
	else
		snprintf(buf, n, "%.0f %s", v, unit);
}

/* stop: the quantiles become gauges (added once, 0 until now) and one line */
static void
metrics_stop(struct lcp_stage *st, void *ctx)
{
	struct metrics_ctx *x = ctx;
	uint64_t total = 0, p50 = 0, p99 = 0, p999 = 0, pmax = 0;
	char rate[48] = "n/a", mbs[32] = "n/a", sess[80], pth[80] = "";

	for (unsigned b = 0; b < MT_NB; b++)
		total += x->hist[b];
	if (total > 0) {
		p50 = mt_ns(x, mt_quantile(x, total, 0.50));
		p99 = mt_ns(x, mt_quantile(x, total, 0.99));
		p999 = mt_ns(x, mt_quantile(x, total, 0.999));
		pmax = mt_ns(x, x->lat_max);
	}
	lcp_count(st, MT_LAT_SAMPLES, total);
	lcp_count(st, MT_LAT_P50_NS, p50);
	lcp_count(st, MT_LAT_P99_NS, p99);
	lcp_count(st, MT_LAT_P999_NS, p999);
	lcp_count(st, MT_LAT_MAX_NS, pmax);

	/* rates over (first burst, last burst]: what arrived after the first one */
	if (x->last_tsc > x->first_tsc) {
		double secs = (double)(x->last_tsc - x->first_tsc) / (double)x->hz;

		mt_fmt_rate(rate, sizeof(rate), (double)(x->msgs - x->first_msgs) / secs, "msg/s");
		snprintf(mbs, sizeof(mbs), "%.1f", (double)(x->bytes - x->first_bytes) / secs / 1e6);
	}
	snprintf(sess, sizeof(sess), ", sessions %" PRIu64 " (sequences restarted %" PRIu64 ")", x->sessions,
		 x->resyncs);
	if (x->paths)
		snprintf(pth, sizeof(pth), ", unselected %" PRIu64 ", snapshots restarting %" PRIu64,
			 x->unselected, x->seq_resets);
	lcp_log(st, LCP_LOG_INFO,
		"%" PRIu64 " messages (%s), %s MB/s, latency p50 %.2fµs p99 %.2fµs p99.9 %.2fµs max %.2fµs (%" PRIu64 " samples), sequence gaps %" PRIu64 " (events %" PRIu64 "), duplicates %" PRIu64 ", symbols %" PRIu32 "%s%s%s",
		x->msgs, rate, mbs, (double)p50 / 1e3, (double)p99 / 1e3, (double)p999 / 1e3,
		(double)pmax / 1e3, total, x->gaps, x->gap_events, x->dups, x->n_syms,
		x->n_syms >= x->max_syms ? " (table full)" : "", x->sessions ? sess : "", pth);
}

static void
metrics_fini(struct lcp_stage *st, void *ctx)
{
	struct metrics_ctx *x = ctx;

	RTE_SET_USED(st);
	rte_free(x->tab);
	rte_free(x);
}

static const struct lcp_stage_ops metrics_ops = {
	.ports = metrics_ports,
	.counters = metrics_counters,
	.hists = metrics_hists,
	.validate = metrics_validate,
	.init = metrics_init,
	.process = metrics_process,
	.stop = metrics_stop,
	.fini = metrics_fini,
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "metrics"),
	.version = "1.0.0",
	.summary = "measure msgs in passing: per-connection counts, per-symbol sequence gaps, rx-to-here latency histogram",
	.options = metrics_opts,
	.conf_size = sizeof(struct metrics_conf),
	.ops = &metrics_ops,
};
