/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pmdk_client_ops.c -- what the PMDK stand-in client does with a pool
 *
 * The operations of pmdk-interop 4.7 past the 4096-byte header (PMDK's client
 * refuses to persist into it when the pool has attributes): RMA writes
 * each followed by a mode-0 persist message, inline mode-2 persists of
 * at most the 8192-byte buffer (one with the client-internal completion
 * bit set, as PMDK's work-queue flush sends it), mode-1 deep persists;
 * then RMA reads of everything and a byte-for-byte comparison.  Ranges
 * and patterns come from the seed alone.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmdk_client.h"
#include "tu.h"

#define PIECES 32		/* mode-0 pieces */
#define PIECE_MAX 65536
#define INLINE_SPAN 131072	/* swept by whole inline buffers */
#define SMALL 16		/* short unaligned inline persists */
#define SMALL_MAX 63
#define SMALL_COMPLETION 4	/* this one carries RPMEM_COMPLETION */
#define DEEP 8
#define DEEP_MAX 262144
#define READS 4			/* partial reads on the other lanes */

/* a session's stream of ranges and patterns */
struct gen {
	uint64_t state;		/* ranges */
	uint64_t seed;
	unsigned round;		/* a new pattern for every fill */
};

/* next -- the next number of the range stream */
static uint64_t
next(struct gen *g)
{
	g->state = tu_mix(g->state);
	return g->state;
}

/* below -- a number in [0, n), n > 0 */
static size_t
below(struct gen *g, size_t n)
{
	return (size_t)(next(g) % n);
}

/* fill -- a fresh pattern over [off, off + len) of the local pool */
static void
fill(struct gen *g, unsigned char *pool, size_t off, size_t len)
{
	uint64_t key = tu_mix(g->seed ^ ((uint64_t)++g->round << 40));

	for (size_t i = off; i < off + len; i++) {
		uint64_t w = tu_mix(key ^ (i >> 3));
		pool[i] = (unsigned char)(w >> (8 * (i & 7)));
	}
}

/* step -- fill a range, then persist it */
static int
step(struct pc_fip *fip, struct gen *g, unsigned char *pool, size_t off,
		size_t len, unsigned lane, unsigned flags, struct pc_stats *st)
{
	fill(g, pool, off, len);
	int err = pc_fip_persist(fip, off, len, lane, flags);
	if (err) {
		pc_say("persist of %zu bytes at %zu on lane %u, flags %u: %s",
			len, off, lane, flags, pc_fip_errmsg(fip));
		return err;
	}
	switch (flags & W01_MODE_MASK) {
	case W01_PERSIST_SEND:
		st->n_inline++;
		st->b_inline += len;
		break;
	case W01_DEEP_PERSIST:
		st->n_deep++;
		st->b_deep += len;
		break;
	default:
		st->n_write++;
		st->b_write += len;
		break;
	}
	return 0;
}

/* pc_ops_run -- the session's persists */
int
pc_ops_run(struct pc_fip *fip, unsigned char *pool,
		const struct pc_ops_cfg *cfg, struct pc_stats *st)
{
	struct gen g = {tu_mix(cfg->seed), cfg->seed, 0};
	const size_t base = W01_HDR_SIZE, size = cfg->size;
	const size_t room = size - base;
	const unsigned inl = W01_PERSIST_SEND;
	unsigned k = 0;
	int err;

	/* the whole pool past the header, one RMA write (pmdk-interop 4.7) */
	err = step(fip, &g, pool, base, room, 0, W01_FLUSH_WRITE, st);

	for (unsigned i = 0; err == 0 && i < PIECES; i++) {
		size_t off = base + below(&g, room);
		size_t max = size - off < PIECE_MAX ? size - off : PIECE_MAX;
		err = step(fip, &g, pool, off, 1 + below(&g, max),
			k++ % cfg->nlanes, W01_FLUSH_WRITE, st);
	}

	/* whole inline buffers, then one across a word boundary */
	size_t span = room < INLINE_SPAN ? room : INLINE_SPAN;
	for (size_t off = base; err == 0 && off < base + span;
			off += W01_BUFF_SIZE) {
		size_t len = base + span - off < W01_BUFF_SIZE ?
			base + span - off : W01_BUFF_SIZE;
		err = step(fip, &g, pool, off, len, k++ % cfg->nlanes, inl,
			st);
	}
	if (err == 0 && room >= W01_BUFF_SIZE + 3)
		err = step(fip, &g, pool, base + 3, W01_BUFF_SIZE,
			k++ % cfg->nlanes, inl, st);

	for (unsigned i = 0; err == 0 && i < SMALL; i++) {
		size_t off = base + below(&g, room);
		size_t max = size - off < SMALL_MAX ? size - off : SMALL_MAX;
		unsigned flags = inl;
		if (i == SMALL_COMPLETION && inl == W01_PERSIST_SEND)
			flags |= W01_COMPLETION;
		err = step(fip, &g, pool, off, 1 + below(&g, max),
			k++ % cfg->nlanes, flags, st);
	}

	for (unsigned i = 0; err == 0 && i < DEEP; i++) {
		size_t off = base + below(&g, room);
		size_t max = size - off < DEEP_MAX ? size - off : DEEP_MAX;
		err = step(fip, &g, pool, off, 1 + below(&g, max),
			k++ % cfg->nlanes, W01_DEEP_PERSIST, st);
	}
	return err;
}

/* compare -- report the first difference of a read-back range */
static int
compare(const unsigned char *want, const unsigned char *got, size_t off,
		size_t len, unsigned lane)
{
	size_t bad = 0, first = 0;

	for (size_t i = 0; i < len; i++) {
		if (want[i] != got[i] && bad++ == 0)
			first = i;
	}
	if (bad == 0)
		return 0;
	pc_say("read back on lane %u: %zu of %zu bytes differ, the first at "
		"offset %zu (0x%02x expected, 0x%02x read)", lane, bad, len,
		off + first, want[first], got[first]);
	return -EIO;
}

/* read_cmp -- read a range on a lane and compare it with the image */
static int
read_cmp(struct pc_fip *fip, const unsigned char *pool, unsigned char *buf,
		size_t off, size_t len, unsigned lane, struct pc_stats *st)
{
	int err = pc_fip_read(fip, buf, off, len, lane);
	if (err) {
		pc_say("read of %zu bytes at %zu on lane %u: %s", len, off,
			lane, pc_fip_errmsg(fip));
		return err;
	}
	st->n_read++;
	st->b_read += len;
	size_t skip = off < W01_HDR_SIZE ? W01_HDR_SIZE - off : 0;
	if (skip >= len)
		return 0;
	err = compare(pool + off + skip, buf + skip, off + skip, len - skip,
		lane);
	if (err == 0)
		st->b_checked += len - skip;
	return err;
}

/* pc_ops_verify -- everything on lane 0, then pieces on the others */
int
pc_ops_verify(struct pc_fip *fip, const unsigned char *pool,
		const struct pc_ops_cfg *cfg, struct pc_stats *st)
{
	struct gen g = {tu_mix(~cfg->seed), cfg->seed, 0};
	unsigned char *buf = malloc(cfg->size);
	if (buf == NULL)
		return -ENOMEM;

	/* the header is read too (PMDK's read may), but not compared */
	int err = read_cmp(fip, pool, buf, 0, cfg->size, 0, st);
	for (unsigned i = 0; err == 0 && i < READS; i++) {
		size_t off = below(&g, cfg->size);
		size_t max = cfg->size - off < PIECE_MAX ? cfg->size - off :
			PIECE_MAX;
		err = read_cmp(fip, pool, buf, off, 1 + below(&g, max),
			(i + 1) % cfg->nlanes, st);
	}
	free(buf);
	return err;
}
