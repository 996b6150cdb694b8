/* SPDX-License-Identifier: BSD-3-Clause
 * lcp/opt.h — declarative option tables.
 *
 * A plugin declares its options once, as a table of struct lcp_opt rows built with
 * the LCP_OPT_* macros below (designated initializers, never positional rows). The
 * engine's one walker validates a stage's "options" object against it, parses the
 * defaults with the same code as user values, and fills the plugin's config struct.
 * `lcpipe describe`, doc/plugins.md and conf/lcpipe.schema.json come from the same
 * table.
 */
#ifndef LCP_OPT_H
#define LCP_OPT_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

enum lcp_opt_type {
	LCP_OPT_BOOL = 1,   /* field: bool */
	LCP_OPT_INT = 2,    /* field: int8/16/32/64_t; range [min, max] */
	LCP_OPT_UINT = 3,   /* field: uint8/16/32/64_t; range [min, max], max <= INT64_MAX */
	LCP_OPT_DOUBLE = 4, /* field: double; range [dmin, dmax] */
	LCP_OPT_STRING = 5, /* field: const char *, owned by the engine until fini */
	LCP_OPT_ENUM = 6,   /* field: int, index into choices[] */
};

/* flags */
#define LCP_OPT_F_REQUIRED 0x1u /* no default: the user must give it */
#define LCP_OPT_F_PATH 0x2u     /* STRING: a file or directory; a relative path is
				 * taken from the config file's directory (ABI 1.5) */
#define LCP_OPT_F_POW2 0x4u     /* INT, UINT: a power of two inside [min, max]; the
				 * walker refuses others naming the nearest ones, and
				 * the docs and the schema say so (ABI 2.5) */

struct lcp_opt {
	const char *name;
	uint32_t type;  /* enum lcp_opt_type */
	uint32_t flags; /* LCP_OPT_F_* */
	size_t offset;  /* offsetof(conf struct, field) */
	size_t size;    /* sizeof(field) */
	const char *def; /* default, as the JSON text a user would write; NULL if required */
	int64_t min, max;     /* INT, UINT; STRING: length bounds */
	double dmin, dmax;    /* DOUBLE */
	const char *const *choices; /* ENUM: NULL-terminated */
	const char *doc;      /* one line */
};

#define LCP_OPT_FIELD_(st, fld) .offset = offsetof(st, fld), .size = sizeof(((st *)0)->fld)

#define LCP_OPT_BOOL(st, fld, nm, dflt, doc_)                                  \
	{ .name = nm, .type = LCP_OPT_BOOL, LCP_OPT_FIELD_(st, fld),            \
	  .def = dflt, .doc = doc_ }
#define LCP_OPT_INT(st, fld, nm, dflt, mn, mx, fl, doc_)                       \
	{ .name = nm, .type = LCP_OPT_INT, .flags = fl, LCP_OPT_FIELD_(st, fld), \
	  .def = dflt, .min = mn, .max = mx, .doc = doc_ }
#define LCP_OPT_UINT(st, fld, nm, dflt, mn, mx, fl, doc_)                      \
	{ .name = nm, .type = LCP_OPT_UINT, .flags = fl,                        \
	  LCP_OPT_FIELD_(st, fld), .def = dflt, .min = mn, .max = mx, .doc = doc_ }
#define LCP_OPT_DOUBLE(st, fld, nm, dflt, mn, mx, fl, doc_)                    \
	{ .name = nm, .type = LCP_OPT_DOUBLE, .flags = fl,                      \
	  LCP_OPT_FIELD_(st, fld), .def = dflt, .dmin = mn, .dmax = mx,         \
	  .doc = doc_ }
/* minlen/maxlen bound the string length in bytes */
#define LCP_OPT_STRING(st, fld, nm, dflt, minlen, maxlen, fl, doc_)            \
	{ .name = nm, .type = LCP_OPT_STRING, .flags = fl,                      \
	  LCP_OPT_FIELD_(st, fld), .def = dflt, .min = minlen, .max = maxlen,   \
	  .doc = doc_ }
#define LCP_OPT_ENUM(st, fld, nm, dflt, choices_, fl, doc_)                    \
	{ .name = nm, .type = LCP_OPT_ENUM, .flags = fl,                        \
	  LCP_OPT_FIELD_(st, fld), .def = dflt, .choices = choices_, .doc = doc_ }
#define LCP_OPT_END { .name = NULL }

#ifdef __cplusplus
}
#endif
#endif
