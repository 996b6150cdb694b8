/* SPDX-License-Identifier: BSD-3-Clause
 * msg_stall — test-only stage: passes `msg` objects from "in" to "out"
 * unchanged after spinning stall_us microseconds per burst plus stall_ns_msg
 * nanoseconds per message. A consumer slower than its producer on demand, for
 * the backpressure tests (ring full, pool empty): the per-message part keeps it
 * slow however large the bursts its producer hands it grow. Counts bursts and messages; drops nothing itself. With hang_at_stop
 * it never returns from the first burst that comes once the engine stops: a
 * stage stuck in its process(), for the shutdown's hard limit
 * (engine.stop_timeout, tests/run/stop-limit.sh).
 *
 * Built only for `make check` (tests/run.mk), against the SDK headers only.
 */

#include <rte_cycles.h>
#include <rte_pause.h>

#include <lcp/lcp.h>

#include "test_plugin.h"

static const struct lcp_port_def msg_stall_ports[] = {
	{ .name = "in", .dir = LCP_PORT_IN, .unit = LCP_UNIT_MSG, .flags = LCP_PORT_F_REQUIRED,
	  .doc = "messages" },
	{ .name = "out", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_MSG, .flags = LCP_PORT_F_REQUIRED,
	  .doc = "the same messages, later" },
	LCP_PORT_END,
};

static const char *const msg_stall_counters[] = { "bursts", "msgs", NULL };

struct msg_stall_conf {
	uint32_t stall_us;
	uint32_t stall_ns_msg;
	bool hang_at_stop;
};

struct msg_stall_ctx {
	uint64_t stall, stall_msg; /* TSC cycles per burst, per message */
	bool hang_at_stop;
};

static const struct lcp_opt msg_stall_opts[] = {
	LCP_OPT_UINT(struct msg_stall_conf, stall_us, "stall_us", "10", 0, 1000000, 0,
		     "spin this many microseconds per burst"),
	LCP_OPT_UINT(struct msg_stall_conf, stall_ns_msg, "stall_ns_msg", "0", 0, 1000000, 0,
		     "and this many nanoseconds more per message of the burst"),
	LCP_OPT_BOOL(struct msg_stall_conf, hang_at_stop, "hang_at_stop", "false",
		     "once the engine stops, never return from process() (a stuck stage)"),
	LCP_OPT_END,
};

static int
msg_stall_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	const struct msg_stall_conf *c = conf;
	struct msg_stall_ctx *x = *ctx;

	RTE_SET_USED(st);
	x->stall = (uint64_t)c->stall_us * (rte_get_tsc_hz() / 1000000);
	x->stall_msg = (uint64_t)((double)c->stall_ns_msg * (double)rte_get_tsc_hz() / 1e9);
	x->hang_at_stop = c->hang_at_stop;
	return 0;
}

static void
msg_stall_process(struct lcp_stage *st, void *ctx, unsigned port, void **objs, unsigned n)
{
	const struct msg_stall_ctx *x = ctx;
	uint64_t t0 = rte_rdtsc();

	RTE_SET_USED(port);
	while (rte_rdtsc() - t0 < x->stall + x->stall_msg * n)
		rte_pause();
	if (x->hang_at_stop && lcp_stage_stopping(st))
		for (;;) /* on purpose: see the option */
			rte_pause();
	lcp_count(st, 0, 1);
	lcp_count(st, 1, n);
	lcp_emit(st, 1, objs, n);
}

static const struct lcp_stage_ops msg_stall_ops = {
	.ports = msg_stall_ports,
	.counters = msg_stall_counters,
	.init = msg_stall_init,
	.process = msg_stall_process,
	.ctx_size = sizeof(struct msg_stall_ctx),
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "msg_stall"),
	.version = "1.0.0",
	.summary = "test stage: pass msgs on after a stall (a slow consumer)",
	.options = msg_stall_opts,
	.conf_size = sizeof(struct msg_stall_conf),
	.ops = &msg_stall_ops,
};
