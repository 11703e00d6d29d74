/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * daemon_pmdk.c -- what PMDK 1.12.1's own remote tests found in rpmemd,
 * checked on its stdin/stdout (dtest.h) and, where the case applies,
 * against PMDK's own rpmemd too (../shared/pmdk-1.12.1/bin/rpmemd), to
 * show that the behaviour is PMDK's; that half is skipped, saying so,
 * where the directory is absent.
 *
 *   exit status: 1 when the client vanishes without a CLOSE, 0 after a
 *     CLOSE (scenarios R1, R5)
 *   descriptors: inherited ones closed, a library's own kept (S5)
 *   --remove: never a part a session holds, --force or not; every
 *     other part when one is missing (R12, R13)
 *   unsafe shutdown: a replica that may be corrupt is refused on OPEN;
 *     healthy ones reopen after a close or a crash (R14, R18, R1)
 *
 * Environment: top_builddir (rpmemd, tests/integration/.libs/keepfd.so),
 * top_srcdir (../shared is found beside it), TMPDIR.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dtest.h"
#include "pool_hdr.h"
#include "proto.h"
#include "tu_check.h"

/* which rpmemd a case runs */
enum daemon_kind { OURS, PMDK };

static const char *const kind_names[] = { "ours", "PMDK's" };

/* pmdk_rpmemd -- PMDK's rpmemd, or NULL (said once) where it is absent */
static const char *
pmdk_rpmemd(void)
{
	static char path[PATH_MAX];
	const char *top = getenv("top_srcdir") ? getenv("top_srcdir") : ".";
	snprintf(path, sizeof(path), "%s/../shared/pmdk-1.12.1/bin/rpmemd",
		top);
	if (access(path, X_OK) == 0)
		return path;
	fprintf(stderr, "skipped: the PMDK half of this case: no %s\n",
		path);
	return NULL;
}

/* use -- make the next spawn run `kind`; false when it is absent */
static bool
use(enum daemon_kind kind)
{
	if (kind == OURS)
		return true;
	Dtest_exe = pmdk_rpmemd();
	Dtest_pmdk_client = true;
	return Dtest_exe != NULL;
}

/* in_dir -- Dtest_dir/name */
static const char *
in_dir(const char *name)
{
	static char path[4][512];
	static unsigned next;
	char *p = path[next++ % 4];
	snprintf(p, sizeof(path[0]), "%s/%s", Dtest_dir, name);
	return p;
}

/* exists -- the file is there */
static bool
exists(const char *name)
{
	struct stat st;
	return stat(in_dir(name), &st) == 0;
}

/* open_req -- OPEN of pool.set as the client of `kind` sends it */
static struct proto_req
open_req(enum daemon_kind kind)
{
	if (kind == OURS)
		return dtest_open_req(PROTO_MAJOR, PROTO_MINOR);
	/* PMDK serves sockets and verbs only */
	struct proto_req r = dtest_open_req(PROTO_MAJOR, PROTO_MINOR_PMDK);
	r.common.provider = PROTO_PROV_SOCKETS;
	return r;
}

/* start_open -- start the daemon of `kind` and OPEN pool.set */
static void
start_open(struct daemon *d, enum daemon_kind kind)
{
	dtest_start(d);
	struct proto_req r = open_req(kind);
	dtest_request(d, &r, 0);
}

/*
 * R1, R5: a client that vanishes (ssh EOF) without a CLOSE ends an
 * interrupted session, exit status 1, as PMDK's rpmemd does (scripts and
 * supervisors read it); after a CLOSE the exit status is 0
 */
static const struct {
	enum daemon_kind kind;
	bool open;
	bool close;
	int code;
} Endings[] = {
	{ OURS, false, false, 1 },
	{ OURS, true, false, 1 },
	{ OURS, true, true, 0 },
	/* PMDK's admits lanes before it reads again: set_attr_race.sh */
	{ PMDK, false, false, 1 },
};

START_TEST(client_gone_without_close_is_exit_1_close_is_exit_0)
{
	if (!use(Endings[_i].kind))
		return;
	struct daemon d;
	if (Endings[_i].open)
		start_open(&d, Endings[_i].kind);
	else
		dtest_start(&d);
	if (Endings[_i].close)
		dtest_close(&d, 0);
	dtest_finish(&d, Endings[_i].code);
	if (Endings[_i].kind == OURS)
		ck_assert(dtest_log_has(Endings[_i].close ? "session ended;" :
			"session ended without a CLOSE"));
}
END_TEST

/*
 * S5: a descriptor rpmemd inherited (9, dtest.c) is closed at start; one
 * a library opened before main() (keepfd.so, preloaded) stays its own,
 * open to the end: the library's last write reaches its file
 */
START_TEST(inherited_descriptor_closed_library_descriptor_kept)
{
	char shim[PATH_MAX], fdpath[64], link[PATH_MAX];
	snprintf(shim, sizeof(shim), "%s/tests/integration/.libs/keepfd.so",
		getenv("top_builddir") ? getenv("top_builddir") : ".");
	ck_assert_msg(access(shim, R_OK) == 0, "%s is not built", shim);
	const char *file = in_dir("keepfd.txt");
	setenv("LD_PRELOAD", shim, 1);
	setenv("KEEPFD_PATH", file, 1);
	struct daemon d;
	dtest_start(&d);
	unsetenv("LD_PRELOAD");
	unsetenv("KEEPFD_PATH");

	/* looked at before an OPEN gives descriptor 9 a use of its own */
	snprintf(fdpath, sizeof(fdpath), "/proc/%d/fd/9", (int)d.pid);
	ck_assert_msg(readlink(fdpath, link, sizeof(link) - 1) < 0,
		"rpmemd kept its inherited descriptor 9");
	snprintf(fdpath, sizeof(fdpath), "/proc/%d/fd/42", (int)d.pid);
	ssize_t n = readlink(fdpath, link, sizeof(link) - 1);
	ck_assert_msg(n > 0, "rpmemd closed the library's descriptor 42");
	link[n] = '\0';
	ck_assert_str_eq(link, file);
	struct proto_req r = open_req(OURS);
	dtest_request(&d, &r, 0);
	dtest_done(&d);

	char buf[256] = "";
	int fd = open(file, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_gt(read(fd, buf, sizeof(buf) - 1), 0);
	close(fd);
	ck_assert_msg(strstr(buf, "written at exit"), "the library's write "
		"at exit did not reach its file: '%s'", buf);
}
END_TEST

/* run_remove -- `rpmemd --remove desc [--force]`, of the kind use()
 * chose: its exit status */
static int
run_remove(const char *desc, bool force)
{
	char exe[PATH_MAX], psd[300], log[320];
	snprintf(exe, sizeof(exe), "%s", dtest_exe());
	snprintf(psd, sizeof(psd), "--poolset-dir=%s", Dtest_dir);
	snprintf(log, sizeof(log), "--log-file=%s", Dtest_log);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(null, 1);
		char *argv[] = { exe, psd, log, "--remove", (char *)desc,
			force ? "--force" : NULL, NULL };
		execv(exe, argv);
		_exit(127);
	}
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/*
 * R12: --remove of a pool a session holds unlinks none of its parts,
 * --force or not (the session would write on into unlinked files).
 * PMDK's does not unlink it either; it exits 0 with --force, ours says
 * EBUSY (16) whatever the flag
 */
static const struct {
	enum daemon_kind kind;
	bool force;
	int code;		/* -1: any failure */
} Held_removes[] = {
	{ OURS, false, EBUSY },
	{ OURS, true, EBUSY },
	{ PMDK, false, -1 },
	{ PMDK, true, 0 },
};

START_TEST(remove_never_unlinks_a_pool_a_session_holds)
{
	struct daemon holder;
	start_open(&holder, OURS);
	if (use(Held_removes[_i].kind)) {
		int code = run_remove("pool.set", Held_removes[_i].force);
		if (Held_removes[_i].code < 0)
			ck_assert_int_ne(code, 0);
		else
			ck_assert_int_eq(code, Held_removes[_i].code);
		ck_assert_msg(exists("part0"), "%s rpmemd unlinked a part "
			"of a pool in use", kind_names[Held_removes[_i].kind]);
	}
	dtest_done(&holder);
}
END_TEST

/*
 * R13: --remove without --force of a pool with a part missing removes
 * every other part and still fails with ENOENT, as PMDK's does
 * (pmempool rm relies on it); the set file stays
 */
START_TEST(remove_with_a_part_missing_removes_the_rest)
{
	static const enum daemon_kind kinds[] = { OURS, PMDK };
	if (!use(kinds[_i]))
		return;
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "cd %s && printf 'PMEMPOOLSET\\n"
		"OPTION NOHDRS\\n2M %s/m0\\n2M %s/m1\\n2M %s/m2\\n' > m.set && "
		"truncate -s 2M m0 m2", Dtest_dir, Dtest_dir, Dtest_dir,
		Dtest_dir);
	dtest_sys(cmd);
	ck_assert_int_eq(run_remove("m.set", false), ENOENT);
	ck_assert_msg(!exists("m0") && !exists("m2"), "%s rpmemd left the "
		"parts it could remove", kind_names[kinds[_i]]);
	ck_assert(exists("m.set"));
}
END_TEST

/* hdr_rw -- read (write == false) or write part h0's header on disk */
static void
hdr_rw(struct pool_hdr *hdr, bool write)
{
	int fd = open(in_dir("h0"), O_RDWR);
	ck_assert_int_ge(fd, 0);
	ssize_t n = write ? pwrite(fd, hdr, sizeof(*hdr), 0) :
		pread(fd, hdr, sizeof(*hdr), 0);
	ck_assert_int_eq(n, (ssize_t)sizeof(*hdr));
	close(fd);
}

/* sds_pool -- h.set, one 4 MiB part with a header that has the SDS
 * feature, created through our rpmemd and closed */
static struct proto_req
sds_pool(void)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "printf 'PMEMPOOLSET\\n4M %s/h0\\n' "
		"> %s/h.set", Dtest_dir, Dtest_dir);
	dtest_sys(cmd);
	struct proto_req r = dtest_open_req(PROTO_MAJOR, PROTO_MINOR);
	r.type = PROTO_MSG_CREATE;
	strcpy(r.desc, "h.set");
	r.has_attr = true;
	memcpy(r.attr.signature, "PMEMOBJ", 8);
	r.attr.major = 6;
	r.attr.incompat_features = POOL_FEAT_CKSUM_2K | POOL_FEAT_SDS;
	for (unsigned i = 0; i < RPMEM_POOL_HDR_UUID_LEN; i++)
		r.attr.uuid[i] = r.attr.poolset_uuid[i] = (uint8_t)(i + 1);
	dtest_serve_once(&r);
	r.type = PROTO_MSG_OPEN;
	r.has_attr = false;
	return r;
}

/* sds_of -- the shutdown state on disk, and the header still valid */
static struct pool_sds
sds_of(void)
{
	struct pool_hdr hdr;
	hdr_rw(&hdr, false);
	ck_assert_msg(pool_hdr_valid(&hdr), "h0's header is not valid");
	return hdr.sds;
}

/*
 * R14, R18: a replica whose header says it may be corrupt (the devices'
 * unsafe shutdown count changed while it was open: shutdown state dirty)
 * is refused on OPEN with PMDK's status, "Invalid pool set
 * configuration", so libpmempool takes it as broken and never syncs from
 * it (pmempool_sync_remote TEST20); PMDK's rpmemd refuses it the same
 * way.  The states PMDK opens (count changed while closed, dirty with the
 * count unchanged after a crash, a torn state) open and are recorded
 * afresh, dirty while open and clean again after the CLOSE.
 */
static const struct {
	enum daemon_kind kind;
	uint64_t usc;
	bool dirty;
	bool torn;		/* the state's checksum is wrong */
	uint32_t status;
} Corrupt_opens[] = {
	{ OURS, 999, true, false, PROTO_ERR_POOL_CFG },
	{ PMDK, 999, true, false, PROTO_ERR_POOL_CFG },
	{ OURS, 999, false, false, 0 },
	{ OURS, 0, true, false, 0 },
	{ OURS, 999, true, true, 0 },
};

START_TEST(possibly_corrupt_replica_is_refused_on_open)
{
	struct proto_req r = sds_pool();
	struct pool_sds sds = sds_of();
	ck_assert_msg(!sds.dirty, "a clean close left the state dirty");
	if (!use(Corrupt_opens[_i].kind))
		return;

	struct pool_hdr hdr;
	hdr_rw(&hdr, false);
	pool_sds_set(&hdr.sds, Corrupt_opens[_i].usc, 0,
		Corrupt_opens[_i].dirty);
	if (Corrupt_opens[_i].torn)
		hdr.sds.checksum ^= 1;
	pool_hdr_checksum_set(&hdr);
	hdr_rw(&hdr, true);

	if (Corrupt_opens[_i].kind == PMDK) {
		r.common.minor = PROTO_MINOR_PMDK;
		r.common.provider = PROTO_PROV_SOCKETS;
		r.has_ext = false;
	}
	struct daemon d;
	dtest_start(&d);
	dtest_request(&d, &r, Corrupt_opens[_i].status);
	if (Corrupt_opens[_i].status) {
		close(d.in);
		int st;
		ck_assert_int_eq(waitpid(d.pid, &st, 0), d.pid);
		if (Corrupt_opens[_i].kind == OURS)
			ck_assert(dtest_log_has("the pool may be corrupt"));
		return;
	}
	sds = sds_of();
	ck_assert_msg(sds.dirty && sds.usc == 0, "an open pool's state is "
		"not recorded afresh and dirty (usc %llu dirty %u)",
		(unsigned long long)sds.usc, sds.dirty);
	dtest_done(&d);
	sds = sds_of();
	ck_assert_msg(!sds.dirty, "a clean close left the state dirty");
}
END_TEST

/*
 * R1: rpmemd killed while the pool is open leaves the state dirty, with
 * the count unchanged: the next open works, as after a client crash
 */
START_TEST(replica_of_a_killed_rpmemd_reopens)
{
	struct proto_req r = sds_pool();
	for (int round = 0; round < 2; round++) {
		struct daemon d;
		dtest_start(&d);
		dtest_request(&d, &r, 0);
		ck_assert(sds_of().dirty);
		if (round == 0) {
			kill(d.pid, SIGKILL);
			int st;
			ck_assert_int_eq(waitpid(d.pid, &st, 0), d.pid);
			close(d.in);
			close(d.out);
			continue;
		}
		dtest_done(&d);
	}
	ck_assert(!sds_of().dirty);
}
END_TEST

/* daemon_pmdk_suite -- every case in its own scratch directory */
static Suite *
daemon_pmdk_suite(void)
{
	TCase *tc;
	Suite *s = tu_suite("rpmemd-as-pmdk", "found", dtest_setup, dtest_teardown, &tc);
	tcase_set_timeout(tc, 60);
	TU_LOOP(tc, client_gone_without_close_is_exit_1_close_is_exit_0,
		Endings);
	tcase_add_test(tc, inherited_descriptor_closed_library_descriptor_kept);
	TU_LOOP(tc, remove_never_unlinks_a_pool_a_session_holds, Held_removes);
	tcase_add_loop_test(tc, remove_with_a_part_missing_removes_the_rest,
		0, 2);
	TU_LOOP(tc, possibly_corrupt_replica_is_refused_on_open, Corrupt_opens);
	tcase_add_test(tc, replica_of_a_killed_rpmemd_reopens);
	return tu_suite_add(s, tc);
}

TU_MAIN(daemon_pmdk_suite)
