/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * control_refused.c -- sessions the far end refuses, one table of cases:
 *
 *   badconfig   scenario R16: rpmemd refuses a broken config file;
 *               create, open and remove fail with EINVAL, the message
 *               names file:line, and remove deletes nothing
 *   nodaemon    no rpmemd at the far end (ECONNRESET, the shell's
 *               message), or no sshd at all (ssh's "refused")
 *   fakedaemon  scenarios R8, R9: a daemon answering with malformed
 *               messages fails the call with an expected errno; no crash,
 *               hang or leaked child
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ctest.h"

enum op { OP_CREATE, OP_OPEN, OP_REMOVE };

/* one refused call and what it must leave behind */
struct refusal {
	const char *group;	/* control.sh's group */
	const char *what;	/* the case, in its messages */
	enum op op;
	const char *name;	/* the set's name */
	int err;		/* expected errno; 0: RPMEM_TEST_EXPECT_ERRNO */
	int flags;		/* of rpmem_remove */
};

static const struct refusal Cases[] = {
	{ "badconfig", "create with a bad rpmemd config", OP_CREATE,
		"badcfg-create", EINVAL, 0 },
	{ "badconfig", "open with a bad rpmemd config", OP_OPEN,
		"badcfg-open", EINVAL, 0 },
	{ "badconfig", "remove with a bad rpmemd config", OP_REMOVE,
		"badcfg-remove", EINVAL,
		RPMEM_REMOVE_FORCE | RPMEM_REMOVE_POOL_SET },
	{ "nodaemon", "create without rpmemd", OP_CREATE, "nodaemon-create",
		ECONNRESET, 0 },
	{ "nodaemon", "open without rpmemd", OP_OPEN, "nodaemon-open",
		ECONNRESET, 0 },
	{ "fakedaemon", "create against a fake daemon", OP_CREATE,
		"fake-create", 0, 0 },
	{ "fakedaemon", "open against a fake daemon", OP_OPEN, "fake-open",
		0, 0 },
};
#define NCASES (TU_NELEMS(Cases))

/*
 * refusal_check -- the call of case `r` is refused with its errno and
 * RPMEM_TEST_EXPECT_MSG in the message; a refused create makes no part,
 * a refused remove deletes nothing; no ssh is left behind
 */
static void
refusal_check(const struct refusal *r)
{
	struct tset s;
	struct rpmem_pool_attr attr;
	unsigned nlanes = NLANES;
	const int one[] = { r->err, 0 };
	const int *errs = r->err ? one : env.expect_errno;
	void *mem = tu_pool_map(POOL_SIZE);
	attr_make(&attr, 17);

	/* an open names a set that is not there: the far end never looks */
	if (r->op == OP_OPEN)
		memset(&s, 0, sizeof(s));
	else
		pool_set(&s, r->name, 1, POOL_SIZE, NULL);
	fmt(s.desc, sizeof(s.desc), "%s.set", r->name);

	switch (r->op) {
	case OP_CREATE:
		refused_in(rpmem_create(env.t.target, s.desc, mem, POOL_SIZE,
			&nlanes, &attr), errs, r->what);
		break;
	case OP_OPEN:
		refused_in(rpmem_open(env.t.target, s.desc, mem, POOL_SIZE,
			&nlanes, &attr), errs, r->what);
		break;
	case OP_REMOVE:
		victims_make(&s);
		failed_in(rpmem_remove(env.t.target, s.desc, r->flags), errs,
			r->what);
		break;
	}
	/* in remove mode the refusal is rpmemd's exit status, no text */
	if (env.expect_msg && r->op != OP_REMOVE)
		msg_has(env.expect_msg, r->what);
	if (r->op == OP_CREATE)
		ck_assert_msg(parts_exist(&s) == 0, "%s: a refused daemon "
			"created parts", r->what);
	if (r->op == OP_REMOVE)
		ck_assert_msg(parts_exist(&s) == 1 && exists(s.path),
			"%s: a refused daemon removed files", r->what);
	no_children(r->what);
	if (r->op != OP_OPEN)
		set_unlink(&s);
	munmap(mem, POOL_SIZE);
}

/* the cases of the group being run, in the order of the table */
static const struct refusal *Group[NCASES];

/* refused_call -- one case of the table (the loop's index) */
START_TEST(refused_call)
{
	refusal_check(Group[_i]);
}
END_TEST

/* missing_daemon_remove_fails_and_removes_nothing -- any errno will do */
START_TEST(missing_daemon_remove_fails_and_removes_nothing)
{
	struct tset s;
	pool_set(&s, "nodaemon-remove", 1, POOL_SIZE, NULL);
	victims_make(&s);

	errno = 0;
	int r = rpmem_remove(env.t.target, s.desc, RPMEM_REMOVE_POOL_SET);
	int e = errno;
	ck_assert_msg(r == -1 && e != 0, "remove without rpmemd: %d, %s", r,
		ename(e));
	ck_assert_msg(parts_exist(&s) == 1 && exists(s.path),
		"files removed without a daemon");
	no_children("refused remove");
	set_unlink(&s);
}
END_TEST

START_TEST(unreachable_sshd_is_econnreset_with_ssh_message)
{
	struct rpmem_pool_attr attr;
	unsigned nlanes = NLANES;
	void *mem = tu_pool_map(POOL_SIZE);
	attr_make(&attr, 19);

	refused(rpmem_create(env.dead_target, "dead.set", mem, POOL_SIZE,
		&nlanes, &attr), ECONNRESET,
		"create on a port without sshd");
	msg_has("refused", "create on a port without sshd");
	nlanes = NLANES;
	refused(rpmem_open(env.dead_target, "dead.set", mem, POOL_SIZE,
		&nlanes, &attr), ECONNRESET, "open on a port without sshd");
	msg_has("refused", "open on a port without sshd");
	failed(rpmem_remove(env.dead_target, "dead.set", 0), ECONNRESET,
		"remove on a port without sshd");
	no_children("unreachable sshd");
}
END_TEST

/* ctest_suite_refused -- the suite of group `group`, its table cases */
Suite *
ctest_suite_refused(const char *group)
{
	static char name[64];
	int n = 0;
	for (size_t i = 0; i < NCASES; i++)
		if (strcmp(Cases[i].group, group) == 0)
			Group[n++] = &Cases[i];
	snprintf(name, sizeof(name), "control-%s", group);
	Suite *s = suite_create(name);
	TCase *tc = ctest_tcase(s, group);
	tcase_add_loop_test(tc, refused_call, 0, n);
	if (strcmp(group, "nodaemon") == 0) {
		tcase_add_test(tc,
			missing_daemon_remove_fails_and_removes_nothing);
		tcase_add_test(tc,
			unreachable_sshd_is_econnreset_with_ssh_message);
	}
	return s;
}
