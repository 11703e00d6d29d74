/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl_int.h -- the state shared by the files of a replica that comes
 * and goes: repl.c (the state machine's one door, losses, the data
 * calls while away, close), repl_open.c (what a session start decides),
 * repl_setup.c (knobs, record, status), resync.c (the worker: the
 * fence-peer handler, reconnect, resync), mgen.c (the master copy's
 * generations) and peer_handlers.c (the handlers)
 */
#ifndef RPMEM_REPL_INT_H
#define RPMEM_REPL_INT_H 1

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "gen_file.h"
#include "oos.h"
#include "repl.h"
#include "rpmem.h"
#include "rstate.h"

/* where the master copy's generations live (mgen.c) */
struct mgen {
	char path[PATH_MAX];	/* "": none kept (memory of no file) */
	struct gen_part part;	/* the part 0 they speak of */
};

struct repl {
	enum repl_policy policy;
	char *fence_cmd;		/* RPMEM_FENCE_PEER_CMD */
	char *unfence_cmd;		/* RPMEM_UNFENCE_PEER_CMD */
	int freeze_ms;			/* RPMEM_FREEZE_TIMEOUT */
	int retry_min_ms;		/* RPMEM_RECONNECT_MIN_MS */
	int retry_max_ms;		/* RPMEM_RECONNECT_MAX_MS */
	uint64_t rate;			/* RPMEM_RESYNC_RATE, bytes/s; 0: none */
	int close_ms;			/* RPMEM_CLOSE_TIMEOUT */
	bool tool;			/* the rpmem tool's: no record, no loss */
	bool readonly;			/* it writes nothing (rpmem info) */

	/* never taken while a lane is held: lanes are taken under it */
	pthread_mutex_t mu;
	pthread_cond_t cv;		/* state changes, worker wake-ups */
	pthread_t worker;
	bool running;			/* the worker was started */
	bool stop;			/* the worker must end */
	int stop_fd;			/* eventfd: a handler's wait ends */
	struct ssh *reap;		/* a dropped session's ssh child */
	long long frozen_until;		/* FROZEN: clock_ms deadline */
	bool fence_due;			/* the handler is to run (worker) */
	bool unfence_due;		/* in sync again: the unfence-peer
					 * handler is to run (worker) */
	_Atomic bool drop_due;		/* the async sender lost the session:
					 * the worker drops it (repl_drop),
					 * no data call has to find it */
	bool marked;			/* the replica carries a mark that keeps
					 * it from being promoted: a resync
					 * target (generations) or outdated */
	enum gen_verdict refusal;	/* the last session start refused,
					 * GEN_SAME when none was */

	struct mgen mg;			/* the master copy's generations */
	uint64_t peer;			/* the replica's copy id (legacy: one
					 * made of its target and pool set) */

	struct oos oos;			/* what the replica lacks */
	bool ranges_known;		/* else: compare hashes first */

	bool recorded;			/* the record file is ours to keep */
	bool record_bad;		/* it was there and could not be read */
	char record_path[PATH_MAX];
	struct rstate_record rec;	/* as last written */
	char status_path[PATH_MAX];
	struct rstate_status st;	/* live state, as last written */
	long long status_ms;		/* when it was written */
};

/* lanes_hold_all / lanes_release_all -- every lane of the handle */
void lanes_hold_all(RPMEMpool *rpp);
void lanes_release_all(RPMEMpool *rpp);

/*
 * repl_enter -- the one door of the handle's state: move to `to` (the
 * caller holds mu) when the transition table allows it, rewrite the
 * live status, log a line and wake waiters; `why` says what happened
 * (kept as the last error when not NULL).  -1 (logged) for a move the
 * table refuses: the state stays.
 */
int repl_enter(RPMEMpool *rpp, enum rpmem_state to, const char *why);

/* repl_rstate -- the rstate name of handle state s (refusals too) */
enum rstate_state repl_rstate(const RPMEMpool *rpp, enum rpmem_state s);

/*
 * repl_load_ranges -- the record's out-of-sync ranges into the bitmap,
 * or, when they are not known, a hash comparison to come
 */
void repl_load_ranges(RPMEMpool *rpp);

/* repl_status -- rewrite the live status (caller holds mu) */
void repl_status(RPMEMpool *rpp);

/*
 * repl_record -- write the record: in sync or not (then since when and
 * why, and, when `ranges`, what the bitmap holds); 0 or -errno
 */
int repl_record(RPMEMpool *rpp, bool in_sync, const char *why, bool ranges);

/*
 * repl_degrade -- the master goes on without its replica: a new
 * generation first, then DEGRADED (BROKEN when it cannot be kept)
 */
void repl_degrade(RPMEMpool *rpp, const char *why);

/*
 * repl_drop -- the session is lost with `err` (its fabric's sticky
 * errno `sticky`, 0 when none): away as the policy says (mu held)
 */
void repl_drop(RPMEMpool *rpp, int err, int sticky, const char *why);

/*
 * repl_begin -- a session started (rpp_connect) with the replica is the
 * handle's from now on, or is ended: what its generations (or, with a
 * peer without them, the record) decide: READY, a resync (RESYNCING, or
 * FROZEN when persists must wait for it), or a refusal.  For rpmem_open
 * and rpmem_create (`opening`) and for the worker's reconnects alike.
 * The caller holds mu and no lane; 0, or -1 with the message.
 */
int repl_begin(RPMEMpool *rpp, RPMEMpool *session, bool opening);

/*
 * repl_mark -- put our outdated mark on the replica of the session, or
 * take it off (a peer of minor 4); does it carry it afterwards?
 */
bool repl_mark(RPMEMpool *rpp, bool on);

/*
 * gen_call -- one GEN request `op` with the master's generations g; 0
 * with the answer in *resp, or a -errno of the channel or of rpmemd's
 * refusal (resp->status nonzero)
 */
int gen_call(RPMEMpool *rpp, int op, const struct gen *g,
		struct proto_resp *resp);

/*
 * repl_establish -- a session now in sync whose master copy had no
 * generations known: new ones, adopted by the replica; 0 or -errno
 */
int repl_establish(RPMEMpool *rpp);

/* repl_worker_start -- start the worker if it is not running (mu held) */
int repl_worker_start(RPMEMpool *rpp);

/* repl_worker_stop -- the worker ends (a handler's wait too), joined */
void repl_worker_stop(RPMEMpool *rpp);

/* repl_worker -- the worker's body (resync.c) */
void *repl_worker(void *arg);

/*
 * fence_peer -- run the fence-peer handler for the handle (mu not held);
 * 0 when it exited 0, else -1 with why in `msg`; it is killed when the
 * handle closes (stop_fd)
 */
int fence_peer(RPMEMpool *rpp, const char *reason, char *msg, size_t len);

/*
 * unfence_peer -- run the unfence-peer handler, the replica in sync
 * again (mu not held; the worker only, so never beside fence_peer); 0
 * when it exited 0, else -1 and why in msg (logged)
 */
int unfence_peer(RPMEMpool *rpp, char *msg, size_t len);

/* mgen.c: the master copy's generations */

/*
 * mgen_locate -- beside the part file mapped at the pool's first byte;
 * none for memory of no file
 */
void mgen_locate(RPMEMpool *rpp);

/* mgen_where -- the file ("" when none is kept) */
const char *mgen_where(const RPMEMpool *rpp);

/* mgen_get -- the master copy's identifiers; -ENOENT: none known */
int mgen_get(RPMEMpool *rpp, struct gen *g);

/*
 * mgen_establish -- a session in sync with `peer` while none were
 * known: new identifiers, the session open; into *g
 */
int mgen_establish(RPMEMpool *rpp, uint64_t peer, struct gen *g);

/* mgen_session -- a session with `peer` begins (its bytes may differ) */
int mgen_session(RPMEMpool *rpp, uint64_t peer);

/*
 * mgen_lost -- the master goes on without `peer`: a new generation, named
 * in the handle's status too
 */
int mgen_lost(RPMEMpool *rpp, uint64_t peer);

/*
 * resync_adopt -- the replica holds what the master holds: it adopts the
 * master's current generation, the master keeps no bitmap of it
 * (resync.c); 0 or a negative errno of the channel
 */
int resync_adopt(RPMEMpool *rpp);

/*
 * mgen_ahead -- an async session with `peer` starts: a new generation,
 * the old one the peer's bitmap, the session open
 */
int mgen_ahead(RPMEMpool *rpp, uint64_t peer);

/* mgen_synced -- `peer` holds the master's current again */
int mgen_synced(RPMEMpool *rpp, uint64_t peer);

/* mgen_closed -- the session with `peer` ended cleanly */
int mgen_closed(RPMEMpool *rpp, uint64_t peer);

#endif /* RPMEM_REPL_INT_H */
