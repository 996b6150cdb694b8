/* SPDX-License-Identifier: BSD-3-Clause
 * abi13_pass — test-only stage whose descriptor says it was built against the
 * SDK of plugin ABI 1.3. ABI 2.0 changed what the inlined lcp_emit() of every
 * plugin does (a same-lcore emit queues onto the destination's input vector
 * instead of calling its process()), so a 1.x plugin's inlined code cannot run
 * in a 2.x engine: the loader must refuse it from its ELF descriptor, before
 * dlopen(), naming the file and both versions (run/abi_compat.sh).
 *
 * "in" -> "out", pkt objects passed on unchanged (never runs).
 * Built only for `make check` (tests/run.mk), against the SDK headers only.
 */
#include <lcp/lcp.h>

static const struct lcp_port_def abi13_ports[] = {
	{ .name = "in", .dir = LCP_PORT_IN, .unit = LCP_UNIT_PKT, .flags = LCP_PORT_F_REQUIRED,
	  .doc = "frames" },
	{ .name = "out", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_PKT, .doc = "the same frames" },
	LCP_PORT_END,
};

struct abi13_conf {
	uint32_t unused;
};

static const struct lcp_opt abi13_opts[] = {
	LCP_OPT_END,
};

static int
abi13_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	RTE_SET_USED(st);
	RTE_SET_USED(conf);
	*ctx = NULL;
	return 0;
}

static void
abi13_process(struct lcp_stage *st, void *ctx, unsigned port, void **objs, unsigned n)
{
	RTE_SET_USED(ctx);
	RTE_SET_USED(port);
	lcp_emit(st, 1, objs, n);
}

static const struct lcp_stage_ops abi13_ops = {
	.ports = abi13_ports,
	.init = abi13_init,
	.process = abi13_process,
};

/* LCP_PLUGIN_HEADER spelled out, with the version of the SDK it stands for */
LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	.magic = LCP_PLUGIN_MAGIC, .abi_major = 1, .abi_minor = 3,
	.size = sizeof(struct lcp_plugin), .kind = LCP_KIND_STAGE, .name = "abi13_pass",
	.version = "1.0.0",
	.summary = "test stage: descriptor of a plugin built for ABI 1.3",
	.options = abi13_opts,
	.conf_size = sizeof(struct abi13_conf),
	.ops = &abi13_ops,
};
