/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_sendlog.c -- unit tests of an async replica's send log
 * (sendlog.c): what a message holds (copied, or a large record sent
 * from the ring), the ring's wrap, the bound, and a sender thread that
 * keeps a shadow replica equal to the master, with one writer and with
 * several at once; and the message sizes a granted buffer gives
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "fab.h"
#include "sendlog.h"
#include "tu.h"
#include "tu_check.h"

#define RADDR 0x10000ULL
#define POOL (256 * 1024)
#define LOG (64 * 1024)
#define PIECE 4096
#define MSG (PIECE * 4)

static unsigned char Master[POOL], Replica[POOL];
static unsigned char Msg[MSG];
static unsigned char Wire[MSG + 2 * PIECE];	/* Msg, then the ring's */

/* fresh -- a new log of the test's sizes and both images cleared */
static void
fresh(struct sendlog *l, uint64_t max_age_ns)
{
	ck_assert_int_eq(sendlog_init(l, LOG, PIECE, max_age_ns), 0);
	memset(Replica, 0, sizeof(Replica));
	memset(Master, 0, sizeof(Master));
}

/* write_persist -- the master's bytes change, then go into the log */
static int
write_persist(struct sendlog *l, size_t off, size_t len, bool end,
		uint64_t deadline, uint64_t *seq)
{
	for (size_t i = 0; i < len; i++)
		Master[off + i] = (unsigned char)(rand() | 1);
	return sendlog_append(l, off, Master + off, len, end, deadline, seq);
}

/* set: every record's bytes are one value; one that is not was torn */
static atomic_bool Uniform, Torn;

/* a record of a message as the test reads it */
struct got { size_t off, len; bool end; };

/*
 * apply -- a message's records into the shadow replica, listed: its
 * `used` bytes of Msg, then the bytes it sends from the ring (they must
 * lie in it, a large record's on a cache line), as they go on the wire
 */
static unsigned
apply(const struct sendlog *l, size_t used, const struct sendlog_ticket *t,
		struct got *g, unsigned max)
{
	unsigned n = 0;
	ck_assert_uint_le(used + t->dlen, sizeof(Wire));
	memcpy(Wire, Msg, used);
	if (t->dlen) {
		ck_assert((const char *)t->data >= l->buf &&
			(const char *)t->data + t->dlen <= l->buf + l->cap);
		/* a page or more starts on a cache line (sendlog.c) */
		const struct lane_rec *h = (const void *)Msg;
		ck_assert((h->len & ~LANE_REC_END) < 4096 ||
			(uintptr_t)t->data % 64 == 0);
		memcpy(Wire + used, t->data, t->dlen);
		used += t->dlen;
	}
	for (size_t at = 0; at < used;) {
		const struct lane_rec *r = (const void *)(Wire + at);
		size_t len = (size_t)(r->len & ~LANE_REC_END);
		ck_assert_uint_ge(r->addr, RADDR);
		/* writers at once: a record holds one value, or it was
		 * taken before its copy was done */
		if (atomic_load(&Uniform) && len &&
				memcmp(r->data, r->data + 1, len - 1))
			atomic_store(&Torn, true);
		memcpy(Replica + (r->addr - RADDR), r->data, len);
		if (n < max)
			g[n] = (struct got){ (size_t)(r->addr - RADDR), len,
				(r->len & LANE_REC_END) != 0 };
		n++;
		at += lane_rec_size(len);
	}
	return n;
}

/*
 * appends, and the records the takes give (`direct`: sendlog_take's
 * direct_min; `pieces`: sendlog_pieces first, 0 not) in `nmsg` messages
 */
static const struct {
	const char *name;
	struct got put[4];
	unsigned nput;
	struct got want[4];
	unsigned nwant;
	size_t direct;
	size_t pieces;
	unsigned nmsg;
} Takes[] = {
	{ "neighbours of one epoch merge", { { 0, 64, false },
		{ 64, 64, true } }, 2, { { 0, 128, true } }, 1, 0, 0, 1 },
	{ "an epoch's end keeps them apart", { { 0, 64, true },
		{ 64, 64, true } }, 2, { { 0, 64, true }, { 64, 64, true } },
		2, 0, 0, 1 },
	{ "a later record inside an earlier one merges, its bytes winning",
		{ { 0, 256, false }, { 8, 8, true } }, 2,
		{ { 0, 256, true } }, 1, 0, 0, 1 },
	{ "one that starts before does not", { { 64, 64, false },
		{ 0, 72, true } }, 2, { { 64, 64, false }, { 0, 72, true } },
		2, 0, 0, 1 },
	{ "apart: two records", { { 0, 8, false }, { 4096, 8, true } }, 2,
		{ { 0, 8, false }, { 4096, 8, true } }, 2, 0, 0, 1 },
	{ "a drain's empty record ends the epoch before it",
		{ { 0, 64, false }, { 0, 0, true }, { 64, 64, false } }, 3,
		{ { 0, 64, true }, { 64, 64, false } }, 2, 0, 0, 1 },
	{ "a range longer than a piece is pieces, merged again",
		{ { 0, 3 * PIECE, true } }, 1, { { 0, 3 * PIECE, true } }, 1,
		0, 0, 1 },
	{ "a large record goes alone, from the ring", { { 8, 1500, true } },
		1, { { 8, 1500, true } }, 1, 1024, 0, 1 },
	{ "small ones before it go first, the rest after it",
		{ { 0, 64, false }, { 4096, 2048, false }, { 64, 64, true } },
		3, { { 0, 64, false }, { 4096, 2048, false },
		{ 64, 64, true } }, 3, 1024, 0, 3 },
	{ "it merges into nothing before it", { { 0, 64, false },
		{ 64, 2048, true } }, 2, { { 0, 64, false },
		{ 64, 2048, true } }, 2, 1024, 0, 2 },
	{ "a drain after it ends the epoch in its header",
		{ { 0, 2048, false }, { 0, 0, true } }, 2,
		{ { 0, 2048, true } }, 1, 1024, 0, 1 },
	{ "larger pieces: a range is as few records, each alone",
		{ { 0, 3 * PIECE, true } }, 1, { { 0, 2 * PIECE, false },
		{ 2 * PIECE, PIECE, true } }, 2, 1024, 2 * PIECE, 2 },
	{ "pieces past a quarter of the ring are cut to fit",
		{ { 0, LOG / 2, true } }, 1, { { 0, LOG / 4 - 24, false },
		{ LOG / 4 - 24, LOG / 4 - 24, false },
		{ LOG / 2 - 48, 48, true } }, 3, 1024, LOG, 3 },
	{ "pieces of whole words", { { 0, 2500, true } }, 1,
		{ { 0, 1000, false }, { 1000, 1000, false },
		{ 2000, 500, true } }, 3, 512, 1001, 3 },
};

START_TEST(test_take_merges_within_an_epoch)
{
	struct sendlog l;
	fresh(&l, 0);
	if (Takes[_i].pieces)
		sendlog_pieces(&l, Takes[_i].pieces);
	uint64_t seq;
	for (unsigned i = 0; i < Takes[_i].nput; i++)
		ck_assert_int_eq(write_persist(&l, Takes[_i].put[i].off,
			Takes[_i].put[i].len, Takes[_i].put[i].end, 0, &seq),
			0);
	struct sendlog_ticket t;
	struct got g[4];
	unsigned n = 0, msgs = 0;
	size_t used;
	while ((used = sendlog_take(&l, Msg, sizeof(Msg), RADDR,
			Takes[_i].direct, &t))) {
		n += apply(&l, used, &t, g + n, 4 - n);
		msgs++;
		if (t.seq != seq)
			sendlog_release(&l, &t);
	}
	ck_assert_msg(n == Takes[_i].nwant && msgs == Takes[_i].nmsg,
		"%s: %u records in %u messages", Takes[_i].name, n, msgs);
	for (unsigned i = 0; i < n; i++)
		ck_assert_msg(g[i].off == Takes[_i].want[i].off &&
			g[i].len == Takes[_i].want[i].len &&
			g[i].end == Takes[_i].want[i].end,
			"%s: record %u [%zu, +%zu) end %d", Takes[_i].name, i,
			g[i].off, g[i].len, g[i].end);
	ck_assert_mem_eq(Replica, Master, POOL);
	ck_assert_uint_eq(t.seq, seq);
	sendlog_release(&l, &t);
	ck_assert_int_eq(sendlog_wait_done(&l, seq, 0), 0);
	sendlog_fini(&l);
}
END_TEST

/* the bound: a full log refuses until released; the lag says so */
START_TEST(test_full_log_waits_for_release)
{
	struct sendlog l;
	fresh(&l, 0);
	uint64_t seq, bytes, age;
	sendlog_lag(&l, &bytes, &age);
	ck_assert(bytes == 0 && age == 0);
	unsigned n = 0;
	while (write_persist(&l, (n * 64) % POOL, 64, true, 0, &seq) == 0)
		n++;
	ck_assert_uint_eq(n, LOG / (24 + 64));
	sendlog_lag(&l, &bytes, &age);
	ck_assert_uint_le(bytes, LOG);
	ck_assert_uint_gt(age, 0);
	ck_assert_int_eq(write_persist(&l, 0, 64, true, clock_ns() + 1000000,
		&seq), -ETIMEDOUT);
	struct sendlog_ticket t;
	ck_assert_uint_gt(sendlog_take(&l, Msg, sizeof(Msg), RADDR, 0, &t), 0);
	sendlog_release(&l, &t);
	ck_assert_int_eq(write_persist(&l, 0, 64, true, 0, &seq), 0);
	ck_assert_int_eq(sendlog_wait_done(&l, seq, 1000000),
		-ETIMEDOUT);
	sendlog_close(&l);
	ck_assert_int_eq(sendlog_wait_done(&l, seq, 0), -EPIPE);
	ck_assert_int_eq(write_persist(&l, 0, 64, true, 0, &seq), -EPIPE);
	sendlog_fini(&l);
}
END_TEST

/* range_note -- collect what sendlog_unreleased lists */
static struct got Ranges[8];
static unsigned Nranges;

static void
range_note(void *arg, size_t off, size_t len)
{
	(void) arg;
	if (Nranges < 8)
		Ranges[Nranges] = (struct got){ off, len, false };
	Nranges++;
}

/*
 * the age bound: appends wait while the oldest record is too old; what
 * is not released is listed, oldest first, without a drain's record
 */
START_TEST(test_age_bound_and_unreleased)
{
	struct sendlog l;
	fresh(&l, 20000000ULL);
	/* appends wait while the oldest record is older than 20 ms */
	uint64_t seq;
	ck_assert_int_eq(write_persist(&l, 100, 8, false, 0, &seq), 0);
	ck_assert_int_eq(sendlog_append(&l, 0, NULL, 0, true, 0, &seq), 0);
	ck_assert_int_eq(write_persist(&l, 4096, 300, true, 0, &seq), 0);
	Nranges = 0;
	sendlog_unreleased(&l, range_note, NULL);
	ck_assert_uint_eq(Nranges, 2);
	ck_assert(Ranges[0].off == 100 && Ranges[0].len == 8);
	ck_assert(Ranges[1].off == 4096 && Ranges[1].len == 300);
	struct timespec ts = { 0, 30000000 };
	nanosleep(&ts, NULL);	/* the time the bound is about */
	uint64_t t0 = clock_ns();
	ck_assert_int_eq(write_persist(&l, 0, 8, true, t0 + 50000000ULL,
		&seq), -ETIMEDOUT);
	ck_assert_uint_ge(clock_ns() - t0, 50000000ULL);
	struct sendlog_ticket t;
	ck_assert_uint_gt(sendlog_take(&l, Msg, sizeof(Msg), RADDR, 0, &t), 0);
	sendlog_release(&l, &t);
	ck_assert_int_eq(write_persist(&l, 0, 8, true, 0, &seq), 0);
	sendlog_fini(&l);
}
END_TEST

/* the sender's direct_min */
static size_t Direct;

/* a sender: take, apply to the shadow replica, release, until closed */
static void *
sender(void *arg)
{
	struct sendlog *l = arg;
	for (;;) {
		bool any = sendlog_wait_work(l, clock_ns() + 100000000ULL);
		struct sendlog_ticket t;
		size_t used = sendlog_take(l, Msg, sizeof(Msg), RADDR, Direct,
			&t);
		if (used) {
			struct got g;
			(void) apply(l, used, &t, &g, 0);
			sendlog_release(l, &t);
		} else if (!any) {
			pthread_mutex_lock(&l->lock);
			bool closed = l->closed;
			pthread_mutex_unlock(&l->lock);
			if (closed)
				return NULL;
		}
	}
}

/*
 * many appends of every size through the wrapping ring while a sender
 * drains it, copying every record or sending the large ones from the
 * ring: the replica ends equal, the lag never past the log
 */
static const size_t Directs[] = { 0, 1024 };

START_TEST(test_sender_keeps_the_replica_equal)
{
	struct sendlog l;
	fresh(&l, 0);
	Direct = Directs[_i];
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, sender, &l), 0);
	uint64_t rnd = 42, seq = 0, bytes, age;
	for (unsigned i = 0; i < 20000; i++) {
		size_t len = 1 + tu_rnd(&rnd) % (i % 7 ? 200 : 3 * PIECE);
		size_t off = tu_rnd(&rnd) % (POOL - len);
		ck_assert_int_eq(write_persist(&l, off, len, tu_rnd(&rnd) % 3,
			clock_ns() + 10000000000ULL, &seq), 0);
		sendlog_lag(&l, &bytes, &age);
		ck_assert_uint_le(bytes, LOG);
	}
	ck_assert_int_eq(sendlog_wait_done(&l, seq, 10000000000ULL), 0);
	sendlog_close(&l);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	ck_assert_mem_eq(Replica, Master, POOL);
	sendlog_fini(&l);
}
END_TEST

#define WRITERS 4
#define SPAN (POOL / WRITERS)

/*
 * writer -- many ranges of its own span of the master, each filled with
 * one value before it is appended as an epoch of its own and with
 * another right after (pieces of up to 3 pages: copied outside the
 * log's lock); 0, or 1 when an append failed
 */
static void *
writer(void *arg)
{
	struct sendlog *l = arg;
	static atomic_uint next;
	unsigned id = atomic_fetch_add(&next, 1) % WRITERS;
	uint64_t rnd = 7 + id, seq;
	for (unsigned i = 0; i < 3000; i++) {
		size_t len = 1 + tu_rnd(&rnd) % (i % 3 ? 256 : 3 * PIECE);
		/* spans apart: records of two writers never merge */
		size_t off = id * SPAN + tu_rnd(&rnd) % (SPAN - len - 64);
		memset(Master + off, 1 + (i * WRITERS + id) % 251, len);
		if (sendlog_append(l, off, Master + off, len, true,
				clock_ns() + 10000000000ULL, &seq))
			return (void *)1;
	}
	return NULL;
}

/*
 * several writers at once while a sender drains the log: no record is
 * taken before its bytes are in (each is one value), and the replica
 * ends equal
 */
START_TEST(test_writers_at_once)
{
	struct sendlog l;
	fresh(&l, 0);
	sendlog_pieces(&l, 3 * PIECE);
	Direct = Directs[_i];
	atomic_store(&Uniform, true);
	atomic_store(&Torn, false);
	pthread_t th, w[WRITERS];
	ck_assert_int_eq(pthread_create(&th, NULL, sender, &l), 0);
	for (unsigned i = 0; i < WRITERS; i++)
		ck_assert_int_eq(pthread_create(&w[i], NULL, writer, &l), 0);
	for (unsigned i = 0; i < WRITERS; i++) {
		void *r;
		ck_assert_int_eq(pthread_join(w[i], &r), 0);
		ck_assert_ptr_null(r);
	}
	ck_assert_int_eq(sendlog_wait_done(&l, sendlog_last(&l),
		10000000000ULL), 0);
	sendlog_close(&l);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	atomic_store(&Uniform, false);
	ck_assert_msg(!atomic_load(&Torn), "a record was taken torn");
	ck_assert_mem_eq(Replica, Master, POOL);
	sendlog_fini(&l);
}
END_TEST

/* sizes a log is refused for */
START_TEST(test_init_refuses_bad_sizes)
{
	struct sendlog l;
	ck_assert_int_eq(sendlog_init(&l, LOG - 8, PIECE, 0), -EINVAL);
	ck_assert_int_eq(sendlog_init(&l, LOG + 4, PIECE, 0), -EINVAL);
	ck_assert_int_eq(sendlog_init(&l, LOG, LOG / 4, 0), -EINVAL);
	ck_assert_int_eq(sendlog_init(&l, LOG, 0, 0), -EINVAL);
}
END_TEST

/*
 * what rpmemd grants (`most`: a sealed lane's cap, or none), and the
 * client's piece and async message body from it (fab.h lane_buffs)
 */
static const struct {
	const char *name;
	size_t granted, most, piece, epochs;
} Grants[] = {
	{ "the wish: a 512 KiB piece and a body for a record of it",
		LANE_BUFF_WISH, SIZE_MAX, LANE_BUFF_DEFAULT,
		LANE_BUFF_DEFAULT + LANE_REC_ROOM },
	{ "an older rpmemd's 512 KiB: the body a piece",
		LANE_BUFF_DEFAULT, SIZE_MAX, LANE_BUFF_DEFAULT,
		LANE_BUFF_DEFAULT },
	{ "sealed: the cap's piece, its header beside it",
		LANE_SEALED_BUFF + LANE_REC_ROOM, LANE_SEALED_BUFF,
		LANE_SEALED_BUFF, LANE_SEALED_BUFF + LANE_REC_ROOM },
	{ "sealed, an older rpmemd granting the wish: cut to the cap",
		LANE_BUFF_WISH, LANE_SEALED_BUFF, LANE_SEALED_BUFF,
		LANE_SEALED_BUFF + LANE_REC_ROOM },
	{ "many lanes: whole pages of rpmemd's memory cap",
		(size_t)70000, SIZE_MAX, 69632, 69632 + LANE_REC_ROOM },
	{ "PMDK's 8 KiB", 8192, SIZE_MAX, 8192, 8192 },
};

START_TEST(test_granted_buffers)
{
	size_t piece, epochs;
	lane_buffs(Grants[_i].granted, Grants[_i].most, &piece, &epochs);
	ck_assert_uint_eq(piece, Grants[_i].piece);
	ck_assert_uint_eq(epochs, Grants[_i].epochs);
	/* a piece's record fits the body exactly where it can */
	ck_assert_uint_le(epochs, Grants[_i].granted);
	if (epochs > piece)
		ck_assert_uint_eq(lane_rec_size(piece), epochs);
}
END_TEST

/* main -- every sendlog test (tu_check.h) */
TU_CHECK_MAIN("sendlog", "sendlog", NULL, NULL,
	TU_EACH(test_take_merges_within_an_epoch, Takes),
	TU_ONE(test_full_log_waits_for_release),
	TU_ONE(test_age_bound_and_unreleased),
	TU_EACH(test_sender_keeps_the_replica_equal, Directs),
	TU_EACH(test_writers_at_once, Directs),
	TU_ONE(test_init_refuses_bad_sizes),
	TU_EACH(test_granted_buffers, Grants))
