/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_db.c -- unit tests of rpmemd's pool set database: pool lifecycle
 *
 * Descriptor confinement is in check_db_path.c; the tree and helpers
 * both use are in db_fixture.c.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <stdbool.h>
#include <unistd.h>

#include "db.h"
#include "db_fixture.h"
#include "tu_check.h"
#include "pool_hdr.h"

START_TEST(test_create_then_open_returns_identical_attrs)
{
	struct rpmem_pool_attr attr;

	dbt_attr(&attr, 1);
	dbt_write_set(dbt_sets, "p.set", "", "p", 1, 4U);
	struct db_pool *pool = dbt_create("p.set", &attr);
	ck_assert(pool->created);
	ck_assert_uint_eq(pool->size, 4 * MIB);
	ck_assert_mem_eq(&pool->attr, &attr, sizeof(attr));
	dbt_close(pool);

	pool = dbt_open("p.set");
	ck_assert(!pool->created);
	ck_assert(!pool->no_headers);
	ck_assert_mem_eq(&pool->attr, &attr, sizeof(attr));
	dbt_close(pool);
}
END_TEST

START_TEST(test_headers_are_valid_pmdk_ring_of_three_parts)
{
	struct rpmem_pool_attr attr;
	struct pool_hdr h[3];

	dbt_attr(&attr, 2);
	dbt_write_set(dbt_sets, "r.set", "", "r", 3, 2U, 2U, 3U);
	struct db_pool *pool = dbt_create("r.set", &attr);
	ck_assert_uint_eq(pool->size, 7 * MIB - 2 * 4096);
	dbt_close(pool);

	for (unsigned i = 0; i < 3; i++) {
		dbt_read_hdr(dbt_part("r", i), &h[i]);
		ck_assert(pool_hdr_valid(&h[i]));
		ck_assert_mem_eq(h[i].signature, attr.signature, 8);
		ck_assert_mem_eq(h[i].poolset_uuid, attr.poolset_uuid, 16);
		ck_assert_mem_eq(h[i].next_repl_uuid, attr.next_uuid, 16);
		ck_assert_mem_eq(&h[i].arch_flags, attr.user_flags, 16);
	}
	ck_assert_mem_eq(h[0].uuid, attr.uuid, 16);
	ck_assert(memcmp(h[1].uuid, h[2].uuid, 16) != 0);
	for (unsigned i = 0; i < 3; i++) {
		ck_assert_mem_eq(h[i].next_part_uuid, h[(i + 1) % 3].uuid, 16);
		ck_assert_mem_eq(h[i].prev_part_uuid, h[(i + 2) % 3].uuid, 16);
	}
}
END_TEST

START_TEST(test_singlehdr_writes_header_in_part_0_only)
{
	struct rpmem_pool_attr attr;
	struct pool_hdr h;

	dbt_attr(&attr, 3);
	attr.incompat_features |= POOL_FEAT_SINGLEHDR;
	dbt_write_set(dbt_sets, "s.set", "OPTION SINGLEHDR\n", "s", 2, 2U, 2U);
	struct db_pool *pool = dbt_create("s.set", &attr);
	ck_assert_uint_eq(pool->size, 4 * MIB);
	dbt_close(pool);

	dbt_read_hdr(dbt_part("s", 0), &h);
	ck_assert(pool_hdr_valid(&h));
	ck_assert_mem_eq(h.next_part_uuid, attr.uuid, 16);
	dbt_read_hdr(dbt_part("s", 1), &h);
	ck_assert(pool_hdr_is_zero(&h));
	dbt_reopens_as("s.set", &attr);
}
END_TEST

START_TEST(test_zero_links_and_poolset_uuid_are_filled_in)
{
	struct rpmem_pool_attr attr;
	static const unsigned char zero[16];

	dbt_attr(&attr, 4);
	memset(attr.poolset_uuid, 0, 16);
	memset(attr.prev_uuid, 0, 16);
	dbt_write_set(dbt_sets, "z.set", "", "z", 1, 2U);
	struct db_pool *pool = dbt_create("z.set", &attr);
	ck_assert_mem_eq(pool->attr.prev_uuid, attr.uuid, 16);
	ck_assert(memcmp(pool->attr.poolset_uuid, zero, 16) != 0);
	dbt_close(pool);
}
END_TEST

START_TEST(test_create_over_existing_pool_is_eexist)
{
	struct rpmem_pool_attr attr;
	struct db_pool *pool;

	dbt_pool_made("e", 2, 5, &attr);
	ck_assert_int_eq(db_pool_create(dbt_db, "e.set", &attr, &pool),
			-EEXIST);
	/* the failed create must not have removed the existing pool */
	dbt_parts_kept("e", 2);
	dbt_reopens("e.set");
}
END_TEST

/* make_zero_file -- a hole of `mib` MiB at part 0 of `prefix` */
static void
make_zero_file(const char *prefix, unsigned mib)
{
	int fd = open(dbt_part(prefix, 0), O_RDWR | O_CREAT | O_EXCL, 0600);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)(mib * MIB)), 0);
	close(fd);
}

START_TEST(test_create_reuses_holey_zero_file_of_exact_size)
{
	struct rpmem_pool_attr attr;

	make_zero_file("h", 2);
	dbt_pool_made("h", 1, 6, &attr);
}
END_TEST

START_TEST(test_create_with_wrong_size_file_is_einval)
{
	struct rpmem_pool_attr attr;
	struct db_pool *pool;

	make_zero_file("w", 3);
	dbt_attr(&attr, 7);
	dbt_write_set(dbt_sets, "w.set", "", "w", 1, 2U);
	ck_assert_int_eq(db_pool_create(dbt_db, "w.set", &attr, &pool),
			-EINVAL);
	/* a file we did not create stays */
	ck_assert(dbt_exists(dbt_part("w", 0)));
}
END_TEST

START_TEST(test_open_missing_set_or_part_is_enoent)
{
	struct rpmem_pool_attr attr;
	struct db_pool *pool;

	ck_assert_int_eq(db_pool_open(dbt_db, "nothing.set", &pool), -ENOENT);

	dbt_pool_made("m", 2, 8, &attr);
	ck_assert_int_eq(unlink(dbt_part("m", 1)), 0);
	ck_assert_int_eq(db_pool_open(dbt_db, "m.set", &pool), -ENOENT);
}
END_TEST

START_TEST(test_second_session_gets_ebusy)
{
	struct rpmem_pool_attr attr;
	struct db_pool *other;

	dbt_attr(&attr, 9);
	dbt_write_set(dbt_sets, "b.set", "", "b", 2, 2U, 2U);
	struct db_pool *pool = dbt_create("b.set", &attr);
	ck_assert_int_eq(db_pool_create(dbt_db, "b.set", &attr, &other),
			-EBUSY);
	ck_assert_int_eq(db_pool_open(dbt_db, "b.set", &other), -EBUSY);
	dbt_close(pool);
	/* closing dropped the locks */
	dbt_reopens("b.set");
}
END_TEST

/*
 * the attributes create is given and what the set says must agree; a
 * refused create leaves no part behind
 */
static const struct refused {
	const char *opts;	/* the OPTION line of the set, or "" */
	unsigned second;	/* MiB of a second part, 0 for none */
	enum { FULL, NONE, ZERO, SINGLEHDR } attr; /* what create is given */
} Refused[] = {
	{ "OPTION NOHDRS\n", 2, FULL },	/* no headers to hold them */
	{ "", 0, NONE },		/* headers need attributes... */
	{ "", 0, ZERO },		/* ...which are not all zero */
	{ "OPTION SINGLEHDR\n", 0, FULL }, /* the option, not the feature */
	{ "", 0, SINGLEHDR },		/* the feature, not the option */
	{ "", 1, FULL },		/* a part below 2 MiB */
};

START_TEST(test_create_refuses_attrs_the_set_cannot_hold)
{
	const struct refused *c = &Refused[_i];
	struct rpmem_pool_attr attr;
	struct db_pool *pool;

	dbt_attr(&attr, 10);
	if (c->attr == ZERO)
		memset(&attr, 0, sizeof(attr));
	else if (c->attr == SINGLEHDR)
		attr.incompat_features |= POOL_FEAT_SINGLEHDR;
	dbt_write_set(dbt_sets, "r.set", c->opts, "r", c->second ? 2 : 1, 2U,
		c->second);
	ck_assert_int_eq(db_pool_create(dbt_db, "r.set",
		c->attr == NONE ? NULL : &attr, &pool), -EINVAL);
	dbt_parts_gone("r", 2);
}
END_TEST

START_TEST(test_nohdrs_pool_has_zero_attrs)
{
	struct rpmem_pool_attr attr;
	struct rpmem_pool_attr zero;

	dbt_attr(&attr, 10);
	memset(&zero, 0, sizeof(zero));
	dbt_write_set(dbt_sets, "n.set", "OPTION NOHDRS\n", "n", 2, 2U, 2U);
	struct db_pool *pool = dbt_create("n.set", NULL);
	ck_assert(pool->no_headers);
	ck_assert_uint_eq(pool->size, 4 * MIB);
	ck_assert_int_eq(db_pool_set_attr(pool, &attr), -EINVAL);
	dbt_close(pool);

	pool = dbt_open("n.set");
	ck_assert(pool->no_headers);
	ck_assert_mem_eq(&pool->attr, &zero, sizeof(zero));
	dbt_close(pool);
}
END_TEST

START_TEST(test_set_with_replica_is_einval)
{
	struct rpmem_pool_attr attr;
	struct db_pool *pool;
	char text[1024];

	snprintf(text, sizeof(text), "PMEMPOOLSET\n2M %s/q.0\n"
			"REPLICA user@host remote.set\n", dbt_parts);
	dbt_write_file(dbt_path(dbt_sets, "q.set"), text);
	dbt_attr(&attr, 13);
	ck_assert_int_eq(db_pool_create(dbt_db, "q.set", &attr, &pool),
			-EINVAL);
	ck_assert_int_eq(db_pool_open(dbt_db, "q.set", &pool), -EINVAL);
	ck_assert(!dbt_exists(dbt_part("q", 0)));
}
END_TEST

START_TEST(test_set_attr_then_reopen_returns_new_attrs)
{
	struct rpmem_pool_attr attr, next;
	struct pool_hdr h0, h1;

	dbt_attr(&attr, 17);
	dbt_attr(&next, 99);
	dbt_write_set(dbt_sets, "a.set", "", "a", 2, 2U, 2U);
	struct db_pool *pool = dbt_create("a.set", &attr);
	ck_assert_int_eq(db_pool_set_attr(pool, &next), 0);
	ck_assert_mem_eq(&pool->attr, &next, sizeof(next));
	dbt_close(pool);
	dbt_reopens_as("a.set", &next);

	dbt_read_hdr(dbt_part("a", 0), &h0);
	dbt_read_hdr(dbt_part("a", 1), &h1);
	ck_assert(pool_hdr_valid(&h1));
	ck_assert_mem_eq(h1.signature, next.signature, 8);
	ck_assert_mem_eq(h1.next_part_uuid, next.uuid, 16);
	ck_assert_mem_eq(h0.next_part_uuid, h1.uuid, 16);
}
END_TEST

START_TEST(test_open_refuses_corrupt_later_header)
{
	struct rpmem_pool_attr attr;
	struct db_pool *pool;

	dbt_pool_made("c", 2, 18, &attr);

	int fd = open(dbt_part("c", 1), O_RDWR);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, "X", 1, 100), 1);
	close(fd);
	ck_assert_int_eq(db_pool_open(dbt_db, "c.set", &pool), -EINVAL);
}
END_TEST

/* swap_hdr1 -- put part 1's header of pool `from` into pool `to` */
static void
swap_hdr1(const char *from, const char *to)
{
	char hdr[4096];
	int fd = open(dbt_part(from, 1), O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, hdr, sizeof(hdr), 0), sizeof(hdr));
	close(fd);
	fd = open(dbt_part(to, 1), O_RDWR);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, hdr, sizeof(hdr), 0), sizeof(hdr));
	close(fd);
}

START_TEST(test_open_refuses_a_valid_header_of_another_pool)
{
	struct rpmem_pool_attr attr, other;
	struct db_pool *pool;

	dbt_attr(&attr, 30);
	dbt_write_set(dbt_sets, "sa.set", "", "sa", 2, 2U, 2U);
	dbt_write_set(dbt_sets, "sb.set", "", "sb", 2, 2U, 2U);
	dbt_write_set(dbt_sets, "sc.set", "", "sc", 2, 2U, 2U);
	dbt_made("sa.set", &attr);
	/* the same signature and features, another poolset uuid */
	other = attr;
	other.poolset_uuid[0] ^= 1;
	other.uuid[0] ^= 1;
	dbt_made("sb.set", &other);
	/* even the same poolset uuid: the part uuid ring does not close */
	other = attr;
	other.uuid[0] ^= 2;
	dbt_made("sc.set", &other);

	swap_hdr1("sb", "sa");
	ck_assert_int_eq(db_pool_open(dbt_db, "sa.set", &pool), -EINVAL);
	swap_hdr1("sc", "sa");
	ck_assert_int_eq(db_pool_open(dbt_db, "sa.set", &pool), -EINVAL);
	/* its own pool still opens */
	dbt_reopens("sb.set");
}
END_TEST

START_TEST(test_remove_unlinks_parts_and_optionally_the_set)
{
	struct rpmem_pool_attr attr;

	dbt_pool_made("d", 2, 19, &attr);
	ck_assert_int_eq(db_pool_remove(dbt_db, "d.set", false, false), 0);
	dbt_parts_gone("d", 2);
	ck_assert(dbt_exists(dbt_path(dbt_sets, "d.set")));

	/* parts gone: -ENOENT unless forced */
	ck_assert_int_eq(db_pool_remove(dbt_db, "d.set", false, true), -ENOENT);
	ck_assert(dbt_exists(dbt_path(dbt_sets, "d.set")));
	ck_assert_int_eq(db_pool_remove(dbt_db, "d.set", true, true), 0);
	ck_assert(!dbt_exists(dbt_path(dbt_sets, "d.set")));

	ck_assert_int_eq(mkdir(dbt_path(dbt_sets, "sub"), 0700), 0);
	dbt_write_set(dbt_sets, "sub/d2.set", "", "d2", 1, 2U);
	dbt_made("sub/d2.set", &attr);
	ck_assert_int_eq(db_pool_remove(dbt_db, "sub/d2.set", false, true), 0);
	ck_assert(!dbt_exists(dbt_part("d2", 0)));
	ck_assert(!dbt_exists(dbt_path(dbt_sets, "sub/d2.set")));
}
END_TEST

/*
 * a pool a session holds loses nothing, forced or not: the session would
 * go on writing into unlinked files (PMDK never unlinks a part it cannot
 * lock)
 */
START_TEST(test_remove_of_locked_pool_is_ebusy_even_forced)
{
	struct rpmem_pool_attr attr;

	dbt_attr(&attr, 20);
	dbt_write_set(dbt_sets, "l.set", "", "l", 2, 2U, 2U);
	struct db_pool *pool = dbt_create("l.set", &attr);
	for (int force = 0; force < 2; force++) {
		ck_assert_int_eq(db_pool_remove(dbt_db, "l.set", force, false),
			-EBUSY);
		dbt_parts_kept("l", 2);
	}
	dbt_close(pool);
	ck_assert_int_eq(db_pool_remove(dbt_db, "l.set", true, false), 0);
	dbt_parts_gone("l", 2);
}
END_TEST

/*
 * a part missing: the others are removed all the same and the error is
 * still reported (PMDK does so; pmempool rm relies on it)
 */
START_TEST(test_remove_with_a_part_missing_removes_the_rest)
{
	struct rpmem_pool_attr attr;

	dbt_pool_made("m", 3, 21, &attr);
	ck_assert_int_eq(unlink(dbt_part("m", 1)), 0);
	ck_assert_int_eq(db_pool_remove(dbt_db, "m.set", false, true),
		-ENOENT);
	ck_assert(!dbt_exists(dbt_part("m", 0)));
	ck_assert(!dbt_exists(dbt_part("m", 2)));
	ck_assert(dbt_exists(dbt_path(dbt_sets, "m.set")));
}
END_TEST

START_TEST(test_close_with_remove_unlinks_parts)
{
	struct rpmem_pool_attr attr;

	dbt_attr(&attr, 21);
	dbt_write_set(dbt_sets, "k.set", "", "k", 2, 2U, 2U);
	ck_assert_int_eq(db_pool_close(dbt_create("k.set", &attr), true), 0);
	dbt_parts_gone("k", 2);
	ck_assert(dbt_exists(dbt_path(dbt_sets, "k.set")));
}
END_TEST

START_TEST(test_multi_part_pool_is_contiguous_across_parts)
{
	struct rpmem_pool_attr attr;
	const size_t boundary = 2 * MIB;	/* end of part 0 in the pool */
	const size_t off = boundary - 100;
	char data[200];
	char back[200];

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (char)(i * 13 + 1);

	dbt_attr(&attr, 22);
	dbt_write_set(dbt_sets, "g.set", "", "g", 3, 2U, 2U, 2U);
	struct db_pool *pool = dbt_create("g.set", &attr);
	ck_assert_uint_eq(pool->size, 6 * MIB - 2 * 4096);
	memcpy((char *)pool->addr + off, data, sizeof(data));
	memset((char *)pool->addr + pool->size - 8, 0x5a, 8);
	ck_assert_int_eq(db_pool_persist(pool, off, sizeof(data)), 0);
	ck_assert_int_eq(db_pool_persist(pool, pool->size - 8, 8), 0);
	dbt_close(pool);

	/* the second half lives right after part 1's own header */
	int fd = open(dbt_part("g", 1), O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, back, 100, 4096), 100);
	close(fd);
	ck_assert_mem_eq(back, data + 100, 100);

	pool = dbt_open("g.set");
	ck_assert_mem_eq((char *)pool->addr + off, data, sizeof(data));
	ck_assert_uint_eq(((unsigned char *)pool->addr)[pool->size - 1],
			0x5a);
	dbt_close(pool);
}
END_TEST

/*
 * smaps -- what follows `key` ("VmFlags:", "Rss:"...) in the entry of
 * /proc/self/smaps of the mapping holding `addr` ("" when not found)
 */
static void
smaps(const void *addr, const char *key, char *out, size_t len)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false;
	out[0] = '\0';
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
				strchr(line, '-') < strchr(line, ' '))
			in = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
		else if (in && strncmp(line, key, strlen(key)) == 0) {
			snprintf(out, len, "%s", line + strlen(key));
			break;
		}
	}
	if (f)
		fclose(f);
}

/* smaps_kb -- a size field of smaps, in kB (-1 when not found) */
static long
smaps_kb(const void *addr, const char *key)
{
	char v[512];
	smaps(addr, key, v, sizeof(v));
	return v[0] ? strtol(v, NULL, 10) : -1;
}

/*
 * huge pages, and pages faulted in writable ahead of the client, only
 * where nothing is written back: with a file system's large folios, one
 * msync of a small persist wrote 2 MiB, and a pool prefaulted writable
 * was all dirty, all written back to disk after each open; there a
 * store dirties one page (read-around's folios made it 942 kB)
 */
START_TEST(test_huge_pages_only_where_nothing_is_written_back)
{
	struct rpmem_pool_attr attr;
	dbt_attr(&attr, 1);
	dbt_write_set(dbt_sets, "h.set", "", "h", 1, 64U);
	struct db_pool *pool = dbt_create("h.set", &attr);
	struct statfs st;
	ck_assert_int_eq(statfs(dbt_parts, &st), 0);
	bool want = pool->is_pmem || st.f_type == TMPFS_MAGIC;
	char flags[512];
	smaps(pool->addr, "VmFlags:", flags, sizeof(flags));
	ck_assert_msg(flags[0], "no VmFlags for the pool's mapping");
	ck_assert_msg((strstr(flags, " hg") != NULL) == want,
		"pool on %s (is_pmem %d): VmFlags%s", st.f_type ==
		TMPFS_MAGIC ? "tmpfs" : "a file system that writes back",
		pool->is_pmem, flags);
	if (!want) {
		/* the walk maps every page; the headers alone are dirty */
		for (int i = 0; i < 1000 && smaps_kb(pool->addr, "Rss:") <
				(long)(pool->size >> 10); i++)
			usleep(10000);
		ck_assert_int_eq(smaps_kb(pool->addr, "Rss:"),
			(long)(pool->size >> 10));
		long dirty = smaps_kb(pool->addr, "Shared_Dirty:") +
			smaps_kb(pool->addr, "Private_Dirty:");
		ck_assert_msg(dirty <= 64, "%ld kB of the %zu kB pool dirty "
			"after its pages were faulted in", dirty,
			pool->size >> 10);
		/* a store dirties one page, not a read-around folio */
		ck_assert_msg(strstr(flags, " rr") != NULL,
			"no MADV_RANDOM on a file system: VmFlags%s", flags);
		*(volatile uint64_t *)((char *)pool->addr + pool->size / 4 * 3) =
			1;
		long more = smaps_kb(pool->addr, "Shared_Dirty:") +
			smaps_kb(pool->addr, "Private_Dirty:") - dirty;
		ck_assert_msg(more <= 4, "an 8-byte store dirtied %ld kB",
			more);
	}
	dbt_close(pool);
}
END_TEST

START_TEST(test_persist_refuses_ranges_outside_the_pool)
{
	struct rpmem_pool_attr attr;

	dbt_attr(&attr, 23);
	dbt_write_set(dbt_sets, "v.set", "", "v", 1, 2U);
	struct db_pool *pool = dbt_create("v.set", &attr);
	ck_assert_int_eq(db_pool_persist(pool, 0, pool->size), 0);
	ck_assert_int_eq(db_pool_persist(pool, pool->size, 0), 0);
	ck_assert_int_eq(db_pool_persist(pool, 4096, pool->size), -EINVAL);
	ck_assert_int_eq(db_pool_persist(pool, pool->size, 1), -EINVAL);
	ck_assert_int_eq(db_pool_persist(pool, 8, SIZE_MAX - 4), -EINVAL);
	ck_assert_int_eq(db_pool_persist(pool, SIZE_MAX, 2), -EINVAL);
	dbt_close(pool);
}
END_TEST

START_TEST(test_failed_allocation_removes_created_parts)
{
	struct rpmem_pool_attr attr;
	struct db_pool *pool;
	struct rlimit rl;
	struct rlimit saved;

	/* the third part cannot be allocated past the file size limit */
	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &saved), 0);
	rl.rlim_cur = 3 * MIB;
	rl.rlim_max = saved.rlim_max;
	signal(SIGXFSZ, SIG_IGN);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	dbt_attr(&attr, 24);
	dbt_write_set(dbt_sets, "f.set", "", "f", 3, 2U, 2U, 4U);
	ck_assert_int_eq(db_pool_create(dbt_db, "f.set", &attr, &pool), -EFBIG);
	dbt_parts_gone("f", 3);
	rl.rlim_cur = saved.rlim_cur;
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	signal(SIGXFSZ, SIG_DFL);
}
END_TEST

/* db_suite -- every test above, each in its own temporary tree */
static Suite *
db_suite(void)
{
	TCase *tc;
	Suite *s = dbt_suite("db", "core", &tc);
	tcase_add_test(tc, test_create_then_open_returns_identical_attrs);
	tcase_add_test(tc, test_headers_are_valid_pmdk_ring_of_three_parts);
	tcase_add_test(tc, test_singlehdr_writes_header_in_part_0_only);
	tcase_add_test(tc, test_zero_links_and_poolset_uuid_are_filled_in);
	tcase_add_test(tc, test_create_over_existing_pool_is_eexist);
	tcase_add_test(tc, test_create_reuses_holey_zero_file_of_exact_size);
	tcase_add_test(tc, test_create_with_wrong_size_file_is_einval);
	tcase_add_test(tc, test_open_missing_set_or_part_is_enoent);
	tcase_add_test(tc, test_second_session_gets_ebusy);
	TU_LOOP(tc, test_create_refuses_attrs_the_set_cannot_hold, Refused);
	tcase_add_test(tc, test_nohdrs_pool_has_zero_attrs);
	tcase_add_test(tc, test_set_with_replica_is_einval);
	tcase_add_test(tc, test_set_attr_then_reopen_returns_new_attrs);
	tcase_add_test(tc, test_open_refuses_corrupt_later_header);
	tcase_add_test(tc, test_open_refuses_a_valid_header_of_another_pool);
	tcase_add_test(tc, test_remove_unlinks_parts_and_optionally_the_set);
	tcase_add_test(tc, test_remove_of_locked_pool_is_ebusy_even_forced);
	tcase_add_test(tc, test_remove_with_a_part_missing_removes_the_rest);
	tcase_add_test(tc, test_close_with_remove_unlinks_parts);
	tcase_add_test(tc, test_multi_part_pool_is_contiguous_across_parts);
	tcase_add_test(tc, test_huge_pages_only_where_nothing_is_written_back);
	tcase_add_test(tc, test_persist_refuses_ranges_outside_the_pool);
	tcase_add_test(tc, test_failed_allocation_removes_created_parts);
	return tu_suite_add(s, tc);
}

DBT_MAIN(db_suite)
