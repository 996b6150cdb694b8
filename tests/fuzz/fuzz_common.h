/* SPDX-License-Identifier: BSD-3-Clause
 * fuzz_common.h — helpers shared by the fuzz targets (header-only).
 *
 * FUZZ_CHECK(cond): an invariant; __builtin_trap() when it does not hold, after
 * one line on stderr saying which (libFuzzer then saves the input as crash-*,
 * the replay main exits by SIGILL).
 *
 * Chunk plans: FUZZ_NCHUNK bytes at the front of an input pick the sizes the
 * rest is cut into, cycling: byte b gives b % 64 + 1 bytes (1..64), except
 * 0xff which gives "everything left". Each chunk is copied into its own exactly
 * sized allocation so reading past a chunk's end reads past an allocation.
 *
 * fuzz_grow(&b, &cap, need): room for need bytes in the buffer b of cap bytes
 * (twice that and more when it moves).
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                                                            \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #cond); \
			__builtin_trap();                                                          \
		}                                                                                  \
	} while (0)

#define FUZZ_NCHUNK 4

struct fuzz_chunks {
	uint8_t sel[FUZZ_NCHUNK];
	unsigned i;
};

static inline size_t
fuzz_chunk_next(struct fuzz_chunks *c, size_t left)
{
	uint8_t b = c->sel[c->i++ % FUZZ_NCHUNK];
	size_t n = b == 0xff ? left : (size_t)(b % 64u) + 1;

	return n < left ? n : left;
}

static inline void *
fuzz_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL)
		abort();
	return p;
}

static inline void *
fuzz_dup(const void *src, size_t n)
{
	void *p = fuzz_xmalloc(n);

	if (n)
		memcpy(p, src, n);
	return p;
}

static inline void
fuzz_grow(uint8_t **b, size_t *cap, size_t need)
{
	if (need <= *cap)
		return;
	*cap = need * 2 + 64;
	*b = realloc(*b, *cap);
	if (*b == NULL)
		abort();
}

#endif
