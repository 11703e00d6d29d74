/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * obc.c -- client side of the out-of-band exchange with rpmemd
 */
#include <errno.h>
#include <string.h>

#include "log.h"
#include "obc.h"

/* obc_initial_status -- read the start-up status word */
int
obc_initial_status(struct ssh *ssh, int timeout_ms, uint32_t *status)
{
	uint32_t word;
	int r = ssh_recv(ssh, &word, sizeof(word), timeout_ms);
	if (r)
		return r;
	*status = word;
	return 0;
}

/* obc_call -- one request/response round trip */
int
obc_call(struct ssh *ssh, const struct proto_req *req,
		struct proto_resp *resp, int timeout_ms)
{
	unsigned char buf[PROTO_REQ_MAX > PROTO_RESP_MAX ?
		PROTO_REQ_MAX : PROTO_RESP_MAX];

	ssize_t len = proto_req_encode(req, buf, sizeof(buf));
	if (len < 0)
		return (int)len;
	int r = ssh_send(ssh, buf, (size_t)len, timeout_ms);
	if (r)
		return r;

	uint32_t expected = proto_resp_type(req->type);
	r = ssh_recv(ssh, buf, PROTO_HDR_RESP_SIZE, timeout_ms);
	if (r)
		return r;
	uint32_t status;
	uint64_t size;
	r = proto_hdr_resp_decode(buf, PROTO_HDR_RESP_SIZE, expected,
		&status, &size);
	if (r) {
		log_err("malformed response header (expected type %u)",
			expected);
		return r;
	}
	/* size was capped at PROTO_RESP_MAX by the decoder */
	r = ssh_recv(ssh, buf + PROTO_HDR_RESP_SIZE,
		(size_t)size - PROTO_HDR_RESP_SIZE, timeout_ms);
	if (r)
		return r;
	r = proto_resp_decode(buf, (size_t)size, expected, resp);
	if (r)
		log_err("malformed response of type %u, size %llu", expected,
			(unsigned long long)size);
	return r;
}
