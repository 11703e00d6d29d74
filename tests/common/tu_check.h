/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tu_check.h -- what the Check programs share (tu_check.c)
 */
#ifndef RPMEM_TU_CHECK_H
#define RPMEM_TU_CHECK_H 1

#include <check.h>
#include <limits.h>
#include <stddef.h>

#include "tu.h"

/* tu_run -- run every test of `s`; EXIT_SUCCESS or EXIT_FAILURE */
int tu_run(Suite *s);

/*
 * tu_suite -- a suite `name` with a first test case `tcase` (into *tc),
 * its checked fixture `setup` and `teardown` unless both are NULL
 */
Suite *tu_suite(const char *name, const char *tcase, void (*setup)(void),
	void (*teardown)(void), TCase **tc);

/* struct tu_io -- a row of a table of cases: an input, what it gives */
struct tu_io {
	const char *in;
	const char *out;
};

/* TU_LOOP -- add `test` to `tc` once for each row of the array `table` */
#define TU_LOOP(tc, test, table) \
	tcase_add_loop_test((tc), (test), 0, (int)TU_NELEMS(table))

/* tu_suite_add -- add test case `tc` to suite `s`; returns `s` */
Suite *tu_suite_add(Suite *s, TCase *tc);

/*
 * struct tu_entry -- one row of a suite's list (TU_CHECK_MAIN): a test
 * run once (TU_ONE), once per row of a table (TU_EACH), or the start of
 * a further test case (TU_CASE); TU_TIMES runs it for _i 0..n-1
 */
struct tu_entry {
	const TTest *test;	/* NULL: start the test case `tcase` */
	int rows;		/* 0: run `test` once; else for _i 0..rows-1 */
	const char *tcase;
};
#define TU_ONE(test) { (test), 0, NULL }
#define TU_EACH(test, table) { (test), (int)TU_NELEMS(table), NULL }
#define TU_TIMES(test, n) { (test), (int)(n), NULL }
#define TU_CASE(name) { NULL, 0, (name) }

/* tu_tcase_add -- add the n entries `e` (no TU_CASE) to test case `tc` */
void tu_tcase_add(TCase *tc, const struct tu_entry *e, size_t n);

/*
 * tu_suite_list -- the suite `name` whose first test case is `tcase`,
 * holding the n entries `e` in order; every test case has the checked
 * fixture `setup` and `teardown` unless both are NULL
 */
Suite *tu_suite_list(const char *name, const char *tcase,
	void (*setup)(void), void (*teardown)(void),
	const struct tu_entry *e, size_t n);

/* ---------------------------------------------------------- tu_rpmem.c */

/* tu_unlink_quiet -- remove path; a missing file is fine */
void tu_unlink_quiet(const char *path);

/*
 * tu_poolset_write -- write the set file `path` naming nparts parts of
 * part_size bytes (whole MiB), with OPTION `option` unless NULL; each
 * part is removed first
 */
void tu_poolset_write(const char *path, const char (*part)[PATH_MAX],
	unsigned nparts, size_t part_size, const char *option);

/* tu_poolset_unlink -- remove the parts of a set file, then the file */
void tu_poolset_unlink(const char *path, const char (*part)[PATH_MAX],
	unsigned nparts);

/* tu_pool_map -- page-aligned anonymous memory for a local pool */
void *tu_pool_map(size_t size);

/* tu_ok -- an int-returning librpmem call succeeded; else its errno */
void tu_ok(int ret, const char *what);

/* TU_MAIN -- the main of a Check program: run the suite `make` builds */
#define TU_MAIN(make) \
int main(void); \
int \
main(void) \
{ \
	return tu_run(make()); \
}

/*
 * TU_CHECK_MAIN -- the main of a Check program whose suite is a list:
 * suite `name`, first test case `tcase`, fixture `setup`/`teardown`
 * (NULL, NULL for none), then its TU_ONE/TU_EACH/TU_CASE entries
 */
#define TU_CHECK_MAIN(name, tcase, setup, teardown, ...) \
int main(void); \
int \
main(void) \
{ \
	const struct tu_entry e_[] = { __VA_ARGS__ }; \
	return tu_run(tu_suite_list((name), (tcase), (setup), (teardown), \
		e_, TU_NELEMS(e_))); \
}

#endif /* RPMEM_TU_CHECK_H */
