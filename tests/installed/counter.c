/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * counter.c -- transactions on a pool `pmempool create obj` made, built
 * against Debian's libpmemobj alone (no header or library of this tree)
 *
 * Usage:
 *   counter add SET N       open SET (layout "installed"), run N more
 *                           transactions, each of which allocates one
 *                           record, links it in front of the list and
 *                           counts it in the root
 *   counter verify SET N    open SET, check that exactly N transactions
 *                           are in it: the count, the sum of 1..N and
 *                           every record, newest first
 *
 * libpmemobj dlopen()s librpmem.so.1 for the REPLICA lines of SET and
 * replicates every persist; a failing rpmem call makes it abort, so a
 * caller must take a signal as a failure.  Exit status 0 or 1.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpmemobj.h>

#define LAYOUT "installed"
#define PAYLOAD 200

POBJ_LAYOUT_BEGIN(installed);
POBJ_LAYOUT_ROOT(installed, struct root);
POBJ_LAYOUT_TOID(installed, struct record);
POBJ_LAYOUT_END(installed);

struct record {
	uint64_t n;			/* its transaction, 1-based */
	TOID(struct record) next;	/* the one before it */
	unsigned char payload[PAYLOAD];	/* (n + i) & 0xff */
};

struct root {
	uint64_t count;
	uint64_t sum;			/* 1 + 2 + ... + count */
	TOID(struct record) head;	/* newest record */
};

/* die -- print why and exit 1 */
static void
die(const char *what, const char *why)
{
	fprintf(stderr, "counter: %s: %s\n", what, why);
	exit(1);
}

/* add_one -- one transaction: a new record, linked and counted */
static void
add_one(PMEMobjpool *pop)
{
	TX_BEGIN(pop) {
		TOID(struct root) root = POBJ_ROOT(pop, struct root);
		TX_ADD(root);
		struct root *r = D_RW(root);
		TOID(struct record) rec = TX_ZNEW(struct record);
		struct record *p = D_RW(rec);
		p->n = r->count + 1;
		p->next = r->head;
		for (size_t b = 0; b < PAYLOAD; b++)
			p->payload[b] = (unsigned char)(p->n + b);
		r->head = rec;
		r->count = p->n;
		r->sum += p->n;
	} TX_ONABORT {
		die("transaction aborted", pmemobj_errormsg());
	} TX_END
}

/* verify -- exactly `n` transactions, each record intact; 0 or 1 */
static int
verify(TOID(struct root) root, uint64_t n)
{
	const struct root *r = D_RO(root);
	if (r->count != n || r->sum != n * (n + 1) / 2) {
		fprintf(stderr, "counter: count %" PRIu64 " sum %" PRIu64
			", expected %" PRIu64 " and %" PRIu64 "\n", r->count,
			r->sum, n, n * (n + 1) / 2);
		return 1;
	}
	TOID(struct record) rec = r->head;
	for (uint64_t want = n; want > 0; want--) {
		const struct record *p = D_RO(rec);
		if (p == NULL || p->n != want) {
			fprintf(stderr, "counter: record %" PRIu64 " missing "
				"or out of order\n", want);
			return 1;
		}
		for (size_t b = 0; b < PAYLOAD; b++) {
			if (p->payload[b] != (unsigned char)(want + b)) {
				fprintf(stderr, "counter: record %" PRIu64
					" damaged at byte %zu\n", want, b);
				return 1;
			}
		}
		rec = p->next;
	}
	if (!TOID_IS_NULL(rec)) {
		fprintf(stderr, "counter: records beyond %" PRIu64 "\n", n);
		return 1;
	}
	return 0;
}

int
main(int argc, char *argv[])
{
	if (argc != 4 || (strcmp(argv[1], "add") && strcmp(argv[1], "verify")))
		die("usage", "counter add|verify SET N");
	char *end;
	errno = 0;
	uint64_t n = strtoull(argv[3], &end, 10);
	if (errno || *end || argv[3][0] == '-')
		die("N", argv[3]);

	PMEMobjpool *pop = pmemobj_open(argv[2], LAYOUT);
	if (!pop)
		die(argv[2], pmemobj_errormsg());
	TOID(struct root) root = POBJ_ROOT(pop, struct root);
	int ret = 0;
	if (argv[1][0] == 'a') {
		for (uint64_t i = 0; i < n; i++)
			add_one(pop);
		printf("counter: %" PRIu64 " transactions, %" PRIu64
			" in all\n", n, D_RO(root)->count);
	} else {
		ret = verify(root, n);
		if (ret == 0)
			printf("counter: all %" PRIu64 " transactions there\n",
				n);
	}
	pmemobj_close(pop);
	return ret;
}
