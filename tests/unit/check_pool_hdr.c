/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_pool_hdr.c -- unit tests of the PMDK-compatible pool header
 */
#include <check.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pool_hdr.h"
#include "tu_check.h"

/*
 * ref_checksum -- an independent byte-wise model of PMDK's header
 * checksum: 1024 little-endian words, the checksum word and everything
 * from `end` on read as zero, each word still adding lo into hi
 */
static uint64_t
ref_checksum(const unsigned char *b, size_t end)
{
	uint64_t lo = 0;
	uint64_t hi = 0;

	for (size_t off = 0; off < 4096; off += 4) {
		uint64_t w = 0;

		if (off < end && off != 4088 && off != 4092)
			w = (uint64_t)b[off] | (uint64_t)b[off + 1] << 8 |
				(uint64_t)b[off + 2] << 16 |
				(uint64_t)b[off + 3] << 24;
		lo = (lo + w) & 0xffffffffU;
		hi = (hi + lo) & 0xffffffffU;
	}
	return hi << 32 | lo;
}

/* sample_attr -- attributes with NUL, newline and high bytes */
static void
sample_attr(struct rpmem_pool_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	memcpy(attr->signature, "<RP\0M\n>", 8);
	attr->major = 6;
	attr->compat_features = 0x1;
	attr->incompat_features = POOL_FEAT_CKSUM_2K;
	attr->ro_compat_features = 0x80000000U;
	for (unsigned i = 0; i < 16; i++) {
		attr->poolset_uuid[i] = (unsigned char)(0xa0 + i);
		attr->uuid[i] = (unsigned char)(0x10 + i);
		attr->next_uuid[i] = (unsigned char)(0x20 + i);
		attr->prev_uuid[i] = (unsigned char)(0x30 + i);
		attr->user_flags[i] = (unsigned char)(i % 3 == 0 ? '\0' :
				i % 3 == 1 ? '\n' : '~');
	}
}

/* new_hdr -- a zeroed header; if `obj`, signed PMEMOBJ, major 6 */
static struct pool_hdr *
new_hdr(bool obj)
{
	struct pool_hdr *hdr = calloc(1, sizeof(*hdr));

	ck_assert_ptr_nonnull(hdr);
	if (obj) {
		memcpy(hdr->signature, "PMEMOBJ", 8);
		hdr->major = 6;
	}
	return hdr;
}

START_TEST(test_layout_matches_pmdk_offsets)
{
	ck_assert_uint_eq(sizeof(struct pool_hdr), 4096);
	ck_assert_uint_eq(offsetof(struct pool_hdr, major), 8);
	ck_assert_uint_eq(offsetof(struct pool_hdr, features), 12);
	ck_assert_uint_eq(offsetof(struct pool_hdr, poolset_uuid), 24);
	ck_assert_uint_eq(offsetof(struct pool_hdr, uuid), 40);
	ck_assert_uint_eq(offsetof(struct pool_hdr, prev_part_uuid), 56);
	ck_assert_uint_eq(offsetof(struct pool_hdr, next_part_uuid), 72);
	ck_assert_uint_eq(offsetof(struct pool_hdr, prev_repl_uuid), 88);
	ck_assert_uint_eq(offsetof(struct pool_hdr, next_repl_uuid), 104);
	ck_assert_uint_eq(offsetof(struct pool_hdr, crtime), 120);
	ck_assert_uint_eq(offsetof(struct pool_hdr, arch_flags), 128);
	ck_assert_uint_eq(offsetof(struct pool_hdr, unused), 144);
	ck_assert_uint_eq(offsetof(struct pool_hdr, unused2), 2048);
	ck_assert_uint_eq(offsetof(struct pool_hdr, sds), 4024);
	ck_assert_uint_eq(offsetof(struct pool_hdr, checksum), 4088);
	ck_assert_uint_eq(sizeof(struct pool_sds), 64);
	ck_assert_uint_eq(sizeof(struct pool_arch_flags), 16);
}
END_TEST

START_TEST(test_fletcher64_small_vector_by_hand)
{
	/* words 1 and 2: lo = 3, hi = 1 + 3 = 4 */
	const unsigned char buf[8] = { 1, 0, 0, 0, 2, 0, 0, 0 };

	ck_assert_uint_eq(pool_hdr_fletcher64(buf, 8, 8), 0x0000000400000003);
	/* the second word skipped still adds lo into hi: lo 1, hi 2 */
	ck_assert_uint_eq(pool_hdr_fletcher64(buf, 8, 4), 0x0000000200000001);
}
END_TEST

START_TEST(test_checksum_of_zero_header_is_zero_and_invalid)
{
	struct pool_hdr *hdr = new_hdr(false);

	ck_assert_uint_eq(pool_hdr_checksum(hdr), 0);
	ck_assert(pool_hdr_is_zero(hdr));
	ck_assert(!pool_hdr_valid(hdr));
	free(hdr);
}
END_TEST

START_TEST(test_checksum_counts_skipped_words_into_hi)
{
	struct pool_hdr *hdr = new_hdr(false);

	hdr->signature[0] = 1;
	/* 1024 words each add lo = 1 into hi */
	ck_assert_uint_eq(pool_hdr_checksum(hdr), (uint64_t)1024 << 32 | 1);

	/* incompat 2 at word 4: hi = 1 * 4 + 3 * 1020 = 3064 */
	hdr->features.incompat = POOL_FEAT_CKSUM_2K;
	ck_assert_uint_eq(pool_hdr_checksum(hdr), (uint64_t)3064 << 32 | 3);
	free(hdr);
}
END_TEST

START_TEST(test_checksum_matches_reference_for_pmemobj_header)
{
	struct pool_hdr *hdr = new_hdr(true);
	unsigned char *b = (unsigned char *)hdr;

	ck_assert_uint_eq(pool_hdr_checksum(hdr), ref_checksum(b, 4096));

	/* stuff everywhere, including the would-be checksum itself */
	for (size_t i = 0; i < 4096; i++)
		b[i] = (unsigned char)(i * 7 + 3);
	hdr->features.incompat = 0;
	ck_assert_uint_eq(pool_hdr_checksum(hdr), ref_checksum(b, 4096));
	hdr->features.incompat = POOL_FEAT_CKSUM_2K | POOL_FEAT_SDS;
	ck_assert_uint_eq(pool_hdr_checksum(hdr), ref_checksum(b, 2048));
	free(hdr);
}
END_TEST

START_TEST(test_checksum_set_makes_header_valid)
{
	struct pool_hdr *hdr = new_hdr(true);

	ck_assert(!pool_hdr_valid(hdr));
	pool_hdr_checksum_set(hdr);
	ck_assert(pool_hdr_valid(hdr));
	ck_assert_uint_ne(hdr->checksum, 0);
	free(hdr);
}
END_TEST

START_TEST(test_flipping_any_covered_byte_invalidates_4k)
{
	struct pool_hdr *hdr = new_hdr(true);
	unsigned char *b = (unsigned char *)hdr;

	pool_hdr_checksum_set(hdr);

	for (size_t i = 0; i < sizeof(*hdr); i++) {
		b[i] ^= 0x01;
		ck_assert_msg(!pool_hdr_valid(hdr), "byte %zu not covered", i);
		b[i] ^= 0x01;
	}
	ck_assert(pool_hdr_valid(hdr));
	free(hdr);
}
END_TEST

START_TEST(test_cksum_2k_covers_first_2k_and_ignores_rest)
{
	struct pool_hdr *hdr = new_hdr(true);
	unsigned char *b = (unsigned char *)hdr;

	hdr->features.incompat = POOL_FEAT_CKSUM_2K;
	pool_hdr_checksum_set(hdr);

	for (size_t i = 0; i < 2048; i++) {
		b[i] ^= 0x80;
		ck_assert_msg(!pool_hdr_valid(hdr), "byte %zu not covered", i);
		b[i] ^= 0x80;
	}
	for (size_t i = 2048; i < 4088; i++)
		b[i] = (unsigned char)(i | 1);
	ck_assert(pool_hdr_valid(hdr));
	free(hdr);
}
END_TEST

START_TEST(test_attr_round_trip_keeps_raw_bytes)
{
	struct rpmem_pool_attr in, out;
	struct pool_hdr *hdr = new_hdr(false);

	sample_attr(&in);
	pool_hdr_from_attr(hdr, &in);
	ck_assert_mem_eq(hdr->signature, in.signature, 8);
	ck_assert_mem_eq(hdr->next_repl_uuid, in.next_uuid, 16);
	ck_assert_mem_eq(hdr->prev_repl_uuid, in.prev_uuid, 16);
	ck_assert_mem_eq(&hdr->arch_flags, in.user_flags, 16);
	ck_assert_uint_eq(hdr->features.ro_compat, 0x80000000U);

	memset(&out, 0xff, sizeof(out));
	pool_hdr_to_attr(hdr, &out);
	ck_assert_mem_eq(&in, &out, sizeof(in));
	free(hdr);
}
END_TEST

START_TEST(test_zero_user_flags_become_this_machine)
{
	struct rpmem_pool_attr attr;
	struct pool_arch_flags af;
	struct pool_hdr *hdr = new_hdr(false);

	sample_attr(&attr);
	memset(attr.user_flags, 0, sizeof(attr.user_flags));
	pool_hdr_from_attr(hdr, &attr);
	pool_hdr_arch_flags(&af);
	ck_assert_mem_eq(&hdr->arch_flags, &af, sizeof(af));
	ck_assert_uint_eq(af.data, 1);
#if defined(__x86_64__)
	/* the value pmempool info shows for an x86-64 pool */
	ck_assert_uint_eq(af.alignment_desc, 0x000007f737777310ULL);
	ck_assert_uint_eq(af.machine_class, 2);
	ck_assert_uint_eq(af.machine, 62);
#endif
	free(hdr);
}
END_TEST

START_TEST(test_sds_is_clean_zero_state_with_valid_checksum)
{
	struct rpmem_pool_attr attr;
	struct pool_hdr *hdr = new_hdr(false);

	sample_attr(&attr);
	attr.incompat_features |= POOL_FEAT_SDS;
	memset(&hdr->sds, 0xee, sizeof(hdr->sds));
	pool_hdr_from_attr(hdr, &attr);
	ck_assert_uint_eq(hdr->sds.dirty, 0);
	ck_assert_uint_eq(hdr->sds.usc, 0);
	ck_assert_uint_eq(hdr->sds.checksum,
			pool_hdr_fletcher64(&hdr->sds, sizeof(hdr->sds),
				offsetof(struct pool_sds, checksum)));

	attr.incompat_features &= ~POOL_FEAT_SDS;
	memset(&hdr->sds, 0xee, sizeof(hdr->sds));
	pool_hdr_from_attr(hdr, &attr);
	static const struct pool_sds zero;
	ck_assert_mem_eq(&hdr->sds, &zero, sizeof(zero));
	free(hdr);
}
END_TEST

/*
 * PMDK's shutdown_state_check, case by case: only a dirty state whose
 * count or id sum differs from the devices' now is possibly corrupt
 */
static const struct {
	uint64_t usc, uuid;	/* stored */
	bool dirty;
	bool torn;		/* stored checksum wrong */
	bool zero;		/* nothing stored at all */
	enum pool_sds_verdict verdict;	/* against usc 5, uuid 7 */
} Verdicts[] = {
	{ 5, 7, false, false, false, POOL_SDS_CLEAN },
	{ 5, 7, true, false, false, POOL_SDS_REINIT },
	{ 6, 7, false, false, false, POOL_SDS_REINIT },
	{ 6, 7, true, false, false, POOL_SDS_CORRUPT },
	{ 5, 8, true, false, false, POOL_SDS_CORRUPT },
	{ 6, 7, true, true, false, POOL_SDS_REINIT },
	{ 0, 0, false, false, true, POOL_SDS_REINIT },
};

START_TEST(test_sds_verdict_is_pmdks)
{
	struct pool_sds sds;
	pool_sds_set(&sds, Verdicts[_i].usc, Verdicts[_i].uuid,
		Verdicts[_i].dirty);
	if (Verdicts[_i].torn)
		sds.checksum ^= 1;
	if (Verdicts[_i].zero)
		memset(&sds, 0, sizeof(sds));
	ck_assert_int_eq(pool_sds_check(&sds, 5, 7), Verdicts[_i].verdict);
}
END_TEST

START_TEST(test_uuid_is_random_v4_in_pmdk_byte_order)
{
	uint8_t a[POOL_HDR_UUID_LEN], b[POOL_HDR_UUID_LEN];

	ck_assert_int_eq(pool_hdr_uuid_generate(a), 0);
	ck_assert_int_eq(pool_hdr_uuid_generate(b), 0);
	ck_assert(memcmp(a, b, sizeof(a)) != 0);
	/* time_hi_and_version is stored little-endian: version in byte 7 */
	ck_assert_uint_eq(a[7] >> 4, 4);
	ck_assert_uint_eq(a[8] & 0xc0, 0x80);
	ck_assert_uint_eq(b[7] >> 4, 4);
}
END_TEST

/* pool_hdr_suite -- every test above */
static Suite *
pool_hdr_suite(void)
{
	TCase *tc;
	Suite *s = tu_suite("pool_hdr", "core", NULL, NULL, &tc);

	tcase_add_test(tc, test_layout_matches_pmdk_offsets);
	tcase_add_test(tc, test_fletcher64_small_vector_by_hand);
	tcase_add_test(tc, test_checksum_of_zero_header_is_zero_and_invalid);
	tcase_add_test(tc, test_checksum_counts_skipped_words_into_hi);
	tcase_add_test(tc, test_checksum_matches_reference_for_pmemobj_header);
	tcase_add_test(tc, test_checksum_set_makes_header_valid);
	tcase_add_test(tc, test_flipping_any_covered_byte_invalidates_4k);
	tcase_add_test(tc, test_cksum_2k_covers_first_2k_and_ignores_rest);
	tcase_add_test(tc, test_attr_round_trip_keeps_raw_bytes);
	tcase_add_test(tc, test_zero_user_flags_become_this_machine);
	tcase_add_test(tc, test_sds_is_clean_zero_state_with_valid_checksum);
	TU_LOOP(tc, test_sds_verdict_is_pmdks, Verdicts);
	tcase_add_test(tc, test_uuid_is_random_v4_in_pmdk_byte_order);
	return tu_suite_add(s, tc);
}

/* main -- run pool_hdr_suite() (tu_check.h) */
TU_MAIN(pool_hdr_suite)
