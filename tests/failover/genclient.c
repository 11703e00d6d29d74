/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * genclient.c -- a librpmem master whose memory is a file, for the tests
 * that stage the faults around a reconnect (tests/failover/gens.sh:
 * scenarios D7-D11)
 *
 * Usage: genclient TARGET SET SIZE FILE CMD [ARG...]
 *   FILE is the master's copy: SIZE bytes mapped shared (made when it is
 *   missing), so that what this process stores survives its SIGKILL, as
 *   a libpmemobj pool's part file does.  The pool has headers (test
 *   attributes): offsets below 4096 are never written.
 *
 *   create                 rpmem_create, every byte from 4096 on set
 *                          to pattern 0 and persisted, rpmem_close
 *   write SEED OFF LEN [DIR]
 *                          rpmem_open, pattern SEED into [OFF, OFF+LEN)
 *                          in persists of at most 1 MiB; with DIR, they
 *                          wait while DIR/hold exists, then DIR/acked
 *                          is made and the handle stays open until
 *                          DIR/stop exists; rpmem_close
 *   loop SEED OFF LEN DIR  rpmem_open, then 64 KiB persists one after
 *                          the other through [OFF, OFF+LEN), round and
 *                          round, each a new pattern; the first one
 *                          acknowledged once DIR/frozen exists is
 *                          named in DIR/acked ("OFFSET\n"), then the
 *                          handle stays open until DIR/stop exists
 *   soak SEED DIR          rpmem_open, then persists of 8 B to 256 KiB at
 *                          random places past 4 KiB, each with a pattern
 *                          of its own (SEED and its number), its number,
 *                          offset and length appended to DIR/acks once it
 *                          returned, until DIR/stop exists; rpmem_close.
 *                          A persist that fails ends it (status 3).
 *   acked SEED ACKS N PART the first N persists of ACKS (all: N = -1) as
 *                          the last one to write each 8-byte word left
 *                          it: every such word of the part file PART (a
 *                          replica, headers at 0) holds it, or what a
 *                          later one (or the one in flight after the
 *                          last) put there; prints the first that does
 *                          not, exit 1
 *   prefix SEED ACKS PART LAG
 *                          an async replica after its master was
 *                          killed mid-soak: the part file PART is the
 *                          image of the first N persists of ACKS, the
 *                          persist after them possibly in part (the one
 *                          in flight, not in ACKS, counts as the last),
 *                          and the acknowledged ones it lacks hold at
 *                          most LAG bytes; prints N and the lag, exit 1
 *                          on a hole, a torn word or a longer lag
 *   mtsoak SEED THREADS DIR
 *                          rpmem_open with THREADS lanes, then THREADS
 *                          threads of persists, each on its lane, until
 *                          DIR/stop exists (gc_mt.c: their ranges
 *                          overlap, each held while it is written and
 *                          persisted, its start and end logged in
 *                          DIR/ops.T); rpmem_close.  Status 3 when a
 *                          persist fails.
 *   order SEED DIR PART LAG
 *                          an async replica after its master was
 *                          killed mid-mtsoak: the part file PART holds
 *                          no torn word, every persist that returned
 *                          before the latest it holds began is whole
 *                          there (but where a later one wrote), and the
 *                          returned ones it lacks hold at most LAG
 *                          bytes; exit 1 otherwise
 *   crash SEED OFF LEN     rpmem_open, pattern SEED stored into the
 *                          range and never persisted, then SIGKILL:
 *                          a master host lost between its local and its
 *                          remote persist
 *   open                   rpmem_open, rpmem_close
 *   unmap DIR              rpmem_open; at DIR/unmap the master's memory
 *                          is unmapped (DIR/unmapped then made), at
 *                          DIR/stop rpmem_close: libpmemobj's order at
 *                          pmemobj_close, while a resync may still run
 *
 * Prints what it did; "open failed: ERRNO-NAME: MESSAGE" on stderr when
 * rpmem_open fails.  Exit 0, 2 when rpmem_open failed, 1 otherwise.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <librpmem.h>

#include "gc.h"
#include "tu.h"

#define LOOP_PIECE ((size_t)64 << 10)

const char *Target, *Set;
size_t Size;
unsigned char *Pool;

/* attrs -- the test attributes: a header rpmem promote accepts */
static void
attrs(struct rpmem_pool_attr *a)
{
	memset(a, 0, sizeof(*a));
	memcpy(a->signature, "GENTEST", 7);
	a->major = 1;
	for (unsigned i = 0; i < RPMEM_POOL_HDR_UUID_LEN; i++) {
		a->poolset_uuid[i] = (unsigned char)(0x10 + i);
		a->uuid[i] = (unsigned char)(0x20 + i);
		/* the replica links: the master's part 0 */
		a->prev_uuid[i] = a->next_uuid[i] = (unsigned char)(0x30 + i);
	}
}

/* cmd_create -- a new pool, every byte of it replicated */
static int
cmd_create(void)
{
	struct rpmem_pool_attr a;
	attrs(&a);
	unsigned nlanes = 4;
	RPMEMpool *rpp = rpmem_create(Target, Set, Pool, Size, &nlanes, &a);
	if (!rpp) {
		fprintf(stderr, "genclient: create: %s\n", rpmem_errormsg());
		return 1;
	}
	pattern(0, HDR, Size - HDR);
	if (persist(rpp, HDR, Size - HDR))
		return 1;
	printf("created\n");
	return close_pool(rpp);
}

/*
 * said_then_close -- what was printed goes out; with a DIR, DIR/`file`
 * tells the script, which writes DIR/stop when the pool may close
 */
static int
said_then_close(RPMEMpool *rpp, const char *dir, const char *file)
{
	fflush(stdout);
	if (dir) {
		touch(dir, file);
		wait_file(dir, "stop");
	}
	return close_pool(rpp);
}

/* cmd_write -- open, persist a pattern, maybe hold, close */
static int
cmd_write(uint64_t seed, size_t off, size_t len, const char *dir)
{
	RPMEMpool *rpp = open_pool();
	if (!rpp)
		return EXIT_OPEN;
	if (dir)
		wait_gone(dir, "hold");
	long long t0 = tu_now_ms();
	pattern(seed, off, len);
	if (persist(rpp, off, len))
		return 1;
	printf("acked %zu bytes at %zu in %lld ms, the longest persist "
		"%lld ms\n", len, off, tu_now_ms() - t0,
		Persist_max_us / 1000);
	return said_then_close(rpp, dir, "acked");
}

/*
 * cmd_unmap -- the master's memory unmapped before rpmem_close, as
 * libpmemobj's close does it, whatever the handle is still doing
 */
static int
cmd_unmap(const char *dir)
{
	RPMEMpool *rpp = open_pool();
	if (!rpp)
		return EXIT_OPEN;
	wait_file(dir, "unmap");
	if (munmap(Pool, Size)) {
		fprintf(stderr, "genclient: munmap: %s\n", strerror(errno));
		return 1;
	}
	Pool = NULL;
	printf("unmapped\n");
	return said_then_close(rpp, dir, "unmapped");
}

/* cmd_loop -- persists until one is acknowledged after DIR/frozen */
static int
cmd_loop(uint64_t seed, size_t off, size_t len, const char *dir)
{
	RPMEMpool *rpp = open_pool();
	if (!rpp)
		return EXIT_OPEN;
	char frozen[PATH_MAX];
	snprintf(frozen, sizeof(frozen), "%s/frozen", dir);
	for (uint64_t i = 0; ; i++) {
		size_t o = off + (size_t)(i * LOOP_PIECE % len);
		size_t n = off + len - o < LOOP_PIECE ? off + len - o :
			LOOP_PIECE;
		bool after = access(frozen, F_OK) == 0;
		pattern(seed + i, o, n);
		if (persist(rpp, o, n))
			return 1;
		if (!after && access(frozen, F_OK))
			continue;
		char p[PATH_MAX];
		snprintf(p, sizeof(p), "%s/acked", dir);
		FILE *f = fopen(p, "w");
		if (!f || fprintf(f, "%zu %zu\n", o, n) < 0 || fclose(f)) {
			fprintf(stderr, "genclient: %s: %s\n", p,
				strerror(errno));
			return 1;
		}
		printf("acked %zu bytes at %zu after the freeze\n", n, o);
		fflush(stdout);
		break;
	}
	wait_file(dir, "stop");
	return close_pool(rpp);
}

/* cmd_crash -- stored here, never sent, and the host is gone */
static int
cmd_crash(uint64_t seed, size_t off, size_t len)
{
	RPMEMpool *rpp = open_pool();
	if (!rpp)
		return EXIT_OPEN;
	pattern(seed, off, len);
	printf("stored %zu bytes at %zu; crashing\n", len, off);
	fflush(stdout);
	raise(SIGKILL);
	return 1;
}

int
main(int argc, char *argv[])
{
	if (!tu_usage(argc >= 6, "genclient TARGET SET SIZE FILE CMD [ARG...]"))
		return 1;
	Target = argv[1];
	Set = argv[2];
	Size = strtoull(argv[3], NULL, 0);
	const char *cmd = argv[5];
	if (Size < 2 * HDR || Size % HDR || map(argv[4]))
		return 1;
	uint64_t seed = argc > 6 ? strtoull(argv[6], NULL, 0) : 0;
	size_t off = argc > 7 ? strtoull(argv[7], NULL, 0) : 0;
	size_t len = argc > 8 ? strtoull(argv[8], NULL, 0) : 0;
	bool ranged = argc > 8 && off >= HDR && len && off < Size &&
		len <= Size - off;
	if (strcmp(cmd, "create") == 0 && argc == 6)
		return cmd_create();
	if (strcmp(cmd, "open") == 0 && argc == 6) {
		RPMEMpool *rpp = open_pool();
		return rpp ? close_pool(rpp) : EXIT_OPEN;
	}
	if (strcmp(cmd, "unmap") == 0 && argc == 7)
		return cmd_unmap(argv[6]);
	if (strcmp(cmd, "write") == 0 && ranged && argc <= 10)
		return cmd_write(seed, off, len, argc == 10 ? argv[9] : NULL);
	if (strcmp(cmd, "loop") == 0 && ranged && argc == 10)
		return cmd_loop(seed, off, len, argv[9]);
	if (strcmp(cmd, "crash") == 0 && ranged && argc == 9)
		return cmd_crash(seed, off, len);
	if (strcmp(cmd, "soak") == 0 && argc == 8)
		return cmd_soak(seed, argv[7]);
	if (strcmp(cmd, "prefix") == 0 && argc == 10)
		return cmd_prefix(seed, argv[7], argv[8],
			strtoull(argv[9], NULL, 0));
	if (strcmp(cmd, "mtsoak") == 0 && argc == 9)
		return cmd_mtsoak(seed, (unsigned)strtoul(argv[7], NULL, 0),
			argv[8]);
	if (strcmp(cmd, "order") == 0 && argc == 10)
		return cmd_order(seed, argv[7], argv[8],
			strtoull(argv[9], NULL, 0));
	if (strcmp(cmd, "acked") == 0 && argc == 10)
		return cmd_acked(seed, argv[7], strtoll(argv[8], NULL, 10),
			argv[9]);
	fprintf(stderr, "genclient: bad command or range: %s\n", cmd);
	return 1;
}
