/* SPDX-License-Identifier: BSD-3-Clause
 * test_h_metrics.c — the metrics stage (plugins/metrics) through the plugin
 * test harness, fed harness messages (lcp_h_msg) with JSON ticks.
 *
 * counts_and_gaps   one burst of nine messages on three connections: exact
 *                   msgs, bytes, per-connection and conn_other counters, ticks,
 *                   symbols, in-order, a gap of two (one event), a duplicate, a
 *                   non-tick; every message passed on to "out" unchanged, in
 *                   order, none freed
 * unlinked_frees    "out" unlinked: metrics frees every message itself, none
 *                   counted as drop_unlinked
 * loss_and_session  LCP_MSG_F_LOSS counts loss_events and msgs_lost_upstream
 *                   (and the symbol's gap all the same);
 *                   LCP_MSG_F_SESSION_START restarts a symbol (seq_resyncs), not
 *                   a duplicate; a message without an rx TSC counts no_rx_tsc
 * bursts_add_up     the same ticks in bursts of 1, 2 and 3 give the same counts
 * latency_runs      rx TSCs in runs (A A 0 0 A B future B): each run of one
 *                   TSC counts as many samples as it has messages (lat_samples,
 *                   no_rx_tsc, lat_future, p50 in A's bucket, max from A);
 *                   with sample = 2 only every second message counts (A 0 A
 *                   future)
 * hash_spreads      mt_hash's home slots for feed symbols SYM00000.. that
 *                   differ only in their last bytes: 100 in 8,192 slots take
 *                   at least 95 distinct ones, 4,096 at least 3,000 (random
 *                   placement: ~99.4 and ~3,225); a hash whose slot came from
 *                   the low bits of an unfinalised mix put 100 in 8
 * hist_log4_layout  lcp/hist_log4.h (the latency histogram's layout, and the
 *                   engine's stage timing): every bucket's lowest value and
 *                   the value below the next one's fall in it, the le table
 *                   is those upper bounds
 * paths_ranges      paths mode, Binance-like: messages selected by "e", update
 *                   ranges [U, u]: in order, a gap of two ids, an overlap taken
 *                   as a duplicate, an unselected message
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#include "plugin_harness.h"

#include "metrics_track.h" /* mt_hash */

#include "../t_check.h"

struct t_tick {
	uint64_t conn;
	const char *text;
};

static const struct t_tick t_ticks[] = {
	{0, "{\"s\":\"A\",\"n\":1}"},  /* a new symbol */
	{0, "{\"s\":\"A\",\"n\":2}"},  /* in order */
	{0, "{\"s\":\"A\",\"n\":5}"},  /* 3 and 4 missing: a gap of 2 */
	{0, "{\"s\":\"A\",\"n\":5}"},  /* a duplicate */
	{0, "{\"s\":\"B\",\"n\":10}"}, /* a new symbol */
	{0, "{\"s\":\"B\",\"n\":11}"}, /* in order */
	{1, "{\"s\":\"A\",\"n\":7}"},  /* the same symbol, another connection: new */
	{1, "not a tick"},	       /* non_tick */
	{20, "{\"s\":\"C\",\"n\":1}"}, /* above max_conns: conn_other */
};
#define T_N (sizeof(t_ticks) / sizeof(t_ticks[0]))

/* a metrics stage with options (NULL: log_buckets off, the rest as default) */
static struct lcp_h *
t_metrics(const char *options)
{
	return lcp_h_new(&(struct lcp_h_conf){
		.plugin = "metrics",
		.options = options != NULL ? options : "{\"log_buckets\": false}"});
}

static size_t
t_bytes(uint64_t conn, bool any)
{
	size_t b = 0;

	for (unsigned i = 0; i < T_N; i++)
		if (any || t_ticks[i].conn == conn)
			b += strlen(t_ticks[i].text);
	return b;
}

static void
t_make(struct lcp_h *h, struct lcp_msg **m)
{
	for (unsigned i = 0; i < T_N; i++)
		m[i] = lcp_h_msg(h, t_ticks[i].conn, 1, t_ticks[i].text, strlen(t_ticks[i].text));
}

static void
t_check_counts(struct lcp_h *h)
{
	lcp_h_ctrs_eq(h, {"in.in", T_N}, {"msgs", T_N}, {"bytes", t_bytes(0, true)},
		      {"conn0_msgs", 6}, {"conn0_bytes", t_bytes(0, false)}, {"conn1_msgs", 2},
		      {"conn1_bytes", t_bytes(1, false)}, {"conn2_msgs", 0}, {"conn_other_msgs", 1},
		      {"conn_other_bytes", t_bytes(20, false)}, {"ticks", 8}, {"non_tick", 1},
		      {"bad_tick", 0}, {"symbols", 4}, {"seq_in_order", 2}, {"seq_gaps", 2},
		      {"gap_events", 1}, {"seq_dups", 1}, {"seq_resyncs", 0}, {"no_rx_tsc", 0});
}

START_TEST(counts_and_gaps)
{
	struct lcp_h *h = t_metrics(NULL);
	struct lcp_msg *m[T_N], **out;

	t_make(h, m);
	lcp_h_push(h, "in", (void **)m, T_N);
	t_check_counts(h);
	/* passed on unchanged, in order, none freed */
	ck_assert_uint_eq(lcp_h_out_n(h, "out"), T_N);
	ck_assert_uint_eq(lcp_h_ctr(h, "out.out"), T_N);
	out = (struct lcp_msg **)lcp_h_out(h, "out");
	for (unsigned i = 0; i < T_N; i++) {
		ck_assert_ptr_eq(out[i], m[i]);
		ck_assert_uint_eq(out[i]->len, strlen(t_ticks[i].text));
		ck_assert_mem_eq(out[i]->data, t_ticks[i].text, out[i]->len);
	}
	ck_assert_uint_eq(lcp_h_msgs_freed(h), 0);
	lcp_h_out_clear(h, "out");
	ck_assert_uint_eq(lcp_h_msgs_freed(h), T_N);
	lcp_h_free(h);
}
END_TEST

START_TEST(unlinked_frees)
{
	struct lcp_h *h = lcp_h_new(&(struct lcp_h_conf){
		.plugin = "metrics", .options = "{\"log_buckets\": false}", .unlinked = "out"});
	struct lcp_msg *m[T_N];

	t_make(h, m);
	lcp_h_push(h, "in", (void **)m, T_N);
	t_check_counts(h);
	ck_assert_uint_eq(lcp_h_msgs_freed(h), T_N);
	ck_assert_uint_eq(lcp_h_ctr(h, "out.out"), 0);
	ck_assert_uint_eq(lcp_h_ctr(h, "out.drop_unlinked"), 0);
	lcp_h_free(h);
}
END_TEST

START_TEST(loss_and_session)
{
	struct lcp_h *h = t_metrics(NULL);
	struct lcp_msg *m[4];

	m[0] = lcp_h_msg(h, 3, 1, "{\"s\":\"X\",\"n\":40}", 16);
	m[1] = lcp_h_msg(h, 3, 1, "{\"s\":\"X\",\"n\":44}", 16);
	m[1]->flags |= LCP_MSG_F_LOSS;
	m[1]->lost = 3;
	/* the connection re-opened: its sequence starts over, lower */
	m[2] = lcp_h_msg(h, 3, 1, "{\"s\":\"X\",\"n\":1}", 15);
	m[2]->flags |= LCP_MSG_F_SESSION_START;
	m[3] = lcp_h_msg(h, 3, 1, "{\"s\":\"X\",\"n\":2}", 15);
	m[3]->rx_tsc = 0;
	lcp_h_push(h, "in", (void **)m, 4);
	lcp_h_ctrs_eq(h, {"msgs", 4}, {"conn3_msgs", 4}, {"loss_events", 1},
		      {"msgs_lost_upstream", 3},
		      /* what the producer said it lost is still a gap of the symbol: 41..43 */
		      {"seq_gaps", 3}, {"gap_events", 1}, {"symbols", 1}, {"seq_resyncs", 1},
		      {"seq_dups", 0}, {"seq_in_order", 1}, {"no_rx_tsc", 1});
	ck_assert_uint_eq(lcp_h_out_n(h, "out"), 4);
	lcp_h_free(h);
}
END_TEST

START_TEST(bursts_add_up)
{
	struct lcp_h *h = t_metrics(NULL);
	struct lcp_msg *m[T_N];
	unsigned i = 0, k = 1;

	t_make(h, m);
	while (i < T_N) {
		unsigned n = k < T_N - i ? k : T_N - i;

		lcp_h_push(h, "in", (void **)&m[i], n);
		i += n;
		k = k % 3 + 1;
	}
	t_check_counts(h);
	ck_assert_uint_eq(lcp_h_out_n(h, "out"), T_N);
	ck_assert_uint_eq(lcp_h_out_bursts(h, "out"), 5); /* 1, 2, 3, 1, 2 */
	lcp_h_free(h);
}
END_TEST

/* eight ticks of symbol L whose rx TSCs are A A 0 0 A B future B, with A
 * 2^31 cycles and B 2^21 cycles before now */
static void
t_latency_push(struct lcp_h *h)
{
	uint64_t now = rte_rdtsc(), a = now - (1ull << 31), b = now - (1ull << 21);
	const uint64_t rx[8] = { a, a, 0, 0, a, b, now + (1ull << 40), b };
	struct lcp_msg *m[8];

	for (unsigned i = 0; i < 8; i++) {
		char t[32];
		int n = snprintf(t, sizeof(t), "{\"s\":\"L\",\"n\":%u}", i + 1);

		m[i] = lcp_h_msg(h, 0, 1, t, (size_t)n);
		m[i]->rx_tsc = rx[i];
	}
	lcp_h_push(h, "in", (void **)m, 8);
}

START_TEST(latency_runs)
{
	struct lcp_h *h = t_metrics(NULL);
	double ns_per_cycle = 1e9 / (double)rte_get_tsc_hz();

	t_latency_push(h);
	lcp_h_ctrs_eq(h, {"no_rx_tsc", 2}, {"lat_future", 1}, {"seq_in_order", 7});
	lcp_h_stop(h);
	ck_assert_uint_eq(lcp_h_ctr(h, "lat_samples"), 5);
	/* B B A A A: the median is in A's bucket (at most 25 % wide), the max is A */
	ck_assert_uint_ge(lcp_h_ctr(h, "lat_p50_ns"), (uint64_t)((double)(1ull << 31) * ns_per_cycle));
	ck_assert_uint_le(lcp_h_ctr(h, "lat_p50_ns"), (uint64_t)((double)(1ull << 31) * 1.5 * ns_per_cycle));
	ck_assert_uint_ge(lcp_h_ctr(h, "lat_max_ns"), (uint64_t)((double)(1ull << 31) * ns_per_cycle));
	lcp_h_free(h);

	/* every second message, from the first: A 0 A future */
	h = t_metrics("{\"log_buckets\": false, \"sample\": 2}");
	t_latency_push(h);
	ck_assert_uint_eq(lcp_h_ctr(h, "no_rx_tsc"), 1);
	ck_assert_uint_eq(lcp_h_ctr(h, "lat_future"), 1);
	lcp_h_stop(h);
	ck_assert_uint_eq(lcp_h_ctr(h, "lat_samples"), 2);
	ck_assert_uint_ge(lcp_h_ctr(h, "lat_p50_ns"), (uint64_t)((double)(1ull << 31) * ns_per_cycle));
	lcp_h_free(h);
}
END_TEST

static unsigned
t_home_slots(unsigned n_syms, unsigned bits)
{
	static uint8_t used[1u << 13];
	unsigned distinct = 0;

	ck_assert_uint_le(bits, 13);
	memset(used, 0, sizeof(used));
	for (unsigned i = 0; i < n_syms; i++) {
		uint64_t key[4] = { 0, 0, 0, 0 };
		char sym[16];
		int n = snprintf(sym, sizeof(sym), "SYM%05u", i);
		uint64_t slot;

		memcpy(key, sym, (size_t)n);
		slot = mt_hash(0, key, (uint32_t)n, 64 - bits);
		ck_assert_uint_lt(slot, 1u << bits);
		distinct += used[slot] == 0;
		used[slot] = 1;
	}
	return distinct;
}

START_TEST(hash_spreads)
{
	ck_assert_uint_ge(t_home_slots(100, 13), 95);
	ck_assert_uint_ge(t_home_slots(4096, 13), 3000);
}
END_TEST

START_TEST(hist_log4_layout)
{
	for (unsigned b = 0; b < LCP_HIST_LOG4_BUCKETS; b++) {
		ck_assert_uint_eq(lcp_hist_log4_bucket(lcp_hist_log4_low(b)), b);
		if (b + 1 < LCP_HIST_LOG4_BUCKETS) {
			ck_assert_uint_lt(lcp_hist_log4_low(b), lcp_hist_log4_low(b + 1));
			ck_assert_uint_eq(lcp_hist_log4_bucket(lcp_hist_log4_low(b + 1) - 1), b);
			ck_assert_uint_eq(lcp_hist_log4_le[b], lcp_hist_log4_low(b + 1) - 1);
		}
	}
	ck_assert_uint_eq(lcp_hist_log4_bucket(UINT64_MAX), LCP_HIST_LOG4_BUCKETS - 1);
}
END_TEST

START_TEST(paths_ranges)
{
	static const char *const t[] = {
		"{\"e\":\"depthUpdate\",\"s\":\"BTC\",\"U\":1,\"u\":3}",  /* the first */
		"{\"e\":\"depthUpdate\",\"s\":\"BTC\",\"U\":4,\"u\":6}",  /* in order */
		"{\"e\":\"depthUpdate\",\"s\":\"BTC\",\"U\":9,\"u\":10}", /* 7 and 8 missing */
		"{\"e\":\"trade\",\"s\":\"BTC\",\"t\":77}",		  /* not selected */
		"{\"e\":\"depthUpdate\",\"s\":\"BTC\",\"U\":5,\"u\":10}", /* nothing new */
	};
	struct lcp_h *h =
		t_metrics("{\"log_buckets\": false, \"symbol_field\": \"s\", \"seq_field\": \"u\","
			  " \"seq_first_field\": \"U\", \"select_field\": \"e\", "
			  "\"select_value\": \"depthUpdate\"}");
	void *m[5];

	for (unsigned i = 0; i < 5; i++)
		m[i] = lcp_h_msg(h, 0, 1, t[i], strlen(t[i]));
	lcp_h_push(h, "in", m, 5);
	lcp_h_ctrs_eq(h, {"msgs", 5}, {"unselected", 1}, {"ticks", 4}, {"symbols", 1},
		      {"seq_in_order", 1}, {"seq_gaps", 2}, {"gap_events", 1}, {"seq_dups", 1});
	ck_assert_uint_eq(lcp_h_out_n(h, "out"), 5);
	lcp_h_free(h);
}
END_TEST

static void
metrics_tcases(Suite *s)
{
	T_TESTS(t_tcase(s, "metrics", NULL, NULL, 60), counts_and_gaps, unlinked_frees,
		loss_and_session, bursts_add_up, latency_runs, hash_spreads, hist_log4_layout,
		paths_ranges);
}

T_MAIN("h_metrics", metrics_tcases)
