/* SPDX-License-Identifier: BSD-3-Clause
 * errs.h — an error list: validation reports every error, not the first. */
#ifndef LCP_ERRS_H
#define LCP_ERRS_H

#include <stdbool.h>
#include <stddef.h>

struct lcp_errs {
	char **v;
	unsigned n;
	unsigned cap;
};

void lcp_errs_add(struct lcp_errs *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void lcp_errs_free(struct lcp_errs *e);
/* free n strings and the array holding them (either may be NULL when n is 0) */
void lcp_strv_free(char **v, unsigned n);

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
/* s is one of a NULL-terminated list of names (list may be NULL: none) */
bool lcp_str_in(const char *const *list, const char *s);

/* "did you mean": the candidate nearest to a word that was not found, by
 * edit distance (insert, delete, substitute, swap two neighbours; case
 * ignored), if it is near enough: 1 edit for words up to 5 characters, 2
 * beyond. Feed every candidate to lcp_suggest_try(), then lcp_suggest_hint()
 * gives " (did you mean \"x\"?)" or "". */
struct lcp_suggest {
	const char *word;
	const char *best;
	unsigned dist;
	char hint[96];
};
void lcp_suggest_init(struct lcp_suggest *s, const char *word);
void lcp_suggest_try(struct lcp_suggest *s, const char *cand);
const char *lcp_suggest_hint(struct lcp_suggest *s);

#endif
