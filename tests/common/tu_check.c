/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tu_check.c -- a Check suite run the way every unit test runs it
 */
#include <stdlib.h>

#include "tu_check.h"

/* tu_run -- run every test of `s` (CK_VERBOSITY may raise the output) */
int
tu_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* tu_suite -- a suite and its first test case, with a fixture if any */
Suite *
tu_suite(const char *name, const char *tcase, void (*setup)(void),
	void (*teardown)(void), TCase **tc)
{
	Suite *s = suite_create(name);
	*tc = tcase_create(tcase);
	if (setup || teardown)
		tcase_add_checked_fixture(*tc, setup, teardown);
	return s;
}

/* tu_suite_add -- add test case `tc` to suite `s`; returns `s` */
Suite *
tu_suite_add(Suite *s, TCase *tc)
{
	suite_add_tcase(s, tc);
	return s;
}

/* tu_suite_list -- a suite built from a list of entries (tu_check.h) */
Suite *
tu_suite_list(const char *name, const char *tcase, void (*setup)(void),
	void (*teardown)(void), const struct tu_entry *e, size_t n)
{
	TCase *tc;
	Suite *s = tu_suite(name, tcase, setup, teardown, &tc);
	for (size_t i = 0; i < n; i++) {
		if (e[i].test) {
			tu_tcase_add(tc, &e[i], 1);
			continue;
		}
		tu_suite_add(s, tc);
		tc = tcase_create(e[i].tcase);
		if (setup || teardown)
			tcase_add_checked_fixture(tc, setup, teardown);
	}
	return tu_suite_add(s, tc);
}

/* tu_tcase_add -- each entry's test, once or once a row (tu_check.h) */
void
tu_tcase_add(TCase *tc, const struct tu_entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (e[i].rows)
			tcase_add_loop_test(tc, e[i].test, 0, e[i].rows);
		else
			tcase_add_test(tc, e[i].test);
	}
}
