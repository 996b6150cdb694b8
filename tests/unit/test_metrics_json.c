/* SPDX-License-Identifier: BSD-3-Clause
 * test_metrics_json.c — the metrics stage's path walk (plugins/common/metrics_json.c),
 * no EAL: compiled with the plugin's source file.
 *
 * metrics_json_compile(): slots (shared by equal paths), each refusal with its
 * message. metrics_json_walk(): the venue shapes the profiles in conf/exchanges/
 * read (nested objects, the first and the last element of an array, numbers as
 * strings), first occurrence wins, keys at the wrong depth are not taken, escapes
 * and blanks, the stop once everything is captured (garbage after it is never
 * read), truncated and malformed input (what came before stays), top-level
 * arrays, every message fed from a buffer that ends exactly at its last byte.
 *
 * The tick scan (metrics_scan.h): the known-layout reader gives the general
 * walk's outcome (symbol, length, sequence, or non-tick / bad) on compact ticks
 * of every symbol length, cut at every length, with every byte replaced by each
 * of the bytes that matter to it (quote, backslash, blank, digit, dot, colon,
 * brace), with leading zeros and 19/20/21-digit sequences, under other field
 * names; and it does take compact ticks itself (x86-64: SSE2).
 */
#include <check.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "metrics_json.h"
#include "metrics_scan.h"

#include "../t_check.h"

static struct metrics_json_paths ps;
static unsigned slot[METRICS_JSON_MAX_PATHS];
static struct metrics_json_span out[METRICS_JSON_MAX_PATHS];
static char keep[8192]; /* the text the spans of the last walk point into */

/* compile the n paths that follow: want NULL, it succeeds; else it fails with
 * the message want */
static void
compile_bad(const char *want, unsigned n, ...)
{
	const char *p[METRICS_JSON_MAX_PATHS + 2];
	char err[200] = "";
	va_list ap;
	int rc;

	va_start(ap, n);
	for (unsigned i = 0; i < n; i++)
		p[i] = va_arg(ap, const char *);
	va_end(ap);
	rc = metrics_json_compile(&ps, p, n, slot, err, sizeof(err));
	if (want == NULL) {
		ck_assert_msg(rc == 0, "compile: %s", err);
	} else {
		ck_assert_int_lt(rc, 0);
		ck_assert_str_eq(err, want);
	}
}

#define compile_ok(...) compile_bad(NULL, __VA_ARGS__)

/* a malloc'd copy of the n bytes at p in a buffer of exactly n bytes (ASan/valgrind
 * see any over-read) */
static uint8_t *
exact_copy(const void *p, size_t n)
{
	uint8_t *b = malloc(n ? n : 1);

	ck_assert_ptr_nonnull(b);
	memcpy(b, p, n);
	return b;
}

/* walk a copy of s in a buffer of exactly its length */
static void
walk(const char *s)
{
	size_t n = strlen(s);
	uint8_t *b = exact_copy(s, n);

	metrics_json_walk(&ps, b, b + n, out);
	ck_assert_uint_lt(n, sizeof(keep));
	memcpy(keep, b, n);
	for (unsigned i = 0; i < ps.n_slots; i++)
		if (out[i].kind != METRICS_JSON_NONE)
			out[i].p = (const uint8_t *)keep + (out[i].p - b);
	free(b);
}

/* path i captured as kind with text v (NULL: not captured) */
static void
is(unsigned i, int kind, const char *v)
{
	const struct metrics_json_span *o = &out[slot[i]];

	if (v == NULL) {
		ck_assert_msg(o->kind == METRICS_JSON_NONE,
			      "path %u: captured \"%.*s\", expected nothing", i, (int)o->len,
			      (const char *)o->p);
		return;
	}
	ck_assert_msg(o->kind == kind, "path %u: kind %d, expected %d", i, o->kind, kind);
	ck_assert_msg(o->len == strlen(v) && memcmp(o->p, v, o->len) == 0,
		      "path %u: \"%.*s\", expected \"%s\"", i, (int)o->len, (const char *)o->p, v);
}

#define S METRICS_JSON_STRING
#define L METRICS_JSON_LITERAL

START_TEST(binance_combined)
{
	compile_ok(4, "data.s", "data.u", "data.U", "data.e");
	walk("{\"stream\":\"btcusdt@depth@100ms\",\"data\":{\"e\":\"depthUpdate\",\"E\":"
	     "1700000000000,"
	     "\"s\":\"BTCUSDT\",\"U\":157,\"u\":160,\"b\":[[\"0.0024\",\"10\"]],\"a\":[[\"0.0026\","
	     "\"100\"]]}}");
	is(0, S, "BTCUSDT");
	is(1, L, "160");
	is(2, L, "157");
	is(3, S, "depthUpdate");
	/* the raw stream has the same keys at the top: not taken for data.* */
	walk("{\"e\":\"depthUpdate\",\"s\":\"BTCUSDT\",\"U\":1,\"u\":2}");
	is(0, S, NULL);
	is(1, S, NULL);
}
END_TEST

START_TEST(okx_first_element)
{
	compile_ok(4, "arg.instId", "data.0.seqId", "data.0.prevSeqId", "action");
	walk("{\"arg\":{\"channel\":\"books\",\"instId\":\"BTC-USDT\"},\"action\":\"update\","
	     "\"data\":[{"
	     "\"asks\":[[\"8476.98\",\"415\",\"0\",\"13\"],[\"8477\",\"7\",\"0\",\"2\"]],\"bids\":["
	     "],"
	     "\"ts\":\"1597026383085\",\"checksum\":-855196043,\"prevSeqId\":123456,\"seqId\":"
	     "123457}]}");
	is(0, S, "BTC-USDT");
	is(1, L, "123457");
	is(2, L, "123456");
	is(3, S, "update");
	/* the subscription ack: arg but no data */
	walk("{\"event\":\"subscribe\",\"arg\":{\"channel\":\"books\",\"instId\":\"BTC-USDT\"},"
	     "\"connId\":\"a4d3ae55\"}");
	is(0, S, "BTC-USDT");
	is(1, S, NULL);
	is(3, S, NULL);
	/* only element 0 counts for .0. */
	walk("{\"data\":[{\"x\":1},{\"seqId\":5}]}");
	is(1, S, NULL);
}
END_TEST

START_TEST(kraken_last_element)
{
	compile_ok(4, "channel", "data.0.symbol", "data.0.trade_id", "data.-1.trade_id");
	walk("{\"channel\":\"trade\",\"type\":\"update\",\"data\":["
	     "{\"symbol\":\"BTC/"
	     "USD\",\"side\":\"buy\",\"price\":64000.1,\"qty\":0.5,\"trade_id\":101,\"timestamp\":"
	     "\"x\"},"
	     "{\"symbol\":\"BTC/"
	     "USD\",\"side\":\"sell\",\"price\":64000.2,\"qty\":[1,[2]],\"trade_id\":102},"
	     "{\"symbol\":\"BTC/USD\",\"note\":\"]}[{\\\"\",\"trade_id\":103}]}");
	is(0, S, "trade");
	is(1, S, "BTC/USD");
	is(2, L, "101");
	is(3, L, "103");
	/* one element: first and last are the same */
	walk("{\"channel\":\"trade\",\"data\":[{\"symbol\":\"ETH/USD\",\"trade_id\":7}]}");
	is(2, L, "7");
	is(3, L, "7");
	/* the last element has no trade_id: nothing, not an earlier element's */
	walk("{\"channel\":\"trade\",\"data\":[{\"trade_id\":7},{\"symbol\":\"ETH/USD\"}]}");
	is(2, L, "7");
	is(3, L, NULL);
	/* an empty array, and data that is not an array */
	walk("{\"channel\":\"trade\",\"data\":[]}");
	is(1, S, NULL);
	is(3, L, NULL);
	walk("{\"channel\":\"heartbeat\",\"data\":{\"0\":{\"symbol\":\"X\"}}}");
	is(0, S, "heartbeat");
	is(1, S, "X"); /* "0" on an object is a key */
	/* the ack has "channel" one level down: not the top-level channel */
	walk("{\"method\":\"subscribe\",\"result\":{\"channel\":\"trade\",\"symbol\":\"BTC/"
	     "USD\"},\"success\":true}");
	is(0, S, NULL);
}
END_TEST

START_TEST(first_wins_escapes_blanks)
{
	compile_ok(2, "a", "b.c");
	walk("{\"a\":1,\"a\":2,\"b\":{\"c\":\"x\"},\"b\":{\"c\":\"y\"}}");
	is(0, L, "1");
	is(1, S, "x");
	/* escaped quotes in keys and values, a key that looks like a wanted one inside a string */
	walk(" {\r\n \"k\\\"a\" : \"\\\"a\\\":9\" ,\n\t\"a\" :\t\"v\\\\\" , \"b\" : { \"c\" : "
	     "-3.5e2 } } ");
	is(0, S, "v\\\\");
	is(1, L, "-3.5e2");
	/* objects and arrays as values of a path */
	walk("{\"a\":{\"x\":[1,2]},\"b\":{\"c\":[true,{\"d\":null}]}}");
	is(0, METRICS_JSON_OBJECT, "{\"x\":[1,2]}");
	is(1, METRICS_JSON_ARRAY, "[true,{\"d\":null}]");
	walk("{\"b\":{\"c\":null},\"a\":false}");
	is(0, L, "false");
	is(1, L, "null");
}
END_TEST

START_TEST(stops_when_done)
{
	compile_ok(2, "x", "y");
	/* once x and y are captured the rest is never read, garbage or not */
	walk("{\"x\":1,\"y\":\"2\",\"z\":[[[[ \x01 not json");
	is(0, L, "1");
	is(1, S, "2");
}
END_TEST

START_TEST(malformed_keeps_what_came_before)
{
	compile_ok(2, "x", "y");
	walk("{\"x\":1,\"q\":[1,2,\"y\":3}");
	is(0, L, "1");
	is(1, L, NULL);
	walk("{\"x\":\"unterminated");
	is(0, L, NULL);
	walk("{\"x\" 1, \"y\":2}");
	is(0, L, NULL);
	is(1, L, NULL);
	walk("");
	is(0, L, NULL);
	walk("\"x\"");
	is(0, L, NULL);
	walk("{\"x\":");
	is(0, L, NULL);
	walk("{\"x\":1");
	is(0, L, "1");
	walk("{\"x\":12");
	is(0, L, "12"); /* a number cut by the end of the message is taken as sent */
	walk("{\"q\":{\"y\":[}}],\"x\":5}");
	is(0, L, NULL); /* brackets are counted, not matched */
}
END_TEST

START_TEST(top_level_array)
{
	compile_ok(2, "1.0", "1.-1.k");
	walk("[17,[\"sym\",{\"k\":1},{\"k\":2}],\"tail\"]");
	is(0, S, "sym");
	is(1, L, "2");
}
END_TEST

START_TEST(slots_shared)
{
	compile_ok(4, "type", "data.u", "type", "data.s");
	ck_assert_uint_eq(ps.n_slots, 3);
	ck_assert_uint_eq(slot[0], slot[2]);
	ck_assert_uint_ne(slot[1], slot[3]);
	walk("{\"type\":\"delta\",\"data\":{\"s\":\"A\",\"u\":9}}");
	is(0, S, "delta");
	is(2, S, "delta");
	is(3, S, "A");
}
END_TEST

START_TEST(refusals)
{
	compile_bad("path \"a..b\": an empty component", 1, "a..b");
	compile_bad("path \"a.\": an empty component", 1, "a.");
	compile_bad("path \".a\": an empty component", 1, ".a");
	compile_bad("path \"\": 1 to 31 bytes", 1, "");
	compile_bad("path \"a.b.c.d.e.f.g.h.i\": more than 8 components", 1, "a.b.c.d.e.f.g.h.i");
	compile_bad("path \"data\" is a prefix of another path", 2, "data.s", "data");
	compile_bad("path \"data.s\" goes inside another path's value", 2, "data", "data.s");
	compile_bad("more than 8 paths", 9, "a", "b", "c", "d", "e", "f", "g", "h", "i");
	compile_bad("paths: more than 39 components in all", 6, "a1.b1.c1.d1.e1.f1.g1.h1",
		    "a2.b2.c2.d2.e2.f2.g2.h2", "a3.b3.c3.d3.e3.f3.g3.h3", "a4.b4.c4.d4.e4.f4.g4.h4",
		    "a5.b5.c5.d5.e5.f5.g5.h5", "a6");
}
END_TEST

/* ---- the tick scan ---- */

static unsigned scan_known_taken;

/* the two readers on a copy of [m, m + n) that ends at its last byte */
static void
scan_same(const struct metrics_scan *sc, const uint8_t *m, size_t n)
{
	uint8_t *b = exact_copy(m, n);
	uint64_t k1[4] = {0}, k2[4] = {0}, s1 = 0, s2 = 0;
	uint32_t l1 = 0, l2 = 0;
	int r1, r2;

	r1 = metrics_scan_general(sc, b, b + n, k2, &l2, &s2);
	r2 = metrics_scan_known(sc, b, b + n, k1, &l1, &s1);
	if (r2 >= 0) {
		scan_known_taken++;
		ck_assert_msg(r1 == r2, "\"%.*s\": known layout %d, general walk %d", (int)n, m, r2, r1);
		if (r1 == METRICS_SCAN_TICK)
			ck_assert_msg(l1 == l2 && memcmp(k1, k2, sizeof(k1)) == 0 && s1 == s2,
				      "\"%.*s\": known layout %u/%llu, general walk %u/%llu", (int)n, m, l1,
				      (unsigned long long)s1, l2, (unsigned long long)s2);
	}
	r2 = metrics_scan_tick(sc, b, b + n, k1, &l1, &s1);
	ck_assert_int_eq(r1, r2);
	free(b);
}

/* metrics_scan_uint against a byte-wise reference: every length 0..24 of
 * digit runs (leading zeros, the 64-bit limit and past it), each followed by
 * every kind of byte or by the end of the buffer, at every start offset of a
 * word, from a buffer that ends where the input ends */
static const uint8_t *
ref_uint(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p0 = p;
	uint64_t n = 0;
	bool over = false;

	while (p < end && *p >= '0' && *p <= '9') {
		unsigned d = (unsigned)(*p - '0');

		if (n > (UINT64_MAX - d) / 10)
			over = true;
		n = n * 10 + d;
		p++;
	}
	if (over || p == p0 || (p < end && (*p == '.' || *p == 'e' || *p == 'E')))
		return NULL;
	*v = n;
	return p;
}

START_TEST(scan_uint_reference)
{
	static const char *const tails[] = {"", ",", "}", ".5", "e3", "E", " ", "\"", "/", ":", "\x80", "a"};
	uint64_t rng = 0x5eedull;
	char buf[64];

	for (int len = 0; len <= 24; len++)
		for (size_t t = 0; t < sizeof(tails) / sizeof(tails[0]); t++)
			for (int rep = 0; rep < 40; rep++) {
				int n = 0;
				uint8_t *b;
				const uint8_t *r1, *r2;
				uint64_t v1 = 0, v2 = 0;

				for (int i = 0; i < len; i++) {
					rng = rng * 6364136223846793005ull + 1442695040888963407ull;
					buf[n++] = (char)('0' + (rep == 0 ? 9 : rep == 1 ? 0 : (int)((rng >> 33) % 10)));
				}
				if (rep == 2 && len == 20)
					n = snprintf(buf, sizeof(buf), "18446744073709551615");
				if (rep == 3 && len == 20)
					n = snprintf(buf, sizeof(buf), "18446744073709551616");
				n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%s", tails[t]);
				b = malloc((size_t)n + 1);
				ck_assert_ptr_nonnull(b);
				memcpy(b, buf, (size_t)n);
				r1 = metrics_scan_uint(b, b + n, &v1);
				r2 = ref_uint(b, b + n, &v2);
				ck_assert_msg(r1 == r2 && (r1 == NULL || v1 == v2), "\"%.*s\": %s %llu, reference %s %llu", n,
					      buf, r1 ? "end" : "NULL", (unsigned long long)v1, r2 ? "end" : "NULL",
					      (unsigned long long)v2);
				free(b);
			}
}
END_TEST

START_TEST(scan_known_layout)
{
	static const char *const syms[] = {"S", "SYM00042", "BTCUSDT", "ABCDEFGHIJKLMNO", "ABCDEFGHIJKLMNOP",
					   "A\\\"B", "AB\\\\", "", "ETH-USD-SWAP-PERP-2026"};
	static const char *const seqs[] = {"12345", "0", "0000000000000000000000042", "9999999999999999999",
					   "18446744073709551615", "18446744073709551616", "123456789012345678901",
					   "12.5", "1e3", "-5", "\"7\"", "x"};
	static const char *const pads[] = {"", ",\"p\":\"101.25\",\"q\":300,\"t\":1733350000000000000",
					   ",\"x\":\"padpadpadpadpadpadpadpadpadpadpadpad\"}", "}"};
	static const uint8_t swaps[] = {'"', '\\', ' ', '5', '.', ':', '{', ',', 'n', 's', 0x80};
	struct metrics_scan sc;
	char m[256];

	metrics_scan_init(&sc, "s", "n");
	scan_known_taken = 0;
	for (size_t a = 0; a < sizeof(syms) / sizeof(syms[0]); a++)
		for (size_t b = 0; b < sizeof(seqs) / sizeof(seqs[0]); b++)
			for (size_t c = 0; c < sizeof(pads) / sizeof(pads[0]); c++) {
				int n = snprintf(m, sizeof(m), "{\"s\":\"%s\",\"n\":%s%s", syms[a], seqs[b], pads[c]);

				ck_assert_int_lt(n, (int)sizeof(m));
				for (int cut = 0; cut <= n; cut++)
					scan_same(&sc, (const uint8_t *)m, (size_t)cut);
				for (int i = 0; i < n && c == 1; i++)
					for (size_t w = 0; w < sizeof(swaps); w++) {
						char save = m[i];

						m[i] = (char)swaps[w];
						scan_same(&sc, (const uint8_t *)m, (size_t)n);
						m[i] = save;
					}
			}
#if defined(__SSE2__)
	/* compact ticks do take the known layout */
	{
		const char *t = "{\"s\":\"SYM00042\",\"n\":12345,\"p\":\"101.25\",\"q\":300,\"t\":1}";
		uint64_t k[4], q;
		uint32_t l;

		ck_assert_int_eq(metrics_scan_known(&sc, (const uint8_t *)t, (const uint8_t *)t + strlen(t), k, &l, &q),
				 METRICS_SCAN_TICK);
		ck_assert_uint_eq(l, 8);
		ck_assert_uint_eq(q, 12345);
		ck_assert(memcmp(k, "SYM00042", 8) == 0 && k[1] == 0 && k[2] == 0 && k[3] == 0);
		ck_assert_uint_gt(scan_known_taken, 1000);
	}
#endif
	/* other names; a name too long for the 16-byte patterns turns the
	 * known layout off */
	metrics_scan_init(&sc, "symbol", "seqNum");
	snprintf(m, sizeof(m), "{\"symbol\":\"BTC-USD\",\"seqNum\":77,\"px\":1}");
	for (size_t cut = 0; cut <= strlen(m); cut++)
		scan_same(&sc, (const uint8_t *)m, cut);
	metrics_scan_init(&sc, "instrument_name_long", "n");
	ck_assert(!sc.fast);
}
END_TEST

static void
mj_tcases(Suite *s)
{
	T_TESTS(t_tcase(s, "walk", NULL, NULL, 0), binance_combined, okx_first_element,
		kraken_last_element, first_wins_escapes_blanks, stops_when_done,
		malformed_keeps_what_came_before, top_level_array, slots_shared, refusals,
		scan_uint_reference, scan_known_layout);
}

T_MAIN("metrics_json", mj_tcases)
