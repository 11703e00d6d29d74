/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl.c -- a replica that comes and goes (repl.h): the policy and its
 * knobs, the transitions, the data calls while the replica is away, the
 * client host's record of the replica, and close
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "pool_hdr.h"
#include "repl_int.h"
#include "rpmem_tool.h"

#define DEFAULT_FREEZE_S 60
#define DEFAULT_RETRY_MIN_MS 1000
#define DEFAULT_RETRY_MAX_MS 30000
#define DEFAULT_RATE ((uint64_t)256 << 20)
#define DEFAULT_CLOSE_S 30
#define AWAY_LANES_MAX 64	/* granted at an open without the replica */

static const char *const Policy_names[] = {
	[REPL_POLICY_FAIL] = "fail",
	[REPL_POLICY_CONTINUE] = "continue",
	[REPL_POLICY_FENCE] = "fence",
};

/* the handles of this process, numbered for their status files */
static _Atomic unsigned Seq;

/* the handles not closed yet: their workers may still run at exit */
static _Atomic unsigned Live;

/* the rpmem tool's handles keep no record (rpmem_tool_untracked) */
static bool Untracked;

/*
 * the pool size of libpmempool's probe of a remote replica (two pool
 * headers in a volatile buffer, facts 6.6): such a handle is no use of
 * the pool and must leave its record alone
 */
#define PROBE_SIZE 8192

/* rpmem_tool_untracked -- this process's handles keep no record */
void
rpmem_tool_untracked(void)
{
	Untracked = true;
}

/* repl_live -- handles of this process not closed yet */
unsigned
repl_live(void)
{
	return atomic_load(&Live);
}

/* state_of -- the rstate name of a handle state */
static enum rstate_state
state_of(const RPMEMpool *rpp, enum rpmem_state s)
{
	switch (s) {
	case RPMEM_ST_DEGRADED:
		return rpp->repl->split_brain ? RSTATE_SPLIT_BRAIN :
			RSTATE_DEGRADED;
	case RPMEM_ST_FROZEN:
		return RSTATE_FROZEN;
	case RPMEM_ST_RESYNCING:
		return RSTATE_RESYNCING;
	case RPMEM_ST_BROKEN:
		return RSTATE_BROKEN;
	default:
		return RSTATE_CONNECTED;
	}
}

/*
 * env_num -- a decimal from the environment with an optional suffix
 * (K, M, G: powers of 1024, when `sized`), or `def`; -1 when invalid
 */
static int
env_num(const char *name, uint64_t def, uint64_t max, bool sized,
		uint64_t *out)
{
	const char *s = getenv(name);
	*out = def;
	if (!s || !*s)
		return 0;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	unsigned shift = 0;
	if (sized && *end) {
		const char *sfx = strchr("KMG", *end & ~0x20);
		if (sfx && end[1] == '\0') {
			shift = 10 * (unsigned)(sfx - "KMG" + 1);
			end++;
		}
	}
	if (errno || *end || s[0] == '-' || end == s ||
			v > (max >> shift))
		return fail(EINVAL, "invalid %s=%s (a number up to %" PRIu64
			"%s)", name, s, max, sized ? ", K, M or G" : "");
	*out = (uint64_t)v << shift;
	return 0;
}

/* repl_policy -- the handle's */
enum repl_policy
repl_policy(const RPMEMpool *rpp)
{
	return rpp->repl->policy;
}

/* knobs -- the policy and its knobs from the environment */
static int
knobs(struct repl *rp)
{
	const char *p = getenv("RPMEM_ON_REPLICA_LOSS");
	rp->policy = REPL_POLICY_FAIL;
	if (p && *p) {
		unsigned i = 0;
		while (i < REPL_POLICY_FENCE + 1 && strcmp(p, Policy_names[i]))
			i++;
		if (i > REPL_POLICY_FENCE)
			return fail(EINVAL, "invalid RPMEM_ON_REPLICA_LOSS=%s "
				"(fail, continue or fence)", p);
		rp->policy = (enum repl_policy)i;
	}
	const char *cmd = getenv("RPMEM_FENCE_PEER_CMD");
	if (rp->policy == REPL_POLICY_FENCE && (!cmd || !*cmd))
		return fail(EINVAL, "RPMEM_ON_REPLICA_LOSS=fence needs a "
			"fence-peer handler in RPMEM_FENCE_PEER_CMD");
	if (cmd && *cmd && !(rp->fence_cmd = strdup(cmd)))
		return fail(ENOMEM, "!copying RPMEM_FENCE_PEER_CMD");
	uint64_t freeze, rmin, rmax, close_s;
	if (env_num("RPMEM_FREEZE_TIMEOUT", DEFAULT_FREEZE_S, 24 * 3600,
			false, &freeze) ||
			env_num("RPMEM_RECONNECT_MIN_MS", DEFAULT_RETRY_MIN_MS,
			3600 * 1000, false, &rmin) ||
			env_num("RPMEM_RECONNECT_MAX_MS", DEFAULT_RETRY_MAX_MS,
			3600 * 1000, false, &rmax) ||
			env_num("RPMEM_RESYNC_RATE", DEFAULT_RATE,
			UINT64_MAX >> 1, true, &rp->rate) ||
			env_num("RPMEM_CLOSE_TIMEOUT", DEFAULT_CLOSE_S,
			24 * 3600, false, &close_s))
		return -1;
	rp->freeze_ms = (int)freeze * 1000;
	rp->retry_min_ms = rmin ? (int)rmin : 1;
	rp->retry_max_ms = rmax < rmin ? (int)rmin : (int)rmax;
	rp->close_ms = (int)close_s * 1000;
	return 0;
}

/*
 * paths -- the record's and the live status's files; without a state
 * directory the handle still works, it only cannot open without its
 * replica, nor show in rpmem status
 */
static void
paths(RPMEMpool *rpp)
{
	struct repl *rp = rpp->repl;
	char dir[PATH_MAX];
	int r = rstate_dir(dir, sizeof(dir), true);
	if (r) {
		log_warn("no state directory (%s): '%s' on %s can open only "
			"with its replica", strerror(-r), rpp->desc,
			rpp->target.node);
		return;
	}
	if (rstate_record_path(dir, rpp->target_str, rpp->desc,
			rp->record_path, sizeof(rp->record_path)))
		rp->record_path[0] = '\0';
	unsigned seq = atomic_fetch_add(&Seq, 1);
	if (rstate_status_path(dir, getpid(), seq, rp->status_path,
			sizeof(rp->status_path)))
		rp->status_path[0] = '\0';
	rp->st.seq = seq;
}

/* repl_init -- the handle's policy, knobs and record */
int
repl_init(RPMEMpool *rpp, enum proto_msg_type type)
{
	struct repl *rp = calloc(1, sizeof(*rp));
	if (!rp)
		return fail(ENOMEM, "!allocating pool handle");
	rpp->repl = rp;
	atomic_fetch_add(&Live, 1);
	pthread_mutex_init(&rp->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&rp->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (knobs(rp))
		return -1;
	if (oos_init(&rp->oos, rpp->pool_size))
		return fail(ENOMEM, "!allocating the out-of-sync record of "
			"a %zu-byte pool", rpp->pool_size);
	rp->ranges_known = true;
	if (Untracked || rpp->pool_size <= PROBE_SIZE) {
		/* a tool's or a probe's handle: the replica as it is */
		rp->policy = REPL_POLICY_FAIL;
		return 0;
	}
	paths(rpp);
	if (rp->record_path[0]) {
		int r = rstate_record_read(rp->record_path, &rp->rec);
		if (r == 0)
			rp->recorded = true;
		else if (r != -ENOENT)
			log_warn("ignoring the record %s: %s",
				rp->record_path, strerror(-r));
		if (r == 0 && type == PROTO_MSG_OPEN &&
				rp->rec.pool_size != rpp->pool_size) {
			/* another use of the set than the recorded one */
			log_warn("'%s' on %s: opened with %zu bytes, its record "
				"says %llu: the record is left alone", rpp->desc,
				rpp->target.node, rpp->pool_size,
				(unsigned long long)rp->rec.pool_size);
			rp->recorded = false;
			rp->record_path[0] = '\0';
			rp->policy = REPL_POLICY_FAIL;
		}
	}
	struct rstate_status *st = &rp->st;
	st->pid = getpid();
	snprintf(st->target, sizeof(st->target), "%s", rpp->target_str);
	snprintf(st->pool_set, sizeof(st->pool_set), "%s", rpp->desc);
	snprintf(st->policy, sizeof(st->policy), "%s",
		Policy_names[rp->policy]);
	st->pool_size = rpp->pool_size;
	return 0;
}

/* repl_fini -- free what repl_init made */
void
repl_fini(RPMEMpool *rpp)
{
	struct repl *rp = rpp->repl;
	if (!rp)
		return;
	if (rp->reap)
		(void) ssh_close(rp->reap, 0, NULL, 0);
	oos_fini(&rp->oos);
	rstate_record_free(&rp->rec);
	free(rp->fence_cmd);
	pthread_cond_destroy(&rp->cv);
	pthread_mutex_destroy(&rp->mu);
	free(rp);
	rpp->repl = NULL;
	atomic_fetch_sub(&Live, 1);
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

/* repl_status -- rewrite the live status */
void
repl_status(RPMEMpool *rpp)
{
	struct repl *rp = rpp->repl;
	if (!rp->status_path[0])
		return;
	struct rstate_status *st = &rp->st;
	st->state = state_of(rpp, (enum rpmem_state)atomic_load(&rpp->state));
	st->out_of_sync = oos_bytes(&rp->oos);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	st->updated_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	rp->status_ms = clock_ms();
	int r = rstate_status_write(rp->status_path, st);
	if (r)
		log_warn("writing %s: %s", rp->status_path, strerror(-r));
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
	if (state_of(rpp, from) != state_of(rpp, to) || from != to)
		rp->st.since = (int64_t)time(NULL);
	log_notice("'%s' on %s: %s -> %s%s%s (%zu bytes out of sync)",
		rpp->desc, rpp->target.node, rstate_name(state_of(rpp, from)),
		rstate_name(state_of(rpp, to)), why ? ": " : "", why ? why : "",
		oos_bytes(&rp->oos));
	repl_status(rpp);
	pthread_cond_broadcast(&rp->cv);
}

/* repl_record -- write the record of the replica */
int
repl_record(RPMEMpool *rpp, bool in_sync, const char *why, bool ranges)
{
	struct repl *rp = rpp->repl;
	if (!rp->record_path[0])
		return -ENOENT;
	struct rstate_record *rec = &rp->rec;
	snprintf(rec->target, sizeof(rec->target), "%s", rpp->target_str);
	snprintf(rec->pool_set, sizeof(rec->pool_set), "%s", rpp->desc);
	rec->pool_size = rpp->pool_size;
	if (!in_sync && (rec->in_sync || !rp->recorded || !rec->since))
		rec->since = (int64_t)time(NULL);
	if (in_sync)
		rec->since = 0;
	rec->in_sync = in_sync;
	if (why)
		snprintf(rec->reason, sizeof(rec->reason), "%s", why);
	else if (in_sync)
		rec->reason[0] = '\0';
	free(rec->ranges);
	rec->ranges = NULL;
	rec->nranges = 0;
	rec->ranges_known = in_sync || (ranges && rp->ranges_known);
	if (rec->ranges_known && !in_sync) {
		int r = oos_ranges(&rp->oos, &rec->ranges, &rec->nranges);
		if (r)
			rec->ranges_known = false;
	}
	int r = rstate_record_write(rp->record_path, rec);
	if (r) {
		log_err("writing the record of '%s' on %s (%s): %s",
			rpp->desc, rpp->target.node, rp->record_path,
			strerror(-r));
		return r;
	}
	rp->recorded = true;
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

/*
 * load_ranges -- the record's out-of-sync ranges into the bitmap (or,
 * when they are not known, a hash comparison to come)
 */
static void
load_ranges(RPMEMpool *rpp)
{
	struct repl *rp = rpp->repl;
	rp->ranges_known = rp->rec.ranges_known;
	for (size_t i = 0; rp->ranges_known && i < rp->rec.nranges; i++)
		oos_mark(&rp->oos, rp->rec.ranges[i].off,
			rp->rec.ranges[i].len);
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
		load_ranges(rpp);
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

/* repl_open_away -- may rpmem_open open without its replica? */
int
repl_open_away(RPMEMpool *rpp, unsigned *nlanes,
		struct rpmem_pool_attr *oattr)
{
	struct repl *rp = rpp->repl;
	int err = errno;
	if (rp->policy == REPL_POLICY_FAIL || !unreachable(err))
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
	load_ranges(rpp);
	/* ranges now live in memory: a crash leaves only "compare" */
	if (repl_record(rpp, false, why, false))
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
	if (s != RPMEM_ST_READY && s != RPMEM_ST_OPENING && rp->recorded) {
		size_t left = oos_bytes(&rp->oos);
		if (repl_record(rpp, false, NULL, true) == 0)
			log_warn("'%s' on %s closed %s: %zu bytes out of sync "
				"%s, the next open resumes", rpp->desc,
				rpp->target.node, rstate_name(state_of(rpp,
				(enum rpmem_state)s)), left,
				rp->ranges_known ? "recorded" :
				"(to be found by comparing hashes)");
	}
	if (rp->status_path[0])
		(void) unlink(rp->status_path);
}

/* rpmem_record_in_sync -- the record of a replica the tool made equal */
int
rpmem_record_in_sync(const char *target, const char *pool_set)
{
	char dir[PATH_MAX], path[PATH_MAX];
	if (rstate_dir(dir, sizeof(dir), false) ||
			rstate_record_path(dir, target, pool_set, path,
			sizeof(path)))
		return 0;	/* no state directory: no record */
	struct rstate_record rec;
	memset(&rec, 0, sizeof(rec));
	int r = rstate_record_read(path, &rec);
	if (r == -ENOENT)
		return 0;
	if (r == 0 && !rec.in_sync) {
		rec.in_sync = true;
		rec.since = 0;
		rec.reason[0] = '\0';
		rec.ranges_known = true;
		free(rec.ranges);
		rec.ranges = NULL;
		rec.nranges = 0;
		r = rstate_record_write(path, &rec);
	}
	rstate_record_free(&rec);
	return r ? fail(-r, "!the record %s of '%s' on %s", path, pool_set,
		target) : 0;
}
