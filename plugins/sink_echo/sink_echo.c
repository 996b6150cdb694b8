/* SPDX-License-Identifier: BSD-3-Clause
 * sink_echo — send messages back where they came from: every `sample`-th `msg`
 * arriving on "in" (from a ws stage's "msg" port) leaves on "out", to be linked to
 * the producer's input that sends a msg's payload as one frame on connection
 * conn_id (the ws stage's "send" port: binary for opcode 2, text otherwise). For
 * echo tests and round-trip times (doc/sinks.md).
 *
 * Zero copy: the same lcp_msg object is passed on unchanged (conn_id, rx_tsc,
 * opcode, flags, payload); the receiver sends it and frees it with
 * lcp_msg_free(). Messages not sampled are freed here (counted in "skipped", not
 * a drop). Sampling is per stage, not per connection: with sample = N the 1st,
 * (N+1)th, (2N+1)th ... message to arrive is echoed.
 *
 * "out" is optional: when it is not linked, every message is freed and counted in
 * drop_unlinked (the engine's "out.drop_unlinked" stays 0), with a warning at
 * start.
 *
 * Counters: echoed (handed to "out"; a full ring to another lcore is then counted
 * by the engine in "out.drop_ring_full"), bytes (their payload bytes), skipped,
 * drop_unlinked. At the end, "in.in" == echoed + skipped + drop_unlinked. */
#include <errno.h>
#include <inttypes.h>

#include <rte_common.h>

#include <lcp/lcp.h>

enum { SE_IN, SE_OUT };

static const struct lcp_port_def sink_echo_ports[] = {
	[SE_IN] = { .name = "in", .dir = LCP_PORT_IN, .unit = LCP_UNIT_MSG, .flags = LCP_PORT_F_REQUIRED,
		    .doc = "messages to echo (e.g. from ws.msg)" },
	[SE_OUT] = { .name = "out", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_MSG,
		     .flags = LCP_PORT_F_FORWARDS(SE_IN), .doc = "the same messages, unchanged, to be sent back on conn_id (e.g. to ws.send)" },
	LCP_PORT_END,
};

#define SINK_ECHO_COUNTERS(X)                                                  \
	X(ECHOED, "echoed")                                                    \
	X(BYTES, "bytes")                                                      \
	X(SKIPPED, "skipped")                                                  \
	X(DROP_UNLINKED, "drop_unlinked")
enum {
#define X(e, s) SE_C_##e,
	SINK_ECHO_COUNTERS(X)
#undef X
};
static const char *const sink_echo_counters[] = { SINK_ECHO_COUNTERS(LCP_COUNTER_NAME) NULL };

struct sink_echo_conf {
	uint32_t sample;
};

static const struct lcp_opt sink_echo_opts[] = {
	LCP_OPT_UINT(struct sink_echo_conf, sample, "sample", "1", 1, 1000000000, 0,
		     "echo every Nth message (the 1st, N+1th, ...); the others are freed and counted in \"skipped\""),
	LCP_OPT_END,
};

struct sink_echo_ctx {
	uint32_t sample;
	uint32_t skip;  /* messages to skip before the next echo */
	bool linked;    /* "out" is linked */
	uint64_t echoed, skipped, dropped; /* for the closing log line */
};

static int
sink_echo_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	const struct sink_echo_conf *c = conf;
	struct sink_echo_ctx *x = *ctx;

	x->sample = c->sample;
	x->linked = lcp_port_is_linked(st, SE_OUT);
	if (!x->linked)
		lcp_log(st, LCP_LOG_WARNING,
			"port \"out\" is not linked: every message is freed and counted in drop_unlinked");
	return 0;
}

static void
sink_echo_process(struct lcp_stage *st, void *ctx, unsigned port, void **objs, unsigned n)
{
	struct sink_echo_ctx *x = ctx;
	uint64_t bytes = 0;
	unsigned k = 0, skipped = 0;

	RTE_SET_USED(port); /* one input port */
	if (unlikely(!x->linked)) {
		lcp_count(st, SE_C_DROP_UNLINKED, n);
		x->dropped += n;
		lcp_objs_free(LCP_UNIT_MSG, objs, n);
		return;
	}
	if (likely(x->sample == 1)) {
		for (unsigned i = 0; i < n; i++)
			bytes += ((const struct lcp_msg *)objs[i])->len;
		k = n;
	} else {
		for (unsigned i = 0; i < n; i++) {
			struct lcp_msg *m = objs[i];

			if (x->skip == 0) {
				x->skip = x->sample - 1;
				bytes += m->len;
				objs[k++] = m; /* compacted in place: k <= i */
			} else {
				x->skip--;
				skipped++;
				lcp_msg_free(m);
			}
		}
		if (skipped != 0) {
			lcp_count(st, SE_C_SKIPPED, skipped);
			x->skipped += skipped;
		}
	}
	if (k == 0)
		return;
	lcp_count(st, SE_C_ECHOED, k);
	lcp_count(st, SE_C_BYTES, bytes);
	x->echoed += k;
	lcp_emit(st, SE_OUT, objs, k);
}

static void
sink_echo_fini(struct lcp_stage *st, void *ctx)
{
	struct sink_echo_ctx *x = ctx;

	if (x->linked)
		lcp_log(st, LCP_LOG_INFO, "echoed %" PRIu64 " messages, skipped %" PRIu64, x->echoed, x->skipped);
	else
		lcp_log(st, LCP_LOG_INFO, "dropped %" PRIu64 " messages (out is not linked)", x->dropped);
}

static const struct lcp_stage_ops sink_echo_ops = {
	.ports = sink_echo_ports,
	.counters = sink_echo_counters,
	.init = sink_echo_init,
	.process = sink_echo_process,
	.fini = sink_echo_fini,
	.ctx_size = sizeof(struct sink_echo_ctx),
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "sink_echo"),
	.version = "1.0.0",
	.summary = "pass msg objects on unchanged (zero copy) to be sent back on their connection (ws.send)",
	.options = sink_echo_opts,
	.conf_size = sizeof(struct sink_echo_conf),
	.ops = &sink_echo_ops,
};
