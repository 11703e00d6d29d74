/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rstate_path.c -- where the files of rstate.h live: the state directory,
 * private to its user, and the names of records and statuses in it
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rstate.h"

/* key_part -- `s` with '/', '%' and all but [A-Za-z0-9._@:+-] as %XX */
static int
key_part(const char *s, char *out, size_t size, size_t *o)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		bool plain = isascii(*p) && (isalnum(*p) ||
			strchr("._@:+-", *p));
		int n = snprintf(out + *o, size - *o, plain ? "%c" : "%%%02X",
			*p);
		if (n < 0 || (size_t)n >= size - *o)
			return -ENAMETOOLONG;
		*o += (size_t)n;
	}
	return 0;
}

/* rstate_record_path -- DIR/KEY.replica of (target, pool_set) */
int
rstate_record_path(const char *dir, const char *target,
		const char *pool_set, char *buf, size_t len)
{
	if (!target[0] || !pool_set[0] || !dir[0])
		return -EINVAL;
	int n = snprintf(buf, len, "%s/", dir);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	size_t o = (size_t)n, base = o;
	/* ',' is escaped within either part: the key splits one way only */
	if (key_part(target, buf, len, &o) || o + 1 >= len)
		return -ENAMETOOLONG;
	buf[o++] = ',';
	buf[o] = '\0';
	if (key_part(pool_set, buf, len, &o))
		return -ENAMETOOLONG;
	n = snprintf(buf + o, len - o, ".replica");
	if (n < 0 || (size_t)n >= len - o || o + (size_t)n - base > NAME_MAX)
		return -ENAMETOOLONG;
	return 0;
}

/* rstate_status_path -- DIR/run/PID-SEQ.status */
int
rstate_status_path(const char *dir, pid_t pid, unsigned seq, char *buf,
		size_t len)
{
	if (pid <= 0 || !dir[0])
		return -EINVAL;
	int n = snprintf(buf, len, "%s/run/%d-%u.status", dir, (int)pid, seq);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* mkdir_p -- `path` and its missing parents, each with mode 0700 */
static int
mkdir_p(char *path)
{
	for (char *p = path + 1; ; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;
		*p = '\0';
		int e = mkdir(path, 0700) && errno != EEXIST ? -errno : 0;
		*p = c;
		if (e)
			return e;
		if (!c)
			return 0;
	}
}

/*
 * private_dir -- `path` is a directory of ours (or root's) that neither
 * group nor others may write, as ssh's StrictModes wants of ~/.ssh
 */
static int
private_dir(const char *path)
{
	struct stat st;
	if (stat(path, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) ||
			(st.st_uid != geteuid() && st.st_uid != 0))
		return -EPERM;
	return 0;
}

/* rstate_dir -- the state directory, created when `create`; -errno */
int
rstate_dir(char *buf, size_t len, bool create)
{
	const char *env = getenv("RPMEM_STATE_DIR");
	const char *xdg = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	int n;
	if (env && env[0])
		n = snprintf(buf, len, "%s", env);
	else if (geteuid() == 0)
		n = snprintf(buf, len, "/var/lib/rpmem");
	else if (xdg && xdg[0] == '/')	/* relative: invalid, says XDG */
		n = snprintf(buf, len, "%s/rpmem", xdg);
	else if (home && home[0])
		n = snprintf(buf, len, "%s/.local/state/rpmem", home);
	else
		return -ENOENT;
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	if (!create)
		return 0;
	char run[PATH_MAX];
	if (snprintf(run, sizeof(run), "%s/run", buf) >= (int)sizeof(run))
		return -ENAMETOOLONG;
	int e = mkdir_p(run);
	if (!e)
		e = private_dir(buf);
	if (!e)
		e = private_dir(run);
	return e;
}
