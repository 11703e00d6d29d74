/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_rstate.c -- unit tests of the replica records and handle statuses
 * (rstate.c): round trips, hostile values, malformed files, the
 * crash-safe replace, the state directory and the file names
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rstate.h"
#include "tu_check.h"

#define RHEAD "rpmem-replica-state 1\n"
#define SHEAD "rpmem-handle-status 1\n"
#define RBASE "target a@b\npool_set p.set\npool_size 65536\n"
#define SBASE "pid 7\nseq 0\ntarget a@b\npool_set p.set\n"
#define NOBODY 65534

static char Dir[64];

/* mkdir_tmp -- a fresh directory for one test */
static void
mkdir_tmp(void)
{
	snprintf(Dir, sizeof(Dir), "/tmp/check_rstate.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(Dir));
}

/* rm_tmp -- remove it and what the test left */
static void
rm_tmp(void)
{
	ck_assert_int_eq(tu_rmtree(Dir), 0);
}

/* put -- write `len` bytes of `text` to DIR/name, its path in path */
static void
put(const char *name, const char *text, size_t len, char *path,
		size_t plen)
{
	snprintf(path, plen, "%s/%s", Dir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(text, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

/* entries -- how many names DIR holds but . and .. */
static unsigned
entries(const char *dir)
{
	DIR *d = opendir(dir);
	ck_assert_ptr_nonnull(d);
	unsigned n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/* sample -- an out-of-sync record with attributes and three ranges */
static void
sample(struct rstate_record *r, struct rstate_range *g)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->target, sizeof(r->target), "alice@backup");
	snprintf(r->pool_set, sizeof(r->pool_set), "mirror/pool.set");
	r->pool_size = 64 << 20;
	r->has_attr = true;
	memcpy(r->attr.signature, "PMEMOBJ", 8);
	r->attr.major = 6;
	for (unsigned i = 0; i < sizeof(r->attr.uuid); i++)
		r->attr.uuid[i] = (unsigned char)(0xf0 + i);
	r->attr.user_flags[15] = 0xff;
	r->since = 1764000000;
	snprintf(r->reason, sizeof(r->reason), "connection reset");
	r->ranges_known = true;
	g[0] = (struct rstate_range){ 0, 4096 };
	g[1] = (struct rstate_range){ 8192, 4096 };
	g[2] = (struct rstate_range){ (64 << 20) - 4096, 4096 };
	r->nranges = 3;
	r->ranges = g;
}

START_TEST(test_record_with_attr_and_ranges_reads_back_the_same)
{
	mkdir_tmp();
	struct rstate_record r, q;
	struct rstate_range g[3];
	sample(&r, g);
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/x.replica", Dir);
	ck_assert_int_eq(rstate_record_write(path, &r), 0);
	ck_assert_int_eq(rstate_record_read(path, &q), 0);
	ck_assert_str_eq(q.target, r.target);
	ck_assert_str_eq(q.pool_set, r.pool_set);
	ck_assert(q.pool_size == r.pool_size && q.since == r.since);
	ck_assert(q.has_attr && !q.in_sync && q.ranges_known);
	ck_assert_mem_eq(&q.attr, &r.attr, sizeof(r.attr));
	ck_assert_str_eq(q.reason, r.reason);
	ck_assert_uint_eq(q.nranges, 3);
	ck_assert_mem_eq(q.ranges, g, sizeof(g));
	rstate_record_free(&q);
	ck_assert_ptr_null(q.ranges);
	rm_tmp();
}
END_TEST

START_TEST(test_in_sync_record_without_attr_reads_back_the_same)
{
	mkdir_tmp();
	struct rstate_record r, q;
	memset(&r, 0, sizeof(r));
	snprintf(r.target, sizeof(r.target), "10.0.0.2");
	snprintf(r.pool_set, sizeof(r.pool_set), "p.set");
	r.pool_size = 1;
	r.in_sync = true;
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/y.replica", Dir);
	ck_assert_int_eq(rstate_record_write(path, &r), 0);
	memset(&q, 0xa5, sizeof(q));
	ck_assert_int_eq(rstate_record_read(path, &q), 0);
	ck_assert(q.in_sync && !q.has_attr && !q.ranges_known);
	ck_assert_uint_eq(q.nranges, 0);
	ck_assert_str_eq(q.reason, "");
	rstate_record_free(&q);
	rm_tmp();
}
END_TEST

START_TEST(test_status_reads_back_the_same)
{
	mkdir_tmp();
	struct rstate_status s, t;
	memset(&s, 0, sizeof(s));
	s.pid = 4242;
	s.seq = 3;
	snprintf(s.target, sizeof(s.target), "bob@host:7636");
	snprintf(s.pool_set, sizeof(s.pool_set), "p.set");
	snprintf(s.policy, sizeof(s.policy), "continue");
	s.state = RSTATE_RESYNCING;
	s.since = -1;
	s.pool_size = UINT64_MAX;
	s.out_of_sync = 1;
	s.resync_done = 2;
	s.resync_total = 3;
	s.resync_rate = 4;
	s.reconnects = 5;
	snprintf(s.last_error, sizeof(s.last_error), "no route");
	s.updated_ms = INT64_MIN;
	char path[PATH_MAX], run[PATH_MAX];
	ck_assert_int_eq(rstate_status_path(Dir, s.pid, s.seq, path,
		sizeof(path)), 0);
	snprintf(run, sizeof(run), "%s/run", Dir);
	ck_assert_int_eq(mkdir(run, 0700), 0);
	ck_assert_int_eq(rstate_status_write(path, &s), 0);
	ck_assert_int_eq(rstate_status_read(path, &t), 0);
	ck_assert_mem_eq(&s, &t, sizeof(s));
	rm_tmp();
}
END_TEST

/* values that would break a line-per-key file unless escaped */
static const char *const hostile[] = {
	"a\nb", "50%", "%0A", " lead", "trail ", " ", "\xff\xfe",
	"tab\there", "\r\n", "a  b", "%", "caf\xc3\xa9",
};

START_TEST(test_hostile_values_read_back_and_stay_one_line)
{
	mkdir_tmp();
	struct rstate_record r, q;
	memset(&r, 0, sizeof(r));
	snprintf(r.target, sizeof(r.target), "%s", hostile[_i]);
	snprintf(r.pool_set, sizeof(r.pool_set), "x%sy", hostile[_i]);
	snprintf(r.reason, sizeof(r.reason), "%s", hostile[_i]);
	r.pool_size = 4096;
	char path[PATH_MAX], text[1024];
	snprintf(path, sizeof(path), "%s/h.replica", Dir);
	ck_assert_int_eq(rstate_record_write(path, &r), 0);
	ck_assert_int_eq(rstate_record_read(path, &q), 0);
	ck_assert_str_eq(q.target, hostile[_i]);
	ck_assert_str_eq(q.pool_set, r.pool_set);
	ck_assert_str_eq(q.reason, hostile[_i]);
	ssize_t n = tu_slurp(path, text, sizeof(text));
	ck_assert_int_gt(n, 0);
	unsigned lines = 0;
	for (ssize_t i = 0; i < n; i++) {
		lines += text[i] == '\n';
		ck_assert_msg(text[i] == '\n' || (text[i] >= 0x20 &&
			text[i] < 0x7f), "raw byte %#x", text[i] & 0xff);
	}
	ck_assert_uint_eq(lines, 10);	/* head and nine keys */
	rm_tmp();
}
END_TEST

struct text_case {
	bool status;		/* else a record */
	const char *text;
	int ret;
};

/* files as a reader may find them */
static const struct text_case text_cases[] = {
	{false, RHEAD RBASE "in_sync 1\n", 0},
	{false, RHEAD RBASE "in_sync 1\nfuture-key any thing %zz\n", 0},
	{false, RHEAD "in_sync 0\n" RBASE "ranges_known 1\nrange 0 1\n", 0},
	{false, RHEAD RBASE "in_sync 1\nattr " "00112233445566778899aabbccdd"
		"eeff00112233445566778899aabbccddeeff00112233445566778899aab"
		"bccddeeff00112233445566778899aabbccddeeff001122334455667788"
		"99aabbccddeeff00112233445566778899aabbccddeeff0011223344556"
		"677\n", 0},
	{false, "", -EINVAL},
	{false, RBASE "in_sync 1\n", -EINVAL},			/* no head */
	{false, "rpmem-replica-state 2\n" RBASE "in_sync 1\n", -EINVAL},
	{false, SHEAD RBASE "in_sync 1\n", -EINVAL},
	{false, RHEAD RBASE, -EINVAL},				/* no in_sync */
	{false, RHEAD "pool_set p\npool_size 1\nin_sync 1\n", -EINVAL},
	{false, RHEAD "target t\npool_size 1\nin_sync 1\n", -EINVAL},
	{false, RHEAD "target t\npool_set p\nin_sync 1\n", -EINVAL},
	{false, RHEAD RBASE "in_sync 1", -EINVAL},		/* torn */
	{false, RHEAD RBASE "in_sync 2\n", -EINVAL},
	{false, RHEAD RBASE "in_sync 1\nin_sync 1\n", -EINVAL},
	{false, RHEAD RBASE "in_sync 1\nsince 12x\n", -EINVAL},
	{false, RHEAD RBASE "in_sync 1\nsince \n", -EINVAL},
	{false, RHEAD RBASE "in_sync 1\nsince 9223372036854775808\n",
		-EINVAL},
	{false, RHEAD "target t\npool_set p\npool_size -1\nin_sync 1\n",
		-EINVAL},
	{false, RHEAD "target t\npool_set p\npool_size 18446744073709551616"
		"\nin_sync 1\n", -EINVAL},
	{false, RHEAD RBASE "in_sync 1\nattr 0011\n", -EINVAL},
	{false, RHEAD RBASE "in_sync 1\n\n", -EINVAL},		/* blank */
	{false, RHEAD RBASE "in_sync 1\nreason\n", -EINVAL},
	{false, RHEAD RBASE "in_sync 1\nreason a\tb\n", -EINVAL},
	{false, RHEAD RBASE "in_sync 1\nreason a%4\n", -EINVAL},
	{false, RHEAD RBASE "in_sync 1\nreason a%zz\n", -EINVAL},
	{false, RHEAD RBASE "in_sync 1\nreason a%00b\n", -EINVAL},
	{false, RHEAD RBASE "in_sync 1\nreason  lead\n", -EINVAL},
	{false, RHEAD RBASE "in_sync 1\nreason \xff\n", -EINVAL},
	{false, RHEAD RBASE "in_sync 0\nrange 0 1\n", -EINVAL},	/* unknown */
	{false, RHEAD RBASE "in_sync 1\nranges_known 1\nrange 0 1\n",
		-EINVAL},
	{false, RHEAD RBASE "in_sync 0\nranges_known 1\nrange 0\n", -EINVAL},
	{false, RHEAD RBASE "in_sync 0\nranges_known 1\nrange 0 0\n",
		-EINVAL},
	{false, RHEAD RBASE "in_sync 0\nranges_known 1\nrange 65535 2\n",
		-EINVAL},				/* past the end */
	{false, RHEAD RBASE "in_sync 0\nranges_known 1\nrange 8 8\n"
		"range 4 8\n", -EINVAL},			/* overlap */
	{false, RHEAD RBASE "in_sync 0\nranges_known 1\n"
		"range 18446744073709551615 2\n", -EINVAL},	/* wraps */
	{true, SHEAD SBASE "state degraded\n", 0},
	{true, SHEAD SBASE "state frozen\nnew_key 1\npolicy fence\n", 0},
	{true, SHEAD SBASE "state dizzy\n", -EINVAL},
	{true, SHEAD SBASE, -EINVAL},				/* no state */
	{true, SHEAD "pid 0\nseq 0\ntarget a\npool_set p\nstate broken\n",
		-EINVAL},
	{true, SHEAD "pid 2147483648\nseq 0\ntarget a\npool_set p\n"
		"state broken\n", -EINVAL},
	{true, SHEAD "pid 1\nseq 4294967296\ntarget a\npool_set p\n"
		"state broken\n", -EINVAL},
	{true, SHEAD SBASE "state broken\npolicy abcdefghijklmnop\n",
		-EINVAL},					/* too long */
	{true, RHEAD SBASE "state broken\n", -EINVAL},
};

START_TEST(test_malformed_files_are_refused_and_new_keys_ignored)
{
	const struct text_case *c = &text_cases[_i];
	mkdir_tmp();
	char path[PATH_MAX];
	put("f", c->text, strlen(c->text), path, sizeof(path));
	int ret;
	if (c->status) {
		struct rstate_status s;
		ret = rstate_status_read(path, &s);
	} else {
		struct rstate_record r;
		ret = rstate_record_read(path, &r);
		if (ret == 0)
			rstate_record_free(&r);
		else
			ck_assert_ptr_null(r.ranges);
	}
	ck_assert_msg(ret == c->ret, "case %d: %d", _i, ret);
	rm_tmp();
}
END_TEST

START_TEST(test_over_long_values_lines_and_files_are_refused)
{
	mkdir_tmp();
	size_t big = 80000;
	char *t = malloc(big), path[PATH_MAX];
	ck_assert_ptr_nonnull(t);
	struct rstate_record r;
	struct rstate_status s;

	/* a target one byte over its array, the line itself short */
	int n = snprintf(t, big, RHEAD "pool_set p\npool_size 1\nin_sync 1\n"
		"target %0*d\n", RSTATE_TARGET_MAX, 0);
	put("a", t, (size_t)n, path, sizeof(path));
	ck_assert_int_eq(rstate_record_read(path, &r), -EINVAL);

	/* a line longer than any value could make, of an unknown key */
	n = snprintf(t, big, RHEAD RBASE "in_sync 1\nfuture %0*d\n",
		3 * RSTATE_DESC_MAX + 100, 0);
	put("b", t, (size_t)n, path, sizeof(path));
	ck_assert_int_eq(rstate_record_read(path, &r), -EINVAL);

	/* a status file of many short lines, past its cap */
	n = snprintf(t, big, SHEAD SBASE "state broken\n");
	while ((size_t)n + 16 < big)
		n += snprintf(t + n, big - (size_t)n, "future 1234567\n");
	put("c", t, (size_t)n, path, sizeof(path));
	ck_assert_int_eq(rstate_status_read(path, &s), -EINVAL);

	snprintf(path, sizeof(path), "%s/missing", Dir);
	ck_assert_int_eq(rstate_record_read(path, &r), -ENOENT);
	ck_assert_int_eq(rstate_status_read(path, &s), -ENOENT);
	free(t);
	rm_tmp();
}
END_TEST

START_TEST(test_replace_leaves_no_temporary_file)
{
	mkdir_tmp();
	struct rstate_record r;
	struct rstate_range g[3];
	sample(&r, g);
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/k.replica", Dir);
	ck_assert_int_eq(rstate_record_write(path, &r), 0);
	r.nranges = 1;
	ck_assert_int_eq(rstate_record_write(path, &r), 0);	/* over it */
	ck_assert_uint_eq(entries(Dir), 1);

	/* refused before anything is written */
	r.nranges = RSTATE_RANGES_MAX + 1;
	ck_assert_int_eq(rstate_record_write(path, &r), -EINVAL);
	r.nranges = 1;
	r.target[0] = '\0';
	ck_assert_int_eq(rstate_record_write(path, &r), -EINVAL);
	ck_assert_uint_eq(entries(Dir), 1);

	struct rstate_record q;
	ck_assert_int_eq(rstate_record_read(path, &q), 0);
	ck_assert_uint_eq(q.nranges, 1);
	rstate_record_free(&q);

	/* a directory that does not exist: an error, and nothing left */
	snprintf(path, sizeof(path), "%s/none/k.replica", Dir);
	snprintf(r.target, sizeof(r.target), "t");
	ck_assert_int_eq(rstate_record_write(path, &r), -ENOENT);
	struct rstate_status s;
	memset(&s, 0, sizeof(s));
	s.pid = 1;
	snprintf(s.target, sizeof(s.target), "t");
	snprintf(s.pool_set, sizeof(s.pool_set), "p");
	snprintf(path, sizeof(path), "%s/s.status", Dir);
	ck_assert_int_eq(rstate_status_write(path, &s), 0);
	s.state = RSTATE_MAX;
	ck_assert_int_eq(rstate_status_write(path, &s), -EINVAL);
	ck_assert_uint_eq(entries(Dir), 2);
	rm_tmp();
}
END_TEST

struct dir_case {
	const char *state, *xdg, *home;	/* NULL: unset */
	bool root;
	const char *want;		/* NULL: -ENOENT */
};

/* where the state directory is, by precedence */
static const struct dir_case dir_cases[] = {
	{"/s", "/x", "/h", false, "/s"},
	{"/s", NULL, NULL, true, "/s"},
	{"", "/x", "/h", false, "/x/rpmem"},
	{NULL, "/x", "/h", false, "/x/rpmem"},
	{NULL, "rel", "/h", false, "/h/.local/state/rpmem"},
	{NULL, "", "/h", false, "/h/.local/state/rpmem"},
	{NULL, NULL, "/h", false, "/h/.local/state/rpmem"},
	{NULL, "/x", "/h", true, "/var/lib/rpmem"},
	{NULL, NULL, NULL, false, NULL},
	{NULL, NULL, "", false, NULL},
};

/* setenv_or_unset -- NULL unsets */
static void
setenv_or_unset(const char *name, const char *v)
{
	ck_assert_int_eq(v ? setenv(name, v, 1) : unsetenv(name), 0);
}

START_TEST(test_state_dir_follows_its_precedence)
{
	const struct dir_case *c = &dir_cases[_i];
	setenv_or_unset("RPMEM_STATE_DIR", c->state);
	setenv_or_unset("XDG_STATE_HOME", c->xdg);
	setenv_or_unset("HOME", c->home);
	bool root = geteuid() == 0;
	if (root != c->root && (!root || seteuid(NOBODY)))
		return;		/* cannot play that user here */
	char buf[PATH_MAX], small[PATH_MAX];
	int ret = rstate_dir(buf, sizeof(buf), false);
	int shorter = rstate_dir(small, c->want ? strlen(c->want) : 1,
		false);
	if (root && !c->root)
		ck_assert_int_eq(seteuid(0), 0);
	if (c->want) {
		ck_assert_int_eq(ret, 0);
		ck_assert_str_eq(buf, c->want);
		ck_assert_int_eq(shorter, -ENAMETOOLONG);
	} else {
		ck_assert_int_eq(ret, -ENOENT);
	}
}
END_TEST

START_TEST(test_state_dir_is_created_private_and_refused_when_not)
{
	mkdir_tmp();
	char want[PATH_MAX], buf[PATH_MAX], run[PATH_MAX + 8];
	snprintf(want, sizeof(want), "%s/a/b/rpmem", Dir);
	setenv_or_unset("RPMEM_STATE_DIR", want);
	ck_assert_int_eq(rstate_dir(buf, sizeof(buf), true), 0);
	ck_assert_str_eq(buf, want);
	snprintf(run, sizeof(run), "%s/run", want);
	struct stat st;
	ck_assert_int_eq(stat(run, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0700);
	ck_assert_int_eq(rstate_dir(buf, sizeof(buf), true), 0); /* again */

	/* group-writable, as ssh's StrictModes refuses ~/.ssh */
	ck_assert_int_eq(chmod(want, 0770), 0);
	ck_assert_int_eq(rstate_dir(buf, sizeof(buf), true), -EPERM);
	ck_assert_int_eq(rstate_dir(buf, sizeof(buf), false), 0);
	ck_assert_int_eq(chmod(want, 0700), 0);
	ck_assert_int_eq(chmod(run, 0703), 0);
	ck_assert_int_eq(rstate_dir(buf, sizeof(buf), true), -EPERM);
	ck_assert_int_eq(chmod(run, 0700), 0);

	/* someone else's (only root can make one here) */
	if (geteuid() == 0) {
		ck_assert_int_eq(chown(want, NOBODY, NOBODY), 0);
		ck_assert_int_eq(rstate_dir(buf, sizeof(buf), true), -EPERM);
	}
	unsetenv("RPMEM_STATE_DIR");
	rm_tmp();
}
END_TEST

struct key_case {
	const char *target, *pool_set, *want;	/* want NULL: refused */
	int ret;
};

/* what a record's file is named */
static const struct key_case key_cases[] = {
	{"alice@backup", "mirror/pool.set",
		"D/alice@backup,mirror%2Fpool.set.replica", 0},
	{"[::1]:7636", "a b%,c", "D/%5B::1%5D:7636,a%20b%25%2Cc.replica", 0},
	{"h", "..", "D/h,...replica", 0},
	{"h", "x\n\xff", "D/h,x%0A%FF.replica", 0},
	{"", "p", NULL, -EINVAL},
	{"h", "", NULL, -EINVAL},
};

START_TEST(test_record_path_escapes_the_key)
{
	const struct key_case *c = &key_cases[_i];
	char buf[PATH_MAX];
	ck_assert_int_eq(rstate_record_path("D", c->target, c->pool_set, buf,
		sizeof(buf)), c->ret);
	if (c->want)
		ck_assert_str_eq(buf, c->want);
}
END_TEST

START_TEST(test_paths_too_long_are_refused)
{
	char buf[PATH_MAX], longset[200];
	memset(longset, '/', sizeof(longset) - 1);	/* 3 bytes each */
	longset[sizeof(longset) - 1] = '\0';
	ck_assert_int_eq(rstate_record_path("D", "h", longset, buf,
		sizeof(buf)), -ENAMETOOLONG);		/* past NAME_MAX */
	ck_assert_int_eq(rstate_record_path("D", "h", "p", buf, 12),
		-ENAMETOOLONG);
	ck_assert_int_eq(rstate_record_path("D", "h", "p", buf, 14), 0);
	ck_assert_int_eq(rstate_status_path("/s", 12, 3, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/s/run/12-3.status");
	ck_assert_int_eq(rstate_status_path("/s", 12, 3, buf, 18),
		-ENAMETOOLONG);
	ck_assert_int_eq(rstate_status_path("/s", 0, 3, buf, sizeof(buf)),
		-EINVAL);
}
END_TEST

START_TEST(test_state_names_parse_back)
{
	enum rstate_state s;
	for (unsigned i = 0; i < RSTATE_MAX; i++) {
		ck_assert_int_eq(rstate_parse(rstate_name(i), &s), 0);
		ck_assert_uint_eq(s, i);
	}
	ck_assert_str_eq(rstate_name(RSTATE_SPLIT_BRAIN), "split-brain");
	ck_assert_str_eq(rstate_name(RSTATE_MAX), "unknown");
	ck_assert_int_eq(rstate_parse("unknown", &s), -EINVAL);
	ck_assert_int_eq(rstate_parse("", &s), -EINVAL);
}
END_TEST

/* rstate_suite -- every case above */
static Suite *
rstate_suite(void)
{
	TCase *tc;
	Suite *s = tu_suite("rstate", "core", NULL, NULL, &tc);
	tcase_add_test(tc,
		test_record_with_attr_and_ranges_reads_back_the_same);
	tcase_add_test(tc,
		test_in_sync_record_without_attr_reads_back_the_same);
	tcase_add_test(tc, test_status_reads_back_the_same);
	TU_LOOP(tc, test_hostile_values_read_back_and_stay_one_line, hostile);
	TU_LOOP(tc, test_malformed_files_are_refused_and_new_keys_ignored,
		text_cases);
	tcase_add_test(tc, test_over_long_values_lines_and_files_are_refused);
	tcase_add_test(tc, test_replace_leaves_no_temporary_file);
	TU_LOOP(tc, test_state_dir_follows_its_precedence, dir_cases);
	tcase_add_test(tc,
		test_state_dir_is_created_private_and_refused_when_not);
	TU_LOOP(tc, test_record_path_escapes_the_key, key_cases);
	tcase_add_test(tc, test_paths_too_long_are_refused);
	tcase_add_test(tc, test_state_names_parse_back);
	return tu_suite_add(s, tc);
}

TU_MAIN(rstate_suite)
