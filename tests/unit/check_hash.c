/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_hash.c -- content hashes and the HASH messages that carry them
 */
#include <check.h>
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "proto.h"
#include "tu_check.h"

START_TEST(test_hash_depends_on_every_byte_and_length)
{
	unsigned char buf[4096];
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 7);
	uint64_t h = hash64(buf, sizeof(buf));
	ck_assert(h == hash64(buf, sizeof(buf)));
	for (size_t i = 0; i < sizeof(buf); i += 97) {
		buf[i] ^= 1;
		ck_assert(hash64(buf, sizeof(buf)) != h);
		buf[i] ^= 1;
	}
	/* the same bytes, shorter or longer, hash differently */
	ck_assert(hash64(buf, 4095) != h);
	unsigned char zero[16] = {0};
	ck_assert(hash64(zero, 8) != hash64(zero, 16));
	ck_assert(hash64(zero, 0) != hash64(zero, 1));
	ck_assert(hash64(zero, 1) != hash64(zero, 2));
}
END_TEST

START_TEST(test_hash_word_order_matters)
{
	uint64_t a[2] = {1, 2}, b[2] = {2, 1};
	ck_assert(hash64(a, sizeof(a)) != hash64(b, sizeof(b)));
}
END_TEST

START_TEST(test_hash_chunks_cover_a_short_tail)
{
	unsigned char buf[10000];
	memset(buf, 0x5a, sizeof(buf));
	uint64_t out[3];
	hash64_chunks(buf, sizeof(buf), 4096, out);
	ck_assert(out[0] == hash64(buf, 4096));
	ck_assert(out[1] == hash64(buf + 4096, 4096));
	ck_assert(out[2] == hash64(buf + 8192, 10000 - 8192));
}
END_TEST

START_TEST(test_hash_count_bounds)
{
	ck_assert_uint_eq(proto_hash_count(4096, 4096), 1);
	ck_assert_uint_eq(proto_hash_count(4097, 4096), 2);
	ck_assert_uint_eq(proto_hash_count(0, 4096), 0);
	ck_assert_uint_eq(proto_hash_count(4096, 0), 0);
	ck_assert_uint_eq(proto_hash_count((uint64_t)PROTO_HASH_MAX * 8, 8),
		PROTO_HASH_MAX);
	ck_assert_uint_eq(proto_hash_count((uint64_t)PROTO_HASH_MAX * 8 + 1,
		8), 0);
	ck_assert_uint_eq(proto_hash_count(UINT64_MAX, 1), 0);
	ck_assert_uint_eq(proto_hash_count(UINT64_MAX, UINT64_MAX), 1);
}
END_TEST

START_TEST(test_hash_request_round_trip_and_layout)
{
	struct proto_req req = {
		.type = PROTO_MSG_HASH, .hash_off = 4096,
		.hash_len = 1 << 20, .hash_chunk = 4096,
	};
	unsigned char buf[PROTO_REQ_MAX];
	ssize_t n = proto_req_encode(&req, buf, sizeof(buf));
	ck_assert_int_eq(n, PROTO_HASH_SIZE);
	uint64_t v;
	memcpy(&v, buf + 12, 8);
	ck_assert(be64toh(v) == 4096);
	memcpy(&v, buf + 28, 8);
	ck_assert(be64toh(v) == 4096);
	struct proto_req out;
	ck_assert_int_eq(proto_req_decode(buf, (size_t)n, &out), 0);
	ck_assert_uint_eq(out.type, PROTO_MSG_HASH);
	ck_assert(out.hash_off == 4096 && out.hash_len == 1 << 20 &&
		out.hash_chunk == 4096);
}
END_TEST

START_TEST(test_hash_request_refuses_bad_counts)
{
	struct proto_req req = {
		.type = PROTO_MSG_HASH, .hash_len = 1 << 20, .hash_chunk = 1,
	};
	unsigned char buf[PROTO_REQ_MAX];
	ck_assert_int_eq(proto_req_encode(&req, buf, sizeof(buf)), -EINVAL);
	req.hash_chunk = 4096;
	ssize_t n = proto_req_encode(&req, buf, sizeof(buf));
	ck_assert_int_eq(n, PROTO_HASH_SIZE);
	struct proto_req out;
	/* chunk 0, length 0, too many hashes: refused by the decoder */
	static const uint64_t bad[][2] = {
		{1 << 20, 0}, {0, 4096}, {1 << 20, 16}, {UINT64_MAX, 1},
	};
	for (size_t i = 0; i < TU_NELEMS(bad); i++) {
		uint64_t l = htobe64(bad[i][0]), c = htobe64(bad[i][1]);
		memcpy(buf + 20, &l, 8);
		memcpy(buf + 28, &c, 8);
		ck_assert_int_eq(proto_req_decode(buf, (size_t)n, &out),
			-EPROTO);
	}
	/* a truncated or padded HASH is refused by the header check */
	ck_assert_int_eq(proto_req_decode(buf, (size_t)n - 1, &out), -EPROTO);
}
END_TEST

START_TEST(test_hash_response_round_trip_and_size_rules)
{
	static struct proto_resp resp, out;
	memset(&resp, 0, sizeof(resp));
	resp.type = PROTO_MSG_HASH_RESP;
	resp.nhashes = 3;
	resp.hashes[0] = 1;
	resp.hashes[1] = UINT64_MAX;
	resp.hashes[2] = 0x0123456789abcdefULL;
	unsigned char buf[PROTO_RESP_MAX];
	ssize_t n = proto_resp_encode(&resp, buf, sizeof(buf));
	ck_assert_int_eq(n, PROTO_HASH_RESP_SIZE + 24);
	ck_assert_int_eq(proto_resp_decode(buf, (size_t)n,
		PROTO_MSG_HASH_RESP, &out), 0);
	ck_assert_uint_eq(out.nhashes, 3);
	ck_assert(out.hashes[1] == UINT64_MAX &&
		out.hashes[2] == 0x0123456789abcdefULL);

	/* count not matching the size */
	uint32_t c = htobe32(2);
	memcpy(buf + 16, &c, 4);
	ck_assert_int_eq(proto_resp_decode(buf, (size_t)n,
		PROTO_MSG_HASH_RESP, &out), -EPROTO);
	/* sizes that are not a whole number of hashes, or too many */
	uint32_t status;
	uint64_t size;
	uint64_t s = htobe64(PROTO_HASH_RESP_SIZE + 5);
	memcpy(buf + 8, &s, 8);
	ck_assert_int_eq(proto_hdr_resp_decode(buf, 16, PROTO_MSG_HASH_RESP,
		&status, &size), -EPROTO);
	s = htobe64(PROTO_HASH_RESP_SIZE + 8 * (PROTO_HASH_MAX + 1));
	memcpy(buf + 8, &s, 8);
	ck_assert_int_eq(proto_hdr_resp_decode(buf, 16, PROTO_MSG_HASH_RESP,
		&status, &size), -EPROTO);
	/* an error carries no hashes */
	resp.status = PROTO_ERR_POOL_CFG;
	ck_assert_int_eq(proto_resp_encode(&resp, buf, sizeof(buf)), -EINVAL);
	resp.nhashes = 0;
	n = proto_resp_encode(&resp, buf, sizeof(buf));
	ck_assert_int_eq(n, PROTO_HASH_RESP_SIZE);
	ck_assert_int_eq(proto_resp_decode(buf, (size_t)n,
		PROTO_MSG_HASH_RESP, &out), 0);
	ck_assert_uint_eq(out.status, PROTO_ERR_POOL_CFG);
}
END_TEST

/* hash_suite -- every test above, in one case */
static Suite *
hash_suite(void)
{
	TCase *tc;
	Suite *s = tu_suite("hash", "hash", NULL, NULL, &tc);
	tcase_add_test(tc, test_hash_depends_on_every_byte_and_length);
	tcase_add_test(tc, test_hash_word_order_matters);
	tcase_add_test(tc, test_hash_chunks_cover_a_short_tail);
	tcase_add_test(tc, test_hash_count_bounds);
	tcase_add_test(tc, test_hash_request_round_trip_and_layout);
	tcase_add_test(tc, test_hash_request_refuses_bad_counts);
	tcase_add_test(tc, test_hash_response_round_trip_and_size_rules);
	return tu_suite_add(s, tc);
}

/* main -- run hash_suite() (tu_check.h) */
TU_MAIN(hash_suite)
