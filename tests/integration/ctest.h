/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctest.h -- what the control-path test files share (ctest.c): the
 * environment control.sh set, pool set files, and assertions on a
 * refused call's errno and rpmem_errormsg()
 */
#ifndef RPMEM_CTEST_H
#define RPMEM_CTEST_H 1

#include <check.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "itest.h"
#include "librpmem.h"
#include "tu.h"
#include "tu_check.h"

#define MIB ((size_t)1 << 20)
#define POOL_SIZE (8 * MIB)
#define NLANES 4U
#define MAX_PARTS 4
#define MSG_MAX 1024
#define MAX_ERRS 8

/* what control.sh set (control.c reads it) */
struct ctest_env {
	struct tu_target t;	/* RPMEM_TEST_TARGET, _POOLSET_DIR, _PART_DIR */
	const char *outside_dir;
	const char *ssh_calls;
	const char *expect_msg;
	const char *dead_target;
	int expect_errno[MAX_ERRS + 1];	/* 0-terminated */
};
extern struct ctest_env env;

/* a pool set file and the part files it names */
struct tset {
	char desc[PATH_MAX];	/* descriptor, relative to poolset-dir */
	char path[PATH_MAX];	/* the set file */
	unsigned nparts;
	char part[MAX_PARTS][PATH_MAX];
};

/* rpmem_errormsg() of the last expected failure */
extern char last_msg[MSG_MAX];

/* exists -- is there a directory entry (even a dangling link) at path? */
bool exists(const char *path);

/* set_write -- write set_dir/name.set naming nparts parts in part_dir */
void set_write(struct tset *s, const char *set_dir, const char *name,
	const char *part_dir, unsigned nparts, size_t part_size,
	const char *option);

/* pool_set -- a set in the poolset dir with parts in the part dir */
void pool_set(struct tset *s, const char *name, unsigned nparts,
	size_t part_size, const char *option);

/* set_unlink -- remove the set file and its parts */
void set_unlink(const struct tset *s);

/* parts_exist -- how many of the set's part files exist */
unsigned parts_exist(const struct tset *s);

/* victims_make -- create the set's parts as plain files, "victim" inside */
void victims_make(const struct tset *s);

/* page_size -- the system page size */
size_t page_size(void);

/* ssh_runs -- how many times RPMEM_SSH was started so far */
unsigned ssh_runs(void);

/* no_children -- librpmem reaped every ssh it started */
void no_children(const char *what);

/* refused_in -- create/open returned NULL with an errno in `errs` */
void refused_in(RPMEMpool *rpp, const int *errs, const char *what);

/* refused -- create/open returned NULL with errno `err` */
void refused(RPMEMpool *rpp, int err, const char *what);

/* failed_in -- an int-returning call gave -1 with an errno in `errs` */
void failed_in(int ret, const int *errs, const char *what);

/* failed -- an int-returning call gave -1 with errno `err` */
void failed(int ret, int err, const char *what);

/* msg_has -- last_msg contains `needle` */
void msg_has(const char *needle, const char *what);

/* attr_make -- attributes with NUL and newline bytes, non-zero uuids */
void attr_make(struct rpmem_pool_attr *a, unsigned char seed);

/* attr_eq -- two attribute sets are equal byte for byte */
void attr_eq(const struct rpmem_pool_attr *got,
	const struct rpmem_pool_attr *want, const char *what);

/* part_signature_is -- the part file's header starts with `sig` */
void part_signature_is(const char *part, const char *sig);

/* create_ok -- create the set's pool with `attr`, return the handle */
RPMEMpool *create_ok(const struct tset *s, void *mem, size_t size,
	const struct rpmem_pool_attr *attr);

/* open_ok -- open the set's pool, attributes into `attr` */
RPMEMpool *open_ok(const struct tset *s, void *mem, size_t size,
	struct rpmem_pool_attr *attr);

/* reopens_with -- the set's pool opens with attributes `want`, closes */
void reopens_with(const struct tset *s, void *mem, size_t size,
	const struct rpmem_pool_attr *want, const char *what);

/*
 * create_refused -- a create of the set's pool with `attr` is refused
 * with `err`, makes no part and leaves no ssh behind
 */
void create_refused(const struct tset *s, void *mem, size_t size,
	const struct rpmem_pool_attr *attr, int err, const char *what);

/* open_refused -- an open of `desc` is refused with `err`, no ssh left */
void open_refused(const char *desc, void *mem, size_t size, int err,
	const char *what);

/* ctest_tcase -- a new test case `name`, added to suite `s` */
TCase *ctest_tcase(Suite *s, const char *name);

/* the groups of tests of each file, added to the suite of control.c */
void ctest_add_pool(Suite *s);		/* control_pool.c */
void ctest_add_arguments(Suite *s);	/* control_args.c */
void ctest_add_confinement(Suite *s);	/* control_confine.c */
Suite *ctest_suite_refused(const char *group);	/* control_refused.c */

#endif /* RPMEM_CTEST_H */
