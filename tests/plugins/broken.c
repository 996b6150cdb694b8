/* SPDX-License-Identifier: BSD-3-Clause
 * broken.c — deliberately broken plugins for the loader refusal tests
 * (tests/unit/test_loader.c, tests/unit/loader_cli.sh). Never installed.
 *
 * One source, one variant per build: tests/unit.mk compiles it once per
 * -DBROKEN_<VARIANT>. Every variant carries a constructor (marker.h) so the tests
 * can prove that a file refused from its header was never dlopen()ed.
 *
 *   built into plugins/hdr/   refused from the ELF file, before dlopen
 *     MAGIC ABI_MAJOR ABI_MINOR SIZE SYMSIZE TINY FUNC HIDDEN KIND NAME NONAME
 *   built into plugins/bugs/  should be refused but are not (XFAIL)
 *     LONGNAME DUPPORT
 *   built into plugins/dup/   refused from the ELF file: same name twice in one dir
 *     DUP_A DUP_B
 *   built into plugins/open/  refused after dlopen (their constructor does run),
 *                             except UNDEF whose dlopen fails before constructors
 *     NOINIT NOPROCESS NOPOLL NOPORTS BADPORT BADCTR DUPCTR NULLOPS NOVERSION BADOPTS
 *     CTRNOREAD UNDEF
 *   plugins/notso/            EXEC (an ET_EXEC), ARCHIVE (an ar archive), PIE,
 *                             OBJECT (ET_REL): built by explicit rules in unit.mk
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <lcp/plugin.h>
#include <lcp/opt.h>
#include <lcp/stage.h>
#include <lcp/counters.h>

#include "marker.h"
#include "stubs.h"

/* variants override fields LCP_PLUGIN_HEADER has set: that is the point */
#pragma GCC diagnostic ignored "-Woverride-init"

/* ---- stubs: nothing here ever runs a pipeline (the stage ops: stubs.h) ---- */
static void *
stub_create(const void *conf, const char *const *names, unsigned n, unsigned n_slots, int socket)
{
	(void)conf, (void)names, (void)n, (void)n_slots, (void)socket;
	return NULL;
}

static void
stub_destroy(void *set)
{
	(void)set;
}

static void
stub_add(void *set, unsigned slot, unsigned idx, uint64_t v)
{
	(void)set, (void)slot, (void)idx, (void)v;
}

static const struct lcp_port_def stub_ports[] = {
	{ .name = "in", .dir = LCP_PORT_IN, .unit = LCP_UNIT_PKT, .doc = "stub input" },
	{ .name = "out", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_PKT, .doc = "stub output" },
	LCP_PORT_END,
};

static const struct lcp_stage_ops stub_stage_ops = {
	.ports = stub_ports,
	.init = stub_init,
	.process = stub_process,
};

/* ---- the variants ---- */
#define T_DESC_HEAD(kind_, name_) LCP_PLUGIN_HEADER(kind_, name_), .version = "0.0.1", .summary = "broken test plugin"

#if defined(BROKEN_MAGIC)
LCP_TEST_MARKER_CTOR("bad_magic")
LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	T_DESC_HEAD(LCP_KIND_STAGE, "test_bad_magic"), .magic = 0xdeadbeefu, .ops = &stub_stage_ops,
};
#elif defined(BROKEN_ABI_MAJOR)
LCP_TEST_MARKER_CTOR("abi_major")
LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	T_DESC_HEAD(LCP_KIND_STAGE, "test_abi_major"), .abi_major = LCP_ABI_MAJOR + 1,
	.ops = &stub_stage_ops,
};
#elif defined(BROKEN_ABI_MINOR)
LCP_TEST_MARKER_CTOR("abi_minor")
LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	T_DESC_HEAD(LCP_KIND_STAGE, "test_abi_minor"), .abi_minor = LCP_ABI_MINOR + 1,
	.ops = &stub_stage_ops,
};
#elif defined(BROKEN_SIZE)
/* built against an older/newer struct: the size field says so */
LCP_TEST_MARKER_CTOR("bad_size")
LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	T_DESC_HEAD(LCP_KIND_STAGE, "test_bad_size"), .size = sizeof(struct lcp_plugin) - 8,
	.ops = &stub_stage_ops,
};
#elif defined(BROKEN_SYMSIZE)
/* the size field is right but the exported object is bigger than the struct */
LCP_TEST_MARKER_CTOR("sym_size")
LCP_PLUGIN_EXPORT const struct {
	struct lcp_plugin p;
	uint64_t extra[2];
} lcp_plugin_descriptor = {
	.p = { T_DESC_HEAD(LCP_KIND_STAGE, "test_sym_size"), .ops = &stub_stage_ops },
};
#elif defined(BROKEN_TINY)
/* the symbol exists but is far too small to be a descriptor */
LCP_TEST_MARKER_CTOR("tiny")
LCP_PLUGIN_EXPORT const uint32_t lcp_plugin_descriptor = LCP_PLUGIN_MAGIC;
#elif defined(BROKEN_FUNC)
/* the symbol is a function, not a data object */
LCP_TEST_MARKER_CTOR("func")
LCP_PLUGIN_EXPORT int lcp_plugin_descriptor(void);
LCP_PLUGIN_EXPORT int
lcp_plugin_descriptor(void)
{
	return 0;
}
#elif defined(BROKEN_HIDDEN)
/* the usual mistake: descriptor defined without LCP_PLUGIN_EXPORT, so hidden */
LCP_TEST_MARKER_CTOR("hidden")
const struct lcp_plugin lcp_plugin_descriptor = {
	T_DESC_HEAD(LCP_KIND_STAGE, "test_hidden"), .ops = &stub_stage_ops,
};
#elif defined(BROKEN_KIND)
LCP_TEST_MARKER_CTOR("bad_kind")
LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	T_DESC_HEAD(9, "test_bad_kind"), .ops = &stub_stage_ops,
};
#elif defined(BROKEN_NAME)
LCP_TEST_MARKER_CTOR("bad_name")
LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	T_DESC_HEAD(LCP_KIND_STAGE, "Test-Bad.Name"), .ops = &stub_stage_ops,
};
#elif defined(BROKEN_NONAME)
LCP_TEST_MARKER_CTOR("no_name")
LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	T_DESC_HEAD(LCP_KIND_STAGE, ""), .ops = &stub_stage_ops,
};
#elif defined(BROKEN_LONGNAME)
/* 32 name characters and no terminating NUL (plugins/bugs/: accepted today,
 * silently truncated; see tests/unit/test_known_bugs.c) */
LCP_TEST_MARKER_CTOR("long_name")
LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	.magic = LCP_PLUGIN_MAGIC, .abi_major = LCP_ABI_MAJOR, .abi_minor = LCP_ABI_MINOR,
	.size = sizeof(struct lcp_plugin), .kind = LCP_KIND_STAGE,
	/* C lets a 32-character literal fill char[32], dropping the NUL */
	.name = "test_long_name_xxxxxxxxxxxxxxxxy",
	.version = "0.0.1", .summary = "broken test plugin", .ops = &stub_stage_ops,
};
#elif defined(BROKEN_DUP_A) || defined(BROKEN_DUP_B)
#ifdef BROKEN_DUP_A
LCP_TEST_MARKER_CTOR("dup_a")
#else
LCP_TEST_MARKER_CTOR("dup_b")
#endif
/* two valid plugins declaring the same name in one directory */
LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	T_DESC_HEAD(LCP_KIND_STAGE, "test_dup"), .ops = &stub_stage_ops,
};
#elif defined(BROKEN_NOINIT)
LCP_TEST_MARKER_CTOR("no_init")
static const struct lcp_stage_ops noinit_ops = { .ports = stub_ports, .process = stub_process };
LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	T_DESC_HEAD(LCP_KIND_STAGE, "test_no_init"), .ops = &noinit_ops,
};
#elif defined(BROKEN_NOPROCESS)
LCP_TEST_MARKER_CTOR("no_process")
static const struct lcp_stage_ops noprocess_ops = {
	.ports = stub_ports, .init = stub_init, .poll = stub_poll,
};
LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	T_DESC_HEAD(LCP_KIND_STAGE, "test_no_process"), .ops = &noprocess_ops,
};
#elif defined(BROKEN_NOPOLL)
LCP_TEST_MARKER_CTOR("no_poll")
static const struct lcp_port_def nopoll_ports[] = {
	{ .name = "out", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_PKT },
	LCP_PORT_END,
};
static const struct lcp_stage_ops nopoll_ops = { .ports = nopoll_ports, .init = stub_init };
LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	T_DESC_HEAD(LCP_KIND_STAGE, "test_no_poll"), .ops = &nopoll_ops,
};
#elif defined(BROKEN_NOPORTS)
LCP_TEST_MARKER_CTOR("no_ports")
static const struct lcp_stage_ops noports_ops = { .init = stub_init, .poll = stub_poll };
LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	T_DESC_HEAD(LCP_KIND_STAGE, "test_no_ports"), .ops = &noports_ops,
};
#elif defined(BROKEN_BADPORT)
LCP_TEST_MARKER_CTOR("bad_port")
static const struct lcp_port_def badport_ports[] = {
	{ .name = "in", .dir = LCP_PORT_IN, .unit = LCP_UNIT_PKT },
	{ .name = "weird", .dir = LCP_PORT_IN, .unit = 7 },
	LCP_PORT_END,
};
static const struct lcp_stage_ops badport_ops = {
	.ports = badport_ports, .init = stub_init, .process = stub_process,
};
LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	T_DESC_HEAD(LCP_KIND_STAGE, "test_bad_port"), .ops = &badport_ops,
};
#elif defined(BROKEN_BADFWD)
/* LCP_PORT_F_FORWARDS naming an input of another unit */
LCP_TEST_MARKER_CTOR("bad_forward")
static const struct lcp_port_def badfwd_ports[] = {
	{ .name = "in", .dir = LCP_PORT_IN, .unit = LCP_UNIT_MSG },
	{ .name = "out", .dir = LCP_PORT_OUT, .unit = LCP_UNIT_PKT, .flags = LCP_PORT_F_FORWARDS(0) },
	LCP_PORT_END,
};
static const struct lcp_stage_ops badfwd_ops = {
	.ports = badfwd_ports, .init = stub_init, .process = stub_process,
};
LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	T_DESC_HEAD(LCP_KIND_STAGE, "test_bad_forward"), .ops = &badfwd_ops,
};
#elif defined(BROKEN_BADCTR)
/* a counter of its own named like a built-in one */
LCP_TEST_MARKER_CTOR("bad_counter")
static const char *const badctr_counters[] = { "packets", "drop_shutdown", NULL };
static const struct lcp_stage_ops badctr_ops = {
	.ports = stub_ports, .counters = badctr_counters, .init = stub_init, .process = stub_process,
};
LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	T_DESC_HEAD(LCP_KIND_STAGE, "test_bad_counter"), .ops = &badctr_ops,
};
#elif defined(BROKEN_BADHIST)
/* ABI 2.2 histogram bounds that do not ascend */
LCP_TEST_MARKER_CTOR("bad_hist")
static const uint64_t badhist_le[] = { 10, 30, 20 };
static const struct lcp_hist_def badhist_hists[] = {
	{ .name = "lat_seconds", .help = "bounds out of order", .le = badhist_le, .n_le = 3 },
	{ .name = NULL },
};
static const struct lcp_stage_ops badhist_ops = {
	.ports = stub_ports, .hists = badhist_hists, .init = stub_init, .process = stub_process,
};
LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	T_DESC_HEAD(LCP_KIND_STAGE, "test_bad_hist"), .ops = &badhist_ops,
};
#elif defined(BROKEN_DUPCTR)
LCP_TEST_MARKER_CTOR("dup_counter")
static const char *const dupctr_counters[] = { "packets", "bytes", "packets", NULL };
static const struct lcp_stage_ops dupctr_ops = {
	.ports = stub_ports, .counters = dupctr_counters, .init = stub_init, .process = stub_process,
};
LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	T_DESC_HEAD(LCP_KIND_STAGE, "test_dup_counter"), .ops = &dupctr_ops,
};
#elif defined(BROKEN_DUPPORT)
/* two ports with one name (plugins/bugs/: accepted today; links reach only the
 * first; see tests/unit/test_known_bugs.c) */
LCP_TEST_MARKER_CTOR("dup_port")
static const struct lcp_port_def dupport_ports[] = {
	{ .name = "in", .dir = LCP_PORT_IN, .unit = LCP_UNIT_PKT },
	{ .name = "in", .dir = LCP_PORT_IN, .unit = LCP_UNIT_MSG },
	LCP_PORT_END,
};
static const struct lcp_stage_ops dupport_ops = {
	.ports = dupport_ports, .init = stub_init, .process = stub_process,
};
LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	T_DESC_HEAD(LCP_KIND_STAGE, "test_dup_port"), .ops = &dupport_ops,
};
#elif defined(BROKEN_NULLOPS)
LCP_TEST_MARKER_CTOR("null_ops")
LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	T_DESC_HEAD(LCP_KIND_STAGE, "test_null_ops"),
};
#elif defined(BROKEN_NOVERSION)
LCP_TEST_MARKER_CTOR("no_version")
LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "test_no_version"), .summary = "no version",
	.ops = &stub_stage_ops,
};
#elif defined(BROKEN_BADOPTS)
LCP_TEST_MARKER_CTOR("bad_opts")
struct badopts_conf {
	uint32_t n;
	int mode;
};
static const struct lcp_opt badopts_opts[] = {
	LCP_OPT_UINT(struct badopts_conf, n, "n", "1", 0, 10, 0, "fine"),
	LCP_OPT_ENUM(struct badopts_conf, mode, "mode", "\"a\"", NULL, 0, "no choices"),
	LCP_OPT_END,
};
LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	T_DESC_HEAD(LCP_KIND_STAGE, "test_bad_opts"), .options = badopts_opts,
	.conf_size = sizeof(struct badopts_conf), .ops = &stub_stage_ops,
};
#elif defined(BROKEN_CTRNOREAD)
LCP_TEST_MARKER_CTOR("ctr_no_read")
static const struct lcp_counters_ops ctrnoread_ops = {
	.create = stub_create, .destroy = stub_destroy, .add = stub_add,
};
LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	T_DESC_HEAD(LCP_KIND_COUNTERS, "test_ctr_no_read"), .ops = &ctrnoread_ops,
};
#elif defined(BROKEN_UNDEF)
/* needs a symbol nobody provides: dlopen(RTLD_NOW) fails before constructors */
LCP_TEST_MARKER_CTOR("undef")
extern int lcp_test_no_such_function(void);
static int
undef_init(struct lcp_stage *st, const void *conf, void **ctx)
{
	(void)st, (void)conf, (void)ctx;
	return lcp_test_no_such_function();
}
static const struct lcp_stage_ops undef_ops = {
	.ports = stub_ports, .init = undef_init, .process = stub_process,
};
LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	T_DESC_HEAD(LCP_KIND_STAGE, "test_undef"), .ops = &undef_ops,
};
#elif defined(BROKEN_EXEC) || defined(BROKEN_PIE) || defined(BROKEN_OBJECT)
/* a program (ET_EXEC or PIE) or a relocatable object exporting a perfectly
 * good descriptor: only the file type is wrong */
LCP_TEST_MARKER_CTOR("exec")
LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
	T_DESC_HEAD(LCP_KIND_STAGE, "test_exec"), .ops = &stub_stage_ops,
};
#ifndef BROKEN_OBJECT
int main(void);
int
main(void)
{
	return 0;
}
#endif
#else
#error "define one BROKEN_<VARIANT>"
#endif

/* keep every stub referenced whatever the variant */
__attribute__((used)) static const void *const broken_refs[] = {
	(const void *)stub_init, (const void *)stub_process, (const void *)stub_poll,
	(const void *)stub_create, (const void *)stub_destroy, (const void *)stub_add,
	&stub_stage_ops,
};
