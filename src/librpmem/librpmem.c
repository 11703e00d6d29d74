/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * librpmem.c -- the library's set-up from the environment, and the public
 * calls on an open handle (data, attributes, close) and rpmem_remove;
 * sessions start and end in session.c, messages are kept in errmsg.c
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fab.h"
#include "log.h"
#include "obc.h"
#include "pool_hdr.h"
#include "range.h"
#include "rpmem.h"
#include "rpmem_tool.h"

#define DEFAULT_TIMEOUT_S 60
#define DEFAULT_PEER_TIMEOUT_MS 2000	/* RPMEM_PEER_TIMEOUT_MS */

struct rpmem_env Env;

/* env_uint -- a positive decimal from the environment, or `def` */
static unsigned long
env_uint(const char *name, unsigned long def, unsigned long max)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return def;
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *end || v == 0 || v > max || s[0] == '-') {
		log_warn("ignoring invalid %s=%s", name, s);
		return def;
	}
	return v;
}

/* rpmem_lib_init -- read the environment once, when loaded */
__attribute__((constructor)) static void
rpmem_lib_init(void)
{
	/* silent unless asked: the application owns stderr */
	enum log_level lvl = LOG_LVL_ERR;
	const char *s = getenv("RPMEM_LOG_LEVEL");
	if (s && *s && log_level_parse(s, &lvl) != 0) {
		unsigned long v = strtoul(s, NULL, 10);
		lvl = v >= LOG_LVL_MAX ? LOG_LVL_DEBUG : (enum log_level)v;
	}
	log_init("librpmem", s && *s ? LOG_SINK_STDERR : LOG_SINK_NONE, lvl);
	const char *file = getenv("RPMEM_LOG_FILE");
	if (file && *file) {
		/* a trailing '-' becomes the pid: one file per process */
		char path[4096];
		size_t n = strlen(file);
		if (file[n - 1] == '-')
			snprintf(path, sizeof(path), "%.*s%d", (int)(n - 1),
				file, (int)getpid());
		else
			snprintf(path, sizeof(path), "%s", file);
		(void) log_to_file(path);
	}

	Env.max_nlanes = (unsigned)env_uint("RPMEM_MAX_NLANES",
		UINT_MAX, UINT_MAX);
	Env.timeout_ms = (int)env_uint("RPMEM_TIMEOUT",
		DEFAULT_TIMEOUT_S, 24 * 3600) * 1000;
	/* "0": no heartbeat; below 4 beats of the shortest interval: 40 */
	const char *pt = getenv("RPMEM_PEER_TIMEOUT_MS");
	Env.peer_timeout_ms = pt && strcmp(pt, "0") == 0 ? 0 :
		(int)env_uint("RPMEM_PEER_TIMEOUT_MS", DEFAULT_PEER_TIMEOUT_MS,
		(unsigned long)PROTO_BEAT_MAX_MS * 4);
	if (Env.peer_timeout_ms && Env.peer_timeout_ms < 4 * PROTO_BEAT_MIN_MS)
		Env.peer_timeout_ms = 4 * PROTO_BEAT_MIN_MS;
	(void) ssh_cmd_init();
}

/* rpmem_lib_fini -- free what the constructor allocated */
__attribute__((destructor)) static void
rpmem_lib_fini(void)
{
	/* an exit without rpmem_close: a worker may still need them */
	if (repl_live())
		return;
	ssh_cmd_fini();
	log_close();
}

/* rpmem_create -- create a remote pool and connect to it */
API RPMEMpool *
rpmem_create(const char *target, const char *pool_set_name, void *pool_addr,
		size_t pool_size, unsigned *nlanes,
		const struct rpmem_pool_attr *create_attr)
{
	return rpp_start(PROTO_MSG_CREATE, target, pool_set_name, pool_addr,
		pool_size, nlanes, create_attr, NULL);
}

/* rpmem_open -- open an existing remote pool and connect to it */
API RPMEMpool *
rpmem_open(const char *target, const char *pool_set_name, void *pool_addr,
		size_t pool_size, unsigned *nlanes,
		struct rpmem_pool_attr *open_attr)
{
	return rpp_start(PROTO_MSG_OPEN, target, pool_set_name, pool_addr,
		pool_size, nlanes, NULL, open_attr);
}

/* check_ready -- -1 unless the handle has a session in sync */
static int
check_ready(RPMEMpool *rpp)
{
	if (!rpp)
		return fail(EINVAL, "invalid pool handle: NULL");
	int s = atomic_load(&rpp->state);
	if (s == RPMEM_ST_BROKEN)
		return fail(atomic_load(&rpp->error), "!connection to '%s' on "
			"%s is lost", rpp->desc, rpp->target.node);
	if (s != RPMEM_ST_READY)
		return fail(ENOTCONN, "replica '%s' on %s is not in sync "
			"(rpmem status)", rpp->desc, rpp->target.node);
	return 0;
}

/*
 * control_call -- one request over ssh in a ready session: a dead
 * channel is said in *lost (ETIMEDOUT or ECONNRESET), a refusal sets the
 * status's errno; `what` names the request in both
 */
int
control_call(RPMEMpool *rpp, const struct proto_req *req,
		struct proto_resp *resp, const char *what, int *lost)
{
	*lost = 0;
	int r = obc_call(rpp->ssh, req, resp, Env.timeout_ms);
	if (r) {
		*lost = r == -ETIMEDOUT ? ETIMEDOUT : ECONNRESET;
		return channel_fail(-*lost, what, ssh_last_error(rpp->ssh));
	}
	if (resp->status)
		return fail(proto_status_errno(resp->status), "%s ('%s' on "
			"%s) failed: %s", what, rpp->desc, rpp->target.node,
			proto_status_str(resp->status));
	return 0;
}

/*
 * tool_call -- control_call of the rpmem tool's calls on a ready
 * session; a dead channel breaks the handle
 */
static int
tool_call(RPMEMpool *rpp, const struct proto_req *req,
		struct proto_resp *resp, const char *what)
{
	int lost;
	int r = control_call(rpp, req, resp, what, &lost);
	if (lost) {
		char msg[ERRMSG_MAX];
		rpmem_errmsg_save(msg);
		repl_break(rpp, lost, what);
		rpmem_errmsg_restore(msg);
		errno = lost;
	}
	return r;
}

static unsigned lane_hold(RPMEMpool *rpp, unsigned lane);

/* rpmem_set_attr -- replace the attributes stored in the remote headers */
API int
rpmem_set_attr(RPMEMpool *rpp, const struct rpmem_pool_attr *attr)
{
	if (check_ready(rpp))
		return -1;
	struct proto_req req = { .type = PROTO_MSG_SET_ATTR };
	if (attr && !proto_attr_is_zero(attr)) {
		req.has_attr = true;
		req.attr = *attr;
	}
	struct proto_resp resp;
	/* lane 0 held: the session cannot be dropped under the call */
	unsigned i = lane_hold(rpp, 0);
	uint64_t session = rpp->session_no;
	int lost = 0;
	int r = check_ready(rpp);
	if (!r)
		r = control_call(rpp, &req, &resp, "setting attributes",
			&lost);
	pthread_mutex_unlock(&rpp->calls[i].mu);
	if (lost) {
		char msg[ERRMSG_MAX];
		rpmem_errmsg_save(msg);
		(void) repl_lost(rpp, lost, lost, "setting attributes", 0,
			session);
		rpmem_errmsg_restore(msg);
		errno = lost;
	}
	if (r)
		return -1;
	repl_attr(rpp, attr);
	return 0;
}

/*
 * rpmem_close -- end the session; the remote pool stays.  A replica not
 * in sync is given RPMEM_CLOSE_TIMEOUT to catch up, and what it still
 * lacks is recorded for the next open.
 */
API int
rpmem_close(RPMEMpool *rpp)
{
	if (!rpp)
		return fail(EINVAL, "invalid pool handle: NULL");
	uint32_t flags = repl_close(rpp);
	int ret = rpp_end(rpp, flags);
	int err = errno;
	repl_ended(rpp, ret == 0);
	rpp_free(rpp);
	errno = err;
	return ret;
}

/* check_data_args -- flags, lane, header and range rules of data calls */
static int
check_data_args(RPMEMpool *rpp, size_t off, size_t len, unsigned lane,
		unsigned flags, unsigned allowed, bool hdr_check)
{
	if (!rpp)
		return fail(EINVAL, "invalid pool handle: NULL");
	if (atomic_load(&rpp->state) == RPMEM_ST_BROKEN)
		return check_ready(rpp);
	if (flags & ~allowed)
		return fail(EINVAL, "invalid flags 0x%x", flags);
	if (lane >= rpp->nlanes)
		return fail(EINVAL, "invalid lane %u (pool has %u)", lane,
			rpp->nlanes);
	if (hdr_check && !rpp->no_headers && off < POOL_HDR_SIZE)
		return fail(EINVAL, "offset %zu is inside the %d-byte pool "
			"header", off, POOL_HDR_SIZE);
	if (!range_within(off, len, rpp->pool_size))
		return fail(EINVAL, "range offset %zu length %zu is outside "
			"the %zu-byte pool", off, len, rpp->pool_size);
	return 0;
}

/*
 * refused -- -1 with errno for a data call rpmemd refused (EINVAL, EIO):
 * the session goes on, the lane stays usable
 */
static int
refused(RPMEMpool *rpp, int r, const char *what, size_t off, size_t len,
		unsigned lane)
{
	return fail(r, "!%s of %zu bytes at offset %zu on lane %u refused by "
		"%s", what, len, off, lane, rpp->target.node);
}

/*
 * lane_hold -- lock the session lane that application lane `lane` maps
 * to (lane % the session's lanes; the lane itself without a session)
 * and return its index: a session is swapped only with every lane held
 */
static unsigned
lane_hold(RPMEMpool *rpp, unsigned lane)
{
	for (;;) {
		unsigned f = atomic_load(&rpp->fab_nlanes);
		unsigned i = f ? lane % f : lane;
		pthread_mutex_lock(&rpp->calls[i].mu);
		if (atomic_load(&rpp->fab_nlanes) == f)
			return i;
		pthread_mutex_unlock(&rpp->calls[i].mu);
	}
}

/* fabric_op -- one data call on session lane i; 0 or -errno */
static int
fabric_op(RPMEMpool *rpp, unsigned i, enum repl_op op, size_t off,
		size_t len, unsigned flags, void *buf)
{
	struct lane_calls *c = &rpp->calls[i];
	int r = 0, d;
	switch (op) {
	case REPL_FLUSH:
		r = fabric_flush(rpp->fab, i, off, len,
			flags & RPMEM_FLUSH_RELAXED, false);
		if (!r) {
			bool none = c->pend_end == c->pend_off;
			if (none || off < c->pend_off)
				c->pend_off = off;
			if (none || off + len > c->pend_end)
				c->pend_end = off + len;
		}
		return r;
	case REPL_PERSIST:
	case REPL_DEEP_PERSIST:
		r = fabric_flush(rpp->fab, i, off, len,
			flags & RPMEM_PERSIST_RELAXED, op == REPL_DEEP_PERSIST);
		/* fall through */
	case REPL_DRAIN:
		d = fabric_drain(rpp->fab, i);
		r = r ? r : d;
		if (!r)
			c->pend_off = c->pend_end = 0;
		return r;
	case REPL_READ:
		return fabric_read(rpp->fab, i, buf, off, len);
	}
	return -EINVAL;
}

/*
 * data_call -- a data call in whatever state the handle is: sent while
 * READY; recorded (reads served locally) while the replica is not in
 * sync (repl_away); a lost session goes where on-replica-loss says
 * (repl_lost), a congested async log pulls the handle ahead
 * (repl_pull_ahead), and the call is made again there
 */
static int
data_call(RPMEMpool *rpp, enum repl_op op, const char *what, unsigned lane,
		size_t off, size_t len, unsigned flags, void *buf)
{
	for (;;) {
		unsigned i = lane_hold(rpp, lane);
		int s = atomic_load(&rpp->state);
		if (s == RPMEM_ST_BROKEN) {
			pthread_mutex_unlock(&rpp->calls[i].mu);
			return check_ready(rpp);
		}
		if (s != RPMEM_ST_READY)
			return repl_away(rpp, i, op, off, len, buf);
		int r = async_on(rpp) ? async_op(rpp, i, op, off, len, buf) :
			fabric_op(rpp, i, op, off, len, flags, buf);
		int sticky = r ? fabric_error(rpp->fab) : 0;
		uint64_t session = rpp->session_no;
		pthread_mutex_unlock(&rpp->calls[i].mu);
		if (!r)
			return 0;
		if (r == -EAGAIN && !sticky) {	/* congested: made again */
			repl_pull_ahead(rpp);
			continue;
		}
		if (!sticky)
			return refused(rpp, -r, what, off, len, lane);
		if (repl_lost(rpp, -r, sticky, what, lane, session))
			return -1;
	}
}

/*
 * range_call -- a flush, persist or deep persist of a range: its
 * arguments checked (`allowed` the flags it takes), counted, and sent
 */
static int
range_call(RPMEMpool *rpp, enum repl_op op, const char *what, size_t off,
		size_t len, unsigned lane, unsigned flags, unsigned allowed)
{
	if (check_data_args(rpp, off, len, lane, flags, allowed, true))
		return -1;
	struct lane_calls *c = &rpp->calls[lane];
	if (op == REPL_FLUSH)
		c->flush++;
	else if (op == REPL_PERSIST)
		c->persist++;
	else
		c->deep++;
	c->bytes += len;
	if (len == 0)
		return 0;
	return data_call(rpp, op, what, lane, off, len, flags, NULL);
}

/* rpmem_flush -- start making a range durable on the remote side */
API int
rpmem_flush(RPMEMpool *rpp, size_t offset, size_t length, unsigned lane,
		unsigned flags)
{
	return range_call(rpp, REPL_FLUSH, "flush", offset, length, lane,
		flags, RPMEM_FLUSH_RELAXED);
}

/* rpmem_drain -- wait until everything flushed on a lane is durable */
API int
rpmem_drain(RPMEMpool *rpp, unsigned lane, unsigned flags)
{
	if (check_data_args(rpp, 0, 0, lane, flags, 0, false))
		return -1;
	rpp->calls[lane].drain++;
	return data_call(rpp, REPL_DRAIN, "drain", lane, 0, 0, 0, NULL);
}

/* rpmem_persist -- make a range durable on the remote side */
API int
rpmem_persist(RPMEMpool *rpp, size_t offset, size_t length, unsigned lane,
		unsigned flags)
{
	return range_call(rpp, REPL_PERSIST, "persist", offset, length, lane,
		flags, RPMEM_PERSIST_RELAXED);
}

/* rpmem_deep_persist -- persist and flush the remote platform's buffers */
API int
rpmem_deep_persist(RPMEMpool *rpp, size_t offset, size_t length,
		unsigned lane)
{
	return range_call(rpp, REPL_DEEP_PERSIST, "deep persist", offset,
		length, lane, 0, 0);
}

/*
 * rpmem_read -- copy remote bytes into buff; while the replica is not
 * in sync, the local bytes it will hold once resynced
 */
API int
rpmem_read(RPMEMpool *rpp, void *buff, size_t offset, size_t length,
		unsigned lane)
{
	if (check_data_args(rpp, offset, length, lane, 0, 0, false))
		return -1;
	if (!buff && length)
		return fail(EINVAL, "invalid buffer: NULL");
	rpp->calls[lane].read++;
	if (length == 0)
		return 0;
	return data_call(rpp, REPL_READ, "read", lane, offset, length, 0,
		buff);
}

/* rpmem_remove -- remove a remote pool through `rpmemd --remove` */
API int
rpmem_remove(const char *target, const char *pool_set, int flags)
{
	if (flags & ~(RPMEM_REMOVE_FORCE | RPMEM_REMOVE_POOL_SET))
		return fail(EINVAL, "invalid flags 0x%x", (unsigned)flags);
	if (check_names(target, pool_set))
		return -1;
	struct target t;
	if (target_parse(target, &t))
		return fail(EINVAL, "invalid target '%s'", target);

	char args[PROTO_DESC_MAX * 4 + 64] = "--remove ";
	if (ssh_shell_quote(args, sizeof(args), pool_set))
		return fail(EINVAL, "pool set name too long");
	if (flags & RPMEM_REMOVE_FORCE)
		strcat(args, " --force");
	if (flags & RPMEM_REMOVE_POOL_SET)
		strcat(args, " --pool-set");

	char msg[ERRMSG_MAX];
	int r = ssh_run(&t, args, Env.timeout_ms, "removing", pool_set, msg,
		sizeof(msg));
	return r ? fail(-r, "%s", msg) : 0;
}

/*
 * rpmem_outdate_remote -- rpmemd --outdate over ssh, as rpmem_remove
 * runs --remove (rpmem_tool.h): what a master's fence-peer handler runs
 */
int
rpmem_outdate_remote(const char *target, const char *pool_set,
		const char *master_host)
{
	if (!target)
		return fail(EINVAL, "invalid target: NULL");
	if (!pool_set || !*pool_set || strlen(pool_set) >= PROTO_DESC_MAX)
		return fail(EINVAL, "invalid pool set name: %s",
			pool_set ? pool_set : "NULL");
	if (!master_host || !*master_host ||
			strlen(master_host) >= PROTO_HOST_MAX)
		return fail(EINVAL, "invalid master host name: %s",
			master_host ? master_host : "NULL");
	struct target t;
	if (target_parse(target, &t))
		return fail(EINVAL, "invalid target '%s'", target);

	char args[PROTO_DESC_MAX * 4 + PROTO_HOST_MAX * 4 + 64] =
		"--outdate ";
	if (ssh_shell_quote(args, sizeof(args), pool_set))
		return fail(EINVAL, "pool set name too long");
	strcat(args, " --master ");
	if (ssh_shell_quote(args, sizeof(args), master_host))
		return fail(EINVAL, "master host name too long");
	char msg[ERRMSG_MAX];
	int r = ssh_run(&t, args, Env.timeout_ms, "marking outdated",
		pool_set, msg, sizeof(msg));
	return r ? fail(-r, "%s", msg) : 0;
}

/*
 * rpmem_outdate -- OUTDATE over the session's channel: mark (1) or
 * clear (0) the replica's outdated mark (rpmem_tool.h)
 */
int
rpmem_outdate(RPMEMpool *rpp, int mark, const char *master_host)
{
	if (check_ready(rpp))
		return -1;
	if (rpp->pmdk || rpp->resp.ext.minor < PROTO_MINOR_OUTDATE)
		return fail(ENOTSUP, "rpmemd on %s speaks protocol 0.%u, "
			"without OUTDATE (0.%u on)", rpp->target.node,
			rpp->pmdk ? PROTO_MINOR_PMDK : rpp->resp.ext.minor,
			PROTO_MINOR_OUTDATE);
	if (!master_host)
		master_host = "";
	if ((mark != 0 && mark != 1) || (mark && !*master_host) ||
			strlen(master_host) >= PROTO_HOST_MAX)
		return fail(EINVAL, "invalid outdate request: mark %d, "
			"master host '%s'", mark, master_host);
	struct proto_req req = {
		.type = PROTO_MSG_OUTDATE,
		.outdate_mark = (uint32_t)mark,
		.outdate_time = (int64_t)time(NULL),
	};
	memcpy(req.outdate_host, master_host, strlen(master_host));
	struct proto_resp resp;
	return tool_call(rpp, &req, &resp, mark ?
		"marking the replica outdated" :
		"clearing the replica's outdated mark");
}

/* rpmem_hash -- hashes of pool ranges computed by rpmemd (rpmem_tool.h) */
int
rpmem_hash(RPMEMpool *rpp, size_t off, size_t len, size_t chunk,
		uint64_t *hashes)
{
	if (check_ready(rpp))
		return -1;
	if (chunk == 0 || !range_within(off, len, rpp->pool_size))
		return fail(EINVAL, "invalid hash range offset %zu length %zu "
			"chunk %zu", off, len, chunk);
	static __thread struct proto_resp resp;
	while (len) {
		size_t n = len / chunk < PROTO_HASH_MAX ? len :
			chunk * PROTO_HASH_MAX;
		struct proto_req req = {
			.type = PROTO_MSG_HASH,
			.hash_off = off, .hash_len = n, .hash_chunk = chunk,
		};
		if (tool_call(rpp, &req, &resp, "hashing"))
			return -1;
		if (resp.nhashes != proto_hash_count(n, chunk))
			return fail(EPROTO, "rpmemd sent %u hashes for %zu "
				"bytes", resp.nhashes, n);
		memcpy(hashes, resp.hashes, resp.nhashes * sizeof(*hashes));
		hashes += resp.nhashes;
		off += n;
		len -= n;
	}
	return 0;
}

/* rpmem_daemon_cpu -- rpmemd's CPU time so far (rpmem_tool.h) */
int
rpmem_daemon_cpu(RPMEMpool *rpp, double *user_s, double *sys_s)
{
	if (check_ready(rpp))
		return -1;
	if (rpp->pmdk)
		return fail(ENOTSUP, "PMDK's rpmemd on %s reports no CPU time",
			rpp->target.node);
	struct proto_req req = { .type = PROTO_MSG_STAT };
	struct proto_resp resp;
	if (tool_call(rpp, &req, &resp, "asking rpmemd's CPU time"))
		return -1;
	*user_s = (double)resp.cpu_user_us / 1e6;
	*sys_s = (double)resp.cpu_sys_us / 1e6;
	return 0;
}

/* rpmem_lane_security -- the session's lane-security policy and cipher */
void
rpmem_lane_security(RPMEMpool *rpp, const char **policy, const char **cipher)
{
	*policy = lanesec_policy_name(rpp->resp.ext.security);
	*cipher = lanesec_cipher_name(rpp->resp.ext.cipher);
}

/* rpmem_daemon_version -- what rpmemd said it is */
void
rpmem_daemon_version(RPMEMpool *rpp, char *buf, size_t len)
{
	if (rpp->pmdk) {
		snprintf(buf, len, "PMDK 1.12 (protocol 0.1)");
		return;
	}
	uint32_t v = rpp->resp.ext.version;
	snprintf(buf, len, "%u.%u.%u", v >> 16, (v >> 8) & 0xff, v & 0xff);
}

/* rpmem_daemon_limits -- what rpmemd does not guarantee, or NULL */
const char *
rpmem_daemon_limits(RPMEMpool *rpp)
{
	return rpp->pmdk ? PMDK_PEER_LIMITS : NULL;
}

/* rpmem_tool_adopt -- the replica the tool made equal takes its generation */
int
rpmem_tool_adopt(RPMEMpool *rpp)
{
	if (check_ready(rpp))
		return -1;
	return repl_adopt(rpp);
}

/* rpmem_tool_gens -- the generations the session's start saw */
bool
rpmem_tool_gens(RPMEMpool *rpp, struct gen *m, struct gen *r,
		struct gen_decision *d)
{
	if (!rpp->has_gen)
		return false;
	*m = rpp->mgen;
	*r = rpp->rgen;
	gen_decide(m, r, false, d);
	return true;
}
