/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_log.c -- log_quote and log_escape: peer strings made safe; the
 * UTC time that begins each line of a log file, and not a line on stderr
 */
#include <check.h>
#include <fcntl.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "tu_check.h"

/* each byte class, as log_quote shows it */
START_TEST(test_quote_escapes_what_could_forge_or_hide)
{
	static const struct tu_io cases[] = {
		{ "pool.set", "'pool.set'" },
		{ "", "''" },
		{ "x\nrpmemd: FORGED", "'x\\nrpmemd: FORGED'" },
		{ "a\rb\tc", "'a\\rb\\tc'" },
		{ "\033[2J", "'\\x1b[2J'" },
		{ "\x01\x1f\x7f", "'\\x01\\x1f\\x7f'" },
		{ "caf\xc3\xa9\x9b", "'caf\\xc3\\xa9\\x9b'" },
		{ "it's a\\b", "'it\\'s a\\\\b'" },
	};
	for (size_t i = 0; i < TU_NELEMS(cases); i++)
		ck_assert_str_eq(log_quote(cases[i].in).s, cases[i].out);
	ck_assert_str_eq(log_quote(NULL).s, "(null)");
}
END_TEST

/* a string longer than the quoted form can hold is cut, and says so */
START_TEST(test_quote_cuts_long_strings_visibly)
{
	static char in[4096];
	memset(in, '\n', sizeof(in) - 1);
	struct log_quoted lq = log_quote(in);
	const char *q = lq.s;
	size_t n = strlen(q);
	ck_assert_uint_lt(n, LOG_QUOTE_MAX);
	ck_assert_uint_gt(n, LOG_QUOTE_MAX - 8);
	ck_assert_str_eq(q + n - 4, "'...");
	/* never half an escape before the closing quote */
	ck_assert_str_eq(q + n - 6, "\\n'...");
}
END_TEST

/* log_escape: control and high bytes only, no quotes, bounded */
START_TEST(test_escape_keeps_quotes_and_bounds_the_output)
{
	char buf[16];
	ck_assert_uint_eq(log_escape(buf, sizeof(buf), "a'b\\\x1b"), 8);
	ck_assert_str_eq(buf, "a'b\\\\x1b");
	ck_assert_uint_eq(log_escape(buf, sizeof(buf), "\n\n\n\n\n\n\n\n"),
		14);
	ck_assert_str_eq(buf, "\\n\\n\\n\\n\\n\\n\\n");
}
END_TEST

/* now_ms -- CLOCK_REALTIME in milliseconds, as log_stamp reads it */
static long long
now_ms(void)
{
	struct timespec ts;
	ck_assert_int_eq(clock_gettime(CLOCK_REALTIME, &ts), 0);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * stamped_ms -- the time at the start of `line`, which must be log_stamp's
 * form followed by `rest` and nothing else; in milliseconds since the epoch
 */
static long long
stamped_ms(const char *line, const char *rest)
{
	static const char form[] = "^([0-9]{4})-([0-9]{2})-([0-9]{2})T"
		"([0-9]{2}):([0-9]{2}):([0-9]{2})\\.([0-9]{3})Z (.*)$";
	regex_t re;
	regmatch_t m[9];
	ck_assert_int_eq(regcomp(&re, form, REG_EXTENDED), 0);
	int r = regexec(&re, line, 9, m, 0);
	regfree(&re);
	ck_assert_msg(r == 0, "\"%s\" does not begin with an ISO 8601 UTC "
		"time to the millisecond and a space", line);
	ck_assert_str_eq(line + m[8].rm_so, rest);
	int f[7];
	for (int i = 0; i < 7; i++)
		f[i] = atoi(line + m[i + 1].rm_so);
	struct tm tm = { .tm_year = f[0] - 1900, .tm_mon = f[1] - 1,
		.tm_mday = f[2], .tm_hour = f[3], .tm_min = f[4],
		.tm_sec = f[5] };
	return (long long)timegm(&tm) * 1000 + f[6];
}

/*
 * each line of a log file begins with the time it was written, UTC to
 * the millisecond; the cause kept for a client has neither it nor the
 * prefix
 */
START_TEST(test_file_lines_begin_with_the_utc_time)
{
	char dir[] = "/tmp/check_log.XXXXXX", path[64], buf[512];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/log", dir);

	log_init("tst", LOG_SINK_NONE, LOG_LVL_INFO);
	ck_assert_int_eq(log_to_file(path), 0);
	log_cause_reset();
	long long before = now_ms();
	log_err("first %d", 1);
	log_info("second");
	log_debug("dropped");
	long long after = now_ms();
	log_close();

	ck_assert_int_gt(tu_slurp(path, buf, sizeof(buf)), 0);
	char *second = strchr(buf, '\n');
	ck_assert_ptr_nonnull(second);
	*second++ = '\0';
	char *end = strchr(second, '\n');
	ck_assert_msg(end != NULL && end[1] == '\0',
		"not two lines after the first: \"%s\"", second);
	*end = '\0';
	long long t1 = stamped_ms(buf, "tst: first 1");
	long long t2 = stamped_ms(second, "tst: second");
	ck_assert_int_le(before, t1);
	ck_assert_int_le(t1, t2);
	ck_assert_int_le(t2, after);

	log_cause(buf, sizeof(buf));
	ck_assert_str_eq(buf, "first 1");

	char stamp[LOG_STAMP_SIZE];
	ck_assert_uint_eq(log_stamp(stamp), strlen("2026-11-28T14:05:01.123Z "));
	ck_assert_uint_eq(strlen(stamp), strlen("2026-11-28T14:05:01.123Z "));
	unlink(path);
	rmdir(dir);
}
END_TEST

/* stderr is not stamped: a client or a journal shows it as it came */
START_TEST(test_stderr_lines_are_not_stamped)
{
	char dir[] = "/tmp/check_log.XXXXXX", path[64], buf[256];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/err", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	int saved = dup(STDERR_FILENO);
	ck_assert_int_ge(saved, 0);
	ck_assert_int_ge(dup2(fd, STDERR_FILENO), 0);

	log_init("tst", LOG_SINK_STDERR, LOG_LVL_ERR);
	log_err("bare");
	log_close();

	ck_assert_int_ge(dup2(saved, STDERR_FILENO), 0);
	close(saved);
	close(fd);
	ck_assert_int_gt(tu_slurp(path, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "tst: bare\n");
	unlink(path);
	rmdir(dir);
}
END_TEST

/* log_suite -- the quoting and escaping tests above, then the stamps */
static Suite *
log_suite(void)
{
	TCase *tc;
	Suite *s = tu_suite("log", "quote", NULL, NULL, &tc);
	tcase_add_test(tc, test_quote_escapes_what_could_forge_or_hide);
	tcase_add_test(tc, test_quote_cuts_long_strings_visibly);
	tcase_add_test(tc, test_escape_keeps_quotes_and_bounds_the_output);
	s = tu_suite_add(s, tc);
	tc = tcase_create("stamp");
	tcase_add_test(tc, test_file_lines_begin_with_the_utc_time);
	tcase_add_test(tc, test_stderr_lines_are_not_stamped);
	return tu_suite_add(s, tc);
}

TU_MAIN(log_suite)
