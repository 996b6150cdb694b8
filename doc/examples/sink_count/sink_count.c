/* SPDX-License-Identifier: BSD-3-Clause
 * sink_count — an lcpipe stage plugin built out of tree against the installed SDK
 * (doc/writing-a-plugin.md walks through it). It counts the frames and bytes that
 * reach its "in" port, logs a progress line every `every` frames, refuses frames
 * longer than `max_size` (counted under drop_too_big), and frees everything. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <rte_mbuf.h>

#include <lcp/lcp.h>

/* Ports: the index in this table is the port number process() receives. */
enum { SINK_COUNT_IN };

static const struct lcp_port_def sink_count_ports[] = {
	[SINK_COUNT_IN] = { .name = "in", .dir = LCP_PORT_IN, .unit = LCP_UNIT_PKT,
			    .flags = LCP_PORT_F_REQUIRED, .doc = "frames to count, then free" },
	LCP_PORT_END,
};

/* Counters: one X-macro list makes the enum and the names. Names starting with
 * "drop_" are drop reasons: the report adds them up under the stage's drops. */
#define SINK_COUNT_COUNTERS(X)                                                 \
	X(PKTS, "pkts")                                                        \
	X(BYTES, "bytes")                                                      \
	X(DROP_TOO_BIG, "drop_too_big")

enum {
#define X(e, s) SINK_COUNT_##e,
	SINK_COUNT_COUNTERS(X)
#undef X
};

/* LCP_COUNTER_NAME (lcp/stage.h) is the X that writes the names */
static const char *const sink_count_counters[] = { SINK_COUNT_COUNTERS(LCP_COUNTER_NAME) NULL };

/* Options: the engine validates the stage's "options" object against this
 * table and fills a struct sink_count_conf before init() runs. */
struct sink_count_conf {
	uint64_t every;    /* log a line every this many frames; 0 = never */
	uint32_t max_size; /* refuse frames longer than this; 0 = no limit */
};

static const struct lcp_opt sink_count_opts[] = {
	LCP_OPT_UINT(struct sink_count_conf, every, "every", "0", 0, INT64_MAX, 0,
		     "log a progress line every this many frames; 0 = never"),
	LCP_OPT_UINT(struct sink_count_conf, max_size, "max_size", "0", 0, 65535, 0,
		     "refuse (free and count under drop_too_big) frames longer than this many bytes; 0 = no limit"),
	LCP_OPT_END,
};

/* validate: cross-value checks a min/max cannot express. Runs in `lcpipe check`
 * too, before EAL exists: no DPDK calls here. */
static int
sink_count_validate(const void *conf, char *msg, size_t msglen)
{
	const struct sink_count_conf *c = conf;

	if (c->max_size != 0 && c->max_size < 14) {
		snprintf(msg, msglen,
			 "max_size %" PRIu32 " is shorter than an Ethernet header (14 bytes); 0 means no limit",
			 c->max_size);
		return -EINVAL;
	}
	return 0;
}

/* The context: everything the instance needs, no globals. Only the stage's
 * lcore touches it between start and stop. */
struct sink_count_ctx {
	struct sink_count_conf conf;
	uint64_t pkts;     /* running totals for the log lines: counters are */
	uint64_t bytes;    /* write-only for a plugin */
	uint64_t dropped;
	uint64_t next_log; /* log when pkts reaches this */
};

/* init: control thread, before EAL launches the lcores; no I/O. The engine
 * has allocated the context (ops.ctx_size: zeroed, on the stage's socket) and
 * frees it after fini; init fills it. A context whose size depends on the
 * options is allocated here instead, with lcp_stage_zmalloc(), and freed in
 * fini (ctx_size 0). */
static int
sink_count_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	struct sink_count_ctx *x = *ctx;

	(void)st;
	x->conf = *(const struct sink_count_conf *)conf;
	x->next_log = x->conf.every;
	return 0;
}

/* process: the stage's lcore, n frames arriving on port `port`. They are ours
 * now: every one is counted (pkts or a drop reason) and freed. */
static void
sink_count_process(struct lcp_stage *st, void *ctx, unsigned port, void **objs, unsigned n)
{
	struct sink_count_ctx *x = ctx;
	uint64_t bytes = 0;
	unsigned too_big = 0;

	(void)port; /* one input port */
	for (unsigned i = 0; i < n; i++) {
		uint32_t len = rte_pktmbuf_pkt_len((struct rte_mbuf *)objs[i]);

		if (x->conf.max_size != 0 && len > x->conf.max_size)
			too_big++;
		else
			bytes += len;
	}
	lcp_count(st, SINK_COUNT_PKTS, n - too_big);
	lcp_count(st, SINK_COUNT_BYTES, bytes);
	if (too_big != 0)
		lcp_count(st, SINK_COUNT_DROP_TOO_BIG, too_big);
	lcp_objs_free(LCP_UNIT_PKT, objs, n);

	x->pkts += n - too_big;
	x->bytes += bytes;
	x->dropped += too_big;
	if (x->conf.every != 0 && x->pkts >= x->next_log) {
		lcp_log(st, LCP_LOG_INFO, "%" PRIu64 " frames, %" PRIu64 " bytes", x->pkts,
			x->bytes);
		x->next_log = (x->pkts / x->conf.every + 1) * x->conf.every;
	}
}

/* stop: the stage's lcore, once the pipeline has drained. A sink holds
 * nothing, so it only reports. */
static void
sink_count_stop(struct lcp_stage *st, void *ctx)
{
	struct sink_count_ctx *x = ctx;

	lcp_log(st, LCP_LOG_INFO, "total %" PRIu64 " frames, %" PRIu64 " bytes, %" PRIu64 " refused",
		x->pkts, x->bytes, x->dropped);
}

static const struct lcp_stage_ops sink_count_ops = {
	.ports = sink_count_ports,
	.counters = sink_count_counters,
	.validate = sink_count_validate,
	.init = sink_count_init,
	.process = sink_count_process,
	.stop = sink_count_stop,
	.ctx_size = sizeof(struct sink_count_ctx),
	/* no fini: init made nothing to free. One that did frees it there, on the
	 * control thread, after the lcores have stopped. */
};

/* The one exported symbol. Everything else in this file is static, and the
 * build uses -fvisibility=hidden, so nothing else leaks into the engine. */
LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "sink_count"),
	.version = "1.0.0",
	.summary = "count frames and bytes, refuse oversized ones (out-of-tree example)",
	.options = sink_count_opts,
	.conf_size = sizeof(struct sink_count_conf),
	.ops = &sink_count_ops,
};
