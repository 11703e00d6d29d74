/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * poolset.h -- parser of poolset files (poolset(5))
 *
 *	PMEMPOOLSET
 *	OPTION SINGLEHDR | NOHDRS
 *	<size> <absolute path>			part of the current replica
 *	REPLICA					starts a local replica
 *	REPLICA [user@]host[:port] <descriptor>	a remote replica (one line)
 *
 * Sizes are decimal with an optional K, M, G or T suffix (powers of 1024,
 * optional trailing B or iB).  '#' starts a comment; blank lines are
 * ignored.  Errors name "file:line: reason".
 */
#ifndef RPMEM_POOLSET_H
#define RPMEM_POOLSET_H 1

#include <stdbool.h>
#include <stddef.h>

#define POOLSET_OPT_SINGLEHDR 0x1U
#define POOLSET_OPT_NOHDRS 0x2U

#define POOLSET_ERR_MAX 512

struct poolset_part {
	char *path;		/* absolute */
	size_t size;		/* bytes, as written */
	unsigned line;		/* where it was declared */
};

struct poolset_replica {
	bool remote;
	char *target;		/* remote only: "[user@]host[:port]" as written */
	char *desc;		/* remote only: relative descriptor */
	unsigned nparts;	/* 0 for remote replicas */
	struct poolset_part *parts;
	unsigned line;
};

struct poolset {
	unsigned options;	/* POOLSET_OPT_* */
	unsigned nreplicas;	/* >= 1; replica 0 is the local master */
	struct poolset_replica *replicas;
};

/*
 * poolset_parse_buf -- parse `len` bytes named `name` (used in errors).
 * Returns 0 and a set to free with poolset_free, or -errno (-EINVAL for
 * bad syntax, -ENOMEM) with `err` holding "name:line: reason".
 */
int poolset_parse_buf(const char *name, const char *buf, size_t len,
		struct poolset **set, char *err, size_t errlen);

/* poolset_parse_file -- read and parse the file at `path` */
int poolset_parse_file(const char *path, struct poolset **set, char *err,
		size_t errlen);

/*
 * poolset_parse_fd -- read and parse an open file named `name` in
 * errors: a regular file of at most 1 MiB; the caller closes fd
 */
int poolset_parse_fd(int fd, const char *name, struct poolset **set,
		char *err, size_t errlen);

void poolset_free(struct poolset *set);

/* poolset_parse_size -- "2M", "1G", "4096" -> bytes; -EINVAL / -ERANGE */
int poolset_parse_size(const char *str, size_t *size);

/*
 * poolset_replica_size -- usable size of a local replica as PMDK computes
 * it: each part's size rounded down to 4 KiB, minus a 4 KiB header per
 * part after the first (no header space at all with NOHDRS, only the first
 * part's with SINGLEHDR).
 */
size_t poolset_replica_size(const struct poolset *set, unsigned rep);

/* poolset_has_remote -- true when any replica is remote */
bool poolset_has_remote(const struct poolset *set);

#endif /* RPMEM_POOLSET_H */
