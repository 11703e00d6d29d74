/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_proto.c -- libFuzzer harness for the out-of-band message decoders
 *
 * Besides "never crash", it checks that whatever a decoder accepts
 * re-encodes to exactly the bytes it came from, so a decoder cannot
 * silently accept something the encoder would never produce.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* check_req -- decode as a request; re-encode what was accepted */
static void
check_req(const uint8_t *data, size_t size)
{
	static unsigned char out[PROTO_REQ_MAX];
	struct proto_req req;
	uint32_t type;
	uint64_t hsize;

	int hret = proto_hdr_decode(data, size, &type, &hsize);
	int ret = proto_req_decode(data, size, &req);
	if (ret != 0)
		return;

	/* the header check alone must never be stricter than the whole */
	if (hret != 0 || hsize != size)
		abort();

	ssize_t n = proto_req_encode(&req, out, sizeof(out));
	if (n < 0 || (size_t)n != size || memcmp(out, data, size) != 0)
		abort();
}

/* check_resp -- decode as a response of `type`; re-encode if accepted */
static void
check_resp(const uint8_t *data, size_t size, uint32_t type)
{
	static unsigned char out[PROTO_RESP_MAX];
	struct proto_resp resp;

	if (proto_resp_decode(data, size, type, &resp) != 0)
		return;

	ssize_t n = proto_resp_encode(&resp, out, sizeof(out));
	if (n < 0 || (size_t)n != size || memcmp(out, data, size) != 0)
		abort();
}

/* LLVMFuzzerTestOneInput -- feed one input to every decoder */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_req(data, size);
	for (uint32_t t = PROTO_MSG_CREATE_RESP; t <= PROTO_MSG_HASH_RESP;
			t += 2)
		check_resp(data, size, t);

	return 0;
}
