/* SPDX-License-Identifier: BSD-3-Clause
 * abi13_pass — test-only stage that behaves as a plugin built against the SDK
 * of plugin ABI 1.3: its descriptor says minor 3, and it emits with the 1.3
 * lcp_emit(), which added "<port>.out" itself on a link to another lcore (ABI
 * 1.4 moved that count to the engine, which reads it off the ring). The engine
 * must count such a plugin's ring-link out exactly once (run/abi_compat.sh).
 * Its ops also fill the slot that was reserved before ABI 1.6 and is the
 * linger op since: the engine must not read it from a 1.3 plugin (counted in
 * "linger_calls", which must stay 0).
 *
 * "in" -> "out", pkt objects passed on unchanged.
 * Built only for `make check` (tests/run.mk), against the SDK headers only.
 */
#include <rte_ring.h>

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

/* lcp_emit() as the ABI 1.3 SDK had it (framework/include/lcp/stage_worker.h
 * before 1.4): the ring path adds "<port>.out" */
static inline void
abi13_emit(struct lcp_stage *st, unsigned port, void **objs, unsigned n)
{
	const struct lcp_edge *e = &st->edges[port];

	if (n == 0)
		return;
	if (e->dst == NULL && e->ring != NULL) {
		unsigned k = rte_ring_sp_enqueue_burst(e->ring, objs, n, NULL);

		lcp_ctr_add(st, e->ctr_out, k);
		if (k < n)
			lcp_emit_drop(st, e, objs + k, n - k);
		return;
	}
	lcp_emit(st, port, objs, n); /* direct and out-of-line paths: unchanged */
}

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
	abi13_emit(st, 1, objs, n);
}

enum { ABI13_C_LINGER_CALLS };
static const char *const abi13_counters[] = { "linger_calls", NULL };

/* what a 1.3 plugin might have in reserved[0]: never called */
static unsigned
abi13_linger(struct lcp_stage *st, void *ctx, bool last)
{
	RTE_SET_USED(ctx);
	RTE_SET_USED(last);
	lcp_count(st, ABI13_C_LINGER_CALLS, 1);
	return 1; /* would hold the shutdown for the whole engine.linger */
}

static const struct lcp_stage_ops abi13_ops = {
	.ports = abi13_ports,
	.counters = abi13_counters,
	.init = abi13_init,
	.process = abi13_process,
	.linger = abi13_linger,
};

/* LCP_PLUGIN_HEADER spelled out, with the minor of the SDK this copies */
LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	.magic = LCP_PLUGIN_MAGIC, .abi_major = LCP_ABI_MAJOR, .abi_minor = 3,
	.size = sizeof(struct lcp_plugin), .kind = LCP_KIND_STAGE, .name = "abi13_pass",
	.version = "1.0.0",
	.summary = "test stage: passes frames on with the ABI 1.3 lcp_emit()",
	.options = abi13_opts,
	.conf_size = sizeof(struct abi13_conf),
	.ops = &abi13_ops,
};
