/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_marker.c -- unit tests of the markers beside a pool set file
 * (marker.c), SET.promoted (F3) and SET.outdated (D5, D6): their text
 * read back, what rpmemd must refuse to take for one, the crash-safe
 * write
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "marker.h"
#include "tu_check.h"

#define U1 "43f3a30d-2c7e-4814-82dc-dfd1a6e399e9"
#define U2 "3f1c21e4-e81a-488d-a25d-012d077c67b4"
#define HEAD "PMEMPROMOTED 1\n"
#define OHEAD "PMEMOUTDATED 1\n"

/* sample -- a marker of `kind` with every field it has */
static struct marker
sample(enum marker_kind kind)
{
	struct marker m;
	memset(&m, 0, sizeof(m));
	m.kind = kind;
	m.time = 1795667870;
	snprintf(m.master, sizeof(m.master), "%s", U1);
	snprintf(m.poolset, sizeof(m.poolset), "%s", U2);
	if (kind == MARKER_PROMOTED)
		snprintf(m.client, sizeof(m.client), "198.18.0.1");
	else
		snprintf(m.host, sizeof(m.host), "primary-a");
	return m;
}

START_TEST(test_formatted_marker_parses_back_to_the_same_fields)
{
	enum marker_kind kind = (enum marker_kind)_i;
	struct marker m = sample(kind), q;
	char buf[MARKER_MAX];
	int n = marker_format(&m, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(marker_parse(kind, buf, (size_t)n, &q), 0);
	ck_assert(q.kind == kind);
	ck_assert(q.time == m.time);
	ck_assert_str_eq(q.master, U1);
	ck_assert_str_eq(q.poolset, U2);
	ck_assert_str_eq(q.client, m.client);
	ck_assert_str_eq(q.host, m.host);
	/* one kind is never taken for the other */
	ck_assert_int_eq(marker_parse(kind == MARKER_PROMOTED ?
		MARKER_OUTDATED : MARKER_PROMOTED, buf, (size_t)n, &q),
		-EINVAL);
}
END_TEST

START_TEST(test_promoted_marker_text_is_what_it_always_was)
{
	struct marker m = sample(MARKER_PROMOTED);
	char buf[MARKER_MAX];
	int n = marker_format(&m, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	ck_assert_str_eq(buf, HEAD "time 1795667870\nmaster " U1
		"\npoolset " U2 "\nclient 198.18.0.1\n");
}
END_TEST

START_TEST(test_pair_promote_marker_names_the_other_copy_last)
{
	struct marker m = sample(MARKER_PROMOTED), q;
	snprintf(m.pair, sizeof(m.pair), "%s", U1);
	char buf[MARKER_MAX];
	int n = marker_format(&m, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	ck_assert_str_eq(buf, HEAD "time 1795667870\nmaster " U1
		"\npoolset " U2 "\nclient 198.18.0.1\npair " U1 "\n");
	ck_assert_int_eq(marker_parse(MARKER_PROMOTED, buf, (size_t)n, &q), 0);
	ck_assert_str_eq(q.pair, U1);
}
END_TEST

struct text_case {
	enum marker_kind kind;
	const char *text;
	int ret;		/* of marker_parse */
};

/* what a marker may and may not look like */
#define P MARKER_PROMOTED
#define O MARKER_OUTDATED
static const struct text_case text_cases[] = {
	{P, HEAD "time 1\nmaster " U1 "\n", 0},
	{P, HEAD "time 1\nmaster " U1 "\nfuture-key some value\n", 0},
	{P, HEAD "master " U1 "\ntime 0\n", 0},
	{P, "", -EINVAL},
	{P, "PMEMPROMOTED 2\ntime 1\nmaster " U1 "\n", -EINVAL},
	{P, HEAD "time 1\n", -EINVAL},			/* no master */
	{P, HEAD "master " U1 "\n", -EINVAL},		/* no time */
	{P, HEAD "time 1\nmaster " U1, -EINVAL},	/* torn last line */
	{P, HEAD "time -5\nmaster " U1 "\n", -EINVAL},
	{P, HEAD "time 12x\nmaster " U1 "\n", -EINVAL},
	{P, HEAD "time 99999999999999999999\nmaster " U1 "\n", -EINVAL},
	{P, HEAD "time 1\nmaster two words\n", -EINVAL},
	{P, HEAD "time 1\nmaster \n", -EINVAL},
	{P, HEAD "time 1\nmaster \x01\n", -EINVAL},
	{P, HEAD "time 1\nmaster " U1 "\nnoblank\n", -EINVAL},
	{P, HEAD "time 1\nmaster " U1 "\npair two words\n", -EINVAL},
	{P, HEAD "time 1\nmaster " U1 "\npair " U1 U1 "\n", -EINVAL},
	{P, HEAD "time 1\nmaster " U1 U1 "\n", -EINVAL},	/* too long */
	{P, OHEAD "time 1\nmaster " U1 "\n", -EINVAL},	/* other kind */
	{O, OHEAD "time 1\nhost primary-a\n", 0},	/* no uuid known */
	{O, OHEAD "time 1\nhost h\nmaster " U1 "\npoolset " U2 "\n", 0},
	{O, OHEAD "host h\ntime 0\nfuture-key v\n", 0},
	{O, OHEAD "time 1\nmaster " U1 "\n", -EINVAL},	/* no host */
	{O, OHEAD "host h\n", -EINVAL},			/* no time */
	{O, OHEAD "time 1\nhost h", -EINVAL},		/* torn last line */
	{O, OHEAD "time 1\nhost two words\n", -EINVAL},
	{O, OHEAD "time 1\nhost \n", -EINVAL},
	{O, OHEAD "time 1\nhost " U1 U1 "\n", -EINVAL},	/* too long */
	{O, "PMEMOUTDATED 2\ntime 1\nhost h\n", -EINVAL},
	{O, HEAD "time 1\nhost h\nmaster " U1 "\n", -EINVAL},	/* other */
};
#undef P
#undef O

START_TEST(test_marker_text_is_accepted_only_when_whole_and_valid)
{
	const struct text_case *c = &text_cases[_i];
	struct marker m;
	ck_assert_msg(marker_parse(c->kind, c->text, strlen(c->text), &m) ==
		c->ret, "case %d", _i);
}
END_TEST

START_TEST(test_format_refuses_a_buffer_too_small)
{
	struct marker m = sample((enum marker_kind)_i);
	char buf[32];
	ck_assert_int_eq(marker_format(&m, buf, sizeof(buf)), -ENOSPC);
}
END_TEST

/* what each kind's description must name */
static const struct {
	enum marker_kind kind;
	const char *suffix;
	const char *words[3];
} describe_cases[] = {
	{MARKER_PROMOTED, ".promoted", {"promoted", U1, "198.18.0.1"}},
	{MARKER_OUTDATED, ".outdated", {"outdated since", U1, "primary-a"}},
};

START_TEST(test_write_read_remove_leave_no_temporary_file)
{
	enum marker_kind kind = describe_cases[_i].kind;
	char dir[] = "/tmp/check_marker.XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char set[64], tmp[128], file[96];
	snprintf(set, sizeof(set), "%s/a.set", dir);
	snprintf(file, sizeof(file), "%s%s", set, describe_cases[_i].suffix);
	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	ck_assert_str_eq(marker_suffix(kind), describe_cases[_i].suffix);

	struct marker m = sample(kind), q;
	ck_assert_int_eq(marker_read(kind, set, &q), -ENOENT);
	ck_assert_int_eq(marker_write(set, &m), 0);
	ck_assert_int_eq(access(tmp, F_OK), -1);
	ck_assert_int_eq(access(file, F_OK), 0);
	ck_assert_int_eq(marker_read(kind, set, &q), 0);
	ck_assert_str_eq(q.master, U1);

	char what[384];
	marker_describe(&q, what, sizeof(what));
	ck_assert_msg(strstr(what, "2026-11-26T"), "%s", what);
	for (int i = 0; i < 3; i++)
		ck_assert_msg(strstr(what, describe_cases[_i].words[i]),
			"%s", what);

	ck_assert_int_eq(marker_remove(kind, set), 0);
	ck_assert_int_eq(marker_remove(kind, set), -ENOENT);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

START_TEST(test_write_at_and_remove_at_stay_in_the_directory_given)
{
	char dir[] = "/tmp/check_marker.XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dfd, 0);
	struct marker m = sample(MARKER_OUTDATED), q;
	ck_assert_int_eq(marker_write_at(dfd, "b.set", &m), 0);
	char set[64];
	snprintf(set, sizeof(set), "%s/b.set", dir);
	ck_assert_int_eq(marker_read(MARKER_OUTDATED, set, &q), 0);
	ck_assert_str_eq(q.host, "primary-a");
	ck_assert_int_eq(marker_read(MARKER_PROMOTED, set, &q), -ENOENT);
	ck_assert_int_eq(marker_remove_at(dfd, "b.set", MARKER_OUTDATED), 0);
	ck_assert_int_eq(marker_remove_at(dfd, "b.set", MARKER_OUTDATED),
		-ENOENT);
	close(dfd);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

START_TEST(test_uuid_text_is_pmempools)
{
	/* PMDK keeps the first three fields little-endian */
	const uint8_t u[16] = { 0x0d, 0xa3, 0xf3, 0x43, 0x7e, 0x2c, 0x14,
		0x48, 0x82, 0xdc, 0xdf, 0xd1, 0xa6, 0xe3, 0x99, 0xe9 };
	char s[MARKER_UUID_STR];
	marker_uuid_str(u, s);
	ck_assert_str_eq(s, U1);
}
END_TEST

/* marker_suite -- every case above */
static Suite *
marker_suite(void)
{
	TCase *tc;
	Suite *s = tu_suite("marker", "core", NULL, NULL, &tc);
	TU_LOOP(tc, test_marker_text_is_accepted_only_when_whole_and_valid,
		text_cases);
	tcase_add_loop_test(tc,
		test_formatted_marker_parses_back_to_the_same_fields, 0,
		MARKER_KINDS);
	tcase_add_test(tc, test_promoted_marker_text_is_what_it_always_was);
	tcase_add_test(tc, test_pair_promote_marker_names_the_other_copy_last);
	tcase_add_loop_test(tc, test_format_refuses_a_buffer_too_small, 0,
		MARKER_KINDS);
	tcase_add_test(tc, test_uuid_text_is_pmempools);
	TU_LOOP(tc, test_write_read_remove_leave_no_temporary_file,
		describe_cases);
	tcase_add_test(tc,
		test_write_at_and_remove_at_stay_in_the_directory_given);
	return tu_suite_add(s, tc);
}

TU_MAIN(marker_suite)
