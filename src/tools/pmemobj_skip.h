/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pmemobj_skip.h -- the bytes of a libpmemobj pool that libpmemobj writes
 * and never makes durable: rpmem verify and sync leave them out unless
 * told --strict
 */
#ifndef RPMEM_PMEMOBJ_SKIP_H
#define RPMEM_PMEMOBJ_SKIP_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "librpmem.h"
#include "replica.h"

/* what lies in a skipped range (replica_skip.what), one string a kind */
extern const char pmemobj_skip_runtime[];	/* the pool descriptor's */
extern const char pmemobj_skip_footer[];	/* a huge block's headers */
extern const char pmemobj_skip_head[];		/* a free chunk's head */
extern const char pmemobj_skip_freed_gen[];	/* a freed undo log's */
extern const char pmemobj_skip_gen[];		/* an undo log's counter */

/*
 * pmemobj_skip_list -- the ranges to leave out of the pool of `size`
 * bytes mapped at `pool` (its header `hdr`), derived from what the pool
 * holds: its descriptor, its lanes, its heap's zone, chunk and run
 * headers.  In offset order, none overlapping, in a new array for the
 * caller to free; *n is 0 (and *list NULL) when the pool is not a
 * libpmemobj pool in the format whose layout is known.  0, or -ENOMEM.
 */
int pmemobj_skip_list(const struct rpmem_pool_attr *hdr, const void *pool,
		size_t size, struct replica_skip **list, size_t *n);

/* between pmemobj_skip.c and pmemobj_heap.c */

/* a growing list of skipped ranges */
struct pmemobj_skips {
	struct replica_skip *r;
	size_t n, cap;
	int err;		/* -ENOMEM once an addition failed */
};

/*
 * pmemobj_skip_add -- one more range; merged into the last one when it
 * continues it with the same `what`
 */
void pmemobj_skip_add(struct pmemobj_skips *s, size_t off, size_t len,
		const char *what);

/* pmemobj_load64 -- the little-endian 8 bytes at `off` of the pool */
uint64_t pmemobj_load64(const unsigned char *pool, size_t off);

/*
 * pmemobj_heap_skips -- add what libpmemobj leaves unpersisted in the
 * heap at [heap_off, size) of the pool; false (nothing added) when its
 * header is not that of a known heap
 */
bool pmemobj_heap_skips(struct pmemobj_skips *s, const unsigned char *pool,
		size_t size, size_t heap_off);

#endif /* RPMEM_PMEMOBJ_SKIP_H */
