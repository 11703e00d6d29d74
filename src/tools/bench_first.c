/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_first.c -- rpmem bench: the first pass over a fresh replica
 *
 * The replica is removed and created again with the attributes it had
 * when the bench began, then its whole data area is persisted twice,
 * strict, 1 MiB at a time on lane 0: the first pass pays for every page
 * the target has not touched yet, the second is the steady state over
 * the same bytes.  The replica ends as the master's data area under its
 * old header, as the rest of the bench leaves it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "db_pool.h"
#include "poolset.h"

/* pass -- MiB/s of one strict pass over the data area on lane 0 */
static int
pass(struct bench *b, RPMEMpool *rpp, double *mibs)
{
	uint64_t t0 = rawfab_now_ns();
	for (size_t off = DATA_OFF; off < b->size; off += MAX_SIZE) {
		size_t len = b->size - off < MAX_SIZE ? b->size - off :
			MAX_SIZE;
		if (rpmem_persist(rpp, off, len, 0, 0))
			return bench_fail("first-pass persist");
	}
	uint64_t ns = rawfab_now_ns() - t0;
	*mibs = (double)(b->size - DATA_OFF) / MIB / ((double)ns / 1e9);
	return 0;
}

/* bench_first_pass -- recreate the replica, then two passes (bench.h) */
int
bench_first_pass(struct bench *b)
{
	const char *target = b->rep->target, *desc = b->rep->desc;
	unsigned lanes = 1;
	setenv("RPMEM_LANE_SECURITY", "none", 1);
	fprintf(stderr, "rpmem bench: warning: removing and creating "
		"replica %u (%s %s) again for the first-pass figure\n",
		b->rep_idx, target, desc);
	/* bench_obj may have removed it and failed to create it */
	if (rpmem_remove(target, desc, 0) && errno != ENOENT)
		return bench_fail("removing the remote replica");
	RPMEMpool *rpp = rpmem_create(target, desc, b->pool->addr, b->size,
		&lanes, &b->attr);
	if (!rpp) {
		fprintf(stderr, "rpmem bench: the replica is gone: `rpmem "
			"sync %s` makes it again\n", b->path);
		return bench_fail("creating the remote replica");
	}
	int r = pass(b, rpp, &b->first.first) ||
		pass(b, rpp, &b->first.steady) ? -1 : 0;
	if (rpmem_close(rpp) && !r)
		r = bench_fail("closing the remote replica");
	b->first.measured = r == 0;
	return r;
}
