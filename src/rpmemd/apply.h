/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * apply.h -- turning a lane message into durable pool bytes
 *
 * The one place where rpmemd writes replica memory on behalf of a strict
 * persist: every aligned 8-byte word inside the range is written by one
 * 8-byte store, so a reader never sees it torn (architecture decision 3); then
 * the range is made durable before the caller answers.
 */
#ifndef RPMEMD_APPLY_H
#define RPMEMD_APPLY_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fab.h"

struct apply_pool {
	char *base;		/* pool offset 0 */
	size_t size;		/* bytes registered for this session */
	uint64_t raddr;		/* what clients add offsets to */
	size_t buff_size;	/* largest inline payload */
	bool is_pmem;
	bool has_headers;	/* offsets below 4096 are the header */
};

/* apply_copy8 -- copy with single 8-byte stores for aligned words */
void apply_copy8(void *dst, const void *src, size_t len);

/* apply_persist -- make [addr, addr + len) durable (deep: also WPQ) */
int apply_persist(const struct apply_pool *p, void *addr, size_t len,
		bool deep);

/*
 * bytes of a lane stored but not yet made durable: the pieces of one
 * flush marked LANE_F_MORE, persisted together with its last piece
 */
struct apply_pending {
	size_t lo;
	size_t hi;		/* lo == hi: nothing pending */
};

/*
 * apply_msg -- validate a received message of `len` bytes and apply it.
 * Returns 0 or a positive errno for the response: EPROTO (short or
 * unknown op), EINVAL (range outside the pool or in the header, inline
 * size not matching or above buff_size: nothing copied), EIO (could not
 * make it durable).  `pending` is the lane's own.
 */
int apply_msg(const struct apply_pool *p, const struct lane_msg *msg,
		size_t len, struct apply_pending *pending);

#endif /* RPMEMD_APPLY_H */
