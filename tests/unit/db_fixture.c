/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * db_fixture.c -- shared temporary tree and helpers of the db unit tests
 */
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db_fixture.h"
#include "tu.h"
#include "tu_check.h"

static char Root[24];
char dbt_base[48];
char dbt_sets[64];
char dbt_parts[64];
char dbt_outside[64];
struct db *dbt_db;

/* dbt_setup -- the temporary tree and a db on sets/ */
void
dbt_setup(void)
{
	snprintf(dbt_base, sizeof(dbt_base), "%s/t.XXXXXX", Root);
	ck_assert_ptr_nonnull(mkdtemp(dbt_base));
	snprintf(dbt_sets, sizeof(dbt_sets), "%s/sets", dbt_base);
	snprintf(dbt_parts, sizeof(dbt_parts), "%s/parts", dbt_base);
	snprintf(dbt_outside, sizeof(dbt_outside), "%s/outside", dbt_base);
	ck_assert_int_eq(mkdir(dbt_sets, 0700), 0);
	ck_assert_int_eq(mkdir(dbt_parts, 0700), 0);
	ck_assert_int_eq(mkdir(dbt_outside, 0700), 0);
	ck_assert_int_eq(db_init(dbt_sets, &dbt_db), 0);
}

/* dbt_teardown -- remove the whole tree */
void
dbt_teardown(void)
{
	db_fini(dbt_db);
	dbt_db = NULL;
	(void) tu_rmtree(dbt_base);
}

/*
 * dbt_run -- a failed assertion ends a forked test before its teardown,
 * so the root is removed here, after every test has run
 */
int
dbt_run(Suite *s)
{
	strcpy(Root, "/tmp/check_db.XXXXXX");
	if (mkdtemp(Root) == NULL) {
		perror("mkdtemp");
		return EXIT_FAILURE;
	}

	int ret = tu_run(s);
	(void) tu_rmtree(Root);
	return ret;
}

/* dbt_path -- "<dir>/<name>" in a static buffer ring */
const char *
dbt_path(const char *dir, const char *name)
{
	static char buf[8][PATH_MAX];
	static unsigned next;
	char *p = buf[next++ % 8];

	snprintf(p, PATH_MAX, "%s/%s", dir, name);
	return p;
}

/* dbt_part -- parts/<prefix>.<i> */
const char *
dbt_part(const char *prefix, unsigned i)
{
	static char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s/%s.%u", dbt_parts, prefix, i);
	return buf;
}

/* dbt_write_file -- create `path` holding `text` */
void
dbt_write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_ge(fputs(text, f), 0);
	ck_assert_int_eq(fclose(f), 0);
}

/* dbt_write_set -- a set file of `nparts` parts sized in MiB */
void
dbt_write_set(const char *dir, const char *name, const char *opts,
		const char *prefix, unsigned nparts, ...)
{
	char text[4096];
	int len = snprintf(text, sizeof(text), "PMEMPOOLSET\n%s", opts);
	va_list ap;

	va_start(ap, nparts);
	for (unsigned i = 0; i < nparts; i++) {
		unsigned mib = va_arg(ap, unsigned);
		len += snprintf(text + len, sizeof(text) - (size_t)len,
				"%uM %s/%s.%u\n", mib, dbt_parts, prefix, i);
	}
	va_end(ap);
	dbt_write_file(dbt_path(dir, name), text);
}

/* dbt_exists -- whether a path exists (not following a final symlink) */
int
dbt_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* dbt_attr -- attributes with NUL, newline and high bytes */
void
dbt_attr(struct rpmem_pool_attr *attr, unsigned char seed)
{
	memset(attr, 0, sizeof(*attr));
	memcpy(attr->signature, "<RP\0M\n>", 8);
	attr->major = 6;
	attr->compat_features = 0x1;
	attr->incompat_features = POOL_FEAT_CKSUM_2K | POOL_FEAT_SDS;
	for (unsigned i = 0; i < 16; i++) {
		attr->poolset_uuid[i] = (unsigned char)(seed + 0xa0 + i);
		attr->uuid[i] = (unsigned char)(seed + 0x10 + i);
		attr->next_uuid[i] = (unsigned char)(seed + 0x20 + i);
		attr->prev_uuid[i] = (unsigned char)(seed + 0x30 + i);
		attr->user_flags[i] = (unsigned char)(i % 3 == 0 ? '\0' :
				i % 3 == 1 ? '\n' : seed);
	}
}

/* dbt_read_hdr -- the first 4 KiB of a file */
void
dbt_read_hdr(const char *path, struct pool_hdr *hdr)
{
	int fd = open(path, O_RDONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, hdr, sizeof(*hdr), 0), sizeof(*hdr));
	close(fd);
}

/* dbt_suite -- a suite whose case `tcase` (*tc) runs each test in a tree */
Suite *
dbt_suite(const char *name, const char *tcase, TCase **tc)
{
	Suite *s = tu_suite(name, tcase, dbt_setup, dbt_teardown, tc);
	tcase_set_timeout(*tc, 60);
	return s;
}

/* dbt_create -- the pool of set `set`, created with `attr` */
struct db_pool *
dbt_create(const char *set, const struct rpmem_pool_attr *attr)
{
	struct db_pool *pool;
	int ret = db_pool_create(dbt_db, set, attr, &pool);
	ck_assert_msg(ret == 0, "create of %s: %d", set, ret);
	return pool;
}

/* dbt_open -- the pool of set `set`, opened */
struct db_pool *
dbt_open(const char *set)
{
	struct db_pool *pool;
	int ret = db_pool_open(dbt_db, set, &pool);
	ck_assert_msg(ret == 0, "open of %s: %d", set, ret);
	return pool;
}

/* dbt_close -- close `pool`, keeping its parts */
void
dbt_close(struct db_pool *pool)
{
	int ret = db_pool_close(pool, false);
	ck_assert_msg(ret == 0, "close: %d", ret);
}

/* dbt_made -- create the pool of set `set` with `attr`, then close it */
void
dbt_made(const char *set, const struct rpmem_pool_attr *attr)
{
	dbt_close(dbt_create(set, attr));
}

/* dbt_pool_made -- dbt_made of <prefix>.set: `nparts` parts of 2 MiB */
void
dbt_pool_made(const char *prefix, unsigned nparts, unsigned char seed,
		struct rpmem_pool_attr *attr)
{
	char set[64];

	snprintf(set, sizeof(set), "%s.set", prefix);
	dbt_attr(attr, seed);
	ck_assert_uint_le(nparts, 3);
	dbt_write_set(dbt_sets, set, "", prefix, nparts, 2U, 2U, 2U);
	dbt_made(set, attr);
}

/* dbt_reopens -- the pool of set `set` opens, then closes */
void
dbt_reopens(const char *set)
{
	dbt_close(dbt_open(set));
}

/* dbt_reopens_as -- the pool of set `set` opens with `attr`, then closes */
void
dbt_reopens_as(const char *set, const struct rpmem_pool_attr *attr)
{
	struct db_pool *pool = dbt_open(set);
	ck_assert_mem_eq(&pool->attr, attr, sizeof(*attr));
	dbt_close(pool);
}

/* dbt_parts_gone -- none of parts 0..n-1 of `prefix` exists */
void
dbt_parts_gone(const char *prefix, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		ck_assert_msg(!dbt_exists(dbt_part(prefix, i)), "%s is left",
			dbt_part(prefix, i));
}

/* dbt_parts_kept -- every one of parts 0..n-1 of `prefix` exists */
void
dbt_parts_kept(const char *prefix, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		ck_assert_msg(dbt_exists(dbt_part(prefix, i)), "%s is gone",
			dbt_part(prefix, i));
}
