/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * obc.h -- client side of the out-of-band exchange with rpmemd
 */
#ifndef RPMEM_OBC_H
#define RPMEM_OBC_H 1

#include <stdint.h>

#include "proto.h"
#include "ssh.h"

/*
 * obc_initial_status -- read rpmemd's 4-byte start-up status (host
 * order); 0 when rpmemd is ready, the non-zero errno it sent, or -errno
 * for a channel failure (-ECONNRESET: ssh or rpmemd ended first).
 */
int obc_initial_status(struct ssh *ssh, int timeout_ms, uint32_t *status);

/*
 * obc_call -- send `req` and receive its response.  Returns 0 when the
 * exchange worked, whatever the status in resp->status; -EPROTO for a
 * malformed response, -ECONNRESET / -ETIMEDOUT for the channel.
 */
int obc_call(struct ssh *ssh, const struct proto_req *req,
		struct proto_resp *resp, int timeout_ms);

#endif /* RPMEM_OBC_H */
