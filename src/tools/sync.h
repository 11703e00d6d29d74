/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sync.h -- the state of one rpmem sync run, shared by cmd_sync.c (the
 * plan, the master) and sync_remote.c (the remote replicas)
 */
#ifndef RPMEM_SYNC_H
#define RPMEM_SYNC_H 1

#include <stdbool.h>
#include <stddef.h>

#include "progress.h"
#include "replica.h"

/* the state of one sync run */
struct sync {
	const char *path;
	struct poolset *set;
	unsigned n;		/* replicas */
	size_t size, off, len;	/* pool size, data area */
	bool nohdrs;
	bool strict;		/* --strict: nothing is skipped */
	struct replica_skip *skip;	/* left out of comparisons */
	size_t nskip;
	struct master m;
	struct remote *rem;	/* rem[i] for i >= 1 */
	unsigned char (*uuids)[RPMEM_POOL_HDR_UUID_LEN];
	bool *generated;	/* uuids[i] is new: replica i is rebuilt */
	struct rpmem_pool_attr base;	/* the pool's identity */
	struct progress pg;
	char **done;		/* per replica: what the summary says */
};

/* sync_say -- remember what was done to replica i, for the summary */
__attribute__((format(printf, 3, 4)))
void sync_say(struct sync *s, unsigned i, const char *fmt, ...);

/*
 * sync_fail -- an error message naming replica i on stderr; returns 1,
 * the exit status
 */
__attribute__((format(printf, 3, 4)))
int sync_fail(struct sync *s, unsigned i, const char *fmt, ...);

/*
 * sync_remote -- bring remote replica i in line with the master: rebuild
 * it when it is missing, damaged or foreign, else copy what differs; 0,
 * or 1 after the message
 */
int sync_remote(struct sync *s, unsigned i);

#endif /* RPMEM_SYNC_H */
