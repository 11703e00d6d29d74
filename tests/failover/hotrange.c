/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hotrange.c -- a librpmem client that keeps rewriting one hot range
 * while its replica is lost, comes back and is resynced, then reads the
 * replica back whole and compares it with its own memory (scenario
 * D3: no resync copy lands after a newer persist of the same bytes)
 *
 * Usage: hotrange TARGET POOL_SET SIZE DIR [soak]
 *   creates the remote pool (no headers), fills and persists it, creates
 *   DIR/ready, then persists ranges of 4-64 KiB anywhere, and the hot
 *   range (the pool's second 64 KiB) after each, until DIR/cold-done
 *   exists; then, each millisecond, one word somewhere else and the hot
 *   range again, until DIR/stop exists (a lost word shows, as nothing
 *   rewrites it after the resync);
 *   then reads the replica back through
 *   rpmem_read (RPMEM_ON_REPLICA_LOSS=continue serves a read from the
 *   replica only when it is in sync: the script creates DIR/stop once
 *   rpmem status says so) and compares.  Prints the persists made and
 *   the outcome; exit 0 when the replica equals this memory.
 *   With "soak" (tests/soak/degraded.sh) the cold ranges never end, one
 *   cold and one hot persist a millisecond apart, so that every fault of
 *   a long run lands among writes all over the pool.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <librpmem.h>

#define HOT_OFF ((size_t)64 << 10)
#define HOT_LEN ((size_t)64 << 10)
#define PIECE ((size_t)1 << 20)

/* rnd -- xorshift64 */
static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* exists -- does DIR/name exist? */
static int
exists(const char *dir, const char *name)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return access(p, F_OK) == 0;
}

/* touch -- create DIR/name */
static int
touch(const char *dir, const char *name)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	return f && fclose(f) == 0 ? 0 : -1;
}

/* put -- fill [off, off + len) with a value of iteration i, persist it */
static int
put(RPMEMpool *rpp, unsigned char *pool, size_t off, size_t len, uint64_t i)
{
	for (size_t k = 0; k < len; k += 8) {
		uint64_t v = i * 0x9e3779b97f4a7c15ULL + off + k;
		memcpy(pool + off + k, &v, len - k < 8 ? len - k : 8);
	}
	for (size_t o = off; o < off + len; o += PIECE) {
		size_t n = off + len - o < PIECE ? off + len - o : PIECE;
		if (rpmem_persist(rpp, o, n, 0, 0)) {
			fprintf(stderr, "hotrange: persist of %zu at %zu: %s\n",
				n, o, rpmem_errormsg());
			return -1;
		}
	}
	return 0;
}

int
main(int argc, char *argv[])
{
	if (argc != 5 && !(argc == 6 && strcmp(argv[5], "soak") == 0)) {
		fprintf(stderr, "usage: hotrange TARGET POOL_SET SIZE DIR "
			"[soak]\n");
		return 2;
	}
	int soak = argc == 6;
	const char *dir = argv[4];
	size_t size = strtoull(argv[3], NULL, 0);
	unsigned char *pool = aligned_alloc(4096, size);
	unsigned char *back = malloc(PIECE);
	if (!pool || !back || size < 4 * HOT_OFF) {
		fprintf(stderr, "hotrange: bad size %zu or no memory\n", size);
		return 2;
	}
	unsigned nlanes = 1;
	RPMEMpool *rpp = rpmem_create(argv[1], argv[2], pool, size, &nlanes,
		NULL);
	if (!rpp) {
		fprintf(stderr, "hotrange: create: %s\n", rpmem_errormsg());
		return 1;
	}
	if (put(rpp, pool, 0, size, 0) || touch(dir, "ready"))
		return 1;

	uint64_t seed = 0x1234567, i = 1, hot = 0, cold = 0;
	bool warm = true;
	while (!exists(dir, "stop")) {
		if (warm && (soak || (warm = !exists(dir, "cold-done")))) {
			size_t len = 4096 * (1 + rnd(&seed) % 16);
			size_t off = rnd(&seed) % (size - len) & ~(size_t)7;
			if (put(rpp, pool, off, len, i))
				return 1;
			cold++;
			if (soak) {
				struct timespec ts = { 0, 1000000 };
				nanosleep(&ts, NULL);
			}
		} else {
			/* a word written once, then the hot range again */
			struct timespec ts = { 0, 1000000 };
			nanosleep(&ts, NULL);
			size_t off = (HOT_OFF + HOT_LEN + rnd(&seed) %
				(size - HOT_OFF - HOT_LEN - 8)) & ~(size_t)7;
			if (put(rpp, pool, off, 8, i))
				return 1;
			cold++;
		}
		if (put(rpp, pool, HOT_OFF, HOT_LEN, i))
			return 1;
		hot++;
		i++;
	}
	for (size_t o = 0; o < size; o += PIECE) {
		size_t n = size - o < PIECE ? size - o : PIECE;
		if (rpmem_read(rpp, back, o, n, 0)) {
			fprintf(stderr, "hotrange: read at %zu: %s\n", o,
				rpmem_errormsg());
			return 1;
		}
		for (size_t k = 0; k < n; k++) {
			if (back[k] == pool[o + k])
				continue;
			printf("hotrange: %llu cold and %llu hot persists; "
				"replica differs at offset %zu (0x%02x, here "
				"0x%02x)\n", (unsigned long long)cold,
				(unsigned long long)hot, o + k,
				back[k], pool[o + k]);
			return 1;
		}
	}
	if (rpmem_close(rpp)) {
		fprintf(stderr, "hotrange: close: %s\n", rpmem_errormsg());
		return 1;
	}
	printf("hotrange: %llu cold and %llu hot persists; the replica equals "
		"the master\n", (unsigned long long)cold,
		(unsigned long long)hot);
	free(back);
	free(pool);
	return 0;
}
