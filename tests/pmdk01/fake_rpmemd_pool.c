/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fake_rpmemd_pool.c -- the fake rpmemd's pools: one plain file each
 *
 * PMDK's rpmemd opens a pool set file and writes pool headers (facts
 * 5.4, 6.5); the stand-in needs neither: the pool of descriptor D is the
 * file D.pool under --poolset-dir, its attributes live beside it in
 * D.attr in wire form, and what PMDK shows on the wire (statuses, the
 * flock that makes a second session BUSY, removal) is kept.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fake_rpmemd.h"

/*
 * pool_paths -- DIR/DESC.pool and DIR/DESC.attr.  Like PMDK only an
 * absolute descriptor is refused (EBADF, BADNAME); ".." is not checked.
 */
static int
pool_paths(const char *dir, const char *desc, char **path, char **attr)
{
	if (desc[0] == '/')
		return -EBADF;
	if (asprintf(path, "%s/%s.pool", dir, desc) < 0)
		return -ENOMEM;
	if (asprintf(attr, "%s/%s.attr", dir, desc) < 0) {
		free(*path);
		return -ENOMEM;
	}
	return 0;
}

/* write_attr -- store attributes in wire form and make them durable */
static int
write_attr(const char *path, const struct w01_attr *attr)
{
	unsigned char buf[W01_ATTR];
	int ret = 0;

	w01_put_attr(buf, attr);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0)
		return -errno;
	if (w01_write_full(fd, buf, sizeof(buf)) != 0 || fsync(fd) != 0)
		ret = -errno;
	if (close(fd) != 0 && ret == 0)
		ret = -errno;
	return ret;
}

/* read_attr -- load attributes; a missing file means none */
static int
read_attr(const char *path, struct w01_attr *attr)
{
	unsigned char buf[W01_ATTR];

	memset(attr, 0, sizeof(*attr));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	int ret = w01_read_full(fd, buf, sizeof(buf), -1);
	int err = errno;
	close(fd);
	if (ret < 0)
		return -err;
	if (ret > 0)
		return -EINVAL;	/* truncated: a broken pool set */
	w01_get_attr(buf, attr);
	return 0;
}

/* map_pool -- lock the open file and map `size` bytes of it shared */
static int
map_pool(struct fr_pool *pool, size_t size)
{
	if (flock(pool->fd, LOCK_EX | LOCK_NB) != 0)
		return -errno;	/* EWOULDBLOCK: held by another session */

	void *addr = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
		pool->fd, 0);
	if (addr == MAP_FAILED)
		return -errno;
	pool->addr = addr;
	pool->size = size;
	return 0;
}

/* lock_probe -- 0 when no session holds the file, else -errno */
static int
lock_probe(const char *path)
{
	int ret = 0;
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) != 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* pool_reset -- free the paths and close the file of a failed attempt */
static void
pool_reset(struct fr_pool *pool)
{
	if (pool->fd >= 0)
		close(pool->fd);
	free(pool->path);
	free(pool->attr_path);
	memset(pool, 0, sizeof(*pool));
	pool->fd = -1;
}

/* fr_pool_create -- a new D.pool of `size` bytes with its attributes */
int
fr_pool_create(const char *dir, const char *desc, uint64_t size,
		const struct w01_attr *attr, struct fr_pool *pool)
{
	memset(pool, 0, sizeof(*pool));
	pool->fd = -1;
	if (size > SIZE_MAX || (off_t)size < 0)
		return -EINVAL;

	int ret = pool_paths(dir, desc, &pool->path, &pool->attr_path);
	if (ret)
		return ret;

	pool->fd = open(pool->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
		0666);
	if (pool->fd < 0) {
		ret = -errno;
		/* a pool in use is BUSY before it is EXISTS (facts 2.7) */
		if (ret == -EEXIST && lock_probe(pool->path) == -EWOULDBLOCK)
			ret = -EWOULDBLOCK;
		pool_reset(pool);
		return ret;
	}

	if (ftruncate(pool->fd, (off_t)size) != 0) {
		ret = -errno;
		goto err_unlink;
	}
	ret = map_pool(pool, (size_t)size);
	if (ret)
		goto err_unlink;
	ret = write_attr(pool->attr_path, attr);
	if (ret) {
		munmap(pool->addr, pool->size);
		goto err_unlink;
	}
	pool->attr = *attr;
	return 0;

err_unlink:
	unlink(pool->path);
	unlink(pool->attr_path);
	pool_reset(pool);
	return ret;
}

/* fr_pool_open -- an existing D.pool, mapped whole, and its attributes */
int
fr_pool_open(const char *dir, const char *desc, struct fr_pool *pool)
{
	struct stat st;

	memset(pool, 0, sizeof(*pool));
	pool->fd = -1;

	int ret = pool_paths(dir, desc, &pool->path, &pool->attr_path);
	if (ret)
		return ret;

	pool->fd = open(pool->path, O_RDWR | O_CLOEXEC);
	if (pool->fd < 0 || fstat(pool->fd, &st) != 0) {
		ret = -errno;
		goto err;
	}
	if (st.st_size <= 0) {
		ret = -EINVAL;	/* nothing to map: a broken pool set */
		goto err;
	}
	ret = read_attr(pool->attr_path, &pool->attr);
	if (ret)
		goto err;
	ret = map_pool(pool, (size_t)st.st_size);
	if (ret)
		goto err;
	return 0;

err:
	pool_reset(pool);
	return ret;
}

/* fr_pool_set_attr -- replace the stored attributes */
int
fr_pool_set_attr(struct fr_pool *pool, const struct w01_attr *attr)
{
	int ret = write_attr(pool->attr_path, attr);
	if (ret == 0)
		pool->attr = *attr;
	return ret;
}

/* fr_pool_close -- unmap, drop the lock, free */
void
fr_pool_close(struct fr_pool *pool)
{
	if (pool->addr != NULL) {
		msync(pool->addr, pool->size, MS_SYNC);
		munmap(pool->addr, pool->size);
	}
	pool_reset(pool);
}

/* fr_pool_remove -- delete a pool that no session holds (or --force) */
int
fr_pool_remove(const char *dir, const char *desc, int force)
{
	char *path, *attr;
	int ret = pool_paths(dir, desc, &path, &attr);
	if (ret)
		return ret;

	ret = lock_probe(path);
	if (ret == 0 || force) {
		if (unlink(path) != 0 && ret == 0)
			ret = -errno;
		if (unlink(attr) != 0 && errno != ENOENT && ret == 0)
			ret = -errno;
	}
	free(path);
	free(attr);
	return force ? 0 : ret;
}

/* fr_pool_status -- PMDK's map from a failed create/open to a status */
uint32_t
fr_pool_status(int err)
{
	switch (err) {
	case EEXIST:
		return W01_ERR_EXISTS;
	case EACCES:
		return W01_ERR_NOACCESS;
	case ENOENT:
		return W01_ERR_NOEXIST;
	case EWOULDBLOCK:
		return W01_ERR_BUSY;
	case EBADF:
		return W01_ERR_BADNAME;
	case EINVAL:
		return W01_ERR_POOL_CFG;
	default:
		return W01_ERR_FATAL;
	}
}

/* fr_pool_persist -- msync the pages under [addr, addr + len) */
int
fr_pool_persist(void *addr, size_t len)
{
	if (len == 0)
		return 0;

	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)addr & ~(page - 1);
	uintptr_t end = (uintptr_t)addr + len;

	return msync((void *)start, end - start, MS_SYNC) == 0 ? 0 : -errno;
}

/*
 * fr_pool_copy -- what PMDK's inline persist promises: every aligned
 * 8-byte word of the destination is stored in one piece
 */
void
fr_pool_copy(void *dst, const void *src, size_t len)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	while (len > 0 && ((uintptr_t)d & 7) != 0) {
		*d++ = *s++;
		len--;
	}
	for (; len >= 8; len -= 8, d += 8, s += 8) {
		uint64_t w;
		memcpy(&w, s, sizeof(w));
		*(volatile uint64_t *)(void *)d = w;
	}
	while (len > 0) {
		*d++ = *s++;
		len--;
	}
}
