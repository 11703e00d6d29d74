/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * session.c -- one rpmemd session: the request state machine
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "after_resync.h"
#include "beat.h"
#include "fabric.h"
#include "hash.h"
#include "log.h"
#include "range.h"
#include "obc.h"
#include "session_int.h"

/* the first request, and the rest of any request once begun */
#define REQUEST_TIMEOUT_MS 30000
#define REQUEST_TIMEOUT_ENV "RPMEMD_REQUEST_TIMEOUT_MS"
#define ACCEPT_TIMEOUT_MS 10000	/* the client connects right away */

static const char *const state_names[] = {
	[SESSION_INIT] = "INIT",
	[SESSION_OPEN] = "OPEN",
	[SESSION_DONE] = "DONE",
};

/*
 * status_of -- the one place an errno becomes a wire status (pmdk-interop 2.7):
 * the status a PMDK client reads as the cause, so each errno goes to
 * the status naming that cause, not to FATAL
 */
static uint32_t
status_of(int err)
{
	switch (err) {
	case 0:
		return PROTO_SUCCESS;
	case EEXIST:
		return PROTO_ERR_EXISTS;
	case EACCES:
	case EPERM:
		return PROTO_ERR_NOACCESS;
	case ENOENT:
	case ENOTDIR:	/* a component of the path is a file */
	case ELOOP:	/* symlinks that lead nowhere */
		return PROTO_ERR_NOEXIST;
	case EBUSY:
		/* not EAGAIN (= EWOULDBLOCK): a thread not had is fatal */
		return PROTO_ERR_BUSY;
	case EBADF:	/* the descriptor as a string (db_desc_check) */
	case ENAMETOOLONG:
		return PROTO_ERR_BADNAME;
	case ERANGE:	/* check_lanes alone */
		return PROTO_ERR_BADNLANES;
	case EINVAL:
		return PROTO_ERR_POOL_CFG;
	case EFBIG:
		return PROTO_ERR_BADSIZE;
	case EPROTONOSUPPORT:
		return PROTO_ERR_BADPROTO;
	case EMEDIUMTYPE:
		return PROTO_ERR_PROVNOSUP;
	default:
		return PROTO_ERR_FATAL;
	}
}

/* daemon_version -- SRCVERSION "a.b.c" as a << 16 | b << 8 | c */
static uint32_t
daemon_version(void)
{
	unsigned a = 0, b = 0, c = 0;
	if (sscanf(SRCVERSION, "%u.%u.%u", &a, &b, &c) < 1)
		return 0;
	return (a & 0xffff) << 16 | (b & 0xff) << 8 | (c & 0xff);
}

/*
 * tell_cause -- the first error logged for this request, on stderr: a
 * client shows the last line there with the status (ours, and PMDK's
 * when the session ends); quoted peer strings keep it one line
 */
static void
tell_cause(void)
{
	char cause[LOG_QUOTE_MAX * 2];
	log_cause(cause, sizeof(cause));
	if (cause[0])
		fprintf(stderr, "rpmemd: %s\n", cause);
}

/* session_reply -- send a response of the type answering `type` */
int
session_reply(struct session *s, uint32_t type, int err, struct proto_resp *resp)
{
	if (err)
		tell_cause();
	struct proto_resp empty;
	if (!resp) {
		memset(&empty, 0, sizeof(empty));
		resp = &empty;
	}
	resp->type = proto_resp_type(type);
	resp->status = status_of(err);
	if ((type == PROTO_MSG_CREATE || type == PROTO_MSG_OPEN) &&
			s->minor >= PROTO_MINOR_EXT) {
		resp->has_ext = true;
		resp->ext.major = PROTO_MAJOR;
		resp->ext.minor = s->minor;
		resp->ext.version = daemon_version();
	}
	log_msg(resp->type == PROTO_MSG_HASH_RESP ||
		resp->type == PROTO_MSG_STAT_RESP ? LOG_LVL_INFO :
		LOG_LVL_NOTICE, "response %s: status %u (%s)",
		proto_msg_name(resp->type), resp->status,
		proto_status_str(resp->status));
	int r = obc_send(s->out, resp);
	if (r)
		log_err("sending %s failed: %s", proto_msg_name(resp->type),
			strerror(-r));
	return r;
}

/* handle_set_attr -- SET_ATTR */
static int
handle_set_attr(struct session *s, const struct proto_req *req)
{
	log_notice("request SET_ATTR");
	int r = db_pool_set_attr(s->pool, req->has_attr ? &req->attr : NULL);
	if (r)
		log_err("setting attributes failed: %s", strerror(-r));
	else
		s->pool->attr = req->attr;
	return session_reply(s, req->type, -r, NULL);
}

/*
 * handle_hash -- HASH: content hashes of a range of the pool the session
 * asked for (its size, not the whole pool set's), computed here
 */
static int
handle_hash(struct session *s, const struct proto_req *req)
{
	static struct proto_resp resp;
	memset(&resp, 0, sizeof(resp));
	log_info("request HASH: offset %llu length %llu chunk %llu",
		(unsigned long long)req->hash_off,
		(unsigned long long)req->hash_len,
		(unsigned long long)req->hash_chunk);
	if (!range_within(req->hash_off, req->hash_len, s->size)) {
		log_err("HASH range offset %llu length %llu outside the "
			"%llu-byte pool", (unsigned long long)req->hash_off,
			(unsigned long long)req->hash_len,
			(unsigned long long)s->size);
		return session_reply(s, req->type, EINVAL, NULL);
	}
	const char *base = (const char *)s->pool->addr + req->hash_off;
	resp.nhashes = (uint32_t)proto_hash_count(req->hash_len,
		req->hash_chunk);
	hash64_chunks(base, (size_t)req->hash_len, (size_t)req->hash_chunk,
		resp.hashes);
	return session_reply(s, req->type, 0, &resp);
}

/* handle_stat -- STAT: the CPU time this process has spent so far */
static int
handle_stat(struct session *s, const struct proto_req *req)
{
	struct rusage ru;
	struct proto_resp resp = { 0 };
	if (getrusage(RUSAGE_SELF, &ru))
		return session_reply(s, req->type, errno, NULL);
	resp.cpu_user_us = (uint64_t)ru.ru_utime.tv_sec * 1000000 +
		(uint64_t)ru.ru_utime.tv_usec;
	resp.cpu_sys_us = (uint64_t)ru.ru_stime.tv_sec * 1000000 +
		(uint64_t)ru.ru_stime.tv_usec;
	return session_reply(s, req->type, 0, &resp);
}

/*
 * handle_outdate -- OUTDATE: the master marks the replica this session
 * serves outdated (it goes on without it, scenarios D5, D6), or clears
 * the mark once the replica equals it again; db_outdate does the work
 */
static int
handle_outdate(struct session *s, const struct proto_req *req)
{
	struct db_outdate o = {
		.mark = req->outdate_mark != 0,
		.time = req->outdate_time,
		.host = req->outdate_host,
		.attr = s->pool->no_headers ? NULL : &s->pool->attr,
	};
	int r = db_outdate(s->db, s->desc, &o);
	return session_reply(s, req->type, -r, NULL);
}

/*
 * handle_gen -- GEN: HELLO (the replica decides with its master, and
 * ends the session when it refuses), ADOPT or ASYNC
 */
static int
handle_gen(struct session *s, const struct proto_req *req)
{
	static const char *const names[] = { "HELLO", "ADOPT", "ASYNC" };
	log_notice("request GEN: %s, flags 0x%x", names[req->gen_op],
		req->gen_flags);
	struct proto_resp resp;
	memset(&resp, 0, sizeof(resp));
	int r;
	if (req->gen_op == PROTO_GEN_HELLO && s->gen.hello)
		r = -EPROTO;
	else if (req->gen_op == PROTO_GEN_HELLO)
		r = session_gen_hello(&s->gen, s->pool, req, s->created &&
			(req->gen_flags & PROTO_GEN_FLAG_CREATED), &resp);
	else if (req->gen_op == PROTO_GEN_ASYNC)
		r = session_gen_async(&s->gen, s->pool, &resp);
	else
		r = session_gen_adopt(&s->gen, s->pool, req, &resp);
	/* it holds its master's generation: no longer outdated (D6) */
	if (!r && req->gen_op == PROTO_GEN_ADOPT) {
		struct db_outdate o = { .mark = false };
		r = db_outdate(s->db, s->desc, &o);
	}
	/* this node learns it at once (a fence it has outlived lifted) */
	if (!r && req->gen_op == PROTO_GEN_ADOPT && s->cfg->after_resync) {
		char *set;
		if (asprintf(&set, "%s/%s", s->cfg->poolset_dir, s->desc) < 0)
			log_err("after-resync handler: %s", strerror(ENOMEM));
		else {
			(void) after_resync(s->cfg->after_resync, set,
				&resp.gen, s->cfg->log_file);
			free(set);
		}
	}
	int sent = session_reply(s, req->type, -r, &resp);
	/* a refused replica takes nothing from this master */
	return sent ? sent : r == -EACCES ? -ECONNRESET : 0;
}

/* handle_beat -- BEAT: beat every interval from now on */
static int
handle_beat(struct session *s, const struct proto_req *req)
{
	log_notice("request BEAT: every %u ms", req->beat_ms);
	int r = beat_start(&s->beat, s->out, req->beat_ms);
	if (r)
		log_err("cannot start the heartbeat: %s", strerror(-r));
	return session_reply(s, req->type, -r, NULL);
}

/* handle_close -- CLOSE: close (and maybe remove) the pool, answer */
static int
handle_close(struct session *s, const struct proto_req *req)
{
	bool remove = (req->close_flags & PROTO_CLOSE_FLAG_REMOVE) &&
		s->pool->created;
	log_notice("request CLOSE: flags 0x%x%s", req->close_flags,
		remove ? " (removing the pool)" : "");
	beat_stop(&s->beat);
	fabric_fini(s->fab);
	s->fab = NULL;
	if (remove)
		(void) session_gen_drop(s->pool);
	else
		(void) session_gen_close(&s->gen, s->pool, req->close_flags &
			PROTO_CLOSE_FLAG_INSYNC);
	int r = db_pool_close(s->pool, remove);
	s->pool = NULL;
	if (r)
		log_err("closing the pool failed: %s", strerror(-r));
	s->state = SESSION_DONE;
	return session_reply(s, req->type, -r, NULL);
}

/* handle_pool -- CREATE or OPEN; the session ends when it fails */
static int
handle_pool(struct session *s, const struct proto_req *req)
{
	int r = session_handle_pool(s, req);
	if (r)
		s->state = SESSION_DONE;
	return r;
}

/* each request: the state it may arrive in, from which minor, its handler */
static const struct request {
	enum session_state state;
	uint16_t minor;
	int (*handle)(struct session *s, const struct proto_req *req);
} Requests[] = {
	[PROTO_MSG_CREATE] = { SESSION_INIT, 0, handle_pool },
	[PROTO_MSG_OPEN] = { SESSION_INIT, 0, handle_pool },
	[PROTO_MSG_SET_ATTR] = { SESSION_OPEN, 0, handle_set_attr },
	[PROTO_MSG_CLOSE] = { SESSION_OPEN, 0, handle_close },
	[PROTO_MSG_HASH] = { SESSION_OPEN, PROTO_MINOR_EXT, handle_hash },
	[PROTO_MSG_STAT] = { SESSION_OPEN, PROTO_MINOR_EXT, handle_stat },
	[PROTO_MSG_OUTDATE] = { SESSION_OPEN, PROTO_MINOR_OUTDATE,
		handle_outdate },
	[PROTO_MSG_GEN] = { SESSION_OPEN, PROTO_MINOR_GEN, handle_gen },
	[PROTO_MSG_BEAT] = { SESSION_OPEN, PROTO_MINOR_BEAT, handle_beat },
};

/* legal -- may a request of `type` arrive in the current state? */
static bool
legal(const struct session *s, uint32_t type)
{
	return type < sizeof(Requests) / sizeof(Requests[0]) &&
		Requests[type].handle && Requests[type].state == s->state &&
		s->minor >= Requests[type].minor;
}

/*
 * request_timeout -- REQUEST_TIMEOUT_MS, or the milliseconds in
 * RPMEMD_REQUEST_TIMEOUT_MS (tests that must not wait 30 s)
 */
static int
request_timeout(void)
{
	const char *env = getenv(REQUEST_TIMEOUT_ENV);
	if (!env)
		return REQUEST_TIMEOUT_MS;
	char *end;
	errno = 0;
	long ms = strtol(env, &end, 10);
	if (errno || end == env || *end || ms <= 0 || ms > INT_MAX) {
		log_warn("%s=%s is not a positive number of milliseconds: "
			"using %d", REQUEST_TIMEOUT_ENV, log_quote(env).s,
			REQUEST_TIMEOUT_MS);
		return REQUEST_TIMEOUT_MS;
	}
	return (int)ms;
}

/* session_run -- serve one session */
int
session_run(const struct config *cfg, struct db *db, int in, int out)
{
	struct session s = {
		.state = SESSION_INIT,
		.cfg = cfg,
		.pmdk = !cfg->protocol,
		.db = db,
		.in = in,
		.out = out,
		.timeout_ms = request_timeout(),
	};
	/* no wait of a session outlasts the request timeout */
	s.accept_ms = s.timeout_ms < ACCEPT_TIMEOUT_MS ? s.timeout_ms :
		ACCEPT_TIMEOUT_MS;
	int ret = 0;

	while (s.state != SESSION_DONE) {
		struct proto_req req;
		uint32_t type;
		log_cause_reset();
		/* the client asks right after the status word; then it idles */
		int r = obc_recv(in, fabric_fail_fd(s.fab), &req, &type,
			s.state == SESSION_INIT ? s.timeout_ms : -1,
			s.timeout_ms);
		if (r == -ECONNRESET) {
			/* an interrupted session is a failure (exit 1) */
			log_notice("out-of-band channel closed by the client "
				"without a CLOSE");
			ret = r;
			break;
		}
		if (r == -ECANCELED) {
			/* the client hears it on ssh's stderr */
			log_err("a lane failed: the session ends");
			fprintf(stderr, "rpmemd: %s\n",
				fabric_fail_reason(s.fab));
			ret = -EBADMSG;
			break;
		}
		if (r) {
			/* the decoder keeps the versions to name them (R19) */
			if (r == -EPROTONOSUPPORT)
				(void) session_check_version(&s, &req.common);
			/* FATAL with the cause, wherever the stream allows */
			if (type)
				(void) session_reply(&s, type, r == -EPROTONOSUPPORT ?
					EPROTONOSUPPORT : EPROTO, NULL);
			else
				tell_cause();
			ret = r;
			break;
		}
		if (!legal(&s, req.type)) {
			log_err("request %s is not allowed in state %s",
				proto_msg_name(req.type), state_names[s.state]);
			(void) session_reply(&s, req.type, EPROTO, NULL);
			ret = -EPROTO;
			break;
		}
		if (req.type != PROTO_MSG_CLOSE)
			s.fab = fabric_settle(s.fab, s.accept_ms);
		r = Requests[req.type].handle(&s, &req);
		if (r == -ECONNRESET) {
			ret = r;
			break;
		}
	}

	beat_stop(&s.beat);
	fabric_fini(s.fab);
	if (s.pool) {
		log_notice("closing the pool");
		(void) db_pool_close(s.pool, false);
	}
	return ret;
}
