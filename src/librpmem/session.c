/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * session.c -- a session's start (ssh, rpmemd's status, the CREATE or
 * OPEN exchange, lane keys, lanes) and its end (lanes down, CLOSE, ssh)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fab.h"
#include "log.h"
#include "obc.h"
#include "pool_hdr.h"
#include "rpmem.h"
#include "rpmem_tool.h"
#include "view.h"

/* check_names -- a target and a pool set name as the API takes them */
int
check_names(const char *target, const char *desc)
{
	if (!target)
		return fail(EINVAL, "invalid target: NULL");
	if (!desc || !*desc)
		return fail(EINVAL, "invalid pool set name: %s",
			desc ? "empty" : "NULL");
	if (strlen(desc) >= PROTO_DESC_MAX)
		return fail(EINVAL, "pool set name longer than %d bytes",
			PROTO_DESC_MAX - 1);
	return 0;
}

/* check_pool_args -- the argument rules of rpmem_create/rpmem_open */
static int
check_pool_args(const char *target, const char *desc, void *addr,
		size_t size, unsigned *nlanes)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t page = pg > 0 ? (size_t)pg : 4096;

	if (check_names(target, desc))
		return -1;
	if (!addr)
		return fail(EINVAL, "invalid pool address: NULL");
	if ((uintptr_t)addr % page)
		return fail(EINVAL, "pool address %p not aligned to %zu",
			addr, page);
	if (size == 0 || size % page)
		return fail(EINVAL, "pool size %zu is not a non-zero "
			"multiple of %zu", size, page);
	if ((uintptr_t)addr + size < (uintptr_t)addr)
		return fail(EINVAL, "pool range %p + %zu wraps", addr, size);
	if (!nlanes)
		return fail(EINVAL, "invalid number of lanes: NULL");
	if (*nlanes == 0)
		return fail(EINVAL, "invalid number of lanes: 0");
	return 0;
}

/* what PMDK's rpmemd says of the option it does not know */
#define PMDK_DAEMON_SAYS "unrecognized option '--protocol'"
#define BROKEN_REAP_MS 1000	/* ssh of a broken session, then killed */
#define STR_(x) #x
#define STR(x) STR_(x)
#define PROTOCOL_ARG "--protocol " STR(PROTO_MAJOR) "." STR(PROTO_MINOR)

/*
 * ssh_end -- reap the ssh child of a session that failed before it was
 * ready, keeping its last stderr line (complete once ssh has exited) and
 * whether it was PMDK's rpmemd refusing --protocol (when `pmdk` is not
 * NULL); after a timeout the remote side is not waited for again
 */
static void
ssh_end(RPMEMpool *rpp, int r, char *last, size_t len, bool *pmdk)
{
	int err = errno;
	(void) ssh_reap(rpp->ssh, r == -ETIMEDOUT ? 1000 : Env.timeout_ms);
	if (pmdk)
		*pmdk = ssh_said(rpp->ssh, PMDK_DAEMON_SAYS);
	(void) ssh_close(rpp->ssh, 0, last, len);
	rpp->ssh = NULL;
	errno = err;
}

/* rpp_free -- release a handle whose channel is closed */
void
rpp_free(RPMEMpool *rpp)
{
	repl_fini(rpp);
	view_unmap(rpp->pool_addr, rpp->view_size);
	for (unsigned i = 0; rpp->calls && i < rpp->nlanes; i++)
		pthread_mutex_destroy(&rpp->calls[i].mu);
	free(rpp->calls);
	free(rpp);
}

/*
 * rpp_take_session -- move the session `src` started (rpp_connect) into
 * the handle `dst`: the caller holds every lane of dst
 */
void
rpp_take_session(RPMEMpool *dst, RPMEMpool *src)
{
	dst->ssh = src->ssh;
	dst->fab = src->fab;
	dst->provider = src->provider;
	dst->pmdk = src->pmdk;
	dst->resp = src->resp;
	dst->has_gen = src->has_gen;
	dst->mgen = src->mgen;
	dst->rgen = src->rgen;
	dst->fab_nlanes = src->fab_nlanes;
	dst->session_no++;
	src->ssh = NULL;
	src->fab = NULL;
}

/*
 * rpp_drop_session -- end a session whose replica is lost, without a
 * CLOSE: lanes closed, our half of the channel hung up; the ssh child is
 * handed back to be reaped where waiting is harmless
 */
struct ssh *
rpp_drop_session(RPMEMpool *rpp)
{
	if (rpp->fab) {
		fabric_close(rpp->fab);
		rpp->fab = NULL;
	}
	struct ssh *ssh = rpp->ssh;
	if (ssh)
		ssh_hangup(ssh);
	rpp->ssh = NULL;
	rpp->fab_nlanes = 0;
	return ssh;
}

/*
 * log_calls -- what the application asked of the session, for whoever
 * counts remote persists per operation (rpmem bench, RPMEM_LOG_LEVEL=info)
 */
static void
log_calls(const RPMEMpool *rpp)
{
	struct lane_calls t = { 0 };
	for (unsigned i = 0; i < rpp->nlanes; i++) {
		const struct lane_calls *c = &rpp->calls[i];
		t.persist += c->persist;
		t.deep += c->deep;
		t.flush += c->flush;
		t.drain += c->drain;
		t.read += c->read;
		t.bytes += c->bytes;
	}
	log_info(RPMEM_CALLS_LOG " '%s' on %s: persist %" PRIu64 ", deep "
		"persist %" PRIu64 ", flush %" PRIu64 ", drain %" PRIu64
		", read %" PRIu64 "; %" PRIu64 " bytes persisted or flushed",
		rpp->desc, rpp->target.node, t.persist, t.deep, t.flush,
		t.drain, t.read, t.bytes);
}

/* rpp_end -- lanes down, CLOSE exchange, reap ssh */
int
rpp_end(RPMEMpool *rpp, uint32_t flags)
{
	int ret = 0;
	if (rpp->nlanes)	/* it was ready */
		log_calls(rpp);
	if (!rpp->ssh)		/* no session (the replica is away) */
		return 0;
	if (rpp->fab) {
		int err = fabric_error(rpp->fab);
		if (err && rpp->repl)
			repl_break(rpp, err, "a lane failed before the close");
		fabric_close(rpp->fab);
		rpp->fab = NULL;
	}
	/* a session being set up is ended the same way as a ready one */
	if (atomic_load(&rpp->state) != RPMEM_ST_BROKEN) {
		struct proto_req req = {
			.type = PROTO_MSG_CLOSE,
			.close_flags = flags,
		};
		struct proto_resp resp;
		int r = obc_call(rpp->ssh, &req, &resp, Env.timeout_ms);
		if (r)
			ret = channel_fail(r, "closing remote pool",
				ssh_last_error(rpp->ssh));
		else if (resp.status)
			ret = fail(proto_status_errno(resp.status),
				"closing remote pool '%s': %s", rpp->desc,
				proto_status_str(resp.status));
	}
	bool broken = atomic_load(&rpp->state) == RPMEM_ST_BROKEN;
	int err = errno;
	char last[ERRMSG_MAX];
	/* a lost rpmemd (stopped, hung) is not waited for again */
	int status = ssh_close(rpp->ssh, broken ? BROKEN_REAP_MS :
		Env.timeout_ms, last, sizeof(last));
	rpp->ssh = NULL;
	errno = err;
	if (broken) {
		/* rpmemd's last words say why when it ended the session */
		err = atomic_load(&rpp->error);
		ret = fail(err, "remote pool '%s' was already broken (%s)%s%s",
			rpp->desc, strerror(err), *last ? ": " : "", last);
	}
	if (status != 0 && ret == 0)
		log_info("ssh exited with status %d after close", status);
	return ret;
}

/*
 * lane_wish -- what this side asks of lane security: at least
 * RPMEM_LANE_SECURITY (LANESEC_POLICY_MAX until the provider is known:
 * then lane_wish_provider puts its default in), cipher
 * RPMEM_LANE_CIPHER (default: the fastest here), and its half of the
 * session's key material.  Read at every create/open, before ssh.
 */
static int
lane_wish(struct proto_req_ext *ext)
{
	const char *s = getenv("RPMEM_LANE_SECURITY");
	enum lanesec_policy policy = LANESEC_POLICY_MAX;
	if (s && *s && lanesec_policy_parse(s, &policy))
		return fail(EINVAL, "invalid RPMEM_LANE_SECURITY=%s "
			"(encrypt, authenticate or none)", s);
	const char *c = getenv("RPMEM_LANE_CIPHER");
	enum lanesec_cipher cipher = lanesec_cpu_cipher();
	if (c && *c && lanesec_cipher_parse(c, &cipher))
		return fail(EINVAL, "invalid RPMEM_LANE_CIPHER=%s "
			"(aes-256-gcm or chacha20-poly1305)", c);
	ext->security = (uint16_t)policy;
	ext->cipher = (uint16_t)cipher;
	int r = lanesec_random(ext->random, sizeof(ext->random));
	if (r)
		return fail(-r, "!no random bytes for the session's keys");
	return 0;
}

/* lane_wish_provider -- the provider's default, where none was asked */
static void
lane_wish_provider(struct proto_req_ext *ext, uint32_t provider)
{
	if (ext->security == LANESEC_POLICY_MAX)
		ext->security = (uint16_t)lanesec_policy_default(provider);
}

/*
 * provider -- choose the provider (fabric_provider); this is libfabric's
 * first use in the process, which costs it a fraction of a second
 */
static int
provider(RPMEMpool *rpp, unsigned *max_lanes)
{
	int r = fabric_provider(rpp->target.node, &rpp->provider, max_lanes);
	if (r == -EINVAL)
		return fail(EINVAL, "unknown provider RPMEM_PROVIDER=%s",
			getenv("RPMEM_PROVIDER"));
	if (r == -ENOMEM)
		return fail(ENOMEM, "!choosing a fabric provider for %s",
			rpp->target.node);
	if (r == -ELIBACC)
		return fail(ELIBACC, "%s", fablib_error());
	char why[256];
	if (r && ssh_host_unknown(rpp->target.node, why, sizeof(why)))
		return fail(ENXIO, "host %s does not resolve: %s",
			rpp->target.node, why);
	if (r)
		return fail(ENOMEDIUM, "cannot find a fabric provider for %s",
			rpp->target.node);
	if (*max_lanes > Env.max_nlanes)
		*max_lanes = Env.max_nlanes;
	return 0;
}

/*
 * lane_keys -- accept rpmemd's lane security only when it is at least
 * what this side asked (scenario S8: never a silent downgrade), then
 * derive the session's keys
 */
static int
lane_keys(RPMEMpool *rpp, const char *what, const struct proto_req_ext *asked,
		struct lanesec_keys *keys)
{
	const struct proto_ext *e = &rpp->resp.ext;
	const char *host = rpp->target.node;
	if (e->security >= LANESEC_POLICY_MAX)
		return fail(EPROTO, "%s: rpmemd on %s chose lane security %u, "
			"unknown here", what, host, e->security);
	if (e->security < asked->security)
		return fail(EPROTO, "%s: rpmemd on %s chose lane security %s, "
			"but this side asks at least %s (RPMEM_LANE_SECURITY)",
			what, host, lanesec_policy_name(e->security),
			lanesec_policy_name(asked->security));
	if ((e->security == LANESEC_NONE) != (e->cipher == 0) ||
			e->cipher >= LANESEC_CIPHER_MAX)
		return fail(EPROTO, "%s: rpmemd on %s chose cipher %u for lane "
			"security %s", what, host, e->cipher,
			lanesec_policy_name(e->security));
	int r = lanesec_derive(keys, (enum lanesec_policy)e->security,
		(enum lanesec_cipher)e->cipher, asked->random, e->random);
	if (r)
		return fail(-r, "!%s: deriving the session's lane keys", what);
	log_info("%s: lane security %s%s%s", what,
		lanesec_policy_name(e->security), e->cipher ? ", " : "",
		e->cipher ? lanesec_cipher_name(e->cipher) : "");
	return 0;
}

/*
 * daemon_spawn -- start ssh to the target: this project's rpmemd is told
 * our protocol (--protocol), PMDK's is started bare (`pmdk`); -4 only
 * for the sockets provider
 */
static int
daemon_spawn(RPMEMpool *rpp, bool pmdk)
{
	int r = ssh_open(&rpp->target, pmdk ? NULL : PROTOCOL_ARG,
		rpp->provider == PROTO_PROV_SOCKETS, &rpp->ssh);
	return r ? fail(-r, "!starting ssh to %s", rpp->target.node) : 0;
}

/*
 * daemon_wait -- rpmemd's start-up status; *is_pmdk tells that the
 * rpmemd there refused --protocol as PMDK's does, and then no message
 * is set (a `pmdk` start looks for nothing)
 */
static int
daemon_wait(RPMEMpool *rpp, bool pmdk, bool *is_pmdk)
{
	*is_pmdk = false;
	uint32_t status;
	int r = obc_initial_status(rpp->ssh, Env.timeout_ms, &status);
	if (!r && !status)
		return 0;
	char last[ERRMSG_MAX];
	ssh_end(rpp, r, last, sizeof(last), pmdk ? NULL : is_pmdk);
	if (*is_pmdk)
		return -1;
	if (r)
		return channel_fail(r, "starting rpmemd", last);
	return fail((int)status, "rpmemd failed to start: %s",
		*last ? last : strerror((int)status));
}

/*
 * pmdk_daemon -- the target runs PMDK 1.12's rpmemd (protocol 0.1).  It
 * is spoken to only when RPMEM_ALLOW_PMDK_DAEMON is non-zero, no lane
 * security is asked for by RPMEM_LANE_SECURITY, and over sockets or
 * verbs (PMDK has no tcp: tcp chosen by default gives way to sockets).
 * -1 with the message otherwise.
 */
static int
pmdk_daemon(RPMEMpool *rpp, const char *what, unsigned *max_lanes)
{
	const char *host = rpp->target.node;
	const char *allow = getenv("RPMEM_ALLOW_PMDK_DAEMON");
	if (!allow || atoi(allow) <= 0)
		return fail(EPROTONOSUPPORT, "%s: rpmemd on %s is PMDK 1.12's "
			"(protocol 0.1; it does not know --protocol), this "
			"librpmem speaks %d.%d: install this project's rpmemd "
			"on %s, or set RPMEM_ALLOW_PMDK_DAEMON=1 to use "
			"protocol 0.1 with it (sockets or verbs, no lane "
			"security)", what, host, PROTO_MAJOR, PROTO_MINOR,
			host);
	const char *ls = getenv("RPMEM_LANE_SECURITY");
	if (ls && *ls && strcmp(ls, lanesec_policy_name(LANESEC_NONE)))
		return fail(EPROTONOSUPPORT, "%s: rpmemd on %s is PMDK 1.12's "
			"(protocol 0.1), which has no lane security, and "
			"RPMEM_LANE_SECURITY=%s", what, host, ls);
	if (rpp->provider == PROTO_PROV_TCP) {
		const char *forced = getenv("RPMEM_PROVIDER");
		if (forced && *forced)
			return fail(EMEDIUMTYPE, "%s: rpmemd on %s is PMDK "
				"1.12's, which has no tcp provider "
				"(RPMEM_PROVIDER=%s): use sockets or verbs",
				what, host, forced);
		int r = fabric_provider_check(host, PROTO_PROV_SOCKETS,
			max_lanes);
		if (r == -ENOMEM)
			return fail(ENOMEM, "!%s: choosing a fabric provider "
				"for %s", what, host);
		if (r == -ELIBACC)
			return fail(ELIBACC, "%s", fablib_error());
		if (r)
			return fail(ENOMEDIUM, "%s: rpmemd on %s is PMDK "
				"1.12's, which has no tcp provider, and "
				"sockets cannot reach it", what, host);
		rpp->provider = PROTO_PROV_SOCKETS;
	}
	log_warn("%s: rpmemd on %s is PMDK 1.12's: speaking protocol 0.1 "
		"(RPMEM_ALLOW_PMDK_DAEMON) over %s: %s", what, host,
		proto_provider_name(rpp->provider), PMDK_PEER_LIMITS);
	return 0;
}

/*
 * ssh_end_quiet -- end a session that rpmemd ended or was not asked
 * anything in, keeping the message and errno of why
 */
static void
ssh_end_quiet(RPMEMpool *rpp)
{
	int err = errno;
	char last[ERRMSG_MAX];
	rpmem_errmsg_save(last);
	ssh_end(rpp, 0, NULL, 0, NULL);
	rpmem_errmsg_restore(last);
	errno = err;
}

/*
 * end_failed -- end a session whose start failed after CREATE or OPEN
 * (a created pool is removed again), keeping the message and errno
 */
static void
end_failed(RPMEMpool *rpp, enum proto_msg_type type)
{
	int err = errno;
	char msg[ERRMSG_MAX];
	rpmem_errmsg_save(msg);
	(void) rpp_end(rpp, type == PROTO_MSG_CREATE ?
		PROTO_CLOSE_FLAG_REMOVE : 0);
	rpmem_errmsg_restore(msg);
	errno = err;
}

/*
 * hello -- the generations' HELLO of a session whose lanes are up, before
 * the master writes a byte: rpmemd decides with the master's identifiers
 * and marks the replica, or refuses (and ends the session); 0, or -1
 * with the message
 */
static int
hello(RPMEMpool *rpp, const struct rpp_hello *h)
{
	struct proto_req req = {
		.type = PROTO_MSG_GEN,
		.gen_op = PROTO_GEN_HELLO,
		.gen_flags = h->flags,
		.gen = h->m,
	};
	struct proto_resp resp;
	int r = obc_call(rpp->ssh, &req, &resp, Env.timeout_ms);
	if (r)
		return channel_fail(r, "telling rpmemd the master's "
			"generations", ssh_last_error(rpp->ssh));
	rpp->has_gen = true;
	rpp->mgen = h->m;
	rpp->rgen = resp.gen;
	if (resp.status == PROTO_ERR_NOACCESS)
		return repl_refused(rpp);
	if (resp.status)
		return fail(proto_status_errno(resp.status), "the generations "
			"of '%s' on %s: %s", rpp->desc, rpp->target.node,
			proto_status_str(resp.status));
	return 0;
}

/*
 * rpp_connect -- start a session for the handle: ssh, rpmemd, the CREATE
 * or OPEN exchange, lane keys and lanes (up to *nlanes, the number
 * connected on return), the HELLO of the generations; 0, or -1 with the
 * message and no session left
 */
int
rpp_connect(RPMEMpool *rpp, enum proto_msg_type type, unsigned *nlanes,
		const struct rpmem_pool_attr *cattr, const struct rpp_hello *h)
{
	const char *what = type == PROTO_MSG_CREATE ? "create" : "open";
	const char *desc = rpp->desc;
	size_t size = rpp->pool_size;
	struct proto_req_ext wish;
	if (lane_wish(&wish))
		return -1;

	/*
	 * libfabric's first use takes a fraction of a second: it runs while
	 * ssh logs in, unless the ssh command depends on it (sockets: -4)
	 */
	unsigned max_lanes;
	bool early = fabric_probe_first();
	if (early && provider(rpp, &max_lanes))
		return -1;
	if (daemon_spawn(rpp, false))
		return -1;
	if (!early && provider(rpp, &max_lanes)) {
		ssh_end(rpp, -ETIMEDOUT, NULL, 0, NULL);
		return -1;
	}
	lane_wish_provider(&wish, rpp->provider);

	bool pmdk = false;
	if (daemon_wait(rpp, false, &pmdk)) {
		bool again;
		if (!pmdk || pmdk_daemon(rpp, what, &max_lanes) ||
				daemon_spawn(rpp, true) ||
				daemon_wait(rpp, true, &again))
			return -1;
	}
	rpp->pmdk = pmdk;
	/* an async replica is refused before PMDK's rpmemd touches it */
	if (pmdk && async_session(rpp, true, PROTO_MINOR_PMDK, 0)) {
		ssh_end_quiet(rpp);
		return -1;
	}

	/* PMDK's 0.1 request has no extension and 8 KiB buffers */
	struct proto_req req = {
		.type = type,
		.common = {
			.major = PROTO_MAJOR,
			.minor = pmdk ? PROTO_MINOR_PMDK : PROTO_MINOR,
			.pool_size = size,
			.nlanes = *nlanes + rpp->extra_lanes < max_lanes ?
				*nlanes + rpp->extra_lanes : max_lanes,
			.provider = rpp->provider,
			.buff_size = pmdk ? PROTO_DEF_BUFF_SIZE :
				LANE_BUFF_WISH,
		},
		.has_ext = !pmdk,
		.ext = wish,
	};
	memcpy(req.desc, rpp->desc, sizeof(req.desc));
	if (cattr && !proto_attr_is_zero(cattr)) {
		req.has_attr = true;
		req.attr = *cattr;
	}

	int r = obc_call(rpp->ssh, &req, &rpp->resp, Env.timeout_ms);
	if (r || rpp->resp.status) {
		/* rpmemd ends the session: its stderr is complete after it */
		char last[ERRMSG_MAX];
		ssh_end(rpp, r, last, sizeof(last), NULL);
		if (r == -EPROTO || r == -EPROTONOSUPPORT)
			fail(-r, "%s of '%s' on %s: malformed response", what,
				desc, rpp->target.node);
		else if (r)
			channel_fail(r, what, last);
		else
			fail(proto_status_errno(rpp->resp.status), "%s of '%s' "
				"on %s failed: %s%s%s", what, desc,
				rpp->target.node,
				proto_status_str(rpp->resp.status),
				*last ? ": " : "", last);
		return -1;
	}
	if (rpp->resp.has_ext == pmdk) {
		fail(EPROTO, "%s: rpmemd on %s answered %s the extension "
			"block of protocol %d.%d", what, rpp->target.node,
			pmdk ? "with" : "without", PROTO_MAJOR, PROTO_MINOR);
		goto err_close;
	}
	if (pmdk)
		rpp->resp.ext.buff_size = PROTO_DEF_BUFF_SIZE;

	rpp->created = type == PROTO_MSG_CREATE;
	if (type == PROTO_MSG_CREATE)
		rpp->no_headers = !req.has_attr;
	else
		rpp->no_headers = proto_attr_is_zero(&rpp->resp.attr);
	unsigned n = rpp->resp.ibc.nlanes;
	if (n == 0 || n > req.common.nlanes) {
		fail(EPROTO, "%s: rpmemd announced %u lanes for %u requested",
			what, n, req.common.nlanes);
		goto err_close;
	}
	if (async_session(rpp, pmdk, rpp->resp.ext.minor, n))
		goto err_close;
	if (rpp->resp.ext.buff_size < PROTO_DEF_BUFF_SIZE ||
			rpp->resp.ext.buff_size > req.common.buff_size) {
		fail(EPROTO, "%s: rpmemd chose a %llu-byte buffer for %llu "
			"requested", what,
			(unsigned long long)rpp->resp.ext.buff_size,
			(unsigned long long)req.common.buff_size);
		goto err_close;
	}

	/* rpmemd admits the lanes first, then answers BEAT */
	int beat_ms = !pmdk && rpp->resp.ext.minor >= PROTO_MINOR_BEAT ?
		Env.peer_timeout_ms / 4 : 0;
	struct lanesec_keys keys = { .policy = LANESEC_NONE };
	if (!pmdk && lane_keys(rpp, what, &wish, &keys))
		goto err_close;
	struct fabric_attr fa = {
		.provider = rpp->provider,
		.node = rpp->target.node,
		.ibc = &rpp->resp.ibc,
		.buff_size = (size_t)rpp->resp.ext.buff_size,
		.writes_back = rpp->resp.ext.flags & PROTO_EXT_WRITES_BACK,
		.keys = &keys,
		.pmdk = pmdk,
		.pool_addr = rpp->pool_addr,
		.pool_size = size,
		.nlanes = n,
		.timeout_ms = Env.timeout_ms,
		.ssh_fd = ssh_fd(rpp->ssh),
		.watch = beat_ms ? obc_watch : NULL,
		.watch_arg = rpp->ssh,
		.watch_ms = beat_ms,
		.on_break = repl_on_break,
		.break_arg = rpp->home,
		.epochs_lane = rpp->extra_lanes > 0,
	};
	r = fabric_connect(&fa, &rpp->fab);
	lanesec_wipe(&keys, sizeof(keys));
	lanesec_wipe(&wish, sizeof(wish));
	if (r) {
		fail(-r, "!%s: connecting %u lanes to %s port %u (%s)",
			what, n, rpp->target.node, rpp->resp.ibc.port,
			proto_provider_name(rpp->provider));
		goto err_close;
	}
	/* an async replica's sender takes the last lane */
	rpp->fab_nlanes = n - rpp->extra_lanes;
	/* rpmemd beats from here on: a stopped one is lost in seconds */
	if (beat_ms && (r = obc_beat(rpp->ssh, (unsigned)beat_ms,
			Env.peer_timeout_ms, Env.timeout_ms))) {
		fail(-r, "%s: asking rpmemd on %s for its heartbeat: %s", what,
			rpp->target.node, strerror(-r));
		goto err_close;
	}
	rpp->refused = GEN_SAME;
	if (!pmdk && rpp->resp.ext.minor >= PROTO_MINOR_GEN && h &&
			hello(rpp, h)) {
		if (rpp->refused == GEN_SAME)
			goto err_close;
		/* rpmemd refused and ended the session: nothing to close */
		fabric_close(rpp->fab);
		rpp->fab = NULL;
		rpp->fab_nlanes = 0;
		ssh_end_quiet(rpp);
		errno = EACCES;
		return -1;
	}
	*nlanes = n - rpp->extra_lanes;
	log_info("%s of '%s' on %s: %u lanes, %s, %s", what, desc,
		rpp->target.node, n, proto_provider_name(rpp->provider),
		proto_pm_name(rpp->resp.ibc.persist_method));
	return 0;

err_close:
	end_failed(rpp, type);
	return -1;
}

/* rpp_new -- a handle without a session */
static RPMEMpool *
rpp_new(const char *target, const char *desc, void *addr, size_t size)
{
	RPMEMpool *rpp = calloc(1, sizeof(*rpp));
	if (!rpp) {
		fail(ENOMEM, "!allocating pool handle");
		return NULL;
	}
	if (target_parse(target, &rpp->target)) {
		fail(EINVAL, "invalid target '%s'", target);
		free(rpp);
		return NULL;
	}
	snprintf(rpp->target_str, sizeof(rpp->target_str), "%s", target);
	snprintf(rpp->desc, sizeof(rpp->desc), "%s", desc);
	rpp->pool_addr = addr;
	rpp->pool_size = size;
	rpp->home = rpp;
	return rpp;
}

/* rpp_lanes -- the handle's per-lane state for n lanes */
static int
rpp_lanes(RPMEMpool *rpp, unsigned n)
{
	rpp->calls = aligned_alloc(64, n * sizeof(*rpp->calls));
	if (!rpp->calls)
		return fail(ENOMEM, "!allocating %u lanes", n);
	memset(rpp->calls, 0, n * sizeof(*rpp->calls));
	for (unsigned i = 0; i < n; i++)
		pthread_mutex_init(&rpp->calls[i].mu, NULL);
	rpp->nlanes = n;
	return 0;
}

/*
 * rpp_replica -- a copy of the handle to start a new session with: the
 * same target, pool set and memory, no session, no lanes
 */
RPMEMpool *
rpp_replica(const RPMEMpool *rpp)
{
	RPMEMpool *r = rpp_new(rpp->target_str, rpp->desc, rpp->pool_addr,
		rpp->pool_size);
	if (r) {
		r->extra_lanes = rpp->extra_lanes;
		r->home = rpp->home;
	}
	return r;
}

/* rpp_start -- the shared body of rpmem_create and rpmem_open */
RPMEMpool *
rpp_start(enum proto_msg_type type, const char *target, const char *desc,
		void *addr, size_t size, unsigned *nlanes,
		const struct rpmem_pool_attr *cattr,
		struct rpmem_pool_attr *oattr)
{
	if (check_pool_args(target, desc, addr, size, nlanes))
		return NULL;
	/* read through a view of its own: the application may unmap first */
	size_t vsize;
	void *view = view_map(addr, size, &vsize);
	RPMEMpool *rpp = rpp_new(target, desc, view, size);
	if (!rpp) {
		view_unmap(view, vsize);
		return NULL;
	}
	rpp->view_size = vsize;
	if (repl_init(rpp, type))
		goto err_free;

	unsigned n = *nlanes;
	/* a replica behind is caught up in the background, unless fenced */
	if (repl_open_behind(rpp, type)) {
		if (repl_open_away(rpp, true, &n, oattr) == 0)
			goto away;
		n = *nlanes;	/* the handler refused: try it */
	}
	struct rpp_hello h;
	if (repl_hello(rpp, type, &h))
		goto err_free;
	if (rpp_connect(rpp, type, &n, cattr, &h) == 0) {
		if (oattr && type == PROTO_MSG_OPEN)
			*oattr = rpp->resp.attr;
		if (rpp_lanes(rpp, n) || repl_connected(rpp, type, cattr))
			goto err_end;
		*nlanes = n;
		return rpp;
	}
	/* rpmem_create never degrades: there is no replica to miss yet */
	if (type == PROTO_MSG_CREATE ||
			repl_open_away(rpp, false, &n, oattr))
		goto err_free;
away:
	if (rpp_lanes(rpp, n) || repl_start_away(rpp))
		goto err_free;
	*nlanes = n;
	return rpp;

err_end:
	end_failed(rpp, type);
err_free:
	rpp_free(rpp);
	return NULL;
}
