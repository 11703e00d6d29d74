/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * db.c -- rpmemd's pool sets: create, open, set attributes, remove
 *
 * A pool is the one local replica of a set file found beneath
 * poolset-dir (pmdk-interop 5.4).  This file holds the rules a set and a
 * request must satisfy; src/pset/db_part.c and db_hdr.c do the file work.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "db_gen.h"
#include "db_int.h"
#include "log.h"
#include "range.h"

/* db_init -- poolset-dir must be an absolute, existing directory */
int
db_init(const char *poolset_dir, struct db **dbp)
{
	if (poolset_dir == NULL || poolset_dir[0] != '/') {
		log_err("poolset-dir '%s' is not an absolute path",
				poolset_dir ? poolset_dir : "(null)");
		return -EINVAL;
	}

	struct db *db = calloc(1, sizeof(*db));
	if (db == NULL)
		return -ENOMEM;

	int ret;
	db->dir = realpath(poolset_dir, NULL);
	if (db->dir == NULL) {
		ret = log_errno("poolset-dir '%s'", poolset_dir);
		goto err_realpath;
	}

	db->dirfd = open(db->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (db->dirfd < 0) {
		ret = log_errno("poolset-dir '%s'", db->dir);
		goto err_open;
	}

	*dbp = db;
	return 0;

err_open:
	free(db->dir);
err_realpath:
	free(db);
	return ret;
}

/* db_fini -- release the directory */
void
db_fini(struct db *db)
{
	if (db == NULL)
		return;
	close(db->dirfd);
	free(db->dir);
	free(db);
}

/* db_desc_check -- a descriptor's string-level checks alone */
int
db_desc_check(const char *desc)
{
	return db_path_check(desc);
}

/*
 * set_load -- resolve, read and parse `desc`; the set must hold exactly
 * one replica, the local one whose parts rpmemd serves
 */
static int
set_load(struct db *db, const char *desc, struct poolset **setp)
{
	int ret = db_path_check(desc);
	if (ret)
		return ret;

	int fd = db_path_open(db->dirfd, db->dir, desc,
			O_RDONLY | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		errno = -fd;
		log_err("!pool set %s in poolset-dir %s", log_quote(desc).s,
			db->dir);
		return fd;
	}

	char err[POOLSET_ERR_MAX];
	struct poolset *set;
	ret = poolset_parse_fd(fd, log_quote(desc).s, &set, err, sizeof(err));
	close(fd);
	if (ret) {
		log_err("%s", err);
		return ret;
	}

	if (set->nreplicas != 1 || set->replicas[0].remote ||
			set->replicas[0].nparts == 0) {
		unsigned line = set->replicas[set->nreplicas - 1].line;

		log_err("pool set %s line %u: remote pool set cannot have "
				"replicas", log_quote(desc).s, line);
		poolset_free(set);
		return -EINVAL;
	}

	*setp = set;
	return 0;
}

/* set_check_sizes -- PMDK's minimum sizes for parts and the pool */
static int
set_check_sizes(const struct poolset *set, const char *desc)
{
	const struct poolset_replica *rep = &set->replicas[0];

	for (unsigned i = 0; i < rep->nparts; i++) {
		if (rep->parts[i].size < RPMEM_MIN_PART) {
			log_err("pool set %s line %u: part '%s' size %zu is "
					"below the minimum %zu",
					log_quote(desc).s, rep->parts[i].line,
					rep->parts[i].path, rep->parts[i].size,
					RPMEM_MIN_PART);
			return -EINVAL;
		}
	}

	size_t size = poolset_replica_size(set, 0);
	if (size < RPMEM_MIN_POOL) {
		log_err("pool set %s: pool size %zu is below the minimum %zu",
				log_quote(desc).s, size, RPMEM_MIN_POOL);
		return -EINVAL;
	}
	return 0;
}

/* attr_is_zero -- NULL or all-zero attributes mean "no header" */
static bool
attr_is_zero(const struct rpmem_pool_attr *attr)
{
	static const struct rpmem_pool_attr zero;

	return attr == NULL || memcmp(attr, &zero, sizeof(zero)) == 0;
}

/*
 * create_check -- what must hold before a create makes any file: the
 * set's options match the request, its sizes suffice, it is not promoted
 */
static int
create_check(struct db *db, const struct poolset *set, const char *desc,
		const struct rpmem_pool_attr *attr)
{
	bool nohdrs = (set->options & POOLSET_OPT_NOHDRS) != 0;
	bool single = (set->options & POOLSET_OPT_SINGLEHDR) != 0;

	if (nohdrs != attr_is_zero(attr)) {
		log_err("pool set %s: %s", log_quote(desc).s, nohdrs ?
				"OPTION NOHDRS but pool attributes given" :
				"no pool attributes but no OPTION NOHDRS");
		return -EINVAL;
	}
	bool feat = !nohdrs &&
		(attr->incompat_features & POOL_FEAT_SINGLEHDR) != 0;
	if (!nohdrs && single != feat) {
		log_err("pool set %s: OPTION SINGLEHDR %s but incompat "
				"features %#x", log_quote(desc).s,
				single ? "set" : "absent",
				attr->incompat_features);
		return -EINVAL;
	}

	int ret = set_check_sizes(set, desc);
	return ret ? ret : db_promoted_check(db->dirfd, db->dir, desc);
}

/* db_pool_create -- create the pool set named by `desc` */
int
db_pool_create(struct db *db, const char *desc,
		const struct rpmem_pool_attr *attr, struct db_pool **poolp)
{
	struct poolset *set;
	int ret = set_load(db, desc, &set);
	if (ret)
		return ret;

	ret = create_check(db, set, desc, attr);
	if (ret) {
		poolset_free(set);
		return ret;
	}

	bool nohdrs = (set->options & POOLSET_OPT_NOHDRS) != 0;
	struct db_pool *pool;
	ret = db_parts_open(set, true, &pool);
	if (ret)
		return ret;

	if (!nohdrs) {
		ret = db_hdrs_create(pool, attr);
		if (!ret)
			ret = db_sds_open(pool);
		if (ret) {
			db_parts_close(pool, false, true);
			return ret;
		}
	}

	pool->created = true;
	*poolp = pool;
	return 0;
}

/* db_pool_open -- open an existing pool set, headers verified */
int
db_pool_open(struct db *db, const char *desc, struct db_pool **poolp)
{
	struct poolset *set;
	int ret = set_load(db, desc, &set);
	if (ret)
		return ret;

	ret = set_check_sizes(set, desc);
	if (ret) {
		poolset_free(set);
		return ret;
	}

	struct db_pool *pool;
	ret = db_parts_open(set, false, &pool);
	if (ret)
		return ret;

	/* with the parts locked: a promote is over or waits for us */
	ret = db_promoted_check(db->dirfd, db->dir, desc);
	if (!ret && !pool->no_headers) {
		ret = db_hdrs_verify(pool);
		if (!ret)
			ret = db_sds_open(pool);
	}
	if (ret) {
		db_parts_close(pool, false, false);
		return ret;
	}

	*poolp = pool;
	return 0;
}

/* db_pool_set_attr -- rewrite every part header from `attr` */
int
db_pool_set_attr(struct db_pool *pool, const struct rpmem_pool_attr *attr)
{
	struct db_priv *priv = pool->priv;

	if (pool->no_headers) {
		if (attr_is_zero(attr))
			return 0;
		log_err("pool without headers (OPTION NOHDRS) cannot take "
				"attributes");
		return -EINVAL;
	}
	if (attr_is_zero(attr)) {
		log_err("pool with headers needs non-zero attributes");
		return -EINVAL;
	}
	bool single = (priv->set->options & POOLSET_OPT_SINGLEHDR) != 0;
	if (single != ((attr->incompat_features & POOL_FEAT_SINGLEHDR) != 0)) {
		log_err("SINGLEHDR feature in %#x does not match the pool set",
				attr->incompat_features);
		return -EINVAL;
	}
	return db_hdrs_set_attr(pool, attr);
}

/* db_pool_close -- unmap, unlock; with `remove` also unlink the parts */
int
db_pool_close(struct db_pool *pool, bool remove)
{
	if (pool == NULL)
		return 0;
	int ret = remove ? 0 : db_sds_close(pool);
	int cret = db_parts_close(pool, remove, false);
	return ret ? ret : cret;
}

/* db_pool_persist -- make [off, off + len) of the pool durable */
int
db_pool_persist(struct db_pool *pool, size_t off, size_t len)
{
	if (!range_within(off, len, pool->size)) {
		log_err("persist range offset %zu length %zu outside the "
				"pool of %zu bytes", off, len, pool->size);
		return -EINVAL;
	}
	if (len == 0)
		return 0;
	return db_region_persist(pool, off, len);
}


/*
 * parts_remove -- unlink the parts of a pool that no session holds.
 * Every part is opened and locked first.  A part locked by a session
 * makes the pool busy: -EBUSY and nothing unlinked, with or without
 * `force` (that session goes on writing into its files).  A part that
 * is missing, cannot be opened or locked, or cannot be unlinked does not
 * stop the others, as in PMDK; without `force` the first such error is
 * returned once the rest is removed.  A part never locked is never
 * unlinked.
 */
static int
parts_remove(const struct poolset_replica *rep, bool force)
{
	int *fds = malloc(rep->nparts * sizeof(*fds));
	if (fds == NULL)
		return -ENOMEM;

	for (unsigned i = 0; i < rep->nparts; i++)
		fds[i] = -1;
	int ret = 0;
	int busy = 0;
	for (unsigned i = 0; i < rep->nparts; i++) {
		const char *path = rep->parts[i].path;
		fds[i] = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK |
				O_CLOEXEC);
		if (fds[i] >= 0 && flock(fds[i], LOCK_EX | LOCK_NB)) {
			int err = errno;
			close(fds[i]);
			fds[i] = -1;
			if (err == EWOULDBLOCK) {
				log_err("part '%s' is in use by a session: "
						"nothing removed", path);
				busy = -EBUSY;
				break;
			}
			errno = err;
		}
		if (fds[i] >= 0)
			continue;
		if (force && errno == ENOENT)
			continue;
		if (!force && ret == 0)
			ret = -errno;
		log_msg(force ? LOG_LVL_WARN : LOG_LVL_ERR, "cannot remove "
				"part '%s': %s", path, strerror(errno));
	}

	for (unsigned p = 0; !busy && p < rep->nparts; p++) {
		const char *path = rep->parts[p].path;
		if (fds[p] < 0 || unlink(path) == 0)
			continue;
		if (!force && ret == 0)
			ret = -errno;
		log_msg(force ? LOG_LVL_WARN : LOG_LVL_ERR, "cannot remove "
				"part '%s': %s", path, strerror(errno));
	}

	for (unsigned i = 0; i < rep->nparts; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
	}
	free(fds);
	return busy ? busy : ret;
}

/*
 * db_parent_open -- the directory holding `desc`, confined like any
 * lookup (db->dirfd itself for a bare name), and the name within it
 */
int
db_parent_open(struct db *db, const char *desc, int flags, const char **base)
{
	const char *slash = strrchr(desc, '/');
	*base = slash ? slash + 1 : desc;
	if (slash == NULL)
		return db->dirfd;
	char *parent = strndup(desc, (size_t)(slash - desc));
	if (parent == NULL)
		return -ENOMEM;
	int dirfd = db_path_open(db->dirfd, db->dir, parent,
			flags | O_DIRECTORY);
	free(parent);
	return dirfd;
}

/* db_parent_close -- close what db_parent_open opened */
void
db_parent_close(struct db *db, int dirfd)
{
	if (dirfd >= 0 && dirfd != db->dirfd)
		close(dirfd);
}

/* set_unlink -- remove the set file itself, confined like any lookup */
static int
set_unlink(struct db *db, const char *desc, bool force)
{
	const char *base;
	int dirfd = db_parent_open(db, desc, O_PATH, &base);
	if (dirfd < 0)
		return force && dirfd == -ENOENT ? 0 : dirfd;

	int ret = 0;
	if (unlinkat(dirfd, base, 0) && !(force && errno == ENOENT))
		ret = log_errno("cannot remove pool set %s",
			log_quote(desc).s);
	db_parent_close(db, dirfd);
	return ret;
}

/*
 * db_set_part0 -- the path of part 0 of the set `desc` names, the set
 * looked up and parsed as for an open; the caller frees it
 */
int
db_set_part0(struct db *db, const char *desc, char **path)
{
	struct poolset *set;
	int ret = set_load(db, desc, &set);
	if (ret)
		return ret;
	*path = strdup(set->replicas[0].parts[0].path);
	poolset_free(set);
	return *path ? 0 : -ENOMEM;
}

/*
 * db_pool_remove -- unlink the parts of the set (and the set file with
 * `pool_set`).  `force` forgives an unreadable or broken set file, never
 * a descriptor that tries to leave poolset-dir.
 */
int
db_pool_remove(struct db *db, const char *desc, bool force, bool pool_set)
{
	int ret = db_path_check(desc);
	if (ret)
		return ret;

	struct poolset *set = NULL;
	ret = set_load(db, desc, &set);
	if (ret && (!force || ret == -EACCES))
		return ret;
	ret = db_promoted_check(db->dirfd, db->dir, desc);
	if (ret) {
		poolset_free(set);
		return ret;
	}

	if (set != NULL) {
		ret = parts_remove(&set->replicas[0], force);
		if (!ret)
			ret = db_gen_remove(&set->replicas[0]);
		poolset_free(set);
		if (ret)
			return ret;
	}

	return pool_set ? set_unlink(db, desc, force) : 0;
}
