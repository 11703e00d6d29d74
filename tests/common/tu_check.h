/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tu_check.h -- what the Check programs share (tu_check.c)
 */
#ifndef RPMEM_TU_CHECK_H
#define RPMEM_TU_CHECK_H 1

#include <check.h>

/* tu_run -- run every test of `s`; EXIT_SUCCESS or EXIT_FAILURE */
int tu_run(Suite *s);

/* tu_suite_add -- add test case `tc` to suite `s`; returns `s` */
Suite *tu_suite_add(Suite *s, TCase *tc);

/* TU_MAIN -- the main of a Check program: run the suite `make` builds */
#define TU_MAIN(make) \
int main(void); \
int \
main(void) \
{ \
	return tu_run(make()); \
}

#endif /* RPMEM_TU_CHECK_H */
