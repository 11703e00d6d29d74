/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto_fixture.h -- what the protocol unit tests share (proto_fixture.c):
 * sample messages, their encodings, byte readers and field tables
 */
#ifndef PROTO_FIXTURE_H
#define PROTO_FIXTURE_H 1

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto.h"
#include "tu.h"

#define BUF_LEN (PROTO_REQ_MAX + 64)
#define DESC "pool.set"
#define NREQ_TYPES 7
#define HOST "primary-a"

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

/* the byte readers and writer of tu.h (tu_bytes.c, without endian.h) */
#define be_at tu_be_at
#define be_set tu_be_set
#define host32_at tu_host32_at

/* fields_are -- each field sits in `b` as expected; names the first not */
void fields_are(const unsigned char *b, const struct field *f, size_t n,
	const char *what);

/* sample_attr -- attributes whose bytes include NUL and '\n' */
void sample_attr(struct rpmem_pool_attr *a);

/* sample_gen -- data-generation identifiers with every field set */
void sample_gen(struct gen *g);

/* sample_req -- a valid request of `type` */
void sample_req(struct proto_req *r, enum proto_msg_type type);

/* sample_resp -- a valid successful response of `type` */
void sample_resp(struct proto_resp *r, enum proto_msg_type type, bool ext);

/* common_eq -- field-wise, since the struct has padding */
void common_eq(const struct proto_common *a, const struct proto_common *b);

/* ibc_eq -- field-wise, since the struct has padding */
void ibc_eq(const struct proto_ibc *a, const struct proto_ibc *b);

/* ext_eq -- field-wise comparison of two extension blocks */
void ext_eq(const struct proto_ext *a, const struct proto_ext *b);

/* enc_req -- encode a sample request; fails the test on error */
size_t enc_req(unsigned char *buf, enum proto_msg_type type);

/* enc_resp -- encode a sample response; fails the test on error */
size_t enc_resp(unsigned char *buf, enum proto_msg_type type, bool ext);

/* req_ret -- decode a request, return the result */
int req_ret(const unsigned char *buf, size_t len);

/* resp_ret -- decode a response, return the result */
int resp_ret(const unsigned char *buf, size_t len, uint32_t expected);

/* the request types, in the order of the loop tests' indices */
extern const enum proto_msg_type req_types[NREQ_TYPES];

/* proto_add_reject -- the refusal cases (check_proto_reject.c) */
void proto_add_reject(Suite *s);

#endif /* PROTO_FIXTURE_H */
