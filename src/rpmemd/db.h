/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * db.h -- rpmemd's pool set database under poolset-dir
 *
 * A descriptor names a pool set file strictly beneath poolset-dir: no
 * absolute path, no "..", no symlink leading out (scenario S1).  A
 * pool set here has exactly one replica; its parts are created or opened,
 * flock-ed (a second session gets -EBUSY) and mapped contiguously:
 * pool offset N is byte N of the address returned, header included.
 */
#ifndef RPMEMD_DB_H
#define RPMEMD_DB_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db_pool.h"
#include "librpmem.h"

struct db;

/* db_init -- poolset-dir must be an absolute, existing directory */
int db_init(const char *poolset_dir, struct db **db);
void db_fini(struct db *db);

/*
 * db_desc_check -- the checks of a descriptor as a string, made again by
 * create, open and remove: -EBADF (empty, absolute, ending in '/', with
 * control characters) or -EACCES (".."); logs the refusal
 */
int db_desc_check(const char *desc);

/*
 * db_pool_create -- create the pool set named by `desc`; `attr` NULL means
 * no headers (the set must say OPTION NOHDRS).  Errors: -EACCES (escape),
 * -EBADF (unusable descriptor), -ENOENT, -EEXIST (non-empty part),
 * -EBUSY (locked), -EINVAL (bad set, size, option mismatch).
 */
int db_pool_create(struct db *db, const char *desc,
		const struct rpmem_pool_attr *attr, struct db_pool **pool);

/* db_pool_open -- open an existing pool set, headers verified */
int db_pool_open(struct db *db, const char *desc, struct db_pool **pool);

/* db_pool_set_attr -- rewrite every part header from `attr` */
int db_pool_set_attr(struct db_pool *pool, const struct rpmem_pool_attr *attr);

/* db_pool_close -- unmap, unlock; with `remove` also unlink the parts */
int db_pool_close(struct db_pool *pool, bool remove);

/*
 * db_pool_remove -- unlink the parts of the set (and the set file with
 * `pool_set`); `force` ignores missing parts, locks and parse errors.
 */
int db_pool_remove(struct db *db, const char *desc, bool force,
		bool pool_set);

/* db_pool_persist -- make [off, off + len) of the pool durable */
int db_pool_persist(struct db_pool *pool, size_t off, size_t len);

/*
 * db_strerror -- what went wrong, for the client: for -EPERM of a pool
 * set promoted to a master, when and from what; else strerror(-err)
 */
const char *db_strerror(int err);

/* what OUTDATE and rpmemd --outdate ask of a pool set (db_outdate.c) */
struct db_outdate {
	bool mark;		/* mark it outdated, or clear the mark */
	int64_t time;		/* since when; 0: now */
	const char *host;	/* the master's host; "" or NULL: unknown */
	const struct rpmem_pool_attr *attr;	/* NULL: read part 0 */
};

/*
 * db_outdate -- write or remove SET.outdated beside the set `desc`
 * (scenarios D5, D6), confined beneath poolset-dir; a mark of a
 * promoted set is refused with -EPERM (db_strerror says why); clearing
 * a set that is not marked succeeds
 */
int db_outdate(struct db *db, const char *desc, const struct db_outdate *o);

#endif /* RPMEMD_DB_H */
