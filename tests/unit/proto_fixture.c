/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto_fixture.c -- sample messages of the protocol unit tests, their
 * encodings, and the check of fields at their offsets
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "proto_fixture.h"

/* fields_are -- each field sits in `b` as expected; names the first not */
void
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
void
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
void
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
	if (type == PROTO_MSG_OUTDATE) {
		r->outdate_mark = 1;
		r->outdate_time = 0x0102030405060708LL;
		strcpy(r->outdate_host, HOST);
	}
	if (type == PROTO_MSG_BEAT)
		r->beat_ms = 0x1234;
	if (type == PROTO_MSG_GEN) {
		r->gen_op = PROTO_GEN_ADOPT;
		r->gen_flags = PROTO_GEN_FLAG_CREATED;
		sample_gen(&r->gen);
	}
}

/* sample_gen -- identifiers with every field set */
void
sample_gen(struct gen *g)
{
	memset(g, 0, sizeof(*g));
	g->id = 0x0102030405060708ULL;
	g->current = 0x1112131415161718ULL;
	g->history[0] = 0x2122232425262728ULL;
	g->history[1] = 0x3132333435363738ULL;
	g->target = 0x4142434445464748ULL;
	g->master = 0x5152535455565758ULL;
	g->discarded = true;
	g->npeers = 2;
	g->peers[0] = (struct gen_peer){ 0x61, 0x62, true };
	g->peers[1] = (struct gen_peer){ 0x71, 0, false };
}

/* sample_resp -- a valid successful response of `type` */
void
sample_resp(struct proto_resp *r, enum proto_msg_type type, bool ext)
{
	memset(r, 0, sizeof(*r));
	r->type = type;
	if (type == PROTO_MSG_STAT_RESP) {
		r->cpu_user_us = 0x0102030405060708ULL;
		r->cpu_sys_us = 0x1112131415161718ULL;
	}
	if (type == PROTO_MSG_GEN_RESP)
		sample_gen(&r->gen);
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
		r->ext.flags = PROTO_EXT_WRITES_BACK;
		for (unsigned i = 0; i < PROTO_RANDOM_LEN; i++)
			r->ext.random[i] = (unsigned char)(0xff - i);
	}
}

/* common_eq -- field-wise, since the struct has padding */
void
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
void
ibc_eq(const struct proto_ibc *a, const struct proto_ibc *b)
{
	ck_assert_uint_eq(a->port, b->port);
	ck_assert_uint_eq(a->persist_method, b->persist_method);
	ck_assert(a->rkey == b->rkey);
	ck_assert(a->raddr == b->raddr);
	ck_assert_uint_eq(a->nlanes, b->nlanes);
}

/* ext_eq -- field-wise comparison of two extension blocks */
void
ext_eq(const struct proto_ext *a, const struct proto_ext *b)
{
	ck_assert_uint_eq(a->major, b->major);
	ck_assert_uint_eq(a->minor, b->minor);
	ck_assert_uint_eq(a->version, b->version);
	ck_assert(a->buff_size == b->buff_size);
	ck_assert_uint_eq(a->security, b->security);
	ck_assert_uint_eq(a->cipher, b->cipher);
	ck_assert_uint_eq(a->flags, b->flags);
	ck_assert_mem_eq(a->random, b->random, PROTO_RANDOM_LEN);
}

/* enc_req -- encode a sample request; fails the test on error */
size_t
enc_req(unsigned char *buf, enum proto_msg_type type)
{
	struct proto_req r;

	sample_req(&r, type);
	ssize_t n = proto_req_encode(&r, buf, BUF_LEN);
	ck_assert_int_gt(n, 0);
	return (size_t)n;
}

/* enc_resp -- encode a sample response; fails the test on error */
size_t
enc_resp(unsigned char *buf, enum proto_msg_type type, bool ext)
{
	struct proto_resp r;

	sample_resp(&r, type, ext);
	ssize_t n = proto_resp_encode(&r, buf, BUF_LEN);
	ck_assert_int_gt(n, 0);
	return (size_t)n;
}

/* req_ret -- decode a request, return the result */
int
req_ret(const unsigned char *buf, size_t len)
{
	struct proto_req r;

	return proto_req_decode(buf, len, &r);
}

/* resp_ret -- decode a response, return the result */
int
resp_ret(const unsigned char *buf, size_t len, uint32_t expected)
{
	struct proto_resp r;

	return proto_resp_decode(buf, len, expected, &r);
}

/* the request types, in the order of the loop tests' indices */
const enum proto_msg_type req_types[NREQ_TYPES] = {PROTO_MSG_CREATE,
	PROTO_MSG_OPEN, PROTO_MSG_CLOSE, PROTO_MSG_SET_ATTR, PROTO_MSG_STAT,
	PROTO_MSG_OUTDATE, PROTO_MSG_BEAT};

