/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * oos.h -- the out-of-sync record of a degraded handle: one bit per
 * OOS_CHUNK bytes of the pool, set by persists the replica did not get,
 * taken (cleared) by the resync just before it reads the bytes it sends
 *
 * Setting and taking are atomic on 64-bit words, so application threads
 * mark ranges while the resync takes them without a lock.  The ordering
 * rule of the resync rests on it: a persist's bytes are in memory before
 * its bit is set (release); the resync clears a bit (acquire) before it
 * reads the chunk, so either it reads those bytes or the bit is set
 * again and the chunk is sent once more, after this copy.
 */
#ifndef RPMEM_OOS_H
#define RPMEM_OOS_H 1

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rstate.h"

#define OOS_CHUNK ((size_t)4096)	/* bytes per bit, as DRBD's */

struct oos {
	size_t size;			/* pool bytes covered */
	size_t nwords;
	_Atomic uint64_t *words;
};

/* oos_init -- a clear record of a `size`-byte pool; 0 or -ENOMEM */
int oos_init(struct oos *o, size_t size);

/* oos_fini -- free it */
void oos_fini(struct oos *o);

/* oos_mark -- record [off, off + len) as out of sync */
void oos_mark(struct oos *o, size_t off, size_t len);

/* oos_mark_all -- record the whole pool from `from` on */
void oos_mark_all(struct oos *o, size_t from);

/* oos_bytes -- bytes recorded (whole chunks; the last may be shorter) */
size_t oos_bytes(const struct oos *o);

/*
 * oos_take -- find the first recorded chunk at or after *pos, take up to
 * `max` bytes of contiguous recorded chunks (clearing their bits) and
 * return them as [*off, *off + *len); false when none is left after *pos.
 * *pos is advanced past what was taken.
 */
bool oos_take(struct oos *o, size_t *pos, size_t max, size_t *off,
		size_t *len);

/*
 * oos_ranges -- the record as ranges (malloc'ed; NULL when empty), their
 * number in *n; -ENOMEM.  Past RSTATE_RANGES_MAX neighbours are merged.
 */
int oos_ranges(const struct oos *o, struct rstate_range **r, size_t *n);

#endif /* RPMEM_OOS_H */
