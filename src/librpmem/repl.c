/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl.c -- a replica that comes and goes (repl.h): the transitions,
 * the opens with the replica behind or away, the data calls while it is
 * not in sync, and close; the knobs, record and status are repl_setup.c's
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "repl_int.h"

#define AWAY_LANES_MAX 64	/* granted at an open without the replica */

/* lanes_hold_all -- every lane, in order (no caller holds one) */
void
lanes_hold_all(RPMEMpool *rpp)
{
	for (unsigned i = 0; i < rpp->nlanes; i++)
		pthread_mutex_lock(&rpp->calls[i].mu);
}

/* lanes_release_all -- the reverse */
void
lanes_release_all(RPMEMpool *rpp)
{
	for (unsigned i = rpp->nlanes; i-- > 0; )
		pthread_mutex_unlock(&rpp->calls[i].mu);
}

/* repl_enter -- move to state `to` */
void
repl_enter(RPMEMpool *rpp, enum rpmem_state to, const char *why)
{
	struct repl *rp = rpp->repl;
	enum rpmem_state from = (enum rpmem_state)atomic_load(&rpp->state);
	atomic_store(&rpp->state, to);
	if (why)
		snprintf(rp->st.last_error, sizeof(rp->st.last_error), "%s",
			why);
	if (from != to)
		rp->st.since = (int64_t)time(NULL);
	log_notice("'%s' on %s: %s -> %s%s%s (%zu bytes out of sync)",
		rpp->desc, rpp->target.node, rstate_name(repl_rstate(rpp, from)),
		rstate_name(repl_rstate(rpp, to)), why ? ": " : "", why ? why : "",
		oos_bytes(&rp->oos));
	repl_status(rpp);
	pthread_cond_broadcast(&rp->cv);
}

/* repl_worker_start -- start the worker if it is not running */
int
repl_worker_start(RPMEMpool *rpp)
{
	struct repl *rp = rpp->repl;
	if (rp->running)
		return 0;
	int r = pthread_create(&rp->worker, NULL, repl_worker, rpp);
	if (r) {
		log_err("starting the resync thread: %s", strerror(r));
		return -r;
	}
	rp->running = true;
	return 0;
}

/* repl_connected -- the session of rpmem_create/rpmem_open is up */
int
repl_connected(RPMEMpool *rpp, enum proto_msg_type type,
		const struct rpmem_pool_attr *cattr)
{
	struct repl *rp = rpp->repl;
	struct rstate_record *rec = &rp->rec;
	const struct rpmem_pool_attr *attr = type == PROTO_MSG_CREATE ?
		cattr : &rpp->resp.attr;
	bool behind = type == PROTO_MSG_OPEN && rp->recorded &&
		!rec->in_sync;
	if (behind && rec->has_attr && attr &&
			memcmp(&rec->attr, attr, sizeof(*attr))) {
		/* not the copy the record speaks of: compare it whole */
		rec->ranges_known = false;
	}
	if (behind)
		repl_load_ranges(rpp);
	rec->has_attr = attr && !proto_attr_is_zero(attr);
	if (rec->has_attr)
		rec->attr = *attr;
	else
		memset(&rec->attr, 0, sizeof(rec->attr));

	pthread_mutex_lock(&rp->mu);
	int ret = 0;
	/*
	 * the record is kept under every policy: a later open may be one
	 * that goes on without the replica, and a replica left behind must
	 * be caught up even by a handle that will not degrade; while
	 * resyncing the bitmap lives in memory only
	 */
	ret = repl_record(rpp, !behind, NULL, false);
	if (ret && !behind)
		ret = 0;	/* a handle in sync works without it */
	if (ret && behind) {
		pthread_mutex_unlock(&rp->mu);
		return fail(-ret, "!%s of '%s' on %s: the replica is behind "
			"and its record cannot be kept", type ==
			PROTO_MSG_CREATE ? "create" : "open", rpp->desc,
			rpp->target.node);
	}
	if (behind) {
		atomic_store(&rpp->state, RPMEM_ST_RESYNCING);
		repl_enter(rpp, RPMEM_ST_RESYNCING, "behind since the last "
			"session");
		ret = repl_worker_start(rpp);
		/*
		 * fail acknowledges nothing the replica lacks: the open
		 * returns once it is resynced, or fails
		 */
		while (!ret && rp->policy == REPL_POLICY_FAIL &&
				atomic_load(&rpp->state) == RPMEM_ST_RESYNCING)
			pthread_cond_wait(&rp->cv, &rp->mu);
		if (!ret && atomic_load(&rpp->state) == RPMEM_ST_BROKEN) {
			pthread_mutex_unlock(&rp->mu);
			return fail(atomic_load(&rpp->error), "open of '%s' on "
				"%s: the resync of what the replica lacked "
				"failed: %s", rpp->desc, rpp->target.node,
				rp->st.last_error);
		}
	} else {
		atomic_store(&rpp->state, RPMEM_ST_READY);
		repl_status(rpp);
	}
	pthread_mutex_unlock(&rp->mu);
	return ret ? fail(-ret, "!starting the resync of '%s'", rpp->desc) :
		0;
}

/*
 * unreachable -- does a failed open say the replica cannot be reached
 * (rather than refused, misconfigured or out of memory)?
 */
static bool
unreachable(int err)
{
	switch (err) {
	case ECONNRESET: case ECONNREFUSED: case ECONNABORTED:
	case ETIMEDOUT: case EHOSTUNREACH: case EHOSTDOWN: case ENETUNREACH:
	case ENETDOWN: case EPIPE: case ENOTCONN: case EIO: case ENXIO:
		return true;
	default:
		return false;
	}
}

/* repl_open_behind -- need rpmem_open wait for its replica? */
bool
repl_open_behind(RPMEMpool *rpp, enum proto_msg_type type)
{
	struct repl *rp = rpp->repl;
	if (type != PROTO_MSG_OPEN || rp->policy == REPL_POLICY_FAIL ||
			!rp->recorded || rp->rec.in_sync)
		return false;
	(void) fail(EAGAIN, "the replica is behind (%s): caught up in the "
		"background", rp->rec.reason[0] ? rp->rec.reason :
		"no reason recorded");
	return true;
}

/* repl_open_away -- may rpmem_open open without its replica? */
int
repl_open_away(RPMEMpool *rpp, bool behind, unsigned *nlanes,
		struct rpmem_pool_attr *oattr)
{
	struct repl *rp = rpp->repl;
	int err = errno;
	if (rp->policy == REPL_POLICY_FAIL || !(behind || unreachable(err)))
		return -1;
	if (!rp->recorded) {
		char was[ERRMSG_MAX];
		rpmem_errmsg_save(was);
		return fail(err, "%s; no record of the replica on this host "
			"to open without it (%s)", was, rp->record_path[0] ?
			rp->record_path : "no state directory");
	}
	char why[ERRMSG_MAX];
	snprintf(why, sizeof(why), "%s", rpmem_errormsg());
	if (rp->policy == REPL_POLICY_FENCE) {
		char msg[ERRMSG_MAX];
		if (fence_peer(rpp, why, msg, sizeof(msg)))
			return fail(err, "%s; the fence-peer handler refused "
				"to let the pool open without its replica: %s",
				why, msg);
	}
	repl_load_ranges(rpp);
	/* ranges now live in memory: a crash leaves only "compare" */
	/* behind: the record keeps the reason it went out of sync */
	if (repl_record(rpp, false, behind ? NULL : why, false))
		return fail(EIO, "%s; and the record of the replica cannot "
			"be written", why);
	if (oattr)
		*oattr = rp->rec.attr;
	rpp->no_headers = !rp->rec.has_attr;
	unsigned n = *nlanes;
	if (n > Env.max_nlanes)
		n = Env.max_nlanes;
	if (n > AWAY_LANES_MAX)
		n = AWAY_LANES_MAX;
	*nlanes = n;
	log_warn("open of '%s' on %s without its replica (%s): degraded",
		rpp->desc, rpp->target.node, why);
	return 0;
}

/* repl_start_away -- DEGRADED from the open on */
int
repl_start_away(RPMEMpool *rpp)
{
	struct repl *rp = rpp->repl;
	pthread_mutex_lock(&rp->mu);
	repl_enter(rpp, RPMEM_ST_DEGRADED, rp->rec.reason);
	int r = repl_worker_start(rpp);
	pthread_mutex_unlock(&rp->mu);
	return r ? fail(-r, "!starting the reconnect of '%s'", rpp->desc) : 0;
}

/* pend_record -- what was flushed and not drained on lane i is lost */
static void
pend_record(RPMEMpool *rpp, unsigned i)
{
	struct lane_calls *c = &rpp->calls[i];
	if (c->pend_end > c->pend_off)
		oos_mark(&rpp->repl->oos, c->pend_off,
			c->pend_end - c->pend_off);
	c->pend_off = c->pend_end = 0;
}

/*
 * repl_drop -- the session is lost (caller holds mu, no lane): record
 * what was in flight, end the session, make the record say "not in sync"
 * durably, then DEGRADED (continue, or fence once the handler agreed or
 * the replica carries our outdated mark), FROZEN (fence refused) or
 * BROKEN (the record cannot be written: nothing may be acknowledged)
 */
void
repl_drop(RPMEMpool *rpp, int err, const char *why)
{
	struct repl *rp = rpp->repl;
	if (rpp->fab)	/* calls waiting on other lanes return at once */
		fabric_break(rpp->fab, err);
	lanes_hold_all(rpp);
	for (unsigned i = 0; i < rpp->nlanes; i++)
		pend_record(rpp, i);
	struct ssh *ssh = rpp_drop_session(rpp);
	if (ssh && rp->reap)
		(void) ssh_close(rp->reap, 0, NULL, 0);
	if (ssh)
		rp->reap = ssh;
	bool fence = rp->policy == REPL_POLICY_FENCE && !rp->marked;
	int r = rp->policy == REPL_POLICY_FAIL ? -1 :
		repl_record(rpp, false, why, false);
	if (r) {
		/* fail: nothing is acknowledged without the replica */
		atomic_store(&rpp->error, err == ETIMEDOUT ? ETIMEDOUT :
			ECONNRESET);
		repl_enter(rpp, RPMEM_ST_BROKEN, rp->policy ==
			REPL_POLICY_FAIL ? why : "the replica is lost and its "
			"record cannot be written");
	} else {
		repl_enter(rpp, fence ? RPMEM_ST_FROZEN : RPMEM_ST_DEGRADED,
			why);
	}
	lanes_release_all(rpp);
	if (r)
		return;
	if (fence) {
		rp->frozen_until = clock_ms() + rp->freeze_ms;
		char msg[ERRMSG_MAX];
		if (fence_peer(rpp, why, msg, sizeof(msg)) == 0)
			repl_enter(rpp, RPMEM_ST_DEGRADED, "fenced: the "
				"fence-peer handler outdated the replica");
		else
			repl_enter(rpp, RPMEM_ST_FROZEN, msg);
	}
	if (repl_worker_start(rpp)) {
		atomic_store(&rpp->error, ECONNRESET);
		repl_enter(rpp, RPMEM_ST_BROKEN, "no resync thread");
	}
}

/* repl_lost -- the session broke with `err` on a data call */
void
repl_lost(RPMEMpool *rpp, int err)
{
	struct repl *rp = rpp->repl;
	pthread_mutex_lock(&rp->mu);
	if (atomic_load(&rpp->state) == RPMEM_ST_READY) {
		char why[ERRMSG_MAX];
		if (err == ETIMEDOUT)
			snprintf(why, sizeof(why), "no answer from %s within "
				"%d s", rpp->target.node, Env.timeout_ms / 1000);
		else
			snprintf(why, sizeof(why), "connection to %s lost: %s",
				rpp->target.node, strerror(err));
		repl_drop(rpp, err, why);
	}
	pthread_mutex_unlock(&rp->mu);
}

/* hold -- a persist while FROZEN: until it is over, or BROKEN */
static int
hold(RPMEMpool *rpp)
{
	struct repl *rp = rpp->repl;
	pthread_mutex_lock(&rp->mu);
	int s;
	/* RESYNCING: the replica carries our outdated mark, or is fenced */
	while ((s = atomic_load(&rpp->state)) == RPMEM_ST_FROZEN)
		pthread_cond_wait(&rp->cv, &rp->mu);
	pthread_mutex_unlock(&rp->mu);
	if (s == RPMEM_ST_BROKEN) {
		int err = atomic_load(&rpp->error);
		return fail(err, "!replica '%s' on %s was not fenced and did "
			"not come back within %d s", rpp->desc,
			rpp->target.node, rp->freeze_ms / 1000);
	}
	return 0;
}

/* repl_away -- a data call while the replica is not in sync */
int
repl_away(RPMEMpool *rpp, unsigned held, enum repl_op op, size_t off,
		size_t len, void *buf)
{
	struct repl *rp = rpp->repl;
	int s = atomic_load(&rpp->state);
	if (op == REPL_READ)
		memcpy(buf, (char *)rpp->pool_addr + off, len);
	else if (op != REPL_DRAIN)
		oos_mark(&rp->oos, off, len);
	pthread_mutex_unlock(&rpp->calls[held].mu);
	if (s == RPMEM_ST_FROZEN && op != REPL_READ && op != REPL_FLUSH)
		return hold(rpp);
	return 0;
}

/* repl_attr -- rpmem_set_attr succeeded: the record keeps `attr` */
void
repl_attr(RPMEMpool *rpp, const struct rpmem_pool_attr *attr)
{
	struct repl *rp = rpp->repl;
	pthread_mutex_lock(&rp->mu);
	rp->rec.has_attr = attr && !proto_attr_is_zero(attr);
	if (rp->rec.has_attr)
		rp->rec.attr = *attr;
	else
		memset(&rp->rec.attr, 0, sizeof(rp->rec.attr));
	if (rp->recorded)
		(void) repl_record(rpp, rp->rec.in_sync, NULL, false);
	pthread_mutex_unlock(&rp->mu);
}

/* repl_close -- a resync under way may finish; what is left is recorded */
void
repl_close(RPMEMpool *rpp)
{
	struct repl *rp = rpp->repl;
	if (!rp)
		return;
	pthread_mutex_lock(&rp->mu);
	struct timespec dl;
	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += rp->close_ms / 1000;
	dl.tv_nsec += (long)(rp->close_ms % 1000) * 1000000;
	if (dl.tv_nsec >= 1000000000) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000;
	}
	while (rp->running && atomic_load(&rpp->state) == RPMEM_ST_RESYNCING)
		if (pthread_cond_timedwait(&rp->cv, &rp->mu, &dl) == ETIMEDOUT)
			break;
	rp->stop = true;
	pthread_cond_broadcast(&rp->cv);
	pthread_mutex_unlock(&rp->mu);
	if (rp->running)
		pthread_join(rp->worker, NULL);
	rp->running = false;

	int s = atomic_load(&rpp->state);
	/*
	 * what a handle acknowledged without its replica is recorded; a
	 * BROKEN one acknowledged nothing more (fail: the application got
	 * the error, and the replica is left as it is, as PMDK leaves it)
	 */
	if ((s == RPMEM_ST_DEGRADED || s == RPMEM_ST_FROZEN ||
			s == RPMEM_ST_RESYNCING) && rp->recorded) {
		size_t left = oos_bytes(&rp->oos);
		if (repl_record(rpp, false, NULL, true) == 0)
			log_warn("'%s' on %s closed %s: %zu bytes out of sync "
				"%s, the next open resumes", rpp->desc,
				rpp->target.node, rstate_name(repl_rstate(rpp,
				(enum rpmem_state)s)), left,
				rp->ranges_known ? "recorded" :
				"(to be found by comparing hashes)");
	}
	if (rp->status_path[0])
		(void) unlink(rp->status_path);
}
