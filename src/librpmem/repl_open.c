/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl_open.c -- what a session start decides (repl.h): the HELLO of the
 * master's generations, their verdict with the replica's (or, with a
 * peer without generations, the record's), and the opens that go on
 * without the replica
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hash.h"
#include "log.h"
#include "obc.h"
#include "repl_int.h"

#define AWAY_LANES_MAX 64	/* granted at an open without the replica */

/*
 * legacy_id -- the peer id of a replica without generations (PMDK's
 * rpmemd, minor 4 and before): one made of its target and pool set, so
 * that the master's generations still keep a bitmap and a session of it
 */
static uint64_t
legacy_id(const RPMEMpool *rpp)
{
	char key[sizeof(rpp->target_str) + PROTO_DESC_MAX];
	int n = snprintf(key, sizeof(key), "%s%c%s", rpp->target_str, 0,
		rpp->desc);
	uint64_t h = hash64(key, n > 0 ? (size_t)n : 0);
	return h ? h : 1;
}

/* repl_hello -- the master's generations a session start tells rpmemd */
int
repl_hello(RPMEMpool *rpp, enum proto_msg_type type, struct rpp_hello *hello)
{
	struct repl *rp = rpp->repl;
	memset(hello, 0, sizeof(*hello));
	if (type == PROTO_MSG_CREATE)
		hello->flags |= PROTO_GEN_FLAG_CREATED;
	if (rp->readonly)
		hello->flags |= PROTO_GEN_FLAG_READONLY;
	/* none kept or known: all zero, the record decides */
	int r = mgen_get(rpp, &hello->m);
	if (r == -ENOENT && type == PROTO_MSG_CREATE && !rp->tool)
		r = mgen_establish(rpp, 0, &hello->m);	/* a new pool */
	if (r == -ENOENT) {
		memset(&hello->m, 0, sizeof(hello->m));
		return 0;
	}
	if (r)
		return fail(-r, "!%s of '%s' on %s: the master's generations "
			"in %s", type == PROTO_MSG_CREATE ? "create" : "open",
			rpp->desc, rpp->target.node, mgen_where(rpp));
	return 0;
}

/*
 * gen_call -- one GEN request over the channel: `op` with the master's
 * generations g; 0 with rpmemd's answer in *resp, the channel's -errno,
 * or the -errno of rpmemd's refusal (resp->status says which)
 */
int
gen_call(RPMEMpool *rpp, int op, const struct gen *g,
		struct proto_resp *resp)
{
	struct proto_req req = {
		.type = PROTO_MSG_GEN,
		.gen_op = op,
		.gen = *g,
	};
	resp->status = 0;
	int r = obc_call(rpp->ssh, &req, resp, Env.timeout_ms);
	return r ? r : resp->status ? -proto_status_errno(resp->status) : 0;
}

/*
 * repl_establish -- a session in sync (or made so) while the master copy had
 * no generations known: it takes new ones and the replica adopts them
 * (a peer of minor 5 on; memory of no file keeps none); 0 or a negative
 * errno
 */
int
repl_establish(RPMEMpool *rpp)
{
	struct repl *rp = rpp->repl;
	if (!rpp->has_gen || rpp->mgen.current || !mgen_where(rpp)[0] ||
			rp->readonly)
		return 0;
	struct gen m;
	int r = mgen_establish(rpp, 0, &m);
	if (r)
		return r;
	struct proto_resp resp;
	if ((r = gen_call(rpp, PROTO_GEN_ADOPT, &m, &resp)))
		return r;
	rpp->mgen = m;
	rpp->rgen = resp.gen;
	rp->peer = resp.gen.id;
	r = rp->tool ? 0 : mgen_session(rpp, rp->peer);
	return r == -ENOENT ? 0 : r;
}

/*
 * repl_mark -- put our outdated mark on the replica of the session (on)
 * or take it off (a peer of minor 4, without generations); true when
 * the replica carries it afterwards.  A peer without OUTDATE (PMDK's,
 * or older) is told nothing; a failure is logged, and found again by
 * the next data call if the channel is gone.
 */
bool
repl_mark(RPMEMpool *rpp, bool on)
{
	if (rpp->pmdk || rpp->resp.ext.minor < PROTO_MINOR_OUTDATE)
		return false;
	struct proto_req req = {
		.type = PROTO_MSG_OUTDATE,
		.outdate_mark = on,
		.outdate_time = (int64_t)time(NULL),
	};
	(void) gethostname(req.outdate_host, sizeof(req.outdate_host) - 1);
	struct proto_resp resp;
	int r = obc_call(rpp->ssh, &req, &resp, Env.timeout_ms);
	if (r || resp.status) {
		log_warn("'%s' on %s: %s the outdated mark failed: %s",
			rpp->desc, rpp->target.node, on ? "setting" :
			"clearing", r ? strerror(-r) :
			proto_status_str(resp.status));
		return !on;
	}
	return on;
}

/*
 * legacy_verdict -- with a peer without generations, the record and the
 * master's own generations decide: behind when the record says so, or
 * cannot be read, or the master wrote without it or was lost with a
 * session open (bytes in flight); a reconnect is behind by definition
 */
static enum gen_verdict
legacy_verdict(RPMEMpool *rpp, uint64_t peer, bool opening)
{
	struct repl *rp = rpp->repl;
	struct gen m;
	const struct gen_peer *mp = NULL;
	if (mgen_where(rpp)[0] && mgen_get(rpp, &m) == 0)
		mp = gen_peer_find(&m, peer);
	bool behind = !opening || rp->record_bad ||
		(rp->recorded && !rp->rec.in_sync) ||
		(mp && (mp->open || mp->bitmap));
	if (!behind)
		return GEN_SAME;
	bool ranges = opening ? rp->recorded && rp->rec.ranges_known &&
		!(mp && mp->open) : rp->ranges_known;
	return ranges ? GEN_BITMAP : GEN_COMPARE;
}

/*
 * record_ranges -- does the record hold the ranges the master wrote
 * without `peer` since its bitmap for it?  Never while the master's
 * session with it is open: that one ended without its close
 */
static bool
record_ranges(const struct repl *rp, const struct gen *m, uint64_t peer)
{
	const struct gen_peer *mp = gen_peer_find(m, peer);
	return rp->recorded && rp->rec.ranges_known && mp && mp->bitmap &&
		!mp->open &&
		rp->rec.replica_id == peer && rp->rec.bitmap_gen == mp->bitmap;
}

/* refusal_msg -- the message of a session start refused */
static int
refusal_msg(RPMEMpool *session, const struct gen_decision *d)
{
	session->refused = d->verdict;
	char m[512], r[512], c[GEN_STR];
	gen_describe(&session->mgen, m, sizeof(m));
	gen_describe(&session->rgen, r, sizeof(r));
	gen_str(d->common, c);
	return fail(EACCES, "'%s' on %s refused: %s; this master: %s; the "
		"replica: %s; last common generation %s (rpmem discard on "
		"the host of the copy whose writes are to go, then open "
		"again)", session->desc, session->target.node, d->why, m, r, c);
}

/* repl_refused -- rpmemd refused the session's HELLO: why, both sides */
int
repl_refused(RPMEMpool *session)
{
	struct gen_decision d;
	gen_decide(&session->mgen, &session->rgen, false, &d);
	if (!gen_refused(d.verdict))	/* it refused what we would not */
		d = (struct gen_decision){ GEN_UNRELATED, 0, "rpmemd refused "
			"the session's generations" };
	return refusal_msg(session, &d);
}

/* repl_begin -- what a started session decides */
int
repl_begin(RPMEMpool *rpp, RPMEMpool *session, bool opening)
{
	struct repl *rp = rpp->repl;
	/*
	 * a master copy whose file keeps no generations (its part file is
	 * new, or its .gen was lost) before a replica with some: the replica
	 * holds the history, the master nothing it can vouch for; its bytes
	 * are never pushed over the replica's (the way back is the other
	 * way: pmempool sync reads the replica into it)
	 */
	bool fresh = session->has_gen && !session->mgen.current &&
		session->rgen.current && !rpp->created && mgen_where(rpp)[0];
	bool legacy = !fresh && (!session->has_gen || !session->mgen.current);
	uint64_t peer = session->has_gen && session->rgen.id ?
		session->rgen.id : legacy_id(rpp);
	struct gen_decision d = { GEN_SAME, 0, "in sync" };
	bool marked = false;
	if (fresh) {
		log_notice("'%s' on %s: this master copy has no generations "
			"(%s is missing or speaks of another part file); the "
			"replica has: its bytes are not overwritten, the master "
			"takes new generations with it", session->desc,
			session->target.node, mgen_where(rpp));
		d.why = "a master copy without generations: the replica is "
			"not overwritten";
	} else if (legacy) {
		d.verdict = legacy_verdict(rpp, peer, opening);
		d.why = "the record, with a peer without generations";
	} else if (rpp->created) {
		/* new, empty on both sides: its creator writes all of it */
		d.why = "created";
	} else {
		bool ranges = opening ? record_ranges(rp, &session->mgen,
			peer) : rp->ranges_known;
		gen_decide(&session->mgen, &session->rgen, ranges, &d);
		if (gen_refused(d.verdict) && !rp->tool)
			return refusal_msg(session, &d);
		marked = d.verdict != GEN_SAME;	/* a target, by rpmemd */
	}
	if (rp->tool)	/* it copies what it wants itself */
		d.verdict = GEN_SAME;
	bool behind = d.verdict != GEN_SAME;
	if (behind && legacy)
		marked = repl_mark(session, true);
	if (!rp->tool && !rp->readonly) {
		int r = mgen_session(rpp, peer);
		if (r && r != -ENOENT)
			return fail(-r, "!'%s' on %s: the master's generations "
				"in %s", rpp->desc, rpp->target.node,
				mgen_where(rpp));
	}
	if (session != rpp) {
		lanes_hold_all(rpp);
		rpp_take_session(rpp, session);
		lanes_release_all(rpp);
	}
	rp->peer = peer;
	rp->marked = marked;
	rp->refusal = GEN_SAME;
	gen_str(session->rgen.current, rp->st.replica_generation);
	gen_str(session->mgen.current, rp->st.generation);
	rp->st.refusal[0] = '\0';
	rp->rec.replica_id = peer;
	if (behind && opening && d.verdict == GEN_BITMAP)
		repl_load_ranges(rpp);
	if (d.verdict == GEN_COMPARE)
		rp->ranges_known = false;
	if (!rp->tool && rp->record_path[0]) {
		int r = repl_record(rpp, !behind, behind ? d.why : NULL,
			false);
		/* without generations the record is all that remembers */
		if (r && behind && legacy)
			return fail(-r, "!'%s' on %s: the replica is behind "
				"and its record cannot be kept", rpp->desc,
				rpp->target.node);
	}
	if (!behind) {
		if (!rp->tool && !legacy && gen_peer_find(&session->mgen, peer))
			(void) mgen_synced(rpp, peer);	/* a stale bitmap */
		/* the rpmem tool's only when it made them equal (repl_adopt) */
		int r = rp->tool ? 0 : repl_establish(rpp);
		if (r)
			return fail(-r, "!'%s' on %s: starting the copies' "
				"generations", rpp->desc, rpp->target.node);
		return repl_enter(rpp, RPMEM_ST_READY, opening ? NULL :
			"in sync");
	}
	char why[ERRMSG_MAX];
	snprintf(why, sizeof(why), "%s: %s", opening ? "opened behind" :
		"reconnected", d.why);
	/* fence: held until it is in sync, unless it says it is behind */
	bool held = rp->policy == REPL_POLICY_FENCE && !marked &&
		(opening || atomic_load(&rpp->state) == RPMEM_ST_FROZEN);
	if (repl_enter(rpp, held ? RPMEM_ST_FROZEN : RPMEM_ST_RESYNCING, why))
		return fail(EINVAL, "'%s' on %s: %s", rpp->desc,
			rpp->target.node, why);
	int r = repl_worker_start(rpp);
	return r ? fail(-r, "!starting the resync of '%s'", rpp->desc) : 0;
}

/* repl_connected -- the session of rpmem_create/rpmem_open is up */
int
repl_connected(RPMEMpool *rpp, enum proto_msg_type type,
		const struct rpmem_pool_attr *cattr)
{
	struct repl *rp = rpp->repl;
	const struct rpmem_pool_attr *attr = type == PROTO_MSG_CREATE ?
		cattr : &rpp->resp.attr;
	struct rstate_record *rec = &rp->rec;
	rec->has_attr = !proto_attr_is_zero(attr);
	if (rec->has_attr)
		rec->attr = *attr;
	else
		memset(&rec->attr, 0, sizeof(rec->attr));
	pthread_mutex_lock(&rp->mu);
	int ret = repl_begin(rpp, rpp, true);
	/* fail acknowledges nothing the replica lacks: the open waits */
	while (!ret && rp->policy == REPL_POLICY_FAIL &&
			atomic_load(&rpp->state) == RPMEM_ST_RESYNCING)
		pthread_cond_wait(&rp->cv, &rp->mu);
	if (!ret && atomic_load(&rpp->state) == RPMEM_ST_BROKEN)
		ret = fail(atomic_load(&rpp->error), "%s of '%s' on %s: the "
			"resync of what the replica lacked failed: %s",
			type == PROTO_MSG_CREATE ? "create" : "open", rpp->desc,
			rpp->target.node, rp->st.last_error);
	pthread_mutex_unlock(&rp->mu);
	return ret;
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

/* away_peer -- the replica's id as the record has it */
static uint64_t
away_peer(const RPMEMpool *rpp)
{
	const struct repl *rp = rpp->repl;
	return rp->rec.replica_id ? rp->rec.replica_id : legacy_id(rpp);
}

/* repl_open_behind -- need rpmem_open wait for its replica? */
bool
repl_open_behind(RPMEMpool *rpp, enum proto_msg_type type)
{
	struct repl *rp = rpp->repl;
	if (type != PROTO_MSG_OPEN || rp->policy == REPL_POLICY_FAIL ||
			!rp->recorded)
		return false;
	struct gen m;
	const struct gen_peer *mp = NULL;
	int r = mgen_where(rpp)[0] ? mgen_get(rpp, &m) : -EINVAL;
	/*
	 * a master copy whose file keeps no generations has nothing to catch
	 * the replica up with: the session start decides (repl_begin)
	 */
	if (r == -ENOENT)
		return false;
	if (r == 0)
		mp = gen_peer_find(&m, away_peer(rpp));
	if (rp->rec.in_sync && !(mp && mp->bitmap))
		return false;
	(void) fail(EAGAIN, "the replica is behind (%s): caught up in the "
		"background", rp->rec.reason[0] ? rp->rec.reason :
		"the master wrote without it");
	return true;
}

/* repl_open_away -- may rpmem_open open without its replica? */
int
repl_open_away(RPMEMpool *rpp, bool behind, unsigned *nlanes,
		struct rpmem_pool_attr *oattr)
{
	struct repl *rp = rpp->repl;
	int err = errno;
	/* refused for what the copies hold: on alone, the refusal noted */
	bool refused = rpp->refused != GEN_SAME &&
		rpp->refused != GEN_MASTER_UNUSABLE;
	if (rp->policy == REPL_POLICY_FAIL ||
			!(behind || refused || unreachable(err)))
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
	rp->peer = away_peer(rpp);
	struct gen m;
	const struct gen_peer *mp = NULL;
	if (mgen_where(rpp)[0] && mgen_get(rpp, &m) == 0)
		mp = gen_peer_find(&m, rp->peer);
	/* lost with a session open: what was in flight is not known */
	if (mp && mp->open)
		rp->rec.ranges_known = false;
	repl_load_ranges(rpp);
	int r = mgen_lost(rpp, rp->peer);
	if (r && r != -ENOENT)
		return fail(-r, "!%s; and the master's generations in %s cannot "
			"be written", why, mgen_where(rpp));
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
	if (refused) {
		rp->refusal = rpp->refused;
		snprintf(rp->st.refusal, sizeof(rp->st.refusal), "%s",
			gen_verdict_name(rpp->refused));
	}
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
	(void) repl_enter(rpp, RPMEM_ST_DEGRADED, rp->rec.reason);
	int r = repl_worker_start(rpp);
	pthread_mutex_unlock(&rp->mu);
	return r ? fail(-r, "!starting the reconnect of '%s'", rpp->desc) : 0;
}

/*
 * repl_adopt -- the rpmem tool made the replica equal to its master
 * (rpmem sync): it takes the master's generation, and the master keeps
 * no bitmap of it
 */
int
repl_adopt(RPMEMpool *rpp)
{
	if (!rpp->has_gen)
		return 0;
	if (!rpp->mgen.current) {
		int r = repl_establish(rpp);
		return r ? fail(-r, "!'%s' on %s: starting the copies' "
			"generations", rpp->desc, rpp->target.node) : 0;
	}
	struct proto_req req = {
		.type = PROTO_MSG_GEN,
		.gen_op = PROTO_GEN_ADOPT,
		.gen = rpp->mgen,
	};
	struct proto_resp resp;
	int lost;
	if (control_call(rpp, &req, &resp, "telling the replica its "
			"generation", &lost)) {
		if (lost)
			repl_break(rpp, lost, "the channel died");
		return -1;
	}
	rpp->rgen = resp.gen;
	int r = mgen_synced(rpp, rpp->rgen.id);
	return r && r != -ENOENT ? fail(-r, "!the master's generations in %s",
		mgen_where(rpp)) : 0;
}
