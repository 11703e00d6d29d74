/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * db_int.h -- internals shared by db.c, db_path.c, db_promoted.c, db_outdate.c
 *
 * db.c is the API and the pool set rules, db_path.c the confinement
 * beneath poolset-dir; the part files and their headers are the pool
 * set module's (src/pset/db_pool.h), which the rpmem tool links too.
 */
#ifndef RPMEMD_DB_INT_H
#define RPMEMD_DB_INT_H 1

#include <stdbool.h>
#include <stddef.h>

#include "db.h"
#include "db_pool.h"

/* poolset-dir, as db_init opened it */
struct db {
	int dirfd;		/* O_DIRECTORY, anchor of every lookup */
	char *dir;		/* canonical poolset-dir, for messages */
};

/*
 * db_path_check -- refuse a descriptor before touching the file system:
 * empty, ending in '/', with control characters or absolute (-EBADF),
 * any ".." component (-EACCES).  Logs the refusal.
 */
int db_path_check(const char *desc);

/*
 * db_path_open -- open an already checked `desc` relative to `rootfd`
 * with open(2) `flags`, never leaving the directory: openat2 with
 * RESOLVE_BENEATH when the kernel has it, else a component walk that
 * follows only relative symlinks staying beneath.  Returns an fd or
 * -errno (-EACCES for an escape).  `root` is for log messages only.
 */
int db_path_open(int rootfd, const char *root, const char *desc, int flags);

/*
 * db_promoted_check -- -EPERM when `desc` beneath `rootfd` was promoted to a
 * master by rpmem promote (its SET.promoted marker exists), else 0
 */
int db_promoted_check(int rootfd, const char *root, const char *desc);

/*
 * db_parent_open -- the directory holding `desc` opened with `flags`
 * (O_DIRECTORY added) beneath poolset-dir, and its last component in
 * *base; db_parent_close closes it
 */
int db_parent_open(struct db *db, const char *desc, int flags,
		const char **base);
void db_parent_close(struct db *db, int dirfd);

/* db_set_part0 -- the path of part 0 of the set `desc` (caller frees) */
int db_set_part0(struct db *db, const char *desc, char **path);

#endif /* RPMEMD_DB_INT_H */
