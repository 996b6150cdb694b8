/* SPDX-License-Identifier: BSD-3-Clause
 * test_opt.c — the option walker (framework/opt.c), no EAL.
 *
 * lcp_opt_apply(): every type and field width, defaults parsed with the same code
 * as user values, required, unknown keys listing the allowed ones, wrong JSON
 * type, range at both ends, string length bounds, enums, LCP_OPT_F_POW2; every
 * message asserted in full. lcp_opt_set_keys(): a stage's or a link's keys beside
 * the objects the caller reads. lcp_opt_table_check(): each kind of broken
 * table, those it once let through included, and the framework's own tables.
 */
#include <check.h>
#include <float.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lcp_priv.h"

#include "../t_check.h"

/* ---- a table with every type and width ---- */
struct tc {
	bool flag;
	int8_t i8;
	int16_t i16;
	int32_t i32;
	int64_t i64;
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;
	double d;
	const char *s;
	const char *opt;
	int e;
};

static const char *const tc_modes[] = { "fast", "safe", "strict", NULL };

static const struct lcp_opt tc_tbl[] = {
	LCP_OPT_BOOL(struct tc, flag, "flag", "true", "bool"),
	LCP_OPT_INT(struct tc, i8, "i8", "-5", -100, 100, 0, "int8"),
	LCP_OPT_INT(struct tc, i16, "i16", "300", -30000, 30000, 0, "int16"),
	LCP_OPT_INT(struct tc, i32, "i32", "-70000", INT32_MIN, INT32_MAX, 0, "int32"),
	LCP_OPT_INT(struct tc, i64, "i64", "-5000000000", INT64_MIN, INT64_MAX, 0, "int64"),
	LCP_OPT_UINT(struct tc, u8, "u8", "200", 1, 200, 0, "uint8"),
	LCP_OPT_UINT(struct tc, u16, "u16", "65535", 0, 65535, 0, "uint16"),
	LCP_OPT_UINT(struct tc, u32, "u32", "4000000000", 0, 4000000000, 0, "uint32"),
	LCP_OPT_UINT(struct tc, u64, "u64", "9000000000000000000", 0, INT64_MAX, 0, "uint64"),
	LCP_OPT_DOUBLE(struct tc, d, "d", "0.25", -1.5, 2.5, 0, "double"),
	LCP_OPT_STRING(struct tc, s, "s", "\"abc\"", 2, 8, 0, "string 2..8"),
	LCP_OPT_STRING(struct tc, opt, "opt", NULL, 0, 0, 0, "string, unbounded, no default"),
	LCP_OPT_ENUM(struct tc, e, "e", "\"strict\"", tc_modes, 0, "enum"),
	LCP_OPT_END,
};
#define TC_ALLOWED "flag, i8, i16, i32, i64, u8, u16, u32, u64, d, s, opt, e"
#define TC_N_DEFAULTS 12 /* rows with a default (all but opt) */

/* ---- required options ---- */
struct rc {
	const char *name;
	uint32_t port;
	int64_t level;
	double x;
	int m;
};
static const char *const rc_m[] = { "a", "b", NULL };
static const struct lcp_opt rc_tbl[] = {
	LCP_OPT_STRING(struct rc, name, "name", NULL, 1, 16, LCP_OPT_F_REQUIRED, "required string"),
	LCP_OPT_UINT(struct rc, port, "port", NULL, 1, 65535, LCP_OPT_F_REQUIRED, "required uint"),
	LCP_OPT_INT(struct rc, level, "level", NULL, -3, 3, LCP_OPT_F_REQUIRED, "required int"),
	LCP_OPT_DOUBLE(struct rc, x, "x", NULL, 0, 1, LCP_OPT_F_REQUIRED, "required double"),
	LCP_OPT_ENUM(struct rc, m, "m", NULL, rc_m, LCP_OPT_F_REQUIRED, "required enum"),
	LCP_OPT_END,
};

/* ---- harness ---- */
static struct lcp_errs errs;
static json_t *keep;
static json_t *input;

static void
setup(void)
{
	memset(&errs, 0, sizeof(errs));
	keep = json_array();
	input = NULL;
}

static void
teardown(void)
{
	lcp_errs_free(&errs);
	json_decref(keep);
	json_decref(input);
}

/* apply tbl to JSON text (NULL: no options object at all) */
static unsigned
apply(const struct lcp_opt *tbl, size_t size, const char *text, void *conf, const char *path)
{
	json_error_t je;

	json_decref(input);
	input = NULL;
	if (text != NULL) {
		input = json_loads(text, JSON_DECODE_ANY, &je);
		ck_assert_msg(input != NULL, "bad test JSON %s: %s", text, je.text);
	}
	return lcp_opt_apply(tbl, size, input, conf, path, &errs, keep);
}

/* errs must be exactly the given lines, in order (NULL-terminated) */
static void
expect_errs(const char *first, ...)
{
	va_list ap;
	unsigned i = 0;
	const char *want = first;
	char dump[8192] = "";

	for (unsigned k = 0; k < errs.n; k++) {
		size_t l = strlen(dump);

		snprintf(dump + l, sizeof(dump) - l, "\n  [%u] %s", k, errs.v[k]);
	}
	va_start(ap, first);
	for (; want != NULL; want = va_arg(ap, const char *), i++) {
		ck_assert_msg(i < errs.n, "missing error [%u] \"%s\"; got:%s", i, want, dump);
		ck_assert_msg(strcmp(errs.v[i], want) == 0, "error [%u]:\n  want %s\n  got  %s\nall:%s", i,
			      want, errs.v[i], dump);
	}
	va_end(ap);
	ck_assert_msg(errs.n == i, "%u errors, expected %u; got:%s", errs.n, i, dump);
}

/* tbl (a conf of size bytes) applied to text: exactly the one expected error
 * (NULL: no error) */
static void
one_of(const struct lcp_opt *tbl, size_t size, const char *text, const char *want)
{
	void *c = calloc(1, size);

	ck_assert_ptr_nonnull(c);
	lcp_errs_free(&errs);
	apply(tbl, size, text, c, "t");
	free(c);
	expect_errs(want, NULL);
}

/* one option of tc_tbl, one value, one expected error (NULL: no error) */
static void
one(const char *text, const char *want)
{
	one_of(tc_tbl, sizeof(struct tc), text, want);
}

/* ================= defaults ================= */

START_TEST(defaults_no_object)
{
	struct tc c;

	memset(&c, 0xa5, sizeof(c));
	ck_assert_uint_eq(apply(tc_tbl, sizeof(c), NULL, &c, "t"), 0);
	expect_errs(NULL);
	ck_assert(c.flag == true);
	ck_assert_int_eq(c.i8, -5);
	ck_assert_int_eq(c.i16, 300);
	ck_assert_int_eq(c.i32, -70000);
	ck_assert_int_eq(c.i64, -5000000000LL);
	ck_assert_uint_eq(c.u8, 200);
	ck_assert_uint_eq(c.u16, 65535);
	ck_assert_uint_eq(c.u32, 4000000000u);
	ck_assert_uint_eq(c.u64, 9000000000000000000ull);
	ck_assert_double_eq(c.d, 0.25);
	ck_assert_str_eq(c.s, "abc");
	ck_assert_ptr_null(c.opt); /* no default: zeroed */
	ck_assert_int_eq(c.e, 2);
	/* each parsed default is kept alive in keep (strings point into it) */
	ck_assert_uint_eq(json_array_size(keep), TC_N_DEFAULTS);
}
END_TEST

START_TEST(defaults_empty_object)
{
	struct tc c;

	ck_assert_uint_eq(apply(tc_tbl, sizeof(c), "{}", &c, "t"), 0);
	expect_errs(NULL);
	ck_assert_int_eq(c.i8, -5);
	ck_assert_str_eq(c.s, "abc");
	ck_assert_int_eq(c.e, 2);
}
END_TEST

START_TEST(default_string_outlives_input)
{
	struct tc c;

	apply(tc_tbl, sizeof(c), "{\"i8\": 1}", &c, "t");
	json_decref(input);
	input = NULL;
	ck_assert_str_eq(c.s, "abc"); /* points into keep, not into the input */
	ck_assert_uint_eq(json_array_size(keep), TC_N_DEFAULTS - 1);
}
END_TEST

START_TEST(user_string_points_into_input)
{
	struct tc c;

	apply(tc_tbl, sizeof(c), "{\"s\": \"hello\", \"opt\": \"x\"}", &c, "t");
	expect_errs(NULL);
	ck_assert_ptr_eq(c.s, json_string_value(json_object_get(input, "s")));
	ck_assert_str_eq(c.opt, "x");
	/* user values are not parsed defaults: nothing kept for them */
	ck_assert_uint_eq(json_array_size(keep), TC_N_DEFAULTS - 1);
}
END_TEST

START_TEST(conf_zeroed_first)
{
	unsigned char buf[64];
	static const struct lcp_opt none[] = { LCP_OPT_END };

	memset(buf, 0xff, sizeof(buf));
	ck_assert_uint_eq(apply(none, sizeof(buf), "{}", buf, "t"), 0);
	for (unsigned i = 0; i < sizeof(buf); i++)
		ck_assert_uint_eq(buf[i], 0);
}
END_TEST

/* A default is parsed by the same code as a user value: a default the walker
 * would refuse from a user is refused too, with "(default)" in the path. */
struct dc {
	uint32_t burst;
	int32_t n;
	bool b;
	const char *s;
	int m;
	double d;
	uint16_t j;
};
static const char *const dc_m[] = { "a", "b", NULL };

START_TEST(defaults_same_code)
{
	static const struct lcp_opt tbl[] = {
		LCP_OPT_UINT(struct dc, burst, "burst", "5000", 1, 1024, 0, "default above max"),
		LCP_OPT_INT(struct dc, n, "n", "\"7\"", 0, 10, 0, "default of the wrong type"),
		LCP_OPT_BOOL(struct dc, b, "b", "1", "bool default given as 1"),
		LCP_OPT_STRING(struct dc, s, "s", "\"much too long\"", 1, 4, 0, "default too long"),
		LCP_OPT_ENUM(struct dc, m, "m", "\"c\"", dc_m, 0, "default not a choice"),
		LCP_OPT_DOUBLE(struct dc, d, "d", "-0.5", 0, 1, 0, "default below min"),
		LCP_OPT_UINT(struct dc, j, "j", "abc", 0, 10, 0, "default not JSON"),
		LCP_OPT_END,
	};
	struct dc c;

	ck_assert_uint_eq(apply(tbl, sizeof(c), NULL, &c, "stages[4].options"), 7);
	expect_errs("stages[4].options.burst (default): 5000 is above the maximum 1024",
		    "stages[4].options.n (default): expected an integer, got string",
		    "stages[4].options.b (default): expected a boolean, got integer",
		    "stages[4].options.s (default): a string of 13 bytes is longer than the maximum 4",
		    "stages[4].options.m (default): \"c\" is not one of: a, b",
		    "stages[4].options.d (default): -0.5 is below the minimum 0",
		    "stages[4].options.j: default 'abc' is not valid JSON (plugin defect)", NULL);
}
END_TEST

START_TEST(user_value_skips_bad_default)
{
	static const struct lcp_opt tbl[] = {
		LCP_OPT_UINT(struct dc, burst, "burst", "5000", 1, 1024, 0, "default above max"),
		LCP_OPT_END,
	};
	struct dc c;

	ck_assert_uint_eq(apply(tbl, sizeof(c), "{\"burst\": 1024}", &c, "x"), 0);
	ck_assert_uint_eq(c.burst, 1024);
	ck_assert_uint_eq(json_array_size(keep), 0);
}
END_TEST

/* ================= every type, every width ================= */

START_TEST(set_every_type)
{
	struct tc c;

	ck_assert_uint_eq(apply(tc_tbl, sizeof(c),
				"{\"flag\": false, \"i8\": -100, \"i16\": -30000, \"i32\": -2147483648,"
				" \"i64\": -9223372036854775807, \"u8\": 1, \"u16\": 0, \"u32\": 4000000000,"
				" \"u64\": 9223372036854775807, \"d\": -1.5, \"s\": \"abcdefgh\","
				" \"opt\": \"\", \"e\": \"fast\"}",
				&c, "t"),
			  0);
	expect_errs(NULL);
	ck_assert(c.flag == false);
	ck_assert_int_eq(c.i8, -100);
	ck_assert_int_eq(c.i16, -30000);
	ck_assert_int_eq(c.i32, INT32_MIN);
	ck_assert_int_eq(c.i64, -INT64_MAX);
	ck_assert_uint_eq(c.u8, 1);
	ck_assert_uint_eq(c.u16, 0);
	ck_assert_uint_eq(c.u32, 4000000000u);
	ck_assert_uint_eq(c.u64, (uint64_t)INT64_MAX);
	ck_assert_double_eq(c.d, -1.5);
	ck_assert_str_eq(c.s, "abcdefgh");
	ck_assert_str_eq(c.opt, "");
	ck_assert_int_eq(c.e, 0);
	ck_assert_uint_eq(json_array_size(keep), 0);
}
END_TEST

START_TEST(upper_bounds_inclusive)
{
	struct tc c;

	apply(tc_tbl, sizeof(c),
	      "{\"i8\": 100, \"i16\": 30000, \"i32\": 2147483647, \"i64\": 9223372036854775807,"
	      " \"u8\": 200, \"u16\": 65535, \"d\": 2.5, \"e\": \"safe\"}",
	      &c, "t");
	expect_errs(NULL);
	ck_assert_int_eq(c.i8, 100);
	ck_assert_int_eq(c.i16, 30000);
	ck_assert_int_eq(c.i32, INT32_MAX);
	ck_assert_int_eq(c.i64, INT64_MAX);
	ck_assert_uint_eq(c.u8, 200);
	ck_assert_uint_eq(c.u16, 65535);
	ck_assert_double_eq(c.d, 2.5);
	ck_assert_int_eq(c.e, 1);
}
END_TEST

/* each integer width is stored with exactly its size: -1 is all ones, so a
 * wider store would spill 0xff into the bytes after the field */
struct widths {
	int8_t a;
	uint8_t pad_a[7];
	int16_t b;
	uint8_t pad_b[6];
	int32_t c;
	uint8_t pad_c[4];
	int64_t d;
	uint8_t u;
	uint8_t pad_u[7];
};

START_TEST(integer_widths_exact)
{
	static const struct lcp_opt tbl[] = {
		LCP_OPT_INT(struct widths, a, "a", "0", -1, 1, 0, ""),
		LCP_OPT_INT(struct widths, b, "b", "0", -1, 1, 0, ""),
		LCP_OPT_INT(struct widths, c, "c", "0", -1, 1, 0, ""),
		LCP_OPT_INT(struct widths, d, "d", "0", -1, 1, 0, ""),
		LCP_OPT_UINT(struct widths, u, "u", "0", 0, 255, 0, ""),
		LCP_OPT_END,
	};
	struct widths w;

	apply(tbl, sizeof(w), "{\"a\": -1, \"b\": -1, \"c\": -1, \"d\": -1, \"u\": 255}", &w, "w");
	expect_errs(NULL);
	ck_assert_int_eq(w.a, -1);
	ck_assert_int_eq(w.b, -1);
	ck_assert_int_eq(w.c, -1);
	ck_assert_int_eq(w.d, -1);
	ck_assert_uint_eq(w.u, 255);
	for (unsigned i = 0; i < 7; i++)
		ck_assert_uint_eq(w.pad_a[i], 0);
	for (unsigned i = 0; i < 6; i++)
		ck_assert_uint_eq(w.pad_b[i], 0);
	for (unsigned i = 0; i < 4; i++)
		ck_assert_uint_eq(w.pad_c[i], 0);
	for (unsigned i = 0; i < 7; i++)
		ck_assert_uint_eq(w.pad_u[i], 0);
}
END_TEST

START_TEST(integral_real_accepted)
{
	struct tc c;

	apply(tc_tbl, sizeof(c), "{\"i8\": 3.0, \"u16\": 1e3, \"d\": 2}", &c, "t");
	expect_errs(NULL);
	ck_assert_int_eq(c.i8, 3);
	ck_assert_uint_eq(c.u16, 1000);
	ck_assert_double_eq(c.d, 2.0);
}
END_TEST

/* ================= wrong JSON type ================= */

START_TEST(wrong_type)
{
	one("{\"flag\": 1}", "t.flag: expected a boolean, got integer");
	one("{\"flag\": \"true\"}", "t.flag: expected a boolean, got string");
	one("{\"flag\": null}", "t.flag: expected a boolean, got null");
	one("{\"i8\": 1.5}", "t.i8: expected an integer, got number");
	one("{\"i8\": \"3\"}", "t.i8: expected an integer, got string");
	one("{\"i32\": [1]}", "t.i32: expected an integer, got array");
	one("{\"i64\": 1e20}", "t.i64: expected an integer, got number");
	one("{\"u8\": true}", "t.u8: expected an unsigned integer, got boolean");
	one("{\"u64\": {}}", "t.u64: expected an unsigned integer, got object");
	one("{\"u16\": 2.5}", "t.u16: expected an unsigned integer, got number");
	one("{\"d\": \"0.5\"}", "t.d: expected a number, got string");
	one("{\"d\": false}", "t.d: expected a number, got boolean");
	one("{\"s\": 5}", "t.s: expected a string, got integer");
	one("{\"s\": [\"ab\"]}", "t.s: expected a string, got array");
	one("{\"opt\": null}", "t.opt: expected a string, got null");
	one("{\"e\": 1}", "t.e: expected a string (one of a set), got integer");
	one("{\"e\": {}}", "t.e: expected a string (one of a set), got object");
}
END_TEST

START_TEST(not_an_object)
{
	struct tc c;

	memset(&c, 0xff, sizeof(c));
	ck_assert_uint_eq(apply(tc_tbl, sizeof(c), "[1, 2]", &c, "stages[0].options"), 1);
	expect_errs("stages[0].options: expected an object, got array", NULL);
	ck_assert_int_eq(c.i8, 0); /* zeroed, nothing else applied */
	one("\"x\"", "t: expected an object, got string");
	one("3", "t: expected an object, got integer");
	one("null", "t: expected an object, got null");
}
END_TEST

/* ================= ranges ================= */

START_TEST(range_int)
{
	one("{\"i8\": -101}", "t.i8: -101 is below the minimum -100");
	one("{\"i8\": 101}", "t.i8: 101 is above the maximum 100");
	one("{\"i16\": -30001}", "t.i16: -30001 is below the minimum -30000");
	one("{\"i16\": 30001}", "t.i16: 30001 is above the maximum 30000");
	one("{\"i32\": -2147483649}", "t.i32: -2147483649 is below the minimum -2147483648");
	one("{\"i32\": 2147483648}", "t.i32: 2147483648 is above the maximum 2147483647");
	one("{\"i64\": -9223372036854775808}", NULL);
}
END_TEST

START_TEST(range_uint)
{
	one("{\"u8\": 0}", "t.u8: 0 is below the minimum 1");
	one("{\"u8\": -1}", "t.u8: -1 is below the minimum 1");
	one("{\"u8\": 201}", "t.u8: 201 is above the maximum 200");
	one("{\"u16\": -1}", "t.u16: -1 is below the minimum 0");
	one("{\"u16\": 65536}", "t.u16: 65536 is above the maximum 65535");
	one("{\"u32\": 4000000001}", "t.u32: 4000000001 is above the maximum 4000000000");
	one("{\"u64\": -5}", "t.u64: -5 is below the minimum 0");
}
END_TEST

/* LCP_OPT_F_POW2: powers of two at both ends pass; anything else is refused
 * naming the powers of two around it that the range allows */
struct p2 {
	uint32_t slots;
	int64_t k;
	int64_t big;
};

static const struct lcp_opt p2_tbl[] = {
	LCP_OPT_UINT(struct p2, slots, "slots", "1024", 2, 65536, LCP_OPT_F_POW2, "a power of two"),
	LCP_OPT_INT(struct p2, k, "k", "1", -8, 8, LCP_OPT_F_POW2, "signed, but a power of two"),
	LCP_OPT_INT(struct p2, big, "big", "1", 1, INT64_MAX, LCP_OPT_F_POW2, "up to 2^62"),
	LCP_OPT_END,
};

static void
p2_one(const char *text, const char *want)
{
	one_of(p2_tbl, sizeof(struct p2), text, want);
}

START_TEST(range_pow2)
{
	struct p2 c;

	lcp_errs_free(&errs);
	ck_assert_uint_eq(apply(p2_tbl, sizeof(c), "{\"slots\": 2, \"k\": 8}", &c, "t"), 0);
	ck_assert_uint_eq(c.slots, 2);
	ck_assert_int_eq(c.k, 8);
	ck_assert_uint_eq(apply(p2_tbl, sizeof(c), "{\"slots\": 65536}", &c, "t"), 0);
	ck_assert_uint_eq(c.slots, 65536);
	ck_assert_uint_eq(apply(p2_tbl, sizeof(c), NULL, &c, "t"), 0);
	ck_assert_uint_eq(c.slots, 1024);
	p2_one("{\"slots\": 1000}", "t.slots: 1000 is not a power of two (e.g. 512 or 1024)");
	p2_one("{\"slots\": 3}", "t.slots: 3 is not a power of two (e.g. 2 or 4)");
	p2_one("{\"slots\": 65535}", "t.slots: 65535 is not a power of two (e.g. 32768 or 65536)");
	/* the range is checked first */
	p2_one("{\"slots\": 1}", "t.slots: 1 is below the minimum 2");
	p2_one("{\"slots\": 65537}", "t.slots: 65537 is above the maximum 65536");
	/* only the neighbours inside [min, max] are named; none below 1 */
	p2_one("{\"k\": 6}", "t.k: 6 is not a power of two (e.g. 4 or 8)");
	p2_one("{\"k\": 7}", "t.k: 7 is not a power of two (e.g. 4 or 8)");
	p2_one("{\"k\": 0}", "t.k: 0 is not a power of two (e.g. 1)");
	p2_one("{\"k\": -4}", "t.k: -4 is not a power of two (e.g. 1)");
	/* at the top of int64_t: 2^62 is the last power of two */
	p2_one("{\"big\": 4611686018427387904}", NULL);
	p2_one("{\"big\": 4611686018427387903}",
	       "t.big: 4611686018427387903 is not a power of two "
	       "(e.g. 2305843009213693952 or 4611686018427387904)");
	p2_one("{\"big\": 4611686018427387905}",
	       "t.big: 4611686018427387905 is not a power of two (e.g. 4611686018427387904)");
	p2_one("{\"big\": 9223372036854775807}",
	       "t.big: 9223372036854775807 is not a power of two (e.g. 4611686018427387904)");
}
END_TEST

START_TEST(range_double)
{
	one("{\"d\": -1.75}", "t.d: -1.75 is below the minimum -1.5");
	one("{\"d\": 2.75}", "t.d: 2.75 is above the maximum 2.5");
	one("{\"d\": 1e300}", "t.d: 1e+300 is above the maximum 2.5");
	one("{\"d\": -3}", "t.d: -3 is below the minimum -1.5");
	one("{\"d\": 2.5}", NULL);
}
END_TEST

/* ================= strings and enums ================= */

START_TEST(string_length)
{
	static const struct lcp_opt one_byte[] = {
		LCP_OPT_STRING(struct rc, name, "name", "\"x\"", 1, 16, 0, "not empty"),
		LCP_OPT_END,
	};

	one_of(one_byte, sizeof(struct rc), "{\"name\": \"\"}", "t.name: empty; at least 1 byte");
	one_of(one_byte, sizeof(struct rc), "{\"name\": \"a\"}", NULL);
	one("{\"s\": \"a\"}", "t.s: \"a\" is shorter than 2 bytes");
	one("{\"s\": \"\"}", "t.s: empty; at least 2 bytes");
	one("{\"s\": \"abcdefghi\"}", "t.s: a string of 9 bytes is longer than the maximum 8");
	one("{\"s\": \"ab\"}", NULL);
	one("{\"s\": \"abcdefgh\"}", NULL);
}
END_TEST

/* jansson refuses \u0000 in a config file (no JSON_ALLOW_NUL), but the walker
 * is an API: a string with an embedded NUL must not be cut short silently */
START_TEST(string_with_nul)
{
	struct tc c;

	input = json_object();
	json_object_set_new(input, "s", json_stringn("a\0bc", 4));
	ck_assert_uint_eq(lcp_opt_apply(tc_tbl, sizeof(c), input, &c, "t", &errs, keep), 1);
	expect_errs("t.s: string contains a NUL character", NULL);
}
END_TEST

START_TEST(string_unbounded)
{
	struct tc c;
	char *big = malloc(100020);

	strcpy(big, "{\"opt\": \"");
	memset(big + 9, 'x', 100000);
	strcpy(big + 9 + 100000, "\"}");
	apply(tc_tbl, sizeof(c), big, &c, "t");
	expect_errs(NULL);
	ck_assert_uint_eq(strlen(c.opt), 100000);
	free(big);
}
END_TEST

START_TEST(enum_values)
{
	struct tc c;

	one("{\"e\": \"medium\"}", "t.e: \"medium\" is not one of: fast, safe, strict");
	one("{\"e\": \"Fast\"}", "t.e: \"Fast\" is not one of: fast, safe, strict");
	one("{\"e\": \"\"}", "t.e: \"\" is not one of: fast, safe, strict");
	lcp_errs_free(&errs);
	apply(tc_tbl, sizeof(c), "{\"e\": \"safe\"}", &c, "t");
	ck_assert_int_eq(c.e, 1);
	apply(tc_tbl, sizeof(c), "{\"e\": \"strict\"}", &c, "t");
	ck_assert_int_eq(c.e, 2);
	expect_errs(NULL);
}
END_TEST

/* ================= required, unknown, several ================= */

START_TEST(required_missing)
{
	struct rc c;

	ck_assert_uint_eq(apply(rc_tbl, sizeof(c), "{}", &c, "stages[1].options"), 5);
	expect_errs("stages[1].options.name: required option missing",
		    "stages[1].options.port: required option missing",
		    "stages[1].options.level: required option missing",
		    "stages[1].options.x: required option missing",
		    "stages[1].options.m: required option missing", NULL);
	lcp_errs_free(&errs);
	/* no options object at all: same */
	ck_assert_uint_eq(apply(rc_tbl, sizeof(c), NULL, &c, "s"), 5);
	lcp_errs_free(&errs);
	/* given: no error, values stored */
	ck_assert_uint_eq(apply(rc_tbl, sizeof(c),
				"{\"name\": \"n\", \"port\": 80, \"level\": -3, \"x\": 1, \"m\": \"b\"}",
				&c, "s"),
			  0);
	ck_assert_str_eq(c.name, "n");
	ck_assert_uint_eq(c.port, 80);
	ck_assert_int_eq(c.level, -3);
	ck_assert_int_eq(c.m, 1);
	/* given but invalid: the value error, not "missing" */
	ck_assert_uint_eq(apply(rc_tbl, sizeof(c),
				"{\"name\": \"n\", \"port\": 0, \"level\": 0, \"x\": 0, \"m\": \"a\"}",
				&c, "s"),
			  1);
	expect_errs("s.port: 0 is below the minimum 1", NULL);
}
END_TEST

START_TEST(unknown_key)
{
	struct tc c;

	ck_assert_uint_eq(apply(tc_tbl, sizeof(c), "{\"bogus\": 1, \"i8\": 7}", &c, "stages[2].options"), 1);
	expect_errs("stages[2].options.bogus: unknown option; allowed: " TC_ALLOWED, NULL);
	ck_assert_int_eq(c.i8, 7); /* the rest is still applied */
}
END_TEST

START_TEST(unknown_key_no_options)
{
	static const struct lcp_opt none[] = { LCP_OPT_END };
	char buf[8];

	apply(none, sizeof(buf), "{\"x\": 1}", buf, "o");
	expect_errs("o.x: unknown option; allowed: (none)", NULL);
	lcp_errs_free(&errs);
	/* a plugin with no table at all (options == NULL) */
	apply(NULL, 0, "{\"y\": true, \"z\": 2}", buf, "o");
	expect_errs("o.y: unknown option; allowed: (none)", "o.z: unknown option; allowed: (none)", NULL);
	lcp_errs_free(&errs);
	ck_assert_uint_eq(apply(NULL, 0, "{}", buf, "o"), 0);
	ck_assert_uint_eq(apply(NULL, 0, NULL, buf, "o"), 0);
}
END_TEST

/* lcp_opt_set_keys(): an object of the config's own (a stage, a link) */
static int
set_keys(const struct lcp_opt *tbl, const char *const *extra, const char *text, void *conf)
{
	json_error_t je;

	json_decref(input);
	input = json_loads(text, 0, &je);
	ck_assert_msg(input != NULL, "bad test JSON %s: %s", text, je.text);
	return lcp_opt_set_keys(tbl, extra, input, conf, "stages[1]", &errs, keep);
}

START_TEST(set_keys_extra_and_defaults)
{
	static const char *const objs[] = { "options", "strategies", NULL };
	struct rc r = { .port = 9 };

	/* the extra keys passed over; rows given set; a row with a default that
	 * is not given set to it (none in rc_tbl: its fields keep the caller's) */
	ck_assert_int_eq(set_keys(rc_tbl, objs, "{\"name\": \"n\", \"options\": 7, \"strategies\": {}}", &r), 0);
	expect_errs(NULL);
	ck_assert_str_eq(r.name, "n");
	ck_assert_uint_eq(r.port, 9);
	/* required rows are the caller's: nothing said of a missing one */
	ck_assert_int_eq(set_keys(rc_tbl, objs, "{}", &r), 0);
	expect_errs(NULL);
}
END_TEST

START_TEST(set_keys_refused)
{
	static const char *const objs[] = { "options", "strategies", NULL };
	struct tc c = { .i8 = 1 };

	/* a key neither in the table nor an extra: refused naming both, the
	 * nearest (an extra here) suggested */
	ck_assert_int_eq(set_keys(tc_tbl, objs, "{\"option\": {}, \"i16\": 5}", &c), -1);
	expect_errs("stages[1].option: unknown key (did you mean \"options\"?); allowed: " TC_ALLOWED
		    ", options, strategies",
		    NULL);
	ck_assert_int_eq(c.i16, 5);
	lcp_errs_free(&errs);
	/* a value refused leaves its row at the table's default */
	ck_assert_int_eq(set_keys(tc_tbl, NULL, "{\"i8\": 101, \"u8\": 7}", &c), -1);
	expect_errs("stages[1].i8: 101 is above the maximum 100", NULL);
	ck_assert_int_eq(c.i8, -5);
	ck_assert_uint_eq(c.u8, 7);
	ck_assert_str_eq(c.s, "abc");
	lcp_errs_free(&errs);
	/* no extras at all: every key outside the table refused */
	ck_assert_int_eq(set_keys(tc_tbl, NULL, "{\"options\": {}}", &c), -1);
	expect_errs("stages[1].options: unknown key; allowed: " TC_ALLOWED, NULL);
}
END_TEST

START_TEST(all_errors_in_order)
{
	struct tc c;

	/* unknown keys first (in the order written), then the table's order */
	ck_assert_uint_eq(apply(tc_tbl, sizeof(c),
				"{\"zzz\": 1, \"s\": 1, \"u8\": 0, \"aaa\": 2, \"e\": \"x\", \"flag\": 0,"
				" \"d\": 9}",
				&c, "t"),
			  7);
	expect_errs("t.zzz: unknown option; allowed: " TC_ALLOWED,
		    "t.aaa: unknown option; allowed: " TC_ALLOWED,
		    "t.flag: expected a boolean, got integer",
		    "t.u8: 0 is below the minimum 1",
		    "t.d: 9 is above the maximum 2.5",
		    "t.s: expected a string, got integer",
		    "t.e: \"x\" is not one of: fast, safe, strict", NULL);
}
END_TEST

START_TEST(count_is_per_call)
{
	struct tc c;

	lcp_errs_add(&errs, "an earlier error");
	ck_assert_uint_eq(apply(tc_tbl, sizeof(c), "{\"i8\": 500}", &c, "t"), 1);
	ck_assert_uint_eq(apply(tc_tbl, sizeof(c), "{\"i8\": 5}", &c, "t"), 0);
	expect_errs("an earlier error", "t.i8: 500 is above the maximum 100", NULL);
}
END_TEST

/* ================= lcp_opt_table_check ================= */

struct bt {
	bool b;
	uint8_t pad[3];
	uint32_t u;
	uint64_t q;
	double d;
	const char *s;
	int e;
};

static char msg[512];

static int
tcheck(const struct lcp_opt *tbl, size_t size)
{
	strcpy(msg, "(untouched)");
	return lcp_opt_table_check(tbl, size, msg, sizeof(msg));
}

/* tbl, for a conf of size bytes, fails the check: with the message want (NULL:
 * any) */
static void
refused(const struct lcp_opt *tbl, size_t size, const char *want)
{
	int rc = tcheck(tbl, size);

	ck_assert_msg(rc == -1, "the check returned %d, expected -1 (row 0 \"%s\": %s)", rc,
		      tbl[0].name, tbl[0].doc != NULL ? tbl[0].doc : "");
	if (want != NULL)
		ck_assert_str_eq(msg, want);
}

START_TEST(table_ok)
{
	ck_assert_int_eq(tcheck(tc_tbl, sizeof(struct tc)), 0);
	ck_assert_int_eq(tcheck(rc_tbl, sizeof(struct rc)), 0);
	ck_assert_int_eq(tcheck(NULL, 0), 0);
	ck_assert_int_eq(tcheck(lcp_engine_opts, sizeof(struct lcp_engine_conf)), 0);
}
END_TEST

/* the link table (config.c) leaves ring_size, burst, on_full and
 * block_timeout_us without a default: theirs is the engine's, read at load
 * time, where a plugin's table must have one. With its minimum (or first
 * choice) as a default each such row passes every other check */
START_TEST(table_links)
{
	struct lcp_opt t[16];
	char defs[16][24];
	unsigned n = 0;

	for (const struct lcp_opt *o = lcp_link_opts; o->name; o++) {
		ck_assert_uint_lt(n, 15);
		t[n] = *o;
		if (o->def == NULL && !(o->flags & LCP_OPT_F_REQUIRED)) {
			if (o->type == LCP_OPT_ENUM)
				snprintf(defs[n], sizeof(defs[n]), "\"%s\"", o->choices[0]);
			else
				snprintf(defs[n], sizeof(defs[n]), "%lld", (long long)o->min);
			t[n].def = defs[n];
		}
		n++;
	}
	t[n] = (struct lcp_opt)LCP_OPT_END;
	ck_assert_uint_eq(n, 6);
	ck_assert_int_eq(tcheck(lcp_link_opts, sizeof(struct lcp_link_conf)), -1);
	ck_assert_int_eq(tcheck(t, sizeof(struct lcp_link_conf)), 0);
}
END_TEST

/* the stage table (config.c) passes as it is: its rows without a default are
 * strings (NULL when not given) */
START_TEST(table_stages)
{
	ck_assert_int_eq(tcheck(lcp_stage_opts, sizeof(struct lcp_stage_keys)), 0);
}
END_TEST

START_TEST(table_size_mismatch)
{
	struct lcp_opt t[] = {
		{ .name = "b", .type = LCP_OPT_BOOL, .offset = 0, .size = 4, .def = "true" },
		LCP_OPT_END,
	};

	refused(t, sizeof(struct bt),
		"option table row 0 (\"b\"): field size 4 does not fit type boolean");
	t[0] = (struct lcp_opt){ .name = "u", .type = LCP_OPT_UINT, .offset = 4, .size = 3, .def = "1", .max = 9 };
	refused(t, sizeof(struct bt),
		"option table row 0 (\"u\"): field size 3 does not fit type unsigned integer");
	t[0] = (struct lcp_opt){ .name = "i", .type = LCP_OPT_INT, .offset = 0, .size = 16, .def = "1", .max = 9 };
	refused(t, sizeof(struct bt),
		"option table row 0 (\"i\"): field size 16 does not fit type integer");
	t[0] = (struct lcp_opt){ .name = "d", .type = LCP_OPT_DOUBLE, .offset = 16, .size = 4, .def = "1" };
	refused(t, sizeof(struct bt),
		"option table row 0 (\"d\"): field size 4 does not fit type number");
	t[0] = (struct lcp_opt){ .name = "s", .type = LCP_OPT_STRING, .offset = 24, .size = 4 };
	refused(t, sizeof(struct bt),
		"option table row 0 (\"s\"): field size 4 does not fit type string");
	t[0] = (struct lcp_opt){ .name = "e", .type = LCP_OPT_ENUM, .offset = 32, .size = 8, .def = "\"a\"",
				 .choices = dc_m };
	refused(t, sizeof(struct bt),
		"option table row 0 (\"e\"): field size 8 does not fit type string (one of a set)");
	/* every legal integer width passes */
	for (size_t w = 1; w <= 8; w *= 2) {
		t[0] = (struct lcp_opt){ .name = "u", .type = LCP_OPT_UINT, .offset = 8, .size = w, .def = "1", .max = 9 };
		ck_assert_int_eq(tcheck(t, sizeof(struct bt)), 0);
	}
}
END_TEST

START_TEST(table_offset_beyond)
{
	const struct lcp_opt t[] = {
		LCP_OPT_BOOL(struct bt, b, "b", "true", ""),
		{ .name = "x", .type = LCP_OPT_UINT, .offset = 8, .size = 8, .def = "0", .max = 1 },
		LCP_OPT_END,
	};

	refused(t, 12, "option table row 1 (\"x\"): offset 8 + size 8 is beyond conf_size 12");
	ck_assert_int_eq(tcheck(t, 16), 0); /* exactly fits */
	/* a plugin that forgot conf_size */
	refused(t, 0, "option table row 0 (\"b\"): offset 0 + size 1 is beyond conf_size 0");
}
END_TEST

START_TEST(table_enum_without_choices)
{
	static const char *const empty[] = { NULL };
	const struct lcp_opt t1[] = {
		LCP_OPT_ENUM(struct bt, e, "mode", "\"a\"", NULL, 0, ""),
		LCP_OPT_END,
	};
	const struct lcp_opt t2[] = {
		LCP_OPT_BOOL(struct bt, b, "b", "true", ""),
		LCP_OPT_ENUM(struct bt, e, "mode", "\"a\"", empty, 0, ""),
		LCP_OPT_END,
	};

	refused(t1, sizeof(struct bt), "option table row 0 (\"mode\"): enum without choices");
	refused(t2, sizeof(struct bt), "option table row 1 (\"mode\"): enum without choices");
}
END_TEST

START_TEST(table_min_above_max)
{
	const struct lcp_opt t1[] = {
		LCP_OPT_UINT(struct bt, u, "n", "7", 10, 5, 0, ""),
		LCP_OPT_END,
	};
	const struct lcp_opt t2[] = {
		LCP_OPT_INT(struct bt, q, "k", "0", 1, -1, 0, ""),
		LCP_OPT_END,
	};
	const struct lcp_opt t3[] = {
		LCP_OPT_UINT(struct bt, u, "n", "5", 5, 5, 0, ""),
		LCP_OPT_END,
	};

	refused(t1, sizeof(struct bt), "option table row 0 (\"n\"): min 10 > max 5");
	refused(t2, sizeof(struct bt), "option table row 0 (\"k\"): min 1 > max -1");
	ck_assert_int_eq(tcheck(t3, sizeof(struct bt)), 0);
}
END_TEST

START_TEST(table_pow2)
{
	const struct lcp_opt t1[] = {
		LCP_OPT_STRING(struct bt, s, "s", "\"x\"", 0, 8, LCP_OPT_F_POW2, ""),
		LCP_OPT_END,
	};
	const struct lcp_opt t2[] = {
		LCP_OPT_UINT(struct bt, u, "n", "5", 5, 7, LCP_OPT_F_POW2, ""),
		LCP_OPT_END,
	};
	const struct lcp_opt t3[] = {
		LCP_OPT_UINT(struct bt, u, "n", "12", 1, 64, LCP_OPT_F_POW2, ""),
		LCP_OPT_END,
	};
	const struct lcp_opt t4[] = {
		LCP_OPT_INT(struct bt, q, "k", "-2", -4, -1, LCP_OPT_F_POW2, ""),
		LCP_OPT_END,
	};
	const struct lcp_opt t5[] = {
		LCP_OPT_UINT(struct bt, u, "n", "8", 5, 8, LCP_OPT_F_POW2, ""),
		LCP_OPT_END,
	};
	/* above 2^62, the largest power of two an int64_t holds */
	const struct lcp_opt t6[] = {
		LCP_OPT_INT(struct bt, q, "k", NULL, ((int64_t)1 << 62) + 1, INT64_MAX,
			    LCP_OPT_F_POW2 | LCP_OPT_F_REQUIRED, ""),
		LCP_OPT_END,
	};

	refused(t1, sizeof(struct bt), "option table row 0 (\"s\"): LCP_OPT_F_POW2 on a string option");
	refused(t2, sizeof(struct bt), "option table row 0 (\"n\"): LCP_OPT_F_POW2 with no power of two in 5..7");
	/* a default is held to the flag like a user's value */
	refused(t3, sizeof(struct bt), "option table row 0 (\"n\"): default: 12 is not a power of two (e.g. 8 or 16)");
	refused(t4, sizeof(struct bt), "option table row 0 (\"k\"): LCP_OPT_F_POW2 with no power of two in -4..-1");
	refused(t6, sizeof(struct bt),
		"option table row 0 (\"k\"): LCP_OPT_F_POW2 with no power of two in "
		"4611686018427387905..9223372036854775807");
	ck_assert_int_eq(tcheck(t5, sizeof(struct bt)), 0);
}
END_TEST

START_TEST(table_unknown_type)
{
	const struct lcp_opt t[] = {
		LCP_OPT_BOOL(struct bt, b, "b", "true", ""),
		{ .name = "z", .type = 9, .offset = 4, .size = 4, .def = "1" },
		LCP_OPT_END,
	};

	refused(t, sizeof(struct bt), "option table row 1 (\"z\"): unknown type 9");
}
END_TEST

START_TEST(table_no_default)
{
	const struct lcp_opt t[] = {
		LCP_OPT_UINT(struct bt, u, "n", NULL, 0, 5, 0, "neither required nor a default"),
		LCP_OPT_END,
	};
	const struct lcp_opt ok[] = {
		LCP_OPT_STRING(struct bt, s, "s", NULL, 0, 0, 0, "a string may be left unset"),
		LCP_OPT_UINT(struct bt, u, "n", NULL, 0, 5, LCP_OPT_F_REQUIRED, "required"),
		LCP_OPT_END,
	};

	refused(t, sizeof(struct bt), "option table row 0 (\"n\"): neither required nor a default");
	ck_assert_int_eq(tcheck(ok, sizeof(struct bt)), 0);
}
END_TEST

START_TEST(table_first_defect_reported)
{
	const struct lcp_opt t[] = {
		LCP_OPT_BOOL(struct bt, b, "b", "true", ""),
		LCP_OPT_UINT(struct bt, u, "n", "7", 10, 5, 0, ""),
		LCP_OPT_ENUM(struct bt, e, "mode", "\"a\"", NULL, 0, ""),
		LCP_OPT_END,
	};

	refused(t, sizeof(struct bt), "option table row 1 (\"n\"): min 10 > max 5");
}
END_TEST

START_TEST(type_names)
{
	ck_assert_str_eq(lcp_opt_type_name(LCP_OPT_BOOL), "boolean");
	ck_assert_str_eq(lcp_opt_type_name(LCP_OPT_INT), "integer");
	ck_assert_str_eq(lcp_opt_type_name(LCP_OPT_UINT), "unsigned integer");
	ck_assert_str_eq(lcp_opt_type_name(LCP_OPT_DOUBLE), "number");
	ck_assert_str_eq(lcp_opt_type_name(LCP_OPT_STRING), "string");
	ck_assert_str_eq(lcp_opt_type_name(LCP_OPT_ENUM), "string (one of a set)");
	ck_assert_str_eq(lcp_opt_type_name(0), "?");
}
END_TEST

/* ---- tables that lcp_opt_table_check() once let through (the loader refuses a
 * plugin whose table fails the check) ---- */
struct c8 {
	uint8_t n;
	uint8_t next;
	uint32_t u;
	double d;
	const char *s;
};

/* one row each, for a struct c8; want: the check's message (NULL: any) */
static const struct {
	struct lcp_opt row;
	const char *want;
} c8_rows[] = {
	/* an integer range must fit the field: the walker trusts a checked table,
	 * the check keeps 300 out of a uint8_t */
	{.row = LCP_OPT_UINT(struct c8, n, "n", "1", 0, 300, 0, "uint8_t, max 300"),
	 .want = "option table row 0 (\"n\"): range 0..300 does not fit an unsigned 8-bit field "
		 "(0..255)"},
	/* an unsigned option cannot have a negative minimum */
	{.row = LCP_OPT_UINT(struct c8, u, "u", "1", -5, 10, 0, "unsigned, min -5")},
	/* a double's minimum cannot exceed its maximum */
	{.row = LCP_OPT_DOUBLE(struct c8, d, "d", "1.5", 2.0, 1.0, 0, "dmin > dmax")},
	/* a default the walker itself refuses is the table's fault, not every user
	 * config's */
	{.row = LCP_OPT_UINT(struct c8, u, "burst", "5000", 1, 1024, 0, "default above max")},
	{.row = LCP_OPT_UINT(struct c8, u, "burst", "abc", 1, 1024, 0, "default not JSON")},
};

START_TEST(table_row_refused)
{
	const struct lcp_opt t[] = {
		c8_rows[_i].row,
		LCP_OPT_END,
	};

	refused(t, sizeof(struct c8), c8_rows[_i].want);
}
END_TEST

/* two rows with one name: the second would be unreachable */
START_TEST(table_duplicate_names)
{
	const struct lcp_opt t[] = {
		LCP_OPT_UINT(struct c8, u, "n", "1", 0, 10, 0, "first"),
		LCP_OPT_UINT(struct c8, n, "n", "2", 0, 10, 0, "second, unreachable"),
		LCP_OPT_END,
	};

	refused(t, sizeof(struct c8), NULL);
}
END_TEST

/* the bound, and the message, count bytes, not characters */
START_TEST(string_length_in_bytes)
{
	const struct lcp_opt t[] = {
		LCP_OPT_STRING(struct c8, s, "s", "\"ab\"", 2, 6, 0, "2..6 bytes"),
		LCP_OPT_END,
	};
	json_t *obj = json_pack("{s:s}", "s", "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
	struct c8 c;

	/* "éééé": 4 characters, 8 bytes; the bound is in bytes (lcp/opt.h) */
	lcp_opt_apply(t, sizeof(c), obj, &c, "t", &errs, keep);
	ck_assert_uint_eq(errs.n, 1);
	ck_assert_str_eq(errs.v[0], "t.s: a string of 8 bytes is longer than the maximum 6");
	json_decref(obj);
}
END_TEST

static void
opt_tcases(Suite *s)
{
	TCase *tc;

	T_TESTS(t_tcase(s, "defaults", setup, teardown, 0), defaults_no_object,
		defaults_empty_object, default_string_outlives_input, user_string_points_into_input,
		conf_zeroed_first, defaults_same_code, user_value_skips_bad_default);

	T_TESTS(t_tcase(s, "types", setup, teardown, 0), set_every_type, upper_bounds_inclusive,
		integer_widths_exact, integral_real_accepted, wrong_type, not_an_object);

	T_TESTS(t_tcase(s, "ranges", setup, teardown, 0), range_int, range_uint, range_double,
		string_length, string_with_nul, string_unbounded, string_length_in_bytes,
		enum_values, range_pow2);

	T_TESTS(t_tcase(s, "keys", setup, teardown, 0), required_missing, unknown_key,
		unknown_key_no_options, all_errors_in_order, count_is_per_call,
		set_keys_extra_and_defaults, set_keys_refused);

	tc = t_tcase(s, "table_check", NULL, NULL, 0);
	T_TESTS(tc, table_ok, table_links, table_stages, table_size_mismatch, table_offset_beyond,
		table_enum_without_choices, table_min_above_max, table_pow2, table_unknown_type,
		table_no_default, table_first_defect_reported, type_names, table_duplicate_names);
	tcase_add_loop_test(tc, table_row_refused, 0, sizeof(c8_rows) / sizeof(c8_rows[0]));
}

T_MAIN("opt", opt_tcases)
