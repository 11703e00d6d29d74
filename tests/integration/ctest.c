/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctest.c -- helpers of the control-path tests: pool set files, the
 * local pool, ssh runs and children, refusals and their messages
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctest.h"

/* rpmem_errormsg() of the last expected failure */
char last_msg[MSG_MAX];

/* exists -- is there a directory entry (even a dangling link) at path? */
bool
exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

/* set_write -- write set_dir/name.set naming nparts parts in part_dir */
void
set_write(struct tset *s, const char *set_dir, const char *name,
	const char *part_dir, unsigned nparts, size_t part_size,
	const char *option)
{
	ck_assert_uint_le(nparts, MAX_PARTS);
	memset(s, 0, sizeof(*s));
	fmt(s->desc, sizeof(s->desc), "%s.set", name);
	fmt(s->path, sizeof(s->path), "%s/%s.set", set_dir, name);
	s->nparts = nparts;
	for (unsigned i = 0; i < nparts; i++)
		fmt(s->part[i], sizeof(s->part[i]), "%s/%s.part%u", part_dir,
			name, i);
	tu_poolset_write(s->path, s->part, nparts, part_size, option);
}

/* pool_set -- a set in the poolset dir with parts in the part dir */
void
pool_set(struct tset *s, const char *name, unsigned nparts,
	size_t part_size, const char *option)
{
	set_write(s, env.t.poolset_dir, name, env.t.part_dir, nparts, part_size,
		option);
}

/* set_unlink -- remove the set file and its parts */
void
set_unlink(const struct tset *s)
{
	tu_poolset_unlink(s->path, (const char (*)[PATH_MAX])s->part,
		s->nparts);
}

/* parts_exist -- how many of the set's part files exist */
unsigned
parts_exist(const struct tset *s)
{
	unsigned n = 0;
	for (unsigned i = 0; i < s->nparts; i++)
		n += exists(s->part[i]);
	return n;
}

/* victims_make -- create the set's parts as plain files, "victim" inside */
void
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

/* page_size -- the system page size */
size_t
page_size(void)
{
	long ps = sysconf(_SC_PAGESIZE);
	ck_assert_int_gt(ps, 0);
	return (size_t)ps;
}

/* ssh_runs -- how many times RPMEM_SSH was started so far */
unsigned
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
void
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
void
refused_in(RPMEMpool *rpp, const int *errs, const char *what)
{
	int e = errno;
	if (rpp != NULL)
		(void) rpmem_close(rpp);
	check_failure(rpp == NULL, e, errs, what);
}

/* refused -- create/open returned NULL with errno `err` */
void
refused(RPMEMpool *rpp, int err, const char *what)
{
	const int errs[] = { err, 0 };	/* leaves errno alone */
	refused_in(rpp, errs, what);
}

/* failed_in -- an int-returning call gave -1 with an errno in `errs` */
void
failed_in(int ret, const int *errs, const char *what)
{
	int e = errno;
	check_failure(ret == -1, e, errs, what);
}

/* failed -- an int-returning call gave -1 with errno `err` */
void
failed(int ret, int err, const char *what)
{
	const int errs[] = { err, 0 };	/* leaves errno alone */
	failed_in(ret, errs, what);
}

/* msg_has -- last_msg contains `needle` */
void
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

/* attr_make -- attributes with NUL and newline bytes, non-zero uuids */
void
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
void
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
void
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
RPMEMpool *
create_ok(const struct tset *s, void *mem, size_t size,
	const struct rpmem_pool_attr *attr)
{
	unsigned nlanes = NLANES;
	return opened(rpmem_create(env.t.target, s->desc, mem, size, &nlanes,
		attr), &nlanes, "create");
}

/* open_ok -- open the set's pool, attributes into `attr` */
RPMEMpool *
open_ok(const struct tset *s, void *mem, size_t size,
	struct rpmem_pool_attr *attr)
{
	unsigned nlanes = NLANES;
	if (attr)
		memset(attr, 0xa5, sizeof(*attr));
	return opened(rpmem_open(env.t.target, s->desc, mem, size, &nlanes,
		attr), &nlanes, "open");
}


/* ctest_tcase -- a new test case `name`, added to suite `s` */
TCase *
ctest_tcase(Suite *s, const char *name)
{
	TCase *tc = tcase_create(name);
	suite_add_tcase(s, tc);
	return tc;
}

/* reopens_with -- the set's pool opens with attributes `want`, closes */
void
reopens_with(const struct tset *s, void *mem, size_t size,
	const struct rpmem_pool_attr *want, const char *what)
{
	struct rpmem_pool_attr got;
	char msg[128];
	RPMEMpool *rpp = open_ok(s, mem, size, &got);
	attr_eq(&got, want, what);
	fmt(msg, sizeof(msg), "close after %s", what);
	tu_ok(rpmem_close(rpp), msg);
}

/*
 * create_refused -- a create of the set's pool with `attr` is refused
 * with `err`, makes no part and leaves no ssh behind
 */
void
create_refused(const struct tset *s, void *mem, size_t size,
	const struct rpmem_pool_attr *attr, int err, const char *what)
{
	unsigned nlanes = NLANES;
	refused(rpmem_create(env.t.target, s->desc, mem, size, &nlanes, attr),
		err, what);
	ck_assert_msg(parts_exist(s) == 0, "%s left parts", what);
	no_children(what);
}

/* open_refused -- an open of `desc` is refused with `err`, no ssh left */
void
open_refused(const char *desc, void *mem, size_t size, int err,
	const char *what)
{
	struct rpmem_pool_attr attr;
	unsigned nlanes = NLANES;
	refused(rpmem_open(env.t.target, desc, mem, size, &nlanes, &attr), err,
		what);
	no_children(what);
}
