/* SPDX-License-Identifier: BSD-3-Clause
 * stream_drop — test-only stage: passes `stream` objects from "in" to "out",
 * dropping every drop_every-th DATA object (counted "dropped"): a hole in a
 * TCP stream between tcp and its application, on demand, for
 * tests/run/stream-gap.sh (the tcp stage itself never makes one).
 *
 * Built only for `make check` (tests/run.mk), against the SDK headers only.
 */

#include <lcp/lcp.h>

#include "test_plugin.h"

static const struct lcp_port_def stream_drop_ports[] = {
	{ .name = "in", .dir = LCP_PORT_IN, .unit = LCP_UNIT_STREAM, .flags = LCP_PORT_F_REQUIRED,
	  .doc = "stream objects" },
	{ .name = "out", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_STREAM, .flags = LCP_PORT_F_REQUIRED,
	  .doc = "the same, less the dropped ones" },
	LCP_PORT_END,
};

static const char *const stream_drop_counters[] = { "data", "dropped", NULL };

struct stream_drop_conf {
	uint32_t drop_every;
};

static const struct lcp_opt stream_drop_opts[] = {
	LCP_OPT_UINT(struct stream_drop_conf, drop_every, "drop_every", "1000", 1, 1000000000, 0,
		     "drop every N-th DATA object"),
	LCP_OPT_END,
};

struct stream_drop_ctx {
	uint32_t every, seen;
};

static int
stream_drop_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	const struct stream_drop_conf *c = conf;
	struct stream_drop_ctx *x = *ctx;

	RTE_SET_USED(st);
	x->every = c->drop_every;
	return 0;
}

static void
stream_drop_process(struct lcp_stage *st, void *ctx, unsigned port, void **objs, unsigned n)
{
	struct stream_drop_ctx *x = ctx;
	unsigned k = 0;

	RTE_SET_USED(port);
	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *m = objs[i];

		if (lcp_stream_meta(m)->ev == LCP_STREAM_EV_DATA) {
			lcp_count(st, 0, 1);
			if (++x->seen % x->every == 0) {
				lcp_count(st, 1, 1);
				rte_pktmbuf_free(m);
				continue;
			}
		}
		objs[k++] = m;
	}
	lcp_emit(st, 1, objs, k);
}

static const struct lcp_stage_ops stream_drop_ops = {
	.ports = stream_drop_ports,
	.counters = stream_drop_counters,
	.init = stream_drop_init,
	.process = stream_drop_process,
	.ctx_size = sizeof(struct stream_drop_ctx),
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "stream_drop"),
	.version = "1.0.0",
	.summary = "test stage: pass stream objects on, dropping every N-th DATA (a hole on demand)",
	.options = stream_drop_opts,
	.conf_size = sizeof(struct stream_drop_conf),
	.ops = &stream_drop_ops,
};
