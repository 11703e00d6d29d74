/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * db_gen.h -- the generations of a local copy (gen_file.h) found from its
 * pool set's parts: rpmemd's replica, and what the rpmem tool promotes,
 * discards or shows
 */
#ifndef PSET_DB_GEN_H
#define PSET_DB_GEN_H 1

#include <stdbool.h>
#include <stddef.h>

#include "gen_file.h"
#include "poolset.h"

/* db_gen_path -- PART0.gen of the replica's parts */
int db_gen_path(const struct poolset_replica *rep, char *buf, size_t len);

/*
 * db_gen_read -- the copy's generations: 0; -ENOENT when it has none
 * (or the file speaks of another part 0: *stale, when not NULL);
 * -EINVAL when malformed; another -errno
 */
int db_gen_read(const struct poolset_replica *rep, struct gen_file *f,
		bool *stale);

/* db_gen_write -- replace them crash-safely, naming part 0 as it is */
int db_gen_write(const struct poolset_replica *rep, struct gen_file *f);

/* db_gen_remove -- the copy has none any more (its parts are gone) */
int db_gen_remove(const struct poolset_replica *rep);

#endif /* PSET_DB_GEN_H */
