/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_log.c -- log_quote and log_escape: peer strings made safe
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "tu_check.h"

/* each byte class, as log_quote shows it */
START_TEST(test_quote_escapes_what_could_forge_or_hide)
{
	static const struct {
		const char *in;
		const char *out;
	} cases[] = {
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

/* log_suite -- the quoting and escaping tests above */
static Suite *
log_suite(void)
{
	TCase *tc;
	Suite *s = tu_suite("log", "quote", NULL, NULL, &tc);
	tcase_add_test(tc, test_quote_escapes_what_could_forge_or_hide);
	tcase_add_test(tc, test_quote_cuts_long_strings_visibly);
	tcase_add_test(tc, test_escape_keeps_quotes_and_bounds_the_output);
	return tu_suite_add(s, tc);
}

TU_MAIN(log_suite)
