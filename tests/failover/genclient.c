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
 *                          in persists of at most 1 MiB; with DIR, then
 *                          DIR/acked is made and the handle stays open
 *                          until DIR/stop exists; rpmem_close
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
 *   crash SEED OFF LEN     rpmem_open, pattern SEED stored into the
 *                          range and never persisted, then SIGKILL:
 *                          a master host lost between its local and its
 *                          remote persist
 *   open                   rpmem_open, rpmem_close
 *
 * Prints what it did; "open failed: ERRNO-NAME: MESSAGE" on stderr when
 * rpmem_open fails.  Exit 0, 2 when rpmem_open failed, 1 otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <librpmem.h>

#include "tu.h"

#define HDR 4096
#define PIECE ((size_t)1 << 20)
#define EXIT_OPEN 2
#define LOOP_PIECE ((size_t)64 << 10)

static const char *Target, *Set;
static size_t Size;
static unsigned char *Pool;

/* now_us -- CLOCK_MONOTONIC in microseconds */
static long long
now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

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

/* map -- the master's memory: FILE, SIZE bytes, shared */
static int
map(const char *file)
{
	int fd = open(file, O_RDWR | O_CREAT, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)Size)) {
		fprintf(stderr, "genclient: %s: %s\n", file, strerror(errno));
		return -1;
	}
	Pool = mmap(NULL, Size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (Pool == MAP_FAILED) {
		fprintf(stderr, "genclient: mmap %s: %s\n", file,
			strerror(errno));
		return -1;
	}
	return 0;
}

/* word -- the 8 bytes pattern `seed` puts at offset `off` */
static uint64_t
word(uint64_t seed, size_t off)
{
	return tu_mix(seed * 0x9e3779b97f4a7c15ULL + off);
}

/* pattern -- pattern `seed` into [off, off + len) of the memory */
static void
pattern(uint64_t seed, size_t off, size_t len)
{
	for (size_t k = 0; k < len; k += 8) {
		uint64_t v = word(seed, off + k);
		memcpy(Pool + off + k, &v, len - k < 8 ? len - k : 8);
	}
}

/* persist -- [off, off + len) in pieces; 0 or -1 with the message */
static int
persist(RPMEMpool *rpp, size_t off, size_t len)
{
	for (size_t o = off; o < off + len; o += PIECE) {
		size_t n = off + len - o < PIECE ? off + len - o : PIECE;
		if (rpmem_persist(rpp, o, n, 0, 0)) {
			fprintf(stderr, "genclient: persist of %zu at %zu: "
				"%s\n", n, o, rpmem_errormsg());
			return -1;
		}
	}
	return 0;
}

/* open_pool -- rpmem_open, timed; NULL after saying why */
static RPMEMpool *
open_pool(void)
{
	unsigned nlanes = 4;
	struct rpmem_pool_attr a;
	long long t0 = now_us();
	RPMEMpool *rpp = rpmem_open(Target, Set, Pool, Size, &nlanes, &a);
	if (!rpp) {
		int err = errno;
		fprintf(stderr, "open failed: %s: %s\n", strerrorname_np(err),
			rpmem_errormsg());
		return NULL;
	}
	printf("opened in %.2f ms\n", (double)(now_us() - t0) / 1000);
	fflush(stdout);
	return rpp;
}

/* close_pool -- rpmem_close, timed; 0 or 1 */
static int
close_pool(RPMEMpool *rpp)
{
	long long t0 = now_us();
	if (rpmem_close(rpp)) {
		fprintf(stderr, "genclient: close: %s\n", rpmem_errormsg());
		return 1;
	}
	printf("closed in %.2f ms\n", (double)(now_us() - t0) / 1000);
	return 0;
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

/* wait_file -- until DIR/name exists */
static void
wait_file(const char *dir, const char *name)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	while (access(p, F_OK))
		tu_nap(10);
}

/* touch -- make DIR/name */
static void
touch(const char *dir, const char *name)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	int fd = open(p, O_WRONLY | O_CREAT, 0600);
	if (fd >= 0)
		close(fd);
}

/* cmd_write -- open, persist a pattern, maybe hold, close */
static int
cmd_write(uint64_t seed, size_t off, size_t len, const char *dir)
{
	RPMEMpool *rpp = open_pool();
	if (!rpp)
		return EXIT_OPEN;
	long long t0 = tu_now_ms();
	pattern(seed, off, len);
	if (persist(rpp, off, len))
		return 1;
	printf("acked %zu bytes at %zu in %lld ms\n", len, off,
		tu_now_ms() - t0);
	fflush(stdout);
	if (dir) {
		touch(dir, "acked");
		wait_file(dir, "stop");
	}
	return close_pool(rpp);
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

/* soak_seed -- the pattern of persist number `n` */
static uint64_t
soak_seed(uint64_t seed, uint64_t n)
{
	return seed << 24 | (n & 0xffffff);
}

/* cmd_soak -- random persists, each logged once acknowledged */
static int
cmd_soak(uint64_t seed, const char *dir)
{
	char path[PATH_MAX], stop[PATH_MAX];
	snprintf(path, sizeof(path), "%s/acks", dir);
	snprintf(stop, sizeof(stop), "%s/stop", dir);
	int log = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (log < 0) {
		fprintf(stderr, "genclient: %s: %s\n", path, strerror(errno));
		return 1;
	}
	RPMEMpool *rpp = open_pool();
	if (!rpp)
		return EXIT_OPEN;
	/* numbers go on from where an earlier run of the soak left them */
	uint64_t n = 0;
	FILE *old = fopen(path, "r");
	for (int c; old && (c = getc(old)) != EOF; )
		n += c == '\n';
	if (old)
		fclose(old);
	uint64_t s = (seed + n) * 0x2545f4914f6cdd1dULL + 1;
	for (; access(stop, F_OK); n++) {
		size_t len = 8 * (1 + tu_rnd(&s) % 32768);
		size_t off = HDR + (tu_rnd(&s) % (Size - HDR - len)) / 8 * 8;
		pattern(soak_seed(seed, n), off, len);
		if (rpmem_persist(rpp, off, len, (unsigned)(n % 4), 0)) {
			fprintf(stderr, "genclient: persist %llu: %s\n",
				(unsigned long long)n, rpmem_errormsg());
			(void) rpmem_close(rpp);
			return 3;
		}
		char line[64];
		int k = snprintf(line, sizeof(line), "%llu %zu %zu\n",
			(unsigned long long)n, off, len);
		if (write(log, line, (size_t)k) != k) {
			fprintf(stderr, "genclient: %s: %s\n", path,
				strerror(errno));
			return 1;
		}
	}
	close(log);
	return close_pool(rpp);
}

/*
 * later -- does `got` at word w hold the pattern of a persist numbered
 * from `from` to `to`?  A run of the soak numbers its persists on from
 * the acknowledged ones, so a higher number was issued later; one an
 * earlier run had in flight when it failed or was killed (its bytes in
 * the master's memory, and so in a resync from it) reused its number for
 * another range: its ranges are not in the log
 */
static bool
later(uint64_t seed, uint64_t got, size_t w, uint64_t from, uint64_t to)
{
	for (uint64_t q = from; q <= to; q++)
		if (got == word(soak_seed(seed, q), w * 8))
			return true;
	return false;
}

/*
 * cmd_acked -- the first `upto` acknowledged persists, as the last one
 * to write each word left it, are in the part file `part`, but where a
 * later one put its own: an acknowledged one (the promote began
 * meanwhile, so it may have landed before the session ended), or one in
 * flight, of this run or of an earlier one (later)
 */
static int
cmd_acked(uint64_t seed, const char *acks, long long upto, const char *part)
{
	size_t nw = Size / 8;
	uint64_t *last = calloc(nw, sizeof(*last));
	uint64_t *got = calloc(nw, sizeof(*got));
	FILE *f = fopen(acks, "r");
	int fd = open(part, O_RDONLY);
	if (!last || !got || !f || fd < 0 ||
			pread(fd, got, Size, 0) != (ssize_t)Size) {
		fprintf(stderr, "genclient: %s or %s: %s\n", acks, part,
			strerror(errno));
		return 1;
	}
	unsigned long long n, final = 0;
	size_t off, len;
	long long k = 0;
	while (fscanf(f, "%llu %zu %zu", &n, &off, &len) == 3) {
		bool early = upto < 0 || k++ < upto;
		for (size_t w = off / 8; w < (off + len) / 8; w++) {
			if (early)
				last[w] = n + 1;
			else if (last[w] && got[w] == word(soak_seed(seed, n),
					w * 8))
				last[w] = 0;	/* a later one landed */
		}
		final = n;
	}
	fclose(f);
	int ret = 0;
	for (size_t w = HDR / 8; !ret && w < nw; w++) {
		if (!last[w] || got[w] == word(soak_seed(seed, last[w] - 1),
				w * 8) || later(seed, got[w], w, last[w],
				final + 1))
			continue;
		printf("acknowledged persist %llu is not in %s at offset "
			"%zu\n", (unsigned long long)last[w] - 1, part, w * 8);
		ret = 1;
	}
	printf("%lld acknowledged persists checked: %s\n", upto < 0 ? k :
		upto, ret ? "one is missing" : "all there");
	close(fd);
	free(last);
	free(got);
	return ret;
}

/* one persist of the soak's log */
struct ack {
	uint64_t n;
	size_t off, len;
};

/* read_acks -- the soak's log, in order; NULL with the reason */
static struct ack *
read_acks(const char *path, size_t *count)
{
	FILE *f = fopen(path, "r");
	struct ack *a = NULL;
	size_t cap = 0, k = 0;
	unsigned long long n;
	size_t off, len;
	while (f && fscanf(f, "%llu %zu %zu", &n, &off, &len) == 3) {
		if (k == cap) {
			cap = cap ? 2 * cap : 1024;
			struct ack *b = realloc(a, cap * sizeof(*a));
			if (!b)
				break;
			a = b;
		}
		a[k++] = (struct ack){ n, off, len };
	}
	if (!f) {
		fprintf(stderr, "genclient: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	fclose(f);
	*count = k;
	return a ? a : calloc(1, sizeof(*a));
}

/*
 * cmd_prefix -- the replica is the image after a prefix of the soak's
 * persists (the last one of it possibly in part): for each word, which
 * persist's pattern it holds (the newest that wrote it, of those in ACKS
 * or the one in flight after them); the newest of all, M, ends the
 * prefix; then every word must hold what the persists before M left
 * there, or M's own bytes
 */
static int
cmd_prefix(uint64_t seed, const char *acks, const char *part, size_t lag)
{
	size_t nw = Size / 8, k;
	struct ack *a = read_acks(acks, &k);
	int64_t *seen = malloc(nw * sizeof(*seen));	/* persist index */
	int64_t *last = malloc(nw * sizeof(*last));
	uint64_t *got = malloc(nw * sizeof(*got));
	int fd = open(part, O_RDONLY);
	if (!a || !seen || !last || !got || fd < 0 ||
			pread(fd, got, Size, 0) != (ssize_t)Size) {
		fprintf(stderr, "genclient: %s: %s\n", part, strerror(errno));
		return 1;
	}
	close(fd);
	uint64_t flight = k ? a[k - 1].n + 1 : 0;
	int64_t m = -1;
	for (size_t w = HDR / 8; w < nw; w++) {
		seen[w] = -1;
		last[w] = -1;
		if (got[w] == word(soak_seed(seed, flight), w * 8))
			seen[w] = (int64_t)k;
	}
	for (size_t i = 0; i < k; i++)
		for (size_t w = a[i].off / 8; w < (a[i].off + a[i].len) / 8;
				w++)
			if (seen[w] < (int64_t)i && got[w] ==
					word(soak_seed(seed, a[i].n), w * 8))
				seen[w] = (int64_t)i;
	for (size_t w = HDR / 8; w < nw; w++)
		m = seen[w] > m ? seen[w] : m;
	/* the image of the persists before m */
	for (int64_t i = 0; i < m && i < (int64_t)k; i++)
		for (size_t w = a[i].off / 8; w < (a[i].off + a[i].len) / 8;
				w++)
			last[w] = i;
	int ret = 0;
	for (size_t w = HDR / 8; !ret && w < nw; w++) {
		uint64_t want = last[w] < 0 ? word(0, w * 8) :
			word(soak_seed(seed, a[last[w]].n), w * 8);
		if (got[w] == want || (m >= 0 && seen[w] == m))
			continue;
		printf("a hole: offset %zu holds %s, the prefix of %lld "
			"persists left persist %lld's bytes there\n", w * 8,
			seen[w] < 0 ? "no persist's bytes (torn, or lost)" :
			"an earlier persist's bytes", (long long)m,
			(long long)last[w]);
		ret = 1;
	}
	/* what was acknowledged and is not on the replica: the persists
	 * after m, and the words of m it lacks */
	size_t behind = 0;
	for (size_t i = m < 0 ? 0 : (size_t)m + 1; i < k; i++)
		behind += a[i].len;
	for (size_t w = m < 0 || m >= (int64_t)k ? 0 : a[m].off / 8;
			m >= 0 && m < (int64_t)k &&
			w < (a[m].off + a[m].len) / 8; w++)
		behind += seen[w] == m ? 0 : 8;
	printf("replica: the first %lld of %zu acknowledged persists%s, "
		"%zu bytes behind (bound %zu)\n", m < 0 ? 0LL : (long long)m,
		k, m == (int64_t)k ? " and the one in flight" : "", behind,
		lag);
	if (behind > lag) {
		printf("the replica is further behind than its bound\n");
		ret = 1;
	}
	free(a);
	free(seen);
	free(last);
	free(got);
	return ret;
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
	if (argc < 6) {
		fprintf(stderr, "usage: genclient TARGET SET SIZE FILE CMD "
			"[ARG...]\n");
		return 1;
	}
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
	if (strcmp(cmd, "acked") == 0 && argc == 10)
		return cmd_acked(seed, argv[7], strtoll(argv[8], NULL, 10),
			argv[9]);
	fprintf(stderr, "genclient: bad command or range: %s\n", cmd);
	return 1;
}
