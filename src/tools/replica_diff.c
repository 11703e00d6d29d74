/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replica_diff.c -- the comparison of the master with a remote replica:
 * hashes of the same ranges, computed here and by rpmemd next to the
 * replica's bytes with the same function, so only hashes cross the wire
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "replica.h"
#include "rpmem_tool.h"

/* replica_skip_bytes -- the sum of their lengths */
size_t
replica_skip_bytes(const struct replica_skip *skip, size_t n)
{
	size_t sum = 0;
	for (size_t k = 0; k < n; k++)
		sum += skip[k].len;
	return sum;
}

#define SKIP_KINDS 8	/* kinds of skipped range a report tells apart */

/* the ranges of one kind (one `what`) */
struct skip_kind {
	const char *what;
	size_t count, bytes, first;	/* first: index of its first range */
};

/*
 * replica_skip_print -- what is left out, for people: a line per kind
 * (ranges of one `what`, the first SKIP_KINDS kinds; a line per range
 * beyond), the range itself when the kind has only one
 */
void
replica_skip_print(const struct replica_skip *skip, size_t n,
		const char *note)
{
	if (!n)
		return;
	printf("skipped %zu bytes (%s):\n", replica_skip_bytes(skip, n),
		note);
	struct skip_kind kind[SKIP_KINDS];
	size_t nkinds = 0;
	for (size_t i = 0; i < n; i++) {
		size_t k = 0;
		while (k < nkinds && kind[k].what != skip[i].what)
			k++;
		if (k == SKIP_KINDS) {
			printf("  offset 0x%zx length 0x%zx: %s\n", skip[i].off,
				skip[i].len, skip[i].what);
			continue;
		}
		if (k == nkinds)
			kind[nkinds++] = (struct skip_kind){ skip[i].what, 0, 0,
				i };
		kind[k].count++;
		kind[k].bytes += skip[i].len;
	}
	for (size_t k = 0; k < nkinds; k++) {
		const struct replica_skip *f = &skip[kind[k].first];
		if (kind[k].count == 1)
			printf("  offset 0x%zx length 0x%zx: %s\n", f->off,
				f->len, f->what);
		else
			printf("  %zu ranges, %zu bytes, the first at 0x%zx: "
				"%s\n", kind[k].count, kind[k].bytes, f->off,
				f->what);
	}
}

/* diff_emit -- extend the pending range by a piece, or flush it */
static int
diff_emit(struct replica_diff *d, size_t *poff, size_t *plen, size_t off,
		size_t len)
{
	if (*plen && *poff + *plen == off) {
		*plen += len;
		return 0;
	}
	int ret = *plen ? d->range(*poff, *plen, d->arg) : 0;
	*poff = off;
	*plen = len;
	return ret;
}

/* diff_fail -- the message of a failed remote hash */
static int
diff_fail(struct replica_diff *d, size_t off, size_t len)
{
	snprintf(d->msg, sizeof(d->msg), "hashing offset 0x%zx length 0x%zx "
		"on the replica: %s", off, len, rpmem_errormsg());
	return -1;
}

/* hashes per batch: PROTO_HASH_MAX chunks of REPLICA_CHUNK, 1 GiB */
#define BATCH_CHUNKS 1024
#define BATCH_BLOCKS (BATCH_CHUNKS * (REPLICA_CHUNK / REPLICA_BLOCK))

/*
 * The pieces one pass hashes: [b, e) cut by a grid of `cell` bytes that
 * starts at the area's offset, so pieces are whole cells except where
 * [b, e) begins or ends between two grid lines (at the end of the pool,
 * or of a batch).
 */
struct cells {
	size_t b, e, cell;
	size_t floor;		/* the grid line at or before b */
	size_t n;		/* pieces */
};

/* cells_of -- the pieces of [b, e) */
static struct cells
cells_of(const struct replica_diff *d, size_t b, size_t e, size_t cell)
{
	struct cells c = { b, e, cell, 0, 0 };
	c.floor = d->off + (b - d->off) / cell * cell;
	c.n = (e - c.floor + cell - 1) / cell;
	return c;
}

/* cell_start -- where piece i begins */
static size_t
cell_start(const struct cells *c, size_t i)
{
	size_t at = c->floor + i * c->cell;
	return at < c->b ? c->b : at;
}

/* cell_end -- where piece i ends */
static size_t
cell_end(const struct cells *c, size_t i)
{
	size_t at = c->floor + (i + 1) * c->cell;
	return at > c->e ? c->e : at;
}

/* local hashing of one pass, while rpmemd hashes the same bytes */
struct local_job {
	const char *base;
	const struct cells *c;
	uint64_t *out;
};

/* cell_head -- the first piece when it is cut short, else 0 */
static size_t
cell_head(const struct cells *c)
{
	return c->floor == c->b ? 0 : cell_end(c, 0) - c->b;
}

/* local_hash -- the thread body: the pieces' hashes of the mapping */
static void *
local_hash(void *arg)
{
	struct local_job *j = arg;
	const struct cells *c = j->c;
	size_t head = cell_head(c);
	if (head)
		j->out[0] = hash64(j->base + c->b, head);
	hash64_chunks(j->base + c->b + head, c->e - c->b - head, c->cell,
		j->out + (head != 0));
	return NULL;
}

/*
 * hash_both -- the pieces' hashes here (in a thread) and on the replica
 * at the same time: a piece cut short at the start in a request of its
 * own, the rest in one; 0, or -1 with the message
 */
static int
hash_both(struct replica_diff *d, const struct cells *c, uint64_t *lh,
		uint64_t *rh)
{
	struct local_job j = { d->base, c, lh };
	pthread_t t;
	bool threaded = pthread_create(&t, NULL, local_hash, &j) == 0;
	size_t head = cell_head(c);
	size_t rest = c->e - c->b - head;
	int ret = 0;
	if (head && rpmem_hash(d->rpp, c->b, head, head, rh))
		ret = diff_fail(d, c->b, head);
	else if (rest && rpmem_hash(d->rpp, c->b + head, rest, c->cell,
			rh + (head != 0)))
		ret = diff_fail(d, c->b + head, rest);
	if (threaded)
		pthread_join(t, NULL);
	else
		local_hash(&j);
	return ret;
}

/* the pending differing range and the hash buffers of one run */
struct diff_run {
	struct replica_diff *d;
	uint64_t *lc, *rc;	/* BATCH_CHUNKS each */
	uint64_t *lb, *rb;	/* BATCH_BLOCKS each */
	size_t poff, plen;
};

/* skip_first -- the first skipped range that ends after `at` */
static size_t
skip_first(const struct replica_diff *d, size_t at)
{
	size_t lo = 0, hi = d->nskip;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->skip[mid].off + d->skip[mid].len > at)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/*
 * diff_pieces -- third pass over a differing block [b, e) that holds
 * skipped bytes: each piece between them hashed on both sides, the
 * differing ones handed to diff_emit
 */
static int
diff_pieces(struct diff_run *dr, size_t b, size_t e)
{
	struct replica_diff *d = dr->d;
	size_t k = skip_first(d, b);
	for (size_t at = b; at < e; ) {
		if (k < d->nskip && d->skip[k].off <= at) {
			at = d->skip[k].off + d->skip[k].len;
			k++;
			continue;
		}
		size_t pe = k < d->nskip && d->skip[k].off < e ?
			d->skip[k].off : e;
		uint64_t here = hash64(d->base + at, pe - at), there;
		if (rpmem_hash(d->rpp, at, pe - at, pe - at, &there))
			return diff_fail(d, at, pe - at);
		if (here != there) {
			int ret = diff_emit(d, &dr->poff, &dr->plen, at,
				pe - at);
			if (ret)
				return ret;
		}
		at = pe;
	}
	return 0;
}

/*
 * diff_blocks -- second pass over the differing chunks [b, e): block
 * hashes on both sides; a differing block is handed to diff_emit, or,
 * when it holds skipped bytes, compared again without them
 */
static int
diff_blocks(struct diff_run *dr, size_t b, size_t e)
{
	struct replica_diff *d = dr->d;
	struct cells c = cells_of(d, b, e, REPLICA_BLOCK);
	int ret = hash_both(d, &c, dr->lb, dr->rb);
	for (size_t j = 0; !ret && j < c.n; j++) {
		if (dr->lb[j] == dr->rb[j])
			continue;
		size_t off = cell_start(&c, j), end = cell_end(&c, j);
		size_t k = skip_first(d, off);
		if (k < d->nskip && d->skip[k].off < end)
			ret = diff_pieces(dr, off, end);
		else
			ret = diff_emit(d, &dr->poff, &dr->plen, off,
				end - off);
	}
	return ret;
}

/* diff_segment -- compare [s, e), skipped bytes in it hashed too */
static int
diff_segment(struct diff_run *dr, size_t s, size_t e)
{
	struct replica_diff *d = dr->d;
	for (size_t b = s; b < e; ) {
		struct cells c = cells_of(d, b, e, REPLICA_CHUNK);
		if (c.n > BATCH_CHUNKS) {
			c.e = c.floor + BATCH_CHUNKS * REPLICA_CHUNK;
			c.n = BATCH_CHUNKS;
		}
		int ret = hash_both(d, &c, dr->lc, dr->rc);
		/* each run of differing chunks in one request */
		for (size_t i = 0; !ret && i < c.n; ) {
			if (dr->lc[i] == dr->rc[i]) {
				i++;
				continue;
			}
			size_t k = i;
			while (k < c.n && dr->lc[k] != dr->rc[k])
				k++;
			ret = diff_blocks(dr, cell_start(&c, i),
				cell_end(&c, k - 1));
			i = k;
		}
		if (ret)
			return ret;
		b = c.e;
		if (d->tick)
			d->tick(b - d->off, d->arg);
	}
	return 0;
}

/*
 * replica_diff_run -- compare the area but the skipped ranges: chunks
 * and blocks are hashed whole, so a skipped range costs a request only
 * where a block that holds one differs
 */
int
replica_diff_run(struct replica_diff *d)
{
	struct diff_run dr = {
		.d = d,
		.lc = calloc(BATCH_CHUNKS, sizeof(uint64_t)),
		.rc = calloc(BATCH_CHUNKS, sizeof(uint64_t)),
		.lb = calloc(BATCH_BLOCKS, sizeof(uint64_t)),
		.rb = calloc(BATCH_BLOCKS, sizeof(uint64_t)),
	};
	int ret = -1;
	d->msg[0] = '\0';
	if (!dr.lc || !dr.rc || !dr.lb || !dr.rb) {
		snprintf(d->msg, sizeof(d->msg), "%s", strerror(ENOMEM));
		goto out;
	}
	ret = diff_segment(&dr, d->off, d->off + d->len);
	if (!ret && dr.plen)
		ret = d->range(dr.poff, dr.plen, d->arg);
out:
	free(dr.lc);
	free(dr.rc);
	free(dr.lb);
	free(dr.rb);
	return ret;
}
