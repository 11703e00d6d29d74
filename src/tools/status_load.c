/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * status_load.c -- what rpmem status finds in the state directory, once
 * for every rendering (status.h): the live statuses librpmem keeps in
 * STATE_DIR/run (rstate.h) of each open handle whose process still runs,
 * then each record of a replica out of sync that no live handle holds
 *
 * Read only, as `drbdadm status` is: a status left by a process that is
 * gone is skipped, and removed only when the directory is ours to write.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array.h"
#include "status.h"

/* how bad each state is */
static const int Severity[RSTATE_MAX] = {
	[RSTATE_CONNECTED] = SEV_OK,
	[RSTATE_DEGRADED] = SEV_ATTENTION,
	[RSTATE_RESYNCING] = SEV_ATTENTION,
	[RSTATE_FROZEN] = SEV_ATTENTION,
	[RSTATE_SPLIT_BRAIN] = SEV_BROKEN,
	[RSTATE_BROKEN] = SEV_BROKEN,
	[RSTATE_REFUSED] = SEV_BROKEN,
};

/* unreadable -- a file we cannot tell anything from */
static void
unreadable(struct status_found *f, const char *dir, const char *name, int e)
{
	fprintf(stderr, "rpmem status: %s/%s: %s\n", dir, name,
		e == -EINVAL ? "malformed" : strerror(-e));
	status_worse(&f->worst, SEV_BROKEN);
}

/* alive -- the process `pid` still exists (perhaps another user's) */
static bool
alive(pid_t pid)
{
	return kill(pid, 0) == 0 || errno != ESRCH;
}

/* load_handle -- run/NAME, kept when its process lives */
static int
load_handle(struct status_found *f, const char *run, const char *name)
{
	int pid, len = 0;
	unsigned seq;
	if (sscanf(name, "%d-%u.status%n", &pid, &seq, &len) != 2 ||
			name[len] || pid <= 0)
		return 0;		/* not a status (a temporary file) */
	char path[8192];
	snprintf(path, sizeof(path), "%s/%s", run, name);
	if (array_grow(&f->h, f->nh, &f->hcap, sizeof(*f->h), 8))
		return -ENOMEM;
	struct rstate_status *s = &f->h[f->nh];
	int e = rstate_status_read(path, s);
	if (e == -ENOENT)
		return 0;		/* closed meanwhile */
	if (!e && (s->pid != pid || s->seq != seq))
		e = -EINVAL;
	if (e) {
		unreadable(f, run, name, e);
		return 0;
	}
	if (!alive(s->pid)) {
		if (access(run, W_OK) == 0)
			(void) unlink(path);
		return 0;
	}
	f->nh++;
	status_worse(&f->worst, Severity[s->state]);
	return 0;
}

/* held -- a live handle writes to the replica of record `r` */
static bool
held(const struct status_found *f, const struct rstate_record *r)
{
	for (size_t i = 0; i < f->nh; i++)
		if (strcmp(f->h[i].target, r->target) == 0 &&
				strcmp(f->h[i].pool_set, r->pool_set) == 0)
			return true;
	return false;
}

/* load_record -- DIR/NAME.replica, kept when out of sync and not held */
static int
load_record(struct status_found *f, const char *dir, const char *name)
{
	size_t len = strlen(name);
	if (len <= 8 || strcmp(name + len - 8, ".replica"))
		return 0;
	char path[8192];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (array_grow(&f->r, f->nr, &f->rcap, sizeof(*f->r), 8))
		return -ENOMEM;
	struct status_closed *c = &f->r[f->nr];
	struct rstate_record *r = &c->r;
	int e = rstate_record_read(path, r);
	if (e == -ENOENT)
		return 0;
	if (e) {
		unreadable(f, dir, name, e);
		return 0;
	}
	c->bytes = 0;
	c->nranges = r->nranges;
	for (size_t i = 0; i < r->nranges; i++)
		c->bytes += r->ranges[i].len;	/* apart, within the pool */
	rstate_record_free(r);
	if (r->in_sync || held(f, r))
		return 0;
	f->nr++;
	status_worse(&f->worst, SEV_ATTENTION);
	return 0;
}

/* scan -- call `load` for each name in `dir`; a missing dir is empty */
static int
scan(struct status_found *f, const char *dir,
		int (*load)(struct status_found *f, const char *dir,
		const char *name))
{
	DIR *d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	struct dirent *de;
	int e = 0;
	while (!e && (de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			e = load(f, dir, de->d_name);
	closedir(d);
	return e;
}

/* by_name -- handles by pool set, target, pid and handle number */
static int
by_name(const void *a, const void *b)
{
	const struct rstate_status *x = a, *y = b;
	int c = strcmp(x->pool_set, y->pool_set);
	if (!c)
		c = strcmp(x->target, y->target);
	if (!c)
		c = (x->pid > y->pid) - (x->pid < y->pid);
	if (!c)
		c = (x->seq > y->seq) - (x->seq < y->seq);
	return c;
}

/* by_record -- records by pool set and target */
static int
by_record(const void *a, const void *b)
{
	const struct status_closed *x = a, *y = b;
	int c = strcmp(x->r.pool_set, y->r.pool_set);
	return c ? c : strcmp(x->r.target, y->r.target);
}

/* status_load -- live handles, then the records they do not cover */
int
status_load(struct status_found *f)
{
	int e = rstate_dir(f->dir, sizeof(f->dir), false);
	if (e) {
		fprintf(stderr, "rpmem status: no state directory: %s (set "
			"RPMEM_STATE_DIR)\n", strerror(-e));
		return 1;
	}
	char run[sizeof(f->dir) + 8];
	snprintf(run, sizeof(run), "%s/run", f->dir);
	e = scan(f, run, load_handle);
	if (!e)
		e = scan(f, f->dir, load_record);
	if (e) {
		fprintf(stderr, "rpmem status: %s: %s\n", f->dir,
			strerror(-e));
		return 1;
	}
	if (f->nh)
		qsort(f->h, f->nh, sizeof(*f->h), by_name);
	if (f->nr)
		qsort(f->r, f->nr, sizeof(*f->r), by_record);
	return 0;
}

/* status_free -- the arrays of what was found */
void
status_free(struct status_found *f)
{
	free(f->h);
	free(f->r);
	free(f->s);
}
