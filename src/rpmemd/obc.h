/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * obc.h -- rpmemd side of the out-of-band channel (stdin/stdout over ssh)
 */
#ifndef RPMEMD_OBC_H
#define RPMEMD_OBC_H 1

#include <stdint.h>

#include "proto.h"

/*
 * obc_recv -- read one request: its first byte within `idle_ms` (< 0:
 * as long as it takes, since an open pool may idle for days, unless
 * `wake_fd` >= 0 turns readable first), the rest of the header and the
 * body within `timeout_ms`.  Returns 0, -ECONNRESET on EOF before the
 * first byte, -ECANCELED when woken, -EPROTO / -EMSGSIZE /
 * -EPROTONOSUPPORT for a malformed or cut message (with *type set when
 * the header names a request type, 0 otherwise), -ETIMEDOUT for a
 * request, or the rest of one, that never came.
 */
int obc_recv(int fd, int wake_fd, struct proto_req *req, uint32_t *type,
		int idle_ms, int timeout_ms);

/* obc_send -- write one response (never inside a beat) */
int obc_send(int fd, const struct proto_resp *resp);

/*
 * obc_send_beat -- write one bare BEAT_RESP (never inside a response);
 * -EAGAIN without writing when the channel is full (the client reads
 * nothing: a stopped client must not stop rpmemd)
 */
int obc_send_beat(int fd);

/* obc_send_status -- the 4-byte start-up status word, host order */
int obc_send_status(int fd, uint32_t status);

#endif /* RPMEMD_OBC_H */
