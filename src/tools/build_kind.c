/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * build_kind.c -- whether this build can give figures that mean anything
 *
 * Counters, sanitizers and -O0 make a persist several times slower, so a
 * benchmark of such a build measures the instrumentation.  configure
 * names the kind from its final flags (scripts/build_kind.sh, which the
 * perf scripts use on the same flags); __OPTIMIZE__ and the sanitizers'
 * own macros catch flags given to make alone.  The words and the message
 * are build_kind.sh's, so that every refusal reads the same.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build_kind.h"

#ifndef RPMEM_BUILD_KIND
#error "configure defines RPMEM_BUILD_KIND (scripts/build_kind.sh)"
#endif

#define BUILD_KIND_ENV "RPMEM_BENCH_ANY_BUILD"

/* build_kind -- optimised, coverage, sanitizers or unoptimised */
const char *
build_kind(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	return "sanitizers";
#else
	if (strcmp(RPMEM_BUILD_KIND, "optimised"))
		return RPMEM_BUILD_KIND;
#ifndef __OPTIMIZE__
	return "unoptimised";
#else
	return "optimised";
#endif
#endif
}

/* why -- what a build of kind k is, as build_kind_why says it */
static const char *
why(const char *k)
{
	if (!strcmp(k, "coverage"))
		return "built with coverage counters (./scripts/test.sh "
			"builds so)";
	if (!strcmp(k, "sanitizers"))
		return "built with sanitizers (configure "
			"--enable-sanitizers, tests/sanitize/run.sh)";
	return "built without optimisation (-O0, -Og or no -O)";
}

/*
 * build_kind_check -- 0 when this build's figures mean something, or when
 * RPMEM_BENCH_ANY_BUILD=1 asks to measure anyway (tests that run the
 * benchmark's code in the coverage build), after a warning; otherwise -1
 * after the refusal, both on stderr prefixed "me: "
 */
int
build_kind_check(const char *me)
{
	const char *k = build_kind();
	if (!strcmp(k, "optimised"))
		return 0;
	const char *any = getenv(BUILD_KIND_ENV);
	bool measure = any && !strcmp(any, "1");
	fprintf(stderr, "%s: %sthis rpmem is %s: figures from it mean "
		"nothing; run ./scripts/setup.sh on a fresh checkout, or "
		"`make clean && ./configure && make`%s\n", me,
		measure ? "warning: " : "", why(k),
		measure ? " (measuring anyway: " BUILD_KIND_ENV "=1)" : "");
	return measure ? 0 : -1;
}
