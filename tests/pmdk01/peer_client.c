/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer_client.c -- a librpmem application for meeting the real PMDK 1.12.1
 *
 *   peer_client create TARGET DESC SIZE SEED LANES EXPECT_FILE
 *   peer_client open TARGET DESC SIZE SEED LANES
 *   peer_client remove TARGET DESC FLAGS
 *
 * Built against this project's header only; whichever librpmem.so.1 the
 * loader finds runs it (LD_LIBRARY_PATH: ours or PMDK's), and the first
 * line says which file that was.  create: rpmem_create with attributes
 * A(SEED), uuids and flags non-zero so that any rpmemd keeps them as given;
 * then one thread per lane (up to LANES, as granted) persists its share
 * of the data part in pieces, each piece another way: strict persist,
 * relaxed persist, flush + drain, relaxed flush + drain, deep persist,
 * each way with pieces over and under PMDK's inline buffer;
 * everything read back and compared; rpmem_set_attr(B(SEED));
 * rpmem_close.  The expected image goes to EXPECT_FILE (to compare with
 * the replica's file).  open: rpmem_open must return B(SEED) and the
 * data; then rpmem_close.  remove: rpmem_remove with FLAGS.  The last
 * line is "OK ..." or "FAIL <step>: <errno name>: rpmem_errormsg()";
 * exit 0 or 1 (2: bad command line).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "librpmem.h"

#define HDR 4096		/* the pool header, written by create only */
/*
 * bytes of one call, each way in turn: over PMDK's 8 KiB inline buffer
 * (our client sends strict ones to its rpmemd as RMA writes, PMDK's
 * splits them) and under it (inline, with 8-byte stores)
 */
#define PIECE (24 * 1024 + 8)
#define SMALL_PIECE (4 * 1024 + 8)
#define MAX_LANES 8		/* threads at most */

/* fail -- the closing line of a failed step */
static int
fail(const char *step, int err)
{
	const char *name = strerrorname_np(err);
	printf("FAIL %s: %s: %s\n", step, name ? name : "?",
		rpmem_errormsg());
	return 1;
}

/* fill -- bytes from a xorshift stream of seed */
static void
fill(unsigned char *p, size_t len, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (unsigned char)(x | 1);	/* never zero */
	}
}

/*
 * attrs -- attributes `which` ('A' or 'B') of seed: every uuid and flag
 * byte non-zero, no feature bit (PMDK's rpmemd holds incompat SINGLEHDR
 * against the set file's options)
 */
static void
attrs(struct rpmem_pool_attr *a, uint64_t seed, char which)
{
	fill((unsigned char *)a, sizeof(*a), seed * 2 + (which == 'B'));
	a->compat_features = a->incompat_features = 0;
	a->ro_compat_features = 0;
	memcpy(a->signature, which == 'A' ? "PEER--A" : "PEER--B", 8);
	a->major = which == 'A' ? 1 : 2;
}

struct share {
	RPMEMpool *rpp;
	unsigned lane;
	size_t off, len;	/* the lane's part of the pool */
	const char *step;	/* the failed call, or NULL */
	int err;
};

/* one_piece -- piece number i of a lane, written the i-th way of five */
static int
one_piece(RPMEMpool *rpp, unsigned lane, size_t off, size_t len, unsigned i,
		const char **step)
{
	switch (i % 5) {
	case 0:
		*step = "rpmem_persist";
		return rpmem_persist(rpp, off, len, lane, 0);
	case 1:
		*step = "rpmem_persist relaxed";
		return rpmem_persist(rpp, off, len, lane,
			RPMEM_PERSIST_RELAXED);
	case 2:
	case 3:
		*step = "rpmem_flush";
		if (rpmem_flush(rpp, off, len, lane, i % 5 == 3 ?
				RPMEM_FLUSH_RELAXED : 0))
			return -1;
		*step = "rpmem_drain";
		return rpmem_drain(rpp, lane, 0);
	default:
		*step = "rpmem_deep_persist";
		return rpmem_deep_persist(rpp, off, len, lane);
	}
}

/* lane_work -- a thread's share, piece by piece */
static void *
lane_work(void *arg)
{
	struct share *s = arg;
	unsigned i = s->lane;
	for (size_t o = 0, len; o < s->len; o += len, i++) {
		size_t want = (i / 5) % 2 ? SMALL_PIECE : PIECE;
		len = s->len - o < want ? s->len - o : want;
		const char *step;
		if (one_piece(s->rpp, s->lane, s->off + o, len, i, &step)) {
			s->step = step;
			s->err = errno;
			return NULL;
		}
	}
	return NULL;
}

/* send_all -- every lane's share at once */
static int
send_all(RPMEMpool *rpp, size_t size, unsigned nlanes)
{
	struct share s[MAX_LANES];
	pthread_t t[MAX_LANES];
	unsigned n = nlanes < MAX_LANES ? nlanes : MAX_LANES;
	size_t each = (size - HDR) / n / 8 * 8;
	for (unsigned i = 0; i < n; i++) {
		s[i] = (struct share){ .rpp = rpp, .lane = i,
			.off = HDR + i * each,
			.len = i + 1 == n ? size - HDR - i * each : each };
		if (pthread_create(&t[i], NULL, lane_work, &s[i]))
			return fail("pthread_create", EAGAIN);
	}
	int r = 0;
	for (unsigned i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
		if (s[i].step && !r)
			r = fail(s[i].step, s[i].err);
	}
	return r;
}

/* read_check -- every byte past the header, read on the last lane */
static int
read_check(RPMEMpool *rpp, const unsigned char *want, size_t size,
		unsigned nlanes)
{
	unsigned char *got = malloc(size);
	if (!got)
		return fail("malloc", ENOMEM);
	int r = 0;
	if (rpmem_read(rpp, got + HDR, HDR, size - HDR, nlanes - 1))
		r = fail("rpmem_read", errno);
	else if (memcmp(got + HDR, want + HDR, size - HDR)) {
		printf("FAIL read back: the bytes differ\n");
		r = 1;
	}
	free(got);
	return r;
}

/* library -- the file rpmem_create was loaded from */
static const char *
library(void)
{
	Dl_info info;
	return dladdr((void *)rpmem_create, &info) && info.dli_fname ?
		info.dli_fname : "?";
}

/* session -- one create or open session; 0 or 1 */
static int
session(int create, char *argv[])
{
	size_t size = strtoull(argv[4], NULL, 0);
	uint64_t seed = strtoull(argv[5], NULL, 0);
	unsigned nlanes = (unsigned)strtoul(argv[6], NULL, 0);
	unsigned char *pool = mmap(NULL, size, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pool == MAP_FAILED)
		return fail("mmap", errno);
	fill(pool + HDR, size - HDR, seed);

	struct rpmem_pool_attr a, b, got;
	attrs(&a, seed, 'A');
	attrs(&b, seed, 'B');
	RPMEMpool *rpp = create ?
		rpmem_create(argv[2], argv[3], pool, size, &nlanes, &a) :
		rpmem_open(argv[2], argv[3], pool, size, &nlanes, &got);
	if (!rpp)
		return fail(create ? "rpmem_create" : "rpmem_open", errno);
	int r = 0;
	if (create) {
		FILE *f = fopen(argv[7], "w");
		if (!f || fwrite(pool, size, 1, f) != 1 || fclose(f))
			r = fail("writing the expected image", errno);
		if (!r)
			r = send_all(rpp, size, nlanes);
	} else if (memcmp(&b, &got, sizeof(b))) {
		printf("FAIL rpmem_open: not the attributes of set_attr\n");
		r = 1;
	}
	if (!r)
		r = read_check(rpp, pool, size, nlanes);
	if (!r && create && rpmem_set_attr(rpp, &b))
		r = fail("rpmem_set_attr", errno);
	if (rpmem_close(rpp) && !r)
		r = fail("rpmem_close", errno);
	if (!r)
		printf("OK %s: %zu bytes on %u lane(s)\n", argv[1],
			size - HDR, nlanes);
	return r;
}

/* main -- print the library, then one command */
int
main(int argc, char *argv[])
{
	int create = argc == 8 && strcmp(argv[1], "create") == 0;
	int open = argc == 7 && strcmp(argv[1], "open") == 0;
	int remove = argc == 5 && strcmp(argv[1], "remove") == 0;
	if (!create && !open && !remove) {
		fprintf(stderr, "usage: peer_client create TARGET DESC SIZE "
			"SEED LANES EXPECT_FILE | open TARGET DESC SIZE SEED "
			"LANES | remove TARGET DESC FLAGS\n");
		return 2;
	}
	printf("library %s\n", library());
	if (!remove)
		return session(create, argv);
	if (rpmem_remove(argv[2], argv[3], atoi(argv[4])))
		return fail("rpmem_remove", errno);
	printf("OK remove\n");
	return 0;
}
