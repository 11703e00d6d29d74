/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_proto.c -- unit tests of the out-of-band wire encoders/decoders:
 * round trips, PMDK's byte layout, names (refusals: check_proto_reject.c)
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto_fixture.h"
#include "tu_check.h"

START_TEST(test_every_request_survives_a_round_trip)
{
	unsigned char buf[BUF_LEN];
	struct proto_req in, out;
	enum proto_msg_type type = req_types[_i];

	sample_req(&in, type);
	ssize_t n = proto_req_encode(&in, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(proto_req_decode(buf, (size_t)n, &out), 0);

	ck_assert_int_eq(out.type, type);
	ck_assert_int_eq(out.has_attr, in.has_attr);
	ck_assert_mem_eq(&out.attr, &in.attr, sizeof(in.attr));
	if (type == PROTO_MSG_CREATE || type == PROTO_MSG_OPEN) {
		common_eq(&out.common, &in.common);
		ck_assert_str_eq(out.desc, DESC);
		ck_assert(out.has_ext);
		ck_assert_uint_eq(out.ext.security, in.ext.security);
		ck_assert_uint_eq(out.ext.cipher, in.ext.cipher);
		ck_assert_mem_eq(out.ext.random, in.ext.random,
			PROTO_RANDOM_LEN);
	}
	if (type == PROTO_MSG_CLOSE)
		ck_assert_uint_eq(out.close_flags, in.close_flags);
	ck_assert_uint_eq(out.outdate_mark, in.outdate_mark);
	ck_assert(out.outdate_time == in.outdate_time);
	ck_assert_mem_eq(out.outdate_host, in.outdate_host, PROTO_HOST_MAX);
	ck_assert_uint_eq(out.beat_ms, in.beat_ms);
}
END_TEST

START_TEST(test_request_with_zero_attr_decodes_as_no_attr)
{
	unsigned char buf[BUF_LEN];
	enum proto_msg_type types[] = {PROTO_MSG_CREATE, PROTO_MSG_SET_ATTR};
	struct proto_req in, out;

	for (size_t i = 0; i < 2; i++) {
		sample_req(&in, types[i]);
		/* has_attr false must win over whatever is in attr */
		in.has_attr = false;
		ssize_t n = proto_req_encode(&in, buf, sizeof(buf));
		ck_assert_int_gt(n, 0);
		ck_assert_int_eq(proto_req_decode(buf, (size_t)n, &out), 0);
		ck_assert(!out.has_attr);
		ck_assert(proto_attr_is_zero(&out.attr));
	}
}
END_TEST

START_TEST(test_every_response_survives_a_round_trip)
{
	unsigned char buf[BUF_LEN];
	struct proto_resp in, out;
	enum proto_msg_type type = proto_resp_type(req_types[_i / 2]);
	bool ext = _i % 2;

	sample_resp(&in, type, ext);
	in.status = type == PROTO_MSG_CLOSE_RESP ? PROTO_ERR_POOL_CFG : 0;
	ssize_t n = proto_resp_encode(&in, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(proto_resp_decode(buf, (size_t)n, type, &out), 0);

	ck_assert_int_eq(out.type, type);
	ck_assert_uint_eq(out.status, in.status);
	ibc_eq(&out.ibc, &in.ibc);
	ck_assert_mem_eq(&out.attr, &in.attr, sizeof(in.attr));
	ck_assert_int_eq(out.has_ext, in.has_ext);
	ext_eq(&out.ext, &in.ext);
	ck_assert(out.cpu_user_us == in.cpu_user_us);
	ck_assert(out.cpu_sys_us == in.cpu_sys_us);
}
END_TEST

START_TEST(test_stat_bytes_sit_at_their_offsets)
{
	unsigned char buf[BUF_LEN];
	static const unsigned char user[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	static const unsigned char sys[8] = {
		0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18};

	ck_assert_uint_eq(enc_req(buf, PROTO_MSG_STAT), PROTO_STAT_SIZE);
	ck_assert_uint_eq(enc_resp(buf, PROTO_MSG_STAT_RESP, false),
		PROTO_STAT_RESP_SIZE);
	ck_assert_mem_eq(buf + PROTO_HDR_RESP_SIZE, user, 8);
	ck_assert_mem_eq(buf + PROTO_HDR_RESP_SIZE + 8, sys, 8);
}
END_TEST

/*
 * req_hdr -- encode the sample request `type` into buf: `size` bytes
 * long, its header saying type number `no` and `wire` bytes
 */
static void
req_hdr(unsigned char *buf, enum proto_msg_type type, size_t size,
	uint32_t no, uint64_t wire)
{
	ck_assert_uint_eq(enc_req(buf, type), size);
	ck_assert_uint_eq(be_at(buf, 0, 4), no);
	ck_assert_uint_eq(be_at(buf, 4, 8), wire);
}

/*
 * resp_hdr -- encode the sample response `type` (no extension) into buf:
 * `size` bytes long, its header saying type number `no`
 */
static void
resp_hdr(unsigned char *buf, enum proto_msg_type type, size_t size,
	uint32_t no)
{
	ck_assert_uint_eq(enc_resp(buf, type, false), size);
	ck_assert_uint_eq(be_at(buf, 4, 4), no);
}

/* OUTDATE (minor 4): mark, reserved, time, the NUL-padded host */
START_TEST(test_outdate_bytes_sit_at_their_offsets)
{
	unsigned char buf[BUF_LEN];
	static const unsigned char t[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	unsigned char host[PROTO_HOST_MAX] = HOST;

	req_hdr(buf, PROTO_MSG_OUTDATE, PROTO_OUTDATE_SIZE, 13, 92);
	ck_assert_uint_eq(be_at(buf, 12, 4), 1);
	ck_assert_uint_eq(be_at(buf, 16, 4), 0);
	ck_assert_mem_eq(buf + 20, t, 8);
	ck_assert_mem_eq(buf + 28, host, PROTO_HOST_MAX);
	resp_hdr(buf, PROTO_MSG_OUTDATE_RESP, PROTO_OUTDATE_RESP_SIZE, 14);
}
END_TEST

/* BEAT (minor 6): the interval; BEAT_RESP, and every beat: the header */
START_TEST(test_beat_bytes_sit_at_their_offsets)
{
	unsigned char buf[BUF_LEN];

	req_hdr(buf, PROTO_MSG_BEAT, PROTO_BEAT_SIZE, 17, 16);
	ck_assert_uint_eq(be_at(buf, 12, 4), 0x1234);
	resp_hdr(buf, PROTO_MSG_BEAT_RESP, PROTO_BEAT_RESP_SIZE, 18);
}
END_TEST

/* GEN (minor 5): op, flags, then the block; GEN_RESP: the block */
START_TEST(test_gen_bytes_sit_at_their_offsets)
{
	unsigned char buf[BUF_LEN];
	req_hdr(buf, PROTO_MSG_GEN, PROTO_GEN_SIZE, 15, 316);
	ck_assert_uint_eq(be_at(buf, 12, 4), PROTO_GEN_ADOPT);
	ck_assert_uint_eq(be_at(buf, 16, 4), PROTO_GEN_FLAG_CREATED);
	const unsigned b = 20;	/* the block */
	ck_assert(be_at(buf, b, 8) == 0x0102030405060708ULL);
	ck_assert(be_at(buf, b + 8, 8) == 0x1112131415161718ULL);
	ck_assert(be_at(buf, b + 16, 8) == 0x2122232425262728ULL);
	ck_assert(be_at(buf, b + 24, 8) == 0x3132333435363738ULL);
	ck_assert(be_at(buf, b + 32, 8) == 0);
	ck_assert(be_at(buf, b + 80, 8) == 0x4142434445464748ULL);
	ck_assert(be_at(buf, b + 88, 8) == 0x5152535455565758ULL);
	ck_assert_uint_eq(be_at(buf, b + 96, 4), 1);
	ck_assert_uint_eq(be_at(buf, b + 100, 4), 2);
	ck_assert_uint_eq(be_at(buf, b + 104, 8), 0x61);
	ck_assert_uint_eq(be_at(buf, b + 112, 8), 0x62);
	ck_assert_uint_eq(be_at(buf, b + 120, 4), 1);
	ck_assert_uint_eq(be_at(buf, b + 128, 8), 0x71);
	ck_assert_uint_eq(be_at(buf, b + 144, 4), 0);
	resp_hdr(buf, PROTO_MSG_GEN_RESP, PROTO_GEN_RESP_SIZE, 16);
	ck_assert(be_at(buf, 16 + 8, 8) == 0x1112131415161718ULL);
}
END_TEST

/* what GEN and GEN_RESP carry reads back the same */
START_TEST(test_gen_round_trip)
{
	unsigned char buf[BUF_LEN];
	struct proto_req in, out;
	struct proto_resp rin, rout;
	sample_req(&in, PROTO_MSG_GEN);
	ssize_t n = proto_req_encode(&in, buf, sizeof(buf));
	ck_assert_int_eq(n, PROTO_GEN_SIZE);
	ck_assert_int_eq(proto_req_decode(buf, (size_t)n, &out), 0);
	ck_assert_uint_eq(out.gen_op, in.gen_op);
	ck_assert_uint_eq(out.gen_flags, in.gen_flags);
	ck_assert(gen_same(&out.gen, &in.gen));
	sample_resp(&rin, PROTO_MSG_GEN_RESP, false);
	n = proto_resp_encode(&rin, buf, sizeof(buf));
	ck_assert_int_eq(n, PROTO_GEN_RESP_SIZE);
	ck_assert_int_eq(proto_resp_decode(buf, (size_t)n,
		PROTO_MSG_GEN_RESP, &rout), 0);
	ck_assert(gen_same(&rout.gen, &rin.gen));
}
END_TEST

/* clearing the mark needs no host; any time from 0 to INT64_MAX */
START_TEST(test_outdate_clear_without_host_decodes)
{
	unsigned char buf[BUF_LEN];
	struct proto_req in, out;

	sample_req(&in, PROTO_MSG_OUTDATE);
	in.outdate_mark = 0;
	in.outdate_time = INT64_MAX;
	memset(in.outdate_host, 0, sizeof(in.outdate_host));
	ssize_t n = proto_req_encode(&in, buf, sizeof(buf));
	ck_assert_int_eq(n, PROTO_OUTDATE_SIZE);
	ck_assert_int_eq(proto_req_decode(buf, (size_t)n, &out), 0);
	ck_assert_uint_eq(out.outdate_mark, 0);
	ck_assert(out.outdate_time == INT64_MAX);
	ck_assert_str_eq(out.outdate_host, "");
}
END_TEST

START_TEST(test_error_response_with_zeroed_ibc_is_accepted)
{
	unsigned char buf[BUF_LEN];
	struct proto_resp in, out;

	memset(&in, 0, sizeof(in));
	in.type = PROTO_MSG_OPEN_RESP;
	in.status = PROTO_ERR_EXISTS;
	ssize_t n = proto_resp_encode(&in, buf, sizeof(buf));
	ck_assert_int_eq(n, PROTO_OPEN_RESP_SIZE);
	ck_assert_int_eq(proto_resp_decode(buf, (size_t)n,
			PROTO_MSG_OPEN_RESP, &out), 0);
	ck_assert_uint_eq(out.status, PROTO_ERR_EXISTS);
	ck_assert_uint_eq(out.ibc.port, 0);
}
END_TEST

START_TEST(test_create_bytes_sit_at_pmdk_offsets)
{
	unsigned char buf[BUF_LEN];
	struct proto_req r;
	size_t n = enc_req(buf, PROTO_MSG_CREATE);
	size_t x = 148 + sizeof(DESC);	/* ours: the extension block */

	sample_req(&r, PROTO_MSG_CREATE);
	ck_assert_uint_eq(n, PROTO_CREATE_SIZE + sizeof(DESC) +
		PROTO_REQ_EXT_SIZE);
	const struct field f[] = {
		NUM("type", 0, 4, PROTO_MSG_CREATE),
		NUM("size", 4, 8, n),
		NUM("major", 12, 2, PROTO_MAJOR),
		NUM("minor", 14, 2, PROTO_MINOR),
		NUM("pool_size", 16, 8, r.common.pool_size),
		NUM("nlanes", 24, 4, r.common.nlanes),
		NUM("provider", 28, 4, PROTO_PROV_SOCKETS),
		NUM("buff_size", 32, 8, r.common.buff_size),
		BYTES("signature", 40, r.attr.signature, 8),
		NUM("attr major", 48, 4, r.attr.major),
		NUM("compat", 52, 4, r.attr.compat_features),
		NUM("incompat", 56, 4, r.attr.incompat_features),
		NUM("ro_compat", 60, 4, r.attr.ro_compat_features),
		BYTES("poolset_uuid", 64, r.attr.poolset_uuid, 16),
		BYTES("uuid", 80, r.attr.uuid, 16),
		BYTES("next_uuid", 96, r.attr.next_uuid, 16),
		BYTES("prev_uuid", 112, r.attr.prev_uuid, 16),
		BYTES("user_flags", 128, r.attr.user_flags, 16),
		NUM("desc length", 144, 4, sizeof(DESC)),
		BYTES("desc", 148, DESC, sizeof(DESC)),
		NUM("security", x, 2, r.ext.security),
		NUM("cipher", x + 2, 2, r.ext.cipher),
		NUM("reserved", x + 4, 4, 0),
		BYTES("random", x + 8, r.ext.random, PROTO_RANDOM_LEN),
	};
	fields_are(buf, f, TU_NELEMS(f), "CREATE");
}
END_TEST

START_TEST(test_open_close_set_attr_bytes_sit_at_pmdk_offsets)
{
	unsigned char buf[BUF_LEN];
	struct proto_req r;
	size_t n = enc_req(buf, PROTO_MSG_OPEN);

	sample_req(&r, PROTO_MSG_OPEN);
	ck_assert_uint_eq(n, PROTO_OPEN_SIZE + sizeof(DESC) +
		PROTO_REQ_EXT_SIZE);
	ck_assert_uint_eq(be_at(buf, 0, 4), PROTO_MSG_OPEN);
	ck_assert_uint_eq(be_at(buf, 28, 4), PROTO_PROV_SOCKETS);
	ck_assert_uint_eq(be_at(buf, 40, 4), sizeof(DESC));
	ck_assert_mem_eq(buf + 44, DESC, sizeof(DESC));

	sample_req(&r, PROTO_MSG_SET_ATTR);
	ck_assert_uint_eq(enc_req(buf, PROTO_MSG_SET_ATTR), 116);
	ck_assert_uint_eq(be_at(buf, 4, 8), 116);
	ck_assert_mem_eq(buf + 12, r.attr.signature, 8);
	ck_assert_uint_eq(be_at(buf, 20, 4), r.attr.major);

	/* PMDK forgot to convert the close flags: host order */
	sample_req(&r, PROTO_MSG_CLOSE);
	ck_assert_uint_eq(enc_req(buf, PROTO_MSG_CLOSE), 16);
	ck_assert_uint_eq(be_at(buf, 0, 4), PROTO_MSG_CLOSE);
	ck_assert_uint_eq(host32_at(buf, 12), r.close_flags);
}
END_TEST

START_TEST(test_open_resp_bytes_sit_at_pmdk_offsets)
{
	unsigned char buf[BUF_LEN];
	struct proto_resp r;
	size_t n = enc_resp(buf, PROTO_MSG_OPEN_RESP, true);

	sample_resp(&r, PROTO_MSG_OPEN_RESP, true);
	ck_assert_uint_eq(n, PROTO_OPEN_RESP_SIZE + PROTO_EXT_SIZE);
	const struct field f[] = {
		NUM("status", 0, 4, 0),
		NUM("type", 4, 4, PROTO_MSG_OPEN_RESP),
		NUM("size", 8, 8, n),
		NUM("port", 16, 4, r.ibc.port),
		NUM("persist method", 20, 4, PROTO_PM_APM),
		NUM("rkey", 24, 8, r.ibc.rkey),
		NUM("raddr", 32, 8, r.ibc.raddr),
		BYTES("signature", 44, r.attr.signature, 8),
		NUM("attr major", 52, 4, r.attr.major),
		BYTES("user_flags", 132, r.attr.user_flags, 16),
		NUM("major", 148, 2, PROTO_MAJOR),
		NUM("minor", 150, 2, PROTO_MINOR),
		NUM("version", 152, 4, r.ext.version),
		NUM("buff_size", 156, 8, r.ext.buff_size),
		NUM("security", 164, 2, r.ext.security),
		NUM("cipher", 166, 2, r.ext.cipher),
		NUM("flags", 168, 4, PROTO_EXT_WRITES_BACK),
		BYTES("random", 172, r.ext.random, PROTO_RANDOM_LEN),
	};
	fields_are(buf, f, TU_NELEMS(f), "OPEN_RESP");
	/* PMDK forgot to convert nlanes: host order */
	ck_assert_uint_eq(host32_at(buf, 40), r.ibc.nlanes);
}
END_TEST

START_TEST(test_create_resp_nlanes_is_host_order)
{
	unsigned char buf[BUF_LEN];
	size_t n = enc_resp(buf, PROTO_MSG_CREATE_RESP, false);

	ck_assert_uint_eq(n, PROTO_CREATE_RESP_SIZE);
	ck_assert_uint_eq(host32_at(buf, 40), 0x01020304);
	ck_assert_uint_eq(be_at(buf, 16, 4), 0x1234);
}
END_TEST

START_TEST(test_resp_type_answers_requests_only)
{
	ck_assert_uint_eq(proto_resp_type(PROTO_MSG_CREATE), 2);
	ck_assert_uint_eq(proto_resp_type(PROTO_MSG_OPEN), 4);
	ck_assert_uint_eq(proto_resp_type(PROTO_MSG_CLOSE), 6);
	ck_assert_uint_eq(proto_resp_type(PROTO_MSG_SET_ATTR), 8);
	ck_assert_uint_eq(proto_resp_type(0), 0);
	ck_assert_uint_eq(proto_resp_type(PROTO_MSG_CREATE_RESP), 0);
	ck_assert_uint_eq(proto_resp_type(PROTO_MSG_HASH), 10);
	ck_assert_uint_eq(proto_resp_type(PROTO_MSG_STAT), 12);
	ck_assert_uint_eq(proto_resp_type(PROTO_MSG_OUTDATE), 14);
	ck_assert_uint_eq(proto_resp_type(PROTO_MSG_OUTDATE_RESP), 0);
	ck_assert_uint_eq(proto_resp_type(PROTO_MSG_GEN), 16);
	ck_assert_uint_eq(proto_resp_type(PROTO_MSG_GEN_RESP), 0);
	ck_assert_uint_eq(proto_resp_type(PROTO_MSG_BEAT), 18);
	ck_assert_uint_eq(proto_resp_type(PROTO_MSG_BEAT_RESP), 0);
	ck_assert_uint_eq(proto_resp_type(19), 0);
	ck_assert_uint_eq(proto_resp_type(0xffffffff), 0);
}
END_TEST

START_TEST(test_attr_is_zero_notices_any_nonzero_byte)
{
	struct rpmem_pool_attr a;

	memset(&a, 0, sizeof(a));
	ck_assert(proto_attr_is_zero(&a));
	ck_assert(proto_attr_is_zero(NULL));
	for (size_t i = 0; i < sizeof(a); i++) {
		((unsigned char *)&a)[i] = 1;
		ck_assert_msg(!proto_attr_is_zero(&a), "byte %zu", i);
		((unsigned char *)&a)[i] = 0;
	}
}
END_TEST

START_TEST(test_status_maps_to_errno_and_text)
{
	static const int errs[PROTO_ERR_MAX] = {0, EPROTONOSUPPORT, EINVAL,
		EFBIG, EINVAL, EINVAL, EREMOTEIO, ECONNABORTED, EBUSY, EEXIST,
		EMEDIUMTYPE, ENOENT, EACCES, EINVAL};

	for (uint32_t s = 0; s < PROTO_ERR_MAX; s++) {
		ck_assert_int_eq(proto_status_errno(s), errs[s]);
		ck_assert_str_ne(proto_status_str(s),
				"invalid status received");
		for (uint32_t o = 0; o < s; o++)
			ck_assert_str_ne(proto_status_str(s),
					proto_status_str(o));
	}
	ck_assert_str_eq(proto_status_str(0), "Success");
	ck_assert_str_eq(proto_status_str(PROTO_ERR_BUSY),
			"Pool already in use");
	ck_assert_int_eq(proto_status_errno(PROTO_ERR_MAX), EPROTO);
	ck_assert_int_eq(proto_status_errno(0xffffffff), EPROTO);
	ck_assert_str_eq(proto_status_str(14), "invalid status received");
	ck_assert_str_eq(proto_status_str(0xffffffff),
			"invalid status received");
}
END_TEST

START_TEST(test_provider_and_pm_names)
{
	ck_assert_str_eq(proto_provider_name(PROTO_PROV_VERBS), "verbs");
	ck_assert_str_eq(proto_provider_name(PROTO_PROV_SOCKETS), "sockets");
	ck_assert_str_eq(proto_provider_name(PROTO_PROV_TCP), "tcp");
	ck_assert_str_eq(proto_provider_name(0), "unknown");
	ck_assert_str_eq(proto_provider_name(4), "unknown");
	ck_assert_str_eq(proto_provider_name(0xffffffff), "unknown");
	for (uint32_t p = PROTO_PROV_VERBS; p < PROTO_PROV_MAX; p++)
		ck_assert_uint_eq(proto_provider_parse(proto_provider_name(p)),
				p);
	ck_assert_int_eq(proto_provider_parse("unknown"), PROTO_PROV_UNKNOWN);
	ck_assert_int_eq(proto_provider_parse(""), PROTO_PROV_UNKNOWN);
	ck_assert_int_eq(proto_provider_parse("tcp;ofi_rxm"),
			PROTO_PROV_UNKNOWN);
	ck_assert_int_eq(proto_provider_parse("verb"), PROTO_PROV_UNKNOWN);
	ck_assert_int_eq(proto_provider_parse(NULL), PROTO_PROV_UNKNOWN);

	ck_assert_str_eq(proto_pm_name(PROTO_PM_GPSPM), "GPSPM");
	ck_assert_str_eq(proto_pm_name(PROTO_PM_APM), "APM");
	ck_assert_str_eq(proto_pm_name(0), "unknown");
	ck_assert_str_eq(proto_pm_name(3), "unknown");

	/* every type a name ending _RESP exactly when it is even */
	for (uint32_t t = PROTO_MSG_CREATE; t <= PROTO_MSG_BEAT_RESP; t++) {
		const char *n = proto_msg_name(t);
		size_t len = strlen(n);
		ck_assert_uint_gt(len, 0);
		ck_assert_str_ne(n, "unknown");
		ck_assert_int_eq(len > 5 && strcmp(n + len - 5, "_RESP") == 0,
			t % 2 == 0);
	}
	ck_assert_str_eq(proto_msg_name(PROTO_MSG_CREATE), "CREATE");
	ck_assert_str_eq(proto_msg_name(PROTO_MSG_SET_ATTR_RESP),
		"SET_ATTR_RESP");
	ck_assert_str_eq(proto_msg_name(PROTO_MSG_BEAT_RESP), "BEAT_RESP");
	ck_assert_str_eq(proto_msg_name(0), "unknown");
	ck_assert_str_eq(proto_msg_name(PROTO_MSG_BEAT_RESP + 1), "unknown");
	ck_assert_str_eq(proto_msg_name(0xffffffff), "unknown");
}
END_TEST

/* proto_suite -- all wire format tests */
static Suite *
proto_suite(void)
{
	TCase *tc;
	Suite *s = tu_suite("proto", "layout", NULL, NULL, &tc);

	tcase_add_loop_test(tc, test_every_request_survives_a_round_trip,
			0, NREQ_TYPES);
	tcase_add_test(tc, test_request_with_zero_attr_decodes_as_no_attr);
	tcase_add_loop_test(tc, test_every_response_survives_a_round_trip,
			0, 2 * NREQ_TYPES);
	tcase_add_test(tc, test_stat_bytes_sit_at_their_offsets);
	tcase_add_test(tc, test_outdate_bytes_sit_at_their_offsets);
	tcase_add_test(tc, test_beat_bytes_sit_at_their_offsets);
	tcase_add_test(tc, test_outdate_clear_without_host_decodes);
	tcase_add_test(tc, test_gen_bytes_sit_at_their_offsets);
	tcase_add_test(tc, test_gen_round_trip);
	tcase_add_test(tc, test_error_response_with_zeroed_ibc_is_accepted);
	tcase_add_test(tc, test_create_bytes_sit_at_pmdk_offsets);
	tcase_add_test(tc, test_open_close_set_attr_bytes_sit_at_pmdk_offsets);
	tcase_add_test(tc, test_open_resp_bytes_sit_at_pmdk_offsets);
	tcase_add_test(tc, test_create_resp_nlanes_is_host_order);
	suite_add_tcase(s, tc);

	proto_add_reject(s);

	tc = tcase_create("names");
	tcase_add_test(tc, test_resp_type_answers_requests_only);
	tcase_add_test(tc, test_attr_is_zero_notices_any_nonzero_byte);
	tcase_add_test(tc, test_status_maps_to_errno_and_text);
	tcase_add_test(tc, test_provider_and_pm_names);
	return tu_suite_add(s, tc);
}

/* main -- run proto_suite() (tu_check.h) */
TU_MAIN(proto_suite)

