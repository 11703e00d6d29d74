/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rstate.h -- what a client host keeps of each replica it writes to
 *
 * Two kinds of file live in the state directory (rstate_dir):
 *
 *   KEY.replica          the durable record of one replica (target and
 *                        pool set name make KEY): its attributes from its
 *                        last session, whether it holds every persisted
 *                        byte and, when not, since when, why and, after a
 *                        clean close, which ranges it lacks.  Written
 *                        crash-safely before librpmem acknowledges a
 *                        persist the replica does not have.
 *   run/PID-SEQ.status   the live state of one open handle (connected,
 *                        degraded, resyncing...), rewritten at every
 *                        transition and about once a second during a
 *                        resync, removed at close; what `rpmem status`
 *                        reads without disturbing the application.
 *
 * Both are text, one "key value" line each; values are escaped (%XX for
 * '%', blanks at either end, control and non-ASCII bytes) so that a
 * line is always one line.  Unknown keys are ignored on reading, so a
 * newer writer's files still read.
 */
#ifndef RPMEM_RSTATE_H
#define RPMEM_RSTATE_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gen.h"
#include "librpmem.h"

#define RSTATE_TARGET_MAX 256
#define RSTATE_DESC_MAX 4096	/* as PROTO_DESC_MAX */
#define RSTATE_TEXT_MAX 256
#define RSTATE_RANGES_MAX ((size_t)1 << 20)	/* in one record */

/* the states of a handle's replica, as rpmem status names them */
enum rstate_state {
	RSTATE_CONNECTED,	/* "connected": a persist is durable there */
	RSTATE_DEGRADED,	/* "degraded": away, ranges recorded */
	RSTATE_RESYNCING,	/* "resyncing": back, out-of-sync ranges copied */
	RSTATE_FROZEN,		/* "frozen": fence-peer failed, persists held */
	RSTATE_SPLIT_BRAIN,	/* "split-brain": both copies wrote since
				 * their last common generation */
	RSTATE_BROKEN,		/* "broken": persists fail (policy fail) */
	RSTATE_REFUSED,		/* "refused": the replica is newer, mid-resync
				 * from another copy, or unrelated */
	RSTATE_MAX,
};

/* rstate_name -- "connected", "degraded", ...; "unknown" past the end */
const char *rstate_name(enum rstate_state s);

/* rstate_parse -- the state named `s`; 0 or -EINVAL */
int rstate_parse(const char *s, enum rstate_state *out);

/* one byte range */
struct rstate_range {
	uint64_t off;
	uint64_t len;
};

/* the durable record of one replica */
struct rstate_record {
	char target[RSTATE_TARGET_MAX];		/* as in the REPLICA line */
	char pool_set[RSTATE_DESC_MAX];		/* remote pool set name */
	uint64_t pool_size;
	bool has_attr;				/* false: a pool without headers */
	struct rpmem_pool_attr attr;		/* the last session's */
	bool in_sync;		/* it holds every byte persisted through us */
	int64_t since;		/* out of sync since (seconds since the epoch) */
	char reason[RSTATE_TEXT_MAX];		/* why it went out of sync */
	bool ranges_known;	/* else: compare hashes to find them */
	uint64_t replica_id;	/* the replica's copy id (gen.h); 0: unknown */
	uint64_t bitmap_gen;	/* the master's generation the ranges start
				 * from (its bitmap for the replica) */
	size_t nranges;
	struct rstate_range *ranges;	/* malloc'ed, in offset order */
};

/*
 * rstate_dir -- the state directory: RPMEM_STATE_DIR if set, else
 * /var/lib/rpmem for root, else $XDG_STATE_HOME/rpmem, else
 * $HOME/.local/state/rpmem; created with mode 0700 (and its run/) when
 * `create`.  0 or -errno.
 */
int rstate_dir(char *buf, size_t len, bool create);

/* rstate_record_path -- DIR/KEY.replica of (target, pool_set) */
int rstate_record_path(const char *dir, const char *target,
		const char *pool_set, char *buf, size_t len);

/*
 * rstate_record_write -- write `r` to `path` crash-safely (a temporary
 * file, fsync, rename, fsync of the directory); 0 or -errno
 */
int rstate_record_write(const char *path, const struct rstate_record *r);

/*
 * rstate_record_read -- read `path` into `r` (ranges allocated);
 * 0, -ENOENT, -EINVAL when malformed, another -errno
 */
int rstate_record_read(const char *path, struct rstate_record *r);

/* rstate_record_free -- free what rstate_record_read allocated */
void rstate_record_free(struct rstate_record *r);

/* the live state of one open handle */
struct rstate_status {
	pid_t pid;				/* the application's */
	unsigned seq;				/* handle number in it */
	char target[RSTATE_TARGET_MAX];
	char pool_set[RSTATE_DESC_MAX];
	char policy[16];			/* fail, continue, fence */
	enum rstate_state state;
	int64_t since;				/* in this state since */
	uint64_t pool_size;
	uint64_t out_of_sync;			/* bytes recorded */
	uint64_t resync_done;			/* bytes copied this resync */
	uint64_t resync_total;			/* bytes it has to copy */
	uint64_t resync_rate;			/* bytes per second, measured */
	uint64_t reconnects;			/* attempts so far */
	char last_error[RSTATE_TEXT_MAX];	/* or "" */
	int64_t updated_ms;			/* when written (epoch ms) */
	char generation[GEN_STR];		/* the master copy's current */
	char replica_generation[GEN_STR];	/* the replica's, at its
						 * session's start */
	char refusal[24];			/* the last session start the
						 * generations refused, or "" */
	char mode[8];				/* sync, async ("": sync) */
	uint64_t lag_bytes;			/* async: in the send log */
	uint64_t lag_ms;			/* async: its oldest's age */
};

/* rstate_status_path -- DIR/run/PID-SEQ.status */
int rstate_status_path(const char *dir, pid_t pid, unsigned seq, char *buf,
		size_t len);

/* rstate_status_write -- replace `path` atomically (no fsync); -errno */
int rstate_status_write(const char *path, const struct rstate_status *s);

/* rstate_status_read -- 0, -ENOENT, -EINVAL when malformed, -errno */
int rstate_status_read(const char *path, struct rstate_status *s);

#endif /* RPMEM_RSTATE_H */
