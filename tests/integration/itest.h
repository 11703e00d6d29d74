/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * itest.h -- small helpers the end-to-end Check programs share
 */
#ifndef RPMEM_ITEST_H
#define RPMEM_ITEST_H 1

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "librpmem.h"

/* errmsg -- rpmem_errormsg(), never NULL */
static inline const char *
errmsg(void)
{
	const char *m = rpmem_errormsg();
	return m ? m : "(null)";
}

/* ename -- symbolic name of errno value `e` */
static inline const char *
ename(int e)
{
	const char *n = e ? strerrorname_np(e) : "0";
	return n ? n : "E?";
}

/* fmt -- snprintf that fails the test instead of truncating */
static inline void fmt(char *buf, size_t len, const char *f, ...)
	__attribute__((format(printf, 3, 4)));
static inline void
fmt(char *buf, size_t len, const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	int n = vsnprintf(buf, len, f, ap);
	va_end(ap);
	ck_assert_msg(n >= 0 && (size_t)n < len, "string too long: %s", buf);
}

/* a group of tests a program runs, named on its command line */
struct itest_group {
	const char *name;
	Suite *(*make)(void);
};

/*
 * itest_main -- run the group named by argv[1] (default: the first) once
 * `load` has read what the driving script set for it
 */
static inline int
itest_main(int argc, char *argv[], const struct itest_group *groups,
		size_t ngroups, int (*load)(const char *group))
{
	const char *group = argc > 1 ? argv[1] : groups[0].name;
	Suite *s = NULL;
	for (size_t i = 0; i < ngroups; i++)
		if (strcmp(group, groups[i].name) == 0)
			s = groups[i].make();
	if (argc > 2 || s == NULL) {
		fprintf(stderr, "usage: %s [", argv[0]);
		for (size_t i = 0; i < ngroups; i++)
			fprintf(stderr, "%s%s", i ? "|" : "", groups[i].name);
		fprintf(stderr, "]\n");
		return EXIT_FAILURE;
	}
	if (load(group))
		return EXIT_FAILURE;

	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	int nfailed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nfailed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/*
 * ITEST_MAIN -- the main of a program of groups: `load`, then the
 * groups' { NAME, MAKE } rows, the first the default
 */
#define ITEST_MAIN(load, ...) \
int main(int argc, char *argv[]); \
int \
main(int argc, char *argv[]) \
{ \
	static const struct itest_group groups_[] = { __VA_ARGS__ }; \
	return itest_main(argc, argv, groups_, TU_NELEMS(groups_), (load)); \
}

#endif /* RPMEM_ITEST_H */
