/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conffile.h -- a configuration file checked line by line before
 * iniparser reads it
 *
 * iniparser (Debian's libiniparser1) reads the values; it reports a
 * line it cannot parse only on standard error and reads some lines
 * otherwise than they look (it joins lines ending in '\', cuts values at
 * ';' and '#', strips quotes).  So both readers of such files, rpmemd
 * (rpmemd.conf(5)) and librpmem (its replication settings), first walk
 * the file here: every line must be blank, a comment, `[section]` or
 * `key = value` and mean the same to iniparser, or the file is refused
 * naming the line.  Like ssh's StrictModes, a file others could rewrite
 * is refused too (scenario S4).
 */
#ifndef RPMEM_CONFFILE_H
#define RPMEM_CONFFILE_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * iniparser 4.1 reads lines into a 1024-byte buffer and gives up on the
 * whole file when a line (without its newline) is longer
 */
#define CONFFILE_LINE_MAX 1022
#define CONFFILE_MAX (1 << 20)	/* a configuration file is a few lines */

enum conffile_kind {
	CONFFILE_BLANK,		/* empty, blanks or a comment */
	CONFFILE_SECTION,	/* [name]: name */
	CONFFILE_KEY,		/* key = value: name, value */
};

/* one line, split; the strings point into the caller's buffer */
struct conffile_line {
	enum conffile_kind kind;
	const char *name;
	const char *value;
};

/*
 * conffile_trusted -- `fd` (opened from `path`) is a regular file of at
 * most CONFFILE_MAX bytes, writable by no group or other user, owned by
 * this user or root.  0, or -errno with the reason in err.
 */
int conffile_trusted(const char *path, int fd, char *err, size_t errlen);

/*
 * conffile_value_ok -- iniparser reads `value` as written: no ';' (it
 * would cut the value there), no leading quote (it would strip it)
 */
bool conffile_value_ok(const char *value);

/*
 * conffile_each -- split each line of `f` as iniparser would read it
 * and call `fn` with each that is not blank (a comment, or nothing):
 * a section or a `key = value`, and its number from 1.  Stops at the
 * first non-zero return of `fn`, which it returns; a line iniparser
 * would read otherwise than written is -EINVAL, a read error -EIO, each
 * with "PATH:LINE: why" (or "PATH: read error") in err.
 */
int conffile_each(FILE *f, const char *path,
		int (*fn)(void *arg, unsigned lno,
		const struct conffile_line *l), void *arg, char *err,
		size_t errlen);

#endif /* RPMEM_CONFFILE_H */
