/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mgen.c -- the master copy's data-generation identifiers (gen.h): where
 * they live, and what a handle changes in them
 *
 * They live with the master's data: beside the part file the pool's
 * memory maps at its first byte ("PART0.gen", as rpmemd keeps a
 * replica's beside its part 0), so that whichever host or process opens
 * that copy finds them.  Memory that maps no file (an application's
 * own buffer) is no copy that outlives its process: such a master keeps
 * none, and its sessions follow the record (repl.h).
 *
 * A copy whose file is missing, unreadable or speaks of another part 0
 * has no generations known: its session starts tell rpmemd so (a
 * current of 0), the record decides as with a peer without them, and
 * once the session is in sync the copy takes new ones that its replica
 * adopts (mgen_establish): generations never come from nowhere while a
 * replica may hold something this copy cannot vouch for.
 *
 * Every change is a read, a change and a crash-safe write under one
 * lock of the process: several handles may share a master copy (one per
 * replica), and each change is rare (a session's start and end, a loss,
 * a resync's end), never on the persist path.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "repl_int.h"

static pthread_mutex_t Lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * mapped_file -- the file mapped at `addr` from its offset 0, from
 * /proc/self/maps: its path and identity; 0 or -ENOENT
 */
static int
mapped_file(const void *addr, char *path, size_t len, struct gen_part *p)
{
	FILE *f = fopen("/proc/self/maps", "re");
	if (!f)
		return -ENOENT;
	char *line = NULL;
	size_t cap = 0;
	int ret = -ENOENT;
	uintptr_t a = (uintptr_t)addr;
	while (getline(&line, &cap, f) > 0) {
		uintptr_t lo, hi;
		unsigned long long off, ino;
		unsigned maj, min;
		int n = 0;
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %*s %llx %x:%x "
				"%llu %n", &lo, &hi, &off, &maj, &min, &ino,
				&n) < 6 || a < lo || a >= hi)
			continue;
		char *name = line + n;
		name[strcspn(name, "\n")] = '\0';
		size_t nl = strlen(name);
		const char *del = " (deleted)";
		bool gone = nl >= strlen(del) &&
			strcmp(name + nl - strlen(del), del) == 0;
		if (a == lo && off == 0 && ino && name[0] == '/' && !gone &&
				nl < len) {
			memcpy(path, name, nl + 1);
			p->dev_major = maj;
			p->dev_minor = min;
			p->ino = ino;
			ret = 0;
		}
		break;
	}
	free(line);
	fclose(f);
	return ret;
}

/* mgen_locate -- where the master copy's identifiers live */
void
mgen_locate(RPMEMpool *rpp)
{
	struct mgen *mg = &rpp->repl->mg;
	char part0[PATH_MAX];
	memset(mg, 0, sizeof(*mg));
	mg->part.size = rpp->pool_size;
	if (mapped_file(rpp->pool_addr, part0, sizeof(part0), &mg->part) ||
			gen_file_path(part0, mg->path, sizeof(mg->path)))
		mg->path[0] = '\0';
}

/* mgen_where -- the file, for messages ("" when none is kept) */
const char *
mgen_where(const RPMEMpool *rpp)
{
	return rpp->repl->mg.path;
}

/*
 * load -- the identifiers as the file has them (Lock held); -ENOENT when
 * none are known (logged when the file was there but unusable), or new
 * ones with `fresh`
 */
static int
load(struct mgen *mg, struct gen_file *f, bool fresh)
{
	bool stale;
	int r = gen_file_read(mg->path, &mg->part, f, &stale);
	if (r == 0)
		return 0;
	if (r != -ENOENT)
		log_err("the master's generations %s: %s: none are known until "
			"a session is in sync", mg->path, strerror(-r));
	else if (stale)
		log_notice("the generations in %s speak of another pool "
			"that was there: none are known", mg->path);
	if (!fresh)
		return -ENOENT;
	memset(f, 0, sizeof(*f));
	f->part = mg->part;
	return gen_new(&f->g, 0);
}

/*
 * change -- read, apply `fn` (NULL: nothing), write when it changed
 * something (or the identifiers were made now, with `fresh`); the
 * result in *out when not NULL; 0, -ENOENT (none kept or known), or
 * another -errno
 */
static int
change(RPMEMpool *rpp, int (*fn)(struct gen *g, uint64_t peer),
		uint64_t peer, struct gen *out, bool fresh)
{
	struct mgen *mg = &rpp->repl->mg;
	if (!mg->path[0])
		return -ENOENT;
	pthread_mutex_lock(&Lock);
	struct gen_file f;
	int r = load(mg, &f, fresh);
	struct gen was = f.g;
	bool made = !r && f.updated == 0;
	if (!r && fn)
		r = fn(&f.g, peer);
	if (!r && (made || !gen_same(&was, &f.g))) {
		f.part = mg->part;
		r = gen_file_write(mg->path, &f);
		if (r)
			log_err("writing the master's generations %s: %s",
				mg->path, strerror(-r));
		else if (made)
			log_notice("the master's generations start in %s",
				mg->path);
	}
	if (!r && out)
		*out = f.g;
	pthread_mutex_unlock(&Lock);
	return r;
}

/* open_peer -- a session with peer begins */
static int
open_peer(struct gen *g, uint64_t peer)
{
	struct gen_peer *p = gen_peer_get(g, peer);
	if (!p)
		return -ENOSPC;
	p->open = true;
	return 0;
}

/* close_peer -- the session with peer ended cleanly */
static int
close_peer(struct gen *g, uint64_t peer)
{
	struct gen_peer *p = (struct gen_peer *)gen_peer_find(g, peer);
	if (p)
		p->open = false;
	gen_peers_tidy(g);
	return 0;
}

/* synced -- peer holds this copy's current again: no bitmap */
static int
synced(struct gen *g, uint64_t peer)
{
	struct gen_peer *p = (struct gen_peer *)gen_peer_find(g, peer);
	if (p)
		p->bitmap = 0;
	gen_peers_tidy(g);
	return 0;
}

/* mgen_get -- the master copy's identifiers; -ENOENT: none known */
int
mgen_get(RPMEMpool *rpp, struct gen *g)
{
	return change(rpp, NULL, 0, g, false);
}

/*
 * mgen_establish -- a session in sync with `peer` while the master copy
 * had none known: new ones (the replica adopts them next) and the
 * session open; its identifiers into *g
 */
int
mgen_establish(RPMEMpool *rpp, uint64_t peer, struct gen *g)
{
	return change(rpp, peer ? open_peer : NULL, peer, g, true);
}

/* mgen_session -- a session with `peer` begins: its bytes may differ */
int
mgen_session(RPMEMpool *rpp, uint64_t peer)
{
	return change(rpp, open_peer, peer, NULL, false);
}

/* rolled -- a roll by `fn`, the handle's status naming the new current */
static int
rolled(RPMEMpool *rpp, int (*fn)(struct gen *g, uint64_t peer),
		uint64_t peer)
{
	struct gen g;
	int r = change(rpp, fn, peer, &g, false);
	if (!r)
		gen_str(g.current, rpp->repl->st.generation);
	return r;
}

/*
 * mgen_lost -- the master goes on without `peer`: a new generation,
 * which the handle's status names from now on (rpmem status shows it
 * beside the replica's, which it no longer is)
 */
int
mgen_lost(RPMEMpool *rpp, uint64_t peer)
{
	return rolled(rpp, gen_roll, peer);
}

/* ahead -- as gen_roll, the session with peer staying open */
static int
ahead(struct gen *g, uint64_t peer)
{
	int r = gen_roll(g, peer);
	struct gen_peer *p = r ? NULL : gen_peer_get(g, peer);
	if (p)
		p->open = true;
	return r;
}

/*
 * mgen_ahead -- an async session with `peer` starts: the master goes on
 * ahead of it, under a new generation, its bitmap for the peer keeping
 * the old one; the session stays open
 */
int
mgen_ahead(RPMEMpool *rpp, uint64_t peer)
{
	return rolled(rpp, ahead, peer);
}

/* mgen_synced -- `peer` holds the master's current again */
int
mgen_synced(RPMEMpool *rpp, uint64_t peer)
{
	return change(rpp, synced, peer, NULL, false);
}

/* mgen_closed -- the session with `peer` ended cleanly */
int
mgen_closed(RPMEMpool *rpp, uint64_t peer)
{
	return change(rpp, close_peer, peer, NULL, false);
}
