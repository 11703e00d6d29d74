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

/*
 * obc_beat -- ask rpmemd (minor 6) to beat every `interval_ms`; from
 * then on a read waiting longer than `silence_ms` for rpmemd fails with
 * -ETIMEDOUT (the beats themselves are skipped).  0, a channel error,
 * or -errno of rpmemd's refusal.
 */
int obc_beat(struct ssh *ssh, unsigned interval_ms, int silence_ms,
		int timeout_ms);

/*
 * obc_watch -- the fabric monitor's look at the channel (arg: the
 * struct ssh): the beats that arrived while no request was out are read;
 * -ECONNRESET when rpmemd has been silent longer than allowed (the
 * lanes' calls then fail as on a dropped link), -EPROTO
 * for a message nobody asked for, -ECONNRESET at its end, 1 when a
 * request is out (its reader reads the beats: do not wait for them to be
 * read), else 0.  Does nothing before obc_beat.
 */
int obc_watch(void *arg);

#endif /* RPMEM_OBC_H */
