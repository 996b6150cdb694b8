/* SPDX-License-Identifier: BSD-3-Clause
 * testutil.h — small helpers shared by the unit suites (header-only, static).
 * Everything a test writes goes under TEST_BUILDDIR "/unit/scratch-<name>".
 */
#ifndef LCP_TESTUTIL_H
#define LCP_TESTUTIL_H

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lcp_priv.h"

#define T_PLUGINS TEST_BUILDDIR "/plugins"
#define T_HDR T_PLUGINS "/hdr/.libs"
#define T_DUP T_PLUGINS "/dup/.libs"
#define T_OPEN T_PLUGINS "/open/.libs"
#define T_GOOD T_PLUGINS "/good/.libs"
#define T_SHADOW T_PLUGINS "/shadow/.libs"
#define T_NOTSO T_PLUGINS "/notso"

/* a fresh scratch directory for one test (removed and re-created) */
static inline char *
t_scratch(const char *name)
{
	char *dir, *cmd;

	ck_assert(asprintf(&dir, "%s/unit/scratch-%s", TEST_BUILDDIR, name) > 0);
	ck_assert(asprintf(&cmd, "rm -rf '%s' && mkdir -p '%s'", dir, dir) > 0);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	return dir;
}

static inline void
t_write(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	ck_assert_msg(f != NULL, "cannot write %s: %s", path, strerror(errno));
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

/* whole file, NUL-terminated; NULL if it does not exist */
static inline char *
t_read(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0, r;

	if (f == NULL)
		return NULL;
	do {
		if (cap - n < 4096) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap + 1);
			ck_assert(buf != NULL);
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
	} while (r > 0);
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

/* the registry entry for a file path, or NULL */
static inline struct lcp_plugin_file *
t_reg_find(struct lcp_registry *r, const char *path)
{
	for (unsigned i = 0; i < r->n; i++)
		if (strcmp(r->v[i].path, path) == 0)
			return &r->v[i];
	return NULL;
}

/* the entry's refusal must be exactly "<path>: refused: <why>" */
#define t_assert_refused(r_, path_, why_)                                                   \
	do {                                                                                \
		const struct lcp_plugin_file *pf_ = t_reg_find((r_), (path_));             \
		char *want_;                                                                \
                                                                                            \
		ck_assert_msg(pf_ != NULL, "%s not scanned", (path_));                      \
		ck_assert_msg(pf_->refused != NULL, "%s was accepted", (path_));            \
		ck_assert(asprintf(&want_, "%s: refused: %s", (path_), (why_)) > 0);        \
		ck_assert_str_eq(pf_->refused, want_);                                      \
		free(want_);                                                                \
	} while (0)

static inline void
t_errs_dump(const struct lcp_errs *e)
{
	for (unsigned i = 0; i < e->n; i++)
		fprintf(stderr, "  errs[%u] = %s\n", i, e->v[i]);
}

#endif
