/* SPDX-License-Identifier: BSD-3-Clause
 * lcp/plugin.h — the plugin descriptor: the one symbol every lcpipe plugin exports.
 *
 * The loader reads magic, ABI version, size, kind and name straight from the ELF
 * file *before* dlopen(), so a plugin that is refused never runs a line of code.
 * That is why those fields are plain integers and an inline name, placed first.
 */
#ifndef LCP_PLUGIN_H
#define LCP_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LCP_PLUGIN_MAGIC 0x3150434cu /* "LCP1" little-endian */
#define LCP_ABI_MAJOR 2
#define LCP_ABI_MINOR 6 /* what each minor added: doc/abi.md */
#define LCP_NAME_MAX 32 /* plugin and stage names, including the NUL */
#define LCP_PLUGIN_SYMBOL "lcp_plugin_descriptor"

enum lcp_plugin_kind {
	LCP_KIND_STAGE = 1,    /* ops: struct lcp_stage_ops    (lcp/stage.h)    */
	LCP_KIND_COUNTERS = 2, /* ops: struct lcp_counters_ops (lcp/counters.h) */
	LCP_KIND_POOL = 3,     /* ops: defined by a later ABI minor            */
	LCP_KIND_BATCH = 4,    /* ops: defined by a later ABI minor            */
};

struct lcp_opt;

struct lcp_plugin {
	/* read from the file before dlopen: keep these plain and first */
	uint32_t magic;     /* LCP_PLUGIN_MAGIC */
	uint16_t abi_major; /* LCP_ABI_MAJOR when built; must equal the engine's */
	uint16_t abi_minor; /* LCP_ABI_MINOR when built; must not be newer */
	uint32_t size;      /* sizeof(struct lcp_plugin) when built */
	uint32_t kind;      /* enum lcp_plugin_kind */
	char name[LCP_NAME_MAX]; /* [a-z0-9_], unique on the search path */
	/* used after dlopen */
	const char *version;          /* free text, e.g. "1.0.0" */
	const char *summary;          /* one line, shown by list-plugins */
	const struct lcp_opt *options; /* option table, {0}-terminated, or NULL */
	size_t conf_size;             /* size of the struct the options fill */
	const void *ops;              /* struct lcp_<kind>_ops */
	void *reserved[4];            /* zero; room to grow without an ABI break */
};

#if defined(__clang__)
/* clang's AddressSanitizer appends a redzone to every instrumented global and
 * counts it in the ELF symbol's size, which the loader checks against the
 * descriptor's size: in a clang ASan build (--enable-fuzzing) every plugin was
 * refused ("symbol is 160 bytes, descriptor says 120"). The descriptor is not
 * instrumented; gcc's ASan leaves symbol sizes alone. */
#define LCP_PLUGIN_EXPORT __attribute__((visibility("default"), no_sanitize("address")))
#else
#define LCP_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* The fields every descriptor starts with. Use as:
 *   LCP_PLUGIN_EXPORT const struct lcp_plugin lcp_plugin_descriptor = {
 *           LCP_PLUGIN_HEADER(LCP_KIND_STAGE, "sink_null"),
 *           .version = "1.0", .summary = "...", .options = opts,
 *           .conf_size = sizeof(struct my_conf), .ops = &my_ops,
 *   };
 */
#define LCP_PLUGIN_HEADER(kind_, name_)                                        \
	.magic = LCP_PLUGIN_MAGIC, .abi_major = LCP_ABI_MAJOR,                 \
	.abi_minor = LCP_ABI_MINOR, .size = sizeof(struct lcp_plugin),         \
	.kind = (kind_), .name = name_

const char *lcp_plugin_kind_name(uint32_t kind);

#ifdef __cplusplus
}
#endif
#endif
