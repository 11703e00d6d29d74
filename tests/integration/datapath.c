/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * datapath.c -- data-path tests: persist, flush, drain, read through rpmemd
 *
 * Started by datapath.sh, which runs a private sshd on 127.0.0.1 and sets
 * RPMEM_SSH, RPMEM_CMD and RPMEM_TIMEOUT (read by librpmem once, at load)
 * and:
 *
 *   RPMEM_TEST_TARGET        [user@]127.0.0.1:port of that sshd
 *   RPMEM_TEST_POOLSET_DIR   rpmemd's --poolset-dir (absolute)
 *   RPMEM_TEST_PART_DIR      where the tests' part files go
 *   RPMEM_TEST_LOG_DIR       rpmemd's logs: one file per session, named
 *                            rpmemd.<pid>.<nanoseconds>.log
 *   RPMEM_TEST_MAX_LANES     rpmemd's max-lanes
 *   RPMEM_TEST_GATE          stray: a fifo; ssh's output after rpmemd's
 *                            start-up status is held until a line comes
 *   DATAPATH_SEED            seed of the random mixes (default: the time)
 *   DATAPATH_OPS             operations per thread in a mix (default 400)
 *   DATAPATH_TORN_ITERS      persists of the torn-word test (default 2000)
 *
 * argv[1] names the group: data, fault or stray.  The target is this
 * host, so the tests read the replica's part files directly; the pid of
 * the rpmemd serving a test comes from the name of its new log file.
 * Each test uses its own pool set names and removes its files.
 *
 * The cases live by what they cover: datapath_mix.c (mixes, torn words),
 * datapath_requests.c (R6, R10), datapath_faults.c (R1, R2, R3, R5),
 * datapath_stray.c (S2); their helpers in dpath.c and dpath_proc.c.
 * This file reads the environment and runs.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dpath.h"

struct dpath_env env;

/* the program, in the messages of a missing variable */
static const char PROG[] = "datapath";

/* ---------------------------------------------------------------- main */

/* a test case of a group: its name, timeout, the file's adder */
struct dcase {
	const char *name;
	double timeout;
	void (*add)(TCase *tc);
};

/* suite_of -- suite `name` of the test cases `c` */
static Suite *
suite_of(const char *name, const struct dcase *c, size_t n)
{
	Suite *s = suite_create(name);
	for (size_t i = 0; i < n; i++) {
		TCase *tc = tcase_create(c[i].name);
		tcase_set_timeout(tc, c[i].timeout);
		c[i].add(tc);
		suite_add_tcase(s, tc);
	}
	return s;
}

/* suite_data -- data movement without faults */
static Suite *
suite_data(void)
{
	static const struct dcase c[] = {
		{ "mix", 120, dpath_add_mix },
		{ "torn", 120, dpath_add_torn },
		{ "requests", 60, dpath_add_requests },
	};
	return suite_of("datapath-data", c, TU_NELEMS(c));
}

/* suite_fault -- rpmemd or the client dies or stops mid-stream */
static Suite *
suite_fault(void)
{
	static const struct dcase c[] = { { "faults", 60, dpath_add_faults } };
	return suite_of("datapath-fault", c, 1);
}

/* suite_stray -- strangers at the fabric port */
static Suite *
suite_stray(void)
{
	static const struct dcase c[] = { { "stray", 60, dpath_add_stray } };
	return suite_of("datapath-stray", c, 1);
}

/* env_num -- a decimal environment variable, or `def` */
static unsigned long long
env_num(const char *name, unsigned long long def, bool *bad)
{
	const char *v = getenv(name);
	if (v == NULL || v[0] == '\0')
		return def;
	char *end;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	if (errno || *end || v[0] == '-') {
		fprintf(stderr, "datapath: bad %s=%s\n", name, v);
		*bad = true;
	}
	return n;
}

/* env_load -- read what datapath.sh set for `group` */
static int
env_load(const char *group)
{
	bool missing = false;
	tu_target_load(PROG, "RPMEM_TEST", &env.t, &missing);
	env.log_dir = tu_need(PROG, "RPMEM_TEST_LOG_DIR", &missing);
	(void) tu_need(PROG, "RPMEM_TIMEOUT", &missing);
	if (strcmp(group, "stray") == 0)
		env.gate = tu_need(PROG, "RPMEM_TEST_GATE", &missing);
	env.seed = env_num("DATAPATH_SEED", (unsigned long long)time(NULL),
		&missing);
	env.ops = (unsigned)env_num("DATAPATH_OPS", 400, &missing);
	env.torn_iters = (unsigned)env_num("DATAPATH_TORN_ITERS", 2000,
		&missing);
	env.max_lanes = (unsigned)env_num("RPMEM_TEST_MAX_LANES", 64,
		&missing);
	env.timeout_ms = (int)env_num("RPMEM_TIMEOUT", 60, &missing) * 1000;
	if (missing)
		return -1;
	printf("datapath %s: DATAPATH_SEED=%llu DATAPATH_OPS=%u "
		"RPMEM_TIMEOUT=%d\n", group, (unsigned long long)env.seed,
		env.ops, env.timeout_ms / 1000);
	fflush(stdout);
	return 0;
}

/* main -- run the group named by argv[1] (default "data") */
ITEST_MAIN(env_load,
	{ "data", suite_data },
	{ "fault", suite_fault },
	{ "stray", suite_stray })

