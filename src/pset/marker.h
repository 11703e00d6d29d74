/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * marker.h -- the markers left next to a pool set file: promoted, outdated
 *
 * "SET.promoted" beside the pool set file SET says that the replica SET
 * describes was made a master (`rpmem promote`): when, and what it was a
 * replica of.  It is written before any header changes, so that from
 * then on rpmemd refuses the set as a replica (scenario F3) even when
 * the promote stops half way.
 * A promote of one copy of a pair (--master-set) keeps the replica links,
 * so the headers cannot tell whether it got through them: it writes the
 * marker again, naming the other copy (`pair`), once they are written.
 *
 * "SET.outdated" says that a master went on without this replica (its
 * fence-peer handler marked it, scenarios D5, D6): since when, which
 * master, so that it is never promoted by accident.  A resync to
 * equality removes it.
 *
 * Both are written alike: tmp file, fsync, rename, fsync of the directory.
 */
#ifndef PSET_MARKER_H
#define PSET_MARKER_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MARKER_PROMOTED_SUFFIX ".promoted"
#define MARKER_OUTDATED_SUFFIX ".outdated"
#define MARKER_MAX 4096		/* bytes of a marker file, at most */
#define MARKER_UUID_STR 37
#define MARKER_CLIENT_MAX 96
#define MARKER_HOST_MAX 64	/* a host name with its NUL */

enum marker_kind {
	MARKER_PROMOTED,	/* SET.promoted: made a master */
	MARKER_OUTDATED,	/* SET.outdated: a master went on without it */
	MARKER_KINDS,
};

struct marker {
	enum marker_kind kind;
	int64_t time;		/* seconds since the epoch, UTC */
	char master[MARKER_UUID_STR];	/* the master's part-0 uuid */
	char poolset[MARKER_UUID_STR];	/* the pool's poolset uuid */
	char client[MARKER_CLIENT_MAX];	/* promoted: fenced session, or "" */
	char host[MARKER_HOST_MAX];	/* outdated: the master's host */
	char pair[MARKER_UUID_STR];	/* promoted as one copy of a pair:
					 * the other copy's part-0 uuid, once
					 * the headers are written */
};

/*
 * marker_uuids_from_part -- the master's and the pool set's uuids from
 * the pool header of the replica's part 0 at `part0`, when it has a valid
 * one; nothing otherwise (a set without headers: "not known")
 */
void marker_uuids_from_part(const char *part0, struct marker *m);

/*
 * marker_value_ok -- the n bytes at v may stand as a marker's value in a
 * field of `max` bytes with its NUL: printable, no blank, not empty
 */
bool marker_value_ok(const char *v, size_t n, size_t max);

/* marker_suffix -- ".promoted" or ".outdated" */
const char *marker_suffix(enum marker_kind kind);

/* marker_uuid_str -- 16 bytes as pmempool prints a uuid */
void marker_uuid_str(const uint8_t *u, char out[MARKER_UUID_STR]);

/* marker_format -- the marker's text; its length, or -ENOSPC */
int marker_format(const struct marker *m, char *buf, size_t len);

/*
 * marker_parse -- read a marker of `kind` from its text; 0 or -EINVAL
 * (a promoted marker needs time and master, an outdated one time and host)
 */
int marker_parse(enum marker_kind kind, const char *buf, size_t len,
		struct marker *m);

/* marker_read_fd -- read and parse an open marker file */
int marker_read_fd(enum marker_kind kind, int fd, struct marker *m);

/*
 * marker_read -- the marker of pool set file `set`: 0, -ENOENT when
 * there is none, another -errno when it cannot be read or parsed
 */
int marker_read(enum marker_kind kind, const char *set, struct marker *m);

/* marker_write -- write the marker of `set` crash-safely */
int marker_write(const char *set, const struct marker *m);

/*
 * marker_write_at -- the same for the set file named `base` in the
 * directory `dirfd` (opened O_RDONLY | O_DIRECTORY, for its fsync)
 */
int marker_write_at(int dirfd, const char *base, const struct marker *m);

/* marker_remove -- unlink the marker of `set` durably; -ENOENT: none */
int marker_remove(enum marker_kind kind, const char *set);

/* marker_remove_at -- the same beside `base` in the directory `dirfd` */
int marker_remove_at(int dirfd, const char *base, enum marker_kind kind);

/*
 * marker_describe -- "promoted to a master on DATE UTC (it was a replica
 * of master UUID...)" or "outdated since DATE UTC: master HOST (pool
 * UUID) went on without it"
 */
void marker_describe(const struct marker *m, char *buf, size_t len);

/* marker_date -- the time as 2026-01-31T12:00:00Z */
void marker_date(const struct marker *m, char *buf, size_t len);

#endif /* PSET_MARKER_H */
