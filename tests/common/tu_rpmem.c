/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tu_rpmem.c -- Check assertions of the programs that drive librpmem:
 * pool set files, the local pool, calls that must succeed
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "librpmem.h"
#include "tu_check.h"

/* tu_unlink_quiet -- remove path; a missing file is fine */
void
tu_unlink_quiet(const char *path)
{
	ck_assert_msg(unlink(path) == 0 || errno == ENOENT,
		"cannot remove %s: %s", path, strerror(errno));
}

/* tu_poolset_unlink -- the parts, then the set file; missing ones are fine */
void
tu_poolset_unlink(const char *path, const char (*part)[PATH_MAX],
	unsigned nparts)
{
	for (unsigned i = 0; i < nparts; i++)
		tu_unlink_quiet(part[i]);
	/* rpmemd keeps the copy's generations beside its part 0 */
	char gen[PATH_MAX + 8];
	if (nparts) {
		snprintf(gen, sizeof(gen), "%s.gen", part[0]);
		tu_unlink_quiet(gen);
	}
	tu_unlink_quiet(path);
}

/* tu_poolset_write -- a set file naming the parts, each removed first */
void
tu_poolset_write(const char *path, const char (*part)[PATH_MAX],
	unsigned nparts, size_t part_size, const char *option)
{
	/* what an earlier, failed run of the test may have left */
	for (unsigned i = 0; i < nparts; i++)
		tu_unlink_quiet(part[i]);
	FILE *f = fopen(path, "w");
	ck_assert_msg(f != NULL, "cannot create %s: %s", path,
		strerror(errno));
	fprintf(f, "PMEMPOOLSET\n");
	if (option)
		fprintf(f, "OPTION %s\n", option);
	for (unsigned i = 0; i < nparts; i++)
		fprintf(f, "%zuM %s\n", part_size >> 20, part[i]);
	ck_assert_msg(fclose(f) == 0, "writing %s: %s", path,
		strerror(errno));
}

/* tu_pool_map -- page-aligned anonymous memory for a local pool */
void *
tu_pool_map(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ck_assert_msg(p != MAP_FAILED, "mmap %zu: %s", size, strerror(errno));
	return p;
}

/* tu_ok -- an int-returning librpmem call succeeded; else its errno */
void
tu_ok(int ret, const char *what)
{
	if (ret != 0) {
		int e = errno;
		const char *name = e ? strerrorname_np(e) : "0";
		const char *msg = rpmem_errormsg();
		ck_abort_msg("%s returned %d: %s (%s): %s", what, ret,
			name ? name : "E?", strerror(e), msg ? msg : "(null)");
	}
}
