/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * after_resync.h -- rpmemd's after-resync handler (rpmemd.conf
 * after-resync), as DRBD runs its after-resync-target handler on the node
 * a resync went into
 */
#ifndef RPMEMD_AFTER_RESYNC_H
#define RPMEMD_AFTER_RESYNC_H 1

#include "gen.h"

/*
 * after_resync -- a resync into the replica `set` (the pool set file's
 * path) ended and `g`, the replica's generations after it, is durable:
 * `cmd` runs through /bin/sh in a session of its own, with
 * RPMEMD_POOL_SET, RPMEMD_GENERATION (the current, 16 hex digits) and
 * RPMEMD_HISTORY (the ones before it, comma-separated) in its
 * environment, its output appended to `log` (NULL: discarded).  Not
 * waited for: the session goes on, and its exit status is logged when it
 * comes.  0, or -errno when it cannot be started.
 */
int after_resync(const char *cmd, const char *set, const struct gen *g,
		const char *log);

#endif /* RPMEMD_AFTER_RESYNC_H */
