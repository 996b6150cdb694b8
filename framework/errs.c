/* SPDX-License-Identifier: BSD-3-Clause */
#include <ctype.h>
#include <stdint.h>
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
lcp_strv_free(char **v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void
lcp_errs_free(struct lcp_errs *e)
{
	lcp_strv_free(e->v, e->n);
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

bool
lcp_str_in(const char *const *list, const char *s)
{
	for (; list != NULL && *list != NULL; list++)
		if (strcmp(*list, s) == 0)
			return true;
	return false;
}

/* optimal string alignment distance, case ignored; words longer than 63
 * characters are not compared (UINT32_MAX) */
static unsigned
osa_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned d[64][64];

	if (la > 63 || lb > 63)
		return UINT32_MAX;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (unsigned)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			unsigned cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
			unsigned v = d[i - 1][j] + 1;

			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + cost < v)
				v = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == tolower((unsigned char)b[j - 1]) &&
			    d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	return d[la][lb];
}

void
lcp_suggest_init(struct lcp_suggest *s, const char *word)
{
	s->word = word;
	s->best = NULL;
	s->dist = UINT32_MAX;
	s->hint[0] = '\0';
}

void
lcp_suggest_try(struct lcp_suggest *s, const char *cand)
{
	unsigned d, max;

	if (s->word == NULL || cand == NULL || strcmp(s->word, cand) == 0)
		return;
	max = strlen(s->word) > 5 ? 2 : 1;
	d = osa_distance(s->word, cand);
	if (d <= max && d < s->dist) {
		s->dist = d;
		s->best = cand;
	}
}

const char *
lcp_suggest_hint(struct lcp_suggest *s)
{
	if (s->best == NULL)
		return "";
	snprintf(s->hint, sizeof(s->hint), " (did you mean \"%.60s\"?)", s->best);
	return s->hint;
}
