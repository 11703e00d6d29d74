/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl.h -- a replica that comes and goes: what a handle does when its
 * replica is lost (on-replica-loss), and the way back (reconnect, resync)
 *
 * One state machine (rpmem.h's enum rpmem_state), one door (repl_enter,
 * and its table of legal moves); every transition the code makes:
 *
 *   OPENING --in sync-----------------------> READY
 *           --behind, marked or continue----> RESYNCING
 *           --behind, fence, not marked-----> FROZEN (resync held)
 *           --away (continue; fence agreed)-> DEGRADED
 *           --fail: resync failed-----------> BROKEN (the open fails)
 *   READY   --loss: continue----------------> DEGRADED
 *           --async log congested, pull-ahead-> RESYNCING (same session)
 *           --loss: fence-------------------> FROZEN (handler due)
 *           --loss: fail, or no record------> BROKEN
 *   FROZEN  --handler agreed----------------> DEGRADED
 *           --back, replica marked----------> RESYNCING
 *           --back, not marked--------------> FROZEN (resync held)
 *           --held resync done--------------> READY
 *           --away past the freeze timeout--> BROKEN
 *   DEGRADED --back-------------------------> RESYNCING
 *            --refused (split brain...)-----> DEGRADED (noted)
 *   RESYNCING --nothing left----------------> READY
 *             --lost: marked, or continue---> DEGRADED
 *             --lost: fence, not marked-----> FROZEN
 *             --lost: fail (open's resync)--> BROKEN
 *   any     --a session's channel dies under fail, close's error--> BROKEN
 *
 * Whether a session start is in sync, behind (by the master's bitmap or
 * by hashes) or refused is decided from both copies' data-generation
 * identifiers (gen.h), kept with their data, never from a record alone;
 * with a peer that has none (PMDK's rpmemd, protocol minor 4 and
 * before) the client host's record decides, as it did before them.
 *
 * "Marked" means the replica cannot be promoted for up to date: it says
 * so itself (a resync target, from the generations), or carries our
 * outdated mark (OUTDATE), or the fence-peer handler agreed.  Persists
 * are acknowledged without the replica only then, or under continue:
 * under fence they are held (FROZEN) until it is, or until the replica
 * holds them.
 *
 * A persist that is not sent is recorded in the out-of-sync bitmap
 * (oos.h); before the first one returns, the master copy takes a new
 * generation and the client host's record says the replica is not in
 * sync, both durably.  A worker thread per handle runs the fence-peer
 * handler (without the handle's lock), reconnects with a capped
 * back-off and copies the recorded ranges (or those whose hashes
 * differ) while the application goes on; the last ones are copied with
 * every lane held, so no persist can land between the copy and READY.
 */
#ifndef RPMEM_REPL_H
#define RPMEM_REPL_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "librpmem.h"
#include "proto.h"

struct rpmem_pool;
struct rpp_hello;

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
 * repl_init -- the handle's policy and knobs from the environment, the
 * record of its replica and where its master copy's generations live;
 * 0 or -1 with the message
 */
int repl_init(struct rpmem_pool *rpp, enum proto_msg_type type);

/* repl_fini -- the worker stopped and joined, then what repl_init made */
void repl_fini(struct rpmem_pool *rpp);

/*
 * repl_on_break -- fabric_attr.on_break of every session of the handle
 * `arg` (its home): a lane or the channel broke, maybe with no data call
 * to see it (an idle application, the async sender): the worker drops
 * the session as a data call would, unless the state machine's lock is
 * taken, whose holder is dropping it already or leaves it to the next
 * data call or close.  Never blocks.
 */
void repl_on_break(void *arg);

/*
 * repl_hello -- what a session start of the handle tells rpmemd of the
 * master's generations (the session's HELLO); 0 or -1 with the message
 */
int repl_hello(struct rpmem_pool *rpp, enum proto_msg_type type,
		struct rpp_hello *hello);

/*
 * repl_connected -- the session of rpmem_create/rpmem_open is up: READY,
 * or a resync (that the open waits for under fail), or a refusal; 0 or
 * -1 with the message
 */
int repl_connected(struct rpmem_pool *rpp, enum proto_msg_type type,
		const struct rpmem_pool_attr *cattr);

/*
 * repl_refused -- rpmemd refused a session's HELLO: the decision both
 * sides' generations make, into session->refused, and -1 with the
 * message naming them and the last common one
 */
int repl_refused(struct rpmem_pool *session);

/*
 * repl_open_behind -- rpmem_open under continue or fence whose record
 * says the replica lacks something: the open need not wait for it (ssh,
 * rpmemd, a hash comparison) but may go degraded at once through
 * repl_open_away (whose fence-peer handler may still refuse: then the
 * open tries it), the worker catching the replica up in the background
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
 * repl_pull_ahead -- an async replica's log is congested under
 * on-congestion pull-ahead (no lane held): READY -> RESYNCING on the
 * same session, what was not answered and what follows recorded
 */
void repl_pull_ahead(struct rpmem_pool *rpp);

/*
 * repl_lost -- a data call failed with `r` on session `session`
 * (rpp->session_no as it read it, its lane held), broken with the
 * fabric's sticky errno `sticky` (no lane held now): away as
 * on-replica-loss says; a no-op when another thread did, or when the
 * handle has a newer session already.  0: make the call again; -1 with
 * the message: the handle is BROKEN.
 */
int repl_lost(struct rpmem_pool *rpp, int r, int sticky, const char *what,
		unsigned lane, uint64_t session);

/*
 * repl_break -- the handle's session failed where nothing goes on
 * without it (a control call, close): BROKEN with `err` (no lane held)
 */
void repl_break(struct rpmem_pool *rpp, int err, const char *why);

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
 * RPMEM_CLOSE_TIMEOUT to finish, the worker stops, what is left is
 * recorded for the next open; the flags of the session's CLOSE
 */
uint32_t repl_close(struct rpmem_pool *rpp);

/*
 * repl_ended -- after the CLOSE exchange: when it succeeded (`clean`),
 * the master's generations say the session ended cleanly; the live
 * status goes
 */
void repl_ended(struct rpmem_pool *rpp, bool clean);

/* repl_adopt -- the rpmem tool made the replica equal: it says so */
int repl_adopt(struct rpmem_pool *rpp);

/*
 * repl_live -- handles of this process not closed yet (their workers may
 * still use the library when the process exits without closing them)
 */
unsigned repl_live(void);

/* repl_legal -- may a handle move from state `from` to `to`? */
bool repl_legal(int from, int to);

#endif /* RPMEM_REPL_H */
