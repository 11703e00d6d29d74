/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl_setup.c -- what a handle whose replica may come and go starts
 * from (repl.h): the policy and its knobs from the environment, the
 * client host's record of the replica and the handle's live status
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "pool_hdr.h"
#include "repl_int.h"
#include "rpmem_tool.h"

#define DEFAULT_FREEZE_S 60
#define DEFAULT_RETRY_MIN_MS 1000
#define DEFAULT_RETRY_MAX_MS 2000	/* a reachable replica rejoins soon */
#define DEFAULT_RATE ((uint64_t)256 << 20)
#define DEFAULT_CLOSE_S 30

static const char *const Policy_names[] = {
	[REPL_POLICY_FAIL] = "fail",
	[REPL_POLICY_CONTINUE] = "continue",
	[REPL_POLICY_FENCE] = "fence",
};

/* the handles of this process, numbered for their status files */
static _Atomic unsigned Seq;

/* the handles not closed yet: their workers may still run at exit */
static _Atomic unsigned Live;

/* the rpmem tool's handles keep no record (rpmem_tool_untracked) */
static bool Untracked;

/* and write nothing (rpmem_tool_readonly) */
static bool Readonly;

/*
 * the pool size of libpmempool's probe of a remote replica (two pool
 * headers in a volatile buffer, pmdk-interop 6.6): such a handle is no use of
 * the pool and must leave its record alone
 */
#define PROBE_SIZE 8192

/* rpmem_tool_untracked -- this process's handles keep no record */
void
rpmem_tool_untracked(void)
{
	Untracked = true;
}

/* rpmem_tool_readonly -- this process's handles write nothing */
void
rpmem_tool_readonly(void)
{
	Readonly = true;
}

/* repl_live -- handles of this process not closed yet */
unsigned
repl_live(void)
{
	return atomic_load(&Live);
}

/* repl_rstate -- the rstate name of a handle state */
enum rstate_state
repl_rstate(const RPMEMpool *rpp, enum rpmem_state s)
{
	enum gen_verdict v = rpp->repl->refusal;
	switch (s) {
	case RPMEM_ST_DEGRADED:
		return v == GEN_SAME ? RSTATE_DEGRADED : v == GEN_SPLIT ?
			RSTATE_SPLIT_BRAIN : RSTATE_REFUSED;
	case RPMEM_ST_FROZEN:
		return RSTATE_FROZEN;
	case RPMEM_ST_RESYNCING:
		return RSTATE_RESYNCING;
	case RPMEM_ST_BROKEN:
		return RSTATE_BROKEN;
	default:
		return RSTATE_CONNECTED;
	}
}

/*
 * env_num -- a decimal from the environment with an optional suffix
 * (K, M, G: powers of 1024, when `sized`), or `def`; -1 when invalid
 */
static int
env_num(const char *name, uint64_t def, uint64_t max, bool sized,
		uint64_t *out)
{
	const char *s = getenv(name);
	*out = def;
	if (!s || !*s)
		return 0;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	bool digits = end != s;
	unsigned shift = 0;
	if (sized && digits && *end) {
		const char *sfx = strchr("KMG", *end & ~0x20);
		if (sfx && end[1] == '\0') {
			shift = 10 * (unsigned)(sfx - "KMG" + 1);
			end++;
		}
	}
	if (errno || *end || s[0] == '-' || !digits ||
			v > (max >> shift))
		return fail(EINVAL, "invalid %s=%s (a number up to %" PRIu64
			"%s)", name, s, max, sized ? ", K, M or G" : "");
	*out = (uint64_t)v << shift;
	return 0;
}

/* knobs -- the policy and its knobs from the environment */
static int
knobs(struct repl *rp)
{
	const char *p = getenv("RPMEM_ON_REPLICA_LOSS");
	rp->policy = REPL_POLICY_FAIL;
	if (p && *p) {
		unsigned i = 0;
		while (i < REPL_POLICY_FENCE + 1 && strcmp(p, Policy_names[i]))
			i++;
		if (i > REPL_POLICY_FENCE)
			return fail(EINVAL, "invalid RPMEM_ON_REPLICA_LOSS=%s "
				"(fail, continue or fence)", p);
		rp->policy = (enum repl_policy)i;
	}
	const char *cmd = getenv("RPMEM_FENCE_PEER_CMD");
	if (rp->policy == REPL_POLICY_FENCE && (!cmd || !*cmd))
		return fail(EINVAL, "RPMEM_ON_REPLICA_LOSS=fence needs a "
			"fence-peer handler in RPMEM_FENCE_PEER_CMD");
	if (cmd && *cmd && !(rp->fence_cmd = strdup(cmd)))
		return fail(ENOMEM, "!copying RPMEM_FENCE_PEER_CMD");
	const char *ucmd = getenv("RPMEM_UNFENCE_PEER_CMD");
	if (ucmd && *ucmd && !(rp->unfence_cmd = strdup(ucmd)))
		return fail(ENOMEM, "!copying RPMEM_UNFENCE_PEER_CMD");
	uint64_t freeze, rmin, rmax, close_s;
	if (env_num("RPMEM_FREEZE_TIMEOUT", DEFAULT_FREEZE_S, 24 * 3600,
			false, &freeze) ||
			env_num("RPMEM_RECONNECT_MIN_MS", DEFAULT_RETRY_MIN_MS,
			3600 * 1000, false, &rmin) ||
			env_num("RPMEM_RECONNECT_MAX_MS", DEFAULT_RETRY_MAX_MS,
			3600 * 1000, false, &rmax) ||
			env_num("RPMEM_RESYNC_RATE", DEFAULT_RATE,
			UINT64_MAX >> 1, true, &rp->rate) ||
			env_num("RPMEM_CLOSE_TIMEOUT", DEFAULT_CLOSE_S,
			24 * 3600, false, &close_s))
		return -1;
	rp->freeze_ms = (int)freeze * 1000;
	rp->retry_min_ms = rmin ? (int)rmin : 1;
	rp->retry_max_ms = rmax < rmin ? (int)rmin : (int)rmax;
	rp->close_ms = (int)close_s * 1000;
	return 0;
}

/*
 * paths -- the record's and the live status's files; without a state
 * directory the handle still works, it only cannot open without its
 * replica, nor show in rpmem status
 */
static void
paths(RPMEMpool *rpp)
{
	struct repl *rp = rpp->repl;
	char dir[PATH_MAX];
	int r = rstate_dir(dir, sizeof(dir), true);
	if (r) {
		log_warn("no state directory (%s): '%s' on %s can open only "
			"with its replica", strerror(-r), rpp->desc,
			rpp->target.node);
		return;
	}
	if (rstate_record_path(dir, rpp->target_str, rpp->desc,
			rp->record_path, sizeof(rp->record_path)))
		rp->record_path[0] = '\0';
	unsigned seq = atomic_fetch_add(&Seq, 1);
	if (rstate_status_path(dir, getpid(), seq, rp->status_path,
			sizeof(rp->status_path)))
		rp->status_path[0] = '\0';
	rp->st.seq = seq;
}

/* repl_init -- the handle's policy, knobs, record and generations */
int
repl_init(RPMEMpool *rpp, enum proto_msg_type type)
{
	struct repl *rp = calloc(1, sizeof(*rp));
	if (!rp)
		return fail(ENOMEM, "!allocating pool handle");
	rpp->repl = rp;
	rp->stop_fd = -1;
	rp->refusal = GEN_SAME;
	atomic_fetch_add(&Live, 1);
	pthread_mutex_init(&rp->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&rp->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (knobs(rp))
		return -1;
	if (oos_init(&rp->oos, rpp->pool_size))
		return fail(ENOMEM, "!allocating the out-of-sync record of "
			"a %zu-byte pool", rpp->pool_size);
	rp->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (rp->stop_fd < 0)
		return fail(errno, "!making the handle's stop event");
	rp->ranges_known = true;
	if (Untracked || rpp->pool_size <= PROBE_SIZE) {
		/* a tool's or a probe's handle: the replica as it is */
		rp->policy = REPL_POLICY_FAIL;
		rp->tool = true;
		rp->readonly = Readonly || rpp->pool_size <= PROBE_SIZE;
		mgen_locate(rpp);
		return 0;
	}
	if (async_init(rpp))
		return -1;
	paths(rpp);
	/* a create starts the record afresh */
	if (rp->record_path[0] && type == PROTO_MSG_OPEN) {
		int r = rstate_record_read(rp->record_path, &rp->rec);
		if (r == 0)
			rp->recorded = true;
		else if (r != -ENOENT)
			log_warn("the record %s cannot be read (%s): the "
				"replica is compared whole", rp->record_path,
				strerror(-r));
		rp->record_bad = r && r != -ENOENT;
		if (r == 0 && rp->rec.pool_size != rpp->pool_size) {
			/* another use of the set than the recorded one */
			log_warn("'%s' on %s: opened with %zu bytes, its record "
				"says %llu: it is not this pool's, the replica "
				"is compared whole", rpp->desc, rpp->target.node,
				rpp->pool_size,
				(unsigned long long)rp->rec.pool_size);
			rp->record_bad = true;
		}
		if (rp->record_bad) {
			rstate_record_free(&rp->rec);
			memset(&rp->rec, 0, sizeof(rp->rec));
			rp->recorded = false;
		}
	}
	mgen_locate(rpp);
	struct rstate_status *st = &rp->st;
	st->pid = getpid();
	snprintf(st->target, sizeof(st->target), "%s", rpp->target_str);
	snprintf(st->pool_set, sizeof(st->pool_set), "%s", rpp->desc);
	snprintf(st->policy, sizeof(st->policy), "%s",
		Policy_names[rp->policy]);
	st->pool_size = rpp->pool_size;
	return 0;
}

/* repl_fini -- the worker stopped and joined, then what repl_init made */
void
repl_fini(RPMEMpool *rpp)
{
	struct repl *rp = rpp->repl;
	if (!rp)
		return;
	repl_worker_stop(rpp);
	async_fini(rpp);
	if (rp->stop_fd >= 0)
		close(rp->stop_fd);
	if (rp->reap)
		(void) ssh_close(rp->reap, 0, NULL, 0);
	oos_fini(&rp->oos);
	rstate_record_free(&rp->rec);
	free(rp->fence_cmd);
	free(rp->unfence_cmd);
	pthread_cond_destroy(&rp->cv);
	pthread_mutex_destroy(&rp->mu);
	free(rp);
	rpp->repl = NULL;
	atomic_fetch_sub(&Live, 1);
}

/* repl_status -- rewrite the live status */
void
repl_status(RPMEMpool *rpp)
{
	struct repl *rp = rpp->repl;
	if (!rp->status_path[0])
		return;
	struct rstate_status *st = &rp->st;
	st->state = repl_rstate(rpp, (enum rpmem_state)atomic_load(&rpp->state));
	st->out_of_sync = oos_bytes(&rp->oos);
	snprintf(st->mode, sizeof(st->mode), "%s", async_on(rpp) ? "async" :
		"sync");
	async_lag(rpp, &st->lag_bytes, &st->lag_ms);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	st->updated_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	rp->status_ms = clock_ms();
	int r = rstate_status_write(rp->status_path, st);
	if (r)
		log_warn("writing %s: %s", rp->status_path, strerror(-r));
}

/* repl_record -- write the record of the replica */
int
repl_record(RPMEMpool *rpp, bool in_sync, const char *why, bool ranges)
{
	struct repl *rp = rpp->repl;
	if (!rp->record_path[0])
		return -ENOENT;
	struct rstate_record *rec = &rp->rec;
	snprintf(rec->target, sizeof(rec->target), "%s", rpp->target_str);
	snprintf(rec->pool_set, sizeof(rec->pool_set), "%s", rpp->desc);
	rec->pool_size = rpp->pool_size;
	if (!in_sync && (rec->in_sync || !rp->recorded || !rec->since))
		rec->since = (int64_t)time(NULL);
	if (in_sync)
		rec->since = 0;
	rec->in_sync = in_sync;
	if (why)
		snprintf(rec->reason, sizeof(rec->reason), "%s", why);
	else if (in_sync)
		rec->reason[0] = '\0';
	free(rec->ranges);
	rec->ranges = NULL;
	rec->nranges = 0;
	rec->ranges_known = in_sync || (ranges && rp->ranges_known);
	rec->replica_id = rp->peer;
	rec->bitmap_gen = 0;
	if (rec->ranges_known && !in_sync) {
		/* the ranges start from the master's bitmap for the replica */
		struct gen m;
		const struct gen_peer *mp = NULL;
		if (mgen_where(rpp)[0] && mgen_get(rpp, &m) == 0)
			mp = gen_peer_find(&m, rp->peer);
		rec->bitmap_gen = mp ? mp->bitmap : 0;
		int r = oos_ranges(&rp->oos, &rec->ranges, &rec->nranges);
		if (r)
			rec->ranges_known = false;
	}
	int r = rstate_record_write(rp->record_path, rec);
	if (r) {
		log_err("writing the record of '%s' on %s (%s): %s",
			rpp->desc, rpp->target.node, rp->record_path,
			strerror(-r));
		return r;
	}
	rp->recorded = true;
	return 0;
}

/*
 * repl_load_ranges -- the record's out-of-sync ranges into the bitmap (or,
 * when they are not known, a hash comparison to come)
 */
void
repl_load_ranges(RPMEMpool *rpp)
{
	struct repl *rp = rpp->repl;
	rp->ranges_known = rp->rec.ranges_known;
	for (size_t i = 0; rp->ranges_known && i < rp->rec.nranges; i++)
		oos_mark(&rp->oos, rp->rec.ranges[i].off,
			rp->rec.ranges[i].len);
}

/* rpmem_record_in_sync -- the record of a replica the tool made equal */
int
rpmem_record_in_sync(const char *target, const char *pool_set)
{
	char dir[PATH_MAX], path[PATH_MAX];
	if (rstate_dir(dir, sizeof(dir), false) ||
			rstate_record_path(dir, target, pool_set, path,
			sizeof(path)))
		return 0;	/* no state directory: no record */
	struct rstate_record rec;
	memset(&rec, 0, sizeof(rec));
	int r = rstate_record_read(path, &rec);
	if (r == -ENOENT)
		return 0;
	if (r == 0 && !rec.in_sync) {
		rec.in_sync = true;
		rec.since = 0;
		rec.reason[0] = '\0';
		rec.ranges_known = true;
		free(rec.ranges);
		rec.ranges = NULL;
		rec.nranges = 0;
		r = rstate_record_write(path, &rec);
	}
	rstate_record_free(&rec);
	return r ? fail(-r, "!the record %s of '%s' on %s", path, pool_set,
		target) : 0;
}
