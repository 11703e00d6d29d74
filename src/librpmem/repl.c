/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl.c -- a replica that comes and goes (repl.h): the state machine's
 * one door and its table, the loss of a session, the data calls while
 * the replica is not in sync, and close; what a session start decides
 * is repl_open.c's, the knobs, record and status repl_setup.c's
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

#define S(x) (1U << RPMEM_ST_##x)

/* the states each state may move to (repl.h draws them) */
static const unsigned Legal[] = {
	[RPMEM_ST_OPENING] = S(READY) | S(RESYNCING) | S(DEGRADED) |
		S(FROZEN) | S(BROKEN),
	[RPMEM_ST_READY] = S(DEGRADED) | S(FROZEN) | S(RESYNCING) | S(BROKEN),
	[RPMEM_ST_DEGRADED] = S(DEGRADED) | S(RESYNCING) | S(BROKEN),
	[RPMEM_ST_FROZEN] = S(FROZEN) | S(DEGRADED) | S(RESYNCING) |
		S(READY) | S(BROKEN),
	[RPMEM_ST_RESYNCING] = S(RESYNCING) | S(READY) | S(DEGRADED) |
		S(FROZEN) | S(BROKEN),
	[RPMEM_ST_BROKEN] = S(BROKEN),
};
#undef S

/* repl_legal -- may a handle move from `from` to `to`? */
bool
repl_legal(int from, int to)
{
	return from >= 0 && from <= RPMEM_ST_BROKEN && to >= 0 &&
		to <= RPMEM_ST_BROKEN && (Legal[from] & (1U << to));
}

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

/* repl_enter -- the one door: move to state `to` */
int
repl_enter(RPMEMpool *rpp, enum rpmem_state to, const char *why)
{
	struct repl *rp = rpp->repl;
	enum rpmem_state from = (enum rpmem_state)atomic_load(&rpp->state);
	if (!repl_legal((int)from, (int)to)) {
		log_err("'%s' on %s: a move from %s to %s refused (%s)",
			rpp->desc, rpp->target.node,
			rstate_name(repl_rstate(rpp, from)),
			rstate_name(repl_rstate(rpp, to)), why ? why : "");
		return -1;
	}
	/* an async replica acknowledges from its log once READY: the master
	 * rolls its generation and the record says "behind" first, and
	 * nothing is acknowledged if not */
	if (to == RPMEM_ST_READY && from != RPMEM_ST_READY &&
			async_ready(rpp)) {
		int expected = 0;
		atomic_compare_exchange_strong(&rpp->error, &expected,
			ECONNRESET);
		to = RPMEM_ST_BROKEN;
		why = "an async replica's generation, record or sender could "
			"not be started";
	}
	atomic_store(&rpp->state, to);
	/* in sync again: the peer is unfenced (the worker runs it); lost
	 * before that: it stays fenced */
	bool insync = to == RPMEM_ST_READY && rp->unfence_cmd && !rp->tool;
	rp->unfence_due = insync && (from != RPMEM_ST_READY ||
		rp->unfence_due);
	if (rp->unfence_due)
		(void) repl_worker_start(rpp);
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
	return 0;
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

/* broken -- BROKEN with the sticky errno (mu held) */
static void
broken(RPMEMpool *rpp, int err, const char *why)
{
	int expected = 0;
	atomic_compare_exchange_strong(&rpp->error, &expected, err);
	(void) repl_enter(rpp, RPMEM_ST_BROKEN, why);
}

/*
 * repl_degrade -- the master goes on without its replica (mu held): it
 * takes a new generation (its bitmap for the replica keeps the old one)
 * before the first persist acknowledged without it, then DEGRADED; when
 * that cannot be written, BROKEN: nothing is acknowledged without it
 */
void
repl_degrade(RPMEMpool *rpp, const char *why)
{
	struct repl *rp = rpp->repl;
	int r = mgen_lost(rpp, rp->peer);
	if (r && r != -ENOENT) {
		broken(rpp, ECONNRESET, "the replica is lost and the master's "
			"generations cannot be written");
		return;
	}
	(void) repl_enter(rpp, RPMEM_ST_DEGRADED, why);
}

/*
 * repl_drop -- the session is lost (caller holds mu, no lane): under
 * fail, BROKEN (nothing is acknowledged without the replica, and the
 * master's generations keep the session open: the next open compares
 * what was in flight); else what was in flight is recorded, the session
 * ended, the record says "not in sync" durably, then DEGRADED
 * (continue; a replica marked) or FROZEN (fence: persists held, the
 * worker runs the handler; the generations stay until it agrees)
 */
void
repl_drop(RPMEMpool *rpp, int err, int sticky, const char *why)
{
	struct repl *rp = rpp->repl;
	if (rpp->fab)	/* calls waiting on other lanes return at once */
		fabric_break(rpp->fab, err);
	async_halt(rpp);	/* and those waiting in an async log */
	int error = sticky ? sticky : err == ETIMEDOUT ? ETIMEDOUT :
		ECONNRESET;
	if (rp->policy == REPL_POLICY_FAIL) {
		/*
		 * hung up, so that rpmemd applies nothing more (R3); the
		 * session stays for rpmem_close to hear rpmemd's last words
		 */
		if (rpp->ssh)
			ssh_hangup(rpp->ssh);
		broken(rpp, error, why);
		return;
	}
	lanes_hold_all(rpp);
	for (unsigned i = 0; i < rpp->nlanes; i++)
		pend_record(rpp, i);
	async_lost(rpp);
	struct ssh *ssh = rpp_drop_session(rpp);
	if (ssh && rp->reap)
		(void) ssh_close(rp->reap, 0, NULL, 0);
	if (ssh)
		rp->reap = ssh;
	if (repl_record(rpp, false, why, false)) {
		broken(rpp, error, "the replica is lost and its record cannot "
			"be written");
		lanes_release_all(rpp);
		return;
	}
	if (rp->policy == REPL_POLICY_FENCE && !rp->marked) {
		rp->fence_due = true;
		rp->frozen_until = clock_ms() + rp->freeze_ms;
		(void) repl_enter(rpp, RPMEM_ST_FROZEN, why);
	} else {
		repl_degrade(rpp, why);
	}
	lanes_release_all(rpp);
	if (atomic_load(&rpp->state) != RPMEM_ST_BROKEN &&
			repl_worker_start(rpp))
		broken(rpp, ECONNRESET, "no resync thread");
}

/*
 * repl_pull_ahead -- an async replica's log is congested under
 * on-congestion pull-ahead: the handle stops shipping and goes on at
 * its local speed.  The sender stops once what it sent is answered (the
 * worker waits for that, not the persist that found the log full: on a
 * slow link it is a log's worth of the link's time); what the log still
 * holds and every later persist go to the bitmap,
 * the replica is marked outdated on the live session (a bitmap resync
 * is not ordered: it is a mix until it ends), and the worker resyncs it
 * on that session; the resync's end makes the copies equal and the
 * log ships again (READY).  The session is not dropped: nothing is
 * lost, only the order.
 */
void
repl_pull_ahead(RPMEMpool *rpp)
{
	struct repl *rp = rpp->repl;
	pthread_mutex_lock(&rp->mu);
	if (atomic_load(&rpp->state) != RPMEM_ST_READY) {
		pthread_mutex_unlock(&rp->mu);
		return;
	}
	uint64_t bytes, ms;
	async_lag(rpp, &bytes, &ms);
	char why[ERRMSG_MAX];
	snprintf(why, sizeof(why), "pulled ahead: the async log is congested "
		"(%llu bytes, the oldest %llu ms): resync by the bitmap",
		(unsigned long long)bytes, (unsigned long long)ms);
	lanes_hold_all(rpp);
	async_stop(rpp);
	rp->marked = repl_mark(rpp, true);
	if (repl_record(rpp, false, why, false))
		log_warn("'%s' on %s: %s, but its record could not be written",
			rpp->desc, rpp->target.node, why);
	(void) repl_enter(rpp, RPMEM_ST_RESYNCING, why);
	lanes_release_all(rpp);
	if (repl_worker_start(rpp))
		broken(rpp, ECONNRESET, "no resync thread");
	pthread_mutex_unlock(&rp->mu);
}

/* repl_on_break -- the worker drops a broken session (repl_int.h) */
void
repl_on_break(void *arg)
{
	RPMEMpool *rpp = arg;
	struct repl *rp = rpp->repl;
	if (!rp)	/* a handle's fabric closes before repl_fini: a guard */
		return;
	atomic_store(&rp->drop_due, true);
	/*
	 * the thread that broke it may hold a lane; repl_drop holds mu
	 * while it joins the sender and closes the fabric: never wait
	 */
	if (pthread_mutex_trylock(&rp->mu))
		return;
	if (atomic_load(&rpp->state) == RPMEM_ST_READY && !rp->stop)
		(void) repl_worker_start(rpp);
	pthread_cond_broadcast(&rp->cv);
	pthread_mutex_unlock(&rp->mu);
}

/* lost_msg -- the message of a data call whose session broke */
static int
lost_msg(RPMEMpool *rpp, int err, const char *what, unsigned lane)
{
	if (err == ETIMEDOUT)
		return fail(err, "%s on lane %u: no answer from %s within %d "
			"s; connection dropped", what, lane, rpp->target.node,
			Env.timeout_ms / 1000);
	if (err == EBADMSG)
		return fail(err, "%s on lane %u: an answer from %s failed "
			"authentication (altered, forged, replayed, reordered "
			"or dropped on the way); connection dropped", what,
			lane, rpp->target.node);
	return fail(err, "!%s on lane %u: connection to %s lost", what, lane,
		rpp->target.node);
}

/* repl_lost -- a data call found the session broken */
int
repl_lost(RPMEMpool *rpp, int r, int sticky, const char *what,
		unsigned lane, uint64_t session)
{
	struct repl *rp = rpp->repl;
	int err = r == ETIMEDOUT ? ETIMEDOUT : sticky;
	pthread_mutex_lock(&rp->mu);
	/* the worker may have dropped it and reconnected meanwhile */
	if (atomic_load(&rpp->state) == RPMEM_ST_READY &&
			rpp->session_no == session) {
		char why[ERRMSG_MAX];
		if (err == ETIMEDOUT)
			snprintf(why, sizeof(why), "no answer from %s within "
				"%d s", rpp->target.node, Env.timeout_ms / 1000);
		else
			snprintf(why, sizeof(why), "connection to %s lost: %s",
				rpp->target.node, strerror(err));
		repl_drop(rpp, err, sticky, why);
	}
	bool gone = atomic_load(&rpp->state) == RPMEM_ST_BROKEN;
	pthread_mutex_unlock(&rp->mu);
	/* the call that found it says what broke; later ones the sticky */
	return gone ? lost_msg(rpp, err, what, lane) : 0;
}

/* repl_break -- BROKEN with `err`, where nothing goes on without it */
void
repl_break(RPMEMpool *rpp, int err, const char *why)
{
	struct repl *rp = rpp->repl;
	pthread_mutex_lock(&rp->mu);
	if (atomic_load(&rpp->state) != RPMEM_ST_BROKEN)
		broken(rpp, err, why);
	pthread_mutex_unlock(&rp->mu);
}

/* hold -- a persist while FROZEN: until it is over, or BROKEN */
static int
hold(RPMEMpool *rpp)
{
	struct repl *rp = rpp->repl;
	pthread_mutex_lock(&rp->mu);
	int s;
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

/* repl_worker_stop -- the worker ends (a handler's wait too), joined */
void
repl_worker_stop(RPMEMpool *rpp)
{
	struct repl *rp = rpp->repl;
	pthread_mutex_lock(&rp->mu);
	rp->stop = true;
	pthread_cond_broadcast(&rp->cv);
	pthread_mutex_unlock(&rp->mu);
	if (rp->stop_fd >= 0) {
		uint64_t one = 1;
		(void) !write(rp->stop_fd, &one, sizeof(one));
	}
	if (rp->running)
		pthread_join(rp->worker, NULL);
	rp->running = false;
}

/* repl_close -- a resync under way may finish; what is left is recorded */
uint32_t
repl_close(RPMEMpool *rpp)
{
	struct repl *rp = rpp->repl;
	pthread_mutex_lock(&rp->mu);
	struct timespec dl;
	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += rp->close_ms / 1000;
	dl.tv_nsec += (long)(rp->close_ms % 1000) * 1000000;
	if (dl.tv_nsec >= 1000000000) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000;
	}
	while (rp->running && (atomic_load(&rpp->state) == RPMEM_ST_RESYNCING ||
			(atomic_load(&rpp->state) == RPMEM_ST_FROZEN &&
			rpp->ssh)))
		if (pthread_cond_timedwait(&rp->cv, &rp->mu, &dl) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&rp->mu);
	repl_worker_stop(rpp);

	int s = atomic_load(&rpp->state);
	/* a sender pulled ahead that no resync collected (async_stop):
	 * it ends, and what it had not had answered is recorded below */
	if (s == RPMEM_ST_RESYNCING)
		async_lost(rpp);
	/*
	 * what a handle acknowledged without its replica is recorded; a
	 * BROKEN one acknowledged nothing more (fail: the application got
	 * the error, and the replica is left as it is, as PMDK leaves it)
	 */
	bool behind = (s == RPMEM_ST_DEGRADED || s == RPMEM_ST_FROZEN ||
		s == RPMEM_ST_RESYNCING) && rp->recorded;
	const char *why = NULL, *how = rstate_name(repl_rstate(rpp,
		(enum rpmem_state)s));
	/*
	 * an async replica's log drains first: the replica then takes the
	 * master's current; what could not be shipped in time is recorded
	 * as above, and the replica keeps its generation
	 */
	if (s == RPMEM_ST_READY && async_on(rpp)) {
		if (!async_close(rpp, rp->close_ms)) {
			behind = true;
			why = "closed before the async log drained";
			how = "before its async log drained";
		} else if (resync_adopt(rpp)) {
			log_warn("'%s' on %s: the async log drained, but the "
				"replica did not take the master's generation: "
				"the next open compares the copies", rpp->desc,
				rpp->target.node);
		} else if (repl_record(rpp, true, NULL, false)) {
			log_warn("'%s' on %s is in sync, but its record still "
				"says it is not", rpp->desc, rpp->target.node);
		}
	}
	if (behind) {
		size_t left = oos_bytes(&rp->oos);
		if (repl_record(rpp, false, why, true) == 0)
			log_warn("'%s' on %s closed %s: %zu bytes out of sync "
				"%s, the next open resumes", rpp->desc,
				rpp->target.node, how, left,
				rp->ranges_known ? "recorded" :
				"(to be found by comparing hashes)");
	}
	/* a replica in sync takes the master's generation with the close */
	return s == RPMEM_ST_READY && !behind && rpp->has_gen && !rp->tool ?
		PROTO_CLOSE_FLAG_INSYNC : 0;
}

/* repl_ended -- the session's CLOSE went through, or not */
void
repl_ended(RPMEMpool *rpp, bool clean)
{
	struct repl *rp = rpp->repl;
	if (clean && !rp->tool && rp->peer && mgen_closed(rpp, rp->peer) &&
			mgen_where(rpp)[0])
		log_warn("'%s' on %s: the master's generations still say a "
			"session is open: the next open compares the copies",
			rpp->desc, rpp->target.node);
	if (rp->status_path[0])
		(void) unlink(rp->status_path);
}
