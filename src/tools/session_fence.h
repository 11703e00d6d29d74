/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * session_fence.h -- who holds a pool's parts locked, and ending that
 * session
 *
 * rpmemd flock()s every part of the pool it serves for as long as the
 * session lasts.  The kernel names each lock's holder (/proc/locks), and
 * the holder's own /proc entry says what it is (exe), since when it runs
 * and, as sshd started it, which client it serves (SSH_CONNECTION).
 */
#ifndef RPMEM_SESSION_FENCE_H
#define RPMEM_SESSION_FENCE_H 1

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "poolset.h"

#define SESSION_HOLDERS_MAX 8		/* holders reported */

struct session_holder {
	pid_t pid;
	bool is_rpmemd;		/* its executable is named rpmemd */
	int64_t since;		/* start, seconds since the epoch; 0: unknown */
	char exe[64];		/* base name of its executable */
	char client[96];	/* "ADDR PORT" of SSH_CONNECTION, or "" */
};

/*
 * session_fence_find -- the processes holding a lock on a part of `rep`
 * (other than this one): up to SESSION_HOLDERS_MAX into h, their number
 * in *n; -errno when /proc/locks cannot be read
 */
int session_fence_find(const struct poolset_replica *rep,
		struct session_holder *h, unsigned *n);

/*
 * session_fence_describe -- "rpmemd pid 1, client 198.18.0.1 port 4711,
 * since D"
 */
void session_fence_describe(const struct session_holder *h, char *buf,
		size_t len);

/*
 * session_fence_end -- SIGKILL a holder that is an rpmemd and wait until
 * it is gone (pidfd); -EPERM for anything else, -ETIMEDOUT when it
 * lingers
 */
int session_fence_end(const struct session_holder *h);

#endif /* RPMEM_SESSION_FENCE_H */
