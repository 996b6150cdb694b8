/* SPDX-License-Identifier: BSD-3-Clause
 * t_check.h — what every Check suite's main() does: run the suite (fork mode
 * unless CK_FORK=no), print Check's summary, exit 0 when nothing failed.
 *
 *   int main(void) { return t_run_suite(my_suite()); }
 */
#ifndef LCP_TESTS_T_CHECK_H
#define LCP_TESTS_T_CHECK_H

#include <check.h>
#include <stdlib.h>

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

#endif
