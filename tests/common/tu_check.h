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

/* TU_LOOP -- add `test` to `tc` once for each row of the array `table` */
#define TU_LOOP(tc, test, table) \
	tcase_add_loop_test((tc), (test), 0, (int)TU_NELEMS(table))

/* tu_suite_add -- add test case `tc` to suite `s`; returns `s` */
Suite *tu_suite_add(Suite *s, TCase *tc);

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

#endif /* RPMEM_TU_CHECK_H */
