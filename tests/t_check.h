/* SPDX-License-Identifier: BSD-3-Clause
 * t_check.h — what the Check suites share:
 *
 *   t_tcase(s, name, setup, teardown, timeout)
 *                           a test case added to s, with its checked fixture
 *                           (NULL: none) and timeout in seconds (0: Check's)
 *   T_TESTS(tc, fn, ...)    tcase_add_test(tc, fn) for each START_TEST name, in
 *                           order; loop and signal tests keep Check's own calls.
 *                           A case of plain tests only is made and filled in one
 *                           statement: T_TESTS(t_tcase(s, "name", ...), fn, ...);
 *   T_MAIN(name, build)     a program's main(), last in its file: the suite
 *                           named name, void build(Suite *s) adding its test
 *                           cases, run by t_run_suite(): T_MAIN("utf8", utf8_tcases)
 *   t_run_suite(s)          run the suite (fork mode unless CK_FORK=no), print
 *                           Check's summary, EXIT_SUCCESS when nothing failed;
 *                           T_MAIN's last step, called by a main() of its own
 *                           where there is one (test_ws_session runs twice)
 *   REQUIRE(cond, fmt, ...) ck_assert* marks every passing check with a write
 *                           to Check's pipe (a syscall each in fork mode); loops
 *                           that check millions of things fail through
 *                           ck_abort_msg and pass silently
 */
#ifndef LCP_TESTS_T_CHECK_H
#define LCP_TESTS_T_CHECK_H

#include <check.h>
#include <stdlib.h>

#define REQUIRE(cond, ...)                                                                         \
	do {                                                                                       \
		if (!(cond))                                                                       \
			ck_abort_msg(__VA_ARGS__);                                                 \
	} while (0)

static inline TCase *
t_tcase(Suite *s, const char *name, SFun setup, SFun teardown, double timeout)
{
	TCase *tc = tcase_create(name);

	if (setup != NULL || teardown != NULL)
		tcase_add_checked_fixture(tc, setup, teardown);
	if (timeout > 0)
		tcase_set_timeout(tc, timeout);
	suite_add_tcase(s, tc);
	return tc;
}

/* START_TEST(fn) defines `static const TTest *fn`; tests is NULL-terminated */
static inline void
t_add_tests(TCase *tc, const TTest *const *tests)
{
	for (; *tests != NULL; tests++)
		tcase_add_test(tc, *tests);
}

#define T_TESTS(tc, ...) t_add_tests((tc), (const TTest *const[]){__VA_ARGS__, NULL})

static inline int
t_run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* no ';' after it: it is a function definition */
#define T_MAIN(name, build)                                                                        \
	int main(void)                                                                             \
	{                                                                                          \
		Suite *t_suite = suite_create(name);                                               \
                                                                                                   \
		build(t_suite);                                                                    \
		return t_run_suite(t_suite);                                                       \
	}

#endif
