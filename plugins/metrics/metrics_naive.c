/* SPDX-License-Identifier: BSD-3-Clause
 * metrics_naive — a measurement control, not a product stage: the metrics stage
 * (the same options, ports, counters, histogram and summary) doing its work the
 * way a first attempt would, so that `lcpipe ab` can show what the metrics
 * stage's design saves (doc/metrics.md, "Cost"; conf/ab/instr_naive.json).
 *
 * For every message: an rte_rdtsc(), counter adds, five memmem() scans for the
 * fields ("s", "n", "p", "q", "t", counted under naive_field_*) and strtoull()
 * on a copy of the sequence number. It expects compact ticks ("s":"...", no
 * blanks around the colon), where its counters equal metrics' own; it has the
 * default mode's options only (no paths mode).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include <lcp/lcp.h>

#include "metrics.h"
#include "metrics_track.h"

/* metrics' counters, then one per field found */
#define NAIVE_COUNTERS(X)                                                      \
	X(FIELD_S, "naive_field_s")                                            \
	X(FIELD_N, "naive_field_n")                                            \
	X(FIELD_P, "naive_field_p")                                            \
	X(FIELD_Q, "naive_field_q")                                            \
	X(FIELD_T, "naive_field_t")

enum {
	NV_BEFORE_ = MT_N_COUNTERS - 1,
#define X(e, s) NV_##e,
	NAIVE_COUNTERS(X)
#undef X
};

static const char *const naive_counters[] = { METRICS_COUNTERS(LCP_COUNTER_NAME) NAIVE_COUNTERS(LCP_COUNTER_NAME) NULL };

#define NV_FIELDS 5
static const char *const nv_fixed[3] = { "p", "q", "t" };

struct naive_ctx {
	struct metrics_ctx m; /* the metrics stage's own context */
	char pat[NV_FIELDS][MT_FIELD_MAX + 4]; /* "\"s\":" ... */
	size_t pat_len[NV_FIELDS];
};

/* what the fast path avoids: a TSC read, counter adds and five memmem scans for
 * every message, strtoull on a copy; the same counters result */
static void
naive_burst(struct lcp_stage *st, struct naive_ctx *nc, void **objs, unsigned n)
{
	struct metrics_ctx *x = &nc->m;

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
			mt_sample_n(x, m->rx_tsc, now, 1, c, &lo, &hi);
			mt_hist_publish(st, x, lo, hi);
		}
		for (unsigned k = 0; k < 5; k++) {
			f[k] = m->len ? memmem(m->data, m->len, nc->pat[k], nc->pat_len[k]) : NULL;
			if (f[k] != NULL)
				lcp_count(st, NV_FIELD_S + k, 1);
		}
		if (f[0] == NULL || f[1] == NULL) {
			c[MT_L(MT_NON_TICK)]++;
		} else {
			const uint8_t *end = m->data + m->len;
			const uint8_t *s = f[0] + nc->pat_len[0];
			const uint8_t *v = f[1] + nc->pat_len[1];
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
naive_process(struct lcp_stage *st, void *ctx, unsigned port, void **objs, unsigned n)
{
	struct naive_ctx *nc = ctx;

	RTE_SET_USED(port); /* one input */
	naive_burst(st, nc, objs, n);
	if (nc->m.out_linked)
		lcp_emit(st, MT_P_OUT, objs, n);
	else
		lcp_objs_free(LCP_UNIT_MSG, objs, n);
}

/* the conf metrics' own code expects: the paths mode's strings, absent from
 * metrics_naive's option table, are empty */
static void
naive_conf(const struct metrics_conf *in, struct metrics_conf *out)
{
	*out = *in;
	out->seq_first_field = out->seq_prev_field = "";
	out->select_field = out->select_value = "";
	out->reset_field = out->reset_value = "";
}

static int
naive_validate(const void *conf, char *msg, size_t msglen)
{
	struct metrics_conf c;

	naive_conf(conf, &c);
	return metrics_validate(&c, msg, msglen);
}

static int
naive_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	struct metrics_conf cf, *c = &cf;
	struct naive_ctx *nc = *ctx;
	void *x = &nc->m;
	int rc;

	naive_conf(conf, &cf);
	rc = metrics_init(st, &cf, &x);
	if (rc != 0)
		return rc;
	for (unsigned k = 0; k < NV_FIELDS; k++) {
		const char *f = k == 0 ? c->symbol_field : k == 1 ? c->seq_field : nv_fixed[k - 2];

		snprintf(nc->pat[k], sizeof(nc->pat[k]), "\"%s\":", f);
		nc->pat_len[k] = strlen(nc->pat[k]);
	}
	return 0;
}

static void
naive_stop(struct lcp_stage *st, void *ctx)
{
	struct naive_ctx *nc = ctx;

	metrics_stop(st, &nc->m);
}

static void
naive_fini(struct lcp_stage *st, void *ctx)
{
	struct naive_ctx *nc = ctx;

	metrics_fini(st, &nc->m);
}

static const struct lcp_stage_ops naive_ops = {
	.ports = metrics_ports,
	.counters = naive_counters,
	.hists = metrics_hists,
	.validate = naive_validate,
	.init = naive_init,
	.process = naive_process,
	.stop = naive_stop,
	.fini = naive_fini,
	.ctx_size = sizeof(struct naive_ctx),
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "metrics_naive"),
	.version = "1.0.0",
	.summary = "measurement control: the metrics stage doing its per-message work the naive way (a TSC read, counter adds, memmem and strtoull per message)",
	.options = metrics_naive_opts,
	.conf_size = sizeof(struct metrics_conf),
	.ops = &naive_ops,
};
