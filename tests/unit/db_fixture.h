/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * db_fixture.h -- shared temporary tree and helpers of the db unit tests
 *
 * Every test gets a fresh tree: sets/ (poolset-dir), parts/ (part files)
 * and outside/ (what confinement must keep us away from), all beneath one
 * root that dbt_run removes even when a test failed.
 */
#ifndef DB_FIXTURE_H
#define DB_FIXTURE_H 1

#include <check.h>
#include <stddef.h>

#include "db.h"
#include "pool_hdr.h"

#define MIB ((size_t)1 << 20)

/* small enough that every path built from them fits PATH_MAX */
extern char dbt_base[48];
extern char dbt_sets[64];
extern char dbt_parts[64];
extern char dbt_outside[64];
extern struct db *dbt_db;	/* on dbt_sets */

/* dbt_setup -- the tree and dbt_db; a Check checked fixture */
void dbt_setup(void);

/* dbt_teardown -- close dbt_db and remove the tree */
void dbt_teardown(void);

/* dbt_run -- run `s` under a fresh root; EXIT_SUCCESS or EXIT_FAILURE */
int dbt_run(Suite *s);

/* DBT_MAIN -- the main of a db test program: dbt_run the suite of `make` */
#define DBT_MAIN(make) \
int main(void); \
int \
main(void) \
{ \
	return dbt_run(make()); \
}

/* dbt_path -- "<dir>/<name>" from a small ring of static buffers */
const char *dbt_path(const char *dir, const char *name);

/* dbt_part -- parts/<prefix>.<i>, the name dbt_write_set gives part i */
const char *dbt_part(const char *prefix, unsigned i);

/* dbt_write_file -- create `path` holding `text` */
void dbt_write_file(const char *path, const char *text);

/*
 * dbt_write_set -- set file `name` in `dir`: `opts` lines (may be ""),
 * then one part per unsigned size in MiB, named by dbt_part(prefix, i)
 */
void dbt_write_set(const char *dir, const char *name, const char *opts,
		const char *prefix, unsigned nparts, ...);

/* dbt_exists -- whether `path` exists, a dangling symlink included */
int dbt_exists(const char *path);

/* dbt_attr -- attributes with NUL, newline and seed-dependent bytes */
void dbt_attr(struct rpmem_pool_attr *attr, unsigned char seed);

/* dbt_read_hdr -- the first 4 KiB of a file */
void dbt_read_hdr(const char *path, struct pool_hdr *hdr);

/* dbt_suite -- a suite whose case `tcase` (*tc) runs each test in a tree */
Suite *dbt_suite(const char *name, const char *tcase, TCase **tc);

/* dbt_create -- the pool of set `set`, created with `attr` */
struct db_pool *dbt_create(const char *set,
		const struct rpmem_pool_attr *attr);

/* dbt_open -- the pool of set `set`, opened */
struct db_pool *dbt_open(const char *set);

/* dbt_close -- close `pool`, keeping its parts */
void dbt_close(struct db_pool *pool);

/* dbt_made -- create the pool of set `set` with `attr`, then close it */
void dbt_made(const char *set, const struct rpmem_pool_attr *attr);

/*
 * dbt_pool_made -- attributes `attr` of `seed`, set <prefix>.set of
 * `nparts` (at most 3) parts of 2 MiB, its pool made
 */
void dbt_pool_made(const char *prefix, unsigned nparts, unsigned char seed,
		struct rpmem_pool_attr *attr);

/* dbt_reopens -- the pool of set `set` opens, then closes */
void dbt_reopens(const char *set);

/* dbt_reopens_as -- the pool of set `set` opens with `attr`, then closes */
void dbt_reopens_as(const char *set, const struct rpmem_pool_attr *attr);

/* dbt_parts_gone -- none of parts 0..n-1 of `prefix` exists */
void dbt_parts_gone(const char *prefix, unsigned n);

/* dbt_parts_kept -- every one of parts 0..n-1 of `prefix` exists */
void dbt_parts_kept(const char *prefix, unsigned n);

#endif /* DB_FIXTURE_H */
