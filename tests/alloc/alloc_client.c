/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alloc_client.c -- the client of R17's loops: one rpmem_create or
 * rpmem_open, persists on both lanes, a read back and a close, through
 * the public API only
 *
 *   alloc_client create|open TARGET DESC POOL_SIZE
 *
 * Prints one line: "ok", or "fail STAGE ERRNAME MESSAGE" for the first
 * call that failed.  Exit 0 when every call either worked or failed
 * cleanly (-1 or NULL with errno and a message); 1 when a failure came
 * without them or the bytes read back differ; 2 for bad arguments.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "librpmem.h"

#define HDR 4096
#define LEN 4096
#define NLANES 2

/* failed -- report the failure of `stage`; 0 when it was clean */
static int
failed(const char *stage)
{
	int err = errno;
	const char *msg = rpmem_errormsg();
	const char *name = err ? strerrorname_np(err) : NULL;
	printf("fail %s %s %s\n", stage, name ? name : "0",
		msg && *msg ? msg : "(no message)");
	return err && name && msg && *msg ? 0 : 1;
}

int
main(int argc, char *argv[])
{
	if (argc != 5 || (strcmp(argv[1], "create") &&
			strcmp(argv[1], "open"))) {
		fprintf(stderr, "usage: alloc_client create|open TARGET DESC "
			"POOL_SIZE\n");
		return 2;
	}
	size_t size = strtoull(argv[4], NULL, 10);
	char *pool = mmap(NULL, size, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pool == MAP_FAILED)
		return 2;
	struct rpmem_pool_attr attr;
	memset(&attr, 0, sizeof(attr));
	memcpy(attr.signature, "R17POOL", 8);
	attr.major = 1;
	attr.uuid[0] = 17;
	unsigned nlanes = NLANES;
	int rc = 0;
	errno = 0;
	RPMEMpool *rpp = strcmp(argv[1], "create") == 0 ?
		rpmem_create(argv[2], argv[3], pool, size, &nlanes, &attr) :
		rpmem_open(argv[2], argv[3], pool, size, &nlanes, NULL);
	if (!rpp) {
		rc = failed(argv[1]);
		goto out;
	}
	/* the same bytes every time: a later open finds the pool unchanged */
	for (size_t i = 0; i < LEN; i++)
		pool[HDR + i] = (char)(i * 7 + 1);
	for (unsigned l = 0; l < nlanes; l++) {
		if (rpmem_persist(rpp, HDR + l * (LEN / NLANES), LEN / NLANES,
				l, 0)) {
			rc = failed("persist");
			(void) rpmem_close(rpp);
			goto out;
		}
	}
	char back[LEN];
	if (rpmem_read(rpp, back, HDR, LEN, 0)) {
		rc = failed("read");
		(void) rpmem_close(rpp);
		goto out;
	}
	if (memcmp(back, pool + HDR, LEN)) {
		printf("fail read EIO the bytes read back differ\n");
		(void) rpmem_close(rpp);
		rc = 1;
		goto out;
	}
	if (rpmem_close(rpp)) {
		rc = failed("close");
		goto out;
	}
	printf("ok\n");
out:
	munmap(pool, size);
	/* LeakSanitizer ends a leaking process with _exit: say it first */
	fflush(stdout);
	return rc;
}
