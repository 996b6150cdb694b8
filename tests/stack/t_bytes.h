/* SPDX-License-Identifier: BSD-3-Clause
 * t_bytes.h — what the stack's Check suites for byte streams share (utf8,
 * ws_frame, ws_deflate, ws_session, ws_handshake, tls):
 *
 *   REQUIRE(cond, fmt, ...)  from ../t_check.h
 *   struct gbuf              memory whose data ends right before a PROT_NONE
 *                            page: gb_place() copies a chunk there, so a decoder
 *                            that reads past its chunk faults
 *   struct sbuf              a growable byte string (sb_room, sb_put, sb_u8)
 *   rnd(&state)              splitmix64: seeded, repeatable
 *   rnd_bytes, rnd_text      n seeded random bytes / words of JSON-ish text
 *                            with some UTF-8 (valid UTF-8, cut at a word)
 */
#ifndef LCP_TESTS_STACK_T_BYTES_H
#define LCP_TESTS_STACK_T_BYTES_H

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../t_check.h"

/* ---- chunks that end right before a PROT_NONE page ---- */
struct gbuf {
	uint8_t *map;
	size_t maplen, cap;
};

static inline void
gb_init(struct gbuf *g, size_t cap)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), dp = (cap + pg - 1) / pg;

	if (dp == 0)
		dp = 1;
	g->maplen = (dp + 1) * pg;
	g->map = mmap(NULL, g->maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert(g->map != MAP_FAILED);
	ck_assert_int_eq(mprotect(g->map + dp * pg, pg, PROT_NONE), 0);
	g->cap = dp * pg; /* data ends at map + cap, the guard page follows */
}

/* n bytes ending right before the guard page, copied from src (or, src NULL,
 * left as they are: an output region) */
static inline uint8_t *
gb_place(struct gbuf *g, const void *src, size_t n)
{
	uint8_t *p;

	REQUIRE(n <= g->cap, "chunk of %zu bytes over the buffer of %zu", n, g->cap);
	p = g->map + g->cap - n;
	if (n && src != NULL)
		memcpy(p, src, n);
	return p;
}

static inline void
gb_free(struct gbuf *g)
{
	if (g->map != NULL)
		munmap(g->map, g->maplen);
	g->map = NULL;
}

/* ---- growable byte strings ---- */
struct sbuf {
	uint8_t *p;
	size_t len, cap;
};

/* room for n more bytes: where they go */
static inline uint8_t *
sb_room(struct sbuf *s, size_t n)
{
	if (s->len + n > s->cap) {
		size_t c = s->cap ? s->cap : 256;

		while (c < s->len + n)
			c *= 2;
		s->p = realloc(s->p, c);
		REQUIRE(s->p != NULL, "out of memory");
		s->cap = c;
	}
	return s->p + s->len;
}

static inline void
sb_put(struct sbuf *s, const void *d, size_t n)
{
	uint8_t *w = sb_room(s, n);

	if (n)
		memcpy(w, d, n);
	s->len += n;
}

static inline void
sb_u8(struct sbuf *s, uint8_t b)
{
	sb_put(s, &b, 1);
}

static inline void
sb_free(struct sbuf *s)
{
	free(s->p);
	memset(s, 0, sizeof(*s));
}

/* splitmix64 */
static inline uint64_t
rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline void
rnd_bytes(uint8_t *p, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rnd(&seed);
}

static inline void
rnd_text(uint8_t *p, size_t n, uint64_t seed)
{
	static const char *const words[] = {
		"{\"s\":\"BTCUSD\",", "\"p\":\"101.25\",", "\"q\":300,",      "},",
		"\xc3\xa9t\xc3\xa9 ", "\xe2\x82\xac",	   "\xf0\x9f\x92\xb0"};
	size_t i = 0;

	while (i < n) {
		const char *w = words[rnd(&seed) % 7];
		size_t k = strlen(w);

		if (k > n - i) {
			memset(p + i, 'x', n - i);
			break;
		}
		memcpy(p + i, w, k);
		i += k;
	}
}

#endif
