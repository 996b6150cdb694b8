/* SPDX-License-Identifier: BSD-3-Clause
 * metrics.h — what the metrics stage's files share: its options (struct
 * metrics_conf), the paths mode's compiled configuration, the counters, the
 * context, and the entry points of metrics_config.c (the option table, validate,
 * the paths mode's checks) and metrics_stage.c (init, stop, fini).
 *
 *   metrics.c        the stage `metrics`: process (the tick scan or the paths
 *                    mode), its counters and descriptor
 *   metrics_track.h  per message: the histogram sample, the symbol table
 *   metrics_stage.c  ports, histogram, init, stop, fini
 *   metrics_naive.c  the measurement control `metrics_naive` (doc/metrics.md)
 *   metrics_scan.h   the known-layout tick scan */
#ifndef LCP_PLUGIN_METRICS_H
#define LCP_PLUGIN_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <lcp/lcp.h>
#include <lcp/hist_log4.h>

#include "metrics_json.h"
#include "metrics_scan.h"

#define MT_MAX_CONNS 16 /* per-connection counters exist for conn_id 0..15 */
#define MT_FIELD_MAX METRICS_FIELD_MAX /* field name length */
#define MT_SYMBOLS_MAX (1u << 20)
#define MT_VALUES_MAX 8     /* values of select_value / reset_value */
#define MT_VALUE_LEN 255    /* their total length */

struct metrics_conf {
	uint32_t max_conns;
	uint32_t symbols;
	uint32_t sample;
	const char *seq_field;
	const char *symbol_field;
	const char *seq_first_field;
	const char *seq_prev_field;
	const char *select_field;
	const char *select_value;
	const char *reset_field;
	const char *reset_value;
	bool log_buckets;
};


enum { MT_SEQ_PLAIN, MT_SEQ_RANGE, MT_SEQ_PREV };

/* select_value / reset_value: comma-separated, a trailing '*' for a prefix */
struct mt_values {
	unsigned n;
	uint8_t off[MT_VALUES_MAX], len[MT_VALUES_MAX];
	bool prefix[MT_VALUES_MAX];
	char buf[MT_VALUE_LEN + 1];
};


/* the paths of a conf, in slot order: symbol, seq, first/prev, select, reset */
enum { MT_PATH_SYM, MT_PATH_SEQ, MT_PATH_LO, MT_PATH_SEL, MT_PATH_RESET, MT_N_PATHS };

struct mt_pathconf {
	const char *path[MT_N_PATHS]; /* NULL: not configured */
	unsigned slot[MT_N_PATHS];
	struct metrics_json_paths pj;
	struct mt_values sel, reset;
	unsigned seq_mode;
};


/* metrics_config.c */
extern const struct lcp_opt metrics_opts[];
extern const struct lcp_opt metrics_naive_opts[]; /* the default mode's options only */
int metrics_validate(const void *conf, char *msg, size_t msglen);
/* whether the conf needs the paths mode (dotted fields, select, reset, ranges) */
bool mt_paths_wanted(const struct metrics_conf *c);
/* compile the conf's paths into pc; 0, or -EINVAL with the reason in msg */
int mt_paths_build(const struct metrics_conf *c, struct mt_pathconf *pc, char *msg, size_t msglen);

enum { MT_P_IN, MT_P_OUT };

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
	X(LAT_MAX_NS, "lat_max_ns")                                           

enum {
#define X(e, s) MT_##e,
	METRICS_COUNTERS(X)
#undef X
	MT_N_COUNTERS
};


#define MT_NB 150                                     /* histogram buckets */
#define MT_NLOCAL (MT_LAT_FUTURE - MT_TICKS + 1)      /* per-burst local block */
#define MT_L(c) ((c) - MT_TICKS)                      /* its local index */

/* the histogram's buckets: lcp/hist_log4.h (bounds in TSC cycles) */
_Static_assert(MT_NB == LCP_HIST_LOG4_BUCKETS, "the log4 layout's buckets");

enum { MT_H_LATENCY };
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
	bool out_linked;
	uint32_t max_conns;
	uint32_t sample;
	uint32_t sample_left;  /* messages until the next sample */
	struct metrics_scan scan; /* the tick scan's field names and patterns */
	struct mt_sym *tab;
	uint64_t mask;         /* table slots - 1 (a power of two, >= 2 x symbols) */
	unsigned shift;        /* 64 - log2(table slots): mt_hash's top bits */
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

/* metrics_stage.c: what metrics and metrics_naive share */
extern const struct lcp_port_def metrics_ports[];
extern const struct lcp_hist_def metrics_hists[];
/* LCP_MSG_F_LOSS on m: counted, the first few logged */
void mt_loss(struct lcp_stage *st, struct metrics_ctx *x, const struct lcp_msg *m);
int metrics_init(struct lcp_stage *st, const void *conf, void **ctx);
void metrics_stop(struct lcp_stage *st, void *ctx);
void metrics_fini(struct lcp_stage *st, void *ctx);

#endif
