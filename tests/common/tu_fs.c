/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tu_fs.c -- a test's scratch tree removed, whatever it holds
 */
#include <ftw.h>
#include <stdio.h>

#include "tu.h"

/* rm_entry -- nftw callback removing one entry */
static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* tu_rmtree -- remove `path` and all beneath it, links not followed */
int
tu_rmtree(const char *path)
{
	return nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}
