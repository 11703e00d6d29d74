/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pmemobj_skip.h -- the bytes of a libpmemobj pool that libpmemobj keeps
 * as run-time state and never makes durable: rpmem verify and sync leave
 * them out unless told --strict
 */
#ifndef RPMEM_PMEMOBJ_SKIP_H
#define RPMEM_PMEMOBJ_SKIP_H 1

#include <stddef.h>

#include "librpmem.h"
#include "replica.h"

/*
 * pmemobj_skip_list -- the ranges to leave out of a pool of `size` bytes
 * whose header is `hdr`, in offset order; how many (0 when the header is
 * not that of a libpmemobj pool in the format whose layout is known)
 */
size_t pmemobj_skip_list(const struct rpmem_pool_attr *hdr, size_t size,
		const struct replica_skip **list);

#endif /* RPMEM_PMEMOBJ_SKIP_H */
