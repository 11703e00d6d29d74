/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * control_pool.c -- a pool's life through librpmem and rpmemd (group main):
 *
 *   lifecycle  create, open, set_attr and close keep the attributes byte
 *              for byte on every part; NOHDRS pools have none; a
 *              descriptor in a subdirectory works
 *   remove     parts, and with RPMEM_REMOVE_POOL_SET the set file; FORCE
 *              over missing parts; ENOENT; unknown flags refused without ssh
 *   errors     ENOENT, EEXIST (the pool kept), EINVAL for attributes the
 *              set cannot hold and EFBIG (nothing left, one table), and
 *              scenario R12: a second handle or a remove is EBUSY while
 *              the first handle holds the pool, which keeps working
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

/* ----------------------------------------------------------- lifecycle */

START_TEST(create_then_open_returns_attrs_byte_for_byte)
{
	struct tset s;
	struct rpmem_pool_attr want;
	void *mem = tu_pool_map(POOL_SIZE);
	pool_set(&s, "roundtrip", 1, POOL_SIZE, NULL);
	attr_make(&want, 0);

	RPMEMpool *rpp = create_ok(&s, mem, POOL_SIZE, &want);
	tu_ok(rpmem_close(rpp), "close after create");
	no_children("close after create");
	ck_assert_uint_eq(parts_exist(&s), 1);

	reopens_with(&s, mem, POOL_SIZE, &want, "open after create");
	no_children("close after open");
	set_unlink(&s);
}
END_TEST

START_TEST(set_attr_survives_close_and_reopen_on_every_part)
{
	struct tset s;
	struct rpmem_pool_attr first, second;
	size_t size = 4 * MIB;
	void *mem = tu_pool_map(size);
	pool_set(&s, "setattr", 2, 4 * MIB, NULL);
	attr_make(&first, 1);
	attr_make(&second, 2);

	RPMEMpool *rpp = create_ok(&s, mem, size, &first);
	tu_ok(rpmem_set_attr(rpp, &second), "set_attr");
	tu_ok(rpmem_close(rpp), "close");

	/* an open checks every part header against part 0's */
	reopens_with(&s, mem, size, &second, "open after set_attr");
	for (unsigned i = 0; i < s.nparts; i++)
		part_signature_is(s.part[i], second.signature);
	no_children("close");
	set_unlink(&s);
}
END_TEST

START_TEST(nohdrs_pool_opens_with_zeroed_attrs)
{
	struct tset s;
	struct rpmem_pool_attr got, zero, some;
	void *mem = tu_pool_map(POOL_SIZE);
	pool_set(&s, "nohdrs", 1, POOL_SIZE, "NOHDRS");
	memset(&zero, 0, sizeof(zero));
	attr_make(&some, 3);

	RPMEMpool *rpp = create_ok(&s, mem, POOL_SIZE, NULL);
	tu_ok(rpmem_close(rpp), "close after create");

	rpp = open_ok(&s, mem, POOL_SIZE, &got);
	attr_eq(&got, &zero, "open of a NOHDRS pool");
	/* a pool without headers has nowhere to keep attributes */
	failed(rpmem_set_attr(rpp, &some), EINVAL, "set_attr on NOHDRS");
	tu_ok(rpmem_close(rpp), "close after refused set_attr");
	no_children("close");
	set_unlink(&s);
}
END_TEST

START_TEST(subdirectory_descriptor_is_allowed)
{
	struct tset s;
	struct rpmem_pool_attr want;
	char dir[PATH_MAX];
	void *mem = tu_pool_map(POOL_SIZE);
	fmt(dir, sizeof(dir), "%s/sub-ok", env.t.poolset_dir);
	ck_assert_msg(mkdir(dir, 0755) == 0, "%s: %s", dir, strerror(errno));
	set_write(&s, dir, "sub", env.t.part_dir, 1, POOL_SIZE, NULL);
	fmt(s.desc, sizeof(s.desc), "sub-ok/sub.set");
	attr_make(&want, 5);

	tu_ok(rpmem_close(create_ok(&s, mem, POOL_SIZE, &want)), "close");
	reopens_with(&s, mem, POOL_SIZE, &want, "open in a subdirectory");
	tu_ok(rpmem_remove(env.t.target, s.desc, RPMEM_REMOVE_POOL_SET),
		"remove in a subdirectory");
	ck_assert_msg(!exists(s.path) && parts_exist(&s) == 0,
		"remove left files behind");
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* -------------------------------------------------------------- remove */

/* remove takes the parts; with RPMEM_REMOVE_POOL_SET (_i 1) the set too */
START_TEST(remove_deletes_parts_and_open_says_enoent)
{
	const int flags = _i ? RPMEM_REMOVE_POOL_SET : 0;
	struct tset s;
	struct rpmem_pool_attr attr;
	void *mem = tu_pool_map(POOL_SIZE);
	pool_set(&s, _i ? "rm-set" : "rm-parts", 1, POOL_SIZE, NULL);
	attr_make(&attr, (unsigned char)(6 + _i));

	tu_ok(rpmem_close(create_ok(&s, mem, POOL_SIZE, &attr)), "close");
	tu_ok(rpmem_remove(env.t.target, s.desc, flags),
		flags ? "remove with POOL_SET" : "remove");
	no_children("remove");
	ck_assert_msg(parts_exist(&s) == 0, "remove kept the part");
	ck_assert_msg(exists(s.path) == !flags, flags ?
		"POOL_SET kept the set file" :
		"remove without POOL_SET took the set");

	open_refused(s.desc, mem, POOL_SIZE, ENOENT, "open after remove");
	set_unlink(&s);
}
END_TEST

START_TEST(remove_force_ignores_missing_parts)
{
	struct tset s;
	pool_set(&s, "rm-force", 2, 4 * MIB, NULL);

	tu_ok(rpmem_remove(env.t.target, s.desc,
		RPMEM_REMOVE_FORCE | RPMEM_REMOVE_POOL_SET),
		"forced remove of a never created pool");
	ck_assert_msg(!exists(s.path), "POOL_SET kept the set file");
	no_children("remove");
}
END_TEST

START_TEST(remove_missing_set_is_enoent)
{
	failed(rpmem_remove(env.t.target, "rm-no-such.set", 0), ENOENT,
		"remove of a missing set");
	no_children("remove");
}
END_TEST

START_TEST(remove_unknown_flags_is_einval_without_ssh)
{
	static const int bad[] = { 0x4, 0x8 | RPMEM_REMOVE_FORCE, -1,
		INT_MIN };
	struct tset s;
	char what[64];
	pool_set(&s, "rm-flags", 1, POOL_SIZE, NULL);
	victims_make(&s);

	unsigned before = ssh_runs();
	for (size_t i = 0; i < TU_NELEMS(bad); i++) {
		fmt(what, sizeof(what), "remove flags 0x%x", (unsigned)bad[i]);
		failed(rpmem_remove(env.t.target, s.desc, bad[i]), EINVAL,
			what);
	}
	ck_assert_msg(ssh_runs() == before, "bad flags started ssh");
	ck_assert_msg(parts_exist(&s) == 1 && exists(s.path),
		"bad flags removed files");
	set_unlink(&s);
}
END_TEST

/* -------------------------------------------------------------- errors */

START_TEST(open_missing_set_is_enoent_naming_it)
{
	const char *desc = "no-such-pool.set";
	void *mem = tu_pool_map(POOL_SIZE);

	open_refused(desc, mem, POOL_SIZE, ENOENT, "open of a missing set");
	ck_assert_msg(strstr(last_msg, desc) || strcasestr(last_msg, "exist"),
		"rpmem_errormsg \"%s\" names neither %s nor the cause",
		last_msg, desc);
}
END_TEST

START_TEST(create_over_existing_pool_is_eexist_and_keeps_it)
{
	struct tset s;
	struct rpmem_pool_attr first, second;
	unsigned nlanes = NLANES;
	void *mem = tu_pool_map(POOL_SIZE);
	pool_set(&s, "exists", 1, POOL_SIZE, NULL);
	attr_make(&first, 8);
	attr_make(&second, 9);

	tu_ok(rpmem_close(create_ok(&s, mem, POOL_SIZE, &first)), "close");
	refused(rpmem_create(env.t.target, s.desc, mem, POOL_SIZE, &nlanes,
		&second), EEXIST, "second create");
	no_children("refused create");

	reopens_with(&s, mem, POOL_SIZE, &first, "open after refused create");
	set_unlink(&s);
}
END_TEST

/* creates refused: attributes the set cannot hold, a pool above the set */
static const struct refused_create {
	const char *name;	/* of the set of one POOL_SIZE part */
	const char *option;
	enum { FULL, NONE, ZERO } attr;	/* what create is given */
	size_t size;		/* of the pool asked for */
	int err;
	const char *what;
} Refused_creates[] = {
	{ "nohdrs-attrs", "NOHDRS", FULL, POOL_SIZE, EINVAL,
		"create NOHDRS with attrs" },
	{ "hdrs-noattrs", NULL, NONE, POOL_SIZE, EINVAL,
		"create with NULL attrs" },
	{ "hdrs-zeroattrs", NULL, ZERO, POOL_SIZE, EINVAL,
		"create with zeroed attrs" },
	{ "too-small", NULL, FULL, 32 * MIB, EFBIG,
		"create of 32 MiB from an 8 MiB set" },
};

START_TEST(create_refused_leaves_nothing)
{
	const struct refused_create *c = &Refused_creates[_i];
	struct tset s;
	struct rpmem_pool_attr attr;
	void *mem = tu_pool_map(c->size);
	pool_set(&s, c->name, 1, POOL_SIZE, c->option);
	attr_make(&attr, 4);
	if (c->attr == ZERO)
		memset(&attr, 0, sizeof(attr));

	create_refused(&s, mem, c->size, c->attr == NONE ? NULL : &attr,
		c->err, c->what);
	set_unlink(&s);
}
END_TEST

START_TEST(open_bigger_than_pool_is_efbig)
{
	struct tset s;
	struct rpmem_pool_attr attr;
	size_t size = 32 * MIB;
	void *mem = tu_pool_map(size);
	pool_set(&s, "open-big", 1, POOL_SIZE, NULL);
	attr_make(&attr, 11);

	tu_ok(rpmem_close(create_ok(&s, mem, POOL_SIZE, &attr)), "close");
	open_refused(s.desc, mem, size, EFBIG,
		"open of 32 MiB from an 8 MiB pool");

	reopens_with(&s, mem, POOL_SIZE, &attr, "open after refused open");
	set_unlink(&s);
}
END_TEST

/*
 * R12: a second handle on a pool, or removing it, is refused while the
 * first handle holds it; the first keeps working
 */
START_TEST(second_handle_on_same_pool_is_ebusy)
{
	struct tset s;
	struct rpmem_pool_attr attr, got;
	void *mem1 = tu_pool_map(POOL_SIZE);
	void *mem2 = tu_pool_map(POOL_SIZE);
	pool_set(&s, "busy", 1, POOL_SIZE, NULL);
	attr_make(&attr, 12);

	RPMEMpool *first = create_ok(&s, mem1, POOL_SIZE, &attr);
	unsigned nlanes = NLANES;
	refused(rpmem_open(env.t.target, s.desc, mem2, POOL_SIZE, &nlanes,
		&got), EBUSY, "open while created");
	nlanes = NLANES;
	refused(rpmem_create(env.t.target, s.desc, mem2, POOL_SIZE, &nlanes,
		&attr), EBUSY, "create while created");
	failed(rpmem_remove(env.t.target, s.desc, RPMEM_REMOVE_POOL_SET), EBUSY,
		"remove while created");
	ck_assert_msg(parts_exist(&s) == 1 && exists(s.path),
		"a refused remove deleted files of a pool in use");
	tu_ok(rpmem_set_attr(first, &attr), "set_attr on the first handle");
	tu_ok(rpmem_close(first), "close of the first handle");

	first = open_ok(&s, mem1, POOL_SIZE, &got);
	nlanes = NLANES;
	refused(rpmem_open(env.t.target, s.desc, mem2, POOL_SIZE, &nlanes,
		&got), EBUSY, "open while opened");
	tu_ok(rpmem_close(first), "close");

	reopens_with(&s, mem2, POOL_SIZE, &attr,
		"open after the holder closed");
	no_children("close");
	set_unlink(&s);
}
END_TEST


/* ctest_add_pool -- the lifecycle, remove and errors cases */
void
ctest_add_pool(Suite *s)
{
	TCase *tc = ctest_tcase(s, "lifecycle");
	tcase_add_test(tc, create_then_open_returns_attrs_byte_for_byte);
	tcase_add_test(tc, set_attr_survives_close_and_reopen_on_every_part);
	tcase_add_test(tc, nohdrs_pool_opens_with_zeroed_attrs);
	tcase_add_test(tc, subdirectory_descriptor_is_allowed);

	tc = ctest_tcase(s, "remove");
	tcase_add_loop_test(tc, remove_deletes_parts_and_open_says_enoent, 0,
		2);
	tcase_add_test(tc, remove_force_ignores_missing_parts);
	tcase_add_test(tc, remove_missing_set_is_enoent);
	tcase_add_test(tc, remove_unknown_flags_is_einval_without_ssh);

	tc = ctest_tcase(s, "errors");
	tcase_add_test(tc, open_missing_set_is_enoent_naming_it);
	tcase_add_test(tc, create_over_existing_pool_is_eexist_and_keeps_it);
	TU_LOOP(tc, create_refused_leaves_nothing, Refused_creates);
	tcase_add_test(tc, open_bigger_than_pool_is_efbig);
	tcase_add_test(tc, second_handle_on_same_pool_is_ebusy);
}
