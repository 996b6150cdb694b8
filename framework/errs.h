/* SPDX-License-Identifier: BSD-3-Clause
 * errs.h — an error list: validation reports every error, not the first. */
#ifndef LCP_ERRS_H
#define LCP_ERRS_H

#include <stddef.h>

struct lcp_errs {
	char **v;
	unsigned n;
	unsigned cap;
};

void lcp_errs_add(struct lcp_errs *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void lcp_errs_free(struct lcp_errs *e);

/* a growing string */
struct lcp_sbuf {
	char *s;
	size_t len;
	size_t cap;
};
void lcp_sbuf_addf(struct lcp_sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void lcp_sbuf_free(struct lcp_sbuf *b);
/* "a, b, c" from a NULL-terminated or counted list of names */
void lcp_sbuf_join(struct lcp_sbuf *b, const char *const *names, unsigned n, const char *sep);

#endif
