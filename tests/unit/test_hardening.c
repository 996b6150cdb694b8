/* SPDX-License-Identifier: BSD-3-Clause
 * test_hardening.c — defects found while writing the unit tests, now fixed; each
 * test keeps the fix in place:
 *   opt.c lcp_opt_table_check() refuses (so the loader refuses the plugin)
 *     1 an integer range that does not fit the field (uint8_t with max 300)
 *     2 a negative minimum for an unsigned option
 *     3 dmin > dmax for a double
 *     4 a default the walker itself refuses (out of range, wrong type, not JSON),
 *       instead of blaming every user config ("... (default): ...")
 *     5 two rows with the same name (the second would be unreachable)
 *   opt.c string length messages count and say bytes (6)
 *   elf_probe.c a 32-byte name without NUL is refused, not truncated (7)
 *   loader.c lcp_registry_get(r, "") does not answer with a file refused before
 *     its name was read (8)
 *   config.c an lcore set given twice (-l, -c, --lcores) is refused by `lcpipe
 *     check`, as EAL 22.11 refuses it (9)
 *   loader.c check_stage_ops() refuses two ports with one name (10)
 *   elf_probe.c refuses section headers or a .dynsym at an offset that is not a
 *     multiple of 8 instead of reading them through misaligned struct pointers
 *     (undefined behaviour; found by UBSan in `make check-sanitizers`) (11)
 */
#include <check.h>
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define T_BUGS T_PLUGINS "/bugs/.libs"

static char msg[512];

struct c8 {
	uint8_t n;
	uint8_t next;
	uint32_t u;
	double d;
	const char *s;
};

/* 1 */
START_TEST(table_range_must_fit_field)
{
	const struct lcp_opt t[] = {
		LCP_OPT_UINT(struct c8, n, "n", "1", 0, 300, 0, "uint8_t, max 300"),
		LCP_OPT_END,
	};

	/* the walker trusts a checked table: the check keeps 300 out of a uint8_t
	 * (the loader refuses a plugin whose table fails it) */
	ck_assert_msg(lcp_opt_table_check(t, sizeof(struct c8), msg, sizeof(msg)) == -1,
		      "a uint8_t option with max 300 passes lcp_opt_table_check");
	ck_assert_str_eq(msg, "option table row 0 (\"n\"): range 0..300 does not fit an unsigned 8-bit field (0..255)");
}
END_TEST

/* 2 */
START_TEST(table_unsigned_negative_min)
{
	const struct lcp_opt t[] = {
		LCP_OPT_UINT(struct c8, u, "u", "1", -5, 10, 0, "unsigned, min -5"),
		LCP_OPT_END,
	};

	ck_assert_msg(lcp_opt_table_check(t, sizeof(struct c8), msg, sizeof(msg)) == -1,
		      "an unsigned option with min -5 passes lcp_opt_table_check");
}
END_TEST

/* 3 */
START_TEST(table_double_min_above_max)
{
	const struct lcp_opt t[] = {
		LCP_OPT_DOUBLE(struct c8, d, "d", "1.5", 2.0, 1.0, 0, "dmin > dmax"),
		LCP_OPT_END,
	};

	ck_assert_msg(lcp_opt_table_check(t, sizeof(struct c8), msg, sizeof(msg)) == -1,
		      "dmin 2 > dmax 1 passes lcp_opt_table_check");
}
END_TEST

/* 4 */
START_TEST(table_default_checked)
{
	const struct lcp_opt out_of_range[] = {
		LCP_OPT_UINT(struct c8, u, "burst", "5000", 1, 1024, 0, "default above max"),
		LCP_OPT_END,
	};
	const struct lcp_opt not_json[] = {
		LCP_OPT_UINT(struct c8, u, "burst", "abc", 1, 1024, 0, "default not JSON"),
		LCP_OPT_END,
	};

	ck_assert_msg(lcp_opt_table_check(out_of_range, sizeof(struct c8), msg, sizeof(msg)) == -1,
		      "default 5000 above max 1024 passes lcp_opt_table_check");
	ck_assert_msg(lcp_opt_table_check(not_json, sizeof(struct c8), msg, sizeof(msg)) == -1,
		      "default 'abc' (not JSON) passes lcp_opt_table_check");
}
END_TEST

/* 5 */
START_TEST(table_duplicate_names)
{
	const struct lcp_opt t[] = {
		LCP_OPT_UINT(struct c8, u, "n", "1", 0, 10, 0, "first"),
		LCP_OPT_UINT(struct c8, n, "n", "2", 0, 10, 0, "second, unreachable"),
		LCP_OPT_END,
	};

	ck_assert_msg(lcp_opt_table_check(t, sizeof(struct c8), msg, sizeof(msg)) == -1,
		      "two rows named \"n\" pass lcp_opt_table_check");
}
END_TEST

/* 6 */
START_TEST(string_length_in_bytes)
{
	const struct lcp_opt t[] = {
		LCP_OPT_STRING(struct c8, s, "s", "\"ab\"", 2, 6, 0, "2..6 bytes"),
		LCP_OPT_END,
	};
	struct lcp_errs errs = { 0 };
	json_t *keep = json_array(), *obj = json_pack("{s:s}", "s", "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
	struct c8 c;

	/* "éééé": 4 characters, 8 bytes; the bound is in bytes (lcp/opt.h) */
	lcp_opt_apply(t, sizeof(c), obj, &c, "t", &errs, keep);
	ck_assert_uint_eq(errs.n, 1);
	ck_assert_str_eq(errs.v[0], "t.s: a string of 8 bytes is longer than the maximum 6");
	lcp_errs_free(&errs);
	json_decref(obj);
	json_decref(keep);
}
END_TEST

/* 7 */
START_TEST(loader_unterminated_name)
{
	const char *dirs[] = { T_BUGS };
	struct lcp_registry r;
	const struct lcp_plugin_file *pf;

	lcp_registry_init(&r, dirs, 1);
	pf = t_reg_find(&r, T_BUGS "/long_name.so");
	ck_assert_ptr_nonnull(pf);
	ck_assert_msg(pf->refused != NULL,
		      "a 32-byte name without NUL was accepted as \"%s\" (truncated to 31)", pf->name);
	lcp_registry_fini(&r);
}
END_TEST

/* 8 */
START_TEST(registry_get_empty_name)
{
	const char *dirs[] = { T_NOTSO };
	struct lcp_registry r;
	const struct lcp_plugin_file *refused = NULL;

	lcp_registry_init(&r, dirs, 1);
	ck_assert_ptr_null(lcp_registry_get(&r, "", &refused));
	ck_assert_msg(refused == NULL, "get(\"\") answered with %s", refused ? refused->refused : "");
	lcp_registry_fini(&r);
}
END_TEST

/* 9 */
START_TEST(eal_lcore_option_twice)
{
	char *dir = t_scratch("bugs-eal"), *path;
	static const char text[] =
		"{\"eal\": [\"-l\", \"0,1\", \"-l\", \"0,1\"], \"plugin_path\": [\"" T_GOOD "\"],\n"
		" \"stages\": [{\"name\": \"a\", \"plugin\": \"test_src\"},\n"
		"            {\"name\": \"b\", \"plugin\": \"test_sink\"}],\n"
		" \"links\": [\"a.out -> b.in\"]}\n";
	struct lcp_errs errs = { 0 };
	struct lcp_cfg *c;

	ck_assert(asprintf(&path, "%s/twice.json", dir) > 0);
	t_write(path, text, strlen(text));
	c = lcp_cfg_load(path, NULL, 0, &errs);
	/* EAL 22.11: "Option -l is ignored, because (-l) is set!" then usage, init fails */
	ck_assert_msg(errs.n > 0, "\"-l\" given twice passes lcpipe check; rte_eal_init refuses it");
	lcp_cfg_free(c);
	lcp_errs_free(&errs);
	free(path);
	free(dir);
}
END_TEST

/* 10 */
START_TEST(loader_duplicate_port_name)
{
	const char *dirs[] = { T_BUGS };
	struct lcp_registry r;
	const struct lcp_plugin_file *refused = NULL;

	lcp_registry_init(&r, dirs, 1);
	ck_assert_msg(lcp_registry_get(&r, "test_dup_port", &refused) == NULL,
		      "a stage with two ports named \"in\" was accepted");
	lcp_registry_fini(&r);
}
END_TEST

/* 11: a copy of a good plugin with its section header table (what = 0) or its
 * .dynsym (what = 1) moved to the end of the file, one byte off 8-byte alignment;
 * before the fix the probe read them misaligned and accepted the file */
START_TEST(probe_misaligned_tables)
{
	size_t len = 0;
	char *orig = t_read(T_GOOD "/test_src.so", &len);
	char *dir = t_scratch("bugs-align"), *path;
	struct lcp_probe p;

	ck_assert_ptr_nonnull(orig);
	ck_assert(asprintf(&path, "%s/misaligned.so", dir) > 0);
	for (int what = 0; what < 2; what++) {
		Elf64_Ehdr eh;
		Elf64_Shdr *sh;
		size_t end = (len + 8) / 8 * 8 + 1, tlen;
		uint64_t toff;
		char *buf;

		memcpy(&eh, orig, sizeof(eh));
		ck_assert_uint_eq(eh.e_shentsize, sizeof(Elf64_Shdr));
		sh = calloc(eh.e_shnum, sizeof(*sh));
		ck_assert_ptr_nonnull(sh);
		memcpy(sh, orig + eh.e_shoff, eh.e_shnum * sizeof(*sh));
		if (what == 0) {
			toff = eh.e_shoff;
			tlen = eh.e_shnum * sizeof(Elf64_Shdr);
			eh.e_shoff = end;
		} else {
			unsigned i = 0;

			while (i < eh.e_shnum && sh[i].sh_type != SHT_DYNSYM)
				i++;
			ck_assert_uint_lt(i, eh.e_shnum);
			toff = sh[i].sh_offset;
			tlen = sh[i].sh_size;
			sh[i].sh_offset = end;
		}
		buf = calloc(1, end + tlen);
		ck_assert_ptr_nonnull(buf);
		memcpy(buf, orig, len);
		memcpy(buf + end, orig + toff, tlen);
		memcpy(buf, &eh, sizeof(eh));
		if (what == 1)
			memcpy(buf + eh.e_shoff, sh, eh.e_shnum * sizeof(*sh));
		t_write(path, buf, end + tlen);
		ck_assert_msg(lcp_elf_probe(path, &p, msg, sizeof(msg)) == -1,
			      "a plugin with its %s at a misaligned offset was accepted",
			      what == 0 ? "section headers" : ".dynsym");
		ck_assert_str_eq(msg, what == 0 ? "not a shared object: ELF headers misaligned"
						: "no descriptor: no dynamic symbol table");
		free(buf);
		free(sh);
	}
	free(path);
	free(dir);
	free(orig);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("hardening");
	TCase *tc = tcase_create("all");
	SRunner *sr;
	int failed;

	unsetenv("LCP_PLUGIN_PATH");
	tcase_add_test(tc, table_range_must_fit_field);
	tcase_add_test(tc, table_unsigned_negative_min);
	tcase_add_test(tc, table_double_min_above_max);
	tcase_add_test(tc, table_default_checked);
	tcase_add_test(tc, table_duplicate_names);
	tcase_add_test(tc, string_length_in_bytes);
	tcase_add_test(tc, loader_unterminated_name);
	tcase_add_test(tc, registry_get_empty_name);
	tcase_add_test(tc, eal_lcore_option_twice);
	tcase_add_test(tc, loader_duplicate_port_name);
	tcase_add_test(tc, probe_misaligned_tables);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
