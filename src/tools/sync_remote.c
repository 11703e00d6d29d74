/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sync_remote.c -- rpmem sync of one remote replica: rebuilt whole, or
 * only the ranges that differ copied, under the signature REPLICA_SYNC_SIG
 * until its last byte is durable (see cmd_sync.c)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "librpmem.h"
#include "rpmem_tool.h"
#include "sync.h"

#define RANGES_MAX ((size_t)1 << 20)	/* then neighbours are merged */

/* differing ranges of one replica */
struct ranges {
	size_t n, cap;
	size_t (*r)[2];		/* offset, length */
	size_t bytes;
	struct progress *pg;	/* of the comparison */
};

/* on_range -- keep a differing range; past RANGES_MAX merge neighbours */
static int
on_range(size_t off, size_t len, void *arg)
{
	struct ranges *rg = arg;
	if (rg->n == RANGES_MAX) {
		/* copying the equal bytes between them is harmless */
		size_t *last = rg->r[rg->n - 1];
		rg->bytes += off + len - (last[0] + last[1]);
		last[1] = off + len - last[0];
		return 0;
	}
	if (array_grow(&rg->r, rg->n, &rg->cap, sizeof(*rg->r), 64))
		return -ENOMEM;
	rg->r[rg->n][0] = off;
	rg->r[rg->n][1] = len;
	rg->n++;
	rg->bytes += len;
	return 0;
}

/* on_tick -- progress of the comparison */
static void
on_tick(size_t done, void *arg)
{
	struct ranges *rg = arg;
	progress_update(rg->pg, done);
}

/* copy -- make [off, off + len) of the master durable on remote r */
static int
copy(struct sync *s, struct remote *r, size_t off, size_t len,
		size_t *done)
{
	for (size_t o = off; o < off + len; ) {
		size_t n = off + len - o < REPLICA_CHUNK ? off + len - o :
			REPLICA_CHUNK;
		if (rpmem_persist(r->rpp, o, n, 0, RPMEM_PERSIST_RELAXED))
			return sync_fail(s, r->index, "copying offset "
				"0x%zx: %s", o, rpmem_errormsg());
		o += n;
		*done += n;
		progress_update(&s->pg, *done);
	}
	return 0;
}

/* set_attr -- store `a` in remote r's headers */
static int
set_attr(struct sync *s, struct remote *r, const struct rpmem_pool_attr *a)
{
	if (rpmem_set_attr(r->rpp, a))
		return sync_fail(s, r->index, "setting the attributes: %s",
			rpmem_errormsg());
	r->attr = *a;
	return 0;
}

/* rebuild_remote -- remove, create under the marker, copy everything */
static int
rebuild_remote(struct sync *s, struct remote *r,
		const struct rpmem_pool_attr *marker)
{
	const struct poolset_replica *rep = r->rep;
	char extra[32];
	snprintf(extra, sizeof(extra), "state=%s",
		replica_state_name(r->state));
	(void) replica_remote_close(r);
	progress_step(&s->pg, r->index, "rebuild", 0, s->len, extra);
	if (rpmem_remove(rep->target, rep->desc, RPMEM_REMOVE_FORCE) &&
			errno != ENOENT)
		return sync_fail(s, r->index, "removing it: %s",
			rpmem_errormsg());
	r->nlanes = 1;
	r->rpp = rpmem_create(rep->target, rep->desc, s->m.pool->addr,
		s->size, &r->nlanes, s->nohdrs ? NULL : marker);
	if (!r->rpp)
		return sync_fail(s, r->index, "creating it: %s",
			rpmem_errormsg());
	if (!s->nohdrs)
		r->attr = *marker;
	size_t done = 0;
	progress_step(&s->pg, r->index, "copy", 0, s->len, NULL);
	return copy(s, r, s->off, s->len, &done);
}

/* update_remote -- copy the ranges that differ, under the marker */
static int
update_remote(struct sync *s, struct remote *r,
		const struct rpmem_pool_attr *marker, struct ranges *rg)
{
	progress_step(&s->pg, r->index, "diff", 0, s->len, NULL);
	struct replica_diff d = {
		.base = s->m.pool->addr, .rpp = r->rpp,
		.off = s->off, .len = s->len,
		.skip = s->skip, .nskip = s->nskip,
		.range = on_range, .tick = on_tick, .arg = rg,
	};
	rg->pg = &s->pg;
	int e = replica_diff_run(&d);
	if (e)
		return sync_fail(s, r->index, "comparing: %s", e == -ENOMEM ?
			strerror(ENOMEM) : d.msg);
	progress_update(&s->pg, s->len);
	if (!rg->n)
		return 0;
	if (!s->nohdrs && memcmp(&r->attr, marker, sizeof(*marker)) &&
			set_attr(s, r, marker))
		return 1;
	size_t done = 0;
	progress_step(&s->pg, r->index, "copy", 0, rg->bytes, NULL);
	for (size_t k = 0; k < rg->n; k++)
		if (copy(s, r, rg->r[k][0], rg->r[k][1], &done))
			return 1;
	return 0;
}

/* sync_remote -- bring remote replica i in line with the master */
int
sync_remote(struct sync *s, unsigned i)
{
	struct remote *r = &s->rem[i];
	struct rpmem_pool_attr final, marker;
	memset(&final, 0, sizeof(final));
	if (!s->nohdrs)
		replica_ring(&final, &s->base, s->uuids, i, s->n);
	marker = final;
	memcpy(marker.signature, REPLICA_SYNC_SIG, sizeof(REPLICA_SYNC_SIG));

	struct ranges rg = { 0 };
	struct rpmem_pool_attr was = r->attr;
	bool rebuild = r->state != REPLICA_OK &&
		r->state != REPLICA_INCOMPLETE;
	int ret = rebuild ? rebuild_remote(s, r, &marker) :
		update_remote(s, r, &marker, &rg);
	if (!ret && !s->nohdrs && memcmp(&r->attr, &final, sizeof(final))) {
		progress_step(&s->pg, i, "attrs", 0, 0, NULL);
		ret = set_attr(s, r, &final);
	}
	bool attrs = !rebuild && !s->nohdrs &&
		memcmp(&was, &final, sizeof(final)) != 0;
	free(rg.r);
	if (ret)
		return ret;
	/* it equals the master now: no longer outdated (D2, D5); a 0.3
	 * or PMDK rpmemd knows no mark to clear; it takes the master's
	 * generation (a peer without generations keeps none) */
	if (rpmem_outdate(r->rpp, 0, NULL) && errno != ENOTSUP)
		return sync_fail(s, i, "clearing its outdated mark: %s",
			rpmem_errormsg());
	if (rpmem_tool_adopt(r->rpp))
		return sync_fail(s, i, "giving it the master's generation: %s",
			rpmem_errormsg());
	if (replica_remote_close(r))
		return sync_fail(s, i, "%s", r->msg);
	/* this host's record of the replica, if any, is out of date now */
	if (rpmem_record_in_sync(r->rep->target, r->rep->desc))
		sync_say(s, i, "warning: %s", rpmem_errormsg());
	size_t bytes = rebuild ? s->len : rg.bytes;
	progress_step(&s->pg, i, "done", bytes, bytes, NULL);
	if (rebuild)
		sync_say(s, i, "rebuilt (it was %s), %zu bytes copied",
			replica_state_name(r->state), bytes);
	else if (r->state == REPLICA_INCOMPLETE)
		sync_say(s, i, "interrupted sync completed, %zu range(s) "
			"copied, %zu bytes", rg.n, bytes);
	else if (rg.n)
		sync_say(s, i, "%zu differing range(s) copied, %zu bytes%s",
			rg.n, bytes, attrs ? ", header updated" : "");
	else
		sync_say(s, i, "%s", attrs ? "in sync, header updated" :
			"in sync");
	return 0;
}
