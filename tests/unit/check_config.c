/* SPDX-License-Identifier: BSD-3-Clause */
/* check_config.c -- unit tests of rpmemd's defaults, files and options */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "conffile.h"
#include "config.h"
#include "tu.h"
#include "tu_check.h"

static struct config Cfg;
static char Err[CONFIG_ERR_MAX];
static char Dir[64];		/* per-test scratch directory */
static char Home[96];		/* $HOME, inside Dir */
static char Sys[PATH_MAX];	/* the system file, inside Dir */
static char User[PATH_MAX];	/* $HOME/.rpmemd.conf */

/* load_args -- run config_load on a NULL-terminated argv */
static int
load_args(char *argv[])
{
	int argc = 0;
	while (argv[argc])
		argc++;
	config_free(&Cfg);
	return config_load(&Cfg, argc, argv, Err, sizeof(Err));
}

/* the program name is prepended; LOAD(NULL) passes no arguments */
#define LOAD(...) load_args((char *[]){"rpmemd", __VA_ARGS__, NULL})

/* path_in -- `name` under the scratch directory */
static void
path_in(char *buf, const char *name)
{
	snprintf(buf, PATH_MAX, "%s/%s", Dir, name);
}

/* write_raw -- create `path` with `len` bytes of `data` and `mode` */
static void
write_raw(const char *path, const char *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
	ck_assert_int_eq(fchmod(fd, mode), 0);
	ck_assert_int_eq(close(fd), 0);
}

/* write_conf -- create a 0600 file `name` in the scratch dir; its path */
static char *
write_conf(char *path, const char *name, const char *text)
{
	path_in(path, name);
	write_raw(path, text, strlen(text), 0600);
	return path;
}

/* expect_err -- the error text must be exactly the formatted string */
static void __attribute__((format(printf, 1, 2)))
expect_err(const char *fmt, ...)
{
	char want[CONFIG_ERR_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(want, sizeof(want), fmt, ap);
	va_end(ap);
	ck_assert_str_eq(Err, want);
}

/* setup -- fresh HOME and system-file location for every test */
static void
setup(void)
{
	snprintf(Dir, sizeof(Dir), "/tmp/check_config.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(Dir));
	/* not path_in: Home is smaller than PATH_MAX (_FORTIFY_SOURCE) */
	snprintf(Home, sizeof(Home), "%s/home", Dir);
	ck_assert_int_eq(mkdir(Home, 0700), 0);
	path_in(Sys, "system.conf");
	snprintf(User, sizeof(User), "%s/.rpmemd.conf", Home);
	ck_assert_int_eq(setenv("HOME", Home, 1), 0);
	ck_assert_int_eq(setenv("RPMEMD_SYSTEM_CONFIG", Sys, 1), 0);
	memset(&Cfg, 0, sizeof(Cfg));
	Err[0] = '\0';
}

/* teardown -- free the config and delete the scratch directory */
static void
teardown(void)
{
	config_free(&Cfg);
	(void) tu_rmtree(Dir);
}

START_TEST(test_defaults_apply_without_files_or_options)
{
	ck_assert_int_eq(LOAD(NULL), 0);
	ck_assert_str_eq(Err, "");
	ck_assert_ptr_null(Cfg.log_file);
	ck_assert_str_eq(Cfg.poolset_dir, Home);
	ck_assert(!Cfg.persist_apm);
	ck_assert(Cfg.persist_general);
	ck_assert(Cfg.use_syslog);
	ck_assert_int_eq(Cfg.log_level, LOG_LVL_ERR);
	ck_assert_uint_eq(Cfg.nthreads, 0);
	ck_assert_uint_eq(Cfg.max_lanes, 64);
	/* unset: each session takes its provider's default */
	ck_assert_int_eq(Cfg.lane_security, CONFIG_LANE_SECURITY_DEFAULT);
	/* no --protocol: the client is PMDK's, refused by default */
	ck_assert(!Cfg.protocol && !Cfg.allow_pmdk_clients);
	ck_assert_ptr_null(Cfg.remove);
	ck_assert_ptr_null(Cfg.after_resync);
	ck_assert(!Cfg.force && !Cfg.pool_set && !Cfg.help && !Cfg.version);
}
END_TEST

START_TEST(test_long_options_accept_equals_form)
{
	char c[PATH_MAX], opt[PATH_MAX + 16];
	write_conf(c, "c.conf", "persist-apm = yes\n");
	snprintf(opt, sizeof(opt), "--config=%s", c);
	ck_assert_int_eq(LOAD(opt, "--log-file=/tmp/x.log",
		"--poolset-dir=/pools", "--log-level=debug", "--nthreads=8",
		"--max-lanes=16", "--remove=a.set",
		"--lane-security=authenticate", "--protocol=0.3",
		"--allow-pmdk-clients"), 0);
	ck_assert(Cfg.persist_apm);
	ck_assert_str_eq(Cfg.log_file, "/tmp/x.log");
	ck_assert(!Cfg.use_syslog);
	ck_assert_str_eq(Cfg.poolset_dir, "/pools");
	ck_assert_int_eq(Cfg.log_level, LOG_LVL_DEBUG);
	ck_assert_uint_eq(Cfg.nthreads, 8);
	ck_assert_uint_eq(Cfg.max_lanes, 16);
	ck_assert_int_eq(Cfg.lane_security, LANESEC_AUTHENTICATE);
	ck_assert(Cfg.protocol && Cfg.proto_major == 0 &&
		Cfg.proto_minor == 3);
	ck_assert(Cfg.allow_pmdk_clients);
	ck_assert_str_eq(Cfg.remove, "a.set");
}
END_TEST

START_TEST(test_long_options_accept_separate_argument)
{
	char c[PATH_MAX];
	write_conf(c, "c.conf", "persist-apm = yes\n");
	ck_assert_int_eq(LOAD("--config", c, "--log-file", "/tmp/y.log",
		"--poolset-dir", "/p", "--log-level", "notice",
		"--nthreads", "1024", "--max-lanes", "65536",
		"--remove", "b.set", "--force", "--pool-set",
		"--lane-security", "none", "--after-resync", "true"), 0);
	ck_assert(Cfg.persist_apm);
	ck_assert_str_eq(Cfg.log_file, "/tmp/y.log");
	ck_assert_str_eq(Cfg.poolset_dir, "/p");
	ck_assert_int_eq(Cfg.log_level, LOG_LVL_NOTICE);
	ck_assert_uint_eq(Cfg.nthreads, 1024);
	ck_assert_uint_eq(Cfg.max_lanes, 65536);
	ck_assert_int_eq(Cfg.lane_security, LANESEC_NONE);
	ck_assert_str_eq(Cfg.remove, "b.set");
	ck_assert(Cfg.force && Cfg.pool_set);
	ck_assert_str_eq(Cfg.after_resync, "true");
}
END_TEST

START_TEST(test_short_options_set_their_fields)
{
	char c[PATH_MAX];
	write_conf(c, "c.conf", "log-level = warn\n");
	ck_assert_int_eq(LOAD("-c", c, "-r", "d.set", "-f", "-s", "-t",
		"0"), 0);
	ck_assert_int_eq(Cfg.log_level, LOG_LVL_WARN);
	ck_assert_str_eq(Cfg.remove, "d.set");
	ck_assert(Cfg.force && Cfg.pool_set);
	ck_assert_uint_eq(Cfg.nthreads, 0);
	ck_assert_int_eq(LOAD("-fst7"), 0);
	ck_assert(Cfg.force && Cfg.pool_set);
	ck_assert_uint_eq(Cfg.nthreads, 7);
	ck_assert_int_eq(LOAD("-h"), 0);
	ck_assert(Cfg.help && !Cfg.version);
	ck_assert_int_eq(LOAD("--version"), 0);
	ck_assert(Cfg.version && !Cfg.help);
	ck_assert_int_eq(LOAD("-V", "--help"), 0);
	ck_assert(Cfg.version && Cfg.help);
}
END_TEST

START_TEST(test_flag_options_turn_features_on)
{
	write_conf(User, "home/.rpmemd.conf", "persist-general = no\n");
	ck_assert_int_eq(LOAD("--persist-apm", "--persist-general",
		"--log-file", "/tmp/z.log", "--use-syslog"), 0);
	ck_assert(Cfg.persist_apm);
	ck_assert(Cfg.persist_general);
	ck_assert(Cfg.use_syslog);
	ck_assert_int_eq(LOAD(NULL), 0);
	ck_assert(!Cfg.persist_general);
}
END_TEST

START_TEST(test_help_is_not_blocked_by_a_bad_config_file)
{
	write_conf(Sys, "system.conf", "garbage\n");
	ck_assert_int_eq(LOAD("--help"), 0);
	ck_assert(Cfg.help);
	ck_assert_int_eq(LOAD("-V", "-c", "/nonexistent/rpmemd.conf"), 0);
	ck_assert(Cfg.version);
	ck_assert_int_eq(LOAD(NULL), -EINVAL);
}
END_TEST

START_TEST(test_config_file_sets_every_key)
{
	char c[PATH_MAX];
	write_conf(c, "all.conf",
		"# all keys\n"
		"\n"
		"log-file = /var/tmp/r.log\n"
		"  poolset-dir\t=\t/Pools/A=b   # trailing comment\n"
		"persist-apm = yes\n"
		"persist-general = no\n"
		"use-syslog = no\r\n"
		"log-level = info\n"
		"nthreads = 12\n"
		"max-lanes = 1\n"
		"lane-security = encrypt\n"
		"allow-pmdk-clients = yes\n"
		"after-resync = /usr/lib/ocf/lib/rpmem/crm-unfence-peer "
		"--resource pool-clone\n"
		"   # indented comment\n"
		"log-level = debug");
	ck_assert_int_eq(LOAD("-c", c), 0);
	ck_assert_str_eq(Cfg.log_file, "/var/tmp/r.log");
	ck_assert_str_eq(Cfg.poolset_dir, "/Pools/A=b");
	ck_assert(Cfg.persist_apm);
	ck_assert(!Cfg.persist_general);
	ck_assert(!Cfg.use_syslog);
	ck_assert_int_eq(Cfg.log_level, LOG_LVL_DEBUG);
	ck_assert_uint_eq(Cfg.nthreads, 12);
	ck_assert_uint_eq(Cfg.max_lanes, 1);
	ck_assert_int_eq(Cfg.lane_security, LANESEC_ENCRYPT);
	ck_assert(Cfg.allow_pmdk_clients);
	ck_assert_str_eq(Cfg.after_resync, "/usr/lib/ocf/lib/rpmem/"
		"crm-unfence-peer --resource pool-clone");
}
END_TEST

START_TEST(test_after_resync_cannot_hold_separators)
{
	char c[PATH_MAX];
	write_conf(c, "c.conf", "after-resync = logger a; echo b\n");
	ck_assert_int_eq(LOAD("-c", c), -EINVAL);
	ck_assert_ptr_nonnull(strstr(Err, ":1: invalid value 'logger a; "
		"echo b' for key 'after-resync' (expected a command)"));
	write_conf(c, "c.conf", "after-resync = logger a # b\n");
	ck_assert_int_eq(LOAD("-c", c), 0);
	ck_assert_str_eq(Cfg.after_resync, "logger a");
}
END_TEST

START_TEST(test_command_line_overrides_file)
{
	char c[PATH_MAX];
	write_conf(c, "c.conf", "log-level = debug\npoolset-dir = /file\n"
		"nthreads = 5\n");
	ck_assert_int_eq(LOAD("-c", c, "--log-level", "warn", "-t", "2"), 0);
	ck_assert_int_eq(Cfg.log_level, LOG_LVL_WARN);
	ck_assert_uint_eq(Cfg.nthreads, 2);
	ck_assert_str_eq(Cfg.poolset_dir, "/file");
}
END_TEST

START_TEST(test_log_file_option_turns_syslog_off_unless_a_file_says_yes)
{
	char c[PATH_MAX];
	ck_assert_int_eq(LOAD("--log-file", "/tmp/a.log"), 0);
	ck_assert(!Cfg.use_syslog);
	write_conf(c, "c.conf", "use-syslog = yes\nlog-file = /tmp/b.log\n");
	ck_assert_int_eq(LOAD("-c", c, "--log-file", "/tmp/a.log"), 0);
	ck_assert(Cfg.use_syslog);
	ck_assert_str_eq(Cfg.log_file, "/tmp/a.log");
}
END_TEST

START_TEST(test_user_file_overrides_system_file)
{
	write_conf(Sys, "system.conf", "log-level = debug\nnthreads = 3\n");
	write_conf(User, "home/.rpmemd.conf", "log-level = notice\n");
	ck_assert_int_eq(LOAD(NULL), 0);
	ck_assert_int_eq(Cfg.log_level, LOG_LVL_NOTICE);
	ck_assert_uint_eq(Cfg.nthreads, 3);
}
END_TEST

START_TEST(test_config_option_skips_system_and_user_files)
{
	char c[PATH_MAX];
	write_conf(Sys, "system.conf", "nthreads = 3\n");
	write_conf(User, "home/.rpmemd.conf", "max-lanes = 9\n");
	write_conf(c, "only.conf", "log-level = info\n");
	ck_assert_int_eq(LOAD("-c", c), 0);
	ck_assert_int_eq(Cfg.log_level, LOG_LVL_INFO);
	ck_assert_uint_eq(Cfg.nthreads, 0);
	ck_assert_uint_eq(Cfg.max_lanes, 64);
}
END_TEST

START_TEST(test_home_is_substituted_in_poolset_dir)
{
	char want[PATH_MAX];
	ck_assert_int_eq(LOAD("--poolset-dir", "$HOME/pools"), 0);
	snprintf(want, sizeof(want), "%s/pools", Home);
	ck_assert_str_eq(Cfg.poolset_dir, want);
	ck_assert_int_eq(LOAD("--poolset-dir", "/a/$HOME/$HOME"), 0);
	snprintf(want, sizeof(want), "/a/%s/%s", Home, Home);
	ck_assert_str_eq(Cfg.poolset_dir, want);
	write_conf(User, "home/.rpmemd.conf", "poolset-dir = $HOME/x\n");
	ck_assert_int_eq(LOAD(NULL), 0);
	snprintf(want, sizeof(want), "%s/x", Home);
	ck_assert_str_eq(Cfg.poolset_dir, want);
}
END_TEST

START_TEST(test_home_followed_by_name_character_is_left_alone)
{
	ck_assert_int_eq(LOAD("--poolset-dir", "/a/$HOMEX"), 0);
	ck_assert_str_eq(Cfg.poolset_dir, "/a/$HOMEX");
	ck_assert_int_eq(LOAD("--poolset-dir", "/a/$HOME_1/$HOME9"), 0);
	ck_assert_str_eq(Cfg.poolset_dir, "/a/$HOME_1/$HOME9");
	ck_assert_int_eq(LOAD("--poolset-dir", "$HOMEX"), -EINVAL);
	expect_err("poolset-dir must be an absolute path: $HOMEX");
}
END_TEST

START_TEST(test_home_falls_back_to_passwd_entry)
{
	char c[PATH_MAX];
	struct passwd *pw = getpwuid(getuid());
	ck_assert_ptr_nonnull(pw);
	ck_assert_int_eq(unsetenv("HOME"), 0);
	write_conf(c, "c.conf", "# keeps the real user file out\n");
	ck_assert_int_eq(LOAD("-c", c), 0);
	ck_assert_str_eq(Cfg.poolset_dir, pw->pw_dir);
}
END_TEST

START_TEST(test_relative_poolset_dir_is_refused)
{
	char c[PATH_MAX];
	ck_assert_int_eq(LOAD("--poolset-dir", "pools"), -EINVAL);
	expect_err("poolset-dir must be an absolute path: pools");
	ck_assert_ptr_null(Cfg.poolset_dir);
	write_conf(c, "c.conf", "poolset-dir = ./p\n");
	ck_assert_int_eq(LOAD("-c", c), -EINVAL);
	expect_err("poolset-dir must be an absolute path: ./p");
}
END_TEST

/* R16: one malformed file and the exact complaint it must produce */
static const struct {
	const char *text;
	const char *msg;	/* after "<path>:" */
} Bad_files[] = {
	{"log-level = info\n\nthis is garbage\n", "3: invalid line"},
	{"log-level =\n", "1: invalid line"},
	{"# c\n= debug\n", "2: invalid line"},
	{"log-level = info\ncolour = blue\n", "2: unknown key 'colour'"},
	{"Log-Level = info\n", "1: unknown key 'Log-Level'"},
	{"persist-apm = true\n", "1: invalid value 'true' for key "
		"'persist-apm' (expected yes or no)"},
	{"use-syslog = YES\n", "1: invalid value 'YES' for key "
		"'use-syslog' (expected yes or no)"},
	{"log-level = loud\n", "1: invalid value 'loud' for key "
		"'log-level' (expected err, warn, notice, info or debug)"},
	{"nthreads = 1025\n", "1: invalid value '1025' for key "
		"'nthreads' (expected 0..1024)"},
	{"max-lanes = 0\n", "1: invalid value '0' for key "
		"'max-lanes' (expected 1..65536)"},
	{"lane-security = yes\n", "1: invalid value 'yes' for key "
		"'lane-security' (expected encrypt, authenticate or none)"},
	{"lane-security = Encrypt\n", "1: invalid value 'Encrypt' for key "
		"'lane-security' (expected encrypt, authenticate or none)"},
	{"allow-pmdk-clients = 1\n", "1: invalid value '1' for key "
		"'allow-pmdk-clients' (expected yes or no)"},
	{"protocol = 0.3\n", "1: unknown key 'protocol'"},
	{"\n[global]\nlog-level = info\n", "2: sections are not supported"},
	{"log-file = /tmp/a;b\n", "1: invalid value '/tmp/a;b' for key "
		"'log-file' (expected a path)"},
	{"log-file = \"/tmp/a\"\n", "1: invalid value '\"/tmp/a\"' for key "
		"'log-file' (expected a path)"},
	{"# a comment \\\nlog-level = info\n",
		"1: line continuation with '\\' not supported"},
};

START_TEST(test_malformed_file_is_refused_naming_file_and_line)
{
	char c[PATH_MAX];
	write_conf(c, "bad.conf", Bad_files[_i].text);
	ck_assert_int_eq(LOAD("-c", c), -EINVAL);
	expect_err("%s:%s", c, Bad_files[_i].msg);
	ck_assert_ptr_null(Cfg.poolset_dir);
}
END_TEST

/* R16 */
START_TEST(test_nul_byte_is_refused_naming_its_line)
{
	static const char text[] = "log-level = info\nlog-level = de\0bug\n";
	char c[PATH_MAX];
	path_in(c, "nul.conf");
	write_raw(c, text, sizeof(text) - 1, 0600);
	ck_assert_int_eq(LOAD("-c", c), -EINVAL);
	expect_err("%s:2: NUL byte", c);
}
END_TEST

START_TEST(test_overlong_line_is_refused)
{
	char c[PATH_MAX], text[1100];
	memset(text, '#', sizeof(text) - 2);
	text[sizeof(text) - 2] = '\n';
	text[sizeof(text) - 1] = '\0';
	write_conf(c, "long.conf", text);
	ck_assert_int_eq(LOAD("-c", c), -EINVAL);
	expect_err("%s:1: line longer than 1022 bytes", c);
}
END_TEST

START_TEST(test_oversized_file_is_refused_before_reading)
{
	char c[PATH_MAX];
	static char text[CONFFILE_MAX + 64];
	/* comment lines, each valid, one byte too many in all */
	for (size_t i = 0; i < CONFFILE_MAX + 1; i++)
		text[i] = i % 64 == 63 ? '\n' : '#';
	text[CONFFILE_MAX + 1] = '\0';
	write_conf(c, "big.conf", text);
	ck_assert_int_eq(LOAD("-c", c), -EINVAL);
	expect_err("%s: larger than %d bytes", c, CONFFILE_MAX);
	text[CONFFILE_MAX] = '\0';
	write_conf(c, "big.conf", text);
	ck_assert_int_eq(LOAD("-c", c), 0);
}
END_TEST

START_TEST(test_errors_in_system_and_user_files_name_that_file)
{
	write_conf(Sys, "system.conf", "nthreads = many\n");
	ck_assert_int_eq(LOAD(NULL), -EINVAL);
	expect_err("%s:1: invalid value 'many' for key 'nthreads' "
		"(expected 0..1024)", Sys);
	write_conf(Sys, "system.conf", "nthreads = 1\n");
	write_conf(User, "home/.rpmemd.conf", "\n\nx\n");
	ck_assert_int_eq(LOAD(NULL), -EINVAL);
	expect_err("%s:3: invalid line", User);
}
END_TEST

/* S4 */
START_TEST(test_file_writable_by_group_or_others_is_refused)
{
	char c[PATH_MAX];
	write_conf(c, "c.conf", "log-level = info\n");
	ck_assert_int_eq(chmod(c, 0664), 0);
	ck_assert_int_eq(LOAD("-c", c), -EINVAL);
	expect_err("%s: writable by group or others", c);
	ck_assert_int_eq(chmod(c, 0646), 0);
	ck_assert_int_eq(LOAD("-c", c), -EINVAL);
	expect_err("%s: writable by group or others", c);
	write_conf(User, "home/.rpmemd.conf", "log-level = info\n");
	ck_assert_int_eq(chmod(User, 0620), 0);
	ck_assert_int_eq(LOAD(NULL), -EINVAL);
	expect_err("%s: writable by group or others", User);
	ck_assert_int_eq(chmod(User, 0644), 0);
	ck_assert_int_eq(LOAD(NULL), 0);
	ck_assert_int_eq(Cfg.log_level, LOG_LVL_INFO);
}
END_TEST

START_TEST(test_file_owned_by_another_user_is_refused)
{
	char c[PATH_MAX];
	write_conf(c, "c.conf", "log-level = info\n");
	ck_assert_int_eq(chown(c, 12345, 12345), 0);
	ck_assert_int_eq(LOAD("-c", c), -EINVAL);
	expect_err("%s: owned by uid 12345, not by you or root", c);
}
END_TEST

START_TEST(test_config_option_requires_existing_file)
{
	char c[PATH_MAX];
	path_in(c, "missing.conf");
	ck_assert_int_eq(LOAD("-c", c), -ENOENT);
	expect_err("%s: No such file or directory", c);
}
END_TEST

START_TEST(test_system_path_that_is_not_a_file_is_refused)
{
	ck_assert_int_eq(setenv("RPMEMD_SYSTEM_CONFIG", Home, 1), 0);
	ck_assert_int_eq(LOAD(NULL), -EINVAL);
	expect_err("%s: not a regular file", Home);
}
END_TEST

/* a bad number for -t / --max-lanes and the complaint it must produce */
static const struct {
	const char *opt;
	const char *val;
	const char *msg;
} Bad_numbers[] = {
	{"-t", "abc", "option --nthreads: invalid value 'abc' "
		"(expected 0..1024)"},
	{"-t", "-1", "option --nthreads: invalid value '-1' "
		"(expected 0..1024)"},
	{"-t", "+1", "option --nthreads: invalid value '+1' "
		"(expected 0..1024)"},
	{"--nthreads", "1025", "option --nthreads: invalid value '1025' "
		"(expected 0..1024)"},
	{"-t", "5x", "option --nthreads: invalid value '5x' "
		"(expected 0..1024)"},
	{"-t", " 5", "option --nthreads: invalid value ' 5' "
		"(expected 0..1024)"},
	{"-t", "", "option --nthreads: invalid value '' "
		"(expected 0..1024)"},
	{"-t", "99999999999999999999", "option --nthreads: invalid value "
		"'99999999999999999999' (expected 0..1024)"},
	{"--max-lanes", "0", "option --max-lanes: invalid value '0' "
		"(expected 1..65536)"},
	{"--max-lanes", "65537", "option --max-lanes: invalid value '65537' "
		"(expected 1..65536)"},
	{"--protocol", "3", "option --protocol: invalid value '3' (expected "
		"MAJOR.MINOR, e.g. 0.3)"},
	{"--protocol", "0.x", "option --protocol: invalid value '0.x' "
		"(expected MAJOR.MINOR, e.g. 0.3)"},
	{"--protocol", ".3", "option --protocol: invalid value '.3' "
		"(expected MAJOR.MINOR, e.g. 0.3)"},
	{"--protocol", "0.70000", "option --protocol: invalid value "
		"'0.70000' (expected MAJOR.MINOR, e.g. 0.3)"},
};

START_TEST(test_bad_number_option_is_refused)
{
	char *opt = (char *)Bad_numbers[_i].opt;
	char *val = (char *)Bad_numbers[_i].val;
	ck_assert_int_eq(LOAD(opt, val), -EINVAL);
	ck_assert_str_eq(Err, Bad_numbers[_i].msg);
}
END_TEST

/* command lines refused with EINVAL, and what the refusal says */
static const struct {
	const char *args[3];	/* after the program name; NULL-ended */
	const char *msg;
} Bad_args[] = {
	/* values an option does not take */
	{ {"--log-level=loud"}, "option --log-level: invalid value 'loud' "
		"(expected err, warn, notice, info or debug)" },
	{ {"--log-file="}, "option --log-file: invalid value '' (expected a "
		"path)" },
	{ {"-r", ""}, "option --remove: empty descriptor" },
	/* options it does not know */
	{ {"-z"}, "unknown option '-z'" },
	{ {"-f", "--bogus=1"}, "unknown option '--bogus'" },
	/* an argument missing, or given to an option that takes none */
	{ {"-t"}, "option --nthreads: requires an argument" },
	{ {"--log-level"}, "option --log-level: requires an argument" },
	{ {"--force=yes"}, "option --force: takes no argument" },
	/* a stray argument */
	{ {"-f", "extra"}, "unexpected argument 'extra'" },
	{ {"--", "-f"}, "unexpected argument '-f'" },
};

START_TEST(test_bad_command_line_is_refused_saying_why)
{
	char *argv[5] = { "rpmemd" };
	for (size_t i = 0; i < 3 && Bad_args[_i].args[i]; i++)
		argv[i + 1] = (char *)Bad_args[_i].args[i];
	ck_assert_int_eq(load_args(argv), -EINVAL);
	ck_assert_str_eq(Err, Bad_args[_i].msg);
}
END_TEST

START_TEST(test_repeated_loads_parse_from_the_start)
{
	ck_assert_int_eq(LOAD("-t", "3"), 0);
	ck_assert_uint_eq(Cfg.nthreads, 3);
	ck_assert_int_eq(LOAD("-z"), -EINVAL);
	ck_assert_int_eq(LOAD("-t", "4", "-f"), 0);
	ck_assert_uint_eq(Cfg.nthreads, 4);
	ck_assert(Cfg.force);
	ck_assert_int_eq(LOAD(NULL), 0);
	ck_assert_uint_eq(Cfg.nthreads, 0);
	ck_assert(!Cfg.force);
	/* an error inside a cluster must not leave "f" pending */
	ck_assert_int_eq(LOAD("-zf"), -EINVAL);
	ck_assert_int_eq(LOAD(NULL), 0);
	ck_assert(!Cfg.force);
}
END_TEST

START_TEST(test_argv_is_not_reordered)
{
	char *argv[] = {"rpmemd", "stray", "-f", NULL};
	ck_assert_int_eq(config_load(&Cfg, 3, argv, Err, sizeof(Err)),
		-EINVAL);
	expect_err("unexpected argument 'stray'");
	ck_assert_str_eq(argv[1], "stray");
	ck_assert_str_eq(argv[2], "-f");
}
END_TEST

START_TEST(test_config_free_is_safe_on_zeroed_and_failed_configs)
{
	struct config c;
	memset(&c, 0, sizeof(c));
	config_free(&c);
	ck_assert_ptr_null(c.poolset_dir);
	ck_assert_int_eq(LOAD("-r", "x.set", "--poolset-dir", "rel"),
		-EINVAL);
	ck_assert_ptr_null(Cfg.remove);
	config_free(&Cfg);
	config_free(&Cfg);
	ck_assert_ptr_null(Cfg.poolset_dir);
}
END_TEST

START_TEST(test_usage_lists_every_option)
{
	static const char *const opts[] = {
		"-c, --config", "-h, --help", "-V, --version", "--log-file",
		"--poolset-dir", "--persist-apm", "--persist-general",
		"--use-syslog", "--log-level", "-r, --remove", "-f, --force",
		"-s, --pool-set", "-t, --nthreads", "--max-lanes",
		"--lane-security", "--allow-pmdk-clients", "--protocol",
	};
	char out[PATH_MAX], text[8192];
	path_in(out, "usage.txt");
	int fd = open(out, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	int saved = dup(STDERR_FILENO);
	ck_assert_int_ge(saved, 0);
	ck_assert_int_eq(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	config_usage("myrpmemd");
	fflush(stderr);
	ck_assert_int_eq(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	ssize_t n = pread(fd, text, sizeof(text) - 1, 0);
	close(fd);
	ck_assert_int_gt(n, 0);
	text[n] = '\0';
	ck_assert_ptr_nonnull(strstr(text, "Usage: myrpmemd "));
	for (size_t i = 0; i < TU_NELEMS(opts); i++)
		ck_assert_msg(strstr(text, opts[i]) != NULL, "missing %s",
			opts[i]);
}
END_TEST

/* config_suite -- every test above, each with a fresh scratch directory */
static Suite *
config_suite(void)
{
	TCase *tc;
	Suite *s = tu_suite("config", "config", setup, teardown, &tc);
	tcase_add_test(tc, test_defaults_apply_without_files_or_options);
	tcase_add_test(tc, test_long_options_accept_equals_form);
	tcase_add_test(tc, test_long_options_accept_separate_argument);
	tcase_add_test(tc, test_short_options_set_their_fields);
	tcase_add_test(tc, test_flag_options_turn_features_on);
	tcase_add_test(tc, test_help_is_not_blocked_by_a_bad_config_file);
	tcase_add_test(tc, test_config_file_sets_every_key);
	tcase_add_test(tc, test_after_resync_cannot_hold_separators);
	tcase_add_test(tc, test_command_line_overrides_file);
	tcase_add_test(tc,
		test_log_file_option_turns_syslog_off_unless_a_file_says_yes);
	tcase_add_test(tc, test_user_file_overrides_system_file);
	tcase_add_test(tc, test_config_option_skips_system_and_user_files);
	tcase_add_test(tc, test_home_is_substituted_in_poolset_dir);
	tcase_add_test(tc, test_home_followed_by_name_character_is_left_alone);
	tcase_add_test(tc, test_home_falls_back_to_passwd_entry);
	tcase_add_test(tc, test_relative_poolset_dir_is_refused);
	TU_LOOP(tc, test_malformed_file_is_refused_naming_file_and_line,
		Bad_files);
	tcase_add_test(tc, test_nul_byte_is_refused_naming_its_line);
	tcase_add_test(tc, test_overlong_line_is_refused);
	tcase_add_test(tc, test_oversized_file_is_refused_before_reading);
	tcase_add_test(tc, test_errors_in_system_and_user_files_name_that_file);
	tcase_add_test(tc, test_file_writable_by_group_or_others_is_refused);
	/* only root can give a file to another owner */
	if (geteuid() == 0)
		tcase_add_test(tc, test_file_owned_by_another_user_is_refused);
	tcase_add_test(tc, test_config_option_requires_existing_file);
	tcase_add_test(tc, test_system_path_that_is_not_a_file_is_refused);
	TU_LOOP(tc, test_bad_number_option_is_refused, Bad_numbers);
	TU_LOOP(tc, test_bad_command_line_is_refused_saying_why, Bad_args);
	tcase_add_test(tc, test_repeated_loads_parse_from_the_start);
	tcase_add_test(tc, test_argv_is_not_reordered);
	tcase_add_test(tc,
		test_config_free_is_safe_on_zeroed_and_failed_configs);
	tcase_add_test(tc, test_usage_lists_every_option);
	return tu_suite_add(s, tc);
}

/* main -- run config_suite() (tu_check.h) */
TU_MAIN(config_suite)
