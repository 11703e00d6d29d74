/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * db_promoted.c -- a pool set promoted to a master is no replica any more
 *
 * `rpmem promote` leaves SET.promoted beside the set file (marker.h)
 * before it touches a header.  An old primary that comes back must not
 * write into the new master (scenario F3): create, open and remove of
 * such a set are refused with -EPERM, and db_strerror gives the client
 * the reason, with the date of the promotion.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db_int.h"
#include "log.h"
#include "marker.h"

/* the last refusal, for db_strerror (one session per process) */
static char Refusal[512];

/*
 * db_promoted_check -- 0, or -EPERM when `desc` was promoted; a marker that
 * exists but does not parse still fences; a lookup that fails otherwise
 * (an escape from poolset-dir) fails as that of the set would
 */
int
db_promoted_check(int rootfd, const char *root, const char *desc)
{
	size_t n = strlen(desc) + sizeof(MARKER_PROMOTED_SUFFIX);
	char *path = malloc(n);
	if (path == NULL)
		return -ENOMEM;
	snprintf(path, n, "%s" MARKER_PROMOTED_SUFFIX, desc);
	int fd = db_path_open(rootfd, root, path, O_RDONLY | O_NOCTTY |
			O_NONBLOCK);
	free(path);
	if (fd == -ENOENT || fd == -ENOTDIR)
		return 0;
	if (fd < 0)
		return fd;	/* an escape (-EACCES): the set's own fate */

	struct marker p;
	int ret = marker_read_fd(MARKER_PROMOTED, fd, &p);
	close(fd);
	char what[384];
	if (ret == 0)
		marker_describe(&p, what, sizeof(what));
	else
		snprintf(what, sizeof(what), "promoted to a master (its "
			"marker %s%s is unreadable: %s)", desc,
			MARKER_PROMOTED_SUFFIX, strerror(-ret));
	snprintf(Refusal, sizeof(Refusal), "%s; it is not a replica any "
		"more", what);
	log_err("pool set %s: %s", log_quote(desc).s, Refusal);
	return -EPERM;
}

/* db_strerror -- the refusal of db_promoted_check for -EPERM, else errno's */
const char *
db_strerror(int err)
{
	if (err == -EPERM && Refusal[0])
		return Refusal;
	return strerror(-err);
}
