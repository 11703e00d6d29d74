/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpmem_tool.h -- librpmem functions the rpmem tool uses beyond the API
 *
 * Not exported from librpmem.so.1 (its symbol list is PMDK's and fixed);
 * the rpmem tool links the library's objects and calls these directly.
 */
#ifndef RPMEM_TOOL_H
#define RPMEM_TOOL_H 1

#include <stddef.h>
#include <stdint.h>

#include "librpmem.h"

/*
 * rpmem_hash -- content hashes of [off, off + len) in `chunk`-byte
 * pieces (the last may be shorter), computed by rpmemd next to the data;
 * `hashes` holds one per piece.  0, or -1 with errno and the message.
 */
int rpmem_hash(RPMEMpool *rpp, size_t off, size_t len, size_t chunk,
		uint64_t *hashes);

/*
 * rpmem_lane_security -- how the session's lanes are sealed: policy
 * ("encrypt", "authenticate", "none") and cipher (or "none")
 */
void rpmem_lane_security(RPMEMpool *rpp, const char **policy,
		const char **cipher);

/*
 * rpmem_daemon_cpu -- the CPU seconds (user, system) the session's
 * rpmemd has spent so far; -1 with errno (ENOTSUP: PMDK's rpmemd)
 */
int rpmem_daemon_cpu(RPMEMpool *rpp, double *user_s, double *sys_s);

/* rpmem_daemon_version -- rpmemd's version "a.b.c" into buf */
void rpmem_daemon_version(RPMEMpool *rpp, char *buf, size_t len);

/*
 * At the end of each session that was ready, librpmem logs at level info
 * (RPMEM_LOG_LEVEL=info, RPMEM_LOG_FILE) one line of the calls made on
 * it, which a program using librpmem.so.1 through another library (rpmem
 * bench through libpmemobj) reads back:
 *   RPMEM_CALLS_LOG " 'DESC' on NODE: persist N, deep persist N, flush N,
 *   drain N, read N; N bytes persisted or flushed"
 */
#define RPMEM_CALLS_LOG "calls on"

#endif /* RPMEM_TOOL_H */
