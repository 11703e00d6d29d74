/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tu_env.c -- what a test's driver script set in the environment,
 * failed expectations counted by programs that go on after one, and the
 * fatal error of one that does not
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "tu.h"

int tu_failures;

/* tu_usage -- ok, else said how to call the program (tu.h) */
bool
tu_usage(bool ok, const char *usage)
{
	if (!ok)
		fprintf(stderr, "usage: %s\n", usage);
	return ok;
}

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

/* tu_target_load -- the target and directories of a C test of sshd */
void
tu_target_load(const char *prog, const char *prefix, struct tu_target *t,
	bool *missing)
{
	static char names[3][64];
	static const char *const suffix[] = { "TARGET", "POOLSET_DIR",
		"PART_DIR" };
	const char **field[] = { &t->target, &t->poolset_dir, &t->part_dir };
	for (int i = 0; i < 3; i++) {
		snprintf(names[i], sizeof(names[i]), "%s_%s", prefix,
			suffix[i]);
		*field[i] = tu_need(prog, names[i], missing);
	}
}

/* tu_die -- "prog: what: message" and exit 1 */
void
tu_die(const char *prog, const char *what, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s: %s: ", prog, what);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}
