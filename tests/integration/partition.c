/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * partition.c -- scenario R4: the network path to the target is cut
 * while a pool is open, then healed
 *
 * A persist while the link is down fails within RPMEM_TIMEOUT plus a
 * margin (ETIMEDOUT or ECONNRESET) and never reports success; later
 * calls fail at once; rpmem_close returns; once the link is back the
 * pool can be opened again (the old rpmemd lets go of it) and holds every
 * acknowledged byte.
 *
 * partition.sh runs it with RPMEM_TIMEOUT set and these variables:
 *   R4_TARGET, R4_SET      target and descriptor of the pool
 *   R4_CUT, R4_HEAL        shell commands taking the link down and up
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "librpmem.h"
#include "tu.h"

#define POOL_SIZE ((size_t)8 << 20)
#define DATA_OFF 4096
#define DATA_LEN 65536

/* the program, in its messages */
static const char PROG[] = "partition";

/* run -- a shell command that must succeed */
static void
run(const char *cmd)
{
	if (system(cmd) != 0) {
		fprintf(stderr, "partition: '%s' failed\n", cmd);
		exit(2);
	}
}

int
main(void)
{
	const char *target = tu_need_or_exit(PROG, "R4_TARGET");
	const char *set = tu_need_or_exit(PROG, "R4_SET");
	long long bound = atoll(tu_need_or_exit(PROG, "RPMEM_TIMEOUT")) * 1000 +
		3000;
	char *pool = mmap(NULL, POOL_SIZE, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pool == MAP_FAILED)
		return 2;

	struct rpmem_pool_attr attr = { .signature = "R4TEST", .major = 1,
		.uuid = { 4 } };
	unsigned nlanes = 2;
	RPMEMpool *rpp = rpmem_create(target, set, pool, POOL_SIZE, &nlanes,
		&attr);
	if (!rpp) {
		fprintf(stderr, "partition: create: %s\n", rpmem_errormsg());
		return 1;
	}
	memset(pool + DATA_OFF, 0x5a, DATA_LEN);
	TU_EXPECT(rpmem_persist(rpp, DATA_OFF, DATA_LEN, 0, 0) == 0,
		"persist before the cut: %s", rpmem_errormsg());

	run(tu_need_or_exit(PROG, "R4_CUT"));
	memset(pool + DATA_OFF + DATA_LEN, 0xa5, DATA_LEN);
	long long t0 = tu_now_ms();
	int r = rpmem_persist(rpp, DATA_OFF + DATA_LEN, DATA_LEN, 0, 0);
	int err = errno;
	long long dt = tu_now_ms() - t0;
	printf("partition: persist across the cut: %d (%s) after %lld ms\n",
		r, r ? strerror(err) : "acked", dt);
	TU_EXPECT(r == -1, "a persist across a cut link was acknowledged");
	TU_EXPECT(err == ETIMEDOUT || err == ECONNRESET, "errno %s",
		strerror(err));
	TU_EXPECT(dt < bound, "failed after %lld ms, bound %lld", dt, bound);

	t0 = tu_now_ms();
	r = rpmem_persist(rpp, DATA_OFF, 8, 1, 0);
	TU_EXPECT(r == -1 && errno == ECONNRESET && tu_now_ms() - t0 < 1000,
		"a later call: %d, %s, %lld ms", r, strerror(errno),
		tu_now_ms() - t0);
	t0 = tu_now_ms();
	(void) rpmem_close(rpp);
	TU_EXPECT(tu_now_ms() - t0 < bound, "close took %lld ms",
		tu_now_ms() - t0);

	run(tu_need_or_exit(PROG, "R4_HEAL"));
	/* the old session ends once the link carries its FINs again */
	t0 = tu_now_ms();
	rpp = NULL;
	while (!rpp && tu_now_ms() - t0 < 60000) {
		nlanes = 2;
		rpp = rpmem_open(target, set, pool, POOL_SIZE, &nlanes, &attr);
		if (!rpp && errno != EBUSY && errno != ECONNRESET &&
				errno != ETIMEDOUT) {
			TU_EXPECT(0, "reopen after the heal: %s",
				rpmem_errormsg());
			break;
		}
	}
	printf("partition: reopened %lld ms after the heal\n",
		tu_now_ms() - t0);
	TU_EXPECT(rpp != NULL, "no reopen within 60 s: %s", rpmem_errormsg());
	if (rpp) {
		static char back[DATA_LEN];
		TU_EXPECT(rpmem_read(rpp, back, DATA_OFF, DATA_LEN, 0) == 0,
			"read: %s", rpmem_errormsg());
		for (size_t i = 0; i < DATA_LEN; i++) {
			if (back[i] != 0x5a) {
				TU_EXPECT(0, "acked byte %zu lost", i);
				break;
			}
		}
		TU_EXPECT(rpmem_close(rpp) == 0, "close: %s", rpmem_errormsg());
	}
	printf("partition: %s\n", tu_failures ? "FAILED" : "passed");
	return tu_failures ? 1 : 0;
}
