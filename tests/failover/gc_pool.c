/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gc_pool.c -- genclient's master (gc.h): its memory, the patterns it
 * stores, its handle's open, persists and close, and the files a test
 * script signals it with
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "gc.h"
#include "tu.h"

/* map -- the master's memory: FILE, SIZE bytes, shared */
int
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
uint64_t
word(uint64_t seed, size_t off)
{
	return tu_mix(seed * 0x9e3779b97f4a7c15ULL + off);
}

/* pattern -- pattern `seed` into [off, off + len) of the memory */
void
pattern(uint64_t seed, size_t off, size_t len)
{
	for (size_t k = 0; k < len; k += 8) {
		uint64_t v = word(seed, off + k);
		memcpy(Pool + off + k, &v, len - k < 8 ? len - k : 8);
	}
}

/* persist -- [off, off + len) in pieces; 0 or -1 with the message */
long long Persist_max_us;

int
persist(RPMEMpool *rpp, size_t off, size_t len)
{
	for (size_t o = off; o < off + len; o += PIECE) {
		size_t n = off + len - o < PIECE ? off + len - o : PIECE;
		long long t0 = tu_now_us();
		int r = rpmem_persist(rpp, o, n, 0, 0);
		long long us = tu_now_us() - t0;
		if (us > Persist_max_us)
			Persist_max_us = us;
		if (r) {
			fprintf(stderr, "genclient: persist of %zu at %zu: "
				"%s\n", n, o, rpmem_errormsg());
			return -1;
		}
	}
	return 0;
}

/* open_pool -- rpmem_open, timed; NULL after saying why */
RPMEMpool *
open_pool(void)
{
	unsigned nlanes = 4;
	struct rpmem_pool_attr a;
	long long t0 = tu_now_us();
	RPMEMpool *rpp = rpmem_open(Target, Set, Pool, Size, &nlanes, &a);
	if (!rpp) {
		int err = errno;
		fprintf(stderr, "open failed: %s: %s\n", strerrorname_np(err),
			rpmem_errormsg());
		return NULL;
	}
	printf("opened in %.2f ms\n", (double)(tu_now_us() - t0) / 1000);
	fflush(stdout);
	return rpp;
}

/* close_pool -- rpmem_close, timed; 0 or 1 */
int
close_pool(RPMEMpool *rpp)
{
	long long t0 = tu_now_us();
	if (rpmem_close(rpp)) {
		fprintf(stderr, "genclient: close: %s\n", rpmem_errormsg());
		return 1;
	}
	printf("closed in %.2f ms\n", (double)(tu_now_us() - t0) / 1000);
	return 0;
}

/* wait_file -- until DIR/name exists */
void
wait_file(const char *dir, const char *name)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	while (access(p, F_OK))
		tu_nap(10);
}

/* wait_gone -- while DIR/name exists */
void
wait_gone(const char *dir, const char *name)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	while (access(p, F_OK) == 0)
		tu_nap(10);
}

/* touch -- make DIR/name */
void
touch(const char *dir, const char *name)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	int fd = open(p, O_WRONLY | O_CREAT, 0600);
	if (fd >= 0)
		close(fd);
}

/* beyond_bound -- 1 after saying the replica is further behind than lag */
int
beyond_bound(size_t behind, size_t lag)
{
	if (behind <= lag)
		return 0;
	printf("the replica is further behind than its bound\n");
	return 1;
}
