/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gen.c -- data-generation identifiers (gen.h): the decision at session
 * start and the changes a copy's identifiers go through; pure functions
 * of the structs (gen_file.c keeps them on disk, proto_gen.c on the wire)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "gen.h"

static const char *const Verdict_names[GEN_VERDICTS] = {
	[GEN_SAME] = "same",
	[GEN_BITMAP] = "resync-bitmap",
	[GEN_COMPARE] = "resync-compare",
	[GEN_NEWER] = "replica-newer",
	[GEN_SPLIT] = "split-brain",
	[GEN_UNRELATED] = "unrelated",
	[GEN_MASTER_UNUSABLE] = "master-unusable",
	[GEN_OTHER_TARGET] = "other-target",
};

/* gen_verdict_name -- "same", "resync-bitmap", "split-brain", ... */
const char *
gen_verdict_name(enum gen_verdict v)
{
	return (unsigned)v < GEN_VERDICTS ? Verdict_names[v] : "unknown";
}

/* gen_refused -- does the verdict refuse the session? */
bool
gen_refused(enum gen_verdict v)
{
	return v != GEN_SAME && v != GEN_BITMAP && v != GEN_COMPARE;
}

/* gen_same -- field by field: the structs have padding */
bool
gen_same(const struct gen *a, const struct gen *b)
{
	if (a->id != b->id || a->current != b->current ||
			a->target != b->target || a->master != b->master ||
			a->discarded != b->discarded || a->npeers != b->npeers ||
			memcmp(a->history, b->history, sizeof(a->history)))
		return false;
	for (unsigned i = 0; i < a->npeers && i < GEN_PEERS; i++)
		if (a->peers[i].id != b->peers[i].id ||
				a->peers[i].bitmap != b->peers[i].bitmap ||
				a->peers[i].open != b->peers[i].open)
			return false;
	return true;
}

/* gen_peer_find -- the entry of peer `id`, or NULL */
const struct gen_peer *
gen_peer_find(const struct gen *g, uint64_t id)
{
	for (unsigned i = 0; i < g->npeers && i < GEN_PEERS; i++)
		if (g->peers[i].id == id)
			return &g->peers[i];
	return NULL;
}

/* gen_peers_tidy -- drop entries holding neither a bitmap nor a session */
void
gen_peers_tidy(struct gen *g)
{
	unsigned k = 0;
	for (unsigned i = 0; i < g->npeers && i < GEN_PEERS; i++)
		if (g->peers[i].bitmap || g->peers[i].open)
			g->peers[k++] = g->peers[i];
	memset(&g->peers[k], 0, (GEN_PEERS - k) * sizeof(g->peers[0]));
	g->npeers = k;
}

/* gen_peer_get -- the entry of peer `id`, made when missing */
struct gen_peer *
gen_peer_get(struct gen *g, uint64_t id)
{
	struct gen_peer *p = (struct gen_peer *)gen_peer_find(g, id);
	if (p)
		return p;
	gen_peers_tidy(g);
	if (g->npeers == GEN_PEERS)
		return NULL;
	p = &g->peers[g->npeers++];
	memset(p, 0, sizeof(*p));
	p->id = id;
	return p;
}

/* gen_random -- a new non-zero identifier */
int
gen_random(uint64_t *out)
{
	uint64_t v = 0;
	while (v == 0) {
		ssize_t n = getrandom(&v, sizeof(v), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(v))
			return n < 0 ? -errno : -EIO;
	}
	*out = v;
	return 0;
}

/* gen_new -- a copy's first identifiers */
int
gen_new(struct gen *g, uint64_t current)
{
	memset(g, 0, sizeof(*g));
	int r = gen_random(&g->id);
	if (!r && current)
		g->current = current;
	else if (!r)
		r = gen_random(&g->current);
	return r;
}

/* push -- the current into the history, newest first */
static void
push(struct gen *g)
{
	if (!g->current)
		return;
	memmove(&g->history[1], &g->history[0],
		(GEN_HISTORY - 1) * sizeof(g->history[0]));
	g->history[0] = g->current;
}

/* gen_roll -- this copy starts writing without `peer` */
int
gen_roll(struct gen *g, uint64_t peer)
{
	struct gen_peer *p = gen_peer_get(g, peer);
	if (!p)
		return -ENOSPC;
	p->open = false;
	if (p->bitmap)		/* without it since before: nothing new */
		return 0;
	uint64_t next;
	int r = gen_random(&next);
	if (r)
		return r;
	p->bitmap = g->current;
	push(g);
	g->current = next;
	gen_peers_tidy(g);
	return 0;
}

/* gen_adopt -- this copy now holds generation `current` of `source` */
void
gen_adopt(struct gen *g, uint64_t source, uint64_t current)
{
	if (g->current != current) {
		push(g);
		g->current = current;
	}
	for (unsigned i = 0; i < g->npeers && i < GEN_PEERS; i++)
		g->peers[i].bitmap = 0;
	g->target = 0;
	g->discarded = false;
	g->master = source;
	gen_peers_tidy(g);
}

/* in_history -- is v one of g's earlier currents? */
static bool
in_history(const struct gen *g, uint64_t v)
{
	for (unsigned i = 0; v && i < GEN_HISTORY && g->history[i]; i++)
		if (g->history[i] == v)
			return true;
	return false;
}

/*
 * ancestor -- did g hold generation v (its current, one before it, or
 * the one a bitmap of it starts from)?
 */
static bool
ancestor(const struct gen *g, uint64_t v)
{
	if (!v)
		return false;
	if (v == g->current || in_history(g, v))
		return true;
	for (unsigned i = 0; i < g->npeers && i < GEN_PEERS; i++)
		if (g->peers[i].bitmap == v)
			return true;
	return false;
}

/* open_other -- a session of g with a peer other than `id` not ended */
static bool
open_other(const struct gen *g, uint64_t id)
{
	for (unsigned i = 0; i < g->npeers && i < GEN_PEERS; i++)
		if (g->peers[i].open && g->peers[i].id != id)
			return true;
	return false;
}

/* gen_wrote_alone -- has g written without some peer (a bitmap)? */
bool
gen_wrote_alone(const struct gen *g)
{
	for (unsigned i = 0; i < g->npeers && i < GEN_PEERS; i++)
		if (g->peers[i].bitmap)
			return true;
	return false;
}

/* common -- the newest generation of m that r held too; 0: none */
static uint64_t
common(const struct gen *m, const struct gen *r)
{
	if (ancestor(r, m->current))
		return m->current;
	for (unsigned i = 0; i < GEN_HISTORY && m->history[i]; i++)
		if (ancestor(r, m->history[i]))
			return m->history[i];
	for (unsigned i = 0; i < m->npeers && i < GEN_PEERS; i++)
		if (ancestor(r, m->peers[i].bitmap))
			return m->peers[i].bitmap;
	return 0;
}

/* set -- fill the decision */
static void
set(struct gen_decision *d, enum gen_verdict v, uint64_t c, const char *why)
{
	d->verdict = v;
	d->common = c;
	d->why = why;
}

/*
 * newer -- the master is newer than r, whose current it held: by its
 * bitmap where that starts at r's current, the master holds the ranges,
 * and no session of r with a third copy may have put bytes into it
 * that the ranges do not name; else by comparing hashes.  A session of
 * the two left open (an async one lost) does not stand in the way when
 * the master holds the ranges: only a live master does then, and it
 * recorded what the replica had not answered (an opening one finds
 * its own session open and has no ranges, repl_open.c)
 */
static void
newer(const struct gen *m, const struct gen *r, bool ranges,
		struct gen_decision *d, const char *why)
{
	const struct gen_peer *mp = gen_peer_find(m, r->id);
	bool bitmap = mp && mp->bitmap && mp->bitmap == r->current &&
		ranges && !open_other(r, m->id);
	set(d, bitmap ? GEN_BITMAP : GEN_COMPARE, r->current, why);
}

/* gen_decide -- what the master's and the replica's identifiers say */
void
gen_decide(const struct gen *m, const struct gen *r, bool ranges,
		struct gen_decision *d)
{
	if (m->discarded || m->target) {
		set(d, GEN_MASTER_UNUSABLE, 0, m->discarded ?
			"this copy was discarded (rpmem discard): it must be "
			"resynced as a replica before it serves as a master" :
			"this copy is mid-resync from another one: it is "
			"inconsistent until that resync ends");
		return;
	}
	if (!r->id || (!r->current && !r->discarded)) {
		if (gen_wrote_alone(r))
			set(d, GEN_UNRELATED, 0, "the replica wrote on its own, "
				"and what it holds now has no generation");
		else
			set(d, GEN_COMPARE, 0, "the replica has no "
				"generation: it is compared whole");
		return;
	}
	if (r->discarded) {
		set(d, GEN_COMPARE, 0, "the replica was discarded: the "
			"master's difference is copied into it");
		return;
	}
	if (r->target) {
		if (r->target != m->id)
			set(d, GEN_OTHER_TARGET, 0, "the replica is mid-resync "
				"from another copy");
		else
			newer(m, r, ranges, d, "a resync from this master "
				"was left unfinished");
		return;
	}
	if (m->current == r->current) {
		const struct gen_peer *mp = gen_peer_find(m, r->id);
		const struct gen_peer *rp = gen_peer_find(r, m->id);
		bool open = (mp && mp->open) || (rp && rp->open);
		if (open_other(r, m->id))
			set(d, GEN_COMPARE, m->current, "the replica's session "
				"with another master ended without a clean "
				"close: it is compared");
		else if (open && ranges)
			/* a live master recorded what was in flight */
			set(d, GEN_BITMAP, m->current, "their session ended "
				"without a clean close; the master recorded "
				"what was in flight");
		else if (open)
			set(d, GEN_COMPARE, m->current, "a session between "
				"them ended without a clean close: bytes "
				"in flight are compared");
		else
			set(d, GEN_SAME, m->current, "in sync");
		return;
	}
	if (ancestor(m, r->current)) {
		newer(m, r, ranges, d, "the master wrote since the "
			"replica's generation");
		return;
	}
	if (ancestor(r, m->current)) {
		set(d, GEN_NEWER, m->current, "the replica wrote since this "
			"master's generation (it was promoted): this copy is "
			"the stale one");
		return;
	}
	uint64_t c = common(m, r);
	if (c)
		set(d, GEN_SPLIT, c, "split brain: both copies wrote since "
			"their last common generation");
	else
		set(d, GEN_UNRELATED, 0, "the copies share no generation");
}

/* gen_str -- 16 hex digits, or "none" */
void
gen_str(uint64_t v, char out[GEN_STR])
{
	if (v)
		snprintf(out, GEN_STR, "%016" PRIx64, v);
	else
		snprintf(out, GEN_STR, "none");
}

/* gen_describe -- one line of a copy's identifiers, for messages */
void
gen_describe(const struct gen *g, char *buf, size_t len)
{
	char s[GEN_STR], t[GEN_STR];
	size_t n = 0;
#define PUTF(...) do { \
	int k_ = snprintf(buf + n, n < len ? len - n : 0, __VA_ARGS__); \
	if (k_ > 0) \
		n += (size_t)k_; \
} while (0)
	if (len)
		buf[0] = '\0';
	if (!g->id) {
		PUTF("no generations");
		return;
	}
	gen_str(g->id, t);
	gen_str(g->current, s);
	PUTF("copy %s current %s", t, s);
	for (unsigned i = 0; i < GEN_HISTORY && g->history[i]; i++) {
		gen_str(g->history[i], s);
		PUTF("%s%s", i ? " " : " (before: ", s);
		if (i + 1 == GEN_HISTORY || !g->history[i + 1])
			PUTF(")");
	}
	for (unsigned i = 0; i < g->npeers && i < GEN_PEERS; i++) {
		const struct gen_peer *p = &g->peers[i];
		gen_str(p->id, t);
		if (p->bitmap) {
			gen_str(p->bitmap, s);
			PUTF(", wrote without %s since %s", t, s);
		}
		if (p->open)
			PUTF(", a session with %s not closed", t);
	}
	if (g->target) {
		gen_str(g->target, t);
		PUTF(", mid-resync from %s", t);
	}
	if (g->discarded)
		PUTF(", discarded");
#undef PUTF
}
