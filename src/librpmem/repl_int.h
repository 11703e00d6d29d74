/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl_int.h -- the state shared by repl_setup.c (knobs, record,
 * status), repl.c (transitions, data calls while away, close), resync.c
 * (the worker: reconnect, resync) and fence_peer.c (the handler)
 */
#ifndef RPMEM_REPL_INT_H
#define RPMEM_REPL_INT_H 1

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "oos.h"
#include "repl.h"
#include "rpmem.h"
#include "rstate.h"

struct repl {
	enum repl_policy policy;
	char *fence_cmd;		/* RPMEM_FENCE_PEER_CMD */
	int freeze_ms;			/* RPMEM_FREEZE_TIMEOUT */
	int retry_min_ms;		/* RPMEM_RECONNECT_MIN_MS */
	int retry_max_ms;		/* RPMEM_RECONNECT_MAX_MS */
	uint64_t rate;			/* RPMEM_RESYNC_RATE, bytes/s; 0: none */
	int close_ms;			/* RPMEM_CLOSE_TIMEOUT */

	/* never taken while a lane is held: lanes are taken under it */
	pthread_mutex_t mu;
	pthread_cond_t cv;		/* state changes, worker wake-ups */
	pthread_t worker;
	bool running;			/* the worker was started */
	bool stop;			/* the worker must end */
	struct ssh *reap;		/* a dropped session's ssh child */
	long long frozen_until;		/* FROZEN: clock_ms deadline */
	bool split_brain;		/* the replica refused: promoted */
	bool marked;			/* the replica carries our outdated mark */

	struct oos oos;			/* what the replica lacks */
	bool ranges_known;		/* else: compare hashes first */

	bool recorded;			/* the record file is ours to keep */
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
 * repl_enter -- move to state `to` (the caller holds mu): the live
 * status is rewritten, a line logged, waiters woken; `why` says what
 * happened (kept as the last error when not NULL)
 */
void repl_enter(RPMEMpool *rpp, enum rpmem_state to, const char *why);

/* repl_rstate -- the rstate name of handle state s (split brain too) */
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

/* repl_drop -- the session is lost: away as the policy says (mu held) */
void repl_drop(RPMEMpool *rpp, int err, const char *why);

/* repl_worker_start -- start the worker if it is not running (mu held) */
int repl_worker_start(RPMEMpool *rpp);

/* repl_worker -- the worker's body (resync.c) */
void *repl_worker(void *arg);

/*
 * fence_peer -- run the fence-peer handler for the handle; 0 when it
 * exited 0, else -1 with why in `msg`
 */
int fence_peer(RPMEMpool *rpp, const char *reason, char *msg, size_t len);

#endif /* RPMEM_REPL_INT_H */
