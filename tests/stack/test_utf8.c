/* SPDX-License-Identifier: BSD-3-Clause
 * test_utf8.c — stack/utf8.c (stk_utf8_validate) through stk/ws.h (L0).
 *
 *   boundaries          U+0000, U+007F/U+0080, U+07FF/U+0800, U+D7FF, U+E000,
 *                       U+FFFF/U+10000, U+10FFFF accepted, alone and in text
 *   every_scalar        every scalar value U+0000..U+10FFFF (no surrogates),
 *                       encoded by the test: ACCEPT whole, byte by byte (every
 *                       prefix inside the sequence is neither ACCEPT nor REJECT)
 *                       and split at every position across two calls
 *   invalid_vectors     overlong C0 80 / C1 BF / E0 80 80 / E0 9F BF / F0 80 80 80 /
 *                       F0 8F BF BF, surrogates ED A0 80 .. ED BF BF, F4 90 80 80,
 *                       leads F5..FF, C0, C1, stray continuations (alone, after
 *                       ASCII, after a complete sequence), a lead followed by
 *                       ASCII or by another lead -> REJECT, also when fed one
 *                       byte per call
 *   overlong_all        every code point in a longer form than needed -> REJECT
 *   surrogates_all      every U+D800..U+DFFF -> REJECT
 *   above_max_all       every 4-byte form of U+110000..U+1FFFFF -> REJECT
 *   truncated           every proper prefix of a multi-byte sequence at the end
 *                       of input: neither ACCEPT nor REJECT; completed by the next
 *                       call -> ACCEPT; followed by ASCII or the end of a long
 *                       ASCII run -> REJECT
 *   reject_sticky       REJECT stays REJECT whatever follows (also 0 bytes)
 *   fast_path           ASCII buffers of 64..80 bytes at alignments 0..7 ending
 *                       on a guard page, one bad byte at every offset -> REJECT;
 *                       one valid 2/3/4-byte sequence at every offset -> ACCEPT;
 *                       a lead byte as the very last byte -> incomplete
 *   random_vs_reference 200000 seeded random byte strings (UTF-8-ish mix)
 *                       against the test's own decoder-based classifier
 *                       (valid / invalid / valid-but-incomplete), whole and split
 *                       at a random position
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <stk/ws.h>

#include "t_bytes.h"

#define ACC STK_UTF8_ACCEPT
#define REJ STK_UTF8_REJECT

static uint32_t
v(const void *p, size_t n)
{
	struct gbuf g;
	uint32_t s;

	gb_init(&g, n ? n : 1);
	s = stk_utf8_validate(ACC, gb_place(&g, p, n), n);
	gb_free(&g);
	return s;
}

/* one call per byte */
static uint32_t
v_bytewise(const uint8_t *p, size_t n)
{
	uint32_t s = ACC;

	for (size_t i = 0; i < n; i++)
		s = stk_utf8_validate(s, p + i, 1);
	return s;
}

#define IS_MID(s) ((s) != ACC && (s) != REJ)

/* the test's own encoder: cp in `len` bytes (len may be longer than needed: overlong) */
static size_t
enc(uint8_t *o, uint32_t cp, int len)
{
	switch (len) {
	case 1:
		o[0] = (uint8_t)cp;
		return 1;
	case 2:
		o[0] = (uint8_t)(0xc0 | (cp >> 6));
		o[1] = (uint8_t)(0x80 | (cp & 0x3f));
		return 2;
	case 3:
		o[0] = (uint8_t)(0xe0 | (cp >> 12));
		o[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (uint8_t)(0x80 | (cp & 0x3f));
		return 3;
	default:
		o[0] = (uint8_t)(0xf0 | (cp >> 18));
		o[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
		o[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
		o[3] = (uint8_t)(0x80 | (cp & 0x3f));
		return 4;
	}
}

static int
enc_len(uint32_t cp)
{
	return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

START_TEST(boundaries)
{
	static const struct {
		const char *s;
		size_t n;
	} ok[] = {
		{"\x00", 1},		 /* U+0000 */
		{"\x7f", 1},		 /* U+007F */
		{"\xc2\x80", 2},	 /* U+0080 */
		{"\xdf\xbf", 2},	 /* U+07FF */
		{"\xe0\xa0\x80", 3},	 /* U+0800 */
		{"\xed\x9f\xbf", 3},	 /* U+D7FF */
		{"\xee\x80\x80", 3},	 /* U+E000 */
		{"\xef\xbf\xbd", 3},	 /* U+FFFD */
		{"\xef\xbf\xbf", 3},	 /* U+FFFF */
		{"\xf0\x90\x80\x80", 4}, /* U+10000 */
		{"\xf4\x8f\xbf\xbf", 4}, /* U+10FFFF */
		{"", 0},
		{"Hello-\xc3\xa9-\xe2\x82\xac-\xf0\x9f\x98\x80-end", 19},
	};
	uint8_t buf[64];

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		REQUIRE(v(ok[i].s, ok[i].n) == ACC, "vector %zu not accepted", i);
		REQUIRE(v_bytewise((const uint8_t *)ok[i].s, ok[i].n) == ACC, "vector %zu bytewise",
			i);
		/* inside ASCII text, at the start and at the end of a fast-path word */
		memset(buf, 'a', sizeof(buf));
		memcpy(buf + 7, ok[i].s, ok[i].n);
		REQUIRE(v(buf, 7 + ok[i].n) == ACC, "vector %zu at the end", i);
		REQUIRE(v(buf, sizeof(buf)) == ACC, "vector %zu inside", i);
	}
}
END_TEST

START_TEST(every_scalar)
{
	uint8_t b[4];

	for (uint32_t cp = 0; cp <= 0x10ffff; cp++) {
		size_t n;
		uint32_t s;

		if (cp >= 0xd800 && cp <= 0xdfff)
			continue;
		n = enc(b, cp, enc_len(cp));
		REQUIRE(stk_utf8_validate(ACC, b, n) == ACC, "U+%04X rejected", cp);
		s = ACC;
		for (size_t i = 0; i < n; i++) {
			s = stk_utf8_validate(s, b + i, 1);
			if (i + 1 < n)
				REQUIRE(IS_MID(s), "U+%04X after %zu of %zu bytes: state %u", cp,
					i + 1, n, s);
		}
		REQUIRE(s == ACC, "U+%04X bytewise: %u", cp, s);
		for (size_t k = 1; k < n; k++) {
			s = stk_utf8_validate(ACC, b, k);
			REQUIRE(IS_MID(s), "U+%04X split at %zu: first part state %u", cp, k, s);
			s = stk_utf8_validate(s, b + k, n - k);
			REQUIRE(s == ACC, "U+%04X split at %zu: %u", cp, k, s);
		}
	}
}
END_TEST

START_TEST(invalid_vectors)
{
	static const struct {
		const char *s;
		size_t n;
	} bad[] = {
		{"\xc0\x80", 2},		 /* overlong U+0000 */
		{"\xc1\xbf", 2},		 /* overlong U+007F */
		{"\xe0\x80\x80", 3},		 /* overlong U+0000 */
		{"\xe0\x9f\xbf", 3},		 /* overlong U+07FF */
		{"\xf0\x80\x80\x80", 4},	 /* overlong U+0000 */
		{"\xf0\x8f\xbf\xbf", 4},	 /* overlong U+FFFF */
		{"\xed\xa0\x80", 3},		 /* U+D800 */
		{"\xed\xbf\xbf", 3},		 /* U+DFFF */
		{"\xed\xa0\x80\xed\xb0\x80", 6}, /* CESU-8 pair */
		{"\xf4\x90\x80\x80", 4},	 /* U+110000 */
		{"\xf7\xbf\xbf\xbf", 4},	 /* U+1FFFFF */
		{"\x80", 1},
		{"\xbf", 1},
		{"a\x80", 2},
		{"\xc3\xa9\x80", 3}, /* stray after a complete sequence */
		{"\xe2\x82\xac\xbf", 4},
		{"\xc3"
		 "a",
		 2}, /* lead then ASCII */
		{"\xe2\x82"
		 "a",
		 3},
		{"\xf0\x9f\x98"
		 "a",
		 4},
		{"\xc3\xc3\xa9", 3}, /* lead then lead */
		{"\xe2\xe2\x82\xac", 4},
		{"\xfe\xfe\xff\xff", 4},
		{"\xf8\x88\x80\x80\x80", 5},	 /* 5-byte form */
		{"\xfc\x84\x80\x80\x80\x80", 6}, /* 6-byte form */
	};
	uint8_t b[8];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		REQUIRE(v(bad[i].s, bad[i].n) == REJ, "bad vector %zu accepted", i);
		REQUIRE(v_bytewise((const uint8_t *)bad[i].s, bad[i].n) == REJ,
			"bad vector %zu bytewise", i);
	}
	/* leads that can never start a sequence */
	for (unsigned l = 0xf5; l <= 0xff; l++) {
		b[0] = (uint8_t)l;
		REQUIRE(v(b, 1) == REJ, "lead 0x%02X alone", l);
		b[1] = b[2] = b[3] = 0x80;
		REQUIRE(v(b, 4) == REJ, "lead 0x%02X + continuations", l);
	}
	for (unsigned l = 0xc0; l <= 0xc1; l++) {
		b[0] = (uint8_t)l;
		REQUIRE(v(b, 1) == REJ, "lead 0x%02X alone", l);
	}
	/* every continuation byte on its own */
	for (unsigned c = 0x80; c <= 0xbf; c++) {
		b[0] = (uint8_t)c;
		REQUIRE(v(b, 1) == REJ, "stray 0x%02X", c);
	}
}
END_TEST

START_TEST(overlong_all)
{
	uint8_t b[4];

	for (uint32_t cp = 0; cp < 0x10000; cp++) {
		for (int len = enc_len(cp) + 1; len <= 4; len++) {
			size_t n = enc(b, cp, len);

			REQUIRE(stk_utf8_validate(ACC, b, n) == REJ, "U+%04X as %d bytes accepted",
				cp, len);
			REQUIRE(v_bytewise(b, n) == REJ, "U+%04X as %d bytes bytewise", cp, len);
		}
	}
}
END_TEST

/* every code point in [lo, hi], encoded in len bytes, is rejected (bytewise:
 * by the byte-at-a-time reference too) */
static void
reject_all(uint32_t lo, uint32_t hi, int len, bool bytewise, const char *what)
{
	uint8_t b[4];

	for (uint32_t cp = lo; cp <= hi; cp++) {
		size_t n = enc(b, cp, len);

		REQUIRE(stk_utf8_validate(ACC, b, n) == REJ, "%s U+%04X accepted", what, cp);
		REQUIRE(!bytewise || v_bytewise(b, n) == REJ, "%s U+%04X bytewise", what, cp);
	}
}

START_TEST(surrogates_all)
{
	reject_all(0xd800, 0xdfff, 3, true, "surrogate");
}
END_TEST

START_TEST(above_max_all)
{
	reject_all(0x110000, 0x1fffff, 4, false, "above the maximum:");
}
END_TEST

START_TEST(truncated)
{
	static const uint32_t cps[] = {0x80,   0xe9,   0x7ff,	0x800,	 0x20ac,  0xd7ff,
				       0xe000, 0xffff, 0x10000, 0x1f600, 0x10ffff};
	uint8_t b[4], t[80];

	for (size_t i = 0; i < sizeof(cps) / sizeof(cps[0]); i++) {
		size_t n = enc(b, cps[i], enc_len(cps[i]));

		for (size_t k = 1; k < n; k++) {
			uint32_t s = v(b, k);

			REQUIRE(IS_MID(s), "U+%04X truncated to %zu: %u", cps[i], k, s);
			/* completed by the next call */
			REQUIRE(stk_utf8_validate(s, b + k, n - k) == ACC, "U+%04X completed",
				cps[i]);
			/* followed by ASCII instead */
			REQUIRE(stk_utf8_validate(s, (const uint8_t *)"abcdefghij", 10) == REJ,
				"U+%04X truncated to %zu then ASCII", cps[i], k);
			/* at the end of a long ASCII run (the fast path ran first) */
			memset(t, 'x', sizeof(t));
			memcpy(t + 70, b, k);
			REQUIRE(IS_MID(v(t, 70 + k)), "U+%04X truncated after ASCII", cps[i]);
			/* and in the middle of it */
			REQUIRE(v(t, sizeof(t)) == REJ, "U+%04X truncated inside ASCII", cps[i]);
		}
	}
}
END_TEST

START_TEST(reject_sticky)
{
	const uint8_t ok[] = "plain ASCII then \xc3\xa9";
	uint32_t s = v("\xff", 1);

	ck_assert_uint_eq(s, REJ);
	ck_assert_uint_eq(stk_utf8_validate(s, ok, sizeof(ok) - 1), REJ);
	ck_assert_uint_eq(stk_utf8_validate(s, ok, 0), REJ);
	ck_assert_uint_eq(stk_utf8_validate(s, ok, 1), REJ);
	/* and the empty input from ACCEPT stays ACCEPT */
	ck_assert_uint_eq(stk_utf8_validate(ACC, ok, 0), ACC);
}
END_TEST

START_TEST(fast_path)
{
	static const uint8_t badb[] = {0x80, 0xbf, 0xc0, 0xc1, 0xf5, 0xff};
	static const char *good[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"};
	uint8_t buf[128];
	struct gbuf g;

	gb_init(&g, 256);
	for (size_t len = 64; len <= 80; len++) {
		for (size_t off = 0; off < 64 && off < len; off++) {
			for (size_t bi = 0; bi < sizeof(badb); bi++) {
				for (size_t al = 0; al < 8; al++) {
					uint8_t *p;

					memset(buf, 'A' + (int)(off % 26), len);
					buf[off] = badb[bi];
					/* alignment: place len + al bytes, validate from al */
					memmove(buf + al, buf, len);
					memset(buf, 'z', al);
					p = gb_place(&g, buf, len + al) + al;
					REQUIRE(stk_utf8_validate(ACC, p, len) == REJ,
						"len %zu: byte 0x%02X at %zu (align %zu) accepted",
						len, badb[bi], off, al);
				}
			}
			for (size_t gi = 0; gi < 3; gi++) {
				size_t gl = strlen(good[gi]);

				if (off + gl > len)
					continue;
				memset(buf, 'q', len);
				memcpy(buf + off, good[gi], gl);
				REQUIRE(stk_utf8_validate(ACC, gb_place(&g, buf, len), len) == ACC,
					"len %zu: %zu-byte sequence at %zu rejected", len, gl, off);
			}
		}
		/* a lead byte as the very last byte of the buffer: incomplete, not rejected */
		memset(buf, 'r', len);
		buf[len - 1] = 0xe2;
		ck_assert(IS_MID(stk_utf8_validate(ACC, gb_place(&g, buf, len), len)));
	}
	/* short buffers (below one fast-path word) with a bad byte anywhere */
	for (size_t len = 1; len < 16; len++)
		for (size_t off = 0; off < len; off++) {
			memset(buf, 's', len);
			buf[off] = 0x80;
			REQUIRE(stk_utf8_validate(ACC, gb_place(&g, buf, len), len) == REJ,
				"len %zu off %zu", len, off);
		}
	gb_free(&g);
}
END_TEST

/* ---- reference classifier: 0 valid, 1 invalid, 2 valid but incomplete at the end ---- */
static int
ref_class(const uint8_t *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		uint8_t b = s[i];
		int need;
		uint32_t cp, min, lo, hi;
		size_t have;

		if (b < 0x80) {
			i++;
			continue;
		}
		if ((b & 0xe0) == 0xc0) {
			need = 1, cp = b & 0x1f, min = 0x80;
		} else if ((b & 0xf0) == 0xe0) {
			need = 2, cp = b & 0x0f, min = 0x800;
		} else if ((b & 0xf8) == 0xf0) {
			need = 3, cp = b & 0x07, min = 0x10000;
		} else {
			return 1;
		}
		for (have = 0; have < (size_t)need && i + 1 + have < n; have++) {
			uint8_t c = s[i + 1 + have];

			if ((c & 0xc0) != 0x80)
				return 1;
			cp = (cp << 6) | (c & 0x3fu);
		}
		/* the code points still reachable from what we have */
		lo = cp << (6 * (need - (int)have));
		hi = lo | ((1u << (6 * (need - (int)have))) - 1);
		if (lo < min)
			lo = min;
		if (hi > 0x10ffff)
			hi = 0x10ffff;
		if (lo > hi || (lo >= 0xd800 && hi <= 0xdfff))
			return 1;
		if (have < (size_t)need)
			return 2; /* ran out of input */
		if (cp >= 0xd800 && cp <= 0xdfff)
			return 1; /* a complete surrogate (lo == hi == cp) */
		i += 1 + (size_t)need;
	}
	return 0;
}

START_TEST(random_vs_reference)
{
	uint64_t seed = 0x5eed0017;
	uint8_t buf[64];
	unsigned counts[3] = {0, 0, 0};
	struct gbuf g;

	gb_init(&g, sizeof(buf));
	for (int it = 0; it < 200000; it++) {
		size_t n = rnd(&seed) % 40, i = 0;
		int want;
		uint32_t s, s2;
		uint8_t *p;
		size_t k;

		while (i < n) {
			uint64_t r = rnd(&seed);

			switch (r % 8) {
			case 0:
			case 1:
				buf[i++] = (uint8_t)(0x20 + (r >> 8) % 0x5f);
				break;
			case 2:
				buf[i++] = (uint8_t)(0x80 + (r >> 8) % 0x40); /* continuation */
				break;
			case 3:
				buf[i++] = (uint8_t)(0xc0 + (r >> 8) % 0x40); /* any lead */
				break;
			case 4:
				buf[i++] = (uint8_t)((r >> 8) & 0xff);
				break;
			default: {
				/* a valid encoding of a random scalar, maybe cut */
				uint8_t e[4];
				uint32_t cp = (uint32_t)((r >> 8) % 0x110000);
				size_t el;

				if (cp >= 0xd800 && cp <= 0xdfff && (r >> 40) % 4 != 0)
					cp -= 0x800;
				el = enc(e, cp, enc_len(cp));
				for (size_t j = 0; j < el && i < n; j++)
					buf[i++] = e[j];
			}
			}
		}
		want = ref_class(buf, n);
		counts[want]++;
		p = gb_place(&g, buf, n);
		s = stk_utf8_validate(ACC, p, n);
		k = n ? rnd(&seed) % (n + 1) : 0;
		s2 = stk_utf8_validate(stk_utf8_validate(ACC, p, k), p + k, n - k);
		switch (want) {
		case 0:
			REQUIRE(s == ACC && s2 == ACC, "iteration %d: valid input, states %u/%u",
				it, s, s2);
			break;
		case 1:
			REQUIRE(s == REJ && s2 == REJ, "iteration %d: invalid input, states %u/%u",
				it, s, s2);
			break;
		default:
			REQUIRE(IS_MID(s) && IS_MID(s2),
				"iteration %d: incomplete input, states %u/%u", it, s, s2);
		}
		REQUIRE(s == s2, "iteration %d: whole %u, split %u", it, s, s2);
	}
	/* the generator produced a real mix */
	ck_assert_uint_gt(counts[0], 10000);
	ck_assert_uint_gt(counts[1], 20000);
	ck_assert_uint_gt(counts[2], 5000);
	gb_free(&g);
}
END_TEST

static void
utf8_tcases(Suite *s)
{
	T_TESTS(t_tcase(s, "vectors", NULL, NULL, 20), boundaries, invalid_vectors, truncated,
		reject_sticky, fast_path);

	T_TESTS(t_tcase(s, "exhaustive", NULL, NULL, 60), every_scalar, overlong_all,
		surrogates_all, above_max_all, random_vs_reference);
}

T_MAIN("utf8", utf8_tcases)
