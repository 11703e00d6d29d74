/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pmemobj.c -- a libpmemobj workload whose every object can be verified
 *
 * Usage:
 *   pmemobj create SET NTX [SEED]   create the pool, run NTX transactions
 *   pmemobj extend SET NTX          open it, run NTX more transactions
 *   pmemobj threads SET T K         open it, let T threads run K updates
 *                                   each, concurrently, on their own
 *                                   objects (once per pool)
 *   pmemobj hold SET NTX            open it, print "held", wait for a
 *                                   line on stdin, run NTX more
 *                                   transactions
 *   pmemobj verify SET NTX [MAX]    open it, check that exactly NTX
 *                                   transactions are in it (with MAX:
 *                                   any number from NTX to MAX, the
 *                                   copy of a master that crashed), every
 *                                   object
 *
 * Built against Debian's libpmemobj only: when SET names a remote replica,
 * libpmemobj dlopen()s librpmem.so.1 (ours, through LD_LIBRARY_PATH) and
 * replicates every persist.  A failing rpmem call makes libpmemobj abort
 * the process, so a caller must treat a signal as a failure.
 *
 * The transactions are a deterministic function of SEED and their index:
 * allocations (TX_ALLOC), in-place updates (TX_ADD plus
 * pmemobj_tx_add_range), reallocations (TX_REALLOC), replacements
 * (TX_FREE plus TX_NEW) and transactions aborted on purpose
 * (pmemobj_tx_abort).  `verify` replays them on a volatile model and
 * compares every object byte for byte; each object also carries a
 * checksum of its own header and data.  The updates of `threads` run on
 * as many libpmemobj lanes, hence rpmem lanes, at once; thread t updates
 * slots t, t + T, t + 2T, ... in turn, so their outcome is known too.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include <libpmemobj.h>

#include "tu.h"

#define NSLOTS 600
#define MAX_ALLOC_LEN 1500
#define MAX_REALLOC_LEN 3000
#define ROOT_MAGIC 0x524d454d4f424a31ULL	/* "RMEMOBJ1" */
#define DEFAULT_SEED 1

TU_POBJ_LAYOUT(rpmem_pmemobj, root, item);

struct item {
	uint64_t id;
	uint64_t version;
	uint64_t len;
	uint64_t cksum;		/* over id, version, len and data */
	uint8_t data[];
};

struct root {
	uint64_t magic;
	uint64_t seed;
	uint64_t ntx;		/* transactions done, aborted ones included */
	uint64_t nitems;	/* slots in use: slot[0 .. nitems) */
	uint64_t next_id;
	uint64_t mt_at;		/* ntx when `threads` ran */
	uint64_t mt_threads;	/* 0: it did not run */
	uint64_t mt_rounds;	/* updates per thread */
	TOID(struct item) slot[NSLOTS];
};

enum op_kind { OP_ALLOC, OP_MODIFY, OP_REALLOC, OP_REPLACE, OP_ABORT };

struct op {
	enum op_kind kind;
	uint64_t slot;
	uint64_t len;
};

/* the volatile twin of the pool: what each slot must hold */
struct model {
	uint64_t nitems;
	uint64_t next_id;
	uint64_t id[NSLOTS];
	uint64_t version[NSLOTS];
	uint64_t len[NSLOTS];
};

static const char *Set;

/* fail -- report a failure of this program and exit 1 */
static void
fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void
fail(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "pmemobj: %s: ", Set ? Set : "-");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* content_byte -- byte k of the data of item id at version */
static uint8_t
content_byte(uint64_t id, uint64_t version, uint64_t k)
{
	uint64_t w = tu_mix(id * 0x100000001b3ULL ^ version << 40 ^ (k >> 3));
	return (uint8_t)(w >> ((k & 7) * 8));
}

/* fnv -- FNV-1a over len bytes at p, continuing from h */
static uint64_t
fnv(uint64_t h, const void *p, size_t len)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* item_cksum -- the checksum an item must carry */
static uint64_t
item_cksum(const struct item *it)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	h = fnv(h, &it->id, sizeof(it->id));
	h = fnv(h, &it->version, sizeof(it->version));
	h = fnv(h, &it->len, sizeof(it->len));
	return fnv(h, it->data, (size_t)it->len);
}

/* item_fill -- write id, version, len, data and checksum into it */
static void
item_fill(struct item *it, uint64_t id, uint64_t version, uint64_t len)
{
	it->id = id;
	it->version = version;
	it->len = len;
	for (uint64_t k = 0; k < len; k++)
		it->data[k] = content_byte(id, version, k);
	it->cksum = item_cksum(it);
}

/* plan -- transaction number i of the workload seeded by seed */
static struct op
plan(const struct model *m, uint64_t seed, uint64_t i)
{
	uint64_t r = tu_mix(seed ^ tu_mix(i));
	unsigned pick = (unsigned)(r % 20);
	struct op op = { OP_MODIFY, 0, 0 };

	if (m->nitems < 4 || (pick < 7 && m->nitems < NSLOTS)) {
		op.kind = OP_ALLOC;
		op.slot = m->nitems;
		op.len = 8 + (r >> 40) % (MAX_ALLOC_LEN - 8);
		return op;
	}
	op.slot = (r >> 16) % m->nitems;
	if (pick >= 18)
		op.kind = OP_ABORT;
	else if (pick >= 16)
		op.kind = OP_REPLACE;
	else if (pick >= 14) {
		op.kind = OP_REALLOC;
		op.len = (r >> 40) % MAX_REALLOC_LEN;
	}
	return op;
}

/* model_apply -- what op does to the model */
static void
model_apply(struct model *m, const struct op *op)
{
	uint64_t s = op->slot;
	switch (op->kind) {
	case OP_ALLOC:
		m->id[s] = m->next_id++;
		m->version[s] = 0;
		m->len[s] = op->len;
		m->nitems++;
		break;
	case OP_MODIFY:
		m->version[s]++;
		break;
	case OP_REALLOC:
		m->version[s]++;
		m->len[s] = op->len;
		break;
	case OP_REPLACE:
		m->id[s] = m->next_id++;
		m->version[s] = 0;
		m->len[s] = 0;
		break;
	case OP_ABORT:
		break;
	}
}

/* tx_add_slot -- snapshot slot s of the root in the current transaction */
static void
tx_add_slot(struct root *rp, uint64_t s)
{
	pmemobj_tx_add_range_direct(&rp->slot[s], sizeof(rp->slot[s]));
}

/*
 * The tx_* functions below keep every variable that the body of a
 * transaction uses either in arguments that are pointers or inside the
 * body: TX_BEGIN is a setjmp(), and a TOID argument in registers could be
 * clobbered by its longjmp().
 */

/* tx_alloc -- OP_ALLOC: a new item in the next free slot */
static void
tx_alloc(PMEMobjpool *pop, struct root *rp, const struct op *op)
{
	TX_BEGIN(pop) {
		TX_ADD_FIELD_DIRECT(rp, nitems);
		TX_ADD_FIELD_DIRECT(rp, next_id);
		tx_add_slot(rp, op->slot);
		TOID(struct item) it = TX_ALLOC(struct item,
			sizeof(struct item) + op->len);
		item_fill(D_RW(it), rp->next_id, 0, op->len);
		rp->slot[op->slot] = it;
		rp->next_id++;
		rp->nitems++;
	} TX_ONABORT {
		fail("allocation of %" PRIu64 " bytes aborted: %s",
			op->len, pmemobj_errormsg());
	} TX_END
}

/* tx_modify -- OP_MODIFY: a new version of an item, in place */
static void
tx_modify(PMEMobjpool *pop, struct root *rp, const struct op *op)
{
	TX_BEGIN(pop) {
		TOID(struct item) it = rp->slot[op->slot];
		struct item *ip = D_RW(it);
		TX_ADD(it);
		pmemobj_tx_add_range(it.oid, sizeof(struct item), ip->len);
		item_fill(ip, ip->id, ip->version + 1, ip->len);
	} TX_ONABORT {
		fail("update of slot %" PRIu64 " aborted: %s", op->slot,
			pmemobj_errormsg());
	} TX_END
}

/* tx_realloc -- OP_REALLOC: resize an item and give it a new version */
static void
tx_realloc(PMEMobjpool *pop, struct root *rp, const struct op *op)
{
	TX_BEGIN(pop) {
		TOID(struct item) it = rp->slot[op->slot];
		uint64_t id = D_RO(it)->id, version = D_RO(it)->version;
		tx_add_slot(rp, op->slot);
		it = TX_REALLOC(it, sizeof(struct item) + op->len);
		item_fill(D_RW(it), id, version + 1, op->len);
		rp->slot[op->slot] = it;
	} TX_ONABORT {
		fail("reallocation of slot %" PRIu64 " to %" PRIu64
			" bytes aborted: %s", op->slot, op->len,
			pmemobj_errormsg());
	} TX_END
}

/* tx_replace -- OP_REPLACE: free an item, put an empty new one instead */
static void
tx_replace(PMEMobjpool *pop, struct root *rp, const struct op *op)
{
	TX_BEGIN(pop) {
		tx_add_slot(rp, op->slot);
		TX_ADD_FIELD_DIRECT(rp, next_id);
		TX_FREE(rp->slot[op->slot]);
		TOID(struct item) it = TX_NEW(struct item);
		item_fill(D_RW(it), rp->next_id, 0, 0);
		rp->slot[op->slot] = it;
		rp->next_id++;
	} TX_ONABORT {
		fail("replacement of slot %" PRIu64 " aborted: %s", op->slot,
			pmemobj_errormsg());
	} TX_END
}

/* tx_abort -- OP_ABORT: scribble on an item, abort, expect it intact */
static void
tx_abort(PMEMobjpool *pop, struct root *rp, const struct op *op)
{
	struct item before = *D_RO(rp->slot[op->slot]);
	volatile int committed = 0;
	TX_BEGIN(pop) {
		TOID(struct item) it = rp->slot[op->slot];
		struct item *ip = D_RW(it);
		TX_ADD(it);
		pmemobj_tx_add_range(it.oid, sizeof(struct item), ip->len);
		memset(ip->data, 0xa5, (size_t)ip->len);
		ip->version = UINT64_MAX;
		ip->cksum = 0;
		pmemobj_tx_abort(ECANCELED);
	} TX_ONCOMMIT {
		committed = 1;
	} TX_END
	if (committed)
		fail("a transaction aborted on purpose committed");
	if (errno != ECANCELED)
		fail("aborted transaction: errno %d, expected ECANCELED",
			errno);
	const struct item *after = D_RO(rp->slot[op->slot]);
	if (memcmp(&before, after, sizeof(before)) != 0 ||
			item_cksum(after) != after->cksum)
		fail("abort did not restore slot %" PRIu64, op->slot);
}

/* the transaction of each kind of op */
static void (*const Tx[])(PMEMobjpool *, struct root *, const struct op *) = {
	[OP_ALLOC] = tx_alloc,
	[OP_MODIFY] = tx_modify,
	[OP_REALLOC] = tx_realloc,
	[OP_REPLACE] = tx_replace,
	[OP_ABORT] = tx_abort,
};

/* tx_count -- count one transaction in the root, transactionally */
static void
tx_count(PMEMobjpool *pop, struct root *rp)
{
	TX_BEGIN(pop) {
		TX_SET_DIRECT(rp, ntx, rp->ntx + 1);
	} TX_ONABORT {
		fail("counting a transaction aborted: %s",
			pmemobj_errormsg());
	} TX_END
}

/* mt_slot -- the slot thread t of nthreads updates in its round r */
static uint64_t
mt_slot(uint64_t nitems, uint64_t nthreads, uint64_t t, uint64_t r)
{
	uint64_t mine = (nitems - t + nthreads - 1) / nthreads;
	return t + nthreads * (r % mine);
}

/* mt_apply -- what `threads` did to the model */
static void
mt_apply(struct model *m, uint64_t nthreads, uint64_t rounds)
{
	for (uint64_t t = 0; t < nthreads; t++)
		for (uint64_t r = 0; r < rounds; r++)
			m->version[mt_slot(m->nitems, nthreads, t, r)]++;
}

/* replay -- run the model through the first n transactions of the pool */
static void
replay(struct model *m, const struct root *rp, uint64_t n)
{
	memset(m, 0, sizeof(*m));
	for (uint64_t i = 0; i <= n; i++) {
		if (rp->mt_threads && i == rp->mt_at)
			mt_apply(m, rp->mt_threads, rp->mt_rounds);
		if (i == n)
			break;
		struct op op = plan(m, rp->seed, i);
		model_apply(m, &op);
	}
}

/* run -- transactions root->ntx .. root->ntx + n on the pool */
static void
run(PMEMobjpool *pop, struct root *rp, uint64_t n)
{
	struct model *m = malloc(sizeof(*m));
	if (!m)
		fail("out of memory");
	uint64_t seed = rp->seed, first = rp->ntx;
	replay(m, rp, first);
	for (uint64_t i = first; i < first + n; i++) {
		struct op op = plan(m, seed, i);
		Tx[op.kind](pop, rp, &op);
		model_apply(m, &op);
		tx_count(pop, rp);
	}
	free(m);
}

struct mt_arg {
	PMEMobjpool *pop;
	struct root *rp;
	uint64_t nitems, nthreads, t, rounds;
	pthread_t thread;
};

/* mt_worker -- one thread of `threads`: its updates, one per transaction */
static void *
mt_worker(void *arg)
{
	struct mt_arg *a = arg;
	for (uint64_t r = 0; r < a->rounds; r++) {
		struct op op = { OP_MODIFY,
			mt_slot(a->nitems, a->nthreads, a->t, r), 0 };
		tx_modify(a->pop, a->rp, &op);
	}
	return NULL;
}

/* threads -- nthreads threads update their own objects, rounds each */
static void
threads(PMEMobjpool *pop, struct root *rp, uint64_t nthreads, uint64_t rounds)
{
	if (rp->mt_threads)
		fail("threads already ran on this pool");
	if (nthreads == 0 || nthreads > rp->nitems)
		fail("%" PRIu64 " threads for %" PRIu64 " objects", nthreads,
			rp->nitems);
	struct mt_arg *a = calloc(nthreads, sizeof(*a));
	if (!a)
		fail("out of memory");
	for (uint64_t t = 0; t < nthreads; t++) {
		a[t] = (struct mt_arg){ pop, rp, rp->nitems, nthreads, t,
			rounds, 0 };
		int e = pthread_create(&a[t].thread, NULL, mt_worker, &a[t]);
		if (e)
			fail("pthread_create: %s", strerror(e));
	}
	for (uint64_t t = 0; t < nthreads; t++)
		pthread_join(a[t].thread, NULL);
	free(a);
	TX_BEGIN(pop) {
		TX_ADD_FIELD_DIRECT(rp, mt_at);
		TX_ADD_FIELD_DIRECT(rp, mt_threads);
		TX_ADD_FIELD_DIRECT(rp, mt_rounds);
		rp->mt_at = rp->ntx;
		rp->mt_threads = nthreads;
		rp->mt_rounds = rounds;
	} TX_ONABORT {
		fail("recording the threads aborted: %s", pmemobj_errormsg());
	} TX_END
}

/* check_item -- slot s of the pool against the model; 0 or -1 */
static int
check_item(TOID(struct root) root, const struct model *m, uint64_t s)
{
	TOID(struct item) it = D_RO(root)->slot[s];
	if (TOID_IS_NULL(it)) {
		fprintf(stderr, "pmemobj: %s: slot %" PRIu64 " is empty\n",
			Set, s);
		return -1;
	}
	const struct item *ip = D_RO(it);
	if (ip == NULL) {
		fprintf(stderr, "pmemobj: %s: slot %" PRIu64 " points out of"
			" the pool\n", Set, s);
		return -1;
	}
	if (ip->id != m->id[s] || ip->version != m->version[s] ||
			ip->len != m->len[s]) {
		fprintf(stderr, "pmemobj: %s: slot %" PRIu64 " holds id %"
			PRIu64 " version %" PRIu64 " len %" PRIu64
			", expected id %" PRIu64 " version %" PRIu64
			" len %" PRIu64 "\n", Set, s, ip->id, ip->version,
			ip->len, m->id[s], m->version[s], m->len[s]);
		return -1;
	}
	if (pmemobj_alloc_usable_size(it.oid) < sizeof(*ip) + ip->len) {
		fprintf(stderr, "pmemobj: %s: slot %" PRIu64 ": object of %zu"
			" bytes holds %" PRIu64 " bytes of data\n", Set, s,
			pmemobj_alloc_usable_size(it.oid), ip->len);
		return -1;
	}
	if (item_cksum(ip) != ip->cksum) {
		fprintf(stderr, "pmemobj: %s: slot %" PRIu64 " (id %" PRIu64
			"): checksum 0x%016" PRIx64 ", stored 0x%016" PRIx64
			"\n", Set, s, ip->id, item_cksum(ip), ip->cksum);
		return -1;
	}
	for (uint64_t k = 0; k < ip->len; k++) {
		if (ip->data[k] != content_byte(ip->id, ip->version, k)) {
			fprintf(stderr, "pmemobj: %s: slot %" PRIu64
				" byte %" PRIu64 " differs\n", Set, s, k);
			return -1;
		}
	}
	return 0;
}

/* same_heads -- the root and every slot's id, version, length as in m */
static bool
same_heads(TOID(struct root) root, const struct model *m)
{
	const struct root *rp = D_RO(root);
	if (rp->nitems != m->nitems || rp->next_id != m->next_id)
		return false;
	for (uint64_t s = 0; s < m->nitems; s++) {
		const struct item *ip = D_RO(rp->slot[s]);
		if (!ip || ip->id != m->id[s] || ip->version != m->version[s] ||
				ip->len != m->len[s])
			return false;
	}
	return true;
}

/*
 * verify -- the pool holds exactly the first n transactions, for one n
 * from ntx to max
 */
static void
verify(PMEMobjpool *pop, TOID(struct root) root, uint64_t ntx, uint64_t max)
{
	const struct root *rp = D_RO(root);
	if (rp->magic != ROOT_MAGIC)
		fail("root magic 0x%016" PRIx64 ", expected 0x%016llx",
			rp->magic, ROOT_MAGIC);
	if (max == ntx && rp->ntx != ntx)
		fail("%" PRIu64 " transactions in the pool, expected %"
			PRIu64, rp->ntx, ntx);
	if (rp->ntx < ntx || rp->ntx > max)
		fail("%" PRIu64 " transactions in the pool, expected %"
			PRIu64 " to %" PRIu64, rp->ntx, ntx, max);
	ntx = rp->ntx;

	struct model *m = malloc(sizeof(*m));
	if (!m)
		fail("out of memory");
	replay(m, rp, ntx);
	/* a crashed master's copy may hold the next one, not yet counted */
	if (max > ntx && !same_heads(root, m)) {
		replay(m, rp, ntx + 1);
		if (same_heads(root, m))
			printf("pmemobj: %s: transaction %" PRIu64 " is in, "
				"its count not\n", Set, ntx + 1);
		else
			replay(m, rp, ntx);
	}
	if (rp->nitems != m->nitems || rp->next_id != m->next_id)
		fail("root: %" PRIu64 " items, next id %" PRIu64
			"; expected %" PRIu64 ", %" PRIu64, rp->nitems,
			rp->next_id, m->nitems, m->next_id);
	int bad = 0;
	for (uint64_t s = 0; s < m->nitems; s++)
		if (check_item(root, m, s))
			bad++;
	for (uint64_t s = m->nitems; s < NSLOTS; s++)
		if (!TOID_IS_NULL(rp->slot[s]))
			fail("unused slot %" PRIu64 " is set", s);

	/* freed and aborted allocations must not linger in the heap */
	uint64_t nobj = 0;
	PMEMoid oid;
	POBJ_FOREACH(pop, oid) {
		if (pmemobj_type_num(oid) != TOID_TYPE_NUM(struct item))
			fail("object of type %" PRIu64 " in the heap",
				pmemobj_type_num(oid));
		nobj++;
	}
	if (nobj != m->nitems)
		fail("%" PRIu64 " objects in the heap, %" PRIu64
			" items in use", nobj, m->nitems);
	free(m);
	if (bad)
		fail("%d of %" PRIu64 " objects wrong", bad, rp->nitems);
	printf("pmemobj: %s: verified %" PRIu64 " transactions, %" PRIu64
		" objects\n", Set, ntx, nobj);
}

/* parse_u64 -- a decimal argument, or fail naming it */
static uint64_t
parse_u64(const char *what, const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-')
		fail("%s '%s' is not a number", what, s);
	return (uint64_t)v;
}

/* usage -- print how to call this program, return the exit status 2 */
static int
usage(void)
{
	fprintf(stderr, "usage: pmemobj create SET NTX [SEED]\n"
		"       pmemobj extend SET NTX\n"
		"       pmemobj threads SET T K\n"
		"       pmemobj hold SET NTX\n"
		"       pmemobj verify SET NTX [MAX]\n");
	return 2;
}

int
main(int argc, char *argv[])
{
	if (argc < 4 || argc > 5)
		return usage();
	if ((strcmp(argv[1], "threads") == 0 && argc != 5) ||
			(argc == 5 && strcmp(argv[1], "threads") &&
			strcmp(argv[1], "verify") && strcmp(argv[1], "create")))
		return usage();
	const char *cmd = argv[1];
	Set = argv[2];
	uint64_t n = parse_u64(strcmp(cmd, "threads") ? "NTX" : "T",
		argv[3]);
	PMEMobjpool *pop;

	if (strcmp(cmd, "create") == 0) {
		uint64_t seed = argc == 5 ? parse_u64("SEED", argv[4]) :
			DEFAULT_SEED;
		pop = pmemobj_create(Set, POBJ_LAYOUT_NAME(rpmem_pmemobj), 0,
			0600);
		if (!pop) {
			int e = errno;
			fail("pmemobj_create: %s (errno: %s)",
				pmemobj_errormsg(), strerror(e));
		}
		struct root *rp = D_RW(POBJ_ROOT(pop, struct root));
		TX_BEGIN(pop) {
			TX_ADD_DIRECT(rp);
			rp->magic = ROOT_MAGIC;
			rp->seed = seed;
		} TX_ONABORT {
			fail("initialising the root aborted: %s",
				pmemobj_errormsg());
		} TX_END
		run(pop, rp, n);
		printf("pmemobj: %s: created, %" PRIu64 " transactions\n",
			Set, n);
	} else if (strcmp(cmd, "extend") == 0 || strcmp(cmd, "hold") == 0 ||
			strcmp(cmd, "verify") == 0 ||
			strcmp(cmd, "threads") == 0) {
		pop = pmemobj_open(Set, POBJ_LAYOUT_NAME(rpmem_pmemobj));
		if (!pop) {
			int e = errno;
			fail("pmemobj_open: %s (errno: %s)",
				pmemobj_errormsg(), strerror(e));
		}
		TOID(struct root) root = POBJ_ROOT(pop, struct root);
		if (D_RO(root)->magic != ROOT_MAGIC)
			fail("not a pool of this program (root magic 0x%016"
				PRIx64 ")", D_RO(root)->magic);
		if (cmd[0] == 't') {
			uint64_t rounds = parse_u64("K", argv[4]);
			threads(pop, D_RW(root), n, rounds);
			printf("pmemobj: %s: %" PRIu64 " threads did %" PRIu64
				" updates each\n", Set, n, rounds);
		} else if (cmd[0] == 'h') {
			char line[16];
			printf("held\n");
			fflush(stdout);
			if (!fgets(line, sizeof(line), stdin))
				fail("stdin closed while holding the pool");
			run(pop, D_RW(root), n);
			printf("pmemobj: %s: %" PRIu64 " transactions after"
				" holding\n", Set, n);
		} else if (cmd[0] == 'e') {
			uint64_t before = D_RO(root)->ntx;
			run(pop, D_RW(root), n);
			printf("pmemobj: %s: extended from %" PRIu64 " to %"
				PRIu64 " transactions\n", Set, before,
				D_RO(root)->ntx);
		} else {
			verify(pop, root, n, argc == 5 ?
				parse_u64("MAX", argv[4]) : n);
		}
	} else {
		return usage();
	}
	pmemobj_close(pop);
	return 0;
}
