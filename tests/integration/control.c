/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * control.c -- control-path tests: librpmem against rpmemd through sshd
 *
 * Started by control.sh, which runs a private sshd on 127.0.0.1 and sets
 * RPMEM_SSH and RPMEM_CMD (read by librpmem once, at load) and:
 *
 *   RPMEM_TEST_TARGET        [user@]127.0.0.1:port of that sshd
 *   RPMEM_TEST_POOLSET_DIR   rpmemd's --poolset-dir (absolute)
 *   RPMEM_TEST_OUTSIDE_DIR   the poolset dir's parent; nothing may appear
 *   RPMEM_TEST_PART_DIR      where the tests' part files go
 *   RPMEM_TEST_SSH_CALLS     file with one line per ssh started (optional)
 *   RPMEM_TEST_EXPECT_MSG    badconfig, nodaemon (and optionally fakedaemon):
 *                            text rpmem_errormsg() must contain
 *   RPMEM_TEST_DEAD_TARGET   nodaemon: a loopback port nobody listens on
 *   RPMEM_TEST_EXPECT_ERRNO  fakedaemon: allowed errno names, "A,B"
 *
 * argv[1] names the group to run (default "main"): main, badconfig,
 * nodaemon, fakedaemon.  Each test uses its own pool set names and removes
 * its files, so tests are independent of each other and of their order.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "itest.h"
#include "librpmem.h"

#define MIB ((size_t)1 << 20)
#define POOL_SIZE (8 * MIB)
#define NLANES 4U
#define MAX_PARTS 4
#define MSG_MAX 1024
#define MAX_ERRS 8

static struct {
	const char *target;
	const char *poolset_dir;
	const char *outside_dir;
	const char *part_dir;
	const char *ssh_calls;
	const char *expect_msg;
	const char *dead_target;
	int expect_errno[MAX_ERRS + 1];	/* 0-terminated */
} env;

/* a pool set file and the part files it names */
struct tset {
	char desc[PATH_MAX];	/* descriptor, relative to poolset-dir */
	char path[PATH_MAX];	/* the set file */
	unsigned nparts;
	char part[MAX_PARTS][PATH_MAX];
};

/* rpmem_errormsg() of the last expected failure */
static char last_msg[MSG_MAX];

/* exists -- is there a directory entry (even a dangling link) at path? */
static bool
exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

/* unlink_quiet -- remove path; a missing file is fine */
static void
unlink_quiet(const char *path)
{
	ck_assert_msg(unlink(path) == 0 || errno == ENOENT,
		"cannot remove %s: %s", path, strerror(errno));
}

/* set_write -- write set_dir/name.set naming nparts parts in part_dir */
static void
set_write(struct tset *s, const char *set_dir, const char *name,
	const char *part_dir, unsigned nparts, size_t part_size,
	const char *option)
{
	ck_assert_uint_le(nparts, MAX_PARTS);
	memset(s, 0, sizeof(*s));
	fmt(s->desc, sizeof(s->desc), "%s.set", name);
	fmt(s->path, sizeof(s->path), "%s/%s.set", set_dir, name);
	s->nparts = nparts;
	for (unsigned i = 0; i < nparts; i++) {
		fmt(s->part[i], sizeof(s->part[i]), "%s/%s.part%u", part_dir,
			name, i);
		/* what an earlier, failed run of this test may have left */
		unlink_quiet(s->part[i]);
	}

	FILE *f = fopen(s->path, "w");
	ck_assert_msg(f != NULL, "cannot create %s: %s", s->path,
		strerror(errno));
	fprintf(f, "PMEMPOOLSET\n");
	if (option)
		fprintf(f, "OPTION %s\n", option);
	for (unsigned i = 0; i < nparts; i++)
		fprintf(f, "%zuM %s\n", part_size / MIB, s->part[i]);
	ck_assert_msg(fclose(f) == 0, "writing %s: %s", s->path,
		strerror(errno));
}

/* pool_set -- a set in the poolset dir with parts in the part dir */
static void
pool_set(struct tset *s, const char *name, unsigned nparts,
	size_t part_size, const char *option)
{
	set_write(s, env.poolset_dir, name, env.part_dir, nparts, part_size,
		option);
}

/* set_unlink -- remove the set file and its parts */
static void
set_unlink(const struct tset *s)
{
	for (unsigned i = 0; i < s->nparts; i++)
		unlink_quiet(s->part[i]);
	unlink_quiet(s->path);
}

/* parts_exist -- how many of the set's part files exist */
static unsigned
parts_exist(const struct tset *s)
{
	unsigned n = 0;
	for (unsigned i = 0; i < s->nparts; i++)
		n += exists(s->part[i]);
	return n;
}

/* victims_make -- create the set's parts as plain files, "victim" inside */
static void
victims_make(const struct tset *s)
{
	for (unsigned i = 0; i < s->nparts; i++) {
		FILE *f = fopen(s->part[i], "wx");
		ck_assert_msg(f != NULL, "cannot create %s: %s", s->part[i],
			strerror(errno));
		fputs("victim\n", f);
		ck_assert_int_eq(fclose(f), 0);
	}
}

/* pool_map -- page-aligned anonymous memory standing for the local pool */
static void *
pool_map(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ck_assert_msg(p != MAP_FAILED, "mmap %zu: %s", size, strerror(errno));
	return p;
}

/* page_size -- the system page size */
static size_t
page_size(void)
{
	long ps = sysconf(_SC_PAGESIZE);
	ck_assert_int_gt(ps, 0);
	return (size_t)ps;
}

/* ssh_runs -- how many times RPMEM_SSH was started so far */
static unsigned
ssh_runs(void)
{
	unsigned n = 0;
	int c;
	if (env.ssh_calls == NULL)
		return 0;
	FILE *f = fopen(env.ssh_calls, "r");
	ck_assert_msg(f != NULL, "%s: %s", env.ssh_calls, strerror(errno));
	while ((c = getc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

/* no_children -- librpmem reaped every ssh it started */
static void
no_children(const char *what)
{
	int st;
	pid_t pid = waitpid(-1, &st, WNOHANG);
	ck_assert_msg(pid == -1 && errno == ECHILD,
		"%s: a child process (ssh) was left behind (waitpid: %d)",
		what, (int)pid);
}

/* errno_in -- is `e` in the 0-terminated list? */
static bool
errno_in(int e, const int *errs)
{
	for (; *errs; errs++)
		if (*errs == e)
			return true;
	return false;
}

/* errs_str -- the 0-terminated errno list as "A or B" */
static const char *
errs_str(const int *errs)
{
	static char buf[256];
	size_t off = 0;
	buf[0] = '\0';
	for (; *errs; errs++) {
		int n = snprintf(buf + off, sizeof(buf) - off, "%s%s",
			off ? " or " : "", ename(*errs));
		if (n < 0 || (size_t)n >= sizeof(buf) - off)
			break;
		off += (size_t)n;
	}
	return buf;
}

/*
 * check_failure -- the call reported failure (`failed`) with an errno in
 * `errs` and a non-empty rpmem_errormsg(), kept in last_msg; `e` is the
 * errno saved right after the call
 */
static void
check_failure(bool failed, int e, const int *errs, const char *what)
{
	const char *msg = rpmem_errormsg();
	snprintf(last_msg, sizeof(last_msg), "%s", msg ? msg : "");
	ck_assert_msg(failed, "%s: succeeded; expected %s", what,
		errs_str(errs));
	ck_assert_msg(errno_in(e, errs),
		"%s: errno %s (%s), expected %s; rpmem_errormsg: \"%s\"",
		what, ename(e), strerror(e), errs_str(errs), last_msg);
	ck_assert_msg(last_msg[0] != '\0',
		"%s: failed with %s but rpmem_errormsg() is empty", what,
		ename(e));
}

/* refused_in -- create/open returned NULL with an errno in `errs` */
static void
refused_in(RPMEMpool *rpp, const int *errs, const char *what)
{
	int e = errno;
	if (rpp != NULL)
		(void) rpmem_close(rpp);
	check_failure(rpp == NULL, e, errs, what);
}

/* refused -- create/open returned NULL with errno `err` */
static void
refused(RPMEMpool *rpp, int err, const char *what)
{
	const int errs[] = { err, 0 };	/* leaves errno alone */
	refused_in(rpp, errs, what);
}

/* failed_in -- an int-returning call gave -1 with an errno in `errs` */
static void
failed_in(int ret, const int *errs, const char *what)
{
	int e = errno;
	check_failure(ret == -1, e, errs, what);
}

/* failed -- an int-returning call gave -1 with errno `err` */
static void
failed(int ret, int err, const char *what)
{
	const int errs[] = { err, 0 };	/* leaves errno alone */
	failed_in(ret, errs, what);
}

/* msg_has -- last_msg contains `needle` */
static void
msg_has(const char *needle, const char *what)
{
	ck_assert_msg(strstr(last_msg, needle) != NULL,
		"%s: rpmem_errormsg \"%s\" does not mention \"%s\"", what,
		last_msg, needle);
}

/* opened -- create/open succeeded and agreed on 1..NLANES lanes */
static RPMEMpool *
opened(RPMEMpool *rpp, const unsigned *nlanes, const char *what)
{
	if (rpp == NULL) {
		int e = errno;
		ck_abort_msg("%s failed: %s (%s): %s", what, ename(e),
			strerror(e), errmsg());
	}
	ck_assert_msg(*nlanes >= 1 && *nlanes <= NLANES,
		"%s: nlanes %u, expected 1..%u", what, *nlanes, NLANES);
	return rpp;
}

/* ok -- an int-returning call succeeded */
static void
ok(int ret, const char *what)
{
	if (ret != 0) {
		int e = errno;
		ck_abort_msg("%s returned %d: %s (%s): %s", what, ret,
			ename(e), strerror(e), errmsg());
	}
}

/* attr_make -- attributes with NUL and newline bytes, non-zero uuids */
static void
attr_make(struct rpmem_pool_attr *a, unsigned char seed)
{
	static const char sig[RPMEM_POOL_HDR_SIG_LEN] =
		{ 'R', 'P', '\0', '\n', 'T', 'S', 'T', '0' };

	memset(a, 0, sizeof(*a));
	memcpy(a->signature, sig, sizeof(sig));
	a->signature[7] = (char)('A' + seed % 26);
	a->major = 6U + seed;
	/* CKSUM_2K | SDS, what libpmemobj asks for; never SINGLEHDR */
	a->incompat_features = seed % 2 ? 0x2U : 0x6U;
	for (unsigned i = 0; i < RPMEM_POOL_HDR_UUID_LEN; i++) {
		a->poolset_uuid[i] = (unsigned char)(seed + 1 + i);
		a->uuid[i] = (unsigned char)(0x21 + seed + 3 * i);
		a->next_uuid[i] = (unsigned char)(0xf0 - seed - i);
		a->prev_uuid[i] = (unsigned char)(0x81 + seed + 5 * i);
	}
	a->uuid[5] = '\0';
	a->next_uuid[2] = '\n';
	for (unsigned i = 0; i < RPMEM_POOL_USER_FLAGS_LEN; i++)
		a->user_flags[i] = (unsigned char)(0x40 + seed + 7 * i);
	a->user_flags[0] = '\0';
	a->user_flags[1] = '\n';
	a->user_flags[15] = '\0';
}

/* attr_eq -- two attribute sets are equal byte for byte */
static void
attr_eq(const struct rpmem_pool_attr *got,
	const struct rpmem_pool_attr *want, const char *what)
{
	ck_assert_msg(memcmp(got, want, sizeof(*got)) == 0,
		"%s: attributes differ (signature \"%.8s\" major %u "
		"incompat 0x%x, expected \"%.8s\" major %u incompat 0x%x)",
		what, got->signature, got->major, got->incompat_features,
		want->signature, want->major, want->incompat_features);
}

/* part_signature_is -- the part file's header starts with `sig` */
static void
part_signature_is(const char *part, const char *sig)
{
	char buf[RPMEM_POOL_HDR_SIG_LEN];
	int fd = open(part, O_RDONLY);
	ck_assert_msg(fd >= 0, "%s: %s", part, strerror(errno));
	ck_assert_msg(pread(fd, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf),
		"%s: short read", part);
	close(fd);
	ck_assert_msg(memcmp(buf, sig, sizeof(buf)) == 0,
		"%s: header signature not rewritten", part);
}

/* create_ok -- create the set's pool with `attr`, return the handle */
static RPMEMpool *
create_ok(const struct tset *s, void *mem, size_t size,
	const struct rpmem_pool_attr *attr)
{
	unsigned nlanes = NLANES;
	return opened(rpmem_create(env.target, s->desc, mem, size, &nlanes,
		attr), &nlanes, "create");
}

/* open_ok -- open the set's pool, attributes into `attr` */
static RPMEMpool *
open_ok(const struct tset *s, void *mem, size_t size,
	struct rpmem_pool_attr *attr)
{
	unsigned nlanes = NLANES;
	if (attr)
		memset(attr, 0xa5, sizeof(*attr));
	return opened(rpmem_open(env.target, s->desc, mem, size, &nlanes,
		attr), &nlanes, "open");
}

/* ----------------------------------------------------------- lifecycle */

START_TEST(create_then_open_returns_attrs_byte_for_byte)
{
	struct tset s;
	struct rpmem_pool_attr want, got;
	void *mem = pool_map(POOL_SIZE);
	pool_set(&s, "roundtrip", 1, POOL_SIZE, NULL);
	attr_make(&want, 0);

	RPMEMpool *rpp = create_ok(&s, mem, POOL_SIZE, &want);
	ok(rpmem_close(rpp), "close after create");
	no_children("close after create");
	ck_assert_uint_eq(parts_exist(&s), 1);

	rpp = open_ok(&s, mem, POOL_SIZE, &got);
	attr_eq(&got, &want, "open after create");
	ok(rpmem_close(rpp), "close after open");
	no_children("close after open");
	set_unlink(&s);
}
END_TEST

START_TEST(set_attr_survives_close_and_reopen_on_every_part)
{
	struct tset s;
	struct rpmem_pool_attr first, second, got;
	size_t size = 4 * MIB;
	void *mem = pool_map(size);
	pool_set(&s, "setattr", 2, 4 * MIB, NULL);
	attr_make(&first, 1);
	attr_make(&second, 2);

	RPMEMpool *rpp = create_ok(&s, mem, size, &first);
	ok(rpmem_set_attr(rpp, &second), "set_attr");
	ok(rpmem_close(rpp), "close");

	/* an open checks every part header against part 0's */
	rpp = open_ok(&s, mem, size, &got);
	attr_eq(&got, &second, "open after set_attr");
	ok(rpmem_close(rpp), "close after open");
	for (unsigned i = 0; i < s.nparts; i++)
		part_signature_is(s.part[i], second.signature);
	no_children("close");
	set_unlink(&s);
}
END_TEST

START_TEST(nohdrs_pool_opens_with_zeroed_attrs)
{
	struct tset s;
	struct rpmem_pool_attr got, zero, some;
	void *mem = pool_map(POOL_SIZE);
	pool_set(&s, "nohdrs", 1, POOL_SIZE, "NOHDRS");
	memset(&zero, 0, sizeof(zero));
	attr_make(&some, 3);

	RPMEMpool *rpp = create_ok(&s, mem, POOL_SIZE, NULL);
	ok(rpmem_close(rpp), "close after create");

	rpp = open_ok(&s, mem, POOL_SIZE, &got);
	attr_eq(&got, &zero, "open of a NOHDRS pool");
	/* a pool without headers has nowhere to keep attributes */
	failed(rpmem_set_attr(rpp, &some), EINVAL, "set_attr on NOHDRS");
	ok(rpmem_close(rpp), "close after refused set_attr");
	no_children("close");
	set_unlink(&s);
}
END_TEST

START_TEST(nohdrs_set_with_attrs_is_einval)
{
	struct tset s;
	struct rpmem_pool_attr attr;
	unsigned nlanes = NLANES;
	void *mem = pool_map(POOL_SIZE);
	pool_set(&s, "nohdrs-attrs", 1, POOL_SIZE, "NOHDRS");
	attr_make(&attr, 4);

	refused(rpmem_create(env.target, s.desc, mem, POOL_SIZE, &nlanes,
		&attr), EINVAL, "create NOHDRS with attrs");
	ck_assert_msg(parts_exist(&s) == 0, "refused create left parts");
	no_children("refused create");
	set_unlink(&s);
}
END_TEST

START_TEST(headers_set_without_attrs_is_einval)
{
	struct tset s;
	struct rpmem_pool_attr zero;
	unsigned nlanes = NLANES;
	void *mem = pool_map(POOL_SIZE);
	pool_set(&s, "hdrs-noattrs", 1, POOL_SIZE, NULL);
	memset(&zero, 0, sizeof(zero));

	refused(rpmem_create(env.target, s.desc, mem, POOL_SIZE, &nlanes,
		NULL), EINVAL, "create with NULL attrs");
	nlanes = NLANES;
	refused(rpmem_create(env.target, s.desc, mem, POOL_SIZE, &nlanes,
		&zero), EINVAL, "create with zeroed attrs");
	ck_assert_msg(parts_exist(&s) == 0, "refused create left parts");
	no_children("refused create");
	set_unlink(&s);
}
END_TEST

START_TEST(subdirectory_descriptor_is_allowed)
{
	struct tset s;
	struct rpmem_pool_attr want, got;
	char dir[PATH_MAX];
	void *mem = pool_map(POOL_SIZE);
	fmt(dir, sizeof(dir), "%s/sub-ok", env.poolset_dir);
	ck_assert_msg(mkdir(dir, 0755) == 0, "%s: %s", dir, strerror(errno));
	set_write(&s, dir, "sub", env.part_dir, 1, POOL_SIZE, NULL);
	fmt(s.desc, sizeof(s.desc), "sub-ok/sub.set");
	attr_make(&want, 5);

	ok(rpmem_close(create_ok(&s, mem, POOL_SIZE, &want)), "close");
	RPMEMpool *rpp = open_ok(&s, mem, POOL_SIZE, &got);
	attr_eq(&got, &want, "open in a subdirectory");
	ok(rpmem_close(rpp), "close");
	ok(rpmem_remove(env.target, s.desc, RPMEM_REMOVE_POOL_SET),
		"remove in a subdirectory");
	ck_assert_msg(!exists(s.path) && parts_exist(&s) == 0,
		"remove left files behind");
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* -------------------------------------------------------------- remove */

START_TEST(remove_deletes_parts_and_open_says_enoent)
{
	struct tset s;
	struct rpmem_pool_attr attr;
	unsigned nlanes = NLANES;
	void *mem = pool_map(POOL_SIZE);
	pool_set(&s, "rm-parts", 1, POOL_SIZE, NULL);
	attr_make(&attr, 6);

	ok(rpmem_close(create_ok(&s, mem, POOL_SIZE, &attr)), "close");
	ok(rpmem_remove(env.target, s.desc, 0), "remove");
	no_children("remove");
	ck_assert_msg(parts_exist(&s) == 0, "remove kept the part");
	ck_assert_msg(exists(s.path), "remove without POOL_SET took the set");

	refused(rpmem_open(env.target, s.desc, mem, POOL_SIZE, &nlanes,
		&attr), ENOENT, "open after remove");
	no_children("refused open");
	set_unlink(&s);
}
END_TEST

START_TEST(remove_pool_set_flag_deletes_the_set_file)
{
	struct tset s;
	struct rpmem_pool_attr attr;
	void *mem = pool_map(POOL_SIZE);
	pool_set(&s, "rm-set", 1, POOL_SIZE, NULL);
	attr_make(&attr, 7);

	ok(rpmem_close(create_ok(&s, mem, POOL_SIZE, &attr)), "close");
	ok(rpmem_remove(env.target, s.desc, RPMEM_REMOVE_POOL_SET),
		"remove with POOL_SET");
	ck_assert_msg(parts_exist(&s) == 0, "remove kept the part");
	ck_assert_msg(!exists(s.path), "POOL_SET kept the set file");
	no_children("remove");
}
END_TEST

START_TEST(remove_force_ignores_missing_parts)
{
	struct tset s;
	pool_set(&s, "rm-force", 2, 4 * MIB, NULL);

	ok(rpmem_remove(env.target, s.desc,
		RPMEM_REMOVE_FORCE | RPMEM_REMOVE_POOL_SET),
		"forced remove of a never created pool");
	ck_assert_msg(!exists(s.path), "POOL_SET kept the set file");
	no_children("remove");
}
END_TEST

START_TEST(remove_missing_set_is_enoent)
{
	failed(rpmem_remove(env.target, "rm-no-such.set", 0), ENOENT,
		"remove of a missing set");
	no_children("remove");
}
END_TEST

START_TEST(remove_unknown_flags_is_einval_without_ssh)
{
	static const int bad[] = { 0x4, 0x8 | RPMEM_REMOVE_FORCE, -1,
		INT_MIN };
	struct tset s;
	char what[64];
	pool_set(&s, "rm-flags", 1, POOL_SIZE, NULL);
	victims_make(&s);

	unsigned before = ssh_runs();
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fmt(what, sizeof(what), "remove flags 0x%x", (unsigned)bad[i]);
		failed(rpmem_remove(env.target, s.desc, bad[i]), EINVAL,
			what);
	}
	ck_assert_msg(ssh_runs() == before, "bad flags started ssh");
	ck_assert_msg(parts_exist(&s) == 1 && exists(s.path),
		"bad flags removed files");
	set_unlink(&s);
}
END_TEST

/* -------------------------------------------------------------- errors */

START_TEST(open_missing_set_is_enoent_naming_it)
{
	const char *desc = "no-such-pool.set";
	struct rpmem_pool_attr attr;
	unsigned nlanes = NLANES;
	void *mem = pool_map(POOL_SIZE);

	refused(rpmem_open(env.target, desc, mem, POOL_SIZE, &nlanes, &attr),
		ENOENT, "open of a missing set");
	ck_assert_msg(strstr(last_msg, desc) || strcasestr(last_msg, "exist"),
		"rpmem_errormsg \"%s\" names neither %s nor the cause",
		last_msg, desc);
	no_children("refused open");
}
END_TEST

START_TEST(create_over_existing_pool_is_eexist_and_keeps_it)
{
	struct tset s;
	struct rpmem_pool_attr first, second, got;
	unsigned nlanes = NLANES;
	void *mem = pool_map(POOL_SIZE);
	pool_set(&s, "exists", 1, POOL_SIZE, NULL);
	attr_make(&first, 8);
	attr_make(&second, 9);

	ok(rpmem_close(create_ok(&s, mem, POOL_SIZE, &first)), "close");
	refused(rpmem_create(env.target, s.desc, mem, POOL_SIZE, &nlanes,
		&second), EEXIST, "second create");
	no_children("refused create");

	RPMEMpool *rpp = open_ok(&s, mem, POOL_SIZE, &got);
	attr_eq(&got, &first, "open after refused create");
	ok(rpmem_close(rpp), "close");
	set_unlink(&s);
}
END_TEST

START_TEST(create_bigger_than_set_is_efbig_and_leaves_nothing)
{
	struct tset s;
	struct rpmem_pool_attr attr;
	unsigned nlanes = NLANES;
	size_t size = 32 * MIB;
	void *mem = pool_map(size);
	pool_set(&s, "too-small", 1, POOL_SIZE, NULL);
	attr_make(&attr, 10);

	refused(rpmem_create(env.target, s.desc, mem, size, &nlanes, &attr),
		EFBIG, "create of 32 MiB from an 8 MiB set");
	ck_assert_msg(parts_exist(&s) == 0, "refused create left the part");
	no_children("refused create");
	set_unlink(&s);
}
END_TEST

START_TEST(open_bigger_than_pool_is_efbig)
{
	struct tset s;
	struct rpmem_pool_attr attr, got;
	unsigned nlanes = NLANES;
	size_t size = 32 * MIB;
	void *mem = pool_map(size);
	pool_set(&s, "open-big", 1, POOL_SIZE, NULL);
	attr_make(&attr, 11);

	ok(rpmem_close(create_ok(&s, mem, POOL_SIZE, &attr)), "close");
	refused(rpmem_open(env.target, s.desc, mem, size, &nlanes, &got),
		EFBIG, "open of 32 MiB from an 8 MiB pool");
	no_children("refused open");

	RPMEMpool *rpp = open_ok(&s, mem, POOL_SIZE, &got);
	attr_eq(&got, &attr, "open after refused open");
	ok(rpmem_close(rpp), "close");
	set_unlink(&s);
}
END_TEST

/*
 * R12: a second handle on a pool, or removing it, is refused while the
 * first handle holds it; the first keeps working
 */
START_TEST(second_handle_on_same_pool_is_ebusy)
{
	struct tset s;
	struct rpmem_pool_attr attr, got;
	unsigned nlanes = NLANES;
	void *mem1 = pool_map(POOL_SIZE);
	void *mem2 = pool_map(POOL_SIZE);
	pool_set(&s, "busy", 1, POOL_SIZE, NULL);
	attr_make(&attr, 12);

	RPMEMpool *first = create_ok(&s, mem1, POOL_SIZE, &attr);
	refused(rpmem_open(env.target, s.desc, mem2, POOL_SIZE, &nlanes,
		&got), EBUSY, "open while created");
	nlanes = NLANES;
	refused(rpmem_create(env.target, s.desc, mem2, POOL_SIZE, &nlanes,
		&attr), EBUSY, "create while created");
	failed(rpmem_remove(env.target, s.desc, RPMEM_REMOVE_POOL_SET), EBUSY,
		"remove while created");
	ck_assert_msg(parts_exist(&s) == 1 && exists(s.path),
		"a refused remove deleted files of a pool in use");
	ok(rpmem_set_attr(first, &attr), "set_attr on the first handle");
	ok(rpmem_close(first), "close of the first handle");

	first = open_ok(&s, mem1, POOL_SIZE, &got);
	nlanes = NLANES;
	refused(rpmem_open(env.target, s.desc, mem2, POOL_SIZE, &nlanes,
		&got), EBUSY, "open while opened");
	ok(rpmem_close(first), "close");

	RPMEMpool *rpp = open_ok(&s, mem2, POOL_SIZE, &got);
	attr_eq(&got, &attr, "open after the holder closed");
	ok(rpmem_close(rpp), "close");
	no_children("close");
	set_unlink(&s);
}
END_TEST

/* ----------------------------------------------------------- arguments */

START_TEST(bad_create_open_arguments_are_einval_without_ssh)
{
	struct tset s;
	struct rpmem_pool_attr attr;
	size_t pg = page_size();
	char *mem = pool_map(POOL_SIZE);
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
		{ "NULL pool_set_name", env.target, NULL, mem, POOL_SIZE, 4 },
		{ "NULL pool_addr", env.target, s.desc, NULL, POOL_SIZE, 4 },
		{ "unaligned pool_addr", env.target, s.desc, mem + 8,
			POOL_SIZE - pg, 4 },
		{ "pool_size 0", env.target, s.desc, mem, 0, 4 },
		{ "unaligned pool_size", env.target, s.desc, mem,
			POOL_SIZE - 8, 4 },
		{ "pool_size half a page", env.target, s.desc, mem, pg / 2,
			4 },
		{ "NULL nlanes", env.target, s.desc, mem, POOL_SIZE, -1 },
		{ "*nlanes 0", env.target, s.desc, mem, POOL_SIZE, 0 },
		{ "a 4096-byte pool_set_name", env.target, long_desc, mem,
			POOL_SIZE, 4 },
		{ "a range wrapping the address space", env.target, s.desc,
			(void *)(UINTPTR_MAX - pg + 1), 2 * pg, 4 },
	};
	char what[128];
	unsigned before = ssh_runs();

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
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
	void *mem = pool_map(POOL_SIZE);
	attr_make(&attr, 16);
	char what[128];
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		unsigned before = ssh_runs();
		setenv(c[i].var, c[i].val, 1);
		unsigned nlanes = NLANES;
		fmt(what, sizeof(what), "create with %s=%s", c[i].var,
			c[i].val);
		refused(rpmem_create(env.target, "lanesec.set", mem, POOL_SIZE,
			&nlanes, &attr), c[i].err ? c[i].err : EINVAL, what);
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
	void *mem = pool_map(POOL_SIZE);
	attr_make(&attr, 14);
	fmt(marker, sizeof(marker), "%s/proxy-marker", env.outside_dir);
	fmt(t[0], sizeof(t[0]), "-oProxyCommand=touch %s", marker);
	fmt(t[1], sizeof(t[1]), "user@-oProxyCommand=touch %s", marker);
	fmt(t[2], sizeof(t[2]), "user@-host");
	fmt(t[3], sizeof(t[3]), "-l");

	unsigned before = ssh_runs();
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
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
	void *mem = pool_map(POOL_SIZE);
	attr_make(&attr, 15);

	unsigned before = ssh_runs();
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
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
	failed(rpmem_remove(env.target, NULL, 0), EINVAL,
		"remove NULL pool_set");
	static char name[4097];
	memset(name, 'a', sizeof(name) - 1);
	failed(rpmem_remove(env.target, name, 0), EINVAL,
		"remove of a 4096-byte name");
	msg_has("pool set name longer than 4095 bytes", "a 4096-byte name");
	/* 4095 quotes, each four bytes quoted for the remote shell: more
	 * than the command line librpmem hands to ssh */
	memset(name, '\'', sizeof(name) - 2);
	name[sizeof(name) - 2] = '\0';
	failed(rpmem_remove(env.target, name, 0), ENAMETOOLONG,
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
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *m = rpmem_check_version(bad[i][0], bad[i][1]);
		ck_assert_msg(m != NULL, "version %u.%u accepted", bad[i][0],
			bad[i][1]);
		ck_assert_msg(strstr(m, "version mismatch") != NULL,
			"version %u.%u: \"%s\"", bad[i][0], bad[i][1], m);
		ck_assert_str_eq(rpmem_errormsg(), m);
	}
}
END_TEST

/* --------------------------------------------------------- confinement */

/*
 * expect_confined -- S1: create, open and remove through `desc`, which
 * leads to the set `s` outside poolset-dir, are refused with `err` (remove
 * with one of `rm_errs`, even forced) and touch none of its files
 */
static void
expect_confined(const struct tset *s, const char *desc, int err,
	const int *rm_errs)
{
	struct rpmem_pool_attr attr;
	unsigned nlanes = NLANES;
	char what[PATH_MAX + 64];
	void *mem = pool_map(POOL_SIZE);
	attr_make(&attr, 16);

	fmt(what, sizeof(what), "create via \"%s\"", desc);
	refused(rpmem_create(env.target, desc, mem, POOL_SIZE, &nlanes,
		&attr), err, what);
	ck_assert_msg(parts_exist(s) == 0, "%s created %s", what, s->part[0]);

	nlanes = NLANES;
	fmt(what, sizeof(what), "open via \"%s\"", desc);
	refused(rpmem_open(env.target, desc, mem, POOL_SIZE, &nlanes, &attr),
		err, what);

	victims_make(s);
	fmt(what, sizeof(what), "forced remove via \"%s\"", desc);
	failed_in(rpmem_remove(env.target, desc,
		RPMEM_REMOVE_FORCE | RPMEM_REMOVE_POOL_SET), rm_errs, what);
	ck_assert_msg(parts_exist(s) == s->nparts, "%s deleted a part", what);
	ck_assert_msg(exists(s->path), "%s deleted the set file", what);
	no_children(what);
	for (unsigned i = 0; i < s->nparts; i++)
		unlink_quiet(s->part[i]);
	munmap(mem, POOL_SIZE);
}

/* outside_set -- a set file and its parts in dir, outside poolset-dir */
static void
outside_set(struct tset *s, const char *dir, const char *name)
{
	set_write(s, dir, name, dir, 1, POOL_SIZE, NULL);
}

/* S1 */
START_TEST(dotdot_descriptor_is_eacces)
{
	static const int rm_errs[] = { EACCES, 0 };
	char parent[PATH_MAX], outside[PATH_MAX], up[PATH_MAX];
	struct tset s;

	fmt(up, sizeof(up), "%s/..", env.poolset_dir);
	ck_assert_ptr_nonnull(realpath(up, parent));
	ck_assert_ptr_nonnull(realpath(env.outside_dir, outside));
	ck_assert_msg(strcmp(parent, outside) == 0,
		"RPMEM_TEST_OUTSIDE_DIR must be the poolset dir's parent");

	outside_set(&s, env.outside_dir, "esc-dotdot");
	expect_confined(&s, "../esc-dotdot.set", EACCES, rm_errs);
	expect_confined(&s, "./../esc-dotdot.set", EACCES, rm_errs);
	set_unlink(&s);
}
END_TEST

/* S1: PMDK maps an absolute descriptor to BADNAME, i.e. EINVAL */
START_TEST(absolute_descriptor_is_einval)
{
	static const int rm_errs[] = { EINVAL, EBADF, EACCES, 0 };
	struct tset s;

	outside_set(&s, env.outside_dir, "esc-abs");
	expect_confined(&s, s.path, EINVAL, rm_errs);
	set_unlink(&s);
}
END_TEST

/* S1 */
START_TEST(symlink_to_outside_set_is_eacces)
{
	static const int rm_errs[] = { EACCES, 0 };
	char lnk[PATH_MAX];
	struct tset s;

	outside_set(&s, env.outside_dir, "esc-link-target");
	fmt(lnk, sizeof(lnk), "%s/esc-link.set", env.poolset_dir);
	ck_assert_msg(symlink(s.path, lnk) == 0, "symlink %s: %s", lnk,
		strerror(errno));
	expect_confined(&s, "esc-link.set", EACCES, rm_errs);
	ck_assert_int_eq(unlink(lnk), 0);
	set_unlink(&s);
}
END_TEST

/* S1 */
START_TEST(symlinked_directory_to_outside_is_eacces)
{
	static const int rm_errs[] = { EACCES, 0 };
	char dir[PATH_MAX], lnk[PATH_MAX];
	struct tset s;

	fmt(dir, sizeof(dir), "%s/esc-dir-target", env.outside_dir);
	ck_assert_msg(mkdir(dir, 0755) == 0, "%s: %s", dir, strerror(errno));
	outside_set(&s, dir, "escdir");
	fmt(lnk, sizeof(lnk), "%s/esc-dir", env.poolset_dir);
	ck_assert_msg(symlink(dir, lnk) == 0, "symlink %s: %s", lnk,
		strerror(errno));
	expect_confined(&s, "esc-dir/escdir.set", EACCES, rm_errs);
	ck_assert_int_eq(unlink(lnk), 0);
	set_unlink(&s);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* ----------------------------------------------------------- badconfig */

/* R16: rpmemd refuses a broken config and the client shows file:line */
START_TEST(bad_config_create_is_einval_naming_file_line)
{
	struct tset s;
	struct rpmem_pool_attr attr;
	unsigned nlanes = NLANES;
	void *mem = pool_map(POOL_SIZE);
	pool_set(&s, "badcfg-create", 1, POOL_SIZE, NULL);
	attr_make(&attr, 17);

	refused(rpmem_create(env.target, s.desc, mem, POOL_SIZE, &nlanes,
		&attr), EINVAL, "create with a bad rpmemd config");
	msg_has(env.expect_msg, "create with a bad rpmemd config");
	ck_assert_msg(parts_exist(&s) == 0, "a refused daemon created parts");
	no_children("refused create");
	set_unlink(&s);
}
END_TEST

/* R16 */
START_TEST(bad_config_open_is_einval_naming_file_line)
{
	struct rpmem_pool_attr attr;
	unsigned nlanes = NLANES;
	void *mem = pool_map(POOL_SIZE);

	refused(rpmem_open(env.target, "badcfg-open.set", mem, POOL_SIZE,
		&nlanes, &attr), EINVAL, "open with a bad rpmemd config");
	msg_has(env.expect_msg, "open with a bad rpmemd config");
	no_children("refused open");
}
END_TEST

/* R16: in remove mode the refusal is rpmemd's exit status */
START_TEST(bad_config_remove_is_einval_and_removes_nothing)
{
	struct tset s;
	pool_set(&s, "badcfg-remove", 1, POOL_SIZE, NULL);
	victims_make(&s);

	failed(rpmem_remove(env.target, s.desc,
		RPMEM_REMOVE_FORCE | RPMEM_REMOVE_POOL_SET), EINVAL,
		"remove with a bad rpmemd config");
	ck_assert_msg(parts_exist(&s) == 1 && exists(s.path),
		"a refused daemon removed files");
	no_children("refused remove");
	set_unlink(&s);
}
END_TEST

/* ------------------------------------------------------------ nodaemon */

START_TEST(missing_daemon_create_is_econnreset_with_shell_message)
{
	struct tset s;
	struct rpmem_pool_attr attr;
	unsigned nlanes = NLANES;
	void *mem = pool_map(POOL_SIZE);
	pool_set(&s, "nodaemon-create", 1, POOL_SIZE, NULL);
	attr_make(&attr, 18);

	refused(rpmem_create(env.target, s.desc, mem, POOL_SIZE, &nlanes,
		&attr), ECONNRESET, "create without rpmemd");
	msg_has(env.expect_msg, "create without rpmemd");
	no_children("refused create");
	set_unlink(&s);
}
END_TEST

START_TEST(missing_daemon_open_is_econnreset_with_shell_message)
{
	struct rpmem_pool_attr attr;
	unsigned nlanes = NLANES;
	void *mem = pool_map(POOL_SIZE);

	refused(rpmem_open(env.target, "nodaemon-open.set", mem, POOL_SIZE,
		&nlanes, &attr), ECONNRESET, "open without rpmemd");
	msg_has(env.expect_msg, "open without rpmemd");
	no_children("refused open");
}
END_TEST

START_TEST(missing_daemon_remove_fails_and_removes_nothing)
{
	struct tset s;
	pool_set(&s, "nodaemon-remove", 1, POOL_SIZE, NULL);
	victims_make(&s);

	errno = 0;
	int r = rpmem_remove(env.target, s.desc, RPMEM_REMOVE_POOL_SET);
	int e = errno;
	ck_assert_msg(r == -1 && e != 0, "remove without rpmemd: %d, %s", r,
		ename(e));
	ck_assert_msg(parts_exist(&s) == 1 && exists(s.path),
		"files removed without a daemon");
	no_children("refused remove");
	set_unlink(&s);
}
END_TEST

START_TEST(unreachable_sshd_is_econnreset_with_ssh_message)
{
	struct rpmem_pool_attr attr;
	unsigned nlanes = NLANES;
	void *mem = pool_map(POOL_SIZE);
	attr_make(&attr, 19);

	refused(rpmem_create(env.dead_target, "dead.set", mem, POOL_SIZE,
		&nlanes, &attr), ECONNRESET,
		"create on a port without sshd");
	msg_has("refused", "create on a port without sshd");
	nlanes = NLANES;
	refused(rpmem_open(env.dead_target, "dead.set", mem, POOL_SIZE,
		&nlanes, &attr), ECONNRESET, "open on a port without sshd");
	msg_has("refused", "open on a port without sshd");
	failed(rpmem_remove(env.dead_target, "dead.set", 0), ECONNRESET,
		"remove on a port without sshd");
	no_children("unreachable sshd");
}
END_TEST

/* ---------------------------------------------------------- fakedaemon */

/* R8, R9: a malformed reply fails the call; no crash, hang or leak */
START_TEST(malformed_reply_to_create_fails_cleanly)
{
	struct tset s;
	struct rpmem_pool_attr attr;
	unsigned nlanes = NLANES;
	void *mem = pool_map(POOL_SIZE);
	pool_set(&s, "fake-create", 1, POOL_SIZE, NULL);
	attr_make(&attr, 20);

	refused_in(rpmem_create(env.target, s.desc, mem, POOL_SIZE, &nlanes,
		&attr), env.expect_errno, "create against a fake daemon");
	if (env.expect_msg)
		msg_has(env.expect_msg, "create against a fake daemon");
	no_children("create against a fake daemon");
	set_unlink(&s);
}
END_TEST

/* R8, R9 */
START_TEST(malformed_reply_to_open_fails_cleanly)
{
	struct rpmem_pool_attr attr;
	unsigned nlanes = NLANES;
	void *mem = pool_map(POOL_SIZE);

	refused_in(rpmem_open(env.target, "fake-open.set", mem, POOL_SIZE,
		&nlanes, &attr), env.expect_errno,
		"open against a fake daemon");
	if (env.expect_msg)
		msg_has(env.expect_msg, "open against a fake daemon");
	no_children("open against a fake daemon");
}
END_TEST

/* ---------------------------------------------------------------- main */

/* tcase -- a new test case `name`, added to suite `s` */
static TCase *
tcase(Suite *s, const char *name)
{
	TCase *tc = tcase_create(name);
	suite_add_tcase(s, tc);
	return tc;
}

/* suite_main -- the real daemon */
static Suite *
suite_main(void)
{
	Suite *s = suite_create("control-main");
	TCase *tc = tcase(s, "lifecycle");
	tcase_add_test(tc, create_then_open_returns_attrs_byte_for_byte);
	tcase_add_test(tc, set_attr_survives_close_and_reopen_on_every_part);
	tcase_add_test(tc, nohdrs_pool_opens_with_zeroed_attrs);
	tcase_add_test(tc, nohdrs_set_with_attrs_is_einval);
	tcase_add_test(tc, headers_set_without_attrs_is_einval);
	tcase_add_test(tc, subdirectory_descriptor_is_allowed);

	tc = tcase(s, "remove");
	tcase_add_test(tc, remove_deletes_parts_and_open_says_enoent);
	tcase_add_test(tc, remove_pool_set_flag_deletes_the_set_file);
	tcase_add_test(tc, remove_force_ignores_missing_parts);
	tcase_add_test(tc, remove_missing_set_is_enoent);
	tcase_add_test(tc, remove_unknown_flags_is_einval_without_ssh);

	tc = tcase(s, "errors");
	tcase_add_test(tc, open_missing_set_is_enoent_naming_it);
	tcase_add_test(tc, create_over_existing_pool_is_eexist_and_keeps_it);
	tcase_add_test(tc, create_bigger_than_set_is_efbig_and_leaves_nothing);
	tcase_add_test(tc, open_bigger_than_pool_is_efbig);
	tcase_add_test(tc, second_handle_on_same_pool_is_ebusy);

	tc = tcase(s, "arguments");
	tcase_add_test(tc, bad_create_open_arguments_are_einval_without_ssh);
	tcase_add_test(tc, option_like_targets_are_refused_without_ssh);
	tcase_add_test(tc, bad_settings_are_refused_without_a_session);
	tcase_add_test(tc, malformed_targets_are_einval_without_ssh);
	tcase_add_test(tc, remove_null_or_overlong_arguments_are_refused);
	tcase_add_test(tc, close_null_is_einval);
	tcase_add_test(tc, check_version_accepts_1_3_and_refuses_newer);

	tc = tcase(s, "confinement");
	tcase_add_test(tc, dotdot_descriptor_is_eacces);
	tcase_add_test(tc, absolute_descriptor_is_einval);
	tcase_add_test(tc, symlink_to_outside_set_is_eacces);
	tcase_add_test(tc, symlinked_directory_to_outside_is_eacces);
	return s;
}

/* suite_badconfig -- rpmemd with a broken config file */
static Suite *
suite_badconfig(void)
{
	Suite *s = suite_create("control-badconfig");
	TCase *tc = tcase(s, "badconfig");
	tcase_add_test(tc, bad_config_create_is_einval_naming_file_line);
	tcase_add_test(tc, bad_config_open_is_einval_naming_file_line);
	tcase_add_test(tc, bad_config_remove_is_einval_and_removes_nothing);
	return s;
}

/* suite_nodaemon -- nothing answers at the far end */
static Suite *
suite_nodaemon(void)
{
	Suite *s = suite_create("control-nodaemon");
	TCase *tc = tcase(s, "nodaemon");
	tcase_add_test(tc,
		missing_daemon_create_is_econnreset_with_shell_message);
	tcase_add_test(tc,
		missing_daemon_open_is_econnreset_with_shell_message);
	tcase_add_test(tc, missing_daemon_remove_fails_and_removes_nothing);
	tcase_add_test(tc, unreachable_sshd_is_econnreset_with_ssh_message);
	return s;
}

/* suite_fakedaemon -- a daemon that answers with malformed messages */
static Suite *
suite_fakedaemon(void)
{
	Suite *s = suite_create("control-fakedaemon");
	TCase *tc = tcase(s, "fakedaemon");
	tcase_add_test(tc, malformed_reply_to_create_fails_cleanly);
	tcase_add_test(tc, malformed_reply_to_open_fails_cleanly);
	return s;
}

/* need -- the value of a required environment variable, or NULL */
static const char *
need(const char *name, bool *missing)
{
	const char *v = getenv(name);
	if (v == NULL || v[0] == '\0') {
		fprintf(stderr, "control: %s is not set (run control.sh)\n",
			name);
		*missing = true;
		return NULL;
	}
	return v;
}

/* errno_parse -- "EPROTO,ECONNRESET" into env.expect_errno */
static int
errno_parse(const char *list)
{
	char buf[256];
	size_t n = 0;
	if (strlen(list) >= sizeof(buf))
		return -1;
	strcpy(buf, list);
	for (char *save, *tok = strtok_r(buf, ", ", &save); tok;
			tok = strtok_r(NULL, ", ", &save)) {
		int e;
		for (e = 1; e < 4096; e++) {
			const char *name = strerrorname_np(e);
			if (name && strcmp(name, tok) == 0)
				break;
		}
		if (e == 4096 || n == MAX_ERRS) {
			fprintf(stderr, "control: bad errno name '%s'\n", tok);
			return -1;
		}
		env.expect_errno[n++] = e;
	}
	env.expect_errno[n] = 0;
	return n ? 0 : -1;
}

/* env_load -- read what control.sh set for `group` */
static int
env_load(const char *group)
{
	bool missing = false;
	env.target = need("RPMEM_TEST_TARGET", &missing);
	env.poolset_dir = need("RPMEM_TEST_POOLSET_DIR", &missing);
	env.outside_dir = need("RPMEM_TEST_OUTSIDE_DIR", &missing);
	env.part_dir = need("RPMEM_TEST_PART_DIR", &missing);
	env.ssh_calls = getenv("RPMEM_TEST_SSH_CALLS");
	if (env.ssh_calls && env.ssh_calls[0] == '\0')
		env.ssh_calls = NULL;
	if (strcmp(group, "badconfig") == 0 || strcmp(group, "nodaemon") == 0)
		env.expect_msg = need("RPMEM_TEST_EXPECT_MSG", &missing);
	if (strcmp(group, "nodaemon") == 0)
		env.dead_target = need("RPMEM_TEST_DEAD_TARGET", &missing);
	if (strcmp(group, "fakedaemon") == 0) {
		const char *l = need("RPMEM_TEST_EXPECT_ERRNO", &missing);
		if (l && errno_parse(l))
			missing = true;
		/* optional there */
		env.expect_msg = getenv("RPMEM_TEST_EXPECT_MSG");
		if (env.expect_msg && env.expect_msg[0] == '\0')
			env.expect_msg = NULL;
	}
	return missing ? -1 : 0;
}

/* main -- run the group named by argv[1] (default "main") */
int
main(int argc, char *argv[])
{
	static const struct itest_group groups[] = {
		{ "main", suite_main },
		{ "badconfig", suite_badconfig },
		{ "nodaemon", suite_nodaemon },
		{ "fakedaemon", suite_fakedaemon },
	};
	return itest_main(argc, argv, groups,
		sizeof(groups) / sizeof(groups[0]), env_load);
}
