/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gen.h -- data-generation identifiers: what each copy of a pool holds,
 * kept with its data, and the decision they make at every session start
 * (doc/generations.md)
 *
 * A copy is a pool's bytes on one host: a master's local parts, or a
 * replica's.  Each has a file of generations beside its part 0
 * ("PART0.gen", gen_file.c), written crash-safely:
 *
 *   current     the generation its bytes are (0: none known)
 *   history     the currents it had before, newest first
 *   per peer    bitmap: this copy has written without that peer since
 *               that generation (a master that lost its replica, a
 *               replica promoted); open: a session with that peer
 *               began and has not ended cleanly, so the bytes may go
 *               beyond `current` by writes the peer never saw (a master
 *               lost mid-session) or this copy never acknowledged (a
 *               replica whose master went away)
 *   target      a resync from that copy into this one is under way: the
 *               bytes are a mix, never promoted, never a source
 *   master      the last master that wrote into this copy as its replica
 *   discarded   an operator said: this copy's own writes go (rpmem
 *               discard); the next master overwrites what differs
 *
 * A master takes a new current whenever it starts writing without a
 * peer (the peer's bitmap keeps the old one), and so does a replica
 * promoted to a master; a resync's end makes the target adopt the
 * source's current.  At session start the master's and the replica's
 * identifiers decide (gen_decide): in sync, resync by the master's
 * bitmap, resync by comparing hashes, or a refusal that names both
 * sides' generations and the last common one (split brain, a replica
 * newer than its master, unrelated copies).
 */
#ifndef RPMEM_GEN_H
#define RPMEM_GEN_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GEN_HISTORY 8		/* currents kept, newest first */
#define GEN_PEERS 8		/* peers a copy keeps a bitmap or session of */
#define GEN_STR 17		/* a generation as 16 hex digits and NUL */

/* what a copy keeps of one peer */
struct gen_peer {
	uint64_t id;		/* the other copy */
	uint64_t bitmap;	/* written without it since; 0: not */
	bool open;		/* a session with it has not ended cleanly */
};

/* the identifiers of one copy */
struct gen {
	uint64_t id;		/* this copy; 0: it has no generations */
	uint64_t current;	/* 0: none known */
	uint64_t history[GEN_HISTORY];	/* 0 ends it */
	uint64_t target;	/* resync from that copy under way; 0: none */
	uint64_t master;	/* the last master of this copy as a replica */
	bool discarded;		/* its own writes are to be overwritten */
	unsigned npeers;
	struct gen_peer peers[GEN_PEERS];
};

/* what a session start decides (gen_decide) */
enum gen_verdict {
	GEN_SAME,		/* the replica holds what the master holds */
	GEN_BITMAP,		/* master newer: copy its out-of-sync ranges */
	GEN_COMPARE,		/* master newer: copy what hashes find */
	GEN_NEWER,		/* refused: the replica wrote since the master */
	GEN_SPLIT,		/* refused: both wrote since a common one */
	GEN_UNRELATED,		/* refused: no common generation */
	GEN_MASTER_UNUSABLE,	/* refused: the master copy is discarded or
				 * mid-resync itself */
	GEN_OTHER_TARGET,	/* refused: the replica is mid-resync from
				 * another copy */
	GEN_VERDICTS,
};

struct gen_decision {
	enum gen_verdict verdict;
	uint64_t common;	/* the last generation both held; 0: none */
	const char *why;	/* a phrase for the log and the refusal */
};

/* gen_refused -- does the verdict refuse the session? */
bool gen_refused(enum gen_verdict v);

/* gen_verdict_name -- "same", "bitmap", "split-brain", ... */
const char *gen_verdict_name(enum gen_verdict v);

/*
 * gen_decide -- the master `m` starting a session with the replica `r`
 * (as each read its own file before the session); `ranges`: the master
 * holds the ranges r lacks since its bitmap for r, or since their last
 * session dropped (a live handle's, or a record's of that generation)
 */
void gen_decide(const struct gen *m, const struct gen *r, bool ranges,
		struct gen_decision *d);

/* gen_same -- do two sets of identifiers say the same, field by field? */
bool gen_same(const struct gen *a, const struct gen *b);

/* gen_peer_find -- the entry of peer `id`, or NULL */
const struct gen_peer *gen_peer_find(const struct gen *g, uint64_t id);

/*
 * gen_peer_get -- the entry of peer `id`, made when missing (the
 * oldest entry without a bitmap or session gives way when full; NULL
 * when every entry holds one)
 */
struct gen_peer *gen_peer_get(struct gen *g, uint64_t id);

/* gen_wrote_alone -- has the copy written without some peer (a bitmap)? */
bool gen_wrote_alone(const struct gen *g);

/* gen_peers_tidy -- drop entries that hold neither a bitmap nor a session */
void gen_peers_tidy(struct gen *g);

/* gen_random -- a new non-zero identifier; 0 or -errno */
int gen_random(uint64_t *out);

/*
 * gen_new -- a copy's first identifiers: a new id and, with `current`
 * 0, a new current too; 0 or -errno
 */
int gen_new(struct gen *g, uint64_t current);

/*
 * gen_roll -- this copy starts writing without `peer` (0: not known):
 * its bitmap for peer keeps the current (unless it holds one already),
 * the current goes to the history and a new one is taken; the session
 * with peer, if any, is over.  0 or -errno (no random bytes, no room
 * for the peer).
 */
int gen_roll(struct gen *g, uint64_t peer);

/*
 * gen_adopt -- this copy now holds exactly generation `current` of the
 * copy `source` (a resync into it ended, or a clean close of a session
 * in sync): the old current goes to the history, no bitmap, target or
 * discard is left
 */
void gen_adopt(struct gen *g, uint64_t source, uint64_t current);

/* gen_str -- a generation as 16 hex digits ("none" for 0) */
void gen_str(uint64_t v, char out[GEN_STR]);

/*
 * gen_describe -- one line for messages: "current X (history Y, Z...),
 * wrote without P since G, mid-resync from T, discarded"
 */
void gen_describe(const struct gen *g, char *buf, size_t len);

#endif /* RPMEM_GEN_H */
