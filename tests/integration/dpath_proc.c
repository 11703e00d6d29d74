/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpath_proc.c -- the rpmemd serving a data-path test, found through the
 * log file it writes (never by its name), and its state in /proc
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dpath.h"

/* --------------------------------------------------- rpmemd processes */

/* log_snapshot -- the rpmemd logs that exist now */
struct logsnap *
log_snapshot(void)
{
	struct logsnap *ls = calloc(1, sizeof(*ls));
	ck_assert_ptr_nonnull(ls);
	DIR *d = opendir(env.log_dir);
	ck_assert_msg(d != NULL, "%s: %s", env.log_dir, strerror(errno));
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "rpmemd.", 7) != 0)
			continue;
		ck_assert_uint_lt(ls->n, MAX_LOGS);
		fmt(ls->name[ls->n++], LOG_NAME_MAX, "%s", de->d_name);
	}
	closedir(d);
	return ls;
}

/* log_known -- was `name` in the snapshot? */
bool
log_known(const struct logsnap *ls, const char *name)
{
	for (unsigned i = 0; i < ls->n; i++)
		if (strcmp(ls->name[i], name) == 0)
			return true;
	return false;
}

/* slurp -- a file's contents, NUL-terminated; NULL when unreadable */
char *
slurp(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	ck_assert_ptr_nonnull(buf);
	for (;;) {
		if (len + 1 >= cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			ck_assert_ptr_nonnull(buf);
		}
		ssize_t n = read(fd, buf + len, cap - len - 1);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return buf;
}

/* log_count -- occurrences of `needle` in a log */
unsigned
log_count(const char *path, const char *needle)
{
	char *text = slurp(path);
	unsigned n = 0;
	for (char *p = text; p && (p = strstr(p, needle)); p++)
		n++;
	free(text);
	return n;
}

/* log_wait -- until `needle` is in the log `count` times, or timeout */
bool
log_wait(const char *path, const char *needle, unsigned count, int ms)
{
	long long deadline = tu_now_ms() + ms;
	while (log_count(path, needle) < count) {
		if (tu_now_ms() > deadline)
			return false;
		tu_nap(10);
	}
	return true;
}

/*
 * session_find -- the pid of the one rpmemd started since `before`, once
 * its log says "session: pid N"; its log path into `path`
 */
pid_t
session_find(const struct logsnap *before, char *path, size_t len, int ms)
{
	long long deadline = tu_now_ms() + ms;
	for (;;) {
		struct logsnap *now = log_snapshot();
		const char *found = NULL;
		unsigned nnew = 0;
		for (unsigned i = 0; i < now->n; i++) {
			if (!log_known(before, now->name[i])) {
				found = now->name[i];
				nnew++;
			}
		}
		ck_assert_msg(nnew <= 1, "%u rpmemd sessions started, "
			"expected one", nnew);
		pid_t pid = 0;
		if (found) {
			int p;
			ck_assert_int_eq(sscanf(found, "rpmemd.%d.", &p), 1);
			fmt(path, len, "%s/%s", env.log_dir, found);
			char line[64];
			fmt(line, sizeof(line), "session: pid %d ", p);
			if (log_count(path, line) == 1)
				pid = p;
		}
		free(now);
		if (pid)
			return pid;
		ck_assert_msg(tu_now_ms() < deadline, "no rpmemd session log "
			"in %s after %d ms", env.log_dir, ms);
		tu_nap(10);
	}
}

/*
 * rpmemd_running -- is pid a live (not zombie) rpmemd of this test?  Its
 * argv must name our poolset dir, so a recycled pid does not count.
 */
bool
rpmemd_running(pid_t pid)
{
	return tu_proc_live(pid) && tu_proc_argv_has(pid, "rpmemd") &&
		tu_proc_argv_has(pid, env.t.poolset_dir);
}

/* wait_gone -- until rpmemd `pid` has exited; false after `ms` */
bool
wait_gone(pid_t pid, int ms)
{
	long long deadline = tu_now_ms() + ms;
	while (rpmemd_running(pid)) {
		if (tu_now_ms() > deadline)
			return false;
		tu_nap(10);
	}
	return true;
}

/* the target of a link, read: `len` bytes at `name` */
struct link {
	const char *name;
	ssize_t len;
};

/* links_to -- the link at `path` reads as the struct link `arg` */
static bool
links_to(const char *path, void *arg)
{
	const struct link *l = arg;
	char got[64];
	ssize_t m = readlink(path, got, sizeof(got) - 1);
	return m == l->len && memcmp(got, l->name, (size_t)l->len) == 0;
}

/*
 * stdin_has_writer -- does any process but pid hold the pipe that is
 * pid's stdin?  (sshd holds the write end until the client's EOF.)
 */
bool
stdin_has_writer(pid_t pid)
{
	char path[64], want[64];
	fmt(path, sizeof(path), "/proc/%d/fd/0", (int)pid);
	ssize_t n = readlink(path, want, sizeof(want) - 1);
	if (n <= 0)
		return false;
	want[n] = '\0';
	struct link l = { want, n };
	DIR *d = opendir("/proc");
	ck_assert_ptr_nonnull(d);
	bool found = false;
	struct dirent *de;
	while (!found && (de = readdir(d)) != NULL) {
		int p = atoi(de->d_name);
		if (p <= 0 || p == pid)
			continue;
		char fdir[64];
		fmt(fdir, sizeof(fdir), "/proc/%d/fd", p);
		found = tu_dir_each(fdir, links_to, &l) == 1;
	}
	closedir(d);
	return found;
}

/* count_dir -- entries of a /proc/self directory (fds, threads) */
unsigned
count_dir(const char *path)
{
	int n = tu_dir_entries(path);
	ck_assert_msg(n >= 0, "%s: %s", path, strerror(errno));
	return (unsigned)n;
}

/*
 * pool_served -- create (seed > 0, attributes by it) or open (seed 0)
 * the set's pool on *nlanes lanes, and find the rpmemd serving it: its
 * pid, its log's path into log
 */
RPMEMpool *
pool_served(const struct tset *s, char *mem, unsigned *nlanes,
	unsigned char seed, pid_t *pid, char *log, size_t loglen)
{
	struct logsnap *before = log_snapshot();
	RPMEMpool *rpp = seed ? pool_create(s, mem, nlanes, seed) :
		pool_open(s, mem, nlanes);
	*pid = session_find(before, log, loglen, 5000);
	free(before);
	return rpp;
}
