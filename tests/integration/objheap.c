/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * objheap.c -- a libpmemobj workload over the whole heap: objects from
 * 64 bytes to 4 MiB, allocated atomically and in transactions, freed,
 * reallocated and snapshotted in large ranges, each one checkable
 *
 * Usage:
 *   objheap create SET            create the pool (layout "objheap")
 *   objheap run SET N [SEED]      open it, do N rounds (0: until the file
 *                                 OBJHEAP_STOP names exists), close it
 *   objheap check SET             open it: every object holds the bytes
 *                                 its header says it was given
 *   objheap where SET             open it, print "slot S offset O length
 *                                 L" for each object (O: pool offset)
 *
 * Built against Debian's libpmemobj only: when SET names a remote
 * replica, libpmemobj dlopen()s librpmem.so.1 (ours, through
 * LD_LIBRARY_PATH).  The rounds touch each structure of libpmemobj's
 * heap (scenario F1: what the application made durable is on the
 * replica): huge chunks (1 MiB and more, split, freed and coalesced),
 * runs of several unit sizes, free chunks, and undo logs that outgrow
 * their lane (snapshots of 256 KiB), so rpmem verify meets every kind of
 * byte libpmemobj leaves unpersisted.  Every object it allocates is
 * written whole and made durable, as a careful application does.
 * Exit status 0, or 1 with a message.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpmemobj.h>

#include "tu.h"

#define NSLOTS 24
#define NBIG 4			/* slots 0 .. NBIG - 1 hold the huge ones */
#define SNAP_LEN ((size_t)256 << 10)	/* beyond a lane's 2 KiB undo log */
#define ROOT_MAGIC 0x4f424a4845415031ULL	/* "OBJHEAP1" */

/* the head of every object: what its bytes must be */
struct obj {
	uint64_t len;		/* of the whole object */
	uint64_t tag;		/* byte i of data is (tag + i) & 0xff */
	unsigned char data[];
};

struct root {
	uint64_t magic;
	uint64_t rounds;
	uint64_t seed;
	PMEMoid slot[NSLOTS];
};

static const size_t Big[] = {
	(size_t)1 << 20, ((size_t)2 << 20) + 100, (size_t)3 << 20,
	(size_t)4 << 20,
};
static const size_t Small[] = {
	64, 200, 1000, 4000, 30000, 100000, 300000,
};

static const char *Set;

/* fail -- "objheap: SET: message" and exit 1 */
#define fail(...) tu_die("objheap", Set, __VA_ARGS__)

/* fill -- the bytes an object of `len` with `tag` holds */
static void
fill(struct obj *o, size_t len, uint64_t tag)
{
	o->len = len;
	o->tag = tag;
	for (size_t i = 0; i < len - sizeof(*o); i++)
		o->data[i] = (unsigned char)((tag + i) & 0xff);
}

/* ctor_arg -- what construct gives a new object */
struct ctor_arg {
	size_t len;
	uint64_t tag;
};

/* construct -- an atomic allocation's constructor: filled and durable */
static int
construct(PMEMobjpool *pop, void *ptr, void *arg)
{
	const struct ctor_arg *a = arg;
	fill(ptr, a->len, a->tag);
	pmemobj_persist(pop, ptr, a->len);
	return 0;
}

/* slot_len -- a size for slot s in round r */
static size_t
slot_len(unsigned s, uint64_t r)
{
	if (s < NBIG)
		return Big[(s + r) % (sizeof(Big) / sizeof(Big[0]))];
	return Small[(s * 7 + r) % (sizeof(Small) / sizeof(Small[0]))];
}

/* how tx_set makes a slot's new object */
enum how {
	FRESH,		/* the old one freed, a new one allocated */
	FRESH_ZEROED,	/* the same, zeroed first */
	GROWN,		/* the old one grown by pmemobj_tx_realloc */
};

/* tx_set -- in one transaction: slot s's new object, then its bytes */
static void
tx_set(PMEMobjpool *pop, struct root *rp, unsigned s, size_t len,
		uint64_t tag, enum how how)
{
	TX_BEGIN(pop) {
		pmemobj_tx_add_range_direct(&rp->slot[s], sizeof(rp->slot[s]));
		if (how == GROWN) {
			rp->slot[s] = pmemobj_tx_realloc(rp->slot[s], len, 1);
		} else {
			if (!OID_IS_NULL(rp->slot[s]))
				pmemobj_tx_free(rp->slot[s]);
			rp->slot[s] = how == FRESH_ZEROED ?
				pmemobj_tx_zalloc(len, 1) :
				pmemobj_tx_alloc(len, 1);
		}
		fill(pmemobj_direct(rp->slot[s]), len, tag);
	} TX_ONABORT {
		fail("%s slot %u (%zu bytes): %s",
			how == GROWN ? "growing" : "replacing", s, len,
			pmemobj_errormsg());
	} TX_END
}

/* atomic_replace -- the old object freed, a new one constructed */
static void
atomic_replace(PMEMobjpool *pop, struct root *rp, unsigned s, size_t len,
		uint64_t tag)
{
	if (!OID_IS_NULL(rp->slot[s]))
		pmemobj_free(&rp->slot[s]);
	struct ctor_arg a = { len, tag };
	if (pmemobj_alloc(pop, &rp->slot[s], len, 1, construct, &a))
		fail("allocating %zu bytes for slot %u: %s", len, s,
			pmemobj_errormsg());
}

/* tx_rewrite -- a large snapshot of a big object, then new bytes */
static void
tx_rewrite(PMEMobjpool *pop, struct root *rp, unsigned s, uint64_t tag)
{
	struct obj *o = pmemobj_direct(rp->slot[s]);
	if (!o || o->len < SNAP_LEN)
		return;
	TX_BEGIN(pop) {
		pmemobj_tx_add_range(rp->slot[s], 0, o->len);
		fill(o, o->len, tag);
	} TX_ONABORT {
		fail("rewriting slot %u: %s", s, pmemobj_errormsg());
	} TX_END
}

/* tx_grow -- pmemobj_tx_realloc of a small object, then its new bytes */
static void
tx_grow(PMEMobjpool *pop, struct root *rp, unsigned s, uint64_t tag)
{
	struct obj *o = pmemobj_direct(rp->slot[s]);
	if (!o)
		return;
	tx_set(pop, rp, s, o->len * 2 + 64, tag, GROWN);
}

/* round -- one round: one operation on a slot the sequence picks */
static void
round_one(PMEMobjpool *pop, struct root *rp, uint64_t *rnd)
{
	uint64_t r = rp->rounds;
	uint64_t x = tu_rnd(rnd);
	unsigned s = (unsigned)(x % NSLOTS);
	uint64_t tag = x >> 8;
	size_t len = slot_len(s, r);
	switch ((x >> 32) % 6) {
	case 0:
		tx_set(pop, rp, s, len, tag, FRESH);
		break;
	case 1:
		tx_set(pop, rp, s, len, tag, FRESH_ZEROED);
		break;
	case 2:
		atomic_replace(pop, rp, s, len, tag);
		break;
	case 3:
		tx_rewrite(pop, rp, s % NBIG, tag);
		break;
	case 4:
		if (s >= NBIG && len < 100000)
			tx_grow(pop, rp, s, tag);
		break;
	default:
		TX_BEGIN(pop) {
			pmemobj_tx_add_range_direct(&rp->slot[s],
				sizeof(rp->slot[s]));
			pmemobj_tx_free(rp->slot[s]);
			rp->slot[s] = OID_NULL;
		} TX_ONABORT {
			fail("freeing slot %u: %s", s, pmemobj_errormsg());
		} TX_END
		break;
	}
	TX_BEGIN(pop) {
		pmemobj_tx_add_range_direct(&rp->rounds, sizeof(rp->rounds));
		rp->rounds++;
	} TX_ONABORT {
		fail("counting round %" PRIu64 ": %s", r, pmemobj_errormsg());
	} TX_END
}

/* check -- every object holds what its head says; how many objects */
static unsigned
check(struct root *rp)
{
	unsigned n = 0;
	for (unsigned s = 0; s < NSLOTS; s++) {
		const struct obj *o = pmemobj_direct(rp->slot[s]);
		if (!o)
			continue;
		if (o->len < sizeof(*o) || o->len > pmemobj_alloc_usable_size(
				rp->slot[s]))
			fail("slot %u: length %" PRIu64 " does not fit its "
				"object", s, o->len);
		for (size_t i = 0; i < o->len - sizeof(*o); i++)
			if (o->data[i] != (unsigned char)((o->tag + i) & 0xff))
				fail("slot %u: byte %zu of %" PRIu64 " differs",
					s, i, o->len);
		n++;
	}
	return n;
}

/* main -- create, run or check */
int
main(int argc, char **argv)
{
	if (argc < 3 || (strcmp(argv[1], "run") == 0 && argc < 4)) {
		fprintf(stderr, "usage: objheap create|check|where SET\n"
			"       objheap run SET N [SEED]\n");
		return 1;
	}
	Set = argv[2];
	PMEMobjpool *pop = strcmp(argv[1], "create") == 0 ?
		pmemobj_create(Set, "objheap", 0, 0600) :
		pmemobj_open(Set, "objheap");
	if (!pop)
		fail("%s", pmemobj_errormsg());
	PMEMoid root = pmemobj_root(pop, sizeof(struct root));
	struct root *rp = pmemobj_direct(root);
	if (!rp)
		fail("no root object: %s", pmemobj_errormsg());
	if (strcmp(argv[1], "create") == 0) {
		rp->magic = ROOT_MAGIC;
		pmemobj_persist(pop, &rp->magic, sizeof(rp->magic));
	} else if (rp->magic != ROOT_MAGIC) {
		fail("not an objheap pool");
	}
	if (strcmp(argv[1], "run") == 0) {
		uint64_t n = strtoull(argv[3], NULL, 0);
		uint64_t rnd = (argc > 4 ? strtoull(argv[4], NULL, 0) : 1) ^
			rp->rounds;
		const char *stop = getenv("OBJHEAP_STOP");
		for (uint64_t i = 0; n ? i < n : !(stop && !access(stop, F_OK));
				i++)
			round_one(pop, rp, &rnd);
		printf("objheap: %" PRIu64 " rounds, %u objects\n", rp->rounds,
			check(rp));
	} else if (strcmp(argv[1], "where") == 0) {
		for (unsigned s = 0; s < NSLOTS; s++)
			if (!OID_IS_NULL(rp->slot[s]))
				printf("slot %u offset %" PRIu64 " length %"
					PRIu64 "\n", s, rp->slot[s].off,
					((struct obj *)pmemobj_direct(
					rp->slot[s]))->len);
	} else if (strcmp(argv[1], "check") == 0) {
		printf("objheap: %" PRIu64 " rounds, %u objects, all whole\n",
			rp->rounds, check(rp));
	} else if (strcmp(argv[1], "create") != 0) {
		fail("unknown command '%s'", argv[1]);
	}
	pmemobj_close(pop);
	return 0;
}
