/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto_gen.c -- GEN (minor 5): a copy's data-generation identifiers on
 * the wire (gen.h), big-endian
 *
 * GEN, after the 12-byte request header:
 *
 *	12  u32 op		enum proto_gen_op
 *	16  u32 flags		PROTO_GEN_FLAG_*
 *	20  block		the master's identifiers
 *
 * GEN_RESP, after the 16-byte response header: the replica's block (as
 * it was before a HELLO changed it; after an ADOPT).  A block:
 *
 *	 0  u64 id, 8 u64 current, 16 u64 history[8] (zeros only at its end)
 *	80  u64 target, 88 u64 master
 *	96  u32 flags		1: discarded
 *     100  u32 npeers		at most GEN_PEERS
 *     104  8 x { u64 id, u64 bitmap, u32 flags (1: open), u32 reserved },
 *	    zero past npeers
 */
#include <errno.h>
#include <string.h>

#include "proto_int.h"

#define GEN_OP PROTO_HDR_SIZE
#define GEN_FLAGS (GEN_OP + 4)
#define GEN_BLOCK (GEN_FLAGS + 4)

#define B_ID 0
#define B_CURRENT 8
#define B_HISTORY 16
#define B_TARGET 80
#define B_MASTER 88
#define B_FLAGS 96
#define B_NPEERS 100
#define B_PEERS 104
#define PEER_SIZE 24

#define BLOCK_DISCARDED 0x1U
#define PEER_OPEN 0x1U

_Static_assert(B_PEERS + GEN_PEERS * PEER_SIZE == PROTO_GEN_BLOCK_SIZE,
	"the block's layout");
_Static_assert(GEN_BLOCK + PROTO_GEN_BLOCK_SIZE == PROTO_GEN_SIZE,
	"GEN's layout");
_Static_assert(PROTO_HDR_RESP_SIZE + PROTO_GEN_BLOCK_SIZE ==
	PROTO_GEN_RESP_SIZE, "GEN_RESP's layout");

/* be64 -- load a big-endian u64 */
static uint64_t
be64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

/* be32 -- load a big-endian u32 */
static uint32_t
be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
		(uint32_t)p[2] << 8 | p[3];
}

/* put_be64 -- store a big-endian u64 */
static void
put_be64(unsigned char *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (unsigned char)v;
}

/* put_be32 -- store a big-endian u32 */
static void
put_be32(unsigned char *p, uint32_t v)
{
	for (int i = 3; i >= 0; i--, v >>= 8)
		p[i] = (unsigned char)v;
}

/* block_ok -- what the decoder refuses, checked on a struct */
static bool
block_ok(const struct gen *g)
{
	if (g->npeers > GEN_PEERS)
		return false;
	bool end = false;
	for (unsigned i = 0; i < GEN_HISTORY; i++) {
		if (end && g->history[i])
			return false;
		end = end || !g->history[i];
	}
	return true;
}

/* proto_gen_block_get -- a copy's identifiers at `p` */
int
proto_gen_block_get(const unsigned char *p, struct gen *g)
{
	memset(g, 0, sizeof(*g));
	g->id = be64(p + B_ID);
	g->current = be64(p + B_CURRENT);
	for (unsigned i = 0; i < GEN_HISTORY; i++)
		g->history[i] = be64(p + B_HISTORY + 8 * i);
	g->target = be64(p + B_TARGET);
	g->master = be64(p + B_MASTER);
	uint32_t flags = be32(p + B_FLAGS);
	g->npeers = be32(p + B_NPEERS);
	g->discarded = flags & BLOCK_DISCARDED;
	if ((flags & ~BLOCK_DISCARDED) || !block_ok(g)) {
		memset(g, 0, sizeof(*g));
		return -EPROTO;
	}
	for (unsigned i = 0; i < GEN_PEERS; i++) {
		const unsigned char *q = p + B_PEERS + PEER_SIZE * i;
		uint32_t pf = be32(q + 16), rsvd = be32(q + 20);
		struct gen_peer e = { be64(q), be64(q + 8), pf & PEER_OPEN };
		bool used = i < g->npeers;
		if ((pf & ~PEER_OPEN) || rsvd ||
				(!used && (e.id || e.bitmap || pf))) {
			memset(g, 0, sizeof(*g));
			return -EPROTO;
		}
		if (used)
			g->peers[i] = e;
	}
	return 0;
}

/* proto_gen_block_put -- encode a copy's identifiers at `p` */
int
proto_gen_block_put(unsigned char *p, const struct gen *g)
{
	if (!block_ok(g))
		return -EINVAL;
	memset(p, 0, PROTO_GEN_BLOCK_SIZE);
	put_be64(p + B_ID, g->id);
	put_be64(p + B_CURRENT, g->current);
	for (unsigned i = 0; i < GEN_HISTORY; i++)
		put_be64(p + B_HISTORY + 8 * i, g->history[i]);
	put_be64(p + B_TARGET, g->target);
	put_be64(p + B_MASTER, g->master);
	put_be32(p + B_FLAGS, g->discarded ? BLOCK_DISCARDED : 0);
	put_be32(p + B_NPEERS, g->npeers);
	for (unsigned i = 0; i < g->npeers; i++) {
		unsigned char *q = p + B_PEERS + PEER_SIZE * i;
		put_be64(q, g->peers[i].id);
		put_be64(q + 8, g->peers[i].bitmap);
		put_be32(q + 16, g->peers[i].open ? PEER_OPEN : 0);
	}
	return 0;
}

/* proto_gen_get -- decode and validate a GEN body */
int
proto_gen_get(const unsigned char *p, struct proto_req *req)
{
	req->gen_op = be32(p + GEN_OP);
	req->gen_flags = be32(p + GEN_FLAGS);
	if (req->gen_op >= PROTO_GEN_OPS ||
			(req->gen_flags & ~PROTO_GEN_FLAGS))
		return -EPROTO;
	return proto_gen_block_get(p + GEN_BLOCK, &req->gen);
}

/* proto_gen_put -- encode a GEN body */
int
proto_gen_put(unsigned char *p, const struct proto_req *req)
{
	if (req->gen_op >= PROTO_GEN_OPS ||
			(req->gen_flags & ~PROTO_GEN_FLAGS))
		return -EINVAL;
	put_be32(p + GEN_OP, req->gen_op);
	put_be32(p + GEN_FLAGS, req->gen_flags);
	return proto_gen_block_put(p + GEN_BLOCK, &req->gen);
}
