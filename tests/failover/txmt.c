/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * txmt.c -- a libpmemobj application of many threads, each on its own
 * lane, that logs every transaction it saw committed, and the oracle of
 * the ordering rule across lanes on a promoted copy of its pool
 * (doc/async.md, "The ordering rule"; async_link.sh `objorder`)
 *
 * Usage:
 *   txmt create SET                create the pool (layout "txmt")
 *   txmt run SET DIR THREADS       THREADS threads run transactions
 *                                  until killed; thread t appends
 *                                  "n begin end" to DIR/tx.t once its
 *                                  transaction n returned
 *   txmt check SET DIR BOUND       open the pool with libpmemobj: each
 *                                  thread's transactions there are
 *                                  1..count, each one whole; every
 *                                  logged one that returned before the
 *                                  latest one there began is there; the
 *                                  logged ones missing carry at most
 *                                  BOUND bytes of records
 *
 * Thread t's transaction n allocates a record of 16..1039 bytes, links
 * it to the head of t's list and sets t's count, all in one
 * transaction.  Every transaction takes a tick of one clock before it
 * begins (stored in its record) and one once it returned, so "A
 * returned before B began" is A.end < B.begin.
 *
 * Built against Debian's libpmemobj only (and libtu's tu_die); REPLICA
 * lines make libpmemobj dlopen librpmem.so.1.  Exit status 0 or 1.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpmemobj.h>

#include "tu.h"

#define THREADS_MAX 16
#define MAGIC 0x54584d5476303031ULL	/* "TXMTv001" */

POBJ_LAYOUT_BEGIN(txmt);
POBJ_LAYOUT_ROOT(txmt, struct root);
POBJ_LAYOUT_TOID(txmt, struct rec);
POBJ_LAYOUT_END(txmt);

struct rec {
	uint64_t t;
	uint64_t n;
	uint64_t begin;			/* its tick before it began */
	uint64_t len;			/* of data */
	TOID(struct rec) next;		/* t's transaction n - 1 */
	unsigned char data[];		/* byte(t, n, i) */
};

/* a thread's own: a cache line of its own */
struct thr {
	uint64_t count;			/* its transactions committed */
	TOID(struct rec) head;		/* its transaction count */
	char pad[40];
};

struct root {
	uint64_t magic;
	struct thr thr[THREADS_MAX];
};

static const char *Set;
static PMEMobjpool *Pop;
static struct root *Root;
static const char *Dir;
static _Atomic uint64_t Tick;

/* fail -- "txmt: SET: message" and exit 1 */
#define fail(...) tu_die("txmt", Set, __VA_ARGS__)

/* rec_len -- data bytes of thread t's record n: 16 .. 1039 */
static uint64_t
rec_len(uint64_t t, uint64_t n)
{
	return 16 + tu_mix(t << 40 ^ n) % 1024;
}

/* byte -- data byte i of thread t's record n */
static unsigned char
byte(uint64_t t, uint64_t n, uint64_t i)
{
	return (unsigned char)((n * 7 + t * 31 + i) & 0xff);
}

/* tx_one -- thread t's transaction n, begun at tick begin */
static void
tx_one(uint64_t t, uint64_t n, uint64_t begin)
{
	struct thr *th = &Root->thr[t];
	TX_BEGIN(Pop) {
		uint64_t len = rec_len(t, n);
		TOID(struct rec) r = TX_ALLOC(struct rec,
			sizeof(struct rec) + len);
		struct rec *p = D_RW(r);
		p->t = t;
		p->n = n;
		p->begin = begin;
		p->len = len;
		p->next = th->head;
		for (uint64_t i = 0; i < len; i++)
			p->data[i] = byte(t, n, i);
		TX_ADD_DIRECT(th);
		th->count = n;
		th->head = r;
	} TX_ONABORT {
		fail("thread %" PRIu64 ": transaction %" PRIu64 " aborted: "
			"%s", t, n, pmemobj_errormsg());
	} TX_END
}

/* log_path -- DIR/tx.t */
static void
log_path(char *buf, size_t sz, uint64_t t)
{
	snprintf(buf, sz, "%s/tx.%" PRIu64, Dir, t);
}

/* runner -- one thread's transactions, until the process is killed */
static void *
runner(void *arg)
{
	uint64_t t = (uintptr_t)arg;
	char path[4096];
	log_path(path, sizeof(path), t);
	FILE *log = fopen(path, "a");
	if (!log)
		fail("%s: %s", path, strerror(errno));
	setvbuf(log, NULL, _IONBF, 0);	/* one write() a line */
	for (uint64_t n = Root->thr[t].count + 1;; n++) {
		uint64_t begin = atomic_fetch_add(&Tick, 1);
		tx_one(t, n, begin);
		uint64_t end = atomic_fetch_add(&Tick, 1);
		if (fprintf(log, "%" PRIu64 " %" PRIu64 " %" PRIu64 "\n", n,
				begin, end) < 0)
			fail("%s: %s", path, strerror(errno));
	}
	return NULL;
}

/* walk -- thread t's list whole, 1..count; the latest one's begin tick
 * (0 when none) */
static uint64_t
walk(uint64_t t)
{
	const struct thr *th = &Root->thr[t];
	TOID(struct rec) r = th->head;
	uint64_t latest = 0;
	for (uint64_t n = th->count; n > 0; n--) {
		const struct rec *p = D_RO(r);
		if (p == NULL || p->t != t || p->n != n ||
				p->len != rec_len(t, n))
			fail("thread %" PRIu64 ": record %" PRIu64 " missing "
				"or wrong", t, n);
		for (uint64_t i = 0; i < p->len; i++)
			if (p->data[i] != byte(t, n, i))
				fail("thread %" PRIu64 ": record %" PRIu64
					" byte %" PRIu64, t, n, i);
		if (n == th->count)
			latest = p->begin;
		r = p->next;
	}
	if (!TOID_IS_NULL(r))
		fail("thread %" PRIu64 ": more records than its count", t);
	return latest;
}

/* check -- the oracle (see the top of the file) */
static void
check(uint64_t bound)
{
	uint64_t latest = 0, whole = 0;
	unsigned threads = 0;
	for (uint64_t t = 0; t < THREADS_MAX; t++) {
		uint64_t b = walk(t);
		latest = b > latest ? b : latest;
		whole += Root->thr[t].count;
	}
	uint64_t logged = 0, lost = 0, lost_bytes = 0;
	for (uint64_t t = 0; t < THREADS_MAX; t++) {
		char path[4096];
		log_path(path, sizeof(path), t);
		FILE *log = fopen(path, "r");
		if (!log)
			continue;
		threads++;
		uint64_t n, begin, end, last = 0;
		while (fscanf(log, "%" SCNu64 " %" SCNu64 " %" SCNu64, &n,
				&begin, &end) == 3) {
			if (n != last + 1 && last)
				fail("%s: %" PRIu64 " after %" PRIu64, path, n,
					last);
			last = n;
			logged++;
			if (n <= Root->thr[t].count)
				continue;
			if (end < latest)
				fail("a hole: thread %" PRIu64 "'s transaction "
					"%" PRIu64 " returned (tick %" PRIu64
					") before the latest one on the copy "
					"began (tick %" PRIu64 "), and the copy "
					"lacks it", t, n, end, latest);
			lost++;
			lost_bytes += rec_len(t, n);
		}
		fclose(log);
	}
	printf("replica: %" PRIu64 " transactions of %u threads, all whole; "
		"%" PRIu64 " logged as committed, %" PRIu64 " of them lost "
		"(%" PRIu64 " bytes of records, bound %" PRIu64 ")\n", whole,
		threads, logged, lost, lost_bytes, bound);
	if (lost_bytes > bound)
		fail("the copy lacks %" PRIu64 " bytes of returned records, "
			"more than the bound %" PRIu64, lost_bytes, bound);
}

/* open_pool -- pmemobj_open and the root */
static void
open_pool(void)
{
	Pop = pmemobj_open(Set, POBJ_LAYOUT_NAME(txmt));
	if (!Pop)
		fail("pmemobj_open: %s", pmemobj_errormsg());
	Root = D_RW(POBJ_ROOT(Pop, struct root));
	if (Root->magic != MAGIC)
		fail("not a pool of txmt");
}

/* main -- see the top of the file */
int
main(int argc, char *argv[])
{
	if (argc < 3) {
		fprintf(stderr, "usage: txmt create SET | run SET DIR THREADS "
			"| check SET DIR BOUND\n");
		return 1;
	}
	const char *cmd = argv[1];
	Set = argv[2];
	if (strcmp(cmd, "create") == 0 && argc == 3) {
		Pop = pmemobj_create(Set, POBJ_LAYOUT_NAME(txmt), 0, 0600);
		if (!Pop)
			fail("pmemobj_create: %s", pmemobj_errormsg());
		Root = D_RW(POBJ_ROOT(Pop, struct root));
		uint64_t magic = MAGIC;
		pmemobj_memcpy_persist(Pop, &Root->magic, &magic,
			sizeof(magic));
	} else if (strcmp(cmd, "run") == 0 && argc == 5) {
		Dir = argv[3];
		unsigned n = (unsigned)atoi(argv[4]);
		if (n < 1 || n > THREADS_MAX)
			fail("THREADS: 1 to %d", THREADS_MAX);
		open_pool();
		pthread_t th[THREADS_MAX];
		for (unsigned t = 0; t < n; t++)
			if (pthread_create(&th[t], NULL, runner,
					(void *)(uintptr_t)t))
				fail("pthread_create");
		for (unsigned t = 0; t < n; t++)
			pthread_join(th[t], NULL);
	} else if (strcmp(cmd, "check") == 0 && argc == 5) {
		Dir = argv[3];
		open_pool();
		check(strtoull(argv[4], NULL, 10));
	} else {
		fail("unknown command or wrong operands: %s", cmd);
	}
	pmemobj_close(Pop);
	return 0;
}
