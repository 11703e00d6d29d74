/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * resync.c -- the worker of a handle whose replica is away: it runs the
 * fence-peer handler of a loss, reconnects with a capped back-off (the
 * session's start decides, repl_open.c), finds what the replica lacks
 * (the bitmap, or hashes computed by rpmemd next to the replica), copies
 * that from the local pool while the application goes on, makes the
 * replica take the master's generation and the handle READY again
 *
 * Only the worker writes to the replica while RESYNCING, on lane 0,
 * one piece after the other: application persists are recorded, not
 * sent, so no copy can overtake a newer one of the same bytes (D3).
 * The last pieces are copied with every lane held.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "hash.h"
#include "log.h"
#include "obc.h"
#include "pool_hdr.h"
#include "repl_int.h"

#define PIECE ((size_t)4 << 20)		/* copied between two drains */
#define FINAL_MAX ((size_t)4 << 20)	/* copied with every lane held */
#define PASSES_MAX 16			/* then the rest with lanes held */
#define STATUS_MS 1000			/* live status during a resync */
#define REFUSED_RETRY_MAX_MS 30000	/* the back-off after a refusal */
#define HASH_CHUNK OOS_CHUNK

/*
 * how rpmemd refuses a pool set `rpmem promote` made a master (its
 * marker's description, scenario F3): the replica of a master that
 * went on without it was promoted meanwhile, a split brain
 */
#define RPMEMD_SAYS_PROMOTED "promoted to a master on "

/* wait_until -- sleep on the condition until clock_ms() >= t or stop */
static void
wait_until(struct repl *rp, long long t)
{
	struct timespec ts = {
		.tv_sec = (time_t)(t / 1000),
		.tv_nsec = (long)(t % 1000) * 1000000,
	};
	while (!rp->stop && clock_ms() < t)
		if (pthread_cond_timedwait(&rp->cv, &rp->mu, &ts) == ETIMEDOUT)
			break;
}

/* first_byte -- where the replica's writable bytes start */
static size_t
first_byte(const RPMEMpool *rpp)
{
	return rpp->no_headers ? 0 : POOL_HDR_SIZE;
}

/*
 * same_pool -- do the attributes of a reopened replica name the pool
 * the record names?  Its pool set uuid and uuid, where the record has
 * them: rpmemd fills in what a create left zero, and a set_attr may
 * change the rest
 */
static bool
same_pool(const struct rpmem_pool_attr *rec, const struct rpmem_pool_attr *a)
{
	static const unsigned char zero[RPMEM_POOL_HDR_UUID_LEN];
	const unsigned char *r[] = { rec->poolset_uuid, rec->uuid };
	const unsigned char *n[] = { a->poolset_uuid, a->uuid };
	for (size_t i = 0; i < 2; i++)
		if (memcmp(r[i], zero, sizeof(zero)) &&
				memcmp(r[i], n[i], sizeof(zero)))
			return false;
	return true;
}

/*
 * refused -- a reconnect the replica refused: a verdict of the
 * generations, or (an rpmemd without them) its promoted marker; noted
 * once in the record, for rpmem info too (mu held)
 */
static void
refused(RPMEMpool *rpp, enum gen_verdict v, const char *msg)
{
	struct repl *rp = rpp->repl;
	bool was = rp->refusal == v;
	rp->refusal = v;
	snprintf(rp->st.refusal, sizeof(rp->st.refusal), "%s",
		gen_verdict_name(v));
	if (was)
		return;
	char why[RSTATE_TEXT_MAX];
	snprintf(why, sizeof(why), "%s", v == GEN_SPLIT ? "split brain: the "
		"replica wrote on its own while this host went on without it" :
		msg);
	(void) repl_record(rpp, false, why, false);
	log_err("%s: '%s' on %s: %s; here it is out of sync since %lld, %zu "
		"bytes: the reconnect is refused", v == GEN_SPLIT ?
		"split brain" : gen_verdict_name(v), rpp->desc,
		rpp->target.node, msg, (long long)rp->rec.since,
		oos_bytes(&rp->oos));
}

/*
 * reconnect -- a new session to the replica, decided by repl_begin
 * (which makes it the handle's); -1 when it failed or was refused
 */
static int
reconnect(RPMEMpool *rpp)
{
	struct repl *rp = rpp->repl;
	RPMEMpool *tmp = rpp_replica(rpp);
	if (!tmp)
		return -1;
	unsigned n = rpp->nlanes;
	struct rpp_hello hello;
	int r = repl_hello(rpp, PROTO_MSG_OPEN, &hello);
	if (!r)
		r = rpp_connect(tmp, PROTO_MSG_OPEN, &n, NULL, &hello);
	char msg[RSTATE_TEXT_MAX];
	snprintf(msg, sizeof(msg), "reconnect: %s", rpmem_errormsg());
	if (!r && rp->rec.has_attr && !same_pool(&rp->rec.attr,
			&tmp->resp.attr)) {
		snprintf(msg, sizeof(msg), "reconnect: the replica's "
			"attributes are not those of its last session "
			"(another pool?): left alone");
		(void) rpp_end(tmp, 0);
		r = -1;
	}
	enum gen_verdict v = tmp->refused;
	if (r && v == GEN_SAME && errno == EACCES &&
			strstr(msg, RPMEMD_SAYS_PROMOTED))
		v = GEN_SPLIT;	/* promoted meanwhile: it wrote too */
	pthread_mutex_lock(&rp->mu);
	rp->st.reconnects++;
	if (!r && repl_begin(rpp, tmp, false)) {
		snprintf(msg, sizeof(msg), "reconnect: %s", rpmem_errormsg());
		v = tmp->refused;
		r = -1;
	}
	if (r) {
		if (v != GEN_SAME)
			refused(rpp, v, msg);
		(void) repl_enter(rpp, (enum rpmem_state)atomic_load(
			&rpp->state), msg);
	}
	pthread_mutex_unlock(&rp->mu);
	if (tmp->ssh)	/* a session repl_begin did not take */
		(void) rpp_end(tmp, 0);
	rpp_free(tmp);
	return r;
}

/*
 * compare -- mark the chunks whose hashes differ from rpmemd's (the
 * ranges are not known); 0 or -errno
 */
static int
compare(RPMEMpool *rpp)
{
	struct repl *rp = rpp->repl;
	size_t from = first_byte(rpp);
	if (rpp->pmdk) {	/* PMDK's rpmemd computes no hashes */
		oos_mark_all(&rp->oos, from);
		return 0;
	}
	struct proto_resp *resp = malloc(sizeof(*resp));
	uint64_t *mine = malloc(PROTO_HASH_MAX * sizeof(*mine));
	int ret = resp && mine ? 0 : -ENOMEM;
	for (size_t off = from; !ret && off < rpp->pool_size; ) {
		size_t n = rpp->pool_size - off;
		if (n > HASH_CHUNK * PROTO_HASH_MAX)
			n = HASH_CHUNK * PROTO_HASH_MAX;
		struct proto_req req = {
			.type = PROTO_MSG_HASH,
			.hash_off = off, .hash_len = n, .hash_chunk = HASH_CHUNK,
		};
		int r = obc_call(rpp->ssh, &req, resp, Env.timeout_ms);
		if (r || resp->status ||
				resp->nhashes != proto_hash_count(n, HASH_CHUNK)) {
			ret = r ? r : -EPROTO;
			break;
		}
		hash64_chunks((char *)rpp->pool_addr + off, n, HASH_CHUNK,
			mine);
		for (uint32_t i = 0; i < resp->nhashes; i++)
			if (mine[i] != resp->hashes[i])
				oos_mark(&rp->oos, off + i * HASH_CHUNK,
					HASH_CHUNK);
		off += n;
	}
	free(mine);
	free(resp);
	return ret;
}

/* copy -- make [off, off + len) of the local pool durable there; -errno */
static int
copy(RPMEMpool *rpp, size_t off, size_t len)
{
	int r = fabric_flush(rpp->fab, 0, off, len, false, false);
	int d = fabric_drain(rpp->fab, 0);
	return r ? r : d;
}

/* progress -- the live status, about once a second */
static void
progress(RPMEMpool *rpp, size_t done, long long start, bool force)
{
	struct repl *rp = rpp->repl;
	long long now = clock_ms();
	if (!force && now - rp->status_ms < STATUS_MS)
		return;
	pthread_mutex_lock(&rp->mu);
	rp->st.resync_done = done;
	rp->st.resync_total = done + oos_bytes(&rp->oos);
	rp->st.resync_rate = now > start ?
		(uint64_t)done * 1000 / (uint64_t)(now - start) : 0;
	repl_status(rpp);
	pthread_mutex_unlock(&rp->mu);
}

/* pace -- hold the resync to RPMEM_RESYNC_RATE */
static void
pace(RPMEMpool *rpp, size_t done, long long start)
{
	struct repl *rp = rpp->repl;
	if (!rp->rate)
		return;
	long long due = start + (long long)((double)done * 1000.0 /
		(double)rp->rate);
	if (clock_ms() >= due)
		return;
	pthread_mutex_lock(&rp->mu);
	wait_until(rp, due);
	pthread_mutex_unlock(&rp->mu);
}

/* lost -- the session broke during the resync: DEGRADED again */
static int
lost(RPMEMpool *rpp, int err, const char *what)
{
	struct repl *rp = rpp->repl;
	char why[ERRMSG_MAX];
	snprintf(why, sizeof(why), "%s: connection to %s lost: %s", what,
		rpp->target.node, strerror(err));
	pthread_mutex_lock(&rp->mu);
	repl_drop(rpp, err, 0, why);
	pthread_mutex_unlock(&rp->mu);
	return -1;
}

/*
 * resync_adopt -- the replica holds what the master holds (every lane
 * held, or no call left: a resync's end, an async log drained at close):
 * with generations it adopts the master's current and the master keeps
 * no bitmap of it; our outdated mark comes off a peer of minor 4.  0 or
 * a negative errno of the channel.
 */
int
resync_adopt(RPMEMpool *rpp)
{
	struct repl *rp = rpp->repl;
	if (!rpp->has_gen || !rpp->mgen.current) {
		rp->marked = repl_mark(rpp, false);
		return repl_establish(rpp);
	}
	struct gen g = rpp->mgen;
	if (mgen_get(rpp, &g) == 0)
		rpp->mgen = g;
	struct proto_resp resp;
	int r = gen_call(rpp, PROTO_GEN_ADOPT, &rpp->mgen, &resp);
	if (r && resp.status)
		log_err("'%s' on %s: the replica refused its new generation: "
			"%s", rpp->desc, rpp->target.node,
			proto_status_str(resp.status));
	if (r)
		return r;
	rpp->rgen = resp.gen;
	rp->marked = false;
	gen_str(rpp->rgen.current, rp->st.replica_generation);
	gen_str(rpp->mgen.current, rp->st.generation);
	r = mgen_synced(rpp, rp->peer);
	if (r && r != -ENOENT)
		log_warn("'%s' on %s is in sync, but the master's generations "
			"still keep a bitmap of it (%s): the next session "
			"compares it", rpp->desc, rpp->target.node,
			strerror(-r));
	return 0;
}

/*
 * finish -- the last out-of-sync bytes copied with every lane held, the
 * replica's generation (or mark) made the master's, the record in sync:
 * READY
 */
static int
finish(RPMEMpool *rpp, size_t *done)
{
	struct repl *rp = rpp->repl;
	pthread_mutex_lock(&rp->mu);
	lanes_hold_all(rpp);
	size_t pos = first_byte(rpp), off, len;
	int r = 0;
	while (!r && oos_take(&rp->oos, &pos, PIECE, &off, &len)) {
		r = copy(rpp, off, len);
		if (r)
			oos_mark(&rp->oos, off, len);
		else
			*done += len;
	}
	if (!r)
		r = resync_adopt(rpp);
	if (!r) {
		if (repl_record(rpp, true, NULL, false))
			log_warn("'%s' on %s is in sync, but its record still "
				"says it is not", rpp->desc, rpp->target.node);
		rp->st.resync_done = *done;
		rp->st.resync_total = *done;
		(void) repl_enter(rpp, RPMEM_ST_READY, "in sync");
	}
	lanes_release_all(rpp);
	pthread_mutex_unlock(&rp->mu);
	return r ? lost(rpp, -r, "resync") : 0;
}

/*
 * resync -- copy what the replica lacks while the application goes on;
 * 0 when READY, -1 when the replica was lost again, 1 when stopped
 */
static int
resync(RPMEMpool *rpp)
{
	struct repl *rp = rpp->repl;
	/* a sender pulled ahead ends first: what it had not had answered
	 * joins the bitmap before the bitmap is read (async_stop) */
	async_lost(rpp);
	if (!rp->ranges_known) {
		int r = compare(rpp);
		if (r)
			return lost(rpp, -r, "comparing hashes");
		rp->ranges_known = true;
	}
	long long start = clock_ms();
	size_t done = 0;
	log_notice("'%s' on %s: resync of %zu bytes", rpp->desc,
		rpp->target.node, oos_bytes(&rp->oos));
	progress(rpp, done, start, true);
	for (unsigned pass = 0; ; pass++) {
		if (oos_bytes(&rp->oos) <= FINAL_MAX || pass == PASSES_MAX)
			return finish(rpp, &done);
		size_t pos = first_byte(rpp), off, len;
		while (oos_take(&rp->oos, &pos, PIECE, &off, &len)) {
			if (rp->stop) {
				oos_mark(&rp->oos, off, len);
				progress(rpp, done, start, true);
				return 1;
			}
			int r = copy(rpp, off, len);
			if (r) {
				oos_mark(&rp->oos, off, len);
				return lost(rpp, -r, "resync");
			}
			done += len;
			progress(rpp, done, start, false);
			pace(rpp, done, start);
		}
	}
}

/*
 * fence -- the fence-peer handler of a loss, run without the handle's
 * lock (persists are held, rpmem status and close go on); DEGRADED when
 * it agreed and nothing moved meanwhile (mu held around it)
 */
static void
fence(RPMEMpool *rpp)
{
	struct repl *rp = rpp->repl;
	char why[RSTATE_TEXT_MAX], msg[ERRMSG_MAX];
	snprintf(why, sizeof(why), "%s", rp->st.last_error);
	rp->fence_due = false;
	pthread_mutex_unlock(&rp->mu);
	int r = fence_peer(rpp, why, msg, sizeof(msg));
	pthread_mutex_lock(&rp->mu);
	if (rp->stop || atomic_load(&rpp->state) != RPMEM_ST_FROZEN ||
			rpp->ssh)
		return;
	if (r)
		(void) repl_enter(rpp, RPMEM_ST_FROZEN, msg);
	else
		repl_degrade(rpp, "fenced: the fence-peer handler outdated "
			"the replica");
}

/*
 * unfence -- the unfence-peer handler, the replica in sync again (mu
 * held around it, released while it runs): a loss meanwhile clears
 * unfence_due and sets fence_due, so the fence-peer handler runs after
 * it, never beside it
 */
static void
unfence(RPMEMpool *rpp)
{
	struct repl *rp = rpp->repl;
	rp->unfence_due = false;
	pthread_mutex_unlock(&rp->mu);
	char msg[ERRMSG_MAX];
	(void) unfence_peer(rpp, msg, sizeof(msg));
	pthread_mutex_lock(&rp->mu);
}

/*
 * repl_worker -- the fence-peer handler of a loss, the unfence-peer
 * handler once in sync again, the drop of a session the async sender
 * lost, reconnects while the replica is away, resyncs once it is back
 */
void *
repl_worker(void *arg)
{
	RPMEMpool *rpp = arg;
	struct repl *rp = rpp->repl;
	int backoff = rp->retry_min_ms;
	pthread_mutex_lock(&rp->mu);
	while (!rp->stop) {
		struct ssh *reap = rp->reap;
		if (reap) {
			rp->reap = NULL;
			pthread_mutex_unlock(&rp->mu);
			(void) ssh_close(reap, 1000, NULL, 0);
			pthread_mutex_lock(&rp->mu);
			continue;
		}
		int s = atomic_load(&rpp->state);
		bool session = rpp->ssh != NULL;
		if (s == RPMEM_ST_FROZEN && !session && rp->fence_due) {
			fence(rpp);
			continue;
		}
		if (s == RPMEM_ST_FROZEN && !session &&
				clock_ms() >= rp->frozen_until) {
			atomic_store(&rpp->error, ETIMEDOUT);
			(void) repl_enter(rpp, RPMEM_ST_BROKEN, "freeze timeout: "
				"the replica was not fenced and did not come "
				"back");
			continue;
		}
		if (s == RPMEM_ST_READY && rp->unfence_due) {
			unfence(rpp);
			continue;
		}
		/* a break no data call saw (repl_on_break): as one would */
		int err = atomic_exchange(&rp->drop_due, false) &&
			s == RPMEM_ST_READY && rpp->fab ?
			fabric_error(rpp->fab) : 0;
		if (err) {
			char why[ERRMSG_MAX];
			snprintf(why, sizeof(why), "connection to %s lost: %s",
				rpp->target.node, strerror(err));
			repl_drop(rpp, err, err, why);
			continue;
		}
		bool away = (s == RPMEM_ST_DEGRADED || s == RPMEM_ST_FROZEN) &&
			!session;
		bool syncing = s == RPMEM_ST_RESYNCING ||
			(s == RPMEM_ST_FROZEN && session);
		if (!away && !syncing) {
			pthread_cond_wait(&rp->cv, &rp->mu);
			continue;
		}
		pthread_mutex_unlock(&rp->mu);
		int r = syncing ? resync(rpp) : reconnect(rpp);
		pthread_mutex_lock(&rp->mu);
		if (r == 0 || syncing) {
			backoff = rp->retry_min_ms;
			continue;
		}
		long long until = clock_ms() + backoff;
		if (atomic_load(&rpp->state) == RPMEM_ST_FROZEN &&
				rp->frozen_until < until)
			until = rp->frozen_until;
		/* the live status says how much is out of sync meanwhile */
		while (!rp->stop && clock_ms() < until) {
			long long slice = clock_ms() + STATUS_MS;
			wait_until(rp, slice < until ? slice : until);
			repl_status(rpp);
		}
		/* a refusal waits for an operator: ask again less often */
		int cap = rp->refusal != GEN_SAME &&
			rp->retry_max_ms < REFUSED_RETRY_MAX_MS ?
			REFUSED_RETRY_MAX_MS : rp->retry_max_ms;
		backoff = backoff > cap / 2 ? cap : backoff * 2;
	}
	pthread_mutex_unlock(&rp->mu);
	return NULL;
}
