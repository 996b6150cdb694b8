/* SPDX-License-Identifier: BSD-3-Clause
 * h_ctx — test-only stage for the engine's side of a stage's context
 * (lcp_stage_ops.ctx_size, ABI 2.6; harness/test_h_engine.c). Its init()
 * counts what it found in *ctx (ctx_given: not NULL; ctx_aligned: on a cache
 * line; ctx_zeroed: every byte 0), marks the block and then, as its options
 * say, returns 0, fails (fail: -EIO after logging why) or puts a block of its
 * own in *ctx (replace), which its fini() frees. Never installed.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_common.h>
#include <rte_malloc.h>

#include <lcp/lcp.h>

#define H_CTX_COUNTERS(X)                                                                          \
	X(GIVEN, "ctx_given")                                                                      \
	X(ALIGNED, "ctx_aligned")                                                                  \
	X(ZEROED, "ctx_zeroed")
enum {
#define X(e, s) H_CTX_##e,
	H_CTX_COUNTERS(X)
#undef X
};
static const char *const h_ctx_counters[] = {H_CTX_COUNTERS(LCP_COUNTER_NAME) NULL};

/* an odd size, larger than a cache line */
struct h_ctx {
	uint8_t bytes[1000];
	bool own; /* a block init() allocated itself (replace) */
};

struct h_ctx_conf {
	bool fail;
	bool replace;
};

static const struct lcp_opt h_ctx_opts[] = {
	LCP_OPT_BOOL(struct h_ctx_conf, fail, "fail", "false", "init() fails with -EIO"),
	LCP_OPT_BOOL(struct h_ctx_conf, replace, "replace", "false",
		     "init() puts a block of its own in *ctx (a plugin bug the engine refuses)"),
	LCP_OPT_END,
};

static const struct lcp_port_def h_ctx_ports[] = {
	{.name = "in", .dir = LCP_PORT_IN, .unit = LCP_UNIT_PKT, .doc = "frames, freed"},
	LCP_PORT_END,
};

static int
h_ctx_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	const struct h_ctx_conf *c = conf;
	struct h_ctx *x = *ctx;
	bool zeroed = true;

	if (x == NULL)
		return 0; /* ctx_given stays 0: the test fails on it */
	lcp_count(st, H_CTX_GIVEN, 1);
	lcp_count(st, H_CTX_ALIGNED, (uintptr_t)x % RTE_CACHE_LINE_SIZE == 0);
	for (size_t i = 0; i < sizeof(*x); i++)
		zeroed &= ((const uint8_t *)x)[i] == 0;
	lcp_count(st, H_CTX_ZEROED, zeroed);
	memset(x->bytes, 0xa5, sizeof(x->bytes)); /* the whole size is ours */
	if (c->fail) {
		lcp_log(st, LCP_LOG_ERR, "failing on purpose (option fail)");
		return -EIO;
	}
	if (c->replace) {
		struct h_ctx *own = rte_zmalloc("h_ctx", sizeof(*own), 0);

		if (own == NULL)
			return -ENOMEM;
		own->own = true;
		*ctx = own;
	}
	return 0;
}

static void
h_ctx_process(struct lcp_stage *st, void *ctx, unsigned port, void **objs, unsigned n)
{
	RTE_SET_USED(st);
	RTE_SET_USED(ctx);
	RTE_SET_USED(port);
	lcp_objs_free(LCP_UNIT_PKT, objs, n);
}

static void
h_ctx_fini(struct lcp_stage *st, void *ctx)
{
	struct h_ctx *x = ctx;

	RTE_SET_USED(st);
	if (x->own)
		rte_free(x);
}

static const struct lcp_stage_ops h_ctx_ops = {
	.ports = h_ctx_ports,
	.counters = h_ctx_counters,
	.init = h_ctx_init,
	.process = h_ctx_process,
	.fini = h_ctx_fini,
	.ctx_size = sizeof(struct h_ctx),
};

LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "h_ctx"),
	.version = "1.0.0",
	.summary = "test only: what init() finds in the context the engine allocated",
	.options = h_ctx_opts,
	.conf_size = sizeof(struct h_ctx_conf),
	.ops = &h_ctx_ops,
};
