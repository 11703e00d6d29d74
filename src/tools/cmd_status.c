/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_status.c -- rpmem status: the replication state of this host's open
 * pools, of its replicas left out of sync, and of local pool set files
 *
 * Read only, as `drbdadm status` is: the live statuses librpmem keeps in
 * STATE_DIR/run (rstate.h) of each open handle whose process still runs,
 * then each record of a replica out of sync that no live handle holds.
 * A status left by a process that is gone is skipped, and removed when
 * the directory is ours to write.  With SET operands, only those sets,
 * and the markers beside each (one row of Markers per kind).
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "replica.h"
#include "rstate.h"
#include "status.h"
#include "tools.h"


static int run_status(const struct cli_args *a);

static const struct cli_opt Status_opts[] = {
	CLI_OPT_JSON,
	CLI_OPT_END,
};

const struct cli_cmd cmd_status = {
	.name = "status", .operands = "[SET...]", .nmin = 0,
	.nmax = CLI_OPERANDS_MAX,
	.summary = "show the replication state of open pools and replicas",
	.desc =
	"Without SET: each pool open through librpmem on this host (pool\n"
	"set, target, pid, policy and state: connected, degraded, resyncing,\n"
	"frozen, split-brain, refused or broken, with what belongs to it,\n"
	"the master's and the replica's generations), then each replica\n"
	"left out of sync by a pool since closed.  With SET, pool set files\n"
	"of this host (say, the replica's): whether each was promoted or\n"
	"outdated, and its copy's generations.  Exit status 0 when all is\n"
	"connected and in sync, 1 when something is degraded, resyncing,\n"
	"frozen, out of sync, promoted, outdated, mid-resync, discarded or\n"
	"refused a session, 3 on split-brain, a refused or broken handle or\n"
	"a file that cannot be read (2: a usage error).\n",
	.opts = Status_opts,
	.run = run_status,
};

/* rows of a handle's block besides pid, policy and state */
#define ROW_SINCE 0x1U
#define ROW_OOS 0x2U		/* out-of-sync bytes, reconnects */
#define ROW_RESYNC 0x4U		/* done/total, percent, rate, ETA */
#define ROW_ERROR 0x8U		/* last error */

/* what each state shows and how bad it is */
static const struct {
	int severity;
	unsigned rows;
} States[RSTATE_MAX] = {
	[RSTATE_CONNECTED] = { SEV_OK, 0 },
	[RSTATE_DEGRADED] = { SEV_ATTENTION, ROW_SINCE | ROW_OOS | ROW_ERROR },
	[RSTATE_RESYNCING] = { SEV_ATTENTION, ROW_SINCE | ROW_RESYNC },
	[RSTATE_FROZEN] = { SEV_ATTENTION, ROW_SINCE | ROW_ERROR },
	[RSTATE_SPLIT_BRAIN] = { SEV_BROKEN, ROW_SINCE | ROW_ERROR },
	[RSTATE_BROKEN] = { SEV_BROKEN, ROW_SINCE | ROW_ERROR },
	[RSTATE_REFUSED] = { SEV_BROKEN, ROW_SINCE | ROW_ERROR },
};

/* a replica out of sync whose pool is closed */
struct closed {
	struct rstate_record r;	/* its ranges freed */
	size_t nranges;
	uint64_t bytes;		/* in them */
};

/* what was found */
struct found {
	char dir[4096];
	struct rstate_status *h;	/* live handles */
	size_t nh, hcap;
	struct closed *r;
	size_t nr, rcap;
	int worst;
	time_t now;
};

/* worse -- raise the exit status to `sev` */
static void
worse(struct found *f, int sev)
{
	status_worse(&f->worst, sev);
}

/* unreadable -- a file we cannot tell anything from */
static void
unreadable(struct found *f, const char *dir, const char *name, int e)
{
	fprintf(stderr, "rpmem status: %s/%s: %s\n", dir, name,
		e == -EINVAL ? "malformed" : strerror(-e));
	worse(f, SEV_BROKEN);
}

/* grow -- room for element n of `size` bytes in *arr of *cap */
static int
grow(void *arr, size_t n, size_t *cap, size_t size)
{
	void **p = arr;
	if (n < *cap)
		return 0;
	size_t c = *cap ? 2 * *cap : 8;
	void *q = realloc(*p, c * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

/* alive -- the process `pid` still exists (perhaps another user's) */
static bool
alive(pid_t pid)
{
	return kill(pid, 0) == 0 || errno != ESRCH;
}

/* load_handle -- run/NAME, kept when its process lives */
static int
load_handle(struct found *f, const char *run, const char *name)
{
	int pid, len = 0;
	unsigned seq;
	if (sscanf(name, "%d-%u.status%n", &pid, &seq, &len) != 2 ||
			name[len] || pid <= 0)
		return 0;		/* not a status (a temporary file) */
	char path[8192];
	snprintf(path, sizeof(path), "%s/%s", run, name);
	if (grow(&f->h, f->nh, &f->hcap, sizeof(*f->h)))
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
	worse(f, States[s->state].severity);
	return 0;
}

/* held -- a live handle writes to the replica of record `r` */
static bool
held(const struct found *f, const struct rstate_record *r)
{
	for (size_t i = 0; i < f->nh; i++)
		if (strcmp(f->h[i].target, r->target) == 0 &&
				strcmp(f->h[i].pool_set, r->pool_set) == 0)
			return true;
	return false;
}

/* load_record -- NAME.replica, kept when out of sync and not held */
static int
load_record(struct found *f, const char *name)
{
	size_t len = strlen(name);
	if (len <= 8 || strcmp(name + len - 8, ".replica"))
		return 0;
	char path[8192];
	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	if (grow(&f->r, f->nr, &f->rcap, sizeof(*f->r)))
		return -ENOMEM;
	struct closed *c = &f->r[f->nr];
	struct rstate_record *r = &c->r;
	int e = rstate_record_read(path, r);
	if (e == -ENOENT)
		return 0;
	if (e) {
		unreadable(f, f->dir, name, e);
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
	worse(f, SEV_ATTENTION);
	return 0;
}

/* scan -- call `load` for each name in `dir`; a missing dir is empty */
static int
scan(struct found *f, const char *dir,
		int (*load)(struct found *f, const char *dir, const char *name))
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

/* load_record_in -- load_record for scan */
static int
load_record_in(struct found *f, const char *dir, const char *name)
{
	(void) dir;
	return load_record(f, name);
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
	const struct closed *x = a, *y = b;
	int c = strcmp(x->r.pool_set, y->r.pool_set);
	return c ? c : strcmp(x->r.target, y->r.target);
}

/* ---------------------------------------------------------------- text */

/* human -- "12582912 bytes (12.0 MiB)" */
static const char *
human(uint64_t n, char *buf, size_t len)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB" };
	double v = (double)n;
	int u = -1;
	while (v >= 1024 && u < 3) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%llu bytes", (unsigned long long)n);
	else
		snprintf(buf, len, "%llu bytes (%.1f %s)",
			(unsigned long long)n, v, unit[u]);
	return buf;
}

/* eta -- seconds a resync has left at its rate, or -1 */
static int64_t
eta(const struct rstate_status *s)
{
	if (!s->resync_rate || s->resync_done > s->resync_total)
		return -1;
	return (int64_t)((s->resync_total - s->resync_done +
		s->resync_rate - 1) / s->resync_rate);
}

/* percent -- of a resync, or -1 when it has nothing to copy */
static double
percent(const struct rstate_status *s)
{
	return s->resync_total ? 100.0 * (double)s->resync_done /
		(double)s->resync_total : -1;
}

/* text_handle -- one block of a live handle */
static void
text_handle(const struct found *f, const struct rstate_status *s)
{
	char a[1024], b[1024], c[64];
	unsigned rows = States[s->state].rows;
	printf("%s on %s\n", status_safe(s->pool_set, a, sizeof(a)),
		status_safe(s->target, b, sizeof(b)));
	status_row("state:", "%s", rstate_name(s->state));
	status_row("pid:", "%d (handle %u)", (int)s->pid, s->seq);
	status_row("policy:", "%s", s->policy[0] ? status_safe(s->policy, a,
		sizeof(a)) : "unknown");
	if (rows & ROW_SINCE)
		status_row("since:", "%s", status_when(f->now, s->since, a,
			sizeof(a)));
	if (rows & ROW_OOS) {
		status_row("out of sync:", "%s", human(s->out_of_sync, a,
			sizeof(a)));
		status_row("reconnects:", "%llu",
			(unsigned long long)s->reconnects);
	}
	if (rows & ROW_RESYNC) {
		double p = percent(s);
		int64_t e = eta(s);
		if (p >= 0)
			snprintf(c, sizeof(c), " (%.1f%%)", p);
		else
			c[0] = '\0';
		status_row("resynced:", "%llu of %llu bytes%s",
			(unsigned long long)s->resync_done,
			(unsigned long long)s->resync_total, c);
		status_row("rate:", "%.1f MiB/s",
			(double)s->resync_rate / 1048576);
		if (e < 0)
			status_row("eta:", "unknown");
		else
			status_row("eta:", "%lld:%02lld:%02lld",
				(long long)(e / 3600),
				(long long)(e % 3600 / 60),
				(long long)(e % 60));
	}
	if (rows & ROW_ERROR)
		status_row("last error:", "%s", s->last_error[0] ?
			status_safe(s->last_error, a, sizeof(a)) : "none");
	if (s->generation[0])
		status_row("generation:", "%s (the replica's: %s)",
			status_safe(s->generation, a, sizeof(a)),
			status_safe(s->replica_generation, b, sizeof(b)));
	if (s->refusal[0])
		status_row("refused:", "%s", status_safe(s->refusal, a,
			sizeof(a)));
}

/* text_record -- one block of a replica out of sync, its pool closed */
static void
text_record(const struct found *f, const struct closed *c)
{
	const struct rstate_record *r = &c->r;
	char a[1024], b[1024];
	printf("%s on %s\n", status_safe(r->pool_set, a, sizeof(a)),
		status_safe(r->target, b, sizeof(b)));
	status_row("state:", "out of sync (closed)");
	status_row("since:", "%s", status_when(f->now, r->since, a,
		sizeof(a)));
	status_row("reason:", "%s", r->reason[0] ? status_safe(r->reason, a,
		sizeof(a)) : "unknown");
	if (r->ranges_known)
		status_row("out of sync:", "%zu range(s), %s", c->nranges,
			human(c->bytes, a, sizeof(a)));
	else
		status_row("out of sync:", "unknown (hashes will be compared)");
}

/* ---------------------------------------------------------------- json */

/* json_handle -- one live handle as a JSON object */
static void
json_handle(const struct rstate_status *s)
{
	printf("{\"pool_set\": ");
	json_str(stdout, s->pool_set);
	printf(", \"target\": ");
	json_str(stdout, s->target);
	printf(", \"pid\": %d, \"handle\": %u, \"policy\": ", (int)s->pid,
		s->seq);
	json_str(stdout, s->policy[0] ? s->policy : NULL);
	printf(", \"state\": \"%s\", \"since\": %lld, \"pool_size\": %llu, "
		"\"out_of_sync\": %llu, \"reconnects\": %llu, "
		"\"resync_done\": %llu, \"resync_total\": %llu, "
		"\"resync_rate\": %llu, \"resync_percent\": ",
		rstate_name(s->state), (long long)s->since,
		(unsigned long long)s->pool_size,
		(unsigned long long)s->out_of_sync,
		(unsigned long long)s->reconnects,
		(unsigned long long)s->resync_done,
		(unsigned long long)s->resync_total,
		(unsigned long long)s->resync_rate);
	double p = percent(s);
	int64_t e = eta(s);
	if (s->state == RSTATE_RESYNCING && p >= 0)
		printf("%.1f", p);
	else
		printf("null");
	printf(", \"eta_seconds\": ");
	if (s->state == RSTATE_RESYNCING && e >= 0)
		printf("%lld", (long long)e);
	else
		printf("null");
	printf(", \"last_error\": ");
	json_str(stdout, s->last_error[0] ? s->last_error : NULL);
	printf(", \"generation\": ");
	json_str(stdout, s->generation[0] ? s->generation : NULL);
	printf(", \"replica_generation\": ");
	json_str(stdout, s->replica_generation[0] ? s->replica_generation :
		NULL);
	printf(", \"refusal\": ");
	json_str(stdout, s->refusal[0] ? s->refusal : NULL);
	printf(", \"updated_ms\": %lld}", (long long)s->updated_ms);
}

/* json_record -- one replica out of sync as a JSON object */
static void
json_record(const struct closed *c)
{
	const struct rstate_record *r = &c->r;
	printf("{\"pool_set\": ");
	json_str(stdout, r->pool_set);
	printf(", \"target\": ");
	json_str(stdout, r->target);
	printf(", \"pool_size\": %llu, \"in_sync\": false, \"open\": false, "
		"\"since\": %lld, \"reason\": ",
		(unsigned long long)r->pool_size, (long long)r->since);
	json_str(stdout, r->reason[0] ? r->reason : NULL);
	printf(", \"ranges_known\": %s, ", r->ranges_known ? "true" :
		"false");
	if (r->ranges_known)
		printf("\"ranges\": %zu, \"out_of_sync\": %llu}", c->nranges,
			(unsigned long long)c->bytes);
	else
		printf("\"ranges\": null, \"out_of_sync\": null}");
}

/* ----------------------------------------------------------------- run */

/* load -- live handles, then the records they do not cover */
static int
load(struct found *f)
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
		e = scan(f, f->dir, load_record_in);
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

/* show -- what load found, as text or JSON */
static void
show(struct found *f, bool json, bool sets)
{
	if (json) {
		printf("{\"state_dir\": ");
		json_str(stdout, sets ? NULL : f->dir);
		printf(", \"handles\": [");
	}
	for (size_t i = 0; i < f->nh; i++) {
		if (json) {
			printf("%s", i ? ", " : "");
			json_handle(&f->h[i]);
		} else {
			printf("%s", i ? "\n" : "");
			text_handle(f, &f->h[i]);
		}
	}
	if (json)
		printf("], \"records\": [");
	for (size_t i = 0; i < f->nr; i++) {
		if (json) {
			printf("%s", i ? ", " : "");
			json_record(&f->r[i]);
		} else {
			printf("%s", i || f->nh ? "\n" : "");
			text_record(f, &f->r[i]);
		}
	}
	if (json)
		printf("], \"sets\": [");
}

/* run_status -- the handles and records, or the sets named */
static int
run_status(const struct cli_args *a)
{
	struct found f;
	memset(&f, 0, sizeof(f));
	f.now = time(NULL);
	bool json = cli_flag(a, "json");
	int ret = 0;
	if (!a->noperands && (ret = load(&f)) != 0)
		goto out;
	show(&f, json, a->noperands > 0);
	for (unsigned i = 0; i < a->noperands; i++)
		status_set(&f.worst, f.now, a->operand[i], json, i == 0);
	if (json)
		printf("]}\n");
	else if (!a->noperands && !f.nh && !f.nr)
		printf("no pool open through librpmem and no replica out of "
			"sync (%s)\n", f.dir);
	ret = f.worst;
out:
	free(f.h);
	free(f.r);
	return ret;
}
