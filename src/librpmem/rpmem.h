/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpmem.h -- librpmem internals shared by its modules
 */
#ifndef RPMEM_RPMEM_H
#define RPMEM_RPMEM_H 1

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fabric.h"
#include "librpmem.h"
#include "proto.h"
#include "ssh.h"
#include "target.h"

/*
 * What a session with PMDK 1.12's rpmemd guarantees, logged at open and
 * shown by `rpmem info` (rpmem_daemon_limits)
 */
#define PMDK_PEER_LIMITS "no lane security or lane tokens; strict " \
	"persists up to its 8 KiB inline buffer (over verbs: in such " \
	"pieces) applied with 8-byte stores; deep ones, and over sockets " \
	"larger strict ones, RMA writes without 8-byte atomicity, as PMDK's " \
	"own client sends them"

/*
 * Handle states.  Every public call first checks the state: data calls
 * go to the replica when READY; a BROKEN handle answers every call but
 * close with its sticky errno.  Only rpmem_create/rpmem_open see an
 * OPENING one.  Under on-replica-loss continue or fence a handle whose
 * replica is lost is DEGRADED (persists recorded as out of sync), FROZEN
 * while a fence-peer handler has not agreed (persists held), RESYNCING
 * once it is back, and READY again when nothing is out of sync (repl.h).
 */
enum rpmem_state {
	RPMEM_ST_OPENING,	/* session being set up */
	RPMEM_ST_READY,		/* out-of-band done, lanes usable */
	RPMEM_ST_DEGRADED,	/* replica away: ranges recorded */
	RPMEM_ST_FROZEN,	/* replica away, not fenced: persists held */
	RPMEM_ST_RESYNCING,	/* replica back: out-of-sync ranges copied */
	RPMEM_ST_BROKEN,	/* channel or lane failed: sticky error */
};

/*
 * The calls made on one lane, logged when the session ends (rpp_end):
 * each lane is used by one thread at a time, so plain counters do, one
 * cache line apart.  `mu` is held across a data call on the session's
 * lane (lane % fab_nlanes) so that a session is swapped or dropped only
 * when no call is inside it: uncontended, as each lane has one user.
 * [pend_off, pend_end) covers what was flushed there and not drained: it
 * is recorded as out of sync when the replica is lost before the drain.
 */
struct lane_calls {
	pthread_mutex_t mu;
	size_t pend_off;
	size_t pend_end;
	uint64_t persist;	/* rpmem_persist */
	uint64_t deep;		/* rpmem_deep_persist */
	uint64_t flush;		/* rpmem_flush */
	uint64_t drain;		/* rpmem_drain */
	uint64_t read;		/* rpmem_read */
	uint64_t bytes;		/* persisted, deep persisted or flushed */
} __attribute__((aligned(64)));

struct repl;
struct async;

struct rpmem_pool {
	_Atomic int state;		/* enum rpmem_state */
	_Atomic int error;		/* errno once BROKEN */
	struct target target;
	char target_str[256];		/* as the caller wrote it */
	char desc[PROTO_DESC_MAX];
	struct ssh *ssh;		/* the session: NULL while away */
	struct fabric *fab;
	uint64_t session_no;		/* sessions taken (rpp_take_session):
					 * read with a lane held, it names
					 * the session a data call used */
	_Atomic unsigned fab_nlanes;	/* the session's lanes */
	void *pool_addr;		/* the pool as the library reads it:
					 * its own view (view.c), or where
					 * the application maps it */
	size_t pool_size;
	size_t view_size;		/* the view's, when the handle made it */
	unsigned nlanes;		/* the application's lanes */
	struct repl *repl;		/* a replica that comes and goes */
	struct rpmem_pool *home;	/* the handle its sessions serve: a
					 * reconnect's copy (rpp_replica)
					 * names the application's */
	bool no_headers;		/* whole pool writable */
	bool created;			/* by rpmem_create */
	bool pmdk;			/* rpmemd is PMDK 1.12's (0.1) */
	uint32_t provider;
	struct proto_resp resp;		/* create/open answer */
	bool has_gen;			/* the session said HELLO (minor 5) */
	struct gen mgen;		/* the master's identifiers it sent */
	struct gen rgen;		/* the replica's, as it found them */
	enum gen_verdict refused;	/* rpmemd refused the HELLO: why */
	struct lane_calls *calls;	/* [nlanes] */
	struct async *async;		/* an async replica's, else NULL */
	unsigned extra_lanes;		/* a session's lanes beyond the
					 * application's: its sender's */
};

/*
 * What a session start tells rpmemd of the master copy's generations
 * (GEN HELLO): its identifiers (a current of 0: it keeps none) and
 * PROTO_GEN_FLAG_*
 */
struct rpp_hello {
	struct gen m;
	uint32_t flags;
};

#define API __attribute__((visibility("default")))

#define ERRMSG_MAX 1024

/* what the environment said when the library was loaded (librpmem.c) */
struct rpmem_env {
	unsigned max_nlanes;		/* RPMEM_MAX_NLANES */
	int timeout_ms;			/* RPMEM_TIMEOUT */
	int peer_timeout_ms;		/* RPMEM_PEER_TIMEOUT_MS, 0: off */
};
extern struct rpmem_env Env;

/* errmsg.c */

/* fail -- set the message and errno = err; returns -1 */
int fail(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* errno_of -- errno for a negative internal return */
int errno_of(int r);

/* channel_fail -- a dead out-of-band channel, with its last words */
int channel_fail(int r, const char *what, const char *last);

void rpmem_errmsg_save(char *buf);
void rpmem_errmsg_restore(const char *buf);

/* session.c */

/*
 * rpp_connect -- start a session for the handle (ssh, rpmemd, CREATE or
 * OPEN, lanes: up to *nlanes, the number connected on return, then with
 * an rpmemd of minor 5 on the HELLO of the generations); 0, or -1 with
 * the message and no session left (rpp->refused says why rpmemd refused
 * the HELLO)
 */
int rpp_connect(RPMEMpool *rpp, enum proto_msg_type type, unsigned *nlanes,
	const struct rpmem_pool_attr *cattr, const struct rpp_hello *hello);

/* rpp_replica -- a handle for the same replica and memory, no session */
RPMEMpool *rpp_replica(const RPMEMpool *rpp);

/* rpp_take_session -- move src's session into dst (dst's lanes held) */
void rpp_take_session(RPMEMpool *dst, RPMEMpool *src);

/* rpp_drop_session -- end a lost session; its ssh child, to reap */
struct ssh *rpp_drop_session(RPMEMpool *rpp);

/* check_names -- a target and a pool set name as the API takes them: 0,
 * or -1 with the message (EINVAL) */
int check_names(const char *target, const char *desc);

/* rpp_start -- the shared body of rpmem_create and rpmem_open */
RPMEMpool *rpp_start(enum proto_msg_type type, const char *target,
	const char *desc, void *addr, size_t size, unsigned *nlanes,
	const struct rpmem_pool_attr *cattr, struct rpmem_pool_attr *oattr);

/*
 * rpp_end -- lanes down, CLOSE exchange, reap ssh; 0 or -1 + errno; a
 * handle without a session has nothing to end
 */
int rpp_end(RPMEMpool *rpp, uint32_t flags);

/* rpp_free -- release a handle whose channel is closed */
void rpp_free(RPMEMpool *rpp);

/*
 * control_call -- one request over a ready session's channel: 0, or -1
 * with the message; *lost is set when the channel itself failed (the
 * caller, holding no lane, then tells repl_lost or repl_break)
 */
int control_call(RPMEMpool *rpp, const struct proto_req *req,
	struct proto_resp *resp, const char *what, int *lost);

#include "repl.h"
#include "async.h"

#endif /* RPMEM_RPMEM_H */
