/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * async.h -- an async replica (doc/async.md): while the handle is READY,
 * its data calls copy their bytes into the send log (sendlog.h) and
 * return; a sender thread ships the log in order on a lane of its own
 * as LANE_OP_EPOCHS messages and releases what rpmemd answered.  The
 * rest of the handle's life is the state machine's (repl.h): a lost
 * link is a lost replica, whose unanswered records go to the
 * out-of-sync bitmap; a resync ends in READY, where the sender starts
 * again.
 */
#ifndef RPMEM_ASYNC_H
#define RPMEM_ASYNC_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "repl.h"

struct rpmem_pool;

/*
 * async_init -- the replica's replication settings (replconf.h); for an
 * async one the send log.  0, or -1 with the message.
 */
int async_init(struct rpmem_pool *rpp);

/* async_fini -- the sender stopped, the log freed */
void async_fini(struct rpmem_pool *rpp);

/* async_on -- the handle's replica is async */
bool async_on(const struct rpmem_pool *rpp);

/*
 * async_session -- a session to rpmemd was set up with `n` lanes:
 * refuses a peer that cannot serve an async replica (PMDK's, before
 * protocol 0.8) or too few lanes; 0, or -1 with the message
 */
int async_session(struct rpmem_pool *rpp, bool pmdk, unsigned minor,
		unsigned n);

/*
 * async_ready -- the handle enters READY with a session: the master
 * copy rolls its generation (the replica is behind by design) and the
 * sender starts on the session's last lane.  0, or -errno: nothing may
 * be acknowledged.
 */
int async_ready(struct rpmem_pool *rpp);

/*
 * async_halt -- the session is lost (no lane held): the sender stops and
 * the log closes, so that calls waiting in it return (-EPIPE)
 */
void async_halt(struct rpmem_pool *rpp);

/*
 * async_stop -- pulled ahead (every lane held): the sender takes no
 * more and ends once what it sent is answered, which nobody waits for
 * here; the worker's resync collects it (async_lost) first
 */
void async_stop(struct rpmem_pool *rpp);

/*
 * async_lost -- the session is being dropped (every lane held), or a
 * resync begins after async_stop (no call uses the log while the handle
 * is not READY): the sender stops and what it had not had answered is
 * recorded out of sync; the log starts empty for the next session
 */
void async_lost(struct rpmem_pool *rpp);

/*
 * async_close -- rpmem_close: the log drains within `timeout_ms`, the
 * sender stops; true when everything was answered (the replica then
 * holds what the master holds), else what is left is recorded
 */
bool async_close(struct rpmem_pool *rpp, int timeout_ms);

/* async_lag -- bytes in the send log, its oldest's age in ms (0: sync) */
void async_lag(struct rpmem_pool *rpp, uint64_t *bytes, uint64_t *ms);

/*
 * async_op -- a data call of a READY handle whose replica is async,
 * holding session lane i (used for reads); 0 or -errno (-EPIPE: the
 * sender lost its session)
 */
int async_op(struct rpmem_pool *rpp, unsigned i, enum repl_op op,
		size_t off, size_t len, void *buf);

#endif /* RPMEM_ASYNC_H */
