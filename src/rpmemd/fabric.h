/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fabric.h -- rpmemd's in-band side: listener, lanes, worker threads
 *
 * fabric_init registers the pool and listens on an ephemeral port of the
 * address the client reached us at; fabric_accept admits exactly the
 * announced lanes, each with its token (lanesec.h), then closes the
 * listener; fabric_start runs the workers that apply lane messages,
 * opening each first when the session seals its lanes.  A lane whose
 * message fails to open ends the session: fabric_fail_fd turns readable.
 */
#ifndef RPMEMD_FABRIC_H
#define RPMEMD_FABRIC_H 1

#include <stdint.h>

#include "apply.h"
#include "lanesec.h"
#include "proto.h"

struct fabric;

struct fabric_attr {
	uint32_t provider;
	const char *node;		/* address to listen on */
	struct apply_pool pool;		/* raddr is filled by fabric_init */
	unsigned nlanes;		/* wanted; may shrink */
	unsigned nthreads;		/* 0: one per lane */
	const struct lanesec_keys *keys;	/* the session's */
	bool pmdk;			/* a PMDK 0.1 client: lanes without
					 * tokens, RMA writes, PMDK flags */
	int session_fd;			/* hung up => stop applying */
};

/*
 * fabric_init -- open the provider, register the pool, listen.  Fills
 * ibc (port, rkey, raddr, nlanes).  Returns 0 or -errno.
 */
int fabric_init(const struct fabric_attr *attr, struct fabric **fab,
		struct proto_ibc *ibc);

/*
 * fabric_accept -- admit the lanes within `timeout_ms` of the first
 * call, refusing every request without the secret.  With `heed_session`
 * it returns -EINPROGRESS, listener still open, as soon as the client
 * speaks on the session (a CLOSE of a client whose lanes failed, or a
 * request sent while the provider still completes our side of its
 * connections): the session reads it, then calls again, without
 * `heed_session`, to finish.  Otherwise the listener is closed when it
 * returns.
 */
int fabric_accept(struct fabric *fab, int timeout_ms, bool heed_session);

/*
 * fabric_settle -- a request other than CLOSE came while lanes were still
 * being admitted (fabric_accept returned -EINPROGRESS): a client speaks
 * only once its own side of every lane is up, so admit the rest before
 * it is served, never tear them down.  Returns `fab`, or NULL when the
 * admission failed and the fabric was finished.
 */
struct fabric *fabric_settle(struct fabric *fab, int timeout_ms);

/*
 * fabric_start -- start the worker threads; called before the answer to
 * CREATE or OPEN (they wait on the completion queues until lanes come)
 */
int fabric_start(struct fabric *fab);

/* fabric_fail_fd -- readable once a lane ended the session; -1: none */
int fabric_fail_fd(const struct fabric *fab);

/* fabric_fail_reason -- why a lane ended the session ("" if none did) */
const char *fabric_fail_reason(const struct fabric *fab);

/* fabric_fini -- stop workers, close lanes, deregister, free */
void fabric_fini(struct fabric *fab);

#endif /* RPMEMD_FABRIC_H */
