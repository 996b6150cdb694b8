/* SPDX-License-Identifier: BSD-3-Clause
 * test_h_strategies.c — strategy modules behind a real stage, through the
 * plugin test harness: a stage's pools (lcp_pool_create) come from the pool
 * module its "strategies" name, a link between lcores dequeues (and may stage)
 * as its batch module says. The stage is tee, whose message copies come from a
 * pool and whose "msg_out" passes the originals on.
 *
 * pool_modules     (each of pool_mempool, pool_ring, pool_malloc,
 *                  pool_rte_malloc) msg_copies 4: six messages give four copies
 *                  with the originals' bytes and two drop_no_copy, one message
 *                  longer than msg_copy_bytes drop_copy_too_big; the pool
 *                  reports four objects out until the copies are freed, then
 *                  none, and gives them out again
 * batch_modules    (each of batch_burst, batch_timed, batch_adaptive and the
 *                  default) "msg_out" on a ring to lcore 2: 300 messages pushed
 *                  in bursts of 50 arrive there, all, in order, none dropped,
 *                  msg_out.out 300 read off the ring; staged objects (batch_timed)
 *                  are flushed by the shutdown, which the test runs before it
 *                  looks
 * counters_modules (each of counters_percore, counters_atomic, counters_batched
 *                  with a large "every", counters_sharded, counters_null)
 *                  metrics' counters through the module: exact after the
 *                  engine's flush, all zero with counters_null
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_harness.h"

#include "../t_check.h"

static const char *const t_pools[] = {"pool_mempool", "pool_ring", "pool_malloc",
				      "pool_rte_malloc"};

START_TEST(pool_modules)
{
	char strat[128], text[16];
	struct lcp_h *h;
	struct lcp_msg *m[6], **c;

	snprintf(strat, sizeof(strat), "{\"pool\": \"%s\"}", t_pools[_i]);
	h = lcp_h_new(&(struct lcp_h_conf){
		.plugin = "tee",
		.options = "{\"msg_copies\": 4, \"msg_copy_bytes\": 64, \"copy_mbufs\": 0}",
		.strategies = strat,
	});
	for (unsigned i = 0; i < 6; i++) {
		snprintf(text, sizeof(text), "tick %u", i);
		m[i] = lcp_h_msg(h, 10 + i, 1, text, strlen(text));
	}
	lcp_h_push(h, "msg_in", (void **)m, 6);
	/* the originals go on, all of them, unchanged */
	ck_assert_uint_eq(lcp_h_out_n(h, "msg_out"), 6);
	for (unsigned i = 0; i < 6; i++)
		ck_assert_ptr_eq(lcp_h_out(h, "msg_out")[i], m[i]);
	/* four copies: what the pool holds */
	ck_assert_uint_eq(lcp_h_out_n(h, "msg_copy"), 4);
	c = (struct lcp_msg **)lcp_h_out(h, "msg_copy");
	for (unsigned i = 0; i < 4; i++) {
		ck_assert_ptr_ne(c[i], m[i]);
		ck_assert_uint_eq(c[i]->conn_id, 10 + i);
		ck_assert_uint_eq(c[i]->len, m[i]->len);
		ck_assert_mem_eq(c[i]->data, m[i]->data, m[i]->len);
		ck_assert_uint_eq(c[i]->rx_tsc, m[i]->rx_tsc);
	}
	lcp_h_ctrs_eq(h, {"copies", 4}, {"copy_bytes", 4 * 6}, {"drop_no_copy", 2});
	ck_assert_uint_eq(lcp_h_pools_in_use(h), 4);
	lcp_h_out_clear(h, "msg_copy");
	ck_assert_uint_eq(lcp_h_pools_in_use(h), 0);
	/* the pool gives them out again; a message longer than a copy is not copied */
	{
		static char big[65];
		void *two[2];

		memset(big, 'b', sizeof(big));
		two[0] = lcp_h_msg(h, 1, 1, "again", 5);
		two[1] = lcp_h_msg(h, 2, 1, big, sizeof(big));
		lcp_h_push(h, "msg_in", two, 2);
	}
	ck_assert_uint_eq(lcp_h_out_n(h, "msg_copy"), 1);
	ck_assert_uint_eq(lcp_h_ctr(h, "copies"), 5);
	ck_assert_uint_eq(lcp_h_ctr(h, "drop_copy_too_big"), 1);
	ck_assert_uint_eq(lcp_h_pools_in_use(h), 1);
	lcp_h_out_clear(h, "msg_out");
	ck_assert_uint_eq(lcp_h_msgs_freed(h), 8);
	lcp_h_free(h);
}
END_TEST

static const char *const t_batches[] = {
	"{\"ring_size\": 1024, \"batch\": \"batch_burst\"}",
	"{\"ring_size\": 1024, \"batch\": {\"plugin\": \"batch_timed\", \"options\": {\"size\": "
	"16}}}",
	"{\"ring_size\": 1024, \"batch\": {\"plugin\": \"batch_adaptive\", \"options\": {\"min\": "
	"4, \"max\": 64}}}",
	"{\"ring_size\": 1024}",
};

START_TEST(batch_modules)
{
	struct lcp_h *h = lcp_h_new(&(struct lcp_h_conf){
		.plugin = "tee",
		.options = "{\"msg_copies\": 0, \"copy_mbufs\": 0}",
		.unlinked = "msg_copy",
		.ring_ports = "msg_out",
		.link = t_batches[_i],
	});
	struct lcp_msg *m[300];
	char text[16];

	for (unsigned i = 0; i < 300; i++) {
		snprintf(text, sizeof(text), "%u", i);
		m[i] = lcp_h_msg(h, 0, 1, text, strlen(text));
	}
	for (unsigned i = 0; i < 300; i += 50)
		lcp_h_push(h, "msg_in", (void **)&m[i], 50);
	lcp_h_stop(h);
	ck_assert_uint_eq(lcp_h_out_n(h, "msg_out"), 300);
	for (unsigned i = 0; i < 300; i++)
		ck_assert_ptr_eq(lcp_h_out(h, "msg_out")[i], m[i]);
	lcp_h_ctrs_eq(h, {"msg_in.in", 300}, {"msg_out.out", 300}, {"msg_out.drop_ring_full", 0});
	ck_assert_uint_eq(lcp_h_msgs_freed(h), 0);
	lcp_h_free(h);
}
END_TEST

static const char *const t_counters[] = {
	"\"counters_percore\"",
	"\"counters_atomic\"",
	"{\"plugin\": \"counters_batched\", \"options\": {\"every\": 1000000}}",
	"\"counters_sharded\"",
	"\"counters_null\"",
};

START_TEST(counters_modules)
{
	char strat[256];
	struct lcp_h *h;
	void *m[40];
	bool null = _i == 4;

	snprintf(strat, sizeof(strat), "{\"counters\": %s}", t_counters[_i]);
	h = lcp_h_new(&(struct lcp_h_conf){
		.plugin = "metrics", .options = "{\"log_buckets\": false}", .strategies = strat});
	for (unsigned i = 0; i < 40; i++)
		m[i] = lcp_h_msg(h, i % 2, 1,
				 i % 4 < 2 ? "{\"s\":\"A\",\"n\":1}" : "{\"s\":\"B\",\"n\":1}", 15);
	for (unsigned i = 0; i < 40; i += 10)
		lcp_h_push(h, "in", &m[i], 10);
	lcp_h_ctrs_eq(h, {"in.in", null ? 0 : 40}, {"out.out", null ? 0 : 40},
		      {"msgs", null ? 0 : 40}, {"bytes", null ? 0 : 40 * 15},
		      {"conn0_msgs", null ? 0 : 20}, {"conn1_msgs", null ? 0 : 20},
		      /* per connection, A and B start at 1 and stay there: 4 symbols, 36 dups */
		      {"symbols", null ? 0 : 4}, {"seq_dups", null ? 0 : 36});
	/* the objects move the same whatever counts them */
	ck_assert_uint_eq(lcp_h_out_n(h, "out"), 40);
	lcp_h_free(h);
}
END_TEST

static void
strategies_tcases(Suite *s)
{
	TCase *tp = t_tcase(s, "pool", NULL, NULL, 60);
	TCase *tb = t_tcase(s, "batch", NULL, NULL, 60);
	TCase *tc = t_tcase(s, "counters", NULL, NULL, 60);

	tcase_add_loop_test(tp, pool_modules, 0, (int)(sizeof(t_pools) / sizeof(t_pools[0])));
	tcase_add_loop_test(tb, batch_modules, 0, (int)(sizeof(t_batches) / sizeof(t_batches[0])));
	tcase_add_loop_test(tc, counters_modules, 0,
			    (int)(sizeof(t_counters) / sizeof(t_counters[0])));
}

T_MAIN("h_strategies", strategies_tcases)
