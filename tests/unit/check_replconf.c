/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_replconf.c -- unit tests of a replica's replication settings
 * (replconf.c): precedence, values, and every malformed file refused
 * naming its line
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "replconf.h"
#include "tu.h"
#include "tu_check.h"

#define TARGET "admin@site-b.example"
#define POOLSET "pools/App.set"
#define MIB (1ULL << 20)

static char Dir[PATH_MAX];
static char Path[PATH_MAX + 32];

/* a second-site section for this replica, with more after it */
#define OWN "[second-site]\ntarget = " TARGET "\npoolset = " POOLSET "\n"

/* what a file and RPMEM_REPLICATION give the replica TARGET:POOLSET */
static const struct {
	const char *name;
	const char *file;	/* NULL: no file */
	const char *env;	/* NULL: unset */
	int ret;
	enum replconf_mode mode;
	uint64_t lag_bytes;
	unsigned lag_ms;
	enum replconf_congestion congestion;
	const char *from;	/* where the mode came from; "@": the file */
} Cases[] = {
	{ "no file, no environment: the defaults", NULL, NULL, 0,
		REPLCONF_SYNC, 64 * MIB, 2000, REPLCONF_BLOCK,
		"the built-in default" },
	{ "the environment's mode", NULL, "async", 0, REPLCONF_ASYNC,
		64 * MIB, 2000, REPLCONF_BLOCK, "RPMEM_REPLICATION" },
	{ "the replica's section", OWN "mode = async\nlag-bytes = 256M\n"
		"lag-ms = 5000\non-congestion = pull-ahead\n", NULL, 0,
		REPLCONF_ASYNC, 256 * MIB, 5000, REPLCONF_PULL_AHEAD,
		"@ [second-site]" },
	{ "[default] below the environment", "[default]\nmode = async\n"
		"lag-ms = 100\n", "sync", 0, REPLCONF_SYNC, 64 * MIB, 100,
		REPLCONF_BLOCK, "RPMEM_REPLICATION" },
	{ "[default] alone", "# comment\n\n[Default]\nmode = async\n",
		NULL, 0, REPLCONF_ASYNC, 64 * MIB, 2000, REPLCONF_BLOCK,
		"@ [default]" },
	{ "the section above the environment and [default]",
		"[default]\nlag-bytes = 8M\n" OWN "mode = async\n", "sync", 0,
		REPLCONF_ASYNC, 8 * MIB, 2000, REPLCONF_BLOCK,
		"@ [second-site]" },
	{ "another replica's section does not apply",
		"[other]\ntarget = " TARGET "\npoolset = pools/app.set\n"
		"mode = async\n", NULL, 0, REPLCONF_SYNC, 64 * MIB, 2000,
		REPLCONF_BLOCK, "the built-in default" },
	{ "bytes in K, G and plain", OWN "lag-bytes = 1048576\n", NULL, 0,
		REPLCONF_SYNC, MIB, 2000, REPLCONF_BLOCK,
		"the built-in default" },
	{ "16G is the most", OWN "lag-bytes = 16G\nlag-ms = 3600000\n",
		NULL, 0, REPLCONF_SYNC, 16384 * MIB, 3600000, REPLCONF_BLOCK,
		"the built-in default" },
	/* refused, each naming what and where */
	{ "a bad environment", NULL, "Async", -EINVAL, 0, 0, 0, 0,
		"RPMEM_REPLICATION=Async: expected sync or async" },
	{ "a key outside a section", "mode = async\n", NULL, -EINVAL, 0, 0,
		0, 0, "@:1: key 'mode' outside a section" },
	{ "an unknown key", OWN "lag = 5\n", NULL, -EINVAL, 0, 0, 0, 0,
		"@:4: unknown key 'lag'" },
	{ "target in [default]", "[default]\ntarget = x\n", NULL, -EINVAL,
		0, 0, 0, 0, "@:2: unknown key 'target' in [default]" },
	{ "an unknown mode", OWN "mode = semi\n", NULL, -EINVAL, 0, 0, 0,
		0, "@:4: invalid value 'semi' for key 'mode' (expected sync "
		"or async)" },
	{ "too few lag bytes", OWN "lag-bytes = 1023K\n", NULL, -EINVAL, 0,
		0, 0, 0, "@:4: invalid value '1023K' for key 'lag-bytes'" },
	{ "too many lag bytes", OWN "lag-bytes = 17G\n", NULL, -EINVAL, 0,
		0, 0, 0, "@:4: invalid value '17G'" },
	{ "a lag of 9 ms", OWN "lag-ms = 9\n", NULL, -EINVAL, 0, 0, 0, 0,
		"@:4: invalid value '9' for key 'lag-ms' (expected 10 to "
		"3600000)" },
	{ "an unknown policy", OWN "on-congestion = drop\n", NULL, -EINVAL,
		0, 0, 0, 0, "@:4: invalid value 'drop' for key "
		"'on-congestion'" },
	{ "a value iniparser would cut", OWN "mode = async;x\n", NULL,
		-EINVAL, 0, 0, 0, 0, "@:4: invalid value 'async;x'" },
	{ "a quoted value", OWN "mode = \"async\"\n", NULL, -EINVAL, 0, 0,
		0, 0, "@:4: invalid value '\"async\"'" },
	{ "a key twice", OWN "mode = async\nmode = sync\n", NULL, -EINVAL,
		0, 0, 0, 0, "@:5: key 'mode' again" },
	{ "a section twice", "[a]\ntarget = t\npoolset = p\n[A]\n", NULL,
		-EINVAL, 0, 0, 0, 0, "@:4: section [a] again" },
	{ "a section without its pool set", "[a]\ntarget = t\n[b]\n", NULL,
		-EINVAL, 0, 0, 0, 0, "@:1: section [a] names no poolset" },
	{ "the last section without its target", "[a]\npoolset = p\n",
		NULL, -EINVAL, 0, 0, 0, 0, "@:1: section [a] names no "
		"target" },
	{ "two sections for one replica", OWN "[again]\ntarget = " TARGET
		"\npoolset = " POOLSET "\n", NULL, -EINVAL, 0, 0, 0, 0,
		"@: sections [second-site] and [again] both name " POOLSET
		" on " TARGET },
	{ "a section name iniparser would split", "[a:b]\n", NULL,
		-EINVAL, 0, 0, 0, 0, "@:1: invalid section name 'a:b'" },
	{ "a broken section line", "[a\n", NULL, -EINVAL, 0, 0, 0, 0,
		"@:1: invalid section line" },
	{ "a continued line", OWN "mode = \\\n", NULL, -EINVAL, 0, 0, 0, 0,
		"@:4: line continuation" },
};

/* expect_from -- `want` with "@" standing for the file's path */
static void
expect_text(const char *got, const char *want, const char *name)
{
	char buf[PATH_MAX + 256];
	const char *at = strchr(want, '@');
	if (at)
		snprintf(buf, sizeof(buf), "%.*s%s%s", (int)(at - want), want,
			Path, at + 1);
	else
		snprintf(buf, sizeof(buf), "%s", want);
	ck_assert_msg(strstr(got, buf) != NULL, "%s: '%s' lacks '%s'", name,
		got, buf);
}

static void
setup(void)
{
	snprintf(Dir, sizeof(Dir), "%s/replconf.XXXXXX",
		getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(Dir));
	snprintf(Path, sizeof(Path), "%s/librpmem.conf", Dir);
}

static void
teardown(void)
{
	tu_rmtree(Dir);
}

/* write_conf -- the file, mode 0600 */
static void
write_conf(const char *text)
{
	FILE *f = fopen(Path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_ge(fputs(text, f), 0);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(chmod(Path, 0600), 0);
}

START_TEST(test_settings_as_the_sources_say)
{
	if (Cases[_i].file)
		write_conf(Cases[_i].file);
	struct replconf c;
	char err[512] = "";
	int r = replconf_load(Path, false, Cases[_i].env, TARGET, POOLSET,
		&c, err, sizeof(err));
	ck_assert_msg(r == Cases[_i].ret, "%s: %d (%s)", Cases[_i].name, r,
		err);
	if (r) {
		expect_text(err, Cases[_i].from, Cases[_i].name);
		return;
	}
	ck_assert_msg(c.mode == Cases[_i].mode && c.lag_bytes ==
		Cases[_i].lag_bytes && c.lag_ms == Cases[_i].lag_ms &&
		c.congestion == Cases[_i].congestion,
		"%s: %s %llu %u %s", Cases[_i].name, replconf_mode_name(c.mode),
		(unsigned long long)c.lag_bytes, c.lag_ms,
		replconf_congestion_name(c.congestion));
	expect_text(c.from, Cases[_i].from, Cases[_i].name);
}
END_TEST

/* a file others may write, or one that must exist and does not */
START_TEST(test_untrusted_or_missing_file_is_refused)
{
	struct replconf c;
	char err[512] = "";
	ck_assert_int_eq(replconf_load(Path, true, NULL, TARGET, POOLSET, &c,
		err, sizeof(err)), -ENOENT);
	expect_text(err, "@: No such file", "missing, required");
	ck_assert_int_eq(replconf_load(Path, false, NULL, TARGET, POOLSET,
		&c, err, sizeof(err)), 0);
	write_conf("[default]\nmode = async\n");
	ck_assert_int_eq(chmod(Path, 0620), 0);
	ck_assert_int_eq(replconf_load(Path, false, NULL, TARGET, POOLSET,
		&c, err, sizeof(err)), -EINVAL);
	expect_text(err, "@: writable by group or others", "group-writable");
}
END_TEST

/* RPMEM_CONF names the file, which must then exist */
START_TEST(test_rpmem_conf_names_the_file)
{
	write_conf(OWN "mode = async\n");
	setenv("RPMEM_CONF", Path, 1);
	unsetenv("RPMEM_REPLICATION");
	struct replconf c;
	char err[512] = "";
	ck_assert_int_eq(replconf_get(TARGET, POOLSET, &c, err, sizeof(err)),
		0);
	ck_assert_int_eq(c.mode, REPLCONF_ASYNC);
	ck_assert_int_eq(unlink(Path), 0);
	ck_assert_int_eq(replconf_get(TARGET, POOLSET, &c, err, sizeof(err)),
		-ENOENT);
	unsetenv("RPMEM_CONF");
}
END_TEST

/* main -- every replconf test (tu_check.h) */
TU_CHECK_MAIN("replconf", "replconf", setup, teardown,
	TU_EACH(test_settings_as_the_sources_say, Cases),
	TU_ONE(test_untrusted_or_missing_file_is_refused),
	TU_ONE(test_rpmem_conf_names_the_file))
