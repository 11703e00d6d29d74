/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * file.c -- small files replaced whole and read whole (file.h)
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file.h"

/* fsync_dir -- make a rename or unlink in the directory of `path` durable */
static int
fsync_dir(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if ((size_t)(slash - path) >= sizeof(dir))
		return -ENAMETOOLONG;
	else
		snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 :
			(int)(slash - path), path);
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int ret = fsync(fd) ? -errno : 0;
	close(fd);
	return ret;
}

/* file_tmp -- a new temporary file beside `path`, named in tmp */
int
file_tmp(const char *path, mode_t mode, char tmp[PATH_MAX])
{
	if (snprintf(tmp, PATH_MAX, "%s.XXXXXX", path) >= PATH_MAX)
		return -ENAMETOOLONG;
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, mode)) {
		int ret = -errno;
		file_drop(fd, tmp);
		return ret;
	}
	return fd;
}

/* file_commit -- rename the temporary file over `path` */
int
file_commit(int fd, const char *tmp, const char *path, bool durable)
{
	int ret = durable && fsync(fd) ? -errno : 0;
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret) {
		(void) unlink(tmp);
		return ret;
	}
	return durable ? fsync_dir(path) : 0;
}

/* file_drop -- close and remove the temporary file */
void
file_drop(int fd, const char *tmp)
{
	close(fd);
	(void) unlink(tmp);
}

/* file_replace -- `path` holds exactly buf[0, len) afterwards */
int
file_replace(const char *path, const void *buf, size_t len)
{
	char tmp[PATH_MAX];
	int fd = file_tmp(path, 0644, tmp);
	if (fd < 0)
		return fd;
	const char *p = buf;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int ret = -errno;
			file_drop(fd, tmp);
			return ret;
		}
		p += n;
		len -= (size_t)n;
	}
	return file_commit(fd, tmp, path, true);
}

/* file_slurp -- a small regular file, whole */
int
file_slurp(const char *path, size_t max, char **buf, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	struct stat st;
	int ret = 0;
	if (fstat(fd, &st))
		ret = -errno;
	else if (!S_ISREG(st.st_mode))
		ret = -EINVAL;
	else if ((size_t)st.st_size > max)
		ret = -EFBIG;
	size_t cap = ret ? 0 : (size_t)st.st_size + 1;
	char *b = ret ? NULL : malloc(cap);
	if (!ret && !b)
		ret = -ENOMEM;
	size_t n = 0;
	while (!ret) {
		ssize_t r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			ret = -errno;
		else if (r == 0)
			break;
		else if ((n += (size_t)r) == cap)
			ret = -EFBIG;	/* it grew while read */
	}
	close(fd);
	if (ret) {
		free(b);
		return ret;
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	return 0;
}

/* file_remove -- unlink `path` durably */
int
file_remove(const char *path)
{
	if (unlink(path))
		return errno == ENOENT ? 0 : -errno;
	return fsync_dir(path);
}
