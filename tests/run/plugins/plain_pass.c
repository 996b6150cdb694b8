/* SPDX-License-Identifier: BSD-3-Clause
 * plain_pass — test-only stage: "in" -> "out", pkt objects passed on unchanged,
 * without declaring LCP_PORT_F_FORWARDS, as a plugin written before it existed
 * (or by someone who did not know) would. `lcpipe check` cannot see a message
 * loop through such stages; the engine must end it at run time
 * (run/stop-limit.sh: drop_loop, logged once, the run drains and exits 0).
 *
 * It also checks ABI 2.0's dispatch: "back" takes frames and frees them
 * (counted in "back_freed"), so a.out -> b.in, b.out -> a.back is a request
 * and its reply through a cycle of one lcore; every process() call that
 * starts while one of this stage's is still running counts in "reentered",
 * which must stay 0 (run/walk.sh).
 * Built only for `make check` (tests/run.mk), against the SDK headers only.
 */

#include <rte_mbuf.h>

#include <lcp/lcp.h>

#include "test_plugin.h"

static const struct lcp_port_def pp_ports[] = {
	{ .name = "in", .dir = LCP_PORT_IN, .unit = LCP_UNIT_PKT, .flags = LCP_PORT_F_REQUIRED,
	  .doc = "frames" },
	{ .name = "out", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_PKT, .doc = "the same frames" },
	{ .name = "back", .dir = LCP_PORT_IN, .unit = LCP_UNIT_PKT, .doc = "frames to free" },
	LCP_PORT_END,
};

struct pp_conf {
	uint32_t unused;
};

static const struct lcp_opt pp_opts[] = {
	LCP_OPT_END,
};

enum { PP_P_IN, PP_P_OUT, PP_P_BACK };
enum { PP_C_BACK_FREED, PP_C_REENTERED };
static const char *const pp_counters[] = { "back_freed", "reentered", NULL };

struct pp_ctx {
	unsigned active; /* inside process() */
};

static int
pp_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	RTE_SET_USED(st);
	RTE_SET_USED(conf);
	RTE_SET_USED(ctx); /* the engine's, zeroed (ctx_size) */
	return 0;
}

static void
pp_process(struct lcp_stage *st, void *ctx, unsigned port, void **objs, unsigned n)
{
	struct pp_ctx *x = ctx;

	if (x->active++ != 0)
		lcp_count(st, PP_C_REENTERED, 1);
	if (port == PP_P_BACK) {
		rte_pktmbuf_free_bulk((struct rte_mbuf **)objs, n);
		lcp_count(st, PP_C_BACK_FREED, n);
	} else {
		lcp_emit(st, PP_P_OUT, objs, n);
	}
	x->active--;
}

static const struct lcp_stage_ops pp_ops = {
	.ports = pp_ports,
	.counters = pp_counters,
	.init = pp_init,
	.process = pp_process,
	.ctx_size = sizeof(struct pp_ctx),
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "plain_pass"),
	.version = "1.0.0",
	.summary = "test stage: passes frames on without declaring it (LCP_PORT_F_FORWARDS)",
	.options = pp_opts,
	.conf_size = sizeof(struct pp_conf),
	.ops = &pp_ops,
};
