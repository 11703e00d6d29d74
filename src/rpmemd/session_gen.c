/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * session_gen.c -- the replica's data-generation identifiers through a
 * session (gen.h, doc/generations.md): the replica decides with its
 * master at HELLO and refuses what it must (split brain, a master older
 * than itself), marks itself durably before the master writes a byte
 * (a session open; a resync target), adopts the master's generation when
 * a resync ends or a session in sync closes; a master without
 * generations (PMDK's, or protocol minor 4 and before) leaves its
 * current unknown
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "db_gen.h"
#include "log.h"
#include "session_gen.h"

/* rep_of -- the replica the pool's parts are */
static const struct poolset_replica *
rep_of(const struct db_pool *pool)
{
	return &((const struct db_priv *)pool->priv)->set->replicas[0];
}

/* load -- the replica's file: 0 (an all-zero one when it has none) */
static int
load(const struct db_pool *pool, struct gen_file *f)
{
	bool stale;
	int r = db_gen_read(rep_of(pool), f, &stale);
	if (r == -ENOENT) {
		if (stale)
			log_notice("the generations beside part 0 speak of "
				"another pool that was there: ignored");
		memset(f, 0, sizeof(*f));
		return 0;
	}
	if (r)
		log_err("reading the replica's generations: %s%s",
			strerror(-r), r == -EINVAL ? " (malformed: rpmem "
			"discard rewrites them)" : "");
	return r;
}

/* failed -- r, logged as "doing: its error" when it is one */
static int
failed(int r, const char *doing)
{
	if (r)
		log_err("%s: %s", doing, strerror(-r));
	return r;
}

/* store -- write the replica's file durably */
static int
store(const struct db_pool *pool, struct gen_file *f)
{
	return failed(db_gen_write(rep_of(pool), f),
		"writing the replica's generations");
}

/* session_gen_drop -- new parts, or parts about to go: no generations */
int
session_gen_drop(const struct db_pool *pool)
{
	return failed(db_gen_remove(rep_of(pool)),
		"removing old generations beside a new pool");
}

/*
 * session_gen_legacy -- a master without generations opened the
 * replica: whatever it writes, the replica's current no longer names
 * its bytes (kept in the history)
 */
int
session_gen_legacy(const struct db_pool *pool)
{
	struct gen_file f;
	int r = load(pool, &f);
	if (r || !f.g.id || !f.g.current)
		return r;
	log_notice("a master without generations: the replica's current "
		"becomes unknown");
	gen_adopt(&f.g, 0, 0);
	return store(pool, &f);
}

/* refuse -- note and log a refusal; -EACCES */
static int
refuse(const struct db_pool *pool, struct gen_file *f,
		const struct proto_req *req, const struct gen_decision *d)
{
	char mine[512], theirs[512], c[GEN_STR];
	gen_describe(&f->g, mine, sizeof(mine));
	gen_describe(&req->gen, theirs, sizeof(theirs));
	gen_str(d->common, c);
	log_err("%s; refused: this replica: %s; the master: %s; last "
		"common generation %s", d->why, mine, theirs, c);
	if (f->g.id) {
		f->refused_peer = req->gen.id;
		snprintf(f->refused, sizeof(f->refused), "%s",
			gen_verdict_name(d->verdict));
		f->refused_time = (int64_t)time(NULL);
		(void) store(pool, f);
	}
	return -EACCES;
}

/* session_gen_hello -- HELLO: decide, refuse or mark, answer */
int
session_gen_hello(struct session_gen *sg, const struct db_pool *pool,
		const struct proto_req *req, bool created,
		struct proto_resp *resp)
{
	struct gen_file f;
	int r = load(pool, &f);
	if (r)
		return r;
	resp->gen = f.g;	/* as the session found it */
	const struct gen *m = &req->gen;
	sg->master = *m;
	sg->readonly = req->gen_flags & PROTO_GEN_FLAG_READONLY;
	if (!m->current) {
		/*
		 * a master with none kept or known: the replica's current no
		 * longer names its bytes, unless it wrote on its own since its
		 * last master (promoted): then which is newer is not known
		 */
		if (sg->readonly)
			return 0;
		if (gen_wrote_alone(&f.g)) {
			struct gen_decision d = { GEN_UNRELATED, 0, "the master "
				"has no generations and this replica wrote on "
				"its own" };
			return refuse(pool, &f, req, &d);
		}
		r = session_gen_legacy(pool);
		if (!r)
			sg->hello = true;
		return r;
	}
	if (!m->id) {
		log_err("HELLO without the master's copy id");
		return -EPROTO;
	}
	if (created) {
		/* empty until the master has written it all: a target */
		r = gen_new(&f.g, m->current);
		f.g.target = m->id;
		resp->gen = f.g;	/* no other was found: the new one */
	} else {
		struct gen_decision d;
		gen_decide(m, &f.g, false, &d);
		char c[GEN_STR];
		gen_str(d.common, c);
		log_notice("generations: %s (%s; common %s)",
			gen_verdict_name(d.verdict), d.why, c);
		if (gen_refused(d.verdict) && !sg->readonly)
			return refuse(pool, &f, req, &d);
		if (sg->readonly)
			return 0;
		if (!f.g.id)
			r = gen_new(&f.g, 0);
		if (!r && d.verdict != GEN_SAME)
			f.g.target = m->id;	/* before the first copy */
	}
	struct gen_peer *p = r ? NULL : gen_peer_get(&f.g, m->id);
	if (!r && !p)
		r = -ENOSPC;
	if (failed(r, "the replica's generations"))
		return r;
	p->open = true;
	f.g.master = m->id;
	f.refused[0] = '\0';
	f.async_master = 0;	/* until this session says it is async */
	r = store(pool, &f);
	if (!r)
		sg->hello = true;
	return r;
}

/* session_gen_adopt -- ADOPT: the replica holds the master's current */
int
session_gen_adopt(struct session_gen *sg, const struct db_pool *pool,
		const struct proto_req *req, struct proto_resp *resp)
{
	/* a master with none known takes new ones: it says them here */
	bool starts = sg->hello && !sg->master.current;
	if (!sg->hello || sg->readonly || !req->gen.id || !req->gen.current ||
			(req->gen.id != sg->master.id && !starts)) {
		log_err("ADOPT from %s", !sg->hello ? "a session without "
			"HELLO" : sg->readonly ? "a session that writes nothing" :
			"another master");
		return -EPROTO;
	}
	struct gen_file f;
	int r = load(pool, &f);
	if (!r && !f.g.id)
		r = gen_new(&f.g, 0);
	if (r)
		return r;
	/*
	 * the replica holds this master's current now: no other master's
	 * session left bytes in flight that still matter (a master that
	 * crashed mid-session, before this one resynced or established it)
	 */
	for (unsigned i = 0; i < f.g.npeers && i < GEN_PEERS; i++)
		f.g.peers[i].open = false;
	sg->master = req->gen;
	gen_adopt(&f.g, req->gen.id, req->gen.current);
	f.async_master = 0;	/* it holds what the master holds */
	struct gen_peer *p = gen_peer_get(&f.g, req->gen.id);
	if (p)
		p->open = true;
	char c[GEN_STR];
	gen_str(f.g.current, c);
	log_notice("generations: the replica now holds %s", c);
	r = store(pool, &f);
	resp->gen = f.g;
	return r;
}

/*
 * session_gen_async -- ASYNC: the master writes on asynchronously from
 * here (it acknowledges before this replica holds it), so this copy may
 * be behind it by that session's lag: said durably, for whoever picks
 * a copy to promote (the Pacemaker agent prefers a synchronous one)
 */
int
session_gen_async(struct session_gen *sg, const struct db_pool *pool,
		struct proto_resp *resp)
{
	if (!sg->hello || sg->readonly || !sg->master.id) {
		log_err("ASYNC from %s", !sg->hello ? "a session without "
			"HELLO" : "a session without a master's generations");
		return -EPROTO;
	}
	struct gen_file f;
	int r = load(pool, &f);
	if (r)
		return r;
	f.async_master = sg->master.id;
	r = store(pool, &f);
	resp->gen = f.g;
	return r;
}

/*
 * session_gen_close -- CLOSE of a session that said HELLO: it ended
 * cleanly; `insync`: the replica holds the master's generation
 */
int
session_gen_close(struct session_gen *sg, const struct db_pool *pool,
		bool insync)
{
	if (!sg->hello)
		return 0;
	struct gen_file f;
	int r = load(pool, &f);
	if (r || !f.g.id)
		return r;
	if (insync && sg->master.current) {
		gen_adopt(&f.g, sg->master.id, sg->master.current);
		f.async_master = 0;
	}
	struct gen_peer *p = gen_peer_get(&f.g, sg->master.id);
	if (p)
		p->open = false;
	gen_peers_tidy(&f.g);
	sg->hello = false;
	return store(pool, &f);
}
