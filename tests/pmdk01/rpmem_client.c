/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpmem_client.c -- this project's librpmem against a PMDK 1.12 rpmemd
 *
 *   rpmem_client create TARGET DESC SIZE SEED EXPECT_FILE
 *   rpmem_client open TARGET DESC SIZE SEED
 *
 * create: rpmem_create, then the pool's data part (past the 4 KiB
 * header) filled from SEED and persisted in thirds, each another way:
 * strict persists, relaxed flushes and a drain, deep persists; read back
 * with rpmem_read and compared; rpmem_close.  The whole expected image
 * goes to EXPECT_FILE so that the caller can hold the daemon's file
 * against it.  open: rpmem_open, the attributes of create and every byte
 * read back compared.  One line on stdout: "OK ..." or "FAIL <step>:
 * <errno name>: rpmem_errormsg()"; exit 0 or 1 (2: bad command line).
 * Run by peers.sh, which sets RPMEM_SSH, RPMEM_CMD and friends.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "librpmem.h"

#define HDR 4096	/* the pool header, written by create/open only */
#define PIECE 65536	/* one persist call */

/* fail -- the closing line of a failed step */
static int
fail(const char *step)
{
	int err = errno;
	printf("FAIL %s: %s: %s\n", step, strerrorname_np(err) ?
		strerrorname_np(err) : "?", rpmem_errormsg());
	return 1;
}

/* fill -- the expected image: a xorshift stream from seed */
static void
fill(unsigned char *p, size_t len, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (unsigned char)x;
	}
}

/* attrs -- the pool attributes of create, recognisable on open */
static void
attrs(struct rpmem_pool_attr *a, uint64_t seed)
{
	memset(a, 0, sizeof(*a));
	memcpy(a->signature, "PEERS01", 8);
	a->major = 1;
	fill(a->poolset_uuid, sizeof(a->poolset_uuid), seed);
}

/* send_all -- a third each as strict, relaxed + drain and deep persists */
static int
send_all(RPMEMpool *rpp, size_t size)
{
	size_t third = (size - HDR) / 3 / PIECE * PIECE;
	for (size_t off = HDR; off < size; off += PIECE) {
		size_t len = size - off < PIECE ? size - off : PIECE;
		unsigned lane = (unsigned)(off / PIECE) % 2;
		if (off < HDR + third) {
			if (rpmem_persist(rpp, off, len, lane, 0))
				return fail("rpmem_persist");
		} else if (off < HDR + 2 * third) {
			if (rpmem_flush(rpp, off, len, lane,
					RPMEM_FLUSH_RELAXED))
				return fail("rpmem_flush");
			if (rpmem_drain(rpp, lane, 0))
				return fail("rpmem_drain");
		} else if (rpmem_deep_persist(rpp, off, len, lane)) {
			return fail("rpmem_deep_persist");
		}
	}
	return 0;
}

/* read_check -- every byte past the header as expected */
static int
read_check(RPMEMpool *rpp, const unsigned char *want, size_t size)
{
	unsigned char *got = malloc(size);
	if (!got)
		return fail("malloc");
	int r = rpmem_read(rpp, got + HDR, HDR, size - HDR, 0);
	if (r)
		r = fail("rpmem_read");
	else if (memcmp(got + HDR, want + HDR, size - HDR)) {
		printf("FAIL read back: the bytes differ\n");
		r = 1;
	}
	free(got);
	return r;
}

/* main -- one create or open session */
int
main(int argc, char *argv[])
{
	int create = argc == 7 && strcmp(argv[1], "create") == 0;
	if (!create && !(argc == 6 && strcmp(argv[1], "open") == 0)) {
		fprintf(stderr, "usage: rpmem_client create TARGET DESC SIZE "
			"SEED EXPECT_FILE | open TARGET DESC SIZE SEED\n");
		return 2;
	}
	size_t size = strtoull(argv[4], NULL, 0);
	uint64_t seed = strtoull(argv[5], NULL, 0);
	unsigned char *pool = mmap(NULL, size, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pool == MAP_FAILED)
		return fail("mmap");
	fill(pool + HDR, size - HDR, seed);

	struct rpmem_pool_attr want, got;
	attrs(&want, seed);
	unsigned nlanes = 2;
	RPMEMpool *rpp = create ?
		rpmem_create(argv[2], argv[3], pool, size, &nlanes, &want) :
		rpmem_open(argv[2], argv[3], pool, size, &nlanes, &got);
	if (!rpp)
		return fail(create ? "rpmem_create" : "rpmem_open");
	int r = 0;
	if (create) {
		FILE *f = fopen(argv[6], "w");
		r = !f || fwrite(pool, size, 1, f) != 1 || fclose(f) ?
			fail("writing the expected image") : 0;
		if (!r)
			r = send_all(rpp, size);
	} else if (memcmp(&want, &got, sizeof(want))) {
		printf("FAIL rpmem_open: not the attributes of create\n");
		r = 1;
	}
	if (!r)
		r = read_check(rpp, pool, size);
	if (rpmem_close(rpp) && !r)
		r = fail("rpmem_close");
	if (!r)
		printf("OK %s: %zu bytes on %u lane(s)\n", argv[1], size - HDR,
			nlanes);
	return r;
}
