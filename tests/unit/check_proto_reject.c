/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_proto_reject.c -- what the wire decoders and encoders refuse
 * (scenarios R8, R9): short or oversized headers, wrong types, every
 * truncation, malformed descriptors, other majors, unknown providers,
 * bad responses and extensions, non-zero reserved bytes, bad arguments
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto_fixture.h"
#include "tu_check.h"

START_TEST(test_header_shorter_than_12_bytes_is_refused)
{
	unsigned char buf[BUF_LEN];
	uint32_t type;
	uint64_t size;

	enc_req(buf, PROTO_MSG_CLOSE);
	for (size_t len = 0; len < PROTO_HDR_SIZE; len++) {
		ck_assert_int_eq(proto_hdr_decode(buf, len, &type, &size),
				-EPROTO);
		ck_assert_int_eq(req_ret(buf, len), -EPROTO);
	}
	ck_assert_int_eq(proto_hdr_decode(buf, 12, &type, &size), 0);
}
END_TEST

START_TEST(test_non_request_type_in_header_is_refused)
{
	static const uint32_t bad[] = {0, 2, 4, 6, 8, 9, 14, 15, 0x01000000,
		0xffffffff};
	unsigned char buf[BUF_LEN];
	uint32_t type;
	uint64_t size;
	size_t n = enc_req(buf, PROTO_MSG_CLOSE);

	for (size_t i = 0; i < TU_NELEMS(bad); i++) {
		be_set(buf, 0, 4, bad[i]);
		ck_assert_int_eq(proto_hdr_decode(buf, n, &type, &size),
				-EPROTO);
		ck_assert_uint_eq(type, bad[i]);
		ck_assert_int_eq(req_ret(buf, n), -EPROTO);
	}
}
END_TEST

START_TEST(test_header_size_over_cap_is_refused_with_emsgsize)
{
	static const uint64_t bad[] = {PROTO_REQ_MAX + 1, 1ULL << 32,
		1ULL << 63, UINT64_MAX};
	unsigned char buf[BUF_LEN];
	uint32_t type;
	uint64_t size;

	for (size_t t = 0; t < 4; t++) {
		be_set(buf, 0, 4, req_types[t]);
		for (size_t i = 0; i < TU_NELEMS(bad); i++) {
			be_set(buf, 4, 8, bad[i]);
			ck_assert_int_eq(proto_hdr_decode(buf, 12, &type,
					&size), -EMSGSIZE);
			ck_assert(size == bad[i]);
		}
	}
	be_set(buf, 0, 4, PROTO_MSG_CREATE);
	be_set(buf, 4, 8, PROTO_REQ_MAX);
	ck_assert_int_eq(proto_hdr_decode(buf, 12, &type, &size), 0);
	ck_assert(size == PROTO_REQ_MAX);
}
END_TEST

/* hdr_decode -- proto_hdr_decode of a header saying `type` and `size` */
static int
hdr_decode(uint32_t type, uint64_t size)
{
	unsigned char buf[PROTO_HDR_SIZE];
	uint32_t t;
	uint64_t sz;
	be_set(buf, 0, 4, type);
	be_set(buf, 4, 8, size);
	return proto_hdr_decode(buf, sizeof(buf), &t, &sz);
}

START_TEST(test_header_size_outside_type_bounds_is_refused)
{
	/* requests of a variable size: their bounds */
	static const struct {
		uint32_t type;
		uint64_t size;
		int ret;
	} cases[] = {
		{PROTO_MSG_CREATE, 0, -EPROTO},
		{PROTO_MSG_CREATE, 12, -EPROTO},
		{PROTO_MSG_CREATE, 149, -EPROTO},
		{PROTO_MSG_CREATE, 150, 0},
		{PROTO_MSG_OPEN, 45, -EPROTO},
		{PROTO_MSG_OPEN, 46, 0},
		{PROTO_MSG_OPEN, PROTO_REQ_MAX, -EMSGSIZE},
	};
	/* requests of one size: a byte less or more is refused */
	static const struct {
		uint32_t type;
		uint64_t size;
	} fixed[] = {
		{PROTO_MSG_CLOSE, 16},
		{PROTO_MSG_SET_ATTR, 116},
		{PROTO_MSG_OUTDATE, 92},
		{PROTO_MSG_BEAT, 16},
		{PROTO_MSG_GEN, 316},
	};

	for (size_t i = 0; i < TU_NELEMS(cases); i++)
		ck_assert_int_eq(hdr_decode(cases[i].type, cases[i].size),
			cases[i].ret);
	for (size_t i = 0; i < TU_NELEMS(fixed); i++) {
		ck_assert_int_eq(hdr_decode(fixed[i].type, fixed[i].size - 1),
			-EPROTO);
		ck_assert_int_eq(hdr_decode(fixed[i].type, fixed[i].size), 0);
		ck_assert_int_eq(hdr_decode(fixed[i].type, fixed[i].size + 1),
			-EPROTO);
	}
}
END_TEST

START_TEST(test_every_truncation_of_a_request_is_refused)
{
	unsigned char buf[BUF_LEN];
	size_t n = enc_req(buf, req_types[_i]);

	for (size_t len = 0; len < n; len++)
		ck_assert_int_eq(req_ret(buf, len), -EPROTO);
	ck_assert_int_eq(req_ret(buf, n), 0);
	/* a message longer than its header says is as wrong */
	ck_assert_int_eq(req_ret(buf, n + 1), -EPROTO);
}
END_TEST

START_TEST(test_malformed_descriptor_is_refused)
{
	unsigned char buf[BUF_LEN];
	unsigned char orig[BUF_LEN];
	size_t off = _i ? PROTO_OPEN_SIZE : PROTO_CREATE_SIZE;
	size_t n = enc_req(orig, _i ? PROTO_MSG_OPEN : PROTO_MSG_CREATE);
	size_t dsz = sizeof(DESC);

	/* last byte is not NUL */
	memcpy(buf, orig, n);
	buf[off + dsz - 1] = 'x';
	ck_assert_int_eq(req_ret(buf, n), -EPROTO);

	/* NUL inside the string */
	memcpy(buf, orig, n);
	buf[off + 2] = '\0';
	ck_assert_int_eq(req_ret(buf, n), -EPROTO);

	/* descriptor size fields that disagree with the message size */
	static const uint64_t bad[] = {0, 1, sizeof(DESC) - 1,
		sizeof(DESC) + 1, PROTO_DESC_MAX, 0xffffffff};
	for (size_t i = 0; i < TU_NELEMS(bad); i++) {
		memcpy(buf, orig, n);
		be_set(buf, off - 4, 4, bad[i]);
		ck_assert_int_eq(req_ret(buf, n), -EPROTO);
	}

	/* descriptor of size 1 (only the NUL) in a consistent message */
	memcpy(buf, orig, n);
	be_set(buf, 4, 8, off + 1);
	be_set(buf, off - 4, 4, 1);
	buf[off] = '\0';
	ck_assert_int_eq(req_ret(buf, off + 1), -EPROTO);

	/* the unmodified message is fine */
	ck_assert_uint_eq(be_at(orig, off - 4, 4), dsz);
	ck_assert_int_eq(req_ret(orig, n), 0);
}
END_TEST

START_TEST(test_descriptor_length_limit_is_enforced)
{
	static unsigned char buf[BUF_LEN + PROTO_DESC_MAX];
	struct proto_req r;

	/* the longest legal descriptor: PROTO_DESC_MAX bytes with NUL */
	sample_req(&r, _i ? PROTO_MSG_OPEN : PROTO_MSG_CREATE);
	memset(r.desc, 'd', PROTO_DESC_MAX - 1);
	r.desc[PROTO_DESC_MAX - 1] = '\0';
	ssize_t n = proto_req_encode(&r, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(req_ret(buf, (size_t)n), 0);

	/* one more character, forged by hand since the encoder refuses */
	size_t off = _i ? PROTO_OPEN_SIZE : PROTO_CREATE_SIZE;
	size_t dend = off + PROTO_DESC_MAX + 1;
	size_t len = dend + PROTO_REQ_EXT_SIZE;
	buf[dend - 2] = 'd';
	buf[dend - 1] = '\0';
	be_set(buf, 4, 8, len);
	be_set(buf, off - 4, 4, PROTO_DESC_MAX + 1);
	ck_assert_int_eq(req_ret(buf, len), -EMSGSIZE);
}
END_TEST

START_TEST(test_other_major_is_refused_as_unsupported)
{
	static const uint16_t bad[] = {1, 2, 0x100, 0xffff};
	unsigned char buf[BUF_LEN];
	struct proto_req r;
	size_t n = enc_req(buf, _i ? PROTO_MSG_OPEN : PROTO_MSG_CREATE);

	for (size_t i = 0; i < TU_NELEMS(bad); i++) {
		be_set(buf, 12, 2, bad[i]);
		ck_assert_int_eq(proto_req_decode(buf, n, &r),
				-EPROTONOSUPPORT);
		/* kept so the daemon can name the peer's version */
		ck_assert_uint_eq(r.common.major, bad[i]);
		ck_assert_uint_eq(r.common.minor, PROTO_MINOR);
	}
}
END_TEST

/*
 * any minor decodes (the daemon decides what it serves); from ours on,
 * the extension block must follow the descriptor, before it must not
 */
START_TEST(test_any_minor_is_left_to_the_daemon)
{
	static const uint16_t minors[] = {0, 1, 2, 3, 4, 0xffff};
	unsigned char buf[BUF_LEN];
	struct proto_req in, r;

	for (size_t i = 0; i < TU_NELEMS(minors); i++) {
		sample_req(&in, _i ? PROTO_MSG_OPEN : PROTO_MSG_CREATE);
		in.common.minor = minors[i];
		bool ours = minors[i] >= PROTO_MINOR_EXT;
		for (int with = 0; with < 2; with++) {
			in.has_ext = with;
			ssize_t n = proto_req_encode(&in, buf, sizeof(buf));
			ck_assert_int_gt(n, 0);
			ck_assert_int_eq(proto_req_decode(buf, (size_t)n, &r),
				with == ours ? 0 : -EPROTO);
			if (with != ours)
				continue;
			ck_assert_uint_eq(r.common.minor, minors[i]);
			ck_assert_int_eq(r.has_ext, ours);
			ck_assert_str_eq(r.desc, DESC);
		}
	}
}
END_TEST

START_TEST(test_unknown_provider_is_refused)
{
	static const uint32_t bad[] = {0, 4, 0x01000000, 0xffffffff};
	unsigned char buf[BUF_LEN];
	size_t n = enc_req(buf, _i ? PROTO_MSG_OPEN : PROTO_MSG_CREATE);

	for (size_t i = 0; i < TU_NELEMS(bad); i++) {
		be_set(buf, 28, 4, bad[i]);
		ck_assert_int_eq(req_ret(buf, n), -EPROTO);
	}
	for (uint32_t p = PROTO_PROV_VERBS; p <= PROTO_PROV_TCP; p++) {
		be_set(buf, 28, 4, p);
		ck_assert_int_eq(req_ret(buf, n), 0);
	}
}
END_TEST

START_TEST(test_response_header_checks_type_status_and_size)
{
	static const struct {
		uint32_t status;
		uint32_t type;
		uint64_t size;
		uint32_t expected;
		int ret;
	} cases[] = {
		{0, PROTO_MSG_CREATE_RESP, 44, PROTO_MSG_CREATE_RESP, 0},
		{0, PROTO_MSG_CREATE_RESP, 100, PROTO_MSG_CREATE_RESP, 0},
		{13, PROTO_MSG_OPEN_RESP, 148, PROTO_MSG_OPEN_RESP, 0},
		{0, PROTO_MSG_OPEN_RESP, 204, PROTO_MSG_OPEN_RESP, 0},
		{0, PROTO_MSG_CLOSE_RESP, 16, PROTO_MSG_CLOSE_RESP, 0},
		{0, PROTO_MSG_SET_ATTR_RESP, 16, PROTO_MSG_SET_ATTR_RESP, 0},
		{0, PROTO_MSG_OUTDATE_RESP, 16, PROTO_MSG_OUTDATE_RESP, 0},
		{0, PROTO_MSG_OUTDATE_RESP, 17, PROTO_MSG_OUTDATE_RESP,
			-EPROTO},
		{0, PROTO_MSG_OUTDATE, 16, PROTO_MSG_OUTDATE_RESP, -EPROTO},
		{0, PROTO_MSG_BEAT_RESP, 16, PROTO_MSG_BEAT_RESP, 0},
		{0, PROTO_MSG_BEAT_RESP, 17, PROTO_MSG_BEAT_RESP, -EPROTO},
		{0, PROTO_MSG_BEAT_RESP, 16, PROTO_MSG_GEN_RESP, -EPROTO},
		{0, PROTO_MSG_GEN_RESP, 312, PROTO_MSG_GEN_RESP, 0},
		{12, PROTO_MSG_GEN_RESP, 312, PROTO_MSG_GEN_RESP, 0},
		{0, PROTO_MSG_GEN_RESP, 16, PROTO_MSG_GEN_RESP, -EPROTO},
		{0, PROTO_MSG_GEN_RESP, 313, PROTO_MSG_GEN_RESP, -EPROTO},
		{14, PROTO_MSG_CLOSE_RESP, 16, PROTO_MSG_CLOSE_RESP, -EPROTO},
		{0xffffffff, PROTO_MSG_CLOSE_RESP, 16, PROTO_MSG_CLOSE_RESP,
			-EPROTO},
		{0, PROTO_MSG_OPEN_RESP, 148, PROTO_MSG_CREATE_RESP, -EPROTO},
		{0, PROTO_MSG_CLOSE, 16, PROTO_MSG_CLOSE_RESP, -EPROTO},
		{0, PROTO_MSG_CREATE_RESP, 0, PROTO_MSG_CREATE_RESP, -EPROTO},
		{0, PROTO_MSG_CREATE_RESP, 16, PROTO_MSG_CREATE_RESP, -EPROTO},
		{0, PROTO_MSG_CREATE_RESP, 43, PROTO_MSG_CREATE_RESP, -EPROTO},
		{0, PROTO_MSG_CREATE_RESP, 45, PROTO_MSG_CREATE_RESP, -EPROTO},
		{0, PROTO_MSG_CREATE_RESP, 99, PROTO_MSG_CREATE_RESP, -EPROTO},
		{0, PROTO_MSG_CREATE_RESP, 101, PROTO_MSG_CREATE_RESP, -EPROTO},
		{0, PROTO_MSG_CREATE_RESP, 148, PROTO_MSG_CREATE_RESP,
			-EPROTO},
		{0, PROTO_MSG_OPEN_RESP, 44, PROTO_MSG_OPEN_RESP, -EPROTO},
		{0, PROTO_MSG_OPEN_RESP, 147, PROTO_MSG_OPEN_RESP, -EPROTO},
		{0, PROTO_MSG_OPEN_RESP, 205, PROTO_MSG_OPEN_RESP, -EPROTO},
		{0, PROTO_MSG_OPEN_RESP, UINT64_MAX, PROTO_MSG_OPEN_RESP,
			-EPROTO},
		{0, PROTO_MSG_CLOSE_RESP, 15, PROTO_MSG_CLOSE_RESP, -EPROTO},
		{0, PROTO_MSG_CLOSE_RESP, 48, PROTO_MSG_CLOSE_RESP, -EPROTO},
		{0, PROTO_MSG_SET_ATTR_RESP, 17, PROTO_MSG_SET_ATTR_RESP,
			-EPROTO},
		/* the 32-byte extension of our unreleased minor 2 */
		{0, PROTO_MSG_CREATE_RESP, 76, PROTO_MSG_CREATE_RESP, -EPROTO},
		{0, PROTO_MSG_OPEN_RESP, 180, PROTO_MSG_OPEN_RESP, -EPROTO},
		{0, PROTO_MSG_CLOSE, 16, PROTO_MSG_CLOSE, -EINVAL},
		{0, 0, 16, 0, -EINVAL},
	};
	unsigned char buf[PROTO_HDR_RESP_SIZE];
	uint32_t status;
	uint64_t size;

	for (size_t i = 0; i < TU_NELEMS(cases); i++) {
		be_set(buf, 0, 4, cases[i].status);
		be_set(buf, 4, 4, cases[i].type);
		be_set(buf, 8, 8, cases[i].size);
		ck_assert_msg(proto_hdr_resp_decode(buf, sizeof(buf),
				cases[i].expected, &status, &size) ==
				cases[i].ret, "case %zu", i);
	}
}
END_TEST

START_TEST(test_every_truncation_of_a_response_is_refused)
{
	unsigned char buf[BUF_LEN];
	enum proto_msg_type type = proto_resp_type(req_types[_i / 2]);
	size_t n = enc_resp(buf, type, _i % 2);

	for (size_t len = 0; len < n; len++)
		ck_assert_int_eq(resp_ret(buf, len, type), -EPROTO);
	ck_assert_int_eq(resp_ret(buf, n, type), 0);
	ck_assert_int_eq(resp_ret(buf, n + 1, type), -EPROTO);
}
END_TEST

START_TEST(test_success_response_needs_valid_port_and_method)
{
	static const struct {
		size_t off;
		uint32_t val;
		int ret;
	} cases[] = {
		{16, 0, -EPROTO}, {16, 65536, -EPROTO},
		{16, 0xffffffff, -EPROTO}, {16, 1, 0}, {16, 65535, 0},
		{20, 0, -EPROTO}, {20, 3, -EPROTO}, {20, 0xffffffff, -EPROTO},
		{20, PROTO_PM_GPSPM, 0}, {20, PROTO_PM_APM, 0},
	};
	unsigned char buf[BUF_LEN];
	enum proto_msg_type type = _i ? PROTO_MSG_OPEN_RESP :
			PROTO_MSG_CREATE_RESP;

	for (size_t i = 0; i < TU_NELEMS(cases); i++) {
		size_t n = enc_resp(buf, type, false);
		be_set(buf, cases[i].off, 4, cases[i].val);
		ck_assert_int_eq(resp_ret(buf, n, type), cases[i].ret);
		/* a failure status carries no usable ibc: not checked */
		be_set(buf, 0, 4, PROTO_ERR_FATAL);
		ck_assert_int_eq(resp_ret(buf, n, type), 0);
	}
}
END_TEST

START_TEST(test_extension_with_wrong_version_is_refused)
{
	unsigned char buf[BUF_LEN];
	enum proto_msg_type type = _i ? PROTO_MSG_OPEN_RESP :
			PROTO_MSG_CREATE_RESP;
	size_t n = enc_resp(buf, type, true);
	size_t ext = n - PROTO_EXT_SIZE;

	be_set(buf, ext, 2, 1);
	ck_assert_int_eq(resp_ret(buf, n, type), -EPROTO);
	be_set(buf, ext, 2, PROTO_MAJOR);
	be_set(buf, ext + 2, 2, PROTO_MINOR_PMDK);
	ck_assert_int_eq(resp_ret(buf, n, type), -EPROTO);
	be_set(buf, ext + 2, 2, PROTO_MINOR + 1);
	ck_assert_int_eq(resp_ret(buf, n, type), 0);
	/* a minor-3 daemon, which knows no OUTDATE nor flags, still answers */
	be_set(buf, ext + 2, 2, PROTO_MINOR_EXT);
	be_set(buf, ext + 20, 4, 0);
	ck_assert_int_eq(resp_ret(buf, n, type), 0);
}
END_TEST

static const char zeros[PROTO_HOST_MAX];

/* an OUTDATE body spoilt at one place: byte offset, the bytes put there */
static const struct {
	const char *what;
	size_t off;
	size_t len;
	const char *bytes;
} outdate_bad[] = {
	{"mark 2", 15, 1, "\x02"},
	{"mark 0x01000001", 12, 1, "\x01"},
	{"reserved byte set", 19, 1, "\x01"},
	{"time past INT64_MAX", 20, 1, "\x80"},
	{"host without its NUL", 28, 64,
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"},
	{"host not NUL-padded", 28 + 20, 1, "x"},
	{"host with a blank", 28 + 3, 1, " "},
	{"host with a control byte", 28, 1, "\n"},
	{"host with a byte above '~'", 28 + 1, 1, "\x80"},
	{"mark with an empty host", 28, PROTO_HOST_MAX, zeros},
};

START_TEST(test_malformed_outdate_is_refused)
{
	unsigned char buf[BUF_LEN];
	size_t n = enc_req(buf, PROTO_MSG_OUTDATE);
	ck_assert_int_eq(req_ret(buf, n), 0);
	memcpy(buf + outdate_bad[_i].off, outdate_bad[_i].bytes,
		outdate_bad[_i].len);
	ck_assert_msg(req_ret(buf, n) == -EPROTO, "%s", outdate_bad[_i].what);
	/* one byte more or less than its fixed size */
	n = enc_req(buf, PROTO_MSG_OUTDATE);
	be_set(buf, 4, 8, n + 1);
	ck_assert_int_eq(req_ret(buf, n + 1), -EPROTO);
}
END_TEST

/* a GEN body spoilt at one place: byte offset, the bytes put there */
static const struct {
	const char *what;
	size_t off;
	size_t len;
	const char *bytes;
} gen_bad[] = {
	{"op 3", 15, 1, "\x03"},
	{"an unknown flag", 19, 1, "\x04"},
	{"a block flag unknown", 20 + 99, 1, "\x02"},
	{"nine peers", 20 + 103, 1, "\x09"},
	{"a gap in the history", 20 + 16 + 8 * 3, 1, "\x01"},
	{"a peer flag unknown", 20 + 104 + 19, 1, "\x02"},
	{"a peer's reserved word set", 20 + 104 + 23, 1, "\x01"},
	{"bytes past the peers", 20 + 104 + 24 * 2, 1, "\x01"},
};

START_TEST(test_malformed_gen_is_refused)
{
	unsigned char buf[BUF_LEN];
	size_t n = enc_req(buf, PROTO_MSG_GEN);
	ck_assert_int_eq(req_ret(buf, n), 0);
	memcpy(buf + gen_bad[_i].off, gen_bad[_i].bytes, gen_bad[_i].len);
	ck_assert_msg(req_ret(buf, n) == -EPROTO, "%s", gen_bad[_i].what);
	/* the same block in a GEN_RESP */
	struct proto_resp r;
	unsigned char rb[BUF_LEN];
	n = enc_resp(rb, PROTO_MSG_GEN_RESP, false);
	if (gen_bad[_i].off >= 20) {
		memcpy(rb + gen_bad[_i].off - 4, gen_bad[_i].bytes,
			gen_bad[_i].len);
		ck_assert_msg(proto_resp_decode(rb, n, PROTO_MSG_GEN_RESP,
			&r) == -EPROTO, "resp: %s", gen_bad[_i].what);
	}
}
END_TEST

/* BEAT's interval: its bounds, decoded and encoded alike */
static const struct {
	uint32_t ms;
	int ret;
} beat_cases[] = {
	{0, -EPROTO},
	{PROTO_BEAT_MIN_MS - 1, -EPROTO},
	{PROTO_BEAT_MIN_MS, 0},
	{PROTO_BEAT_MAX_MS, 0},
	{PROTO_BEAT_MAX_MS + 1, -EPROTO},
	{0xffffffff, -EPROTO},
};

START_TEST(test_beat_interval_is_bounded)
{
	unsigned char buf[BUF_LEN];
	size_t n = enc_req(buf, PROTO_MSG_BEAT);
	be_set(buf, 12, 4, beat_cases[_i].ms);
	ck_assert_int_eq(req_ret(buf, n), beat_cases[_i].ret);
	struct proto_req r;
	sample_req(&r, PROTO_MSG_BEAT);
	r.beat_ms = beat_cases[_i].ms;
	ck_assert_int_eq(proto_req_encode(&r, buf, sizeof(buf)) > 0 ? 0 :
		-EPROTO, beat_cases[_i].ret);
}
END_TEST

/* the encoder refuses what the decoder would */
START_TEST(test_outdate_encoder_refuses_bad_input)
{
	unsigned char buf[BUF_LEN];
	struct proto_req r;

	sample_req(&r, PROTO_MSG_OUTDATE);
	r.outdate_mark = 2;
	ck_assert_int_eq(proto_req_encode(&r, buf, sizeof(buf)), -EINVAL);
	sample_req(&r, PROTO_MSG_OUTDATE);
	r.outdate_time = -1;
	ck_assert_int_eq(proto_req_encode(&r, buf, sizeof(buf)), -EINVAL);
	sample_req(&r, PROTO_MSG_OUTDATE);
	memset(r.outdate_host, 'h', sizeof(r.outdate_host));
	ck_assert_int_eq(proto_req_encode(&r, buf, sizeof(buf)), -EINVAL);
	sample_req(&r, PROTO_MSG_OUTDATE);
	r.outdate_host[0] = '\0';
	ck_assert_int_eq(proto_req_encode(&r, buf, sizeof(buf)), -EINVAL);
	sample_req(&r, PROTO_MSG_OUTDATE);
	ck_assert_int_eq(proto_req_encode(&r, buf, PROTO_OUTDATE_SIZE - 1),
		-ENOBUFS);
}
END_TEST

/* reserved bytes are zero: anything else is refused, never ignored */
START_TEST(test_reserved_bytes_must_be_zero)
{
	unsigned char buf[BUF_LEN];
	/* CREATE's request extension: bytes 4-7 after the descriptor */
	size_t n = enc_req(buf, PROTO_MSG_CREATE);
	size_t at = n - PROTO_REQ_EXT_SIZE + 4;
	ck_assert_int_eq(req_ret(buf, n), 0);
	buf[at + 3] = 1;
	ck_assert_int_eq(req_ret(buf, n), -EPROTO);
	/* OPEN_RESP's extension: bytes 20-23 of the block */
	n = enc_resp(buf, PROTO_MSG_OPEN_RESP, true);
	at = PROTO_OPEN_RESP_SIZE + 20;
	ck_assert_int_eq(resp_ret(buf, n, PROTO_MSG_OPEN_RESP), 0);
	buf[at] = 0x80;
	ck_assert_int_eq(resp_ret(buf, n, PROTO_MSG_OPEN_RESP), -EPROTO);
	/* HASH_RESP: the 4 bytes after the count */
	struct proto_resp r;
	memset(&r, 0, sizeof(r));
	r.type = PROTO_MSG_HASH_RESP;
	r.nhashes = 2;
	r.hashes[0] = 1;
	r.hashes[1] = 2;
	ssize_t len = proto_resp_encode(&r, buf, sizeof(buf));
	ck_assert_int_eq(len, PROTO_HASH_RESP_SIZE + 16);
	ck_assert_int_eq(resp_ret(buf, (size_t)len, PROTO_MSG_HASH_RESP), 0);
	buf[PROTO_HDR_RESP_SIZE + 5] = 1;
	ck_assert_int_eq(resp_ret(buf, (size_t)len, PROTO_MSG_HASH_RESP),
		-EPROTO);
}
END_TEST

/*
 * the response extension's flags (minor 7): known ones only, and none
 * from an older peer, whose word there was reserved; both codecs agree
 */
static const struct {
	uint16_t minor;
	uint32_t flags;
	int ret;	/* the decoder's; the encoder's is -EINVAL for -EPROTO */
} Ext_flags[] = {
	{ PROTO_MINOR_FLAGS, PROTO_EXT_WRITES_BACK, 0 },
	{ PROTO_MINOR_FLAGS, 0, 0 },
	{ PROTO_MINOR_FLAGS - 1, 0, 0 },
	{ PROTO_MINOR_FLAGS - 1, PROTO_EXT_WRITES_BACK, -EPROTO },
	{ PROTO_MINOR_FLAGS, PROTO_EXT_FLAGS + 1, -EPROTO },
	{ PROTO_MINOR_FLAGS, 0x80000000U, -EPROTO },
};

START_TEST(test_ext_flags_known_and_in_time)
{
	unsigned char buf[BUF_LEN];
	struct proto_resp r, got;
	sample_resp(&r, PROTO_MSG_CREATE_RESP, true);
	size_t n = enc_resp(buf, PROTO_MSG_CREATE_RESP, true);
	be_set(buf, PROTO_CREATE_RESP_SIZE + 2, 2, Ext_flags[_i].minor);
	be_set(buf, PROTO_CREATE_RESP_SIZE + 20, 4, Ext_flags[_i].flags);
	ck_assert_int_eq(resp_ret(buf, n, PROTO_MSG_CREATE_RESP),
		Ext_flags[_i].ret);
	if (!Ext_flags[_i].ret) {
		ck_assert_int_eq(proto_resp_decode(buf, n,
			PROTO_MSG_CREATE_RESP, &got), 0);
		ck_assert_uint_eq(got.ext.flags, Ext_flags[_i].flags);
	}
	r.ext.minor = Ext_flags[_i].minor;
	r.ext.flags = Ext_flags[_i].flags;
	ck_assert_int_eq(proto_resp_encode(&r, buf, sizeof(buf)),
		Ext_flags[_i].ret ? -EINVAL : (ssize_t)n);
}
END_TEST

START_TEST(test_request_encoder_refuses_bad_input)
{
	unsigned char buf[BUF_LEN];
	struct proto_req r;

	sample_req(&r, PROTO_MSG_CREATE);
	size_t need = PROTO_CREATE_SIZE + sizeof(DESC) + PROTO_REQ_EXT_SIZE;
	memset(buf, 0xa5, sizeof(buf));
	ck_assert_int_eq(proto_req_encode(&r, buf, need - 1), -ENOBUFS);
	ck_assert_uint_eq(buf[0], 0xa5);
	ck_assert_int_eq(proto_req_encode(&r, buf, need), (ssize_t)need);
	ck_assert_uint_eq(buf[need], 0xa5);
	ck_assert_int_eq(proto_req_encode(&r, buf, 0), -ENOBUFS);

	r.desc[0] = '\0';
	ck_assert_int_eq(proto_req_encode(&r, buf, sizeof(buf)), -EINVAL);
	memset(r.desc, 'x', sizeof(r.desc));
	ck_assert_int_eq(proto_req_encode(&r, buf, sizeof(buf)), -EINVAL);

	sample_req(&r, PROTO_MSG_OPEN);
	r.common.provider = PROTO_PROV_UNKNOWN;
	ck_assert_int_eq(proto_req_encode(&r, buf, sizeof(buf)), -EINVAL);
	r.common.provider = PROTO_PROV_MAX;
	ck_assert_int_eq(proto_req_encode(&r, buf, sizeof(buf)), -EINVAL);

	sample_req(&r, PROTO_MSG_CLOSE_RESP);
	ck_assert_int_eq(proto_req_encode(&r, buf, sizeof(buf)), -EINVAL);
	sample_req(&r, PROTO_MSG_CLOSE);
	ck_assert_int_eq(proto_req_encode(&r, buf, 15), -ENOBUFS);
	ck_assert_int_eq(proto_req_encode(NULL, buf, sizeof(buf)), -EINVAL);
	ck_assert_int_eq(proto_req_encode(&r, NULL, sizeof(buf)), -EINVAL);
}
END_TEST

START_TEST(test_response_encoder_refuses_bad_input)
{
	unsigned char buf[BUF_LEN];
	struct proto_resp r;

	sample_resp(&r, PROTO_MSG_OPEN_RESP, true);
	memset(buf, 0xa5, sizeof(buf));
	ck_assert_int_eq(proto_resp_encode(&r, buf, 203), -ENOBUFS);
	ck_assert_uint_eq(buf[0], 0xa5);
	ck_assert_int_eq(proto_resp_encode(&r, buf, 204), 204);
	ck_assert_uint_eq(buf[204], 0xa5);

	r.status = PROTO_ERR_MAX;
	ck_assert_int_eq(proto_resp_encode(&r, buf, sizeof(buf)), -EINVAL);
	r.status = PROTO_SUCCESS;
	r.ibc.port = 0;
	ck_assert_int_eq(proto_resp_encode(&r, buf, sizeof(buf)), -EINVAL);
	r.ibc.port = 65536;
	ck_assert_int_eq(proto_resp_encode(&r, buf, sizeof(buf)), -EINVAL);
	r.ibc.port = 1;
	r.ibc.persist_method = 3;
	ck_assert_int_eq(proto_resp_encode(&r, buf, sizeof(buf)), -EINVAL);

	sample_resp(&r, PROTO_MSG_OPEN, false);
	ck_assert_int_eq(proto_resp_encode(&r, buf, sizeof(buf)), -EINVAL);
	/* an extension on a response that has none is not sent */
	sample_resp(&r, PROTO_MSG_CLOSE_RESP, false);
	r.has_ext = true;
	ck_assert_int_eq(proto_resp_encode(&r, buf, sizeof(buf)), 16);
	ck_assert_int_eq(proto_resp_encode(NULL, buf, sizeof(buf)), -EINVAL);
}
END_TEST

START_TEST(test_decoders_refuse_null_arguments)
{
	unsigned char buf[BUF_LEN];
	struct proto_req req;
	struct proto_resp resp;
	uint32_t u32;
	uint64_t u64;
	size_t n = enc_req(buf, PROTO_MSG_CLOSE);

	ck_assert_int_eq(proto_hdr_decode(NULL, n, &u32, &u64), -EINVAL);
	ck_assert_int_eq(proto_hdr_decode(buf, n, NULL, &u64), -EINVAL);
	ck_assert_int_eq(proto_hdr_decode(buf, n, &u32, NULL), -EINVAL);
	ck_assert_int_eq(proto_req_decode(NULL, n, &req), -EINVAL);
	ck_assert_int_eq(proto_req_decode(buf, n, NULL), -EINVAL);
	ck_assert_int_eq(proto_hdr_resp_decode(NULL, 16, 6, &u32, &u64),
			-EINVAL);
	ck_assert_int_eq(proto_resp_decode(NULL, 16, 6, &resp), -EINVAL);
	ck_assert_int_eq(proto_resp_decode(buf, 16, 6, NULL), -EINVAL);
}
END_TEST

/* proto_add_reject -- the refusal cases, one test case of suite `s` */
void
proto_add_reject(Suite *s)
{
	const struct tu_entry e[] = {
		TU_ONE(test_header_shorter_than_12_bytes_is_refused),
		TU_EACH(test_malformed_outdate_is_refused, outdate_bad),
		TU_EACH(test_beat_interval_is_bounded, beat_cases),
		TU_EACH(test_malformed_gen_is_refused, gen_bad),
		TU_ONE(test_outdate_encoder_refuses_bad_input),
		TU_ONE(test_non_request_type_in_header_is_refused),
		TU_ONE(test_header_size_over_cap_is_refused_with_emsgsize),
		TU_ONE(test_header_size_outside_type_bounds_is_refused),
		TU_TIMES(test_every_truncation_of_a_request_is_refused,
			NREQ_TYPES),
		TU_TIMES(test_malformed_descriptor_is_refused, 2),
		TU_TIMES(test_descriptor_length_limit_is_enforced, 2),
		TU_TIMES(test_other_major_is_refused_as_unsupported, 2),
		TU_TIMES(test_any_minor_is_left_to_the_daemon, 2),
		TU_TIMES(test_unknown_provider_is_refused, 2),
		TU_ONE(test_response_header_checks_type_status_and_size),
		TU_TIMES(test_every_truncation_of_a_response_is_refused,
			2 * NREQ_TYPES),
		TU_TIMES(test_success_response_needs_valid_port_and_method, 2),
		TU_TIMES(test_extension_with_wrong_version_is_refused, 2),
		TU_ONE(test_reserved_bytes_must_be_zero),
		TU_EACH(test_ext_flags_known_and_in_time, Ext_flags),
		TU_ONE(test_request_encoder_refuses_bad_input),
		TU_ONE(test_response_encoder_refuses_bad_input),
		TU_ONE(test_decoders_refuse_null_arguments),
	};
	TCase *tc = tcase_create("reject");
	tu_tcase_add(tc, e, TU_NELEMS(e));
	suite_add_tcase(s, tc);
}
