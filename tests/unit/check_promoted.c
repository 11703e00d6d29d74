/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_promoted.c -- unit tests of the SET.promoted marker (promoted.c):
 * its text read back, what rpmemd must refuse to take for one, and the
 * crash-safe write
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "promoted.h"
#include "tu_check.h"

#define U1 "43f3a30d-2c7e-4814-82dc-dfd1a6e399e9"
#define U2 "3f1c21e4-e81a-488d-a25d-012d077c67b4"
#define HEAD "PMEMPROMOTED 1\n"

/* sample -- a marker with every field */
static struct promoted
sample(void)
{
	struct promoted p;
	memset(&p, 0, sizeof(p));
	p.time = 1795667870;
	snprintf(p.master, sizeof(p.master), "%s", U1);
	snprintf(p.poolset, sizeof(p.poolset), "%s", U2);
	snprintf(p.client, sizeof(p.client), "198.18.0.1");
	return p;
}

START_TEST(test_formatted_marker_parses_back_to_the_same_fields)
{
	struct promoted p = sample(), q;
	char buf[PROMOTED_MAX];
	int n = promoted_format(&p, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(promoted_parse(buf, (size_t)n, &q), 0);
	ck_assert(q.time == p.time);
	ck_assert_str_eq(q.master, U1);
	ck_assert_str_eq(q.poolset, U2);
	ck_assert_str_eq(q.client, "198.18.0.1");
}
END_TEST

struct text_case {
	const char *text;
	int ret;		/* of promoted_parse */
};

/* what a marker may and may not look like */
static const struct text_case text_cases[] = {
	{HEAD "time 1\nmaster " U1 "\n", 0},
	{HEAD "time 1\nmaster " U1 "\nfuture-key some value\n", 0},
	{HEAD "master " U1 "\ntime 0\n", 0},
	{"", -EINVAL},
	{"PMEMPROMOTED 2\ntime 1\nmaster " U1 "\n", -EINVAL},
	{HEAD "time 1\n", -EINVAL},			/* no master */
	{HEAD "master " U1 "\n", -EINVAL},		/* no time */
	{HEAD "time 1\nmaster " U1, -EINVAL},		/* torn last line */
	{HEAD "time -5\nmaster " U1 "\n", -EINVAL},
	{HEAD "time 12x\nmaster " U1 "\n", -EINVAL},
	{HEAD "time 99999999999999999999\nmaster " U1 "\n", -EINVAL},
	{HEAD "time 1\nmaster two words\n", -EINVAL},
	{HEAD "time 1\nmaster \n", -EINVAL},
	{HEAD "time 1\nmaster \x01\n", -EINVAL},
	{HEAD "time 1\nmaster " U1 "\nnoblank\n", -EINVAL},
	{HEAD "time 1\nmaster " U1 U1 "\n", -EINVAL},	/* too long */
};

START_TEST(test_marker_text_is_accepted_only_when_whole_and_valid)
{
	const struct text_case *c = &text_cases[_i];
	struct promoted p;
	ck_assert_msg(promoted_parse(c->text, strlen(c->text), &p) == c->ret,
		"case %d", _i);
}
END_TEST

START_TEST(test_format_refuses_a_buffer_too_small)
{
	struct promoted p = sample();
	char buf[32];
	ck_assert_int_eq(promoted_format(&p, buf, sizeof(buf)), -ENOSPC);
}
END_TEST

START_TEST(test_write_read_remove_leave_no_temporary_file)
{
	char dir[] = "/tmp/check_promoted.XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char set[64], tmp[96];
	snprintf(set, sizeof(set), "%s/a.set", dir);
	snprintf(tmp, sizeof(tmp), "%s" PROMOTED_SUFFIX ".tmp", set);

	struct promoted p = sample(), q;
	ck_assert_int_eq(promoted_read(set, &q), -ENOENT);
	ck_assert_int_eq(promoted_write(set, &p), 0);
	ck_assert_int_eq(access(tmp, F_OK), -1);
	ck_assert_int_eq(promoted_read(set, &q), 0);
	ck_assert_str_eq(q.master, U1);

	char what[384];
	promoted_describe(&q, what, sizeof(what));
	ck_assert_msg(strstr(what, "2026-11-26T") && strstr(what, U1) &&
		strstr(what, "198.18.0.1"), "%s", what);

	ck_assert_int_eq(promoted_remove(set), 0);
	ck_assert_int_eq(promoted_remove(set), -ENOENT);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

START_TEST(test_uuid_text_is_pmempools)
{
	/* PMDK keeps the first three fields little-endian */
	const uint8_t u[16] = { 0x0d, 0xa3, 0xf3, 0x43, 0x7e, 0x2c, 0x14,
		0x48, 0x82, 0xdc, 0xdf, 0xd1, 0xa6, 0xe3, 0x99, 0xe9 };
	char s[PROMOTED_UUID_STR];
	promoted_uuid_str(u, s);
	ck_assert_str_eq(s, U1);
}
END_TEST

/* promoted_suite -- every case above */
static Suite *
promoted_suite(void)
{
	TCase *tc;
	Suite *s = tu_suite("promoted", "core", NULL, NULL, &tc);
	tcase_add_loop_test(tc,
		test_marker_text_is_accepted_only_when_whole_and_valid, 0,
		(int)(TU_NELEMS(text_cases)));
	tcase_add_test(tc, test_formatted_marker_parses_back_to_the_same_fields);
	tcase_add_test(tc, test_format_refuses_a_buffer_too_small);
	tcase_add_test(tc, test_uuid_text_is_pmempools);
	tcase_add_test(tc, test_write_read_remove_leave_no_temporary_file);
	return tu_suite_add(s, tc);
}

TU_MAIN(promoted_suite)
