/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * promote_pair.h -- rpmem promote --master-set: the replica promoted as
 * one copy of a two-copy pair (promote_pair.c)
 *
 * Each node of a pair keeps its replica set (its parts, in rpmemd's
 * poolset-dir) and its master set (the same parts and one REPLICA line
 * to the other node's replica set).  A pair's replica links are
 * symmetric (A names B, B names A), so promote keeps them and either
 * node's master set opens.  What this host's librpmem must learn is that
 * the other copy is not in sync: the record written here says so, with
 * the other copy's attributes, so that the application opens without it
 * when it is away and compares it whole at its next session.
 */
#ifndef RPMEM_PROMOTE_PAIR_H
#define RPMEM_PROMOTE_PAIR_H 1

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pool_hdr.h"
#include "poolset.h"

struct pair {
	const char *path;		/* the master set file */
	struct poolset *mset;		/* as parsed */
	const struct poolset_replica *other;	/* its REPLICA line */
	size_t pool_size;		/* as librpmem sees the other copy */
	char record[PATH_MAX];		/* this host's record of it */
	bool recorded;			/* written */
};

/*
 * pair_load -- parse master set `file` and check it against the replica
 * set `set` (read from `set_path`): one local replica naming the same
 * part files and sizes, one REPLICA line, a record of it that this host
 * can keep (its state directory is made).  0, or 1 after a message on
 * stderr saying what does not fit.
 */
int pair_load(struct pair *pr, const char *file, const char *set_path,
		const struct poolset *set);

/*
 * pair_peer -- the other copy part 0's links name; NULL after a message
 * when they name part 0 itself (a standalone pool) or two copies
 */
const uint8_t *pair_peer(const struct pair *pr, const char *set_path,
		const struct pool_hdr *hdr0);

/*
 * pair_record -- this host's record of the other copy (rstate.h),
 * written durably over any earlier one: not in sync since now, ranges
 * unknown (compared whole at the next session), its attributes as rpmemd
 * will return them.  0, or 1 after a message.
 */
int pair_record(struct pair *pr, const struct pool_hdr *hdr0);

/* pair_text -- the line saying what was recorded */
void pair_text(const struct pair *pr);

/* pair_json -- the JSON member "record": what was recorded, or null */
void pair_json(const struct pair *pr);

/* pair_free -- free what pair_load made */
void pair_free(struct pair *pr);

#endif /* RPMEM_PROMOTE_PAIR_H */
