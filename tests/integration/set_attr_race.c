/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * set_attr_race.c -- the client of set_attr_race.sh, linked with our
 * librpmem and run with PMDK's through LD_LIBRARY_PATH
 *
 *   set_attr_race TARGET DESC loop ROUNDS   create DESC, then ROUNDS of
 *       rpmem_open, rpmem_set_attr at once, rpmem_close; prints how many
 *       rounds failed and the first failures; exit 0 when none did
 *   set_attr_race TARGET DESC vanish        rpmem_open, then _exit(0)
 *       without rpmem_close: the daemon sees its client go away
 *
 * The provider is librpmem's choice (RPMEM_ENABLE_SOCKETS=1: sockets).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "librpmem.h"

#define POOL_SIZE ((size_t)8 << 20)
#define NLANES 32
#define SHOWN 3

/* attr_make -- pool attributes that differ from round to round */
static void
attr_make(struct rpmem_pool_attr *attr, unsigned round)
{
	memset(attr, 0, sizeof(*attr));
	memcpy(attr->signature, "<RPMEM>", 8);
	attr->major = 1;
	for (unsigned i = 0; i < RPMEM_POOL_HDR_UUID_LEN; i++) {
		attr->poolset_uuid[i] = (unsigned char)(i + 1);
		attr->uuid[i] = (unsigned char)(i + round + 2);
		attr->next_uuid[i] = attr->prev_uuid[i] = attr->uuid[i];
	}
}

/* one_round -- open, set_attr, close; 0 or the errno of the step failed */
static int
one_round(const char *target, const char *desc, void *pool, unsigned round,
		const char **step)
{
	unsigned nlanes = NLANES;
	struct rpmem_pool_attr attr;
	*step = "rpmem_open";
	RPMEMpool *rpp = rpmem_open(target, desc, pool, POOL_SIZE, &nlanes,
		&attr);
	if (!rpp)
		return errno;
	attr_make(&attr, round);
	*step = "rpmem_set_attr";
	int err = rpmem_set_attr(rpp, &attr) ? errno : 0;
	if (rpmem_close(rpp) && !err) {
		*step = "rpmem_close";
		err = errno;
	}
	return err;
}

int
main(int argc, char *argv[])
{
	if (argc < 4 || (strcmp(argv[3], "loop") == 0 && argc != 5)) {
		fprintf(stderr, "usage: %s TARGET DESC loop ROUNDS | "
			"TARGET DESC vanish\n", argv[0]);
		return 2;
	}
	const char *target = argv[1], *desc = argv[2];
	void *pool = aligned_alloc(4096, POOL_SIZE);
	if (!pool)
		return 2;
	memset(pool, 0, POOL_SIZE);
	unsigned nlanes = NLANES;

	if (strcmp(argv[3], "vanish") == 0) {
		struct rpmem_pool_attr attr;
		if (!rpmem_open(target, desc, pool, POOL_SIZE, &nlanes,
				&attr)) {
			fprintf(stderr, "rpmem_open: %s\n", rpmem_errormsg());
			return 1;
		}
		_exit(0);
	}

	struct rpmem_pool_attr attr;
	attr_make(&attr, 0);
	RPMEMpool *rpp = rpmem_create(target, desc, pool, POOL_SIZE, &nlanes,
		&attr);
	if (!rpp || rpmem_close(rpp)) {
		fprintf(stderr, "creating %s: %s\n", desc, rpmem_errormsg());
		return 1;
	}
	unsigned rounds = (unsigned)strtoul(argv[4], NULL, 10), failed = 0;
	for (unsigned i = 1; i <= rounds; i++) {
		const char *step;
		int err = one_round(target, desc, pool, i, &step);
		if (!err)
			continue;
		if (++failed <= SHOWN)
			printf("round %u: %s: %s (%s)\n", i, step,
				strerror(err), rpmem_errormsg());
	}
	printf("%u of %u rounds failed\n", failed, rounds);
	free(pool);
	return failed ? 1 : 0;
}
