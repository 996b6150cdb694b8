/* SPDX-License-Identifier: BSD-3-Clause
 * sink_null — consumes and frees whatever arrives (pkt, stream or msg: one input
 * port per unit), counting objects and, for mbuf units, bytes. */
#include <lcp/lcp.h>

enum { SN_IN_PKT, SN_IN_STREAM, SN_IN_MSG };

static const struct lcp_port_def sink_null_ports[] = {
	{ .name = "in", .dir = LCP_PORT_IN, .unit = LCP_UNIT_PKT, .doc = "frames to discard" },
	{ .name = "stream", .dir = LCP_PORT_IN, .unit = LCP_UNIT_STREAM, .doc = "stream segments to discard" },
	{ .name = "msg", .dir = LCP_PORT_IN, .unit = LCP_UNIT_MSG, .doc = "messages to discard" },
	LCP_PORT_END,
};

#define SINK_NULL_COUNTERS(X) X(BYTES, "bytes")
enum {
#define X(e, s) SINK_NULL_##e,
	SINK_NULL_COUNTERS(X)
#undef X
};
static const char *const sink_null_counters[] = { SINK_NULL_COUNTERS(LCP_COUNTER_NAME) NULL };

struct sink_null_conf {
	bool count_bytes;
};

static const struct lcp_opt sink_null_opts[] = {
	LCP_OPT_BOOL(struct sink_null_conf, count_bytes, "count_bytes", "true",
		     "add each object's length to the \"bytes\" counter"),
	LCP_OPT_END,
};

struct sink_null_ctx {
	bool count_bytes;
};

static int
sink_null_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	const struct sink_null_conf *c = conf;
	struct sink_null_ctx *x = *ctx;

	RTE_SET_USED(st);
	x->count_bytes = c->count_bytes;
	return 0;
}

static void
sink_null_process(struct lcp_stage *st, void *ctx, unsigned port, void **objs, unsigned n)
{
	struct sink_null_ctx *x = ctx;
	uint64_t bytes = 0;

	if (x->count_bytes) {
		for (unsigned i = 0; i < n; i++) {
			if (port == SN_IN_MSG)
				bytes += ((struct lcp_msg *)objs[i])->len;
			else
				bytes += rte_pktmbuf_pkt_len((struct rte_mbuf *)objs[i]);
		}
		lcp_count(st, SINK_NULL_BYTES, bytes);
	}
	lcp_objs_free(port == SN_IN_MSG ? LCP_UNIT_MSG : LCP_UNIT_PKT, objs, n);
}

static const struct lcp_stage_ops sink_null_ops = {
	.ports = sink_null_ports,
	.counters = sink_null_counters,
	.init = sink_null_init,
	.process = sink_null_process,
	.ctx_size = sizeof(struct sink_null_ctx),
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "sink_null"),
	.version = "1.0.0",
	.summary = "discard pkt, stream or msg objects, counting them",
	.options = sink_null_opts,
	.conf_size = sizeof(struct sink_null_conf),
	.ops = &sink_null_ops,
};
