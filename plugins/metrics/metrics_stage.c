/* SPDX-License-Identifier: BSD-3-Clause
 * metrics_stage.c — what the stages metrics and metrics_naive share: the ports,
 * the latency histogram's definition and bucket bounds, the loss events, and
 * init (the symbol table, the tick scan, the paths mode), stop (the quantiles
 * as gauges, the summary line) and fini.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_malloc.h>

#include "metrics.h"


const struct lcp_port_def metrics_ports[] = {
	[MT_P_IN] = { .name = "in", .dir = LCP_PORT_IN, .unit = LCP_UNIT_MSG,
		      .flags = LCP_PORT_F_REQUIRED, .doc = "messages to measure" },
	[MT_P_OUT] = { .name = "out", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_MSG,
		       .flags = LCP_PORT_F_FORWARDS(MT_P_IN), .doc = "the same messages, unchanged; if unlinked they are freed here" },
	LCP_PORT_END,
};

const struct lcp_hist_def metrics_hists[] = {
	[MT_H_LATENCY] = { .name = "latency_seconds",
			   .help = "time from the rx TSC of the frame that completed a message to the metrics stage",
			   .le = lcp_hist_log4_le, .n_le = LCP_HIST_LOG4_N_LE },
	{ .name = NULL },
};

/* exclusive upper bound of bucket b in cycles; UINT64_MAX for the last one */
static uint64_t
mt_bucket_upper(unsigned b)
{
	return b >= MT_NB - 1 ? UINT64_MAX : lcp_hist_log4_low(b + 1);
}

static uint64_t
mt_ns(const struct metrics_ctx *x, uint64_t cycles)
{
	return (uint64_t)((double)cycles * 1e9 / (double)x->hz + 0.5);
}

/* LCP_MSG_F_LOSS: the producer dropped m->lost messages of this connection
 * before m: counted (the view from here on is incomplete); the first few
 * logged with the connection */
void
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

int
metrics_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	const struct metrics_conf *c = conf;
	struct metrics_ctx *x = *ctx;
	uint64_t slots = 1;

	while (slots < 2 * (uint64_t)c->symbols)
		slots <<= 1;
	x->tab = lcp_stage_zmalloc(st, "the symbol table", slots * sizeof(struct mt_sym));
	if (x->tab == NULL)
		return -ENOMEM;
	x->mask = slots - 1;
	x->shift = 64u - (unsigned)__builtin_ctzll(slots); /* slots >= 2 */
	x->max_syms = c->symbols;
	x->out_linked = lcp_port_is_linked(st, MT_P_OUT);
	x->max_conns = c->max_conns;
	x->sample = c->sample;
	x->sample_left = 1; /* the first message is sampled */
	metrics_scan_init(&x->scan, c->symbol_field, c->seq_field);
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
void
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

void
metrics_fini(struct lcp_stage *st, void *ctx)
{
	struct metrics_ctx *x = ctx;

	RTE_SET_USED(st);
	rte_free(x->tab);
}
