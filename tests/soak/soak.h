/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * soak.h -- what the soak's supervisor, workers, oracle and faults share
 *
 * scenarios L1 and L2.  The supervisor (soak_main.c) starts one worker
 * process per client (soak_worker.c); each worker runs random traffic on
 * its own replicated pool through the public librpmem API.  Every client
 * owns a state file, mapped by both sides, that outlives the worker: the
 * local pool the worker replicates, the image of every acknowledged byte
 * and the ranges in flight on each lane.  After a fault the oracle
 * (soak_oracle.c) reads the replica's part file and holds it against that
 * record.  Faults (soak_fault.c) come from one table.
 */
#ifndef RPMEM_SOAK_H
#define RPMEM_SOAK_H 1

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tu.h"

#define SOAK_MAX_LANES 16
#define SOAK_MAX_PENDING 8	/* ranges in flight on one lane */
#define SOAK_HDR 4096		/* pool header: data starts here */
#define SOAK_MSG_TEXT 256
#define SOAK_MAX_CLIENTS 64
#define SOAK_MAX_IN_ROUND 8	/* clients one fault round may hit */

/* kinds of a range in flight: what the oracle accepts in the replica */
enum soak_kind {
	SOAK_STRICT,		/* each aligned word wholly old or new */
	SOAK_RELAXED,		/* each byte old or new */
};

struct soak_range {
	uint64_t off;
	uint64_t len;
	uint32_t kind;		/* enum soak_kind */
	uint32_t pad;
};

/*
 * the ranges a lane has sent and not yet seen acknowledged; `acked` is
 * set the moment the call returns 0, before the image is updated, so a
 * worker killed in between still leaves a true record
 */
struct soak_lane {
	_Atomic uint32_t n;
	_Atomic uint32_t acked;
	struct soak_range r[SOAK_MAX_PENDING];
};

/* the head of a state file: one page, then the image, then the pool */
struct soak_head {
	uint64_t magic;
	uint64_t pool_size;
	_Atomic uint64_t ops;		/* data calls that returned 0 */
	_Atomic uint64_t bytes;		/* acknowledged bytes written */
	_Atomic uint64_t bad_reads;	/* reads disagreeing with image */
	_Atomic uint32_t in_call;	/* data calls under way now */
	struct soak_lane lane[SOAK_MAX_LANES];
};

#define SOAK_MAGIC 0x4b414f534d454d52ULL	/* "RMEMSOAK" */

/* a client's state file, mapped */
struct soak_state {
	struct soak_head *head;
	char *image;		/* every acknowledged byte */
	char *pool;		/* the local pool the worker replicates */
	size_t map_len;
};

/* soak_state_map -- map (creating with `create`) a client's state file */
int soak_state_map(const char *path, size_t pool_size, bool create,
		struct soak_state *st);
void soak_state_unmap(struct soak_state *st);

/* supervisor -> worker */
enum soak_cmd {
	SOAK_CMD_CREATE = 1,
	SOAK_CMD_OPEN,
	SOAK_CMD_CLOSE,
	SOAK_CMD_REMOVE,
	SOAK_CMD_EXIT,
	SOAK_CMD_PAUSE,		/* lanes stopped, session kept */
	SOAK_CMD_RESUME,
};

/* worker -> supervisor */
enum soak_msg_type {
	SOAK_MSG_READY = 1,	/* created or opened: nlanes */
	SOAK_MSG_OPEN_FAILED,	/* err, text */
	SOAK_MSG_BROKEN,	/* a data call failed: err, t_ms; closed */
	SOAK_MSG_CLOSED,	/* closed on request: err of the close */
	SOAK_MSG_REMOVED,	/* rpmem_remove: err */
	SOAK_MSG_PAUSED,	/* nothing in flight until RESUME */
};

struct soak_msg {
	uint32_t type;
	int32_t err;
	int64_t t_ms;		/* BROKEN: when the first call failed */
	uint32_t nlanes;
	uint32_t fds;		/* worker's descriptors after a close */
	char text[SOAK_MSG_TEXT];
};

/* soak_worker_main -- body of `soak --worker ...` */
int soak_worker_main(int argc, char *argv[]);

/* ------------------------------------------------------------ oracle */

/* what the oracle found in one replica */
struct soak_verdict {
	uint64_t lost;		/* acknowledged bytes not in replica */
	uint64_t torn;		/* strict words neither old nor new */
	uint64_t corrupt;	/* in-flight bytes neither old nor new */
	uint64_t inflight;	/* bytes that were in flight */
};

/*
 * soak_oracle_check -- hold the replica (pool bytes read from its part
 * file) against the record, then make image and pool agree with it and
 * clear the ranges in flight, ready for the next session
 */
int soak_oracle_check(struct soak_state *st, const char *part,
		struct soak_verdict *v, char *why, size_t whylen);

/* soak_oracle_reset -- a new, zeroed pool: image and local pool zeroed */
void soak_oracle_reset(struct soak_state *st);

/* ------------------------------------------------------------- /proc */

/* soak_proc_alive -- pid exists, is no zombie, argv contains `needle` */
bool soak_proc_alive(pid_t pid, const char *needle);

/* soak_proc_find -- a descendant of `root` whose executable is `exe` */
pid_t soak_proc_find(pid_t root, const char *exe);

/* soak_tree_count -- processes and descriptors of root and descendants */
void soak_tree_count(pid_t root, unsigned *procs, unsigned *fds);

/* soak_proc_mem -- peak RSS and current private RSS of a process, KiB */
int soak_proc_mem(pid_t pid, unsigned long *hwm_kib,
		unsigned long *anon_kib);

/*
 * soak_rpmemd_pids -- running rpmemds of the logs "rpmemd.w<id>.<pid>.*.log"
 * in `logdir` (id < 0: any worker), each still naming its log in its argv;
 * returns how many were stored
 */
unsigned soak_rpmemd_pids(const char *logdir, int id, pid_t *pids,
		unsigned max);

/* soak_log_find -- the newest log of worker id, into path; false: none */
bool soak_log_find(const char *logdir, int id, const char *after,
		char *path, size_t len);

/* ------------------------------------------------------------ strays */

/*
 * soak_stray -- strangers at a lane port during admission: plain TCP
 * garbage, a silent connection, libfabric connection requests carrying
 * no data and random data.  Returns how many were let in (must be 0),
 * or -1 when the port could not be reached at all.  *silent keeps the
 * silent connection open for the caller to close after admission.
 */
int soak_stray(const char *prov, const char *addr, unsigned port,
		uint64_t *rng, int *silent, char *why, size_t whylen);

#endif /* RPMEM_SOAK_H */
