/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_apply.c -- rpmemd's apply module: message validation, 8-byte copy
 */
#include <check.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "apply.h"
#include "pool_hdr.h"
#include "tu_check.h"

#define POOL_SIZE (64 * 1024)
#define RADDR 0x10000000ULL

static char *Pool;
static struct apply_pool P;
static struct apply_pending Pend;
static unsigned char Msgbuf[sizeof(struct lane_msg) + 4096];

/* setup -- a private anonymous "pool" (msync works on it) */
static void
setup(void)
{
	Pool = mmap(NULL, POOL_SIZE, PROT_READ | PROT_WRITE,
		MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(Pool, MAP_FAILED);
	P = (struct apply_pool){
		.base = Pool, .size = POOL_SIZE, .raddr = RADDR,
		.buff_size = 4096, .is_pmem = false, .has_headers = true,
	};
	Pend = (struct apply_pending){ 0, 0 };
}

/* teardown -- unmap the pool */
static void
teardown(void)
{
	munmap(Pool, POOL_SIZE);
}

/* msg -- build an inline message for `len` bytes of `fill` at `off` */
static struct lane_msg *
msg(uint32_t op, uint64_t off, uint64_t size, size_t dlen, int fill)
{
	struct lane_msg *m = (void *)Msgbuf;
	m->op = op;
	m->lane = 3;
	m->addr = RADDR + off;
	m->size = size;
	memset(m->data, fill, dlen);
	return m;
}

START_TEST(test_inline_copies_and_persists)
{
	struct lane_msg *m = msg(LANE_OP_INLINE, 5000, 100, 100, 0xab);
	ck_assert_int_eq(apply_msg(&P, m, sizeof(*m) + 100, &Pend), 0);
	for (int i = 0; i < 100; i++)
		ck_assert_int_eq((unsigned char)Pool[5000 + i], 0xab);
	ck_assert_int_eq(Pool[4999], 0);
	ck_assert_int_eq(Pool[5100], 0);
}
END_TEST

START_TEST(test_refuses_header_offsets)
{
	struct lane_msg *m = msg(LANE_OP_INLINE, 4088, 8, 8, 0xff);
	ck_assert_int_eq(apply_msg(&P, m, sizeof(*m) + 8, &Pend), EINVAL);
	ck_assert_int_eq(Pool[4088], 0);
	P.has_headers = false;
	ck_assert_int_eq(apply_msg(&P, m, sizeof(*m) + 8, &Pend), 0);
	ck_assert_int_eq((unsigned char)Pool[4088], 0xff);
}
END_TEST

START_TEST(test_refuses_ranges_outside_or_wrapping)
{
	struct lane_msg *m = msg(LANE_OP_WRITTEN, POOL_SIZE - 8, 16, 0, 0);
	ck_assert_int_eq(apply_msg(&P, m, sizeof(*m), &Pend), EINVAL);
	m = msg(LANE_OP_WRITTEN, 8192, UINT64_MAX, 0, 0);
	ck_assert_int_eq(apply_msg(&P, m, sizeof(*m), &Pend), EINVAL);
	m = msg(LANE_OP_WRITTEN, 0, 8, 0, 0);
	m->addr = RADDR - 8;		/* below the pool */
	ck_assert_int_eq(apply_msg(&P, m, sizeof(*m), &Pend), EINVAL);
	m = msg(LANE_OP_WRITTEN, POOL_SIZE, 0, 0, 0);
	ck_assert_int_eq(apply_msg(&P, m, sizeof(*m), &Pend), 0);
}
END_TEST

START_TEST(test_refuses_inline_size_mismatch_r7)
{
	/* scenario R7: payload larger than the negotiated buffer */
	P.buff_size = 64;
	struct lane_msg *m = msg(LANE_OP_INLINE, 8192, 128, 128, 0x11);
	ck_assert_int_eq(apply_msg(&P, m, sizeof(*m) + 128, &Pend), EINVAL);
	ck_assert_int_eq(Pool[8192], 0);
	/* size field not matching the bytes received */
	m = msg(LANE_OP_INLINE, 8192, 32, 16, 0x11);
	ck_assert_int_eq(apply_msg(&P, m, sizeof(*m) + 16, &Pend), EINVAL);
	ck_assert_int_eq(Pool[8192], 0);
}
END_TEST

START_TEST(test_refuses_short_and_unknown)
{
	struct lane_msg *m = msg(LANE_OP_WRITTEN, 8192, 8, 0, 0);
	ck_assert_int_eq(apply_msg(&P, m, sizeof(*m) - 1, &Pend), EPROTO);
	m->op = 1;
	ck_assert_int_eq(apply_msg(&P, m, sizeof(*m), &Pend), EPROTO);
	m->op = LANE_OP_WRITTEN | 0x400;
	ck_assert_int_eq(apply_msg(&P, m, sizeof(*m), &Pend), EPROTO);
	m->op = LANE_OP_WRITTEN | LANE_F_DEEP;
	ck_assert_int_eq(apply_msg(&P, m, sizeof(*m), &Pend), 0);
}
END_TEST

START_TEST(test_more_pieces_persist_with_the_last)
{
	struct lane_msg *m = msg(LANE_OP_INLINE | LANE_F_MORE, 8192, 64, 64,
		1);
	ck_assert_int_eq(apply_msg(&P, m, sizeof(*m) + 64, &Pend), 0);
	ck_assert_uint_eq(Pend.lo, 8192);
	ck_assert_uint_eq(Pend.hi, 8256);
	m = msg(LANE_OP_INLINE | LANE_F_MORE, 8256, 64, 64, 2);
	ck_assert_int_eq(apply_msg(&P, m, sizeof(*m) + 64, &Pend), 0);
	ck_assert_uint_eq(Pend.hi, 8320);
	/* the bytes are stored at once, the persist waits for the last */
	ck_assert_int_eq(Pool[8256], 2);
	m = msg(LANE_OP_INLINE, 8320, 64, 64, 3);
	ck_assert_int_eq(apply_msg(&P, m, sizeof(*m) + 64, &Pend), 0);
	ck_assert_uint_eq(Pend.lo, Pend.hi);
	ck_assert_int_eq(Pool[8320], 3);
	/* an unknown flag next to MORE is refused */
	m = msg(LANE_OP_INLINE | LANE_F_MORE | 0x400, 8192, 8, 8, 4);
	ck_assert_int_eq(apply_msg(&P, m, sizeof(*m) + 8, &Pend), EPROTO);
}
END_TEST

/* batch_rec -- append a record of `len` bytes of `fill` at `off` */
static size_t
batch_rec(struct lane_msg *m, size_t at, uint64_t off, size_t len, int fill)
{
	struct lane_rec *r = (void *)(m->data + at);
	r->addr = RADDR + off;
	r->len = len;
	memset(r->data, fill, len);
	return at + lane_rec_size(len);
}

START_TEST(test_batch_applies_every_record_in_order)
{
	struct lane_msg *m = msg(LANE_OP_BATCH, 0, 0, 0, 0);
	size_t at = batch_rec(m, 0, 8192, 3, 0x01);
	at = batch_rec(m, at, 9000, 100, 0x02);
	at = batch_rec(m, at, 9050, 10, 0x03);	/* later record wins */
	m->size = at;
	ck_assert_int_eq(apply_msg(&P, m, sizeof(*m) + at, &Pend), 0);
	ck_assert_int_eq(Pool[8192], 1);
	ck_assert_int_eq(Pool[8194], 1);
	ck_assert_int_eq(Pool[8195], 0);
	ck_assert_int_eq(Pool[9049], 2);
	ck_assert_int_eq(Pool[9050], 3);
	ck_assert_int_eq(Pool[9060], 2);
}
END_TEST

START_TEST(test_batch_with_a_bad_record_stores_nothing)
{
	struct lane_msg *m = msg(LANE_OP_BATCH, 0, 0, 0, 0);
	size_t at = batch_rec(m, 0, 8192, 8, 0x01);
	at = batch_rec(m, at, 100, 8, 0x02);		/* in the header */
	m->size = at;
	ck_assert_int_eq(apply_msg(&P, m, sizeof(*m) + at, &Pend), EINVAL);
	ck_assert_int_eq(Pool[8192], 0);
	/* a record longer than what is left of the batch */
	at = batch_rec(m, 0, 8192, 8, 0x01);
	((struct lane_rec *)(void *)m->data)->len = 4096;
	m->size = at;
	ck_assert_int_eq(apply_msg(&P, m, sizeof(*m) + at, &Pend), EINVAL);
	ck_assert_int_eq(Pool[8192], 0);
	/* a truncated record header */
	m->size = 8;
	ck_assert_int_eq(apply_msg(&P, m, sizeof(*m) + 8, &Pend), EINVAL);
	/* a batch is never a piece of a longer flush */
	m->op = LANE_OP_BATCH | LANE_F_MORE;
	ck_assert_int_eq(apply_msg(&P, m, sizeof(*m) + 8, &Pend), EPROTO);
}
END_TEST

/*
 * what each msync saw: the range, and how many of the case's records
 * were stored by then (pmem_msync is wrapped at link time)
 */
#define CALLS_MAX 8
static struct { size_t off, len; unsigned stored; } Calls[CALLS_MAX];
static unsigned Ncalls;

/* the records of an epochs case: distinct fills, no overlap */
struct erec {
	uint64_t off;
	size_t len;
	bool end;
};
static const struct erec *Recs;
static unsigned Nrecs;

int __real_pmem_msync(const void *addr, size_t len);
int __wrap_pmem_msync(const void *addr, size_t len);

/* __wrap_pmem_msync -- note the call, then do it */
int
__wrap_pmem_msync(const void *addr, size_t len)
{
	unsigned stored = 0;
	for (unsigned i = 0; i < Nrecs; i++)
		stored += Pool[Recs[i].off] == (char)(i + 1);
	if (Ncalls < CALLS_MAX)
		Calls[Ncalls] = (typeof(Calls[0])){
			(size_t)((const char *)addr - Pool), len, stored };
	Ncalls++;
	return __real_pmem_msync(addr, len);
}

/*
 * An async replica's epochs: records up to an epoch's end durable
 * before the next is stored; neighbours merged only within an epoch
 */
static const struct {
	const char *name;
	uint32_t op;
	struct erec rec[4];
	unsigned nrec;
	unsigned ncalls;
	struct { size_t off, len; unsigned stored; } call[4];
} Epochs[] = {
	{ "a batch is one epoch: neighbours merge", LANE_OP_BATCH,
		{ { 8192, 64, 0 }, { 8256, 64, 0 }, { 8320, 64, 0 } }, 3,
		1, { { 8192, 192, 3 } } },
	{ "an end between neighbours splits them", LANE_OP_EPOCHS,
		{ { 8192, 64, 1 }, { 8256, 64, 1 }, { 8320, 64, 1 } }, 3,
		3, { { 8192, 64, 1 }, { 8256, 64, 2 }, { 8320, 64, 3 } } },
	{ "one epoch of neighbours is one persist", LANE_OP_EPOCHS,
		{ { 8192, 64, 0 }, { 8256, 64, 0 }, { 8320, 64, 1 } }, 3,
		1, { { 8192, 192, 3 } } },
	{ "records apart: a persist each, in order", LANE_OP_EPOCHS,
		{ { 20000, 8, 0 }, { 8192, 64, 1 }, { 30000, 16, 1 } }, 3,
		3, { { 20000, 8, 1 }, { 8192, 64, 2 }, { 30000, 16, 3 } } },
	{ "an end closes the merged run before it", LANE_OP_EPOCHS,
		{ { 8192, 64, 0 }, { 8256, 64, 1 }, { 8320, 64, 0 },
		{ 8384, 64, 1 } }, 4,
		2, { { 8192, 128, 2 }, { 8320, 128, 4 } } },
};

START_TEST(test_epochs_are_durable_in_order)
{
	struct lane_msg *m = msg(Epochs[_i].op, 0, 0, 0, 0);
	size_t at = 0;
	Recs = Epochs[_i].rec;
	Nrecs = Epochs[_i].nrec;
	for (unsigned i = 0; i < Nrecs; i++) {
		struct lane_rec *r = (void *)(m->data + at);
		at = batch_rec(m, at, Recs[i].off, Recs[i].len, (int)i + 1);
		if (Recs[i].end)
			r->len |= LANE_REC_END;
	}
	m->size = at;
	Ncalls = 0;
	ck_assert_int_eq(apply_msg(&P, m, sizeof(*m) + at, &Pend), 0);
	ck_assert_msg(Ncalls == Epochs[_i].ncalls, "%s: %u persists",
		Epochs[_i].name, Ncalls);
	for (unsigned i = 0; i < Ncalls; i++)
		ck_assert_msg(Calls[i].off == Epochs[_i].call[i].off &&
			Calls[i].len == Epochs[_i].call[i].len &&
			Calls[i].stored == Epochs[_i].call[i].stored,
			"%s: persist %u of [%zu, +%zu) with %u stored",
			Epochs[_i].name, i, Calls[i].off, Calls[i].len,
			Calls[i].stored);
	Nrecs = 0;
}
END_TEST

/* an epoch's end is refused in a batch, and a piece of either */
START_TEST(test_epoch_end_only_in_epochs)
{
	struct lane_msg *m = msg(LANE_OP_BATCH, 0, 0, 0, 0);
	size_t at = batch_rec(m, 0, 8192, 8, 0x01);
	((struct lane_rec *)(void *)m->data)->len |= LANE_REC_END;
	m->size = at;
	ck_assert_int_eq(apply_msg(&P, m, sizeof(*m) + at, &Pend), EINVAL);
	ck_assert_int_eq(Pool[8192], 0);
	m->op = LANE_OP_EPOCHS;
	ck_assert_int_eq(apply_msg(&P, m, sizeof(*m) + at, &Pend), 0);
	ck_assert_int_eq(Pool[8192], 1);
	m->op = LANE_OP_EPOCHS | LANE_F_MORE;
	ck_assert_int_eq(apply_msg(&P, m, sizeof(*m) + at, &Pend), EPROTO);
}
END_TEST

START_TEST(test_copy8_every_alignment)
{
	unsigned char src[80], dst[96];
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (unsigned char)(i + 1);
	for (size_t off = 0; off < 8; off++) {
		for (size_t len = 0; len <= 72; len++) {
			memset(dst, 0, sizeof(dst));
			apply_copy8(dst + off, src + 1, len);
			ck_assert_int_eq(memcmp(dst + off, src + 1, len), 0);
			for (size_t i = 0; i < off; i++)
				ck_assert_int_eq(dst[i], 0);
			for (size_t i = off + len; i < sizeof(dst); i++)
				ck_assert_int_eq(dst[i], 0);
		}
	}
}
END_TEST

/* apply_suite -- every test above, in one case */
static Suite *
apply_suite(void)
{
	TCase *tc;
	Suite *s = tu_suite("apply", "apply", setup, teardown, &tc);
	tcase_add_test(tc, test_inline_copies_and_persists);
	tcase_add_test(tc, test_refuses_header_offsets);
	tcase_add_test(tc, test_refuses_ranges_outside_or_wrapping);
	tcase_add_test(tc, test_refuses_inline_size_mismatch_r7);
	tcase_add_test(tc, test_refuses_short_and_unknown);
	tcase_add_test(tc, test_more_pieces_persist_with_the_last);
	TU_LOOP(tc, test_epochs_are_durable_in_order, Epochs);
	tcase_add_test(tc, test_epoch_end_only_in_epochs);
	tcase_add_test(tc, test_batch_applies_every_record_in_order);
	tcase_add_test(tc, test_batch_with_a_bad_record_stores_nothing);
	tcase_add_test(tc, test_copy8_every_alignment);
	return tu_suite_add(s, tc);
}

/* main -- run apply_suite() (tu_check.h) */
TU_MAIN(apply_suite)
