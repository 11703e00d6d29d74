/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * promoted.h -- the marker `rpmem promote` leaves next to a pool set file
 *
 * "SET.promoted" beside the pool set file SET says that the replica SET
 * describes was made a master: when, and what it was a replica of.  It
 * is written before any header changes (tmp file, fsync, rename, fsync
 * of the directory), so that from then on rpmemd refuses the set as a
 * replica (RELIABILITY F3) even when the promote stops half way.
 */
#ifndef PSET_PROMOTED_H
#define PSET_PROMOTED_H 1

#include <stddef.h>
#include <stdint.h>

#define PROMOTED_SUFFIX ".promoted"
#define PROMOTED_MAX 4096	/* bytes of a marker file, at most */
#define PROMOTED_UUID_STR 37
#define PROMOTED_CLIENT_MAX 96

struct promoted {
	int64_t time;		/* seconds since the epoch, UTC */
	char master[PROMOTED_UUID_STR];	/* the master's part-0 uuid */
	char poolset[PROMOTED_UUID_STR];	/* the pool's poolset uuid */
	char client[PROMOTED_CLIENT_MAX];	/* fenced session, or "" */
};

/* promoted_uuid_str -- 16 bytes as pmempool prints a uuid */
void promoted_uuid_str(const uint8_t *u, char out[PROMOTED_UUID_STR]);

/* promoted_format -- the marker's text; its length, or -ENOSPC */
int promoted_format(const struct promoted *p, char *buf, size_t len);

/* promoted_parse -- read a marker's text; 0 or -EINVAL */
int promoted_parse(const char *buf, size_t len, struct promoted *p);

/* promoted_read_fd -- read and parse an open marker file */
int promoted_read_fd(int fd, struct promoted *p);

/*
 * promoted_read -- the marker of pool set file `set`: 0, -ENOENT when
 * there is none, another -errno when it cannot be read or parsed
 */
int promoted_read(const char *set, struct promoted *p);

/* promoted_write -- write the marker of `set` crash-safely */
int promoted_write(const char *set, const struct promoted *p);

/* promoted_remove -- unlink the marker of `set` durably; -ENOENT: none */
int promoted_remove(const char *set);

/*
 * promoted_describe -- "promoted to a master on DATE UTC (replica of
 * master UUID, fenced session CLIENT)"
 */
void promoted_describe(const struct promoted *p, char *buf, size_t len);

/* promoted_date -- the time as 2026-01-31T12:00:00Z */
void promoted_date(const struct promoted *p, char *buf, size_t len);

#endif /* PSET_PROMOTED_H */
