/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto_int.h -- between proto.c and the bodies of our extension
 * messages in proto_ext.c; not for other modules
 */
#ifndef RPMEM_PROTO_INT_H
#define RPMEM_PROTO_INT_H 1

#include "proto.h"

/*
 * proto_outdate_get -- decode the body of an OUTDATE whose header is
 * good: 0, or -EPROTO for a mark other than 0 and 1, a reserved byte
 * set, a time past INT64_MAX, a host without its NUL, not NUL-padded,
 * with a blank or control byte, or empty in a mark
 */
int proto_outdate_get(const unsigned char *p, struct proto_req *req);

/* proto_outdate_put -- encode it; -EINVAL for what the decoder refuses */
int proto_outdate_put(unsigned char *p, const struct proto_req *req);

/* proto_beat_get -- decode the body of a BEAT (its interval checked) */
int proto_beat_get(const unsigned char *p, struct proto_req *req);

/* proto_beat_put -- encode it; -EINVAL for what the decoder refuses */
int proto_beat_put(unsigned char *p, const struct proto_req *req);

/*
 * proto_gen_get -- decode the body of a GEN whose header is good: 0, or
 * -EPROTO for an op or flag unknown, or a block proto_gen_block_get
 * refuses
 */
int proto_gen_get(const unsigned char *p, struct proto_req *req);

/* proto_gen_put -- encode it; -EINVAL for what the decoder refuses */
int proto_gen_put(unsigned char *p, const struct proto_req *req);

/*
 * proto_gen_block_get -- a copy's identifiers at `p`: -EPROTO for more
 * peers than GEN_PEERS, bytes set past them or in a reserved field, an
 * unknown flag, a gap in the history, a peer without an id
 */
int proto_gen_block_get(const unsigned char *p, struct gen *g);

/* proto_gen_block_put -- encode them; -EINVAL as the decoder refuses */
int proto_gen_block_put(unsigned char *p, const struct gen *g);

#endif /* RPMEM_PROTO_INT_H */
