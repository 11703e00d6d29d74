/* SPDX-License-Identifier: BSD-3-Clause */
/* check_poolset.c -- unit tests of the poolset file parser */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "poolset.h"
#include "tu_check.h"

#define NAME "pool.set"
#define HDR "PMEMPOOLSET\n"

/*
 * Allocation failures are injected through the linker's --wrap of malloc,
 * realloc and calloc.  The references are weak so that a build without
 * --wrap still links; the fault test then registers itself only when
 * wrapping is active.
 */
void *__real_malloc(size_t size) __attribute__((weak));
void *__real_realloc(void *ptr, size_t size) __attribute__((weak));
void *__real_calloc(size_t n, size_t size) __attribute__((weak));
void *__wrap_malloc(size_t size);
void *__wrap_realloc(void *ptr, size_t size);
void *__wrap_calloc(size_t n, size_t size);

static long fail_countdown = -1;	/* allocations left before failing */
static long nallocs;			/* allocations seen while armed */

/* alloc_fails -- whether the armed countdown says to fail this call */
static int
alloc_fails(void)
{
	if (fail_countdown < 0)
		return 0;
	nallocs++;
	return fail_countdown-- == 0;
}

/* __wrap_malloc -- malloc that fails on request */
void *
__wrap_malloc(size_t size)
{
	return alloc_fails() ? NULL : __real_malloc(size);
}

/* __wrap_realloc -- realloc that fails on request */
void *
__wrap_realloc(void *ptr, size_t size)
{
	return alloc_fails() ? NULL : __real_realloc(ptr, size);
}

/* __wrap_calloc -- calloc that fails on request */
void *
__wrap_calloc(size_t n, size_t size)
{
	return alloc_fails() ? NULL : __real_calloc(n, size);
}

/* parse_ok -- parse text that must be accepted */
static struct poolset *
parse_ok(const char *text)
{
	char err[POOLSET_ERR_MAX];
	struct poolset *set = NULL;
	int ret = poolset_parse_buf(NAME, text, strlen(text), &set, err,
			sizeof(err));
	ck_assert_msg(ret == 0, "ret %d, err '%s'", ret, err);
	ck_assert_ptr_nonnull(set);
	ck_assert_str_eq(err, "");
	return set;
}

/* parse_bad_n -- parse len bytes that must be refused with -EINVAL */
static void
parse_bad_n(const char *text, size_t len, unsigned line, const char *key)
{
	char err[POOLSET_ERR_MAX];
	char prefix[64];
	struct poolset *set = (struct poolset *)&set;	/* sentinel */

	int ret = poolset_parse_buf(NAME, text, len, &set, err, sizeof(err));
	ck_assert_int_eq(ret, -EINVAL);
	ck_assert_ptr_eq(set, (struct poolset *)&set);
	snprintf(prefix, sizeof(prefix), NAME ":%u: ", line);
	ck_assert_msg(strncmp(err, prefix, strlen(prefix)) == 0,
			"'%s' does not start with '%s'", err, prefix);
	ck_assert_msg(strstr(err, key) != NULL, "'%s' lacks '%s'", err, key);
}

/* parse_bad -- parse a string that must be refused with -EINVAL */
static void
parse_bad(const char *text, unsigned line, const char *key)
{
	parse_bad_n(text, strlen(text), line, key);
}

START_TEST(test_single_part_is_master_replica)
{
	struct poolset *set = parse_ok(HDR "1M /mnt/pmem0/part0\n");
	ck_assert_uint_eq(set->options, 0);
	ck_assert_uint_eq(set->nreplicas, 1);
	ck_assert(!set->replicas[0].remote);
	ck_assert_ptr_null(set->replicas[0].target);
	ck_assert_uint_eq(set->replicas[0].line, 1);
	ck_assert_uint_eq(set->replicas[0].nparts, 1);
	ck_assert_str_eq(set->replicas[0].parts[0].path, "/mnt/pmem0/part0");
	ck_assert_uint_eq(set->replicas[0].parts[0].size, 1 << 20);
	ck_assert_uint_eq(set->replicas[0].parts[0].line, 2);
	ck_assert(!poolset_has_remote(set));
	poolset_free(set);
}
END_TEST

START_TEST(test_many_parts_keep_order_sizes_and_lines)
{
	char text[8192] = HDR;
	for (unsigned i = 0; i < 100; i++) {
		char line[64];
		snprintf(line, sizeof(line), "%uK /p/%u\n", i + 1, i);
		strcat(text, line);
	}
	struct poolset *set = parse_ok(text);
	ck_assert_uint_eq(set->replicas[0].nparts, 100);
	for (unsigned i = 0; i < 100; i++) {
		char path[32];
		snprintf(path, sizeof(path), "/p/%u", i);
		ck_assert_str_eq(set->replicas[0].parts[i].path, path);
		ck_assert_uint_eq(set->replicas[0].parts[i].size,
				(i + 1) * 1024UL);
		ck_assert_uint_eq(set->replicas[0].parts[i].line, i + 2);
	}
	poolset_free(set);
}
END_TEST

START_TEST(test_size_suffixes_are_powers_of_1024_any_case)
{
	static const char *const tail[] = { "", "B", "iB" };
	static const char units[] = "KMGT";

	for (unsigned u = 0; u < 4; u++) {
		for (unsigned f = 0; f < 3; f++) {
			for (unsigned lc = 0; lc < 2; lc++) {
				char str[16];
				size_t size = 0;
				snprintf(str, sizeof(str), "3%c%s", units[u],
						tail[f]);
				for (char *c = str; lc && *c; c++)
					*c = (char)(*c | 0x20);
				ck_assert_int_eq(poolset_parse_size(str,
						&size), 0);
				ck_assert_uint_eq(size,
						(size_t)3 << (10 * (u + 1)));
			}
		}
	}
	size_t size = 0;
	ck_assert_int_eq(poolset_parse_size("4096", &size), 0);
	ck_assert_uint_eq(size, 4096);
	ck_assert_int_eq(poolset_parse_size("0", &size), 0);
	ck_assert_uint_eq(size, 0);
	ck_assert_int_eq(poolset_parse_size("007k", &size), 0);
	ck_assert_uint_eq(size, 7168);
	ck_assert_int_eq(poolset_parse_size("2MiB", &size), 0);
	ck_assert_uint_eq(size, 2 << 20);
	ck_assert_int_eq(poolset_parse_size("2mIb", &size), 0);
	ck_assert_uint_eq(size, 2 << 20);
}
END_TEST

START_TEST(test_size_limits_accept_max_and_refuse_overflow)
{
	size_t size = 0;
	ck_assert_int_eq(poolset_parse_size("18446744073709551615", &size),
			0);
	ck_assert_uint_eq(size, SIZE_MAX);
	ck_assert_int_eq(poolset_parse_size("16777215T", &size), 0);
	ck_assert_uint_eq(size, (size_t)16777215 << 40);
	ck_assert_int_eq(poolset_parse_size("17179869183G", &size), 0);
	ck_assert_int_eq(poolset_parse_size("18446744073709551616", &size),
			-ERANGE);
	ck_assert_int_eq(poolset_parse_size("16777216T", &size), -ERANGE);
	ck_assert_int_eq(poolset_parse_size("17179869184G", &size),
			-ERANGE);
	ck_assert_int_eq(poolset_parse_size("99999999999T", &size),
			-ERANGE);
	ck_assert_int_eq(poolset_parse_size(
			"999999999999999999999999999999", &size), -ERANGE);
}
END_TEST

START_TEST(test_size_garbage_is_refused)
{
	static const char *const bad[] = {
		"", "K", "12Q", "-1", "+1", " 1", "1 ", "1KiBB", "1iB", "1B",
		"1Ki", "1KBB", "0x10", "1.5M", "1P", "AUTO", "1M\n", "1 M",
		"99999999999999999999999Q",
	};
	size_t size = 12345;
	for (size_t i = 0; i < TU_NELEMS(bad); i++)
		ck_assert_msg(poolset_parse_size(bad[i], &size) == -EINVAL,
				"'%s' accepted", bad[i]);
	ck_assert_uint_eq(size, 12345);
	ck_assert_int_eq(poolset_parse_size(NULL, &size), -EINVAL);
	ck_assert_int_eq(poolset_parse_size("1", NULL), -EINVAL);
}
END_TEST

START_TEST(test_comments_blanks_tabs_and_crlf_are_ignored)
{
	struct poolset *set = parse_ok("PMEMPOOLSET\r\n"
			"# a comment line\r\n"
			"\r\n"
			"   \t  \n"
			"\t2M\t\t/p/a   # trailing comment\n"
			"#REPLICA\n"
			"3M /p/b#glued comment\r\n"
			"4k /p/c");
	ck_assert_uint_eq(set->nreplicas, 1);
	ck_assert_uint_eq(set->replicas[0].nparts, 3);
	ck_assert_str_eq(set->replicas[0].parts[0].path, "/p/a");
	ck_assert_uint_eq(set->replicas[0].parts[0].line, 5);
	ck_assert_str_eq(set->replicas[0].parts[1].path, "/p/b");
	ck_assert_uint_eq(set->replicas[0].parts[1].size, 3 << 20);
	ck_assert_str_eq(set->replicas[0].parts[2].path, "/p/c");
	ck_assert_uint_eq(set->replicas[0].parts[2].line, 8);
	poolset_free(set);
}
END_TEST

START_TEST(test_long_lines_have_no_fixed_limit)
{
	size_t plen = 4000;
	char *text = malloc(plen + 64);
	ck_assert_ptr_nonnull(text);
	strcpy(text, HDR "1G /");
	size_t off = strlen(text);
	memset(text + off, 'x', plen - 1);
	strcpy(text + off + plen - 1, "\n");
	struct poolset *set = parse_ok(text);
	ck_assert_uint_eq(strlen(set->replicas[0].parts[0].path), plen);
	poolset_free(set);

	/* a path that could never be opened is refused early */
	free(text);
	text = malloc(PATH_MAX + 64);
	ck_assert_ptr_nonnull(text);
	strcpy(text, HDR "1G /");
	off = strlen(text);
	memset(text + off, 'y', PATH_MAX - 1);
	strcpy(text + off + PATH_MAX - 1, "\n");
	parse_bad(text, 2, "longer than");
	free(text);
}
END_TEST

START_TEST(test_options_are_recorded_wherever_they_appear)
{
	struct poolset *set = parse_ok(HDR "OPTION SINGLEHDR\n1M /p\n");
	ck_assert_uint_eq(set->options, POOLSET_OPT_SINGLEHDR);
	poolset_free(set);

	set = parse_ok(HDR "1M /p\n  OPTION\tNOHDRS # why not\n");
	ck_assert_uint_eq(set->options, POOLSET_OPT_NOHDRS);
	poolset_free(set);

	set = parse_ok(HDR "OPTION SINGLEHDR SINGLEHDR\n1M /p\n"
			"OPTION SINGLEHDR\n");
	ck_assert_uint_eq(set->options, POOLSET_OPT_SINGLEHDR);
	poolset_free(set);
}
END_TEST

START_TEST(test_local_replicas_get_their_own_parts)
{
	struct poolset *set = parse_ok(HDR "1M /a0\n2M /a1\n"
			"REPLICA\n3M /b0\n"
			"# gap\n"
			"REPLICA  # comment\n4M /c0\n5M /c1\n6M /c2\n");
	ck_assert_uint_eq(set->nreplicas, 3);
	ck_assert_uint_eq(set->replicas[0].nparts, 2);
	ck_assert_uint_eq(set->replicas[1].nparts, 1);
	ck_assert_uint_eq(set->replicas[1].line, 4);
	ck_assert_str_eq(set->replicas[1].parts[0].path, "/b0");
	ck_assert_uint_eq(set->replicas[2].nparts, 3);
	ck_assert_uint_eq(set->replicas[2].line, 7);
	ck_assert_str_eq(set->replicas[2].parts[2].path, "/c2");
	ck_assert(!poolset_has_remote(set));
	poolset_free(set);
}
END_TEST

START_TEST(test_remote_replicas_keep_target_and_descriptor)
{
	struct poolset *set = parse_ok(HDR "8M /local\n"
			"REPLICA user@host:2222 dir/remote.set\n"
			"REPLICA user@[::1]:1234 pool.set # v6\n"
			"REPLICA 192.168.0.1 sub/dir/x.set\n"
			"REPLICA host.example another.set\n");
	ck_assert(poolset_has_remote(set));
	ck_assert_uint_eq(set->nreplicas, 5);
	ck_assert(!set->replicas[0].remote);

	static const char *const tgt[] = { "user@host:2222",
		"user@[::1]:1234", "192.168.0.1", "host.example" };
	static const char *const desc[] = { "dir/remote.set", "pool.set",
		"sub/dir/x.set", "another.set" };
	for (unsigned i = 0; i < 4; i++) {
		const struct poolset_replica *r = &set->replicas[i + 1];
		ck_assert(r->remote);
		ck_assert_str_eq(r->target, tgt[i]);
		ck_assert_str_eq(r->desc, desc[i]);
		ck_assert_uint_eq(r->nparts, 0);
		ck_assert_ptr_null(r->parts);
		ck_assert_uint_eq(r->line, i + 3);
	}
	poolset_free(set);
}
END_TEST

START_TEST(test_local_replica_may_follow_remote_one)
{
	struct poolset *set = parse_ok(HDR "8M /a\nREPLICA h r.set\n"
			"REPLICA\n8M /b\n");
	ck_assert_uint_eq(set->nreplicas, 3);
	ck_assert(set->replicas[1].remote);
	ck_assert(!set->replicas[2].remote);
	ck_assert_str_eq(set->replicas[2].parts[0].path, "/b");
	poolset_free(set);
}
END_TEST

START_TEST(test_missing_or_inexact_header_is_refused)
{
	parse_bad("", 1, "PMEMPOOLSET");
	parse_bad("1M /p\n", 1, "missing PMEMPOOLSET header");
	parse_bad("PMEMPOOLSET \n1M /p\n", 1, "PMEMPOOLSET");
	parse_bad("pmempoolset\n1M /p\n", 1, "PMEMPOOLSET");
	parse_bad("# comment\nPMEMPOOLSET\n1M /p\n", 1, "PMEMPOOLSET");
	parse_bad("PMEMPOOLSET # x\n1M /p\n", 1, "PMEMPOOLSET");
	parse_bad("\nPMEMPOOLSET\n1M /p\n", 1, "PMEMPOOLSET");
}
END_TEST

START_TEST(test_set_without_parts_is_refused)
{
	parse_bad(HDR, 1, "no parts");
	parse_bad("PMEMPOOLSET", 1, "no parts");
	parse_bad(HDR "# nothing\n\nOPTION SINGLEHDR\n", 1, "no parts");
	parse_bad(HDR "REPLICA\n1M /p\n", 2, "master replica has no parts");
}
END_TEST

START_TEST(test_bad_part_lines_are_refused_with_reason)
{
	char err[POOLSET_ERR_MAX];
	struct poolset *set = NULL;
	const char *text = HDR "1M /a\n12Q /b\n";
	ck_assert_int_eq(poolset_parse_buf(NAME, text, strlen(text), &set,
			err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "pool.set:3: invalid size '12Q'");

	parse_bad(HDR "99999999999T /p\n", 2, "too large");
	parse_bad(HDR "0 /p\n", 2, "zero size");
	parse_bad(HDR "0G /p\n", 2, "zero size");
	parse_bad(HDR "-1 /p\n", 2, "invalid size");
	parse_bad(HDR "1M relative/p\n", 2, "not absolute");
	parse_bad(HDR "1M ./p\n", 2, "not absolute");
	parse_bad(HDR "1M\n", 2, "missing path");
	parse_bad(HDR "1M # /p\n", 2, "missing path");
	parse_bad(HDR "1M /p /q\n", 2, "unexpected token '/q'");
	parse_bad(HDR "AUTO /dev/dax0.0\n", 2,
			"AUTO sizes are not supported");
	parse_bad(HDR "auto /dev/dax0.0\n", 2, "AUTO sizes");
	parse_bad(HDR "replica\n1M /p\n", 2, "invalid size 'replica'");
	parse_bad(HDR "1M /p\x01q\n", 2, "control character 0x01");
	parse_bad(HDR "1M /p\r/q\n", 2, "control character 0x0d");
}
END_TEST

START_TEST(test_bad_remote_lines_are_refused_with_reason)
{
	parse_bad(HDR "1M /p\nREPLICA host\n", 3, "missing descriptor");
	parse_bad(HDR "1M /p\nREPLICA host a.set extra\n", 3,
			"unexpected token 'extra'");
	parse_bad(HDR "1M /p\nREPLICA host /abs/a.set\n", 3,
			"must be a relative path");
	parse_bad(HDR "1M /p\nREPLICA -oProxyCommand=x a.set\n", 3,
			"invalid remote target '-oProxyCommand=x'");
	parse_bad(HDR "1M /p\nREPLICA user@-host a.set\n", 3,
			"invalid remote target");
	parse_bad(HDR "1M /p\nREPLICA user@[::1 a.set\n", 3,
			"invalid remote target");
	parse_bad(HDR "1M /p\nREPLICA host a.set\n1M /q\n", 4,
			"unexpected parts for remote replica");
	parse_bad(HDR "REPLICA host a.set\n1M /p\n", 2,
			"master replica must be local");
}
END_TEST

START_TEST(test_empty_local_replica_is_refused_at_its_line)
{
	parse_bad(HDR "1M /p\nREPLICA\n", 3, "local replica has no parts");
	parse_bad(HDR "1M /p\nREPLICA\n# c\n\nREPLICA\n1M /q\n", 3,
			"local replica has no parts");
	parse_bad(HDR "1M /p\nREPLICA\nREPLICA host a.set\n", 3,
			"local replica has no parts");
}
END_TEST

START_TEST(test_bad_options_are_refused_with_reason)
{
	parse_bad(HDR "1M /p\nOPTION FOO\n", 3, "unknown option 'FOO'");
	parse_bad(HDR "OPTION SINGLEHDR singlehdr\n1M /p\n", 2,
			"unknown option 'singlehdr'");
	parse_bad(HDR "OPTION\n1M /p\n", 2, "OPTION without");
	parse_bad(HDR "OPTION SINGLEHDR NOHDRS\n1M /p\n", 2,
			"SINGLEHDR and NOHDRS");
	parse_bad(HDR "OPTION NOHDRS\n1M /p\nOPTION SINGLEHDR\n", 4,
			"SINGLEHDR and NOHDRS");
}
END_TEST

START_TEST(test_nul_byte_is_refused_naming_its_line)
{
	static const char t1[] = HDR "1M /p\n1M /q\0x\n";
	parse_bad_n(t1, sizeof(t1) - 1, 3, "NUL byte");
	static const char t2[] = HDR "1M /p # c\0mment\n";
	parse_bad_n(t2, sizeof(t2) - 1, 2, "NUL byte");
	static const char t3[] = "PMEMPOOLSET\0\n1M /p\n";
	parse_bad_n(t3, sizeof(t3) - 1, 1, "NUL byte");
	static const char t4[] = HDR "1M /p\n\0";
	parse_bad_n(t4, sizeof(t4) - 1, 3, "NUL byte");
}
END_TEST

START_TEST(test_error_message_is_truncated_safely)
{
	char err[8];
	struct poolset *set = NULL;
	const char *text = HDR "12Q /p\n";
	memset(err, 'z', sizeof(err));
	ck_assert_int_eq(poolset_parse_buf(NAME, text, strlen(text), &set,
			err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "pool.se");

	memset(err, 'z', sizeof(err));
	ck_assert_int_eq(poolset_parse_buf(NAME, text, strlen(text), &set,
			err, 1), -EINVAL);
	ck_assert_int_eq(err[0], '\0');
	ck_assert_int_eq(err[1], 'z');
	ck_assert_int_eq(poolset_parse_buf(NAME, text, strlen(text), &set,
			NULL, 0), -EINVAL);
	ck_assert_ptr_null(set);
}
END_TEST

START_TEST(test_invalid_arguments_are_refused)
{
	char err[POOLSET_ERR_MAX];
	struct poolset *set = NULL;
	ck_assert_int_eq(poolset_parse_buf(NAME, HDR, 5, NULL, err,
			sizeof(err)), -EINVAL);
	ck_assert_int_eq(poolset_parse_buf(NAME, NULL, 5, &set, err,
			sizeof(err)), -EINVAL);
	ck_assert_int_eq(poolset_parse_buf(NAME, NULL, 0, &set, err,
			sizeof(err)), -EINVAL);
	ck_assert_ptr_null(set);
	ck_assert_int_eq(poolset_parse_file(NULL, &set, err, sizeof(err)),
			-EINVAL);
	poolset_free(NULL);
}
END_TEST

START_TEST(test_replica_size_default_spends_header_per_part)
{
	struct poolset *set = parse_ok(HDR "1052672 /a\n2M /b\n"
			"3000000 /c\n10 /d\n");
	size_t want = (1052672UL & ~4095UL) +
			((2UL << 20) - 4096) +
			((3000000UL & ~4095UL) - 4096) + 0;
	ck_assert_uint_eq(poolset_replica_size(set, 0), want);
	poolset_free(set);

	set = parse_ok(HDR "100 /a\n");
	ck_assert_uint_eq(poolset_replica_size(set, 0), 0);
	poolset_free(set);

	set = parse_ok(HDR "4097 /a\n");
	ck_assert_uint_eq(poolset_replica_size(set, 0), 4096);
	poolset_free(set);
}
END_TEST

START_TEST(test_replica_size_singlehdr_and_nohdrs_spend_no_extra)
{
	static const char *const opt[] = { "SINGLEHDR", "NOHDRS" };
	for (unsigned i = 0; i < 2; i++) {
		char text[256];
		snprintf(text, sizeof(text), HDR "OPTION %s\n"
				"1052673 /a\n2M /b\n3000000 /c\n", opt[i]);
		struct poolset *set = parse_ok(text);
		size_t want = (1052673UL & ~4095UL) + (2UL << 20) +
				(3000000UL & ~4095UL);
		ck_assert_uint_eq(poolset_replica_size(set, 0), want);
		poolset_free(set);
	}
}
END_TEST

START_TEST(test_replica_size_of_each_replica_remote_and_bounds)
{
	struct poolset *set = parse_ok(HDR "8M /a\nREPLICA h r.set\n"
			"REPLICA\n4M /b\n4M /c\n");
	ck_assert_uint_eq(poolset_replica_size(set, 0), 8UL << 20);
	ck_assert_uint_eq(poolset_replica_size(set, 1), 0);
	ck_assert_uint_eq(poolset_replica_size(set, 2),
			(8UL << 20) - 4096);
	ck_assert_uint_eq(poolset_replica_size(set, 3), 0);
	ck_assert_uint_eq(poolset_replica_size(set, UINT_MAX), 0);
	ck_assert_uint_eq(poolset_replica_size(NULL, 0), 0);
	ck_assert(!poolset_has_remote(NULL));
	poolset_free(set);

	set = parse_ok(HDR "OPTION NOHDRS\n16000000T /a\n16000000T /b\n");
	ck_assert_uint_eq(poolset_replica_size(set, 0), SIZE_MAX);
	poolset_free(set);
}
END_TEST

/* write_file -- create `path` holding `len` bytes of `data` */
static void
write_file(const char *path, const char *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
	close(fd);
}

/* tmp_path -- a per-process scratch name, so parallel runs do not clash */
static void
tmp_path(char *buf, size_t len, const char *what)
{
	const char *dir = getenv("TMPDIR");
	snprintf(buf, len, "%s/check_poolset.%d.%s", dir ? dir : "/tmp",
			(int)getpid(), what);
}

START_TEST(test_parse_file_reports_missing_file_with_path)
{
	char err[POOLSET_ERR_MAX];
	char path[256];
	struct poolset *set = NULL;
	tmp_path(path, sizeof(path), "missing");
	unlink(path);
	ck_assert_int_eq(poolset_parse_file(path, &set, err, sizeof(err)),
			-ENOENT);
	ck_assert_ptr_null(set);
	ck_assert_ptr_nonnull(strstr(err, path));
	ck_assert_ptr_nonnull(strstr(err, strerror(ENOENT)));
}
END_TEST

START_TEST(test_parse_file_reads_file_and_names_it_in_errors)
{
	char err[POOLSET_ERR_MAX];
	char path[256], want[300];
	struct poolset *set = NULL;
	tmp_path(path, sizeof(path), "set");

	const char good[] = HDR "2M /p\nREPLICA u@h x.set\n";
	write_file(path, good, sizeof(good) - 1);
	ck_assert_int_eq(poolset_parse_file(path, &set, err, sizeof(err)), 0);
	ck_assert_uint_eq(set->nreplicas, 2);
	ck_assert_str_eq(set->replicas[1].desc, "x.set");
	poolset_free(set);
	set = NULL;

	const char bad[] = HDR "2M /p\n2M rel\n";
	write_file(path, bad, sizeof(bad) - 1);
	ck_assert_int_eq(poolset_parse_file(path, &set, err, sizeof(err)),
			-EINVAL);
	snprintf(want, sizeof(want), "%s:3: ", path);
	ck_assert_int_eq(strncmp(err, want, strlen(want)), 0);
	ck_assert_ptr_null(set);
	unlink(path);
}
END_TEST

START_TEST(test_parse_file_caps_size_at_one_mib)
{
	char err[POOLSET_ERR_MAX];
	char path[256];
	struct poolset *set = NULL;
	size_t max = (size_t)1 << 20;
	char *data = malloc(max + 1);
	ck_assert_ptr_nonnull(data);
	tmp_path(path, sizeof(path), "big");

	/* exactly 1 MiB: header, one part, then a comment filling the rest */
	const char head[] = HDR "2M /p\n#";
	memcpy(data, head, sizeof(head) - 1);
	memset(data + sizeof(head) - 1, 'c', max - sizeof(head));
	data[max - 1] = '\n';
	write_file(path, data, max);
	ck_assert_int_eq(poolset_parse_file(path, &set, err, sizeof(err)), 0);
	poolset_free(set);
	set = NULL;

	data[max - 1] = 'c';
	data[max] = '\n';
	write_file(path, data, max + 1);
	ck_assert_int_eq(poolset_parse_file(path, &set, err, sizeof(err)),
			-EFBIG);
	ck_assert_ptr_nonnull(strstr(err, path));
	ck_assert_ptr_nonnull(strstr(err, "1 MiB"));
	ck_assert_ptr_null(set);
	unlink(path);
	free(data);
}
END_TEST

START_TEST(test_parse_file_refuses_directory_and_fifo)
{
	char err[POOLSET_ERR_MAX];
	char path[256];
	struct poolset *set = NULL;
	tmp_path(path, sizeof(path), "dir");

	ck_assert_int_eq(mkdir(path, 0700), 0);
	ck_assert_int_eq(poolset_parse_file(path, &set, err, sizeof(err)),
			-EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "not a regular file"));
	rmdir(path);

	/* with no writer, a blocking open of a FIFO would never return */
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(poolset_parse_file(path, &set, NULL, 0), -EINVAL);
	ck_assert_ptr_null(set);
	unlink(path);
}
END_TEST

START_TEST(test_allocation_failures_return_enomem_without_leaks)
{
	const char text[] = HDR "OPTION SINGLEHDR\n1M /a\n1M /b\n1M /c\n"
			"1M /d\n1M /e\nREPLICA h1 a.set\nREPLICA\n1M /f\n"
			"REPLICA u@[::1]:22 b.set\nREPLICA\n1M /g\n";
	char err[POOLSET_ERR_MAX];
	long n;
	int ret;

	for (n = 0; n < 1000; n++) {
		struct poolset *set = NULL;
		nallocs = 0;
		fail_countdown = n;
		ret = poolset_parse_buf(NAME, text, sizeof(text) - 1, &set,
				err, sizeof(err));
		fail_countdown = -1;
		if (ret == 0) {
			ck_assert_uint_eq(set->nreplicas, 5);
			poolset_free(set);
			break;
		}
		ck_assert_int_eq(ret, -ENOMEM);
		ck_assert_ptr_null(set);
		ck_assert_ptr_nonnull(strstr(err, "out of memory"));
	}
	/* every allocation of a full parse was made to fail once */
	ck_assert_int_gt(n, 10);
	ck_assert_int_eq(nallocs, n);
}
END_TEST

/* poolset_suite -- all parser tests */
static Suite *
poolset_suite(void)
{
	TCase *tc;
	Suite *s = tu_suite("poolset", "good", NULL, NULL, &tc);
	tcase_add_test(tc, test_single_part_is_master_replica);
	tcase_add_test(tc, test_many_parts_keep_order_sizes_and_lines);
	tcase_add_test(tc, test_size_suffixes_are_powers_of_1024_any_case);
	tcase_add_test(tc, test_size_limits_accept_max_and_refuse_overflow);
	tcase_add_test(tc, test_comments_blanks_tabs_and_crlf_are_ignored);
	tcase_add_test(tc, test_long_lines_have_no_fixed_limit);
	tcase_add_test(tc, test_options_are_recorded_wherever_they_appear);
	tcase_add_test(tc, test_local_replicas_get_their_own_parts);
	tcase_add_test(tc, test_remote_replicas_keep_target_and_descriptor);
	tcase_add_test(tc, test_local_replica_may_follow_remote_one);
	suite_add_tcase(s, tc);

	tc = tcase_create("bad");
	tcase_add_test(tc, test_size_garbage_is_refused);
	tcase_add_test(tc, test_missing_or_inexact_header_is_refused);
	tcase_add_test(tc, test_set_without_parts_is_refused);
	tcase_add_test(tc, test_bad_part_lines_are_refused_with_reason);
	tcase_add_test(tc, test_bad_remote_lines_are_refused_with_reason);
	tcase_add_test(tc, test_empty_local_replica_is_refused_at_its_line);
	tcase_add_test(tc, test_bad_options_are_refused_with_reason);
	tcase_add_test(tc, test_nul_byte_is_refused_naming_its_line);
	tcase_add_test(tc, test_error_message_is_truncated_safely);
	tcase_add_test(tc, test_invalid_arguments_are_refused);
	suite_add_tcase(s, tc);

	tc = tcase_create("size");
	tcase_add_test(tc, test_replica_size_default_spends_header_per_part);
	tcase_add_test(tc,
			test_replica_size_singlehdr_and_nohdrs_spend_no_extra);
	tcase_add_test(tc, test_replica_size_of_each_replica_remote_and_bounds);
	suite_add_tcase(s, tc);

	tc = tcase_create("file");
	tcase_add_test(tc, test_parse_file_reports_missing_file_with_path);
	tcase_add_test(tc, test_parse_file_reads_file_and_names_it_in_errors);
	tcase_add_test(tc, test_parse_file_caps_size_at_one_mib);
	tcase_add_test(tc, test_parse_file_refuses_directory_and_fifo);
	suite_add_tcase(s, tc);

	/* only a link with -Wl,--wrap=malloc,... can inject failures */
	if (__real_malloc != NULL) {
		tc = tcase_create("enomem");
		tcase_add_test(tc,
			test_allocation_failures_return_enomem_without_leaks);
		suite_add_tcase(s, tc);
	}
	return s;
}

/* main -- run poolset_suite() (tu_check.h) */
TU_MAIN(poolset_suite)
