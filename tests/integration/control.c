/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * control.c -- control-path tests: librpmem against rpmemd through sshd
 *
 * Started by control.sh, which runs a private sshd on 127.0.0.1 and sets
 * RPMEM_SSH and RPMEM_CMD (read by librpmem once, at load) and:
 *
 *   RPMEM_TEST_TARGET        [user@]127.0.0.1:port of that sshd
 *   RPMEM_TEST_POOLSET_DIR   rpmemd's --poolset-dir (absolute)
 *   RPMEM_TEST_OUTSIDE_DIR   the poolset dir's parent; nothing may appear
 *   RPMEM_TEST_PART_DIR      where the tests' part files go
 *   RPMEM_TEST_SSH_CALLS     file with one line per ssh started (optional)
 *   RPMEM_TEST_EXPECT_MSG    badconfig, nodaemon (and optionally fakedaemon):
 *                            text rpmem_errormsg() must contain
 *   RPMEM_TEST_DEAD_TARGET   nodaemon: a loopback port nobody listens on
 *   RPMEM_TEST_EXPECT_ERRNO  fakedaemon: allowed errno names, "A,B"
 *
 * argv[1] names the group to run (default "main"): main, badconfig,
 * nodaemon, fakedaemon.  Each test uses its own pool set names and removes
 * its files, so tests are independent of each other and of their order.
 *
 * The cases live by what they cover: control_pool.c (lifecycle, remove,
 * errors, R12), control_args.c (arguments, S3, S8), control_confine.c
 * (S1), control_refused.c (badconfig R16, nodaemon, fakedaemon R8 R9);
 * their helpers in ctest.c.  This file reads the environment and runs.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctest.h"

struct ctest_env env;

/* the program, in the messages of a missing variable */
static const char PROG[] = "control";

/* suite_main -- the real daemon */
static Suite *
suite_main(void)
{
	Suite *s = suite_create("control-main");
	ctest_add_pool(s);
	ctest_add_arguments(s);
	ctest_add_confinement(s);
	return s;
}

/* suite_badconfig -- rpmemd with a broken config file */
static Suite *
suite_badconfig(void)
{
	return ctest_suite_refused("badconfig");
}

/* suite_nodaemon -- nothing answers at the far end */
static Suite *
suite_nodaemon(void)
{
	return ctest_suite_refused("nodaemon");
}

/* suite_fakedaemon -- a daemon that answers with malformed messages */
static Suite *
suite_fakedaemon(void)
{
	return ctest_suite_refused("fakedaemon");
}

/* errno_parse -- "EPROTO,ECONNRESET" into env.expect_errno */
static int
errno_parse(const char *list)
{
	char buf[256];
	size_t n = 0;
	if (strlen(list) >= sizeof(buf))
		return -1;
	strcpy(buf, list);
	for (char *save, *tok = strtok_r(buf, ", ", &save); tok;
			tok = strtok_r(NULL, ", ", &save)) {
		int e;
		for (e = 1; e < 4096; e++) {
			const char *name = strerrorname_np(e);
			if (name && strcmp(name, tok) == 0)
				break;
		}
		if (e == 4096 || n == MAX_ERRS) {
			fprintf(stderr, "control: bad errno name '%s'\n", tok);
			return -1;
		}
		env.expect_errno[n++] = e;
	}
	env.expect_errno[n] = 0;
	return n ? 0 : -1;
}

/* env_load -- read what control.sh set for `group` */
static int
env_load(const char *group)
{
	bool missing = false;
	tu_target_load(PROG, "RPMEM_TEST", &env.t, &missing);
	env.outside_dir = tu_need(PROG, "RPMEM_TEST_OUTSIDE_DIR", &missing);
	env.ssh_calls = getenv("RPMEM_TEST_SSH_CALLS");
	if (env.ssh_calls && env.ssh_calls[0] == '\0')
		env.ssh_calls = NULL;
	if (strcmp(group, "badconfig") == 0 || strcmp(group, "nodaemon") == 0)
		env.expect_msg = tu_need(PROG, "RPMEM_TEST_EXPECT_MSG",
			&missing);
	if (strcmp(group, "nodaemon") == 0)
		env.dead_target = tu_need(PROG, "RPMEM_TEST_DEAD_TARGET",
			&missing);
	if (strcmp(group, "fakedaemon") == 0) {
		const char *l = tu_need(PROG, "RPMEM_TEST_EXPECT_ERRNO",
			&missing);
		if (l && errno_parse(l))
			missing = true;
		/* optional there */
		env.expect_msg = getenv("RPMEM_TEST_EXPECT_MSG");
		if (env.expect_msg && env.expect_msg[0] == '\0')
			env.expect_msg = NULL;
	}
	return missing ? -1 : 0;
}

/* main -- run the group named by argv[1] (default "main") */
ITEST_MAIN(env_load,
	{ "main", suite_main },
	{ "badconfig", suite_badconfig },
	{ "nodaemon", suite_nodaemon },
	{ "fakedaemon", suite_fakedaemon })

