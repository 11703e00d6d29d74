/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * txlog.c -- a libpmemobj application that logs every transaction it saw
 * committed, and the check that a pool holds all of them (scenario F1)
 *
 * Usage:
 *   txlog create SET          create the pool (layout "failover")
 *   txlog run SET LOG [N]     open it, run N transactions (0 or none: until
 *                             killed, or until the file TXLOG_STOP names
 *                             exists), appending "n\n" to LOG after each
 *                             commit returns; TXLOG_PAUSE_US between two
 *                             (an application that does other work too);
 *                             none while the file TXLOG_HOLD names exists
 *                             (the pool stays open, idle: it says so by
 *                             making the file TXLOG_HOLD.held)
 *   txlog check SET LOG       open it: every transaction LOG names is in
 *                             it (at most the one in flight more), and
 *                             every one is whole: the count, the sum, the
 *                             slots and the records agree
 *   txlog open SET            open and close it (exit 0 when it opens)
 *
 * Built against Debian's libpmemobj only (and libtu's tu_die); REPLICA
 * lines make libpmemobj dlopen librpmem.so.1.  Exit status 0 or 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libpmemobj.h>

#include "tu.h"

#define NSLOTS 64
#define MAGIC 0x54584c4f47763031ULL	/* "TXLOGv01" */

TU_POBJ_LAYOUT(failover, root, rec);

struct rec {
	uint64_t n;
	uint64_t len;			/* of data */
	TOID(struct rec) next;		/* transaction n - 1 */
	unsigned char data[];		/* (n * 7 + i) & 0xff */
};

struct root {
	uint64_t magic;
	uint64_t count;			/* transactions committed */
	uint64_t sum;			/* 1 + 2 + ... + count */
	uint64_t slot[NSLOTS];		/* slot[n % NSLOTS] = mix(n) */
	TOID(struct rec) head;		/* transaction count */
};

static const char *Set;

/* fail -- "txlog: SET: message" and exit 1 */
#define fail(...) tu_die("txlog", Set, __VA_ARGS__)

/* mix -- a value per transaction */
static uint64_t
mix(uint64_t x)
{
	x ^= x >> 31;
	x *= 0x7fb5d329728ea185ULL;
	return x ^ (x >> 27);
}

/* rec_len -- data bytes of record n: 16 .. 1039 */
static uint64_t
rec_len(uint64_t n)
{
	return 16 + mix(n) % 1024;
}

/* tx_one -- transaction n: a record, the root's fields */
static void
tx_one(PMEMobjpool *pop, struct root *rp, uint64_t n)
{
	TX_BEGIN(pop) {
		uint64_t len = rec_len(n);
		TOID(struct rec) r = TX_ALLOC(struct rec,
			sizeof(struct rec) + len);
		struct rec *p = D_RW(r);
		p->n = n;
		p->len = len;
		p->next = rp->head;
		for (uint64_t i = 0; i < len; i++)
			p->data[i] = (unsigned char)((n * 7 + i) & 0xff);
		TX_ADD_DIRECT(&rp->count);
		TX_ADD_DIRECT(&rp->sum);
		TX_ADD_DIRECT(&rp->slot[n % NSLOTS]);
		TX_ADD_DIRECT(&rp->head);
		rp->count = n;
		rp->sum += n;
		rp->slot[n % NSLOTS] = mix(n);
		rp->head = r;
	} TX_ONABORT {
		fail("transaction %" PRIu64 " aborted: %s", n,
			pmemobj_errormsg());
	} TX_END
}

/* last_logged -- the last number of LOG, 0 when empty */
static uint64_t
last_logged(const char *log)
{
	FILE *f = fopen(log, "r");
	if (!f)
		fail("%s: %s", log, strerror(errno));
	uint64_t n, last = 0;
	while (fscanf(f, "%" SCNu64, &n) == 1) {
		/* a gap is the one in flight at a failover, committed
		 * but never logged */
		if (n <= last || n > last + 2)
			fail("%s: %" PRIu64 " after %" PRIu64, log, n, last);
		last = n;
	}
	fclose(f);
	return last;
}

/* check -- every logged transaction there, each one whole */
static void
check(const struct root *rp, uint64_t logged)
{
	uint64_t c = rp->count;
	if (c < logged || c > logged + 1)
		fail("%" PRIu64 " transactions in the pool, %" PRIu64
			" logged as committed", c, logged);
	if (rp->sum != c * (c + 1) / 2)
		fail("sum %" PRIu64 " for %" PRIu64 " transactions", rp->sum,
			c);
	for (uint64_t s = 0; s < NSLOTS; s++) {
		uint64_t n = c < s ? 0 : c - (c - s) % NSLOTS;
		uint64_t want = n && n % NSLOTS == s ? mix(n) : 0;
		if (rp->slot[s] != want)
			fail("slot %" PRIu64 " is %#" PRIx64 ", %#" PRIx64
				" expected", s, rp->slot[s], want);
	}
	TOID(struct rec) r = rp->head;
	for (uint64_t n = c; n > 0; n--) {
		const struct rec *p = D_RO(r);
		if (p == NULL || p->n != n || p->len != rec_len(n))
			fail("record of transaction %" PRIu64 " missing or "
				"wrong", n);
		for (uint64_t i = 0; i < p->len; i++)
			if (p->data[i] != ((n * 7 + i) & 0xff))
				fail("record %" PRIu64 " byte %" PRIu64, n, i);
		r = p->next;
	}
	if (!TOID_IS_NULL(r))
		fail("more records than transactions");
	printf("txlog: %s: %" PRIu64 " transactions, all whole; %" PRIu64
		" logged as committed\n", Set, c, logged);
}

/* held -- make the file HOLD.held: no transaction until HOLD goes */
static void
held(const char *hold)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s.held", hold);
	int fd = open(path, O_WRONLY | O_CREAT, 0644);
	if (fd < 0)
		fail("%s: %s", path, strerror(errno));
	close(fd);
}

/* open_pool -- pmemobj_open and the root */
static PMEMobjpool *
open_pool(struct root **rpp)
{
	PMEMobjpool *pop = pmemobj_open(Set, POBJ_LAYOUT_NAME(failover));
	if (!pop)
		fail("pmemobj_open: %s", pmemobj_errormsg());
	*rpp = D_RW(POBJ_ROOT(pop, struct root));
	if ((*rpp)->magic != MAGIC)
		fail("not a pool of txlog");
	return pop;
}

/* main -- see the top of the file */
int
main(int argc, char *argv[])
{
	if (!tu_usage(argc >= 3, "txlog create|run|check|open SET [LOG [N]]"))
		return 1;
	const char *cmd = argv[1];
	Set = argv[2];
	struct root *rp;
	PMEMobjpool *pop;

	if (strcmp(cmd, "create") == 0) {
		pop = pmemobj_create(Set, POBJ_LAYOUT_NAME(failover), 0, 0600);
		if (!pop)
			fail("pmemobj_create: %s", pmemobj_errormsg());
		rp = D_RW(POBJ_ROOT(pop, struct root));
		TX_BEGIN(pop) {
			TX_ADD_DIRECT(&rp->magic);
			rp->magic = MAGIC;
		} TX_END
	} else if (strcmp(cmd, "run") == 0 && argc >= 4) {
		uint64_t n = argc > 4 ? strtoull(argv[4], NULL, 10) : 0;
		int log = open(argv[3], O_WRONLY | O_APPEND | O_CREAT, 0644);
		if (log < 0)
			fail("%s: %s", argv[3], strerror(errno));
		const char *stop = getenv("TXLOG_STOP");
		const char *hold = getenv("TXLOG_HOLD");
		struct timespec idle = { 0, 10000000 };
		const char *pause = getenv("TXLOG_PAUSE_US");
		long us = pause ? atol(pause) : 0;
		struct timespec ts = { us / 1000000, us % 1000000 * 1000 };
		pop = open_pool(&rp);
		for (uint64_t i = 0; n == 0 || i < n; i++) {
			if (hold && access(hold, F_OK) == 0)
				held(hold);
			while (hold && access(hold, F_OK) == 0 &&
					!(stop && access(stop, F_OK) == 0))
				nanosleep(&idle, NULL);
			if (stop && access(stop, F_OK) == 0)
				break;
			if (us > 0)
				nanosleep(&ts, NULL);
			uint64_t t = rp->count + 1;
			tx_one(pop, rp, t);
			if (dprintf(log, "%" PRIu64 "\n", t) < 0)
				fail("%s: %s", argv[3], strerror(errno));
		}
		close(log);
	} else if (strcmp(cmd, "check") == 0 && argc == 4) {
		uint64_t logged = last_logged(argv[3]);
		pop = open_pool(&rp);
		check(rp, logged);
	} else if (strcmp(cmd, "open") == 0) {
		pop = open_pool(&rp);
	} else {
		fail("unknown command or missing operand: %s", cmd);
	}
	pmemobj_close(pop);
	return 0;
}
