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
 * Cost: one rte_rdtsc() per burst (process() call); counters and the histogram's
 * buckets added once per burst, the per-connection pair once per run of
 * messages of one connection; a latency judged and bucketed once per run of
 * samples with one rx TSC (the messages cut from one segment); the symbol's
 * home slot by one multiply per word (mt_hash). metrics_naive
 * (metrics_naive.c) does the same the slow way, to measure the difference.
 *
 * This file: the process loops (the tick scan, the paths mode) and the
 * descriptor; metrics.h lists the others.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_cycles.h>

#include <lcp/lcp.h>

#include <lcp/hist_log4.h>

#include "metrics.h"
#include "metrics_track.h"

static const char *const metrics_counters[] = { METRICS_COUNTERS(LCP_COUNTER_NAME) NULL };

/* paths mode: as mt_track, for a sequence that is a number (seq), a range
 * (lo = its first id, seq its last) or a chain (lo = the previous message's
 * number); reset: a snapshot that restarts the sequence (MT_SEQ_RESETS). */
static __rte_always_inline unsigned
mt_track_paths(struct metrics_ctx *x, uint64_t conn, const uint64_t key[4], uint32_t len,
	       uint64_t seq, uint64_t lo, bool reset, uint64_t *missing)
{
	struct mt_sym *e = NULL;
	unsigned r = mt_entry(x, conn, key, len, seq, &e);
	uint64_t last;

	if (r != MT_N_COUNTERS)
		return r;
	last = e->last;
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
		return mt_next(e, seq, missing);
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

/* one burst; paths is a constant: the default (scan) and the paths mode each get
 * their own copy of the loop */
static __rte_always_inline void
metrics_burst(struct lcp_stage *st, struct metrics_ctx *x, void **objs, unsigned n, const bool paths)
{
	uint64_t now = rte_rdtsc(); /* once per burst */
	uint64_t c[MT_NLOCAL] = { 0 };
	uint64_t ext[2] = { 0, 0 };
	uint64_t bytes = 0, run_conn = 0, run_msgs = 0, run_bytes = 0;
	uint64_t lat_tsc = 0, lat_n = 0; /* the run of samples of one rx TSC */
	uint32_t sample_left = x->sample_left;
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

		if (--sample_left == 0) {
			sample_left = x->sample;
			mt_sample(x, m->rx_tsc, now, &lat_tsc, &lat_n, c, &lo, &hi);
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
	x->sample_left = sample_left;
	mt_sample_end(x, now, lat_tsc, lat_n, c, &lo, &hi);
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


static void
metrics_process(struct lcp_stage *st, void *ctx, unsigned port, void **objs, unsigned n)
{
	struct metrics_ctx *x = ctx;

	RTE_SET_USED(port); /* one input */
	if (!x->paths)
		metrics_process_fast(st, x, objs, n);
	else
		metrics_process_paths(st, x, objs, n);
	if (x->out_linked)
		lcp_emit(st, MT_P_OUT, objs, n);
	else
		lcp_objs_free(LCP_UNIT_MSG, objs, n);
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
	.ctx_size = sizeof(struct metrics_ctx),
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "metrics"),
	.version = "1.0.0",
	.summary = "measure msgs in passing: per-connection counts, per-symbol sequence gaps, rx-to-here latency histogram",
	.options = metrics_opts,
	.conf_size = sizeof(struct metrics_conf),
	.ops = &metrics_ops,
};
