/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tu_env.c -- what a test's driver script set in the environment, and
 * failed expectations counted by programs that go on after one
 */
#include <stdio.h>
#include <stdlib.h>

#include "tu.h"

int tu_failures;

/* tu_need -- a required variable, or NULL with *missing set and said */
const char *
tu_need(const char *prog, const char *name, bool *missing)
{
	const char *v = getenv(name);
	if (v == NULL || v[0] == '\0') {
		fprintf(stderr, "%s: %s is not set (run %s.sh)\n", prog, name,
			prog);
		*missing = true;
		return NULL;
	}
	return v;
}

/* tu_need_or_exit -- a required variable; exit 2 when it is not set */
const char *
tu_need_or_exit(const char *prog, const char *name)
{
	bool missing = false;
	const char *v = tu_need(prog, name, &missing);
	if (missing)
		exit(2);
	return v;
}
