/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_pmemobj_skip.c -- unit tests of the bytes of a libpmemobj pool
 * rpmem verify skips: the walk of lanes and heap on synthetic pools (a
 * table of heaps and the ranges each must give), and the descriptor's
 * run-time state checked against the installed libpmemobj
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpmemobj.h>

#include "pmemobj_skip.h"
#include "tu_check.h"

#define POOL_SIZE ((size_t)8 << 20)
#define DESC_END 8192		/* end of libpmemobj's pool descriptor */
#define UUID_LO_OFF 6872	/* a run-time field the API shows too */
#define RUNTIME_OFF 6688
#define RUNTIME_LEN 584

/* a synthetic pool: 4 lanes, then a heap of one zone of NCHUNKS chunks */
#define LANES 8192
#define NLANES 4
#define LANE_SIZE 3072
#define UNDO_NEXT 968		/* a lane's undo log's `next` */
#define HEAP (LANES + NLANES * LANE_SIZE)
#define ZONE (HEAP + 1024)
#define HDRS (ZONE + 64)
#define CHUNK ((size_t)256 << 10)
#define CHUNKS (HDRS + (size_t)65528 * 8)
#define NCHUNKS 8
#define SYN_SIZE (CHUNKS + NCHUNKS * CHUNK)

/* chunk types and flags (heap_layout.h of PMDK 1.12.1) */
#define FREE 2
#define USED 3
#define RUN 4
#define COMPACT 0x1
#define ALIGNED 0x4
#define FLEX 0x8

/* obj_attr -- a header saying PMEMOBJ of format `major` */
static struct rpmem_pool_attr
obj_attr(const char *sig, uint32_t major)
{
	struct rpmem_pool_attr a;
	memset(&a, 0, sizeof(a));
	memcpy(a.signature, sig, strnlen(sig, sizeof(a.signature)));
	a.major = major;
	return a;
}

/* headers that must not be taken for libpmemobj 1.12's */
static const struct {
	const char *sig;
	uint32_t major;
	size_t size;
} Not_obj[] = {
	{ "RPMEMPL", 6, POOL_SIZE },	/* rpmem create's pools */
	{ "PMEMOBJ", 5, POOL_SIZE },	/* libpmemobj 1.5 and 1.6 */
	{ "PMEMOBJ", 7, POOL_SIZE },	/* a format not yet known */
	{ "PMEMOBJX", 6, POOL_SIZE },	/* no NUL after the name */
	{ "PMEMBLK", 6, POOL_SIZE },
	{ "", 0, POOL_SIZE },		/* OPTION NOHDRS */
	{ "PMEMOBJ", 6, DESC_END - 1 },	/* too small to hold it */
};

START_TEST(test_other_headers_skip_nothing)
{
	struct rpmem_pool_attr a = obj_attr(Not_obj[_i].sig,
		Not_obj[_i].major);
	unsigned char *pool = calloc(1, POOL_SIZE);
	ck_assert_ptr_nonnull(pool);
	struct replica_skip *l = (void *)&a;
	size_t n = 1;
	ck_assert_int_eq(pmemobj_skip_list(&a, pool, Not_obj[_i].size, &l,
		&n), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_ptr_null(l);
	free(pool);
}
END_TEST

/* one block of chunks: a header, and for a run its unit and bitmap */
struct blk {
	unsigned type, flags;
	uint32_t size;		/* chunks; 0 ends the list */
	uint64_t unit;		/* a run's unit size */
	unsigned words;		/* its bitmap's words, all ones but... */
	int free[3];		/* ...these units (-1: none) */
};

/* where an expected range lies: a chunk header, or in a chunk */
enum base { B_HDR, B_CHUNK };

/* one range the walk must give */
struct want {
	const char *what;	/* NULL ends the list */
	enum base base;
	size_t idx, add, len;
};

/* a lane whose undo log chains a second log at CHUNKS + at */
struct lane_next {
	unsigned lane;
	size_t at;		/* 0: none */
};

#define NO_FREE { -1, -1, -1 }
#define F pmemobj_skip_footer
#define H pmemobj_skip_head
#define G pmemobj_skip_freed_gen
#define L pmemobj_skip_gen

static const struct {
	const char *name;
	int bad_sig;		/* the heap header is not libpmemobj's */
	uint32_t magic;		/* of the zone; 0: 0xC3F0A2D2 */
	struct blk blk[5];
	struct lane_next next[2];
	struct want want[10];	/* after the descriptor's run-time state */
} Heaps[] = {
	{ "a fresh zone: one free block, its footer and every chunk's head",
		0, 0, { { FREE, 0, 8, 0, 0, NO_FREE } }, { { 0, 0 } },
		{ { F, B_HDR, 1, 0, 7 * 8 }, { H, B_CHUNK, 0, 0, 112 },
		{ H, B_CHUNK, 1, 0, 112 }, { H, B_CHUNK, 2, 0, 112 },
		{ H, B_CHUNK, 3, 0, 112 }, { H, B_CHUNK, 4, 0, 112 },
		{ H, B_CHUNK, 5, 0, 112 }, { H, B_CHUNK, 6, 0, 112 },
		{ H, B_CHUNK, 7, 0, 112 } } },
	{ "a used huge block: its footers, none of its data",
		0, 0, { { USED, COMPACT, 7, 0, 0, NO_FREE },
		{ FREE, 0, 1, 0, 0, NO_FREE } }, { { 0, 0 } },
		{ { F, B_HDR, 1, 0, 6 * 8 }, { H, B_CHUNK, 7, 0, 112 } } },
	{ "one-chunk blocks have no footer; the walk steps over blocks",
		0, 0, { { USED, 0, 1, 0, 0, NO_FREE },
		{ FREE, 0, 1, 0, 0, NO_FREE },
		{ USED, COMPACT, 6, 0, 0, NO_FREE } }, { { 0, 0 } },
		{ { F, B_HDR, 3, 0, 5 * 8 }, { H, B_CHUNK, 1, 0, 112 } } },
	/* flex bitmap of 1 KiB units: 6 words, units from +64 */
	{ "a run: each free unit's log counter, never its bitmap or a used "
		"unit", 0, 0, { { RUN, COMPACT | FLEX, 1, 1024, 6,
		{ 1, 3, -1 } }, { USED, 0, 7, 0, 0, NO_FREE } }, { { 0, 0 } },
		{ { F, B_HDR, 2, 0, 6 * 8 },
		{ G, B_CHUNK, 0, 64 + 1024 + 88, 8 },
		{ G, B_CHUNK, 0, 64 + 3 * 1024 + 88, 8 } } },
	{ "a run whose first unit is free: the free part of the chunk head",
		0, 0, { { RUN, COMPACT | FLEX, 1, 1024, 6, { 0, -1, -1 } },
		{ USED, 0, 7, 0, 0, NO_FREE } }, { { 0, 0 } },
		{ { F, B_HDR, 2, 0, 6 * 8 }, { H, B_CHUNK, 0, 64, 48 },
		{ G, B_CHUNK, 0, 64 + 88, 8 } } },
	/* a fixed bitmap is 304 bytes: units from +320, a log at +384 */
	{ "a run with the fixed bitmap of older pools", 0, 0,
		{ { RUN, COMPACT, 1, 2048, 38, { 0, -1, -1 } },
		{ USED, 0, 7, 0, 0, NO_FREE } }, { { 0, 0 } },
		{ { F, B_HDR, 2, 0, 6 * 8 }, { G, B_CHUNK, 0, 384 + 24, 8 } } },
	/* 4 KiB units over 2 chunks: unit 63 holds chunk 1's first 64 B */
	{ "a two-chunk run: the head of its second chunk, where free", 0, 0,
		{ { RUN, COMPACT | FLEX, 2, 4096, 6, { 63, -1, -1 } },
		{ USED, 0, 6, 0, 0, NO_FREE } }, { { 0, 0 } },
		{ { F, B_HDR, 3, 0, 5 * 8 },
		{ G, B_CHUNK, 0, 64 + 63 * 4096 + 64 + 24, 8 },
		{ H, B_CHUNK, 1, 0, 64 } } },
	{ "an aligned run: nothing, its units' place is not known", 0, 0,
		{ { RUN, COMPACT | FLEX | ALIGNED, 1, 1024, 6, { 0, 1, -1 } },
		{ USED, 0, 7, 0, 0, NO_FREE } }, { { 0, 0 } },
		{ { F, B_HDR, 2, 0, 6 * 8 } } },
	{ "lanes: a second undo log's counter, at its first cache line",
		0, 0, { { USED, COMPACT, 8, 0, 0, NO_FREE } },
		{ { 1, 16 }, { 3, 3 * CHUNK + 128 } },
		{ { F, B_HDR, 1, 0, 7 * 8 }, { L, B_CHUNK, 0, 64 + 24, 8 },
		{ L, B_CHUNK, 3, 128 + 24, 8 } } },
	{ "a header that makes no sense ends the walk of its zone", 0, 0,
		{ { USED, 0, 2, 0, 0, NO_FREE },
		{ FREE, 0, 0, 0, 0, NO_FREE } },
		{ { 0, 0 } }, { { F, B_HDR, 1, 0, 8 } } },
	{ "a zone libpmemobj has not yet used: nothing", 0, 0x12345678,
		{ { FREE, 0, 8, 0, 0, NO_FREE } }, { { 0, 0 } }, { { NULL } } },
	{ "not libpmemobj's heap: not even the lanes", 1, 0,
		{ { FREE, 0, 8, 0, 0, NO_FREE } }, { { 1, 16 } },
		{ { NULL } } },
};

/* store64 -- 8 bytes at `off` */
static void
store64(unsigned char *pool, size_t off, uint64_t v)
{
	memcpy(pool + off, &v, sizeof(v));
}

/* make_run -- a run's header and a bitmap of used units but `free` */
static void
make_run(unsigned char *pool, size_t at, const struct blk *b)
{
	store64(pool, at, b->unit);
	for (unsigned w = 0; w < b->words; w++)
		store64(pool, at + 16 + w * 8, UINT64_MAX);
	for (unsigned k = 0; k < 3 && b->free[k] >= 0; k++) {
		size_t u = (size_t)b->free[k];
		pool[at + 16 + u / 8] &= (unsigned char)~(1U << (u % 8));
	}
}

/* make_heap -- the synthetic pool of row i */
static unsigned char *
make_heap(int i)
{
	unsigned char *pool = calloc(1, SYN_SIZE);
	ck_assert_ptr_nonnull(pool);
	store64(pool, 5120, LANES);
	store64(pool, 5128, NLANES);
	store64(pool, 5136, HEAP);
	memcpy(pool + HEAP, Heaps[i].bad_sig ? "MEMORY_HEAP_HDX" :
		"MEMORY_HEAP_HDR", 16);
	store64(pool, HEAP + 16, 1);
	store64(pool, HEAP + 40, CHUNK);
	store64(pool, HEAP + 48, 65528);
	uint32_t magic = Heaps[i].magic ? Heaps[i].magic : 0xC3F0A2D2U;
	store64(pool, ZONE, (uint64_t)NCHUNKS << 32 | magic);
	size_t c = 0;
	for (const struct blk *b = Heaps[i].blk; c < NCHUNKS &&
			b < Heaps[i].blk + 5; b++) {
		store64(pool, HDRS + c * 8, (uint64_t)b->size << 32 |
			(uint64_t)b->flags << 16 | b->type);
		if (b->type == RUN)
			make_run(pool, CHUNKS + c * CHUNK, b);
		if (b->size == 0)
			break;
		c += b->size;
	}
	for (unsigned k = 0; k < 2; k++)
		if (Heaps[i].next[k].at)
			store64(pool, LANES + Heaps[i].next[k].lane *
				LANE_SIZE + UNDO_NEXT,
				CHUNKS + Heaps[i].next[k].at);
	return pool;
}

/* want_off -- where an expected range starts */
static size_t
want_off(const struct want *w)
{
	return (w->base == B_HDR ? HDRS + w->idx * 8 :
		CHUNKS + w->idx * CHUNK) + w->add;
}

/*
 * Each synthetic heap gives exactly its expected ranges, after the
 * descriptor's run-time state, in offset order.
 */
START_TEST(test_heap_walk)
{
	struct rpmem_pool_attr a = obj_attr("PMEMOBJ", 6);
	unsigned char *pool = make_heap(_i);
	struct replica_skip *l;
	size_t n;
	ck_assert_int_eq(pmemobj_skip_list(&a, pool, SYN_SIZE, &l, &n), 0);
	ck_assert_ptr_nonnull(l);
	ck_assert_uint_eq(l[0].off, RUNTIME_OFF);
	ck_assert_uint_eq(l[0].len, RUNTIME_LEN);
	ck_assert_ptr_eq(l[0].what, pmemobj_skip_runtime);
	size_t k = 1;
	for (const struct want *w = Heaps[_i].want; w->what &&
			w < Heaps[_i].want + 10; w++, k++) {
		ck_assert_msg(k < n, "%s: range %zu missing", Heaps[_i].name,
			k);
		ck_assert_msg(l[k].off == want_off(w) && l[k].len == w->len &&
			l[k].what == w->what, "%s: range %zu is 0x%zx+%zu "
			"(%s), not 0x%zx+%zu (%s)", Heaps[_i].name, k,
			l[k].off, l[k].len, l[k].what, want_off(w), w->len,
			w->what);
	}
	ck_assert_msg(n == k, "%s: %zu ranges, not %zu", Heaps[_i].name, n,
		k);
	free(l);
	free(pool);
}
END_TEST

/* word -- the 8 bytes at offset `off` of the pool */
static uint64_t
word(PMEMobjpool *pop, size_t off)
{
	uint64_t v;
	memcpy(&v, (char *)pop + off, sizeof(v));
	return v;
}

/*
 * The installed libpmemobj's own pool: the first skipped byte starts its
 * mapping address, the last ends its user data, a field between holds
 * what the API calls the pool's uuid_lo, and what follows is untouched;
 * every other range it gives lies in the heap.
 */
START_TEST(test_ends_match_the_installed_libpmemobj)
{
	const char *tmp = getenv("TMPDIR");
	char path[4096];
	snprintf(path, sizeof(path), "%s/check_pmemobj_skip.XXXXXX",
		tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(path));
	char pool[4200];
	snprintf(pool, sizeof(pool), "%s/pool", path);
	PMEMobjpool *pop = pmemobj_create(pool, "skip", POOL_SIZE, 0600);
	ck_assert_msg(pop, "pmemobj_create: %s", pmemobj_errormsg());
	PMEMoid root = pmemobj_root(pop, 64);
	ck_assert(!OID_IS_NULL(root));

	struct rpmem_pool_attr a;
	memset(&a, 0, sizeof(a));
	memcpy(a.signature, pop, sizeof(a.signature));
	memcpy(&a.major, (char *)pop + sizeof(a.signature), sizeof(a.major));
	struct replica_skip *l;
	size_t n;
	ck_assert_int_eq(pmemobj_skip_list(&a, pop, POOL_SIZE, &l, &n), 0);
	ck_assert_uint_ge(n, 2);
	ck_assert_ptr_eq(l[0].what, pmemobj_skip_runtime);
	size_t end = l[0].off + l[0].len;

	ck_assert_uint_eq(word(pop, l[0].off), (uintptr_t)pop);
	ck_assert_uint_eq(word(pop, UUID_LO_OFF), root.pool_uuid_lo);
	uint64_t mark = 0x5ec0ffee0ddba11ULL;
	pmemobj_set_user_data(pop, (void *)(uintptr_t)mark);
	ck_assert_uint_eq(word(pop, end - sizeof(mark)), mark);
	for (size_t off = end; off < DESC_END; off++)
		ck_assert_uint_eq(((unsigned char *)pop)[off], 0);
	/* the root object's heap: its first block is a run, then free */
	uint64_t heap = word(pop, 5136);
	for (size_t k = 1; k < n; k++)
		ck_assert_uint_gt(l[k].off, heap);
	free(l);

	pmemobj_close(pop);
	ck_assert_int_eq(unlink(pool), 0);
	ck_assert_int_eq(rmdir(path), 0);
}
END_TEST

/* main -- the skip list, synthetic heaps and a real one (tu_check.h) */
TU_CHECK_MAIN("pmemobj_skip", "list", NULL, NULL,
	TU_EACH(test_other_headers_skip_nothing, Not_obj),
	TU_EACH(test_heap_walk, Heaps),
	TU_ONE(test_ends_match_the_installed_libpmemobj))
