/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpmem_tool.h -- librpmem functions the rpmem tool uses beyond the API
 *
 * Not exported from librpmem.so.1 (its symbol list is PMDK's and fixed);
 * the rpmem tool links the library's objects and calls these directly.
 */
#ifndef RPMEM_TOOL_H
#define RPMEM_TOOL_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gen.h"
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

/*
 * rpmem_outdate -- one OUTDATE request in the session: mark (1) the
 * replica outdated, its master `master_host` going on without it, or
 * clear (0) the mark once it equals the master again (scenarios D5,
 * D6).  0, or -1 with errno: ENOTSUP when rpmemd speaks a minor below 4
 * or is PMDK's, EINVAL for a bad argument, another as control calls do.
 */
int rpmem_outdate(RPMEMpool *rpp, int mark, const char *master_host);

/*
 * rpmem_outdate_remote -- run `rpmemd --outdate POOL_SET --master HOST`
 * on `target` over ssh, as rpmem_remove runs --remove: no session needed
 * (a fence-peer handler, while the replica's rpmemd may hang).  0, or -1
 * with errno: rpmemd's exit status, or ssh's failure (ECONNRESET when it
 * could not reach the host).
 */
int rpmem_outdate_remote(const char *target, const char *pool_set,
		const char *master_host);

/*
 * rpmem_tool_untracked -- the handles this process opens from now on
 * neither read nor write the client host's record of their replica
 * (rstate.h), and never go degraded: the rpmem tool opens replicas to
 * look at them or copy to them, and is no application of the pool
 */
void rpmem_tool_untracked(void);

/*
 * rpmem_tool_readonly -- the handles this process opens from now on
 * write nothing to their replica (rpmem info, verify, status): their
 * session neither marks the replica nor changes its generations
 */
void rpmem_tool_readonly(void);

/*
 * rpmem_tool_adopt -- the rpmem tool made the replica of `rpp` equal to
 * its master (rpmem sync): the replica takes the master's generation;
 * 0, or -1 with errno and the message (a peer without generations: 0)
 */
int rpmem_tool_adopt(RPMEMpool *rpp);

/*
 * rpmem_tool_gens -- the generations the session's start saw: the
 * master's (as told) and the replica's (as found), and what they
 * decide; false when the session has none (a peer without them)
 */
bool rpmem_tool_gens(RPMEMpool *rpp, struct gen *m, struct gen *r,
		struct gen_decision *d);

/*
 * rpmem_record_in_sync -- a replica the rpmem tool made equal to its
 * master: the record of (target, pool set), if any, says so; 0 or -1
 */
int rpmem_record_in_sync(const char *target, const char *pool_set);

/* rpmem_daemon_version -- rpmemd's version "a.b.c" into buf */
void rpmem_daemon_version(RPMEMpool *rpp, char *buf, size_t len);

/*
 * rpmem_daemon_limits -- for PMDK 1.12's rpmemd, a sentence of what its
 * sessions do and do not guarantee; NULL for this project's
 */
const char *rpmem_daemon_limits(RPMEMpool *rpp);

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
