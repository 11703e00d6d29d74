/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * control_args.c -- arguments librpmem refuses before any session (group
 * main): bad create/open arguments and malformed targets are EINVAL
 * without ssh; scenarios S3, a target ssh would read as an option never
 * reaches ssh; S8, a lane-security setting or provider librpmem does not
 * know runs no ssh; NULL and overlong names for remove; close(NULL);
 * rpmem_check_version
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctest.h"

/* ----------------------------------------------------------- arguments */

START_TEST(bad_create_open_arguments_are_einval_without_ssh)
{
	struct tset s;
	struct rpmem_pool_attr attr;
	size_t pg = page_size();
	char *mem = tu_pool_map(POOL_SIZE);
	pool_set(&s, "bad-args", 1, POOL_SIZE, NULL);
	attr_make(&attr, 13);
	static char long_desc[4097];
	memset(long_desc, 'a', sizeof(long_desc) - 1);

	const struct {
		const char *what;
		const char *target;
		const char *desc;
		void *addr;
		size_t size;
		int nlanes;	/* -1: NULL pointer */
	} c[] = {
		{ "NULL target", NULL, s.desc, mem, POOL_SIZE, 4 },
		{ "NULL pool_set_name", env.t.target, NULL, mem, POOL_SIZE, 4 },
		{ "NULL pool_addr", env.t.target, s.desc, NULL, POOL_SIZE, 4 },
		{ "unaligned pool_addr", env.t.target, s.desc, mem + 8,
			POOL_SIZE - pg, 4 },
		{ "pool_size 0", env.t.target, s.desc, mem, 0, 4 },
		{ "unaligned pool_size", env.t.target, s.desc, mem,
			POOL_SIZE - 8, 4 },
		{ "pool_size half a page", env.t.target, s.desc, mem, pg / 2,
			4 },
		{ "NULL nlanes", env.t.target, s.desc, mem, POOL_SIZE, -1 },
		{ "*nlanes 0", env.t.target, s.desc, mem, POOL_SIZE, 0 },
		{ "a 4096-byte pool_set_name", env.t.target, long_desc, mem,
			POOL_SIZE, 4 },
		{ "a range wrapping the address space", env.t.target, s.desc,
			(void *)(UINTPTR_MAX - pg + 1), 2 * pg, 4 },
	};
	char what[128];
	unsigned before = ssh_runs();

	for (size_t i = 0; i < TU_NELEMS(c); i++) {
		unsigned n = (unsigned)c[i].nlanes;
		unsigned *np = c[i].nlanes < 0 ? NULL : &n;
		fmt(what, sizeof(what), "create with %s", c[i].what);
		refused(rpmem_create(c[i].target, c[i].desc, c[i].addr,
			c[i].size, np, &attr), EINVAL, what);
		n = (unsigned)c[i].nlanes;
		fmt(what, sizeof(what), "open with %s", c[i].what);
		refused(rpmem_open(c[i].target, c[i].desc, c[i].addr,
			c[i].size, np, &attr), EINVAL, what);
	}
	ck_assert_msg(ssh_runs() == before, "a bad argument started ssh");
	ck_assert_msg(parts_exist(&s) == 0, "a bad argument created a part");
	no_children("bad arguments");
	set_unlink(&s);
}
END_TEST

/*
 * S8: a lane-security setting this library does not know never runs ssh;
 * nor does a provider it does not know.  One it knows that cannot reach
 * the target (verbs: no RDMA device here) is found out while ssh starts.
 */
START_TEST(bad_settings_are_refused_without_a_session)
{
	static const struct {
		const char *var;
		const char *val;
		const char *msg;
		int err;		/* 0: EINVAL, before ssh */
	} c[] = {
		{ "RPMEM_PROVIDER", "carrier-pigeon", "unknown provider "
			"RPMEM_PROVIDER=carrier-pigeon", 0 },
		{ "RPMEM_PROVIDER", "verbs", "cannot find a fabric provider "
			"for 127.0.0.1", ENOMEDIUM },
		{ "RPMEM_LANE_SECURITY", "encrypted", "invalid "
			"RPMEM_LANE_SECURITY=encrypted (encrypt, authenticate "
			"or none)", 0 },
		{ "RPMEM_LANE_SECURITY", "NONE", "invalid "
			"RPMEM_LANE_SECURITY=NONE", 0 },
		{ "RPMEM_LANE_CIPHER", "aes", "invalid RPMEM_LANE_CIPHER=aes "
			"(aes-256-gcm or chacha20-poly1305)", 0 },
		{ "RPMEM_LANE_CIPHER", "none", "invalid "
			"RPMEM_LANE_CIPHER=none", 0 },
	};
	struct rpmem_pool_attr attr;
	void *mem = tu_pool_map(POOL_SIZE);
	attr_make(&attr, 16);
	char what[128];
	for (size_t i = 0; i < TU_NELEMS(c); i++) {
		unsigned before = ssh_runs();
		setenv(c[i].var, c[i].val, 1);
		unsigned nlanes = NLANES;
		fmt(what, sizeof(what), "create with %s=%s", c[i].var,
			c[i].val);
		refused(rpmem_create(env.t.target, "lanesec.set", mem,
			POOL_SIZE, &nlanes, &attr), c[i].err ? c[i].err : EINVAL,
			what);
		ck_assert_msg(strstr(rpmem_errormsg(), c[i].msg), "%s: \"%s\"",
			what, rpmem_errormsg());
		unsetenv(c[i].var);
		ck_assert_msg(c[i].err || ssh_runs() == before,
			"%s started ssh", what);
	}
	no_children("bad settings");
}
END_TEST

/* S3: a target that ssh would read as an option never reaches ssh */
START_TEST(option_like_targets_are_refused_without_ssh)
{
	char marker[PATH_MAX];
	char t[4][PATH_MAX + 64];
	char what[PATH_MAX + 128];
	struct rpmem_pool_attr attr;
	void *mem = tu_pool_map(POOL_SIZE);
	attr_make(&attr, 14);
	fmt(marker, sizeof(marker), "%s/proxy-marker", env.outside_dir);
	fmt(t[0], sizeof(t[0]), "-oProxyCommand=touch %s", marker);
	fmt(t[1], sizeof(t[1]), "user@-oProxyCommand=touch %s", marker);
	fmt(t[2], sizeof(t[2]), "user@-host");
	fmt(t[3], sizeof(t[3]), "-l");

	unsigned before = ssh_runs();
	for (size_t i = 0; i < TU_NELEMS(t); i++) {
		unsigned nlanes = NLANES;
		fmt(what, sizeof(what), "create on \"%s\"", t[i]);
		refused(rpmem_create(t[i], "s3.set", mem, POOL_SIZE, &nlanes,
			&attr), EINVAL, what);
		nlanes = NLANES;
		fmt(what, sizeof(what), "open on \"%s\"", t[i]);
		refused(rpmem_open(t[i], "s3.set", mem, POOL_SIZE, &nlanes,
			&attr), EINVAL, what);
		fmt(what, sizeof(what), "remove on \"%s\"", t[i]);
		failed(rpmem_remove(t[i], "s3.set", 0), EINVAL, what);
	}
	ck_assert_msg(ssh_runs() == before, "an option-like target ran ssh");
	ck_assert_msg(!exists(marker), "the ProxyCommand ran: %s exists",
		marker);
	no_children("option-like targets");
}
END_TEST

START_TEST(malformed_targets_are_einval_without_ssh)
{
	static const char *const t[] = { "", "user@", "@", "127.0.0.1:0",
		"127.0.0.1:65536", "127.0.0.1:22x", "127.0.0.1:-22", "[::1",
		"user@[::1", "a b", "host\n-oProxyCommand=x", "u@h@h" };
	char what[128];
	struct rpmem_pool_attr attr;
	void *mem = tu_pool_map(POOL_SIZE);
	attr_make(&attr, 15);

	unsigned before = ssh_runs();
	for (size_t i = 0; i < TU_NELEMS(t); i++) {
		unsigned nlanes = NLANES;
		fmt(what, sizeof(what), "create on target #%zu \"%s\"", i,
			t[i]);
		refused(rpmem_create(t[i], "bad-target.set", mem, POOL_SIZE,
			&nlanes, &attr), EINVAL, what);
		fmt(what, sizeof(what), "remove on target #%zu \"%s\"", i,
			t[i]);
		failed(rpmem_remove(t[i], "bad-target.set", 0), EINVAL, what);
	}
	ck_assert_msg(ssh_runs() == before, "a malformed target ran ssh");
	no_children("malformed targets");
}
END_TEST

/*
 * NULL arguments, and names longer than the protocol or the command
 * line given to ssh can carry
 */
START_TEST(remove_null_or_overlong_arguments_are_refused)
{
	unsigned before = ssh_runs();
	failed(rpmem_remove(NULL, "x.set", 0), EINVAL, "remove NULL target");
	failed(rpmem_remove(env.t.target, NULL, 0), EINVAL,
		"remove NULL pool_set");
	static char name[4097];
	memset(name, 'a', sizeof(name) - 1);
	failed(rpmem_remove(env.t.target, name, 0), EINVAL,
		"remove of a 4096-byte name");
	msg_has("pool set name longer than 4095 bytes", "a 4096-byte name");
	/* 4095 quotes, each four bytes quoted for the remote shell: more
	 * than the command line librpmem hands to ssh */
	memset(name, '\'', sizeof(name) - 2);
	name[sizeof(name) - 2] = '\0';
	failed(rpmem_remove(env.t.target, name, 0), ENAMETOOLONG,
		"remove of 4095 quotes");
	msg_has("starting ssh to 127.0.0.1", "4095 quotes");
	ck_assert_msg(ssh_runs() == before, "a refused argument ran ssh");
}
END_TEST

/* ours is stricter than PMDK's, which would dereference NULL */
START_TEST(close_null_is_einval)
{
	failed(rpmem_close(NULL), EINVAL, "close(NULL)");
}
END_TEST

START_TEST(check_version_accepts_1_3_and_refuses_newer)
{
	static const unsigned bad[][2] = { { 1, 4 }, { 2, 0 }, { 0, 0 },
		{ 0, 3 } };
	ck_assert_ptr_null(rpmem_check_version(1, 3));
	ck_assert_ptr_null(rpmem_check_version(1, 0));
	ck_assert_ptr_null(rpmem_check_version(RPMEM_MAJOR_VERSION,
		RPMEM_MINOR_VERSION));
	for (size_t i = 0; i < TU_NELEMS(bad); i++) {
		const char *m = rpmem_check_version(bad[i][0], bad[i][1]);
		ck_assert_msg(m != NULL, "version %u.%u accepted", bad[i][0],
			bad[i][1]);
		ck_assert_msg(strstr(m, "version mismatch") != NULL,
			"version %u.%u: \"%s\"", bad[i][0], bad[i][1], m);
		ck_assert_str_eq(rpmem_errormsg(), m);
	}
}
END_TEST


/* ctest_add_arguments -- the arguments cases */
void
ctest_add_arguments(Suite *s)
{
	TCase *tc = ctest_tcase(s, "arguments");
	tcase_add_test(tc, bad_create_open_arguments_are_einval_without_ssh);
	tcase_add_test(tc, option_like_targets_are_refused_without_ssh);
	tcase_add_test(tc, bad_settings_are_refused_without_a_session);
	tcase_add_test(tc, malformed_targets_are_einval_without_ssh);
	tcase_add_test(tc, remove_null_or_overlong_arguments_are_refused);
	tcase_add_test(tc, close_null_is_einval);
	tcase_add_test(tc, check_version_accepts_1_3_and_refuses_newer);
}
