/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_pmemobj_skip.c -- unit tests of the libpmemobj run-time state
 * that rpmem verify skips, its ends checked against the installed
 * libpmemobj
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpmemobj.h>

#include "pmemobj_skip.h"
#include "tu_check.h"

#define POOL_SIZE ((size_t)8 << 20)
#define DESC_END 8192		/* end of libpmemobj's pool descriptor */
#define UUID_LO_OFF 6872	/* a run-time field the API shows too */

/* obj_attr -- a header saying PMEMOBJ of format `major` */
static struct rpmem_pool_attr
obj_attr(const char *sig, uint32_t major)
{
	struct rpmem_pool_attr a;
	memset(&a, 0, sizeof(a));
	memcpy(a.signature, sig, strnlen(sig, sizeof(a.signature)));
	a.major = major;
	return a;
}

START_TEST(test_pmemobj_format_6_skips_the_run_time_fields)
{
	struct rpmem_pool_attr a = obj_attr("PMEMOBJ", 6);
	const struct replica_skip *l;
	ck_assert_uint_eq(pmemobj_skip_list(&a, POOL_SIZE, &l), 1);
	/* after the persistent descriptor and fields, before the end */
	ck_assert_uint_eq(l[0].off, 6688);
	ck_assert_uint_eq(l[0].len, 584);
	ck_assert_ptr_nonnull(strstr(l[0].what, "libpmemobj"));
}
END_TEST

/* headers that must not be taken for libpmemobj 1.12's */
static const struct {
	const char *sig;
	uint32_t major;
	size_t size;
} Not_obj[] = {
	{ "RPMEMPL", 6, POOL_SIZE },	/* rpmem create's pools */
	{ "PMEMOBJ", 5, POOL_SIZE },	/* libpmemobj 1.5 and 1.6 */
	{ "PMEMOBJ", 7, POOL_SIZE },	/* a format not yet known */
	{ "PMEMOBJX", 6, POOL_SIZE },	/* no NUL after the name */
	{ "PMEMBLK", 6, POOL_SIZE },
	{ "", 0, POOL_SIZE },		/* OPTION NOHDRS */
	{ "PMEMOBJ", 6, DESC_END - 1 },	/* too small to hold it */
};

START_TEST(test_other_headers_skip_nothing)
{
	struct rpmem_pool_attr a = obj_attr(Not_obj[_i].sig,
		Not_obj[_i].major);
	const struct replica_skip *l = (void *)&a;
	ck_assert_uint_eq(pmemobj_skip_list(&a, Not_obj[_i].size, &l), 0);
	ck_assert_ptr_null(l);
}
END_TEST

/* word -- the 8 bytes at offset `off` of the pool */
static uint64_t
word(PMEMobjpool *pop, size_t off)
{
	uint64_t v;
	memcpy(&v, (char *)pop + off, sizeof(v));
	return v;
}

/*
 * The installed libpmemobj's own pool: the first skipped byte starts its
 * mapping address, the last ends its user data, a field between holds
 * what the API calls the pool's uuid_lo, and what follows is untouched.
 */
START_TEST(test_ends_match_the_installed_libpmemobj)
{
	const char *tmp = getenv("TMPDIR");
	char path[4096];
	snprintf(path, sizeof(path), "%s/check_pmemobj_skip.XXXXXX",
		tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(path));
	char pool[4200];
	snprintf(pool, sizeof(pool), "%s/pool", path);
	PMEMobjpool *pop = pmemobj_create(pool, "skip", POOL_SIZE, 0600);
	ck_assert_msg(pop, "pmemobj_create: %s", pmemobj_errormsg());

	struct rpmem_pool_attr a;
	memset(&a, 0, sizeof(a));
	memcpy(a.signature, pop, sizeof(a.signature));
	memcpy(&a.major, (char *)pop + sizeof(a.signature), sizeof(a.major));
	const struct replica_skip *l;
	ck_assert_uint_eq(pmemobj_skip_list(&a, POOL_SIZE, &l), 1);
	size_t end = l[0].off + l[0].len;

	ck_assert_uint_eq(word(pop, l[0].off), (uintptr_t)pop);
	PMEMoid root = pmemobj_root(pop, 64);
	ck_assert(!OID_IS_NULL(root));
	ck_assert_uint_eq(word(pop, UUID_LO_OFF), root.pool_uuid_lo);
	uint64_t mark = 0x5ec0ffee0ddba11ULL;
	pmemobj_set_user_data(pop, (void *)(uintptr_t)mark);
	ck_assert_uint_eq(word(pop, end - sizeof(mark)), mark);
	for (size_t off = end; off < DESC_END; off++)
		ck_assert_uint_eq(((unsigned char *)pop)[off], 0);

	pmemobj_close(pop);
	ck_assert_int_eq(unlink(pool), 0);
	ck_assert_int_eq(rmdir(path), 0);
}
END_TEST

/* pmemobj_skip_suite -- the skip list and its check */
static Suite *
pmemobj_skip_suite(void)
{
	TCase *tc;
	Suite *s = tu_suite("pmemobj_skip", "list", NULL, NULL, &tc);

	tcase_add_test(tc, test_pmemobj_format_6_skips_the_run_time_fields);
	TU_LOOP(tc, test_other_headers_skip_nothing, Not_obj);
	tcase_add_test(tc, test_ends_match_the_installed_libpmemobj);
	return tu_suite_add(s, tc);
}

/* main -- run pmemobj_skip_suite() (tu_check.h) */
TU_MAIN(pmemobj_skip_suite)
