/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * db_pool.h -- a pool set's one local replica on disk: parts, locks, map,
 * PMDK headers; shared by rpmemd (src/rpmemd/db*.c) and the rpmem tool
 *
 * db_part.c holds the part files and their mapping, db_hdr.c the PMDK
 * headers written into them, db_promote.c a replica's headers made a
 * master's (rpmem promote), marker.c the marker it leaves.
 * The parts are flock-ed (a second holder gets -EBUSY) and mapped
 * contiguously: pool offset N is byte N of the address, header included.
 */
#ifndef PSET_DB_POOL_H
#define PSET_DB_POOL_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "librpmem.h"
#include "pool_hdr.h"
#include "poolset.h"

struct db_pool {
	void *addr;		/* pool offset 0 (part 0 header) */
	size_t size;		/* usable size, headers accounted as PMDK does */
	bool is_pmem;		/* every part on pmem (or PMEM_IS_PMEM_FORCE) */
	bool writes_back;	/* a persist waits for a file system (msync) */
	bool no_headers;	/* OPTION NOHDRS */
	bool created;		/* by this session: removed on failed create */
	struct rpmem_pool_attr attr;	/* part-0 header attrs (zero: none) */
	void *priv;		/* db's own per-pool state */
};

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

/* db_hdr_write -- checksum part i's header, store it, make it durable */
int db_hdr_write(struct db_pool *pool, unsigned i, struct pool_hdr *hdr);

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

/* db_pool_is_master -- part 0's replica links name part 0 itself */
bool db_pool_is_master(const struct pool_hdr *hdr0);

/*
 * db_pool_peer -- the other copy part 0's links name (prev == next, not
 * part 0 itself), or NULL
 */
const uint8_t *db_pool_peer(const struct pool_hdr *hdr0);

/*
 * db_hdr_promote -- rewrite part i's header as a master's: replica links
 * to `link` (part 0's own uuid: a standalone pool; the other copy's: one
 * of a pair, links kept), shutdown state cleared
 */
int db_hdr_promote(struct db_pool *pool, unsigned i, const uint8_t *link);

#endif /* PSET_DB_POOL_H */
