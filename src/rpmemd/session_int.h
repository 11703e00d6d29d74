/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * session_int.h -- what session.c (the request state machine) and
 * session_pool.c (CREATE and OPEN) share
 */
#ifndef RPMEMD_SESSION_INT_H
#define RPMEMD_SESSION_INT_H 1

#include <stdbool.h>
#include <stdint.h>

#include "beat.h"
#include "db.h"
#include "proto.h"
#include "session.h"
#include "session_gen.h"

struct session {
	enum session_state state;
	const struct config *cfg;
	struct db *db;
	struct db_pool *pool;
	struct fabric *fab;		/* NULL until lanes are set up */
	int in;
	int out;
	int timeout_ms;			/* see request_timeout */
	int accept_ms;			/* lanes' admission, within it */
	uint64_t size;			/* the pool size asked for */
	uint16_t minor;			/* negotiated protocol minor */
	bool pmdk;			/* a PMDK 1.12 client (0.1) */
	bool created;			/* CREATE made the pool */
	struct session_gen gen;		/* the generations, minor 5 on */
	struct beat *beat;		/* the heartbeat, once asked for */
	char desc[PROTO_DESC_MAX];	/* the pool set served, once open */
};


/* session_reply -- send a response of the type answering `type` */
int session_reply(struct session *s, uint32_t type, int err,
		struct proto_resp *resp);

/*
 * session_check_version -- the protocol the session speaks, from the
 * client's common block (scenario R19); 0 or -errno
 */
int session_check_version(struct session *s, const struct proto_common *c);

/* session_handle_pool -- CREATE or OPEN; 0 or -errno */
int session_handle_pool(struct session *s, const struct proto_req *req);

#endif /* RPMEMD_SESSION_INT_H */
