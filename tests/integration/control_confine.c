/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * control_confine.c -- scenario S1 (group main): create, open and
 * remove through a descriptor that leads out of the poolset dir ("..",
 * an absolute path, a symlink to a set, a symlinked directory) are
 * refused and touch none of the files out there
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctest.h"

/* --------------------------------------------------------- confinement */

/*
 * expect_confined -- S1: create, open and remove through `desc`, which
 * leads to the set `s` outside poolset-dir, are refused with `err` (remove
 * with one of `rm_errs`, even forced) and touch none of its files
 */
static void
expect_confined(const struct tset *s, const char *desc, int err,
	const int *rm_errs)
{
	struct rpmem_pool_attr attr;
	unsigned nlanes = NLANES;
	char what[PATH_MAX + 64];
	void *mem = tu_pool_map(POOL_SIZE);
	attr_make(&attr, 16);

	fmt(what, sizeof(what), "create via \"%s\"", desc);
	refused(rpmem_create(env.t.target, desc, mem, POOL_SIZE, &nlanes,
		&attr), err, what);
	ck_assert_msg(parts_exist(s) == 0, "%s created %s", what, s->part[0]);

	nlanes = NLANES;
	fmt(what, sizeof(what), "open via \"%s\"", desc);
	refused(rpmem_open(env.t.target, desc, mem, POOL_SIZE, &nlanes, &attr),
		err, what);

	victims_make(s);
	fmt(what, sizeof(what), "forced remove via \"%s\"", desc);
	failed_in(rpmem_remove(env.t.target, desc,
		RPMEM_REMOVE_FORCE | RPMEM_REMOVE_POOL_SET), rm_errs, what);
	ck_assert_msg(parts_exist(s) == s->nparts, "%s deleted a part", what);
	ck_assert_msg(exists(s->path), "%s deleted the set file", what);
	no_children(what);
	for (unsigned i = 0; i < s->nparts; i++)
		tu_unlink_quiet(s->part[i]);
	munmap(mem, POOL_SIZE);
}

/* outside_set -- a set file and its parts in dir, outside poolset-dir */
static void
outside_set(struct tset *s, const char *dir, const char *name)
{
	set_write(s, dir, name, dir, 1, POOL_SIZE, NULL);
}

/* S1 */
START_TEST(dotdot_descriptor_is_eacces)
{
	static const int rm_errs[] = { EACCES, 0 };
	char parent[PATH_MAX], outside[PATH_MAX], up[PATH_MAX];
	struct tset s;

	fmt(up, sizeof(up), "%s/..", env.t.poolset_dir);
	ck_assert_ptr_nonnull(realpath(up, parent));
	ck_assert_ptr_nonnull(realpath(env.outside_dir, outside));
	ck_assert_msg(strcmp(parent, outside) == 0,
		"RPMEM_TEST_OUTSIDE_DIR must be the poolset dir's parent");

	outside_set(&s, env.outside_dir, "esc-dotdot");
	expect_confined(&s, "../esc-dotdot.set", EACCES, rm_errs);
	expect_confined(&s, "./../esc-dotdot.set", EACCES, rm_errs);
	set_unlink(&s);
}
END_TEST

/* S1: PMDK maps an absolute descriptor to BADNAME, i.e. EINVAL */
START_TEST(absolute_descriptor_is_einval)
{
	static const int rm_errs[] = { EINVAL, EBADF, EACCES, 0 };
	struct tset s;

	outside_set(&s, env.outside_dir, "esc-abs");
	expect_confined(&s, s.path, EINVAL, rm_errs);
	set_unlink(&s);
}
END_TEST

/* S1 */
START_TEST(symlink_to_outside_set_is_eacces)
{
	static const int rm_errs[] = { EACCES, 0 };
	char lnk[PATH_MAX];
	struct tset s;

	outside_set(&s, env.outside_dir, "esc-link-target");
	fmt(lnk, sizeof(lnk), "%s/esc-link.set", env.t.poolset_dir);
	ck_assert_msg(symlink(s.path, lnk) == 0, "symlink %s: %s", lnk,
		strerror(errno));
	expect_confined(&s, "esc-link.set", EACCES, rm_errs);
	ck_assert_int_eq(unlink(lnk), 0);
	set_unlink(&s);
}
END_TEST

/* S1 */
START_TEST(symlinked_directory_to_outside_is_eacces)
{
	static const int rm_errs[] = { EACCES, 0 };
	char dir[PATH_MAX], lnk[PATH_MAX];
	struct tset s;

	fmt(dir, sizeof(dir), "%s/esc-dir-target", env.outside_dir);
	ck_assert_msg(mkdir(dir, 0755) == 0, "%s: %s", dir, strerror(errno));
	outside_set(&s, dir, "escdir");
	fmt(lnk, sizeof(lnk), "%s/esc-dir", env.t.poolset_dir);
	ck_assert_msg(symlink(dir, lnk) == 0, "symlink %s: %s", lnk,
		strerror(errno));
	expect_confined(&s, "esc-dir/escdir.set", EACCES, rm_errs);
	ck_assert_int_eq(unlink(lnk), 0);
	set_unlink(&s);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST


/* ctest_add_confinement -- the confinement cases */
void
ctest_add_confinement(Suite *s)
{
	TCase *tc = ctest_tcase(s, "confinement");
	tcase_add_test(tc, dotdot_descriptor_is_eacces);
	tcase_add_test(tc, absolute_descriptor_is_einval);
	tcase_add_test(tc, symlink_to_outside_set_is_eacces);
	tcase_add_test(tc, symlinked_directory_to_outside_is_eacces);
}
