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

/* dir_of -- the directory holding `path`, opened for fsync; -errno */
static int
dir_of(const char *path)
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
	return fd < 0 ? -errno : fd;
}

/* write_all -- the whole buffer; 0 or -errno */
static int
write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* file_replace -- `path` holds exactly buf[0, len) afterwards */
int
file_replace(const char *path, const void *buf, size_t len)
{
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	int dfd = dir_of(path);
	if (dfd < 0)
		return dfd;
	int fd = mkostemp(tmp, O_CLOEXEC);
	int ret = fd < 0 ? -errno : 0;
	if (!ret) {
		mode_t um = umask(0);
		umask(um);
		if (fchmod(fd, 0644 & ~um))
			ret = -errno;
	}
	if (!ret)
		ret = write_all(fd, buf, len);
	if (!ret && fsync(fd))
		ret = -errno;
	if (fd >= 0 && close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret && fd >= 0)
		(void) unlink(tmp);
	if (!ret && fsync(dfd))
		ret = -errno;
	close(dfd);
	return ret;
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
	int dfd = dir_of(path);
	if (dfd < 0)
		return dfd;
	int ret = fsync(dfd) ? -errno : 0;
	close(dfd);
	return ret;
}
