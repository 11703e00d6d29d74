/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_db_errors.c -- unit tests of rpmemd's pool set database: what it
 * refuses when attributes or headers disagree with the set, and removes
 * that cannot unlink everything
 *
 * The pool lifecycle is in check_db.c, confinement in check_db_path.c;
 * the tree and helpers all use are in db_fixture.c.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db.h"
#include "db_fixture.h"
#include "tu_check.h"
#include "pool_hdr.h"

/* attributes a headers pool cannot take: zero, or SINGLEHDR disagreeing */
static const struct {
	const char *opts;	/* of the set */
	unsigned seed;		/* 0: all-zero attributes */
	bool singlehdr;		/* the feature in the attributes */
} Bad_attrs[] = {
	{ "", 0, false },
	{ "", 5, true },
	{ "OPTION SINGLEHDR\n", 5, false },
};

START_TEST(test_set_attr_refuses_zero_or_disagreeing_attrs)
{
	struct rpmem_pool_attr good, attr;
	struct db_pool *pool;
	dbt_attr(&good, 4);
	if (Bad_attrs[_i].opts[0])
		good.incompat_features |= POOL_FEAT_SINGLEHDR;
	dbt_write_set(dbt_sets, "a.set", Bad_attrs[_i].opts, "a", 1, 2U);
	ck_assert_int_eq(db_pool_create(dbt_db, "a.set", &good, &pool), 0);

	memset(&attr, 0, sizeof(attr));
	if (Bad_attrs[_i].seed) {
		dbt_attr(&attr, (unsigned char)Bad_attrs[_i].seed);
		attr.incompat_features &= ~(uint32_t)POOL_FEAT_SINGLEHDR;
		if (Bad_attrs[_i].singlehdr)
			attr.incompat_features |= POOL_FEAT_SINGLEHDR;
	}
	ck_assert_int_eq(db_pool_set_attr(pool, &attr), -EINVAL);
	ck_assert_int_eq(db_pool_close(pool, false), 0);

	/* the headers still hold the attributes of the create */
	ck_assert_int_eq(db_pool_open(dbt_db, "a.set", &pool), 0);
	ck_assert_mem_eq(&pool->attr, &good, sizeof(good));
	ck_assert_int_eq(db_pool_close(pool, true), 0);
}
END_TEST

/*
 * a set file edited after the create to add or drop SINGLEHDR: the
 * headers on disk disagree and the open is refused
 */
START_TEST(test_open_refuses_singlehdr_edited_into_or_out_of_the_set)
{
	static const char *const opts[][2] = {
		{ "OPTION SINGLEHDR\n", "" },
		{ "", "OPTION SINGLEHDR\n" },
	};
	struct rpmem_pool_attr attr;
	struct db_pool *pool;
	dbt_attr(&attr, 6);
	attr.incompat_features &= ~(uint32_t)POOL_FEAT_SINGLEHDR;
	if (opts[_i][0][0])
		attr.incompat_features |= POOL_FEAT_SINGLEHDR;
	dbt_write_set(dbt_sets, "s.set", opts[_i][0], "s", 2, 2U, 2U);
	dbt_made("s.set", &attr);

	dbt_write_set(dbt_sets, "s.set", opts[_i][1], "s", 2, 2U, 2U);
	ck_assert_int_eq(db_pool_open(dbt_db, "s.set", &pool), -EINVAL);
	dbt_parts_kept("s", 2);
}
END_TEST

/*
 * removes that cannot unlink what they were asked to: a part that is a
 * directory fails the remove (a forced one goes on and says so), a set
 * "file" that is a directory is not removed; a forced remove of a set
 * beneath a missing directory has nothing to do
 */
static const struct {
	const char *desc;
	bool dir_part;		/* part 1 of the set is a directory */
	bool force;
	bool pool_set;
	int ret;
	bool part0_left;
} Unlinks[] = {
	{ "d.set", true, false, false, -EISDIR, false },
	{ "d.set", true, true, true, 0, false },
	{ "sub", false, true, true, -EISDIR, false },
	{ "gone/x.set", false, true, true, 0, false },
};

START_TEST(test_remove_that_cannot_unlink_says_so)
{
	const char *desc = Unlinks[_i].desc;
	if (strcmp(desc, "d.set") == 0) {
		dbt_write_set(dbt_sets, desc, "OPTION NOHDRS\n", "d", 2, 2U,
			2U);
		dbt_write_file(dbt_part("d", 0), "");
		ck_assert_int_eq(truncate(dbt_part("d", 0), 2 * MIB), 0);
		ck_assert_int_eq(mkdir(dbt_part("d", 1), 0700), 0);
	} else if (strcmp(desc, "sub") == 0) {
		ck_assert_int_eq(mkdir(dbt_path(dbt_sets, "sub"), 0700), 0);
	}
	ck_assert_int_eq(db_pool_remove(dbt_db, desc, Unlinks[_i].force,
		Unlinks[_i].pool_set), Unlinks[_i].ret);
	if (strcmp(desc, "d.set") == 0) {
		ck_assert(dbt_exists(dbt_part("d", 0)) ==
			Unlinks[_i].part0_left);
		ck_assert(dbt_exists(dbt_part("d", 1)));
		ck_assert(dbt_exists(dbt_path(dbt_sets, desc)) !=
			Unlinks[_i].pool_set);
	} else if (strcmp(desc, "sub") == 0) {
		ck_assert(dbt_exists(dbt_path(dbt_sets, "sub")));
	}
}
END_TEST

/* db_errors_suite -- every test above, each in its own temporary tree */
static Suite *
db_errors_suite(void)
{
	TCase *tc;
	Suite *s = dbt_suite("db-errors", "errors", &tc);
	TU_LOOP(tc, test_set_attr_refuses_zero_or_disagreeing_attrs, Bad_attrs);
	tcase_add_loop_test(tc,
		test_open_refuses_singlehdr_edited_into_or_out_of_the_set, 0, 2);
	TU_LOOP(tc, test_remove_that_cannot_unlink_says_so, Unlinks);
	return tu_suite_add(s, tc);
}

DBT_MAIN(db_errors_suite)
