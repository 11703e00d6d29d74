/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * session.h -- one rpmemd session: the request state machine
 *
 *	INIT --CREATE/OPEN ok--> OPEN --CLOSE--> DONE
 *	  |                       |  ^
 *	  |                       |  +-- SET_ATTR
 *	  +--CREATE/OPEN failed---+--EOF / bad message--> DONE
 *
 * A message not legal in the current state, malformed, over its size
 * limit or not complete in time is answered with PROTO_ERR_FATAL (when
 * its header names a request type) and ends the session; every refusal
 * also goes to stderr as the first error logged for the request.
 */
#ifndef RPMEMD_SESSION_H
#define RPMEMD_SESSION_H 1

#include "config.h"
#include "db.h"

enum session_state {
	SESSION_INIT,
	SESSION_OPEN,
	SESSION_DONE,
};

/*
 * session_run -- serve requests from `in`, answer on `out` until the
 * session ends.  Returns 0 for a clean end (CLOSE or EOF), -errno after a
 * protocol violation or an internal failure.  The pool is closed either
 * way.
 */
int session_run(const struct config *cfg, struct db *db, int in, int out);

#endif /* RPMEMD_SESSION_H */
