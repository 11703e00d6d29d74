/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * db_part.c -- part files of an rpmemd pool: create, lock, map, headers
 *
 * The parts are mapped into one contiguous region so that pool offset N
 * is what the client wrote at its own offset N: part 0 is mapped whole
 * (header at 0), a later part from file offset 4096 so that its own
 * header stays outside the region, unless the set has SINGLEHDR or
 * NOHDRS, where later parts carry no header and are mapped whole.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libpmem.h>

#include "db_pool.h"
#include "log.h"
#include "prefault.h"

#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef MAP_SYNC
#define MAP_SYNC 0x80000
#endif

/* part_lock -- one session per part; a held lock reads as busy */
static int
part_lock(struct db_part *part)
{
	if (flock(part->fd, LOCK_EX | LOCK_NB) == 0)
		return 0;

	if (errno == EWOULDBLOCK) {
		log_err("part '%s' is in use by another session", part->path);
		return -EBUSY;
	}
	return log_errno("flock '%s'", part->path);
}

/* part_fits -- an existing part must have exactly the size in the set */
static int
part_fits(struct db_part *part)
{
	struct stat st;

	if (fstat(part->fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode)) {
		log_err("part '%s' is not a regular file", part->path);
		return -EINVAL;
	}
	if ((uint64_t)st.st_size != part->size) {
		log_err("part '%s' has %jd bytes, the pool set says %zu",
				part->path, (intmax_t)st.st_size, part->size);
		return -EINVAL;
	}
	return 0;
}

/* part_open -- an existing part of the exact size */
static int
part_open(struct db_part *part)
{
	part->fd = open(part->path, O_RDWR | O_CLOEXEC);
	if (part->fd < 0)
		return log_errno("cannot open part '%s'", part->path);

	int ret = part_fits(part);
	if (ret)
		return ret;
	return part_lock(part);
}

/*
 * part_create -- a new part file, sized; or an existing one of the
 * exact size whose header area is still zero (a pre-made holey file)
 */
static int
part_create(struct db_part *part)
{
	part->fd = open(part->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
			0666);
	if (part->fd >= 0) {
		part->created = true;
		int ret = part_lock(part);
		if (ret)
			return ret;
		if (part->size > (size_t)INT64_MAX)
			return -EFBIG;
		ret = posix_fallocate(part->fd, 0, (off_t)part->size);
		if (ret) {
			log_err("cannot allocate %zu bytes for part '%s': %s",
					part->size, part->path, strerror(ret));
			return -ret;
		}
		return 0;
	}
	if (errno != EEXIST)
		return log_errno("cannot create part '%s'", part->path);

	int ret = part_open(part);
	if (ret)
		return ret;

	unsigned char hdr[POOL_HDR_SIZE];
	ssize_t n = pread(part->fd, hdr, sizeof(hdr), 0);
	if (n < 0)
		return log_errno("cannot read part '%s'", part->path);
	if ((size_t)n != sizeof(hdr) || !pool_hdr_is_zero(hdr)) {
		log_err("part '%s' exists and is not empty", part->path);
		return -EEXIST;
	}
	return 0;
}

/* parts_close -- close every part; unlink the ones we created */
static int
parts_close(struct db_priv *priv, bool unlink_all, bool unlink_created)
{
	int ret = 0;

	for (unsigned i = 0; i < priv->nparts; i++) {
		struct db_part *part = &priv->parts[i];

		/* unlink while still holding the lock */
		if (unlink_all || (unlink_created && part->created)) {
			if (unlink(part->path) && errno != ENOENT && !ret)
				ret = log_errno("cannot remove part '%s'",
					part->path);
		}
		if (part->fd >= 0)
			close(part->fd);
		part->fd = -1;
	}
	return ret;
}

/* priv_free -- release the per-pool state */
static void
priv_free(struct db_priv *priv)
{
	poolset_free(priv->set);
	free(priv->parts);
	free(priv);
}

/* priv_new -- per-pool state for a parsed set */
static int
priv_new(struct poolset *set, struct db_priv **privp)
{
	const struct poolset_replica *rep = &set->replicas[0];
	struct db_priv *priv = calloc(1, sizeof(*priv));

	if (priv == NULL)
		return -ENOMEM;
	priv->parts = calloc(rep->nparts, sizeof(*priv->parts));
	if (priv->parts == NULL) {
		free(priv);
		return -ENOMEM;
	}

	priv->set = set;
	priv->nparts = rep->nparts;
	priv->hdr_per_part = !(set->options &
			(POOLSET_OPT_SINGLEHDR | POOLSET_OPT_NOHDRS));
	if (set->options & POOLSET_OPT_NOHDRS)
		priv->nhdrs = 0;
	else
		priv->nhdrs = priv->hdr_per_part ? rep->nparts : 1;

	for (unsigned i = 0; i < rep->nparts; i++) {
		priv->parts[i].path = rep->parts[i].path;
		priv->parts[i].size = rep->parts[i].size;
		priv->parts[i].fd = -1;
	}
	*privp = priv;
	return 0;
}

/* part_map_span -- file offset and length of part i in the region */
static void
part_map_span(const struct db_priv *priv, unsigned i, size_t *off,
		size_t *len)
{
	size_t size = priv->parts[i].size & ~((size_t)POOL_HDR_SIZE - 1);

	*off = (i > 0 && priv->hdr_per_part) ? POOL_HDR_SIZE : 0;
	*len = size - *off;
}

#define HUGE_ALIGN ((size_t)2 << 20)

/*
 * pool_reserve -- address space for the whole pool, 2 MiB aligned so
 * that file systems with huge pages (DAX, tmpfs with huge=) can map it
 * with them: one first-touch fault per 2 MiB instead of 512
 */
static char *
pool_reserve(size_t total)
{
	size_t len = total + HUGE_ALIGN;
	char *raw = mmap(NULL, len, PROT_NONE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (raw == MAP_FAILED)
		return NULL;
	char *base = (char *)(((uintptr_t)raw + HUGE_ALIGN - 1) &
		~(uintptr_t)(HUGE_ALIGN - 1));
	if (base > raw)
		munmap(raw, (size_t)(base - raw));
	size_t tail = (size_t)(raw + len - (base + total));
	if (tail)
		munmap(base + total, tail);
	return base;
}

/* parts_in_memory -- is every part on tmpfs (nothing to write back)? */
static bool
parts_in_memory(const struct db_priv *priv)
{
	for (unsigned i = 0; i < priv->nparts; i++) {
		struct statfs st;
		if (fstatfs(priv->parts[i].fd, &st) ||
				st.f_type != TMPFS_MAGIC)
			return false;
	}
	return true;
}

/*
 * pool_map -- reserve the whole region, then place every part in it.
 * MAP_SYNC succeeds only on DAX, where flushing CPU caches is enough;
 * otherwise PMEM_IS_PMEM_FORCE can still make pmem_is_pmem say so.
 */
static int
pool_map(struct db_pool *pool, struct db_priv *priv)
{
	size_t total = 0;

	for (unsigned i = 0; i < priv->nparts; i++) {
		size_t off, len;
		part_map_span(priv, i, &off, &len);
		total += len;
	}
	if (total != poolset_replica_size(priv->set, 0)) {
		log_err("pool size %zu differs from the mapped size %zu",
				poolset_replica_size(priv->set, 0), total);
		return -EINVAL;
	}
	if (priv->nparts > 1 && sysconf(_SC_PAGESIZE) != POOL_HDR_SIZE) {
		log_err("multi-part pools need a %d-byte page size",
				POOL_HDR_SIZE);
		return -EINVAL;
	}

	char *base = pool_reserve(total);
	if (!base)
		return log_errno("cannot reserve %zu bytes for the pool",
			total);

	bool all_sync = true;
	size_t pos = 0;
	for (unsigned i = 0; i < priv->nparts; i++) {
		size_t off, len;
		part_map_span(priv, i, &off, &len);

		void *a = mmap(base + pos, len, PROT_READ | PROT_WRITE,
				MAP_SHARED_VALIDATE | MAP_SYNC | MAP_FIXED,
				priv->parts[i].fd, (off_t)off);
		if (a == MAP_FAILED && (errno == EOPNOTSUPP ||
				errno == EINVAL)) {
			all_sync = false;
			a = mmap(base + pos, len, PROT_READ | PROT_WRITE,
					MAP_SHARED | MAP_FIXED,
					priv->parts[i].fd, (off_t)off);
		}
		if (a == MAP_FAILED) {
			int ret = log_errno("cannot map part '%s'",
				priv->parts[i].path);
			munmap(base, total);
			return ret;
		}
		pos += len;
	}

	pool->addr = base;
	pool->size = total;
	pool->is_pmem = all_sync || pmem_is_pmem(base, total);
	/*
	 * Page size where pages are written back.  A file system with large
	 * folios (ext4, xfs) writes a dirty folio back whole, and a write
	 * through a mapping dirties the whole folio: one msync of a 64-byte
	 * persist wrote the folio read-around had made (942 KiB on average
	 * here; 2 MiB under MADV_HUGEPAGE).  MADV_RANDOM turns read-around
	 * off for faults, which then bring single pages, and the prefault
	 * walk reads ahead in single pages too (prefault.c).  Huge pages
	 * only where nothing is written back.
	 */
	bool in_memory = pool->is_pmem || parts_in_memory(priv);
	pool->writes_back = !in_memory;
	(void) madvise(base, total, in_memory ? MADV_HUGEPAGE : MADV_RANDOM);
	priv->map_size = total;
	priv->prefault = prefault_start(base, total, in_memory);
	return 0;
}

/* db_region_persist -- make a mapped range durable */
int
db_region_persist(struct db_pool *pool, size_t off, size_t len)
{
	char *addr = (char *)pool->addr + off;

	if (pool->is_pmem) {
		pmem_persist(addr, len);
		return 0;
	}
	if (pmem_msync(addr, len))
		return log_errno("msync of pool range [%zu, +%zu)", off, len);
	return 0;
}

/*
 * hdr_io -- read or write the header at the start of a later part's file
 * (part 0's lies in the region); 0, or -errno when it failed or was short
 */
static int
hdr_io(const struct db_part *part, struct pool_hdr *hdr, bool write)
{
	ssize_t n = write ? pwrite(part->fd, hdr, sizeof(*hdr), 0) :
		pread(part->fd, hdr, sizeof(*hdr), 0);
	if (n < 0)
		return log_errno("cannot %s the header of part '%s'",
			write ? "write" : "read", part->path);
	if ((size_t)n == sizeof(*hdr))
		return 0;
	if (write)
		log_err("short write of the header of part '%s'", part->path);
	else
		log_err("part '%s' is too short for a header", part->path);
	return -EIO;
}

/*
 * db_hdr_write -- checksum, store and persist part i's header: part 0's
 * lies in the region, a later part's is outside it and goes through the fd
 */
int
db_hdr_write(struct db_pool *pool, unsigned i, struct pool_hdr *hdr)
{
	struct db_priv *priv = pool->priv;

	pool_hdr_checksum_set(hdr);

	if (i == 0) {
		memcpy(pool->addr, hdr, sizeof(*hdr));
		return db_region_persist(pool, 0, sizeof(*hdr));
	}

	struct db_part *part = &priv->parts[i];
	int ret = hdr_io(part, hdr, true);
	if (ret)
		return ret;
	if (fdatasync(part->fd))
		return log_errno("cannot sync the header of part '%s'",
			part->path);
	return 0;
}

/* db_hdr_read -- part i's header, wherever it lives */
int
db_hdr_read(struct db_pool *pool, unsigned i, struct pool_hdr *hdr)
{
	struct db_priv *priv = pool->priv;

	if (i == 0) {
		memcpy(hdr, pool->addr, sizeof(*hdr));
		return 0;
	}
	return hdr_io(&priv->parts[i], hdr, false);
}

/* db_parts_open -- open or create the parts of `set`, then map them */
int
db_parts_open(struct poolset *set, bool create, struct db_pool **poolp)
{
	struct db_priv *priv;
	int ret = priv_new(set, &priv);
	if (ret) {
		poolset_free(set);
		return ret;
	}

	struct db_pool *pool = calloc(1, sizeof(*pool));
	if (pool == NULL) {
		ret = -ENOMEM;
		goto err_alloc;
	}

	for (unsigned i = 0; i < priv->nparts; i++) {
		ret = create ? part_create(&priv->parts[i]) :
			part_open(&priv->parts[i]);
		if (ret)
			goto err_parts;
	}

	ret = pool_map(pool, priv);
	if (ret)
		goto err_parts;

	pool->no_headers = priv->nhdrs == 0;
	pool->priv = priv;
	*poolp = pool;
	return 0;

err_parts:
	parts_close(priv, false, true);
	free(pool);
err_alloc:
	priv_free(priv);
	return ret;
}

/* db_parts_close -- unmap, close (unlinking as asked) and free */
int
db_parts_close(struct db_pool *pool, bool unlink_all, bool unlink_created)
{
	struct db_priv *priv = pool->priv;
	int ret = 0;

	prefault_stop(priv->prefault);
	if (munmap(pool->addr, priv->map_size))
		ret = log_errno("cannot unmap the pool");
	int cret = parts_close(priv, unlink_all, unlink_created);
	priv_free(priv);
	free(pool);
	return ret ? ret : cret;
}
