/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errs.h"

static void *
xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n);

	if (q == NULL) {
		fprintf(stderr, "lcpipe: out of memory\n");
		abort();
	}
	return q;
}

void
lcp_errs_add(struct lcp_errs *e, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (s == NULL)
		abort();
	if (e->n == e->cap) {
		e->cap = e->cap ? e->cap * 2 : 8;
		e->v = xrealloc(e->v, e->cap * sizeof(*e->v));
	}
	e->v[e->n++] = s;
}

void
lcp_errs_free(struct lcp_errs *e)
{
	for (unsigned i = 0; i < e->n; i++)
		free(e->v[i]);
	free(e->v);
	memset(e, 0, sizeof(*e));
}

void
lcp_sbuf_addf(struct lcp_sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		abort();
	if (b->len + (size_t)n + 1 > b->cap) {
		b->cap = (b->len + (size_t)n + 1) * 2;
		b->s = xrealloc(b->s, b->cap);
	}
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void
lcp_sbuf_free(struct lcp_sbuf *b)
{
	free(b->s);
	memset(b, 0, sizeof(*b));
}

void
lcp_sbuf_join(struct lcp_sbuf *b, const char *const *names, unsigned n, const char *sep)
{
	lcp_sbuf_addf(b, "%s", "");
	for (unsigned i = 0; (n == 0 || i < n) && names[i] != NULL; i++)
		lcp_sbuf_addf(b, "%s%s", i ? sep : "", names[i]);
}
