/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_db_path.c -- unit tests of rpmemd's descriptor confinement
 *
 * Built twice: as is (openat2 RESOLVE_BENEATH) and with
 * -DRPMEMD_DB_NO_OPENAT2 on db_path.c (our own component walk).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db.h"
#include "db_fixture.h"
#include "tu_check.h"
#include "log.h"

START_TEST(test_descriptors_leaving_poolset_dir_are_refused)
{
	struct rpmem_pool_attr attr;
	struct db_pool *pool;
	char abs[128];

	dbt_attr(&attr, 14);
	/* a valid set outside poolset-dir, reachable only by escaping */
	dbt_write_set(dbt_base, "x.set", "", "x", 1, 2U);
	dbt_write_set(dbt_outside, "o.set", "", "o", 1, 2U);
	ck_assert_int_eq(mkdir(dbt_path(dbt_sets, "sub"), 0700), 0);
	ck_assert_int_eq(symlink(dbt_path(dbt_outside, "o.set"),
				dbt_path(dbt_sets, "abs_link.set")), 0);
	ck_assert_int_eq(symlink("../outside/o.set",
				dbt_path(dbt_sets, "rel_link.set")), 0);
	ck_assert_int_eq(symlink("../../outside",
				dbt_path(dbt_sets, "sub/up")), 0);
	snprintf(abs, sizeof(abs), "%s/x.set", dbt_base);

	ck_assert_int_eq(db_pool_create(dbt_db, "../x.set", &attr, &pool),
			-EACCES);
	ck_assert_int_eq(db_pool_create(dbt_db, abs, &attr, &pool), -EBADF);
	ck_assert_int_eq(db_pool_create(dbt_db, "sub/../../x.set", &attr,
				&pool), -EACCES);
	ck_assert_int_eq(db_pool_create(dbt_db, "abs_link.set", &attr, &pool),
			-EACCES);
	ck_assert_int_eq(db_pool_create(dbt_db, "rel_link.set", &attr, &pool),
			-EACCES);
	ck_assert_int_eq(db_pool_create(dbt_db, "sub/up/o.set", &attr, &pool),
			-EACCES);
	ck_assert_int_eq(db_pool_open(dbt_db, "rel_link.set", &pool), -EACCES);
	ck_assert_int_eq(db_pool_remove(dbt_db, "../x.set", true, true),
			-EACCES);
	ck_assert_int_eq(db_pool_remove(dbt_db, "rel_link.set", true, false),
			-EACCES);
	ck_assert_int_eq(db_pool_create(dbt_db, "", &attr, &pool), -EBADF);
	/* ".." is refused as such, even when it would stay inside */
	dbt_write_set(dbt_sets, "in.set", "", "in", 1, 2U);
	ck_assert_int_eq(db_pool_create(dbt_db, "sub/../in.set", &attr, &pool),
			-EACCES);
	ck_assert(!dbt_exists(dbt_part("in", 0)));

	ck_assert(!dbt_exists(dbt_part("x", 0)));
	ck_assert(!dbt_exists(dbt_part("o", 0)));
	ck_assert(dbt_exists(dbt_path(dbt_base, "x.set")));
	ck_assert(dbt_exists(dbt_path(dbt_outside, "o.set")));
}
END_TEST

START_TEST(test_refusal_log_names_the_descriptor)
{
	struct rpmem_pool_attr attr;
	struct db_pool *pool;
	char buf[4096];
	const char *log = dbt_path(dbt_base, "log");

	log_init("check_db", LOG_SINK_NONE, LOG_LVL_ERR);
	ck_assert_int_eq(log_to_file(log), 0);
	dbt_attr(&attr, 15);
	ck_assert_int_eq(db_pool_create(dbt_db, "../evil.set", &attr, &pool),
			-EACCES);
	log_close();

	int fd = open(log, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	ck_assert_ptr_nonnull(strstr(buf, "../evil.set"));
}
END_TEST

START_TEST(test_links_and_subdirs_beneath_are_followed)
{
	struct rpmem_pool_attr attr;
	struct db_pool *pool;

	dbt_attr(&attr, 16);
	ck_assert_int_eq(mkdir(dbt_path(dbt_sets, "sub"), 0700), 0);
	ck_assert_int_eq(mkdir(dbt_path(dbt_sets, "sub/deeper"), 0700), 0);
	dbt_write_set(dbt_sets, "sub/pool.set", "", "sp", 1, 2U);
	dbt_write_set(dbt_sets, "sub/deeper/d.set", "", "sd", 1, 2U);
	ck_assert_int_eq(symlink("../sub/deeper",
				dbt_path(dbt_sets, "sub/lnk")), 0);
	ck_assert_int_eq(symlink("deeper/d.set",
				dbt_path(dbt_sets, "sub/alias.set")), 0);

	ck_assert_int_eq(db_pool_create(dbt_db, "sub/pool.set", &attr, &pool),
			0);
	ck_assert_int_eq(db_pool_close(pool, false), 0);
	dbt_reopens("./sub//pool.set");
	ck_assert_int_eq(db_pool_create(dbt_db, "sub/lnk/d.set", &attr, &pool),
			0);
	ck_assert_int_eq(db_pool_close(pool, false), 0);
	dbt_reopens("sub/alias.set");
}
END_TEST

START_TEST(test_init_refuses_relative_missing_or_file_dir)
{
	struct db *db;

	ck_assert_int_eq(db_init("relative/dir", &db), -EINVAL);
	ck_assert_int_eq(db_init(dbt_path(dbt_base, "missing"), &db), -ENOENT);
	dbt_write_file(dbt_path(dbt_base, "file"), "not a directory\n");
	ck_assert_int_eq(db_init(dbt_path(dbt_base, "file"), &db), -ENOTDIR);
	ck_assert_int_eq(db_init(dbt_path(dbt_sets, "../parts"), &db), 0);
	db_fini(db);
	db_fini(NULL);
}
END_TEST

/* descriptors that resolve to no pool set file: each refused, as is */
START_TEST(test_descriptors_naming_no_set_file_are_refused)
{
	static const struct {
		const char *desc;
		int err;		/* 0: any error */
	} Cases[] = {
		{ "sub/", 0 },			/* a directory */
		{ "sub/missing/x.set", -ENOENT },
		{ "x.set/y.set", -ENOTDIR },	/* a file as a directory */
		{ "loop.set", -ELOOP },		/* a link to itself */
	};
	struct db_pool *pool;

	ck_assert_int_eq(mkdir(dbt_path(dbt_sets, "sub"), 0700), 0);
	dbt_write_set(dbt_sets, "x.set", "", "x", 1, 2U);
	ck_assert_int_eq(symlink("loop.set", dbt_path(dbt_sets, "loop.set")),
			0);
	for (size_t i = 0; i < TU_NELEMS(Cases); i++) {
		int r = db_pool_open(dbt_db, Cases[i].desc, &pool);
		if (Cases[i].err)
			ck_assert_msg(r == Cases[i].err, "%s: %d, not %d",
				Cases[i].desc, r, Cases[i].err);
		else
			ck_assert_msg(r < 0, "%s: %d", Cases[i].desc, r);
	}
	ck_assert(!dbt_exists(dbt_part("x", 0)));
}
END_TEST

/* db_path_suite -- every test above, each in its own temporary tree */
static Suite *
db_path_suite(void)
{
	TCase *tc;
	Suite *s = dbt_suite("db_path", "core", &tc);
	tcase_add_test(tc, test_descriptors_leaving_poolset_dir_are_refused);
	tcase_add_test(tc, test_refusal_log_names_the_descriptor);
	tcase_add_test(tc, test_links_and_subdirs_beneath_are_followed);
	tcase_add_test(tc, test_init_refuses_relative_missing_or_file_dir);
	tcase_add_test(tc, test_descriptors_naming_no_set_file_are_refused);
	return tu_suite_add(s, tc);
}

DBT_MAIN(db_path_suite)
