/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * file.h -- small files replaced whole and read whole: the way state
 * kept beside a pool (generations) is written so that a crash leaves
 * the old file or the new one, never a part of either
 */
#ifndef RPMEM_FILE_H
#define RPMEM_FILE_H 1

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * file_tmp -- a new temporary file beside `path` (its name in tmp) with
 * exactly `mode` (no umask: a library must not change the process's),
 * to be finished by file_commit or file_drop.  The fd, or -errno.
 */
int file_tmp(const char *path, mode_t mode, char tmp[PATH_MAX]);

/*
 * file_commit -- close the temporary file and rename it over `path`;
 * with `durable` the file is fsync-ed before and the directory after.
 * 0 or -errno; on failure `path` is untouched and tmp removed.
 */
int file_commit(int fd, const char *tmp, const char *path, bool durable);

/* file_drop -- close and remove a temporary file that is not wanted */
void file_drop(int fd, const char *tmp);

/*
 * file_replace -- `path` holds exactly buf[0, len) afterwards: a
 * temporary file beside it written, fsync-ed, renamed over it, and the
 * directory fsync-ed; mode 0644.  0 or -errno; on
 * failure the old file is untouched and no temporary file is left.
 */
int file_replace(const char *path, const void *buf, size_t len);

/*
 * file_slurp -- a regular file of at most `max` bytes, whole, into a
 * NUL-terminated malloc'ed *buf of *len bytes.  0, -ENOENT, -EFBIG
 * when larger, -EINVAL when not a regular file, another -errno.
 */
int file_slurp(const char *path, size_t max, char **buf, size_t *len);

/* file_remove -- unlink `path` durably; 0 also when it was not there */
int file_remove(const char *path);

#endif /* RPMEM_FILE_H */
