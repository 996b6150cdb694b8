/* SPDX-License-Identifier: BSD-3-Clause
 * utf8.c — incremental UTF-8 validation (RFC 3629) for WebSocket text.
 *
 *   stk_utf8_validate  state in, state out; any chunking
 *
 * States: ACCEPT (0), REJECT (1), then "continuation bytes still expected"
 * with the range the next one must fall in (E0: A0..BF, ED: 80..9F, F0: 90..BF,
 * F4: 80..8F exclude overlongs, surrogates and > U+10FFFF). ASCII, the bulk of
 * market data, is skipped 16 bytes at a time. Hand-written: the Debian
 * libraries that validate UTF-8 (glib, ICU) are not resumable across chunks
 * without copying, and this runs on every text byte. */
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <stk/ws.h>

enum {
	U_ACC = 0, U_REJ = 1,
	U_C1,  /* one more 80..BF */
	U_C2,  /* two more 80..BF */
	U_C3,  /* three more 80..BF */
	U_E0,  /* A0..BF then one */
	U_ED,  /* 80..9F then one */
	U_F0,  /* 90..BF then two */
	U_F4,  /* 80..8F then two */
};

static inline uint32_t
step(uint32_t s, uint8_t b)
{
	switch (s) {
	case U_ACC:
		if (b < 0x80)
			return U_ACC;
		if (b < 0xc2)
			return U_REJ; /* continuation without a lead, or overlong C0/C1 */
		if (b < 0xe0)
			return U_C1;
		if (b == 0xe0)
			return U_E0;
		if (b == 0xed)
			return U_ED;
		if (b < 0xf0)
			return U_C2;
		if (b == 0xf0)
			return U_F0;
		if (b < 0xf4)
			return U_C3;
		if (b == 0xf4)
			return U_F4;
		return U_REJ;
	case U_C1:
		return (b & 0xc0) == 0x80 ? U_ACC : U_REJ;
	case U_C2:
		return (b & 0xc0) == 0x80 ? U_C1 : U_REJ;
	case U_C3:
		return (b & 0xc0) == 0x80 ? U_C2 : U_REJ;
	case U_E0:
		return b >= 0xa0 && b <= 0xbf ? U_C1 : U_REJ;
	case U_ED:
		return b >= 0x80 && b <= 0x9f ? U_C1 : U_REJ;
	case U_F0:
		return b >= 0x90 && b <= 0xbf ? U_C2 : U_REJ;
	case U_F4:
		return b >= 0x80 && b <= 0x8f ? U_C2 : U_REJ;
	default:
		return U_REJ;
	}
}

uint32_t
stk_utf8_validate(uint32_t s, const uint8_t *p, size_t n)
{
	const uint8_t *start = p, *end = p + n;

	while (p < end) {
		if (s == U_ACC) {
			/* ASCII fast path: 16 bytes at a time (SSE2, the x86-64
			 * baseline), then 8; a tail of 1..7 bytes is checked with
			 * the chunk's last 8 bytes (overlapping what was read) */
#if defined(__SSE2__)
			while (end - p >= 16) {
				if (_mm_movemask_epi8(_mm_loadu_si128((const __m128i *)(const void *)p)) != 0)
					break;
				p += 16;
			}
#endif
			while (end - p >= 8) {
				uint64_t w;

				memcpy(&w, p, 8);
				if (w & 0x8080808080808080ull)
					break;
				p += 8;
			}
			if (p < end && end - p < 8 && end - start >= 8) {
				uint64_t w;

				memcpy(&w, end - 8, 8);
				if ((w & 0x8080808080808080ull) == 0)
					break; /* the tail is ASCII */
			}
			while (p < end && *p < 0x80)
				p++;
			if (p == end)
				break;
		}
		s = step(s, *p++);
		if (s == U_REJ)
			return U_REJ;
	}
	return s;
}
