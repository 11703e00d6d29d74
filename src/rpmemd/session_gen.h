/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * session_gen.h -- the replica's data-generation identifiers through one
 * session (session_gen.c)
 */
#ifndef RPMEMD_SESSION_GEN_H
#define RPMEMD_SESSION_GEN_H 1

#include <stdbool.h>

#include "db_pool.h"
#include "gen.h"
#include "proto.h"

/* what a session knows of its master's generations */
struct session_gen {
	bool hello;		/* a HELLO marked the replica: writes come */
	bool readonly;		/* the master writes nothing */
	struct gen master;	/* its identifiers, as it last told them */
};

/*
 * session_gen_drop -- CREATE made the parts, or CLOSE removes them: the
 * generations beside them go
 */
int session_gen_drop(const struct db_pool *pool);

/*
 * session_gen_legacy -- a master without generations (PMDK's, minor 4
 * and before) opened the replica: its current becomes unknown
 */
int session_gen_legacy(const struct db_pool *pool);

/*
 * session_gen_hello -- the master's identifiers (req->gen): the
 * replica's as found into resp->gen; the decision made; a refusal
 * (-EACCES) logged with both sides' generations and noted in the
 * replica's file; else (unless read-only) the replica marked durably:
 * a session with this master open, a resync target when it is behind,
 * a new copy's identifiers after `created`.  0 or -errno.
 */
int session_gen_hello(struct session_gen *sg, const struct db_pool *pool,
		const struct proto_req *req, bool created,
		struct proto_resp *resp);

/* session_gen_adopt -- a resync ended: the master's current, durably */
int session_gen_adopt(struct session_gen *sg, const struct db_pool *pool,
		const struct proto_req *req, struct proto_resp *resp);

/*
 * session_gen_async -- the master writes on asynchronously: the copy
 * says so (gen_file.h's async_master), durably
 */
int session_gen_async(struct session_gen *sg, const struct db_pool *pool,
		struct proto_resp *resp);

/*
 * session_gen_close -- the session ends with CLOSE: no longer open;
 * with `insync` the replica holds the master's generation
 */
int session_gen_close(struct session_gen *sg, const struct db_pool *pool,
		bool insync);

#endif /* RPMEMD_SESSION_GEN_H */
