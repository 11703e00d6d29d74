/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * daemon_errors.c -- rpmemd's failures, spoken to directly (no ssh)
 *
 * What a client of rpmemd sees when something is wrong before or during
 * a session: options that end the start-up (help, version, a log file or
 * poolset-dir that cannot be had), CREATE and OPEN requests the daemon
 * refuses (no lanes, a provider it cannot serve, descriptors and pool
 * sets it will not use), a HASH outside the pool, a client that speaks
 * before it connects its lanes, one that stops reading answers, and a
 * session without SSH_CONNECTION.  Each must end in a specific status or exit
 * code and a log line naming the cause; never a crash or a hang.
 *
 * Environment: top_builddir (where rpmemd is); a scratch directory is
 * made under TMPDIR (dtest.h).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dtest.h"
#include "proto.h"
#include "tu_check.h"

#define NO_STATUS UINT32_MAX	/* rpmemd exits without a status word */

/* arg -- a copy of `f` with the scratch dir in place of its "%s" */
static const char *
arg(const char *f)
{
	const char *at = f ? strstr(f, "%s") : NULL;
	if (!at)
		return f;
	char *s;
	ck_assert_int_ge(asprintf(&s, "%.*s%s%s", (int)(at - f), f,
		Dtest_dir, at + 2), 0);
	return s;
}

/*
 * start-up: options after which rpmemd serves no session, each with the
 * status word it sends (or none), its exit code and what it says on
 * stderr (scenario R16)
 */
static const struct {
	const char *args[3];	/* %s: the scratch directory */
	uint32_t status;
	int code;
	const char *says;
} Startups[] = {
	{ { "--help" }, NO_STATUS, 0, "Usage: " },
	{ { "--version" }, NO_STATUS, 0, "rpmemd version " },
	{ { "--log-file=%s/no/such/dir/rpmemd.log" }, ENOENT, 1,
		"cannot open log file %s/no/such/dir/rpmemd.log" },
	{ { "--poolset-dir=%s/no-such-dir" }, ENOENT, 1,
		"rpmemd: poolset-dir %s/no-such-dir: No such file" },
	/* remove mode tells by its exit code alone */
	{ { "--poolset-dir=%s/no-such-dir", "--remove", "pool.set" },
		NO_STATUS, ENOENT, "poolset-dir %s/no-such-dir" },
};

START_TEST(startup_ends_with_status_code_and_reason)
{
	for (int i = 0; i < 3; i++)
		Dtest_args[i] = arg(Startups[_i].args[i]);
	struct daemon d;
	dtest_spawn(&d);
	uint32_t status = NO_STATUS;
	ssize_t n = read(d.out, &status, sizeof(status));
	ck_assert_int_eq(n, Startups[_i].status == NO_STATUS ? 0 : 4);
	ck_assert_uint_eq(status, Startups[_i].status);
	dtest_finish(&d, Startups[_i].code);
	const char *says = arg(Startups[_i].says);
	ck_assert_msg(dtest_said(says), "rpmemd did not say \"%s\"", says);
}
END_TEST

/* with use-syslog the log file stays unwritten; the session still runs */
START_TEST(syslog_takes_the_log_instead_of_the_file)
{
	Dtest_args[0] = "--use-syslog";
	struct daemon d;
	static struct proto_resp resp;
	dtest_start_open(&d, &resp);
	dtest_done(&d);
	struct stat st;
	ck_assert_msg(stat(Dtest_log, &st) != 0 || st.st_size == 0,
		"rpmemd wrote %s although use-syslog is on", Dtest_log);
}
END_TEST

/*
 * CREATE and OPEN refused: the status that says why, the log line that
 * names it, and a daemon that ends the session cleanly (R9, S1)
 */
static const struct {
	uint32_t type;
	const char *desc;	/* NULL: pool.set */
	const char *set;	/* written to desc first; %s: dir */
	uint32_t nlanes;
	uint32_t provider;
	uint32_t status;
	const char *log;
} Refusals[] = {
	{ PROTO_MSG_OPEN, NULL, NULL, 0, PROTO_PROV_TCP,
		PROTO_ERR_BADNLANES, "invalid number of lanes: 0" },
	/* no RDMA device here: the provider cannot be opened */
	{ PROTO_MSG_OPEN, NULL, NULL, 1, PROTO_PROV_VERBS,
		PROTO_ERR_PROVNOSUP, "verbs provider on 127.0.0.1: " },
	{ PROTO_MSG_OPEN, "bad\tname.set", NULL, 1, PROTO_PROV_TCP,
		PROTO_ERR_BADNAME, "contains control character 0x09" },
	{ PROTO_MSG_OPEN, "adir/", NULL, 1, PROTO_PROV_TCP,
		PROTO_ERR_BADNAME, "'adir/' names a directory" },
	{ PROTO_MSG_CREATE, "nodir.set",
		"PMEMPOOLSET\nOPTION NOHDRS\n4M %s/nodir/part0\n", 1,
		PROTO_PROV_TCP, PROTO_ERR_NOEXIST,
		"cannot create part '%s/nodir/part0'" },
	{ PROTO_MSG_OPEN, "devpart.set",
		"PMEMPOOLSET\nOPTION NOHDRS\n4M /dev/null\n", 1,
		PROTO_PROV_TCP, PROTO_ERR_POOL_CFG,
		"part '/dev/null' is not a regular file" },
	{ PROTO_MSG_OPEN, "dirpart.set",
		"PMEMPOOLSET\nOPTION NOHDRS\n4M %s/adir\n", 1,
		PROTO_PROV_TCP, PROTO_ERR_FATAL,
		"cannot open part '%s/adir': Is a directory" },
	{ PROTO_MSG_CREATE, "small.set",
		"PMEMPOOLSET\nOPTION NOHDRS\n1M %s/small0\n", 1,
		PROTO_PROV_TCP, PROTO_ERR_POOL_CFG,
		"is below the minimum" },
};

START_TEST(refused_create_or_open_names_the_cause)
{
	char path[sizeof(Dtest_dir) + PROTO_DESC_MAX + 2];
	snprintf(path, sizeof(path), "%s/adir", Dtest_dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	struct proto_req r = dtest_open_req(PROTO_MAJOR, PROTO_MINOR);
	r.type = Refusals[_i].type;
	r.common.nlanes = Refusals[_i].nlanes;
	r.common.provider = Refusals[_i].provider;
	if (Refusals[_i].desc)
		snprintf(r.desc, sizeof(r.desc), "%s", Refusals[_i].desc);
	if (Refusals[_i].set) {
		snprintf(path, sizeof(path), "%s/%s", Dtest_dir, r.desc);
		FILE *f = fopen(path, "w");
		ck_assert_ptr_nonnull(f);
		fputs(arg(Refusals[_i].set), f);
		ck_assert_int_eq(fclose(f), 0);
	}
	struct daemon d;
	dtest_start(&d);
	dtest_send_req(&d, &r);
	static struct proto_resp resp;
	ck_assert(dtest_recv_resp(&d, proto_resp_type(r.type), &resp));
	ck_assert_uint_eq(resp.status, Refusals[_i].status);
	dtest_finish(&d, 0);
	const char *log = arg(Refusals[_i].log);
	ck_assert_msg(dtest_log_has(log), "no \"%s\" in %s", log, Dtest_log);
}
END_TEST

/* a HASH outside the pool is refused; the session goes on */
START_TEST(hash_outside_the_pool_is_refused_and_the_session_goes_on)
{
	struct daemon d;
	static struct proto_resp resp;
	dtest_start_open(&d, &resp);
	struct proto_req h = { .type = PROTO_MSG_HASH,
		.hash_off = (4 << 20) - 4096, .hash_len = 8192,
		.hash_chunk = 4096 };
	const struct proto_resp *hr = dtest_answer(&d, &h);
	ck_assert_uint_eq(hr->status, PROTO_ERR_POOL_CFG);
	ck_assert_uint_eq(hr->nhashes, 0);
	dtest_done(&d);
	ck_assert(dtest_log_has("HASH range offset 4190208 length 8192 "
		"outside the 4194304-byte pool"));
}
END_TEST

/*
 * a client that speaks (CLOSE) before it connects its lanes: rpmemd stops
 * waiting for them and answers
 */
START_TEST(close_before_the_lanes_connect_is_answered)
{
	struct daemon d;
	static struct proto_resp resp;
	dtest_start_open(&d, &resp);
	dtest_done(&d);
	ck_assert(dtest_log_has("the client spoke with 0 of 1 lanes "
		"connected"));
}
END_TEST

/* a client that reads no answer: rpmemd logs the failed send and ends */
START_TEST(unread_answer_is_logged_and_ends_the_session)
{
	struct daemon d;
	dtest_start(&d);
	close(d.out);
	d.out = -1;
	struct proto_req r = dtest_open_req(PROTO_MAJOR, PROTO_MINOR);
	dtest_send_req(&d, &r);
	/* an answer that cannot be sent ends the session as a failure */
	dtest_finish(&d, 1);
	ck_assert(dtest_log_has("sending OPEN_RESP failed: "));
	/* nothing of the refused session is left open: the pool opens */
	dtest_start(&d);
	dtest_request(&d, &r, 0);
	dtest_done(&d);
}
END_TEST

/* without SSH_CONNECTION the lanes listen on any address, said so */
START_TEST(no_ssh_connection_listens_on_any_address)
{
	Dtest_no_ssh_connection = true;
	struct daemon d;
	static struct proto_resp resp;
	dtest_start_open(&d, &resp);
	ck_assert_uint_ne(resp.ibc.port, 0);
	dtest_done(&d);
	ck_assert(dtest_log_has("SSH_CONNECTION not set: listening on any "
		"address"));
}
END_TEST

/* daemon_errors_suite -- start-up failures, refused sessions and requests, lanes that never come */
static Suite *
daemon_errors_suite(void)
{
	TCase *tc;
	Suite *s = tu_suite("rpmemd-errors", "errors", dtest_setup,
		dtest_teardown, &tc);
	tcase_set_timeout(tc, 120);
	TU_LOOP(tc, startup_ends_with_status_code_and_reason, Startups);
	tcase_add_test(tc, syslog_takes_the_log_instead_of_the_file);
	TU_LOOP(tc, refused_create_or_open_names_the_cause, Refusals);
	tcase_add_test(tc,
		hash_outside_the_pool_is_refused_and_the_session_goes_on);
	tcase_add_test(tc, close_before_the_lanes_connect_is_answered);
	tcase_add_test(tc, unread_answer_is_logged_and_ends_the_session);
	tcase_add_test(tc, no_ssh_connection_listens_on_any_address);
	return tu_suite_add(s, tc);
}

/* main -- run daemon_errors_suite() (tu_check.h) */
TU_MAIN(daemon_errors_suite)
