/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_sync.c -- rpmem sync: rebuild missing or damaged replicas from a
 * healthy one and copy to the others only what differs
 *
 * scenario R18: a sync may be interrupted anywhere and simply rerun.
 * A remote replica with headers carries the signature REPLICA_SYNC_SIG
 * from before its first byte changes until its last byte is durable, so
 * neither libpmemobj nor this tool ever takes it for a good replica; a
 * rebuilt master is written under temporary part names, headers last,
 * and renamed into place (part 0 last) only once it is complete.
 * Remote replicas are brought in line by sync_remote.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "marker.h"
#include "pmemobj_skip.h"
#include "sync.h"
#include "tools.h"

static int run_sync(const struct cli_args *a);

static const struct cli_opt Opts[] = {
	{ "strict", 0, NULL, "copy every differing byte, those libpmemobj "
		"never persists too" },
	CLI_OPT_END,
};

const struct cli_cmd cmd_sync = {
	.name = "sync", .operands = "POOLSET", .nmin = 1, .nmax = 1,
	.summary = "rebuild missing or damaged replicas of POOLSET, copy what "
		"differs",
	.opts = Opts,
	.run = run_sync,
};

#define TMP_SUFFIX ".rpmsync"	/* part names of a master being rebuilt */

/* sync_say -- remember what was done to replica i, for the summary */
void
sync_say(struct sync *s, unsigned i, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	free(s->done[i]);
	if (vasprintf(&s->done[i], fmt, ap) < 0)
		s->done[i] = NULL;
	va_end(ap);
}

/* sync_fail -- an error message naming replica i; returns 1 */
int
sync_fail(struct sync *s, unsigned i, const char *fmt, ...)
{
	char msg[REPLICA_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	progress_clear(&s->pg);
	if (i == 0)
		fprintf(stderr, "rpmem: sync: replica 0 (local): %s\n", msg);
	else
		fprintf(stderr, "rpmem: sync: replica %u (%s %s): %s\n", i,
			s->set->replicas[i].target, s->set->replicas[i].desc,
			msg);
	return 1;
}

/* check_line -- the state found, as a step of its own */
static void
check_line(struct sync *s, unsigned i, enum replica_state st)
{
	char extra[32];
	snprintf(extra, sizeof(extra), "state=%s", replica_state_name(st));
	progress_step(&s->pg, i, "check", 0, 0, extra);
}

/* classify -- open every remote replica against `ref` (may be NULL) */
static int
classify(struct sync *s, void *addr, const struct rpmem_pool_attr *ref)
{
	int ret = 0;
	for (unsigned i = 1; i < s->n; i++) {
		struct remote *r = &s->rem[i];
		replica_remote_open(r, s->set, i, addr, s->size, 1, ref);
		check_line(s, i, r->state);
		if (r->state == REPLICA_ERROR)
			ret = sync_fail(s, i, "%s (sync cannot repair that; no "
				"remote replica was changed)", r->msg);
	}
	return ret;
}

/* close_remotes -- end every open remote session */
static void
close_remotes(struct sync *s)
{
	for (unsigned i = 1; i < s->n; i++)
		(void) replica_remote_close(&s->rem[i]);
}

/* healthy -- a replica whose data and header can be trusted */
static bool
healthy(const struct remote *r)
{
	return r->state == REPLICA_OK;
}

/* plan_uuids -- keep each usable replica's uuid, new ones for the rest */
static int
plan_uuids(struct sync *s)
{
	for (unsigned i = 1; i < s->n; i++) {
		const struct remote *r = &s->rem[i];
		bool keep = r->state == REPLICA_OK ||
			r->state == REPLICA_INCOMPLETE;
		if (keep && !s->nohdrs) {
			memcpy(s->uuids[i], r->attr.uuid, sizeof(s->uuids[i]));
			s->generated[i] = false;
		} else if (!s->generated[i]) {
			if (pool_hdr_uuid_generate(s->uuids[i]))
				return sync_fail(s, i, "cannot generate a "
					"uuid");
			s->generated[i] = true;
		}
	}
	return 0;
}

/* tmp_path -- the name of a part while the master is rebuilt */
static char *
tmp_path(const char *path)
{
	char *p;
	return asprintf(&p, "%s%s", path, TMP_SUFFIX) < 0 ? NULL : p;
}

/* sync_dir -- make a rename in the directory of `path` durable */
static int
sync_dir(const char *path)
{
	char *copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int ret = fd < 0 || fsync(fd) ? -errno : 0;
	if (fd >= 0)
		close(fd);
	free(copy);
	return ret;
}

/*
 * install_master -- move the rebuilt parts into place: part 0 goes
 * first out of the way and last into place, so until the end the master
 * is missing rather than a mix of old and new parts
 */
static int
install_master(struct sync *s)
{
	const struct poolset_replica *rep = &s->set->replicas[0];
	if (unlink(rep->parts[0].path) && errno != ENOENT)
		return sync_fail(s, 0, "removing %s: %s", rep->parts[0].path,
			strerror(errno));
	for (unsigned k = rep->nparts; k-- > 0; ) {
		const char *path = rep->parts[k].path;
		char *tmp = tmp_path(path);
		if (!tmp || rename(tmp, path)) {
			int e = tmp ? errno : ENOMEM;
			free(tmp);
			return sync_fail(s, 0, "renaming the rebuilt part to "
				"%s: %s", path, strerror(e));
		}
		free(tmp);
		int e = sync_dir(path);
		if (e)
			return sync_fail(s, 0, "syncing the directory of "
				"%s: %s", path, strerror(-e));
	}
	return 0;
}

/* read_master -- copy the data area of remote `src` into the new parts */
static int
read_master(struct sync *s, struct db_pool *pool, unsigned src)
{
	struct remote *r = &s->rem[src];
	replica_remote_open(r, s->set, src, pool->addr, s->size, 1, &s->base);
	if (r->state != REPLICA_OK) {
		(void) replica_remote_close(r);
		return sync_fail(s, src, "no longer usable as the source: %s",
			r->msg);
	}
	char *base = pool->addr;
	size_t end = s->off + s->len;
	progress_step(&s->pg, 0, "copy", 0, s->len, NULL);
	for (size_t o = s->off; o < end; ) {
		size_t n = end - o < REPLICA_CHUNK ? end - o : REPLICA_CHUNK;
		if (rpmem_read(r->rpp, base + o, o, n, 0)) {
			(void) replica_remote_close(r);
			return sync_fail(s, src, "reading offset 0x%zx: %s", o,
				rpmem_errormsg());
		}
		o += n;
		progress_update(&s->pg, o - s->off);
	}
	if (replica_remote_close(r))
		return sync_fail(s, src, "%s", r->msg);
	return 0;
}

/*
 * rebuild_master -- new parts under temporary names, the data area read
 * from remote `src` and made durable, then the headers, then the names
 */
static int
rebuild_master(struct sync *s, unsigned src)
{
	struct poolset *tmp = replica_load(s->path);
	if (!tmp)
		return 1;
	struct poolset_replica *rep = &tmp->replicas[0];
	for (unsigned k = 0; k < rep->nparts; k++) {
		char *p = tmp_path(rep->parts[k].path);
		if (!p) {
			poolset_free(tmp);
			return sync_fail(s, 0, "%s", strerror(ENOMEM));
		}
		free(rep->parts[k].path);
		rep->parts[k].path = p;
		if (unlink(p) && errno != ENOENT) {
			int e = errno;
			poolset_free(tmp);
			return sync_fail(s, 0, "removing %s: %s", p,
				strerror(e));
		}
	}
	progress_step(&s->pg, 0, "rebuild", 0, s->len, NULL);
	struct db_pool *pool;
	int e = db_parts_open(tmp, true, &pool);
	if (e)
		return sync_fail(s, 0, "creating the parts: %s", strerror(-e));
	int ret = read_master(s, pool, src);
	if (!ret && (e = db_region_persist(pool, s->off, s->len)) != 0)
		ret = sync_fail(s, 0, "making the data durable: %s",
			strerror(-e));
	if (!ret && !s->nohdrs) {
		struct rpmem_pool_attr a;
		replica_ring(&a, &s->base, s->uuids, 0, s->n);
		progress_step(&s->pg, 0, "attrs", 0, 0, NULL);
		if ((e = db_hdrs_create(pool, &a)) != 0)
			ret = sync_fail(s, 0, "writing the headers: %s",
				strerror(-e));
	}
	e = db_parts_close(pool, ret != 0, false);
	if (!ret && e)
		ret = sync_fail(s, 0, "closing the parts: %s", strerror(-e));
	if (!ret)
		ret = install_master(s);
	if (!ret) {
		progress_step(&s->pg, 0, "done", s->len, s->len, NULL);
		sync_say(s, 0, "rebuilt from replica %u, %zu bytes copied", src,
			s->len);
	}
	return ret;
}

/* sync_master_links -- the master's header names its neighbours */
static int
sync_master_links(struct sync *s)
{
	if (s->nohdrs)
		return 0;
	struct rpmem_pool_attr a;
	replica_ring(&a, &s->base, s->uuids, 0, s->n);
	if (memcmp(&a, &s->m.pool->attr, sizeof(a)) == 0)
		return 0;
	progress_step(&s->pg, 0, "attrs", 0, 0, NULL);
	int e = db_hdrs_set_attr(s->m.pool, &a);
	if (e)
		return sync_fail(s, 0, "rewriting the headers: %s",
			strerror(-e));
	char *was = s->done[0];
	s->done[0] = NULL;
	sync_say(s, 0, "%s, header updated", was ? was : "ok");
	free(was);
	return 0;
}

/*
 * recover_master -- the master is missing or damaged: find a healthy
 * remote replica, rebuild the master from it, open the result
 */
static int
recover_master(struct sync *s)
{
	void *buf = mmap(NULL, s->size, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (buf == MAP_FAILED)
		return sync_fail(s, 0, "%s", strerror(errno));
	int ret = classify(s, buf, NULL);
	unsigned src = 0;
	for (unsigned i = 1; !ret && i < s->n && !src; i++)
		if (healthy(&s->rem[i]))
			src = i;
	if (!ret && !src)
		ret = sync_fail(s, 0, "%s, and no remote replica is healthy: "
			"nothing to sync from, nothing done", s->m.msg);
	if (!ret) {
		s->base = s->rem[src].attr;
		ret = plan_uuids(s);
	}
	if (!ret && pool_hdr_uuid_generate(s->uuids[0]))
		ret = sync_fail(s, 0, "cannot generate a uuid");
	close_remotes(s);
	munmap(buf, s->size);
	if (!ret)
		ret = rebuild_master(s, src);
	if (ret)
		return ret;
	replica_master_open(s->path, &s->m);
	if (s->m.state != REPLICA_OK)
		return sync_fail(s, 0, "rebuilt but still %s: %s",
			replica_state_name(s->m.state), s->m.msg);
	return 0;
}

/* run -- classify, pick the source, repair, relink */
static int
run(struct sync *s)
{
	replica_master_open(s->path, &s->m);
	check_line(s, 0, s->m.state);
	if (s->m.state == REPLICA_ERROR)
		return sync_fail(s, 0, "%s", s->m.msg);
	if (s->m.state != REPLICA_OK) {
		int ret = recover_master(s);
		if (ret)
			return ret;
	} else {
		sync_say(s, 0, "ok, the source");
	}
	s->base = s->m.pool->attr;
	memcpy(s->uuids[0], s->base.uuid, sizeof(s->uuids[0]));
	if (!s->strict && pmemobj_skip_list(&s->base, s->m.pool->addr,
			s->size, &s->skip, &s->nskip))
		return sync_fail(s, 0, "%s", strerror(ENOMEM));
	int ret = classify(s, s->m.pool->addr, &s->base);
	if (!ret)
		ret = plan_uuids(s);
	for (unsigned i = 1; !ret && i < s->n; i++)
		ret = sync_remote(s, i);
	if (!ret)
		ret = sync_master_links(s);
	close_remotes(s);
	/* every replica equals the local one: it is outdated no more */
	int e = ret ? 0 : marker_remove(MARKER_OUTDATED, s->path);
	if (e && e != -ENOENT)
		ret = sync_fail(s, 0, "removing %s%s: %s", s->path,
			MARKER_OUTDATED_SUFFIX, strerror(-e));
	else if (!e && !ret)
		fprintf(stderr, "rpmem sync: %s: its outdated mark removed\n",
			s->path);
	return ret;
}

/* summary -- one line per replica */
static void
summary(struct sync *s)
{
	progress_clear(&s->pg);
	for (unsigned i = 0; i < s->n; i++) {
		if (i == 0)
			printf("replica 0 (local): ");
		else
			printf("replica %u (%s %s): ", i,
				s->set->replicas[i].target,
				s->set->replicas[i].desc);
		printf("%s\n", s->done[i] ? s->done[i] : "?");
	}
	replica_skip_print(s->skip, s->nskip, "--strict copies them");
	printf("sync: all %u replica(s) of %s in sync\n", s->n, s->path);
}

/* run_sync -- exit 0 when every replica is in sync, 1 otherwise */
static int
run_sync(const struct cli_args *a)
{
	struct sync s = {
		.path = a->operand[0], .strict = cli_flag(a, "strict"),
	};
	int ret;
	s.set = replica_load(s.path);
	if (!s.set)
		return 1;
	s.n = s.set->nreplicas;
	s.size = poolset_replica_size(s.set, 0);
	s.nohdrs = (s.set->options & POOLSET_OPT_NOHDRS) != 0;
	replica_data(s.set, &s.off, &s.len);
	progress_init(&s.pg);
	s.rem = calloc(s.n, sizeof(*s.rem));
	s.uuids = calloc(s.n, sizeof(*s.uuids));
	s.generated = calloc(s.n, sizeof(*s.generated));
	s.done = calloc(s.n, sizeof(*s.done));
	if (!s.rem || !s.uuids || !s.generated || !s.done) {
		perror("rpmem");
		ret = 1;
	} else {
		ret = run(&s);
	}
	if (!ret)
		summary(&s);
	if (replica_master_close(&s.m) && !ret)
		ret = sync_fail(&s, 0, "closing the master failed");
	for (unsigned i = 0; s.done && i < s.n; i++)
		free(s.done[i]);
	free(s.done);
	free(s.skip);
	free(s.generated);
	free(s.uuids);
	free(s.rem);
	poolset_free(s.set);
	return ret;
}
