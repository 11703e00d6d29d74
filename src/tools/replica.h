/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replica.h -- what rpmem info, verify and sync share: the master, the
 * remote replicas, their attributes and the hash comparison of the two
 */
#ifndef RPMEM_REPLICA_H
#define RPMEM_REPLICA_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "db_pool.h"
#include "gen.h"
#include "librpmem.h"
#include "poolset.h"

#define REPLICA_CHUNK ((size_t)1 << 20)	/* first comparison pass */
#define REPLICA_BLOCK ((size_t)4096)	/* second pass: reported ranges */
#define REPLICA_SYNC_SIG "RPMSYNC"	/* signature while sync copies */
#define REPLICA_MSG_MAX 512

/* what a replica looks like before anything is compared */
enum replica_state {
	REPLICA_OK,		/* opens, headers verify */
	REPLICA_MISSING,	/* a part or the pool does not exist */
	REPLICA_DAMAGED,	/* exists but does not open or verify */
	REPLICA_INCOMPLETE,	/* REPLICA_SYNC_SIG: a sync was interrupted */
	REPLICA_FOREIGN,	/* opens, but belongs to another pool */
	REPLICA_ERROR,		/* cannot tell: unreachable, busy, I/O */
};

/* header fields in which two replicas disagree (replica_attr_diff) */
#define ATTR_SIG 0x01U
#define ATTR_MAJOR 0x02U
#define ATTR_FEATURES 0x04U
#define ATTR_POOLSET_UUID 0x08U
#define ATTR_FLAGS 0x10U
#define ATTR_PREV 0x20U
#define ATTR_NEXT 0x40U
#define ATTR_HEADER 0x80U	/* one has a header, the other has none */
#define ATTR_IDENTITY (ATTR_SIG | ATTR_MAJOR | ATTR_FEATURES | \
	ATTR_POOLSET_UUID | ATTR_HEADER)

/* the local master, replica 0 */
struct master {
	struct db_pool *pool;	/* mapped, when state is REPLICA_OK */
	enum replica_state state;
	char msg[REPLICA_MSG_MAX];	/* why it is not OK */
};

/* one remote replica */
struct remote {
	unsigned index;		/* in the poolset */
	const struct poolset_replica *rep;
	RPMEMpool *rpp;		/* open, when state is OK/INCOMPLETE/FOREIGN */
	enum replica_state state;
	int err;		/* errno of a failed open */
	unsigned nlanes;
	struct rpmem_pool_attr attr;	/* as rpmemd returned them */
	char version[32];	/* rpmemd's */
	const char *limits;	/* what its rpmemd does not give, or NULL */
	char msg[REPLICA_MSG_MAX];
};

/* replica_load -- parse POOLSET: local master, only remote replicas */
struct poolset *replica_load(const char *path);

/* replica_data -- the data area: [4096, size), or [0, size) with NOHDRS */
void replica_data(const struct poolset *set, size_t *off, size_t *len);

const char *replica_state_name(enum replica_state s);

/*
 * replica_master_open -- open (never create) the master's parts and
 * verify its headers; m->state says how it went, m->pool is set for OK
 */
void replica_master_open(const char *path, struct master *m);

/* replica_master_close -- unmap and unlock the master, if open */
int replica_master_close(struct master *m);

/*
 * replica_remote_open -- rpmem_open a remote replica with `addr` as the
 * pool address and classify it against `ref` (the pool's attributes;
 * NULL: nothing to compare); rpp stays open unless the open failed
 */
void replica_remote_open(struct remote *r, const struct poolset *set,
		unsigned index, void *addr, size_t size, unsigned nlanes,
		const struct rpmem_pool_attr *ref);

/* replica_remote_close -- rpmem_close when open; -1 with the message */
int replica_remote_close(struct remote *r);

/* replica_attr_diff -- ATTR_* fields in which `a` differs from `ref` */
unsigned replica_attr_diff(const struct rpmem_pool_attr *ref,
		const struct rpmem_pool_attr *a);

/* replica_attr_diff_str -- "signature, poolset uuid" for ATTR_* bits */
void replica_attr_diff_str(unsigned bits, char *buf, size_t len);

/* replica_attr_is_zero -- no header (NOHDRS pools) */
bool replica_attr_is_zero(const struct rpmem_pool_attr *a);

/*
 * replica_ring -- the attributes of replica `rep`: identity from `base`,
 * own uuid uuids[rep], neighbours in the ring 0 -> 1 -> ... -> n-1 -> 0
 */
void replica_ring(struct rpmem_pool_attr *a, const struct rpmem_pool_attr *base,
		unsigned char (*uuids)[RPMEM_POOL_HDR_UUID_LEN], unsigned rep,
		unsigned n);

/* replica_sig_str -- the signature, printable ('?' for odd bytes) */
void replica_sig_str(const char *sig, char out[RPMEM_POOL_HDR_SIG_LEN + 1]);

/* replica_uuid_str -- canonical text form of 16 bytes */
void replica_uuid_str(const unsigned char *u, char out[37]);

/* replica_print_attr -- what a header says, as rpmem info prints it */
void replica_print_attr(const struct rpmem_pool_attr *a);

/*
 * json_gen -- a copy's data-generation identifiers as one JSON object:
 * copy, current, history, peers (copy, bitmap, open), target, discarded
 */
void json_gen(FILE *f, const struct gen *g);

/* json_str -- `s` as a JSON string (valid UTF-8 out, whatever comes in) */
void json_str(FILE *f, const char *s);

/* a range of the pool a comparison leaves out */
struct replica_skip {
	size_t off, len;
	const char *what;	/* what lies there, for the report */
};

/* replica_skip_bytes -- bytes the ranges cover */
size_t replica_skip_bytes(const struct replica_skip *skip, size_t n);

/*
 * replica_skip_print -- "skipped N bytes (NOTE):" and a line per range,
 * nothing when n is 0
 */
void replica_skip_print(const struct replica_skip *skip, size_t n,
		const char *note);

/* called for each differing range, in order, adjacent blocks merged */
typedef int (*replica_range_fn)(size_t off, size_t len, void *arg);
/* called as the comparison advances: bytes of the area compared */
typedef void (*replica_tick_fn)(size_t done, void *arg);

/* one comparison of a local mapping with a remote replica */
struct replica_diff {
	const char *base;	/* local mapping of pool offset 0 */
	RPMEMpool *rpp;
	size_t off, len;	/* area compared */
	const struct replica_skip *skip;	/* left out, in order */
	size_t nskip;
	replica_range_fn range;
	replica_tick_fn tick;	/* may be NULL */
	void *arg;
	char msg[REPLICA_MSG_MAX];	/* why it failed */
};

/*
 * replica_diff_run -- hash REPLICA_CHUNK pieces on both sides, then the
 * REPLICA_BLOCK blocks of each piece that differs; report differing
 * blocks as ranges.  Both grids start at d->off (the last block of the
 * area may be shorter).  A differing block that holds skipped bytes is
 * compared again in the pieces between them, and only the differing
 * pieces are reported: a skipped byte never is, a byte next to one is.
 * 0, or -1 with d->msg (a callback's non-zero return is passed back).
 */
int replica_diff_run(struct replica_diff *d);

#endif /* RPMEM_REPLICA_H */
