/* SPDX-License-Identifier: BSD-3-Clause
 * h_tap.c — test-only stage plugin "h_tap" (never installed): the far end of
 * every link of a stage under the plugin test harness (plugin_harness.c). Its
 * output ports are where the harness emits what a test pushes; its input ports
 * keep every object that arrives, in order, in the context (h_tap.h), for the
 * harness to hand to the test. It frees what it still holds at fini.
 */
#include <stdlib.h>

#include <lcp/lcp.h>

#include "h_tap.h"

static const struct lcp_port_def h_tap_ports[] = {
	[H_TAP_PKT] = {.name = "pkt",
		       .dir = LCP_PORT_IN,
		       .unit = LCP_UNIT_PKT,
		       .doc = "pkt objects to keep"},
	[H_TAP_STREAM] = {.name = "stream",
			  .dir = LCP_PORT_IN,
			  .unit = LCP_UNIT_STREAM,
			  .doc = "stream objects to keep"},
	[H_TAP_MSG] = {.name = "msg",
		       .dir = LCP_PORT_IN,
		       .unit = LCP_UNIT_MSG,
		       .doc = "msg objects to keep"},
	[H_TAP_PKT_OUT] = {.name = "pkt_out",
			   .dir = LCP_PORT_OUT,
			   .unit = LCP_UNIT_PKT,
			   .doc = "pkt objects the harness feeds"},
	[H_TAP_STREAM_OUT] = {.name = "stream_out",
			      .dir = LCP_PORT_OUT,
			      .unit = LCP_UNIT_STREAM,
			      .doc = "stream objects the harness feeds"},
	[H_TAP_MSG_OUT] = {.name = "msg_out",
			   .dir = LCP_PORT_OUT,
			   .unit = LCP_UNIT_MSG,
			   .doc = "msg objects the harness feeds"},
	LCP_PORT_END,
};

static int
h_tap_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	(void)st;
	(void)conf;
	(void)ctx; /* the engine's, zeroed (ctx_size) */
	return 0;
}

/* keep the burst; a burst that cannot be kept is freed (the harness's counts
 * of what arrived then disagree with what the stage emitted: the test fails) */
static void
h_tap_process(struct lcp_stage *st, void *ctx, unsigned port, void **objs, unsigned n)
{
	struct h_tap_ctx *t = ctx;
	unsigned unit = h_tap_ports[port].unit;

	t->calls++;
	t->unit = unit;
	if (t->n + n > t->cap) {
		unsigned cap = t->cap ? t->cap : 64;
		void **v;

		while (cap < t->n + n)
			cap *= 2;
		v = realloc(t->objs, cap * sizeof(*v));
		if (v == NULL) {
			lcp_log(st, LCP_LOG_ERR, "no memory to keep %u objects", t->n + n);
			lcp_objs_free(unit, objs, n);
			return;
		}
		t->objs = v;
		t->cap = cap;
	}
	for (unsigned i = 0; i < n; i++)
		t->objs[t->n++] = objs[i];
}

static void
h_tap_fini(struct lcp_stage *st, void *ctx)
{
	struct h_tap_ctx *t = ctx;

	(void)st;
	if (t->n != 0)
		lcp_objs_free(t->unit, t->objs, t->n);
	free(t->objs);
}

static const struct lcp_stage_ops h_tap_ops = {
	.ports = h_tap_ports,
	.init = h_tap_init,
	.process = h_tap_process,
	.fini = h_tap_fini,
	.ctx_size = sizeof(struct h_tap_ctx),
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "h_tap"),
	.version = "1.0.0",
	.summary =
		"test only: feeds and collects the ports of a stage under the plugin test harness",
	.ops = &h_tap_ops,
};
