/* SPDX-License-Identifier: BSD-3-Clause
 * good.c — small valid plugins for the config corpus (tests/conf-bad,
 * tests/conf-good) and the loader tests. They pass every loader check and are
 * only ever validated (`lcpipe check`), never run: their ops are stubs. They keep
 * the corpus independent of the shipped plugins' option tables.
 *
 *   GOOD_SRC       stage "test_src":  out (pkt, out, REQUIRED), msg (msg, out),
 *                  seg (stream, out); option rate
 *   GOOD_SINK      stage "test_sink": in (pkt, in, REQUIRED), stream (stream, in); no options
 *   GOOD_OPTS      stage "test_opts": in (pkt, in), out (pkt, out); one option of every
 *                  type and width, a REQUIRED string, and a validate hook
 *   GOOD_COUNTERS  counters "test_counters"; option batch
 *   GOOD_SHADOW    stage "test_sink" again, built into another directory (shadowing)
 * No constructors here: the loader tests use these as the clean control group.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <lcp/plugin.h>
#include <lcp/opt.h>
#include <lcp/stage.h>
#include <lcp/counters.h>

#include "stubs.h"

#if defined(GOOD_SRC)
struct test_src_conf {
	uint32_t rate;
};
static const struct lcp_opt test_src_opts[] = {
	LCP_OPT_UINT(struct test_src_conf, rate, "rate", "10", 0, 1000, 0, "objects per second"),
	LCP_OPT_END,
};
static const struct lcp_port_def test_src_ports[] = {
	{ .name = "out", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_PKT, .flags = LCP_PORT_F_REQUIRED,
	  .doc = "frames (must be linked)" },
	{ .name = "msg", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_MSG, .doc = "messages" },
	{ .name = "seg", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_STREAM, .doc = "stream segments" },
	LCP_PORT_END,
};
static const char *const test_src_counters[] = { "made", NULL };
static const struct lcp_stage_ops test_src_ops = {
	.ports = test_src_ports, .counters = test_src_counters, .init = stub_init, .poll = stub_poll,
};
LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "test_src"),
	.version = "0.1", .summary = "test source: a required pkt output, a msg and a stream output",
	.options = test_src_opts, .conf_size = sizeof(struct test_src_conf), .ops = &test_src_ops,
};
#elif defined(GOOD_SINK) || defined(GOOD_SHADOW)
static const struct lcp_port_def test_sink_ports[] = {
	{ .name = "in", .dir = LCP_PORT_IN, .unit = LCP_UNIT_PKT, .flags = LCP_PORT_F_REQUIRED,
	  .doc = "frames (must be linked)" },
	{ .name = "stream", .dir = LCP_PORT_IN, .unit = LCP_UNIT_STREAM, .doc = "stream segments" },
	LCP_PORT_END,
};
static const struct lcp_stage_ops test_sink_ops = {
	.ports = test_sink_ports, .init = stub_init, .process = stub_process,
};
LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "test_sink"),
#ifdef GOOD_SHADOW
	.version = "0.2-shadow",
#else
	.version = "0.1",
#endif
	.summary = "test sink: a required pkt input and a stream input", .ops = &test_sink_ops,
};
#elif defined(GOOD_OPTS)
struct test_opts_conf {
	bool flag;
	int8_t i8;
	int16_t i16;
	int32_t i32;
	int64_t i64;
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;
	double ratio;
	const char *label;
	const char *note;
	int mode;
};
static const char *const test_opts_modes[] = { "fast", "safe", "strict", NULL };
static const struct lcp_opt test_opts_opts[] = {
	LCP_OPT_BOOL(struct test_opts_conf, flag, "flag", "false", "a boolean"),
	LCP_OPT_INT(struct test_opts_conf, i8, "i8", "0", -100, 100, 0, "int8"),
	LCP_OPT_INT(struct test_opts_conf, i16, "i16", "-1", -30000, 30000, 0, "int16"),
	LCP_OPT_INT(struct test_opts_conf, i32, "i32", "0", INT32_MIN, INT32_MAX, 0, "int32"),
	LCP_OPT_INT(struct test_opts_conf, i64, "i64", "0", INT64_MIN, INT64_MAX, 0, "int64"),
	LCP_OPT_UINT(struct test_opts_conf, u8, "u8", "7", 1, 200, 0, "uint8"),
	LCP_OPT_UINT(struct test_opts_conf, u16, "u16", "80", 1, 65535, 0, "uint16"),
	LCP_OPT_UINT(struct test_opts_conf, u32, "u32", "0", 0, 4000000000, 0, "uint32"),
	LCP_OPT_UINT(struct test_opts_conf, u64, "u64", "0", 0, INT64_MAX, 0, "uint64"),
	LCP_OPT_DOUBLE(struct test_opts_conf, ratio, "ratio", "0.5", 0.0, 1.0, 0, "a fraction"),
	LCP_OPT_STRING(struct test_opts_conf, label, "label", NULL, 2, 8, LCP_OPT_F_REQUIRED,
		       "a required string of 2 to 8 characters"),
	LCP_OPT_STRING(struct test_opts_conf, note, "note", NULL, 0, 0, 0, "an optional string"),
	LCP_OPT_ENUM(struct test_opts_conf, mode, "mode", "\"safe\"", test_opts_modes, 0,
		     "fast, safe or strict"),
	LCP_OPT_END,
};
static int
test_opts_validate(const void *conf, char *msg, size_t len)
{
	const struct test_opts_conf *c = conf;

	if (c->flag && c->mode == 0) {
		snprintf(msg, len, "flag needs mode \"safe\" or \"strict\", not \"fast\"");
		return -EINVAL;
	}
	return 0;
}
static const struct lcp_port_def test_opts_ports[] = {
	{ .name = "in", .dir = LCP_PORT_IN, .unit = LCP_UNIT_PKT, .doc = "frames" },
	{ .name = "out", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_PKT, .doc = "frames" },
	LCP_PORT_END,
};
static const struct lcp_stage_ops test_opts_ops = {
	.ports = test_opts_ports, .validate = test_opts_validate, .init = stub_init,
	.process = stub_process,
};
LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "test_opts"),
	.version = "0.1", .summary = "test stage with one option of every type",
	.options = test_opts_opts, .conf_size = sizeof(struct test_opts_conf), .ops = &test_opts_ops,
};
#elif defined(GOOD_COUNTERS)
struct test_counters_conf {
	uint32_t batch;
};
static const struct lcp_opt test_counters_opts[] = {
	LCP_OPT_UINT(struct test_counters_conf, batch, "batch", "64", 1, 1024, 0, "adds per flush"),
	LCP_OPT_END,
};
static void *
tc_create(const void *conf, const char *const *names, unsigned n, unsigned n_slots, int socket)
{
	(void)conf, (void)names, (void)n, (void)n_slots, (void)socket;
	errno = ENOTSUP;
	return NULL;
}
static void
tc_destroy(void *set)
{
	(void)set;
}
static void
tc_add(void *set, unsigned slot, unsigned idx, uint64_t v)
{
	(void)set, (void)slot, (void)idx, (void)v;
}
static uint64_t
tc_read(void *set, unsigned idx)
{
	(void)set, (void)idx;
	return 0;
}
static const struct lcp_counters_ops test_counters_ops = {
	.create = tc_create, .destroy = tc_destroy, .add = tc_add, .read = tc_read,
};
LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_COUNTERS, "test_counters"),
	.version = "0.1", .summary = "test counters strategy (validation only)",
	.options = test_counters_opts, .conf_size = sizeof(struct test_counters_conf),
	.ops = &test_counters_ops,
};
#else
#error "define one GOOD_<VARIANT>"
#endif

__attribute__((used)) static const void *const good_refs[] = {
	(const void *)stub_init, (const void *)stub_process, (const void *)stub_poll,
};
