/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * db_int.h -- internals shared by db.c, db_path.c, db_part.c, db_hdr.c
 *
 * db.c is the API and the pool set rules, db_path.c the confinement
 * beneath poolset-dir, db_part.c the part files and their mapping,
 * db_hdr.c the PMDK headers written into them.
 */
#ifndef RPMEMD_DB_INT_H
#define RPMEMD_DB_INT_H 1

#include <stdbool.h>
#include <stddef.h>

#include "db.h"
#include "pool_hdr.h"
#include "poolset.h"

struct db_part {
	const char *path;	/* owned by the parsed set */
	size_t size;		/* as written in the set file */
	int fd;			/* holds the flock */
	bool created;		/* by us: unlinked if the create fails */
};

/* what struct db_pool.priv points at */
struct db_priv {
	struct poolset *set;
	struct db_part *parts;
	unsigned nparts;
	unsigned nhdrs;		/* parts carrying a header */
	bool hdr_per_part;	/* neither SINGLEHDR nor NOHDRS */
	size_t map_size;
	struct prefault *prefault;	/* the walk ahead of the writes */
	bool sds_dirty;		/* db_sds_open marked the pool open */
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
 * db_parts_open -- take over `set`, open (or with `create` create) and
 * lock its parts and map them; on failure files created here are gone
 */
int db_parts_open(struct poolset *set, bool create, struct db_pool **poolp);

/* db_parts_close -- unmap, unlink (all, or those created) and free */
int db_parts_close(struct db_pool *pool, bool unlink_all,
		bool unlink_created);

/* db_region_persist -- make a range of the mapped region durable */
int db_region_persist(struct db_pool *pool, size_t off, size_t len);

/* db_hdr_read -- part i's header, in the region or through its fd */
int db_hdr_read(struct db_pool *pool, unsigned i, struct pool_hdr *hdr);

/* db_hdr_write -- store part i's header and make it durable */
int db_hdr_write(struct db_pool *pool, unsigned i,
		const struct pool_hdr *hdr);

/* db_hdrs_create -- write every header of a new pool from `attr` */
int db_hdrs_create(struct db_pool *pool, const struct rpmem_pool_attr *attr);

/* db_hdrs_verify -- check the headers of an opened pool, fill attr */
int db_hdrs_verify(struct db_pool *pool);

/*
 * db_sds_open -- the unsafe-shutdown check of an opened or created pool
 * whose header has the SDS feature: -EINVAL when the pool may be
 * corrupt, else the state recorded afresh and marked dirty until
 * db_sds_close
 */
int db_sds_open(struct db_pool *pool);

/* db_sds_close -- clear the dirty mark db_sds_open set */
int db_sds_close(struct db_pool *pool);

/* db_hdrs_set_attr -- rewrite every header from `attr` */
int db_hdrs_set_attr(struct db_pool *pool,
		const struct rpmem_pool_attr *attr);

#endif /* RPMEMD_DB_INT_H */
