/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl.h -- a replica that comes and goes: what a handle does when its
 * replica is lost (on-replica-loss), and the way back (reconnect, resync)
 *
 * One state machine (rpmem.h's enum rpmem_state) in one place:
 *
 *   READY --loss--> DEGRADED (continue; fence when the handler agreed)
 *         --loss--> FROZEN   (fence, handler refused: persists held)
 *         --loss--> BROKEN   (fail: the error, as PMDK's librpmem)
 *   DEGRADED/FROZEN --reconnected--> RESYNCING --nothing left--> READY
 *   FROZEN --freeze timeout--> BROKEN
 *
 * A persist that is not sent is recorded in the out-of-sync bitmap
 * (oos.h); the client host's record of the replica (rstate.h) says it
 * is not in sync, durably, before the first such persist returns, so a
 * stale replica never looks in sync, whatever happens next.  A worker
 * thread per handle reconnects with a capped back-off and copies the
 * recorded ranges (or those whose hashes differ, when the record was
 * lost) while the application goes on; the last ones are copied with
 * every lane held, so no persist can land between the copy and READY.
 */
#ifndef RPMEM_REPL_H
#define RPMEM_REPL_H 1

#include <stdbool.h>
#include <stddef.h>

#include "librpmem.h"
#include "proto.h"

struct rpmem_pool;

/* the data calls, as the state machine sees them */
enum repl_op {
	REPL_FLUSH,
	REPL_DRAIN,
	REPL_PERSIST,
	REPL_DEEP_PERSIST,
	REPL_READ,
};

/* on-replica-loss */
enum repl_policy {
	REPL_POLICY_FAIL,	/* the error, as PMDK (default) */
	REPL_POLICY_CONTINUE,	/* degraded, at once */
	REPL_POLICY_FENCE,	/* degraded once the fence-peer handler agrees */
};

/*
 * repl_init -- the handle's policy and knobs from the environment, and
 * the record of its replica; 0 or -1 with the message
 */
int repl_init(struct rpmem_pool *rpp, enum proto_msg_type type);

/* repl_fini -- free what repl_init made (the worker is stopped) */
void repl_fini(struct rpmem_pool *rpp);

/*
 * repl_connected -- the session of rpmem_create/rpmem_open is up: READY,
 * or RESYNCING when the record says the replica lacks something; the
 * record is written; 0 or -1 with the message
 */
int repl_connected(struct rpmem_pool *rpp, enum proto_msg_type type,
		const struct rpmem_pool_attr *cattr);

/*
 * repl_open_behind -- rpmem_open under continue or fence whose record
 * says the replica lacks something: the open need not wait for it (ssh,
 * rpmemd, a hash comparison) but may go degraded at once through
 * repl_open_away (whose fence-peer handler may still refuse: then the
 * open waits for it), the worker catching the replica up in the
 * background, as after a loss
 */
bool repl_open_behind(struct rpmem_pool *rpp, enum proto_msg_type type);

/*
 * repl_open_away -- rpmem_open could not start a session: may the handle
 * open without its replica?  Yes under continue or fence, for an error
 * that means the replica cannot be reached (or, `behind`, when
 * repl_open_behind chose not to try), when its record gives its
 * attributes (into *oattr) and size; *nlanes is set.  0, or -1 with the
 * original message kept (or a new one saying why not).
 */
int repl_open_away(struct rpmem_pool *rpp, bool behind, unsigned *nlanes,
		struct rpmem_pool_attr *oattr);

/* repl_start_away -- DEGRADED from the open on; the worker starts */
int repl_start_away(struct rpmem_pool *rpp);

/*
 * repl_lost -- the session broke with `err` on a data call: go DEGRADED,
 * FROZEN or BROKEN as the policy says (a no-op when another thread did)
 */
void repl_lost(struct rpmem_pool *rpp, int err);

/*
 * repl_away -- a data call while the replica is not in sync: the range
 * is recorded (reads are served from the local memory); held while
 * FROZEN.  0, or -1 with the message.  The caller holds lane `held`,
 * which this releases.
 */
int repl_away(struct rpmem_pool *rpp, unsigned held, enum repl_op op,
		size_t off, size_t len, void *buf);

/* repl_attr -- rpmem_set_attr succeeded: the record keeps `attr` */
void repl_attr(struct rpmem_pool *rpp, const struct rpmem_pool_attr *attr);

/*
 * repl_close -- rpmem_close: a resync under way is given up to
 * RPMEM_CLOSE_TIMEOUT to finish; what is left is recorded for the next
 * open; the worker stops and the live status goes
 */
void repl_close(struct rpmem_pool *rpp);

/*
 * repl_live -- handles of this process not closed yet (their workers may
 * still use the library when the process exits without closing them)
 */
unsigned repl_live(void);

/* repl_policy -- the handle's */
enum repl_policy repl_policy(const struct rpmem_pool *rpp);

#endif /* RPMEM_REPL_H */
