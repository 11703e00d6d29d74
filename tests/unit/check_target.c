/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_target.c -- unit tests of the `[user@]host[:port]` parser
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "target.h"
#include "tu_check.h"

struct good_case {
	const char *str;
	const char *user;
	const char *node;
	const char *service;
};

/* PMDK's rpmem_addr examples first, then our own edge values */
static const struct good_case good_cases[] = {
	{"host", "", "host", ""},
	{"user@host", "user", "host", ""},
	{"user@host:1234", "user", "host", "1234"},
	{"127.0.0.1", "", "127.0.0.1", ""},
	{"user@127.0.0.1:1234", "user", "127.0.0.1", "1234"},
	{"::1", "", "::1", ""},
	{"user@::1", "user", "::1", ""},
	{"user@[::1]:1234", "user", "::1", "1234"},
	{"[::1]", "", "::1", ""},
	{"[::1]:22", "", "::1", "22"},
	{"fe80::1%eth0", "", "fe80::1%eth0", ""},
	{"[fe80::1%eth0]:2222", "", "fe80::1%eth0", "2222"},
	{"host:1", "", "host", "1"},
	{"host:65535", "", "host", "65535"},
	{"host:0022", "", "host", "22"},
	{"a@b", "a", "b", ""},
	{"[host]", "", "host", ""},
	{"u-ser.name_1@node-1.example.com:22", "u-ser.name_1",
		"node-1.example.com", "22"},
	{"host-", "", "host-", ""},
};

/* check_good -- parse `c->str` and compare all three fields */
static void
check_good(const struct good_case *c)
{
	struct target t;
	int ret = target_parse(c->str, &t);

	ck_assert_msg(ret == 0, "\"%s\" refused: %d", c->str, ret);
	ck_assert_str_eq(t.user, c->user);
	ck_assert_str_eq(t.node, c->node);
	ck_assert_str_eq(t.service, c->service);
}

START_TEST(test_valid_targets_split_into_user_node_service)
{
	check_good(&good_cases[_i]);
}
END_TEST

static const char *const bad_cases[] = {
	"",
	"user 1.2.3.4 22",
	"user@@host",
	"user@host@x",
	"a|b",
	"a;b",
	"a&b",
	"a$b",
	"a`b`",
	"a'b",
	"a\"b",
	"a\\b",
	"a>b",
	"a<b",
	"a(b)",
	"a*",
	"a?",
	"host\t",
	"host\n",
	"ho\x01st",
	"ho\x7fst",
	"h\xc3\xa9st",
	"-oProxyCommand=x",
	"u@-host",
	"-u@host",
	"[-oFoo]",
	"host:",
	"host:0",
	"host:00",
	"host:65536",
	"host:99999",
	"host:4294967297",
	"host:12a",
	"host:+1",
	"host:-1",
	"host: 22",
	"[::1",
	"[::1]x",
	"[::1]:",
	"[::1]:0",
	"[::1]:65536",
	"[::1]]",
	"[[::1]]",
	"[]",
	"[]:22",
	"@host",
	"user@",
	"user@:22",
	":22",
	":",
	"ho[st",
	"host]",
	"us:er@host",
	"us[er@host",
	"user@[::1]:12:34",
};

START_TEST(test_malformed_targets_are_refused)
{
	struct target t;

	memset(&t, 'x', sizeof(t));
	ck_assert_msg(target_parse(bad_cases[_i], &t) == -EINVAL,
			"\"%s\" accepted", bad_cases[_i]);
	/* a refused target must not leave a usable half-parsed result */
	ck_assert_str_eq(t.node, "");
	ck_assert_str_eq(t.user, "");
	ck_assert_str_eq(t.service, "");
}
END_TEST

/* fill -- build "<prefix><n times c><suffix>" in `buf` */
static void
fill(char *buf, const char *prefix, char c, size_t n, const char *suffix)
{
	size_t plen = strlen(prefix);

	memcpy(buf, prefix, plen);
	memset(buf + plen, c, n);
	strcpy(buf + plen + n, suffix);
}

/*
 * long fields: <prefix><n times c><suffix>; a user of up to 32 bytes, a
 * host of up to 255, a port of any number of leading zeros
 */
static const struct long_case {
	const char *prefix;
	char c;
	size_t n;
	const char *suffix;
	int ret;
	size_t user, node;	/* their lengths on success; 0: unchecked */
	const char *service;	/* on success; NULL: unchecked */
} Long_cases[] = {
	{ "", 'u', 32, "@host", 0, 32, 0, NULL },
	{ "", 'u', 33, "@host", -EINVAL, 0, 0, NULL },
	{ "user@", 'h', 255, ":22", 0, 0, 255, "22" },
	{ "user@", 'h', 256, ":22", -EINVAL, 0, 0, NULL },
	{ "[", 'a', 256, "]", -EINVAL, 0, 0, NULL },
	{ "", ':', 256, "", -EINVAL, 0, 0, NULL },
	{ "host:", '0', 300, "8", 0, 0, 0, "8" },
};

START_TEST(test_long_fields_are_bounded)
{
	const struct long_case *c = &Long_cases[_i];
	char buf[512];
	struct target t;

	fill(buf, c->prefix, c->c, c->n, c->suffix);
	ck_assert_int_eq(target_parse(buf, &t), c->ret);
	if (c->user)
		ck_assert_uint_eq(strlen(t.user), c->user);
	if (c->node)
		ck_assert_uint_eq(strlen(t.node), c->node);
	if (c->service)
		ck_assert_str_eq(t.service, c->service);
}
END_TEST

START_TEST(test_null_arguments_are_refused)
{
	struct target t;

	ck_assert_int_eq(target_parse(NULL, &t), -EINVAL);
	ck_assert_int_eq(target_parse("host", NULL), -EINVAL);
}
END_TEST

START_TEST(test_reused_target_struct_is_fully_overwritten)
{
	struct target t;

	ck_assert_int_eq(target_parse("user@host:1234", &t), 0);
	ck_assert_int_eq(target_parse("other", &t), 0);
	ck_assert_str_eq(t.user, "");
	ck_assert_str_eq(t.node, "other");
	ck_assert_str_eq(t.service, "");
}
END_TEST

/* target_suite -- all target parser tests */
static Suite *
target_suite(void)
{
	TCase *tc;
	Suite *s = tu_suite("target", "parse", NULL, NULL, &tc);

	TU_LOOP(tc, test_valid_targets_split_into_user_node_service,
		good_cases);
	TU_LOOP(tc, test_malformed_targets_are_refused, bad_cases);
	TU_LOOP(tc, test_long_fields_are_bounded, Long_cases);
	tcase_add_test(tc, test_null_arguments_are_refused);
	tcase_add_test(tc, test_reused_target_struct_is_fully_overwritten);
	return tu_suite_add(s, tc);
}

/* main -- run target_suite() (tu_check.h) */
TU_MAIN(target_suite)
