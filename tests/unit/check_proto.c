/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_proto.c -- unit tests of the out-of-band wire encoders/decoders
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "tu_check.h"

#define BUF_LEN (PROTO_REQ_MAX + 64)
#define DESC "pool.set"

/* the byte readers below are written without endian.h on purpose */

/* be_at -- read an `n`-byte big-endian number at `b` + `off` */
static uint64_t
be_at(const unsigned char *b, size_t off, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v = (v << 8) | b[off + i];
	return v;
}

/* be_set -- write an `n`-byte big-endian number at `b` + `off` */
static void
be_set(unsigned char *b, size_t off, size_t n, uint64_t v)
{
	for (size_t i = n; i > 0; i--) {
		b[off + i - 1] = (unsigned char)(v & 0xff);
		v >>= 8;
	}
}

/* host32_at -- read a host-order u32 at `b` + `off` */
static uint32_t
host32_at(const unsigned char *b, size_t off)
{
	uint32_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

/* a field of an encoded message: a big-endian number, or bytes */
struct field {
	const char *name;
	size_t off;
	size_t width;		/* of the number; 0: `len` bytes at `bytes` */
	uint64_t want;
	const void *bytes;
	size_t len;
};
#define NUM(name, off, width, want) { name, off, width, want, NULL, 0 }
#define BYTES(name, off, p, len) { name, off, 0, 0, p, len }

/* fields_are -- each field sits in `b` as expected; names the first not */
static void
fields_are(const unsigned char *b, const struct field *f, size_t n,
	const char *what)
{
	for (size_t i = 0; i < n; i++) {
		if (f[i].width) {
			uint64_t got = be_at(b, f[i].off, f[i].width);
			ck_assert_msg(got == f[i].want, "%s: %s at %zu is "
				"0x%llx, expected 0x%llx", what, f[i].name,
				f[i].off, (unsigned long long)got,
				(unsigned long long)f[i].want);
		} else {
			ck_assert_msg(memcmp(b + f[i].off, f[i].bytes,
				f[i].len) == 0, "%s: the %zu bytes of %s at "
				"%zu differ", what, f[i].len, f[i].name,
				f[i].off);
		}
	}
}

/* sample_attr -- attributes whose bytes include NUL and '\n' */
static void
sample_attr(struct rpmem_pool_attr *a)
{
	static const char sig[RPMEM_POOL_HDR_SIG_LEN] =
		{'P', 'M', '\0', '\n', 'O', 'B', 'J', '\n'};

	memcpy(a->signature, sig, sizeof(sig));
	a->major = 0x01020304;
	a->compat_features = 0x0a000000;
	a->incompat_features = 0xa1b2c3d4;
	a->ro_compat_features = 0x0000000a;
	for (unsigned i = 0; i < RPMEM_POOL_HDR_UUID_LEN; i++) {
		a->poolset_uuid[i] = (unsigned char)(i * 3);
		a->uuid[i] = (unsigned char)(i % 2 ? '\n' : 0);
		a->next_uuid[i] = (unsigned char)(0xf0 + i);
		a->prev_uuid[i] = (unsigned char)(i * 17);
		a->user_flags[i] = (unsigned char)(i == 7 ? '\n' : i);
	}
}

/* sample_req -- a valid request of `type` */
static void
sample_req(struct proto_req *r, enum proto_msg_type type)
{
	memset(r, 0, sizeof(*r));
	r->type = type;
	r->common.major = PROTO_MAJOR;
	r->common.minor = PROTO_MINOR;
	r->common.pool_size = 0x0102030405060708ULL;
	r->common.nlanes = 0x11223344;
	r->common.provider = PROTO_PROV_SOCKETS;
	r->common.buff_size = 0x8877665544332211ULL;
	r->has_attr = type == PROTO_MSG_CREATE || type == PROTO_MSG_SET_ATTR;
	if (r->has_attr)
		sample_attr(&r->attr);
	strcpy(r->desc, DESC);
	r->has_ext = type == PROTO_MSG_CREATE || type == PROTO_MSG_OPEN;
	if (r->has_ext) {
		r->ext.security = 0x0102;
		r->ext.cipher = 0x0304;
		for (unsigned i = 0; i < PROTO_RANDOM_LEN; i++)
			r->ext.random[i] = (unsigned char)(0xa0 + i);
	}
	if (type == PROTO_MSG_CLOSE)
		r->close_flags = 0xdeadbe01;
}

/* sample_resp -- a valid successful response of `type` */
static void
sample_resp(struct proto_resp *r, enum proto_msg_type type, bool ext)
{
	memset(r, 0, sizeof(*r));
	r->type = type;
	if (type == PROTO_MSG_STAT_RESP) {
		r->cpu_user_us = 0x0102030405060708ULL;
		r->cpu_sys_us = 0x1112131415161718ULL;
	}
	if (type != PROTO_MSG_CREATE_RESP && type != PROTO_MSG_OPEN_RESP)
		return;
	r->ibc.port = 0x1234;
	r->ibc.persist_method = PROTO_PM_APM;
	r->ibc.rkey = 0xa1a2a3a4a5a6a7a8ULL;
	r->ibc.raddr = 0x00007f0011223344ULL;
	r->ibc.nlanes = 0x01020304;
	if (type == PROTO_MSG_OPEN_RESP)
		sample_attr(&r->attr);
	r->has_ext = ext;
	if (ext) {
		r->ext.major = PROTO_MAJOR;
		r->ext.minor = PROTO_MINOR;
		r->ext.version = 0x0badf00d;
		r->ext.buff_size = 0x0000000100000000ULL;
		r->ext.security = 0x0a0b;
		r->ext.cipher = 0x0c0d;
		for (unsigned i = 0; i < PROTO_RANDOM_LEN; i++)
			r->ext.random[i] = (unsigned char)(0xff - i);
	}
}

/* common_eq -- field-wise, since the struct has padding */
static void
common_eq(const struct proto_common *a, const struct proto_common *b)
{
	ck_assert_uint_eq(a->major, b->major);
	ck_assert_uint_eq(a->minor, b->minor);
	ck_assert(a->pool_size == b->pool_size);
	ck_assert_uint_eq(a->nlanes, b->nlanes);
	ck_assert_uint_eq(a->provider, b->provider);
	ck_assert(a->buff_size == b->buff_size);
}

/* ibc_eq -- field-wise, since the struct has padding */
static void
ibc_eq(const struct proto_ibc *a, const struct proto_ibc *b)
{
	ck_assert_uint_eq(a->port, b->port);
	ck_assert_uint_eq(a->persist_method, b->persist_method);
	ck_assert(a->rkey == b->rkey);
	ck_assert(a->raddr == b->raddr);
	ck_assert_uint_eq(a->nlanes, b->nlanes);
}

/* ext_eq -- field-wise comparison of two extension blocks */
static void
ext_eq(const struct proto_ext *a, const struct proto_ext *b)
{
	ck_assert_uint_eq(a->major, b->major);
	ck_assert_uint_eq(a->minor, b->minor);
	ck_assert_uint_eq(a->version, b->version);
	ck_assert(a->buff_size == b->buff_size);
	ck_assert_uint_eq(a->security, b->security);
	ck_assert_uint_eq(a->cipher, b->cipher);
	ck_assert_mem_eq(a->random, b->random, PROTO_RANDOM_LEN);
}

/* enc_req -- encode a sample request; fails the test on error */
static size_t
enc_req(unsigned char *buf, enum proto_msg_type type)
{
	struct proto_req r;

	sample_req(&r, type);
	ssize_t n = proto_req_encode(&r, buf, BUF_LEN);
	ck_assert_int_gt(n, 0);
	return (size_t)n;
}

/* enc_resp -- encode a sample response; fails the test on error */
static size_t
enc_resp(unsigned char *buf, enum proto_msg_type type, bool ext)
{
	struct proto_resp r;

	sample_resp(&r, type, ext);
	ssize_t n = proto_resp_encode(&r, buf, BUF_LEN);
	ck_assert_int_gt(n, 0);
	return (size_t)n;
}

/* req_ret -- decode a request, return the result */
static int
req_ret(const unsigned char *buf, size_t len)
{
	struct proto_req r;

	return proto_req_decode(buf, len, &r);
}

/* resp_ret -- decode a response, return the result */
static int
resp_ret(const unsigned char *buf, size_t len, uint32_t expected)
{
	struct proto_resp r;

	return proto_resp_decode(buf, len, expected, &r);
}

static const enum proto_msg_type req_types[] = {PROTO_MSG_CREATE,
	PROTO_MSG_OPEN, PROTO_MSG_CLOSE, PROTO_MSG_SET_ATTR, PROTO_MSG_STAT};
#define NREQ_TYPES (sizeof(req_types) / sizeof(req_types[0]))

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
	fields_are(buf, f, sizeof(f) / sizeof(f[0]), "CREATE");
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
		NUM("reserved", 168, 4, 0),
		BYTES("random", 172, r.ext.random, PROTO_RANDOM_LEN),
	};
	fields_are(buf, f, sizeof(f) / sizeof(f[0]), "OPEN_RESP");
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
	static const uint32_t bad[] = {0, 2, 4, 6, 8, 9, 0x01000000,
		0xffffffff};
	unsigned char buf[BUF_LEN];
	uint32_t type;
	uint64_t size;
	size_t n = enc_req(buf, PROTO_MSG_CLOSE);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
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
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
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

START_TEST(test_header_size_outside_type_bounds_is_refused)
{
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
		{PROTO_MSG_OPEN, PROTO_REQ_MAX, 0},
		{PROTO_MSG_CLOSE, 15, -EPROTO},
		{PROTO_MSG_CLOSE, 16, 0},
		{PROTO_MSG_CLOSE, 17, -EPROTO},
		{PROTO_MSG_SET_ATTR, 115, -EPROTO},
		{PROTO_MSG_SET_ATTR, 116, 0},
		{PROTO_MSG_SET_ATTR, 117, -EPROTO},
	};
	unsigned char buf[PROTO_HDR_SIZE];
	uint32_t type;
	uint64_t size;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		be_set(buf, 0, 4, cases[i].type);
		be_set(buf, 4, 8, cases[i].size);
		ck_assert_int_eq(proto_hdr_decode(buf, sizeof(buf), &type,
				&size), cases[i].ret);
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
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
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
	ck_assert_int_eq(req_ret(buf, len), _i ? -EPROTO : -EMSGSIZE);
}
END_TEST

START_TEST(test_other_major_is_refused_as_unsupported)
{
	static const uint16_t bad[] = {1, 2, 0x100, 0xffff};
	unsigned char buf[BUF_LEN];
	struct proto_req r;
	size_t n = enc_req(buf, _i ? PROTO_MSG_OPEN : PROTO_MSG_CREATE);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
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

	for (size_t i = 0; i < sizeof(minors) / sizeof(minors[0]); i++) {
		sample_req(&in, _i ? PROTO_MSG_OPEN : PROTO_MSG_CREATE);
		in.common.minor = minors[i];
		bool ours = minors[i] >= PROTO_MINOR;
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

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
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

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
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

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
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
	ck_assert_uint_eq(proto_resp_type(13), 0);
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
}
END_TEST

/* proto_suite -- all wire format tests */
static Suite *
proto_suite(void)
{
	Suite *s = suite_create("proto");
	TCase *tc = tcase_create("layout");

	tcase_add_loop_test(tc, test_every_request_survives_a_round_trip,
			0, NREQ_TYPES);
	tcase_add_test(tc, test_request_with_zero_attr_decodes_as_no_attr);
	tcase_add_loop_test(tc, test_every_response_survives_a_round_trip,
			0, 2 * NREQ_TYPES);
	tcase_add_test(tc, test_stat_bytes_sit_at_their_offsets);
	tcase_add_test(tc, test_error_response_with_zeroed_ibc_is_accepted);
	tcase_add_test(tc, test_create_bytes_sit_at_pmdk_offsets);
	tcase_add_test(tc, test_open_close_set_attr_bytes_sit_at_pmdk_offsets);
	tcase_add_test(tc, test_open_resp_bytes_sit_at_pmdk_offsets);
	tcase_add_test(tc, test_create_resp_nlanes_is_host_order);
	suite_add_tcase(s, tc);

	tc = tcase_create("reject");
	tcase_add_test(tc, test_header_shorter_than_12_bytes_is_refused);
	tcase_add_test(tc, test_non_request_type_in_header_is_refused);
	tcase_add_test(tc, test_header_size_over_cap_is_refused_with_emsgsize);
	tcase_add_test(tc, test_header_size_outside_type_bounds_is_refused);
	tcase_add_loop_test(tc, test_every_truncation_of_a_request_is_refused,
			0, NREQ_TYPES);
	tcase_add_loop_test(tc, test_malformed_descriptor_is_refused, 0, 2);
	tcase_add_loop_test(tc, test_descriptor_length_limit_is_enforced,
			0, 2);
	tcase_add_loop_test(tc, test_other_major_is_refused_as_unsupported,
			0, 2);
	tcase_add_loop_test(tc, test_any_minor_is_left_to_the_daemon, 0, 2);
	tcase_add_loop_test(tc, test_unknown_provider_is_refused, 0, 2);
	tcase_add_test(tc, test_response_header_checks_type_status_and_size);
	tcase_add_loop_test(tc, test_every_truncation_of_a_response_is_refused,
			0, 2 * NREQ_TYPES);
	tcase_add_loop_test(tc,
			test_success_response_needs_valid_port_and_method,
			0, 2);
	tcase_add_loop_test(tc, test_extension_with_wrong_version_is_refused,
			0, 2);
	tcase_add_test(tc, test_reserved_bytes_must_be_zero);
	tcase_add_test(tc, test_request_encoder_refuses_bad_input);
	tcase_add_test(tc, test_response_encoder_refuses_bad_input);
	tcase_add_test(tc, test_decoders_refuse_null_arguments);
	suite_add_tcase(s, tc);

	tc = tcase_create("names");
	tcase_add_test(tc, test_resp_type_answers_requests_only);
	tcase_add_test(tc, test_attr_is_zero_notices_any_nonzero_byte);
	tcase_add_test(tc, test_status_maps_to_errno_and_text);
	tcase_add_test(tc, test_provider_and_pm_names);
	return tu_suite_add(s, tc);
}

/* main -- run proto_suite() (tu_check.h) */
TU_MAIN(proto_suite)
