/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * librpmem.c -- public API: argument checks, handle life cycle, errors
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fab.h"
#include "log.h"
#include "obc.h"
#include "pool_hdr.h"
#include "range.h"
#include "rpmem.h"
#include "rpmem_tool.h"

#define API __attribute__((visibility("default")))

#define ERRMSG_MAX 1024
#define DEFAULT_TIMEOUT_S 60

static __thread char Errmsg[ERRMSG_MAX];

static struct {
	unsigned max_nlanes;		/* RPMEM_MAX_NLANES */
	int timeout_ms;			/* RPMEM_TIMEOUT */
} Env;

/* vset_err -- format this thread's message; '!' appends strerror(err) */
static void
vset_err(int err, const char *fmt, va_list ap)
{
	bool with_errno = fmt[0] == '!';
	if (with_errno)
		fmt++;
	int n = vsnprintf(Errmsg, sizeof(Errmsg), fmt, ap);
	if (with_errno && n >= 0 && (size_t)n < sizeof(Errmsg)) {
		char ebuf[128];
		snprintf(Errmsg + n, sizeof(Errmsg) - (size_t)n, ": %s",
			strerror_r(err, ebuf, sizeof(ebuf)));
	}
	log_err("%s", Errmsg);
}

/* fail -- set the message and errno = err; returns -1 for the caller */
__attribute__((format(printf, 2, 3))) static int
fail(int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vset_err(err, fmt, ap);
	va_end(ap);
	errno = err;
	return -1;
}

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

	Env.max_nlanes = (unsigned)env_uint("RPMEM_MAX_NLANES", UINT_MAX,
		UINT_MAX);
	Env.timeout_ms = (int)env_uint("RPMEM_TIMEOUT", DEFAULT_TIMEOUT_S,
		24 * 3600) * 1000;
	(void) ssh_cmd_init();
}

/* rpmem_lib_fini -- free what the constructor allocated */
__attribute__((destructor)) static void
rpmem_lib_fini(void)
{
	ssh_cmd_fini();
	log_close();
}

/* check_pool_args -- the argument rules of rpmem_create/rpmem_open */
static int
check_pool_args(const char *target, const char *desc, void *addr,
		size_t size, unsigned *nlanes)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t page = pg > 0 ? (size_t)pg : 4096;

	if (!target)
		return fail(EINVAL, "invalid target: NULL");
	if (!desc || !*desc)
		return fail(EINVAL, "invalid pool set name: %s",
			desc ? "empty" : "NULL");
	if (strlen(desc) >= PROTO_DESC_MAX)
		return fail(EINVAL, "pool set name longer than %d bytes",
			PROTO_DESC_MAX - 1);
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

/* errno_of -- errno for a negative internal return */
static int
errno_of(int r)
{
	return r < 0 ? -r : r;
}

/* what PMDK's rpmemd says of the option it does not know */
#define PMDK_DAEMON_SAYS "unrecognized option '--protocol'"
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

/*
 * channel_fail -- message for a dead out-of-band channel: the remote
 * side's own last words when it left some.
 */
static int
channel_fail(int r, const char *what, const char *last)
{
	if (r == -ETIMEDOUT)
		return fail(ETIMEDOUT, "%s: no answer from the remote side "
			"within %d s", what, Env.timeout_ms / 1000);
	if (*last)
		return fail(errno_of(r), "%s: %s", what, last);
	return fail(errno_of(r), "!%s", what);
}

/* pool_free -- release a handle whose channel is closed */
static void
pool_free(RPMEMpool *rpp)
{
	free(rpp);
}

/* pool_break -- make `err` the handle's sticky error */
static int
pool_break(RPMEMpool *rpp, int err)
{
	int expected = 0;
	atomic_compare_exchange_strong(&rpp->error, &expected, err);
	atomic_store(&rpp->state, RPMEM_ST_BROKEN);
	return atomic_load(&rpp->error);
}

/* pool_session_end -- lanes down, CLOSE exchange, reap ssh */
static int
pool_session_end(RPMEMpool *rpp, uint32_t flags)
{
	int ret = 0;
	if (rpp->fab) {
		int err = fabric_error(rpp->fab);
		if (err)
			pool_break(rpp, err);
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
	int status = ssh_close(rpp->ssh, Env.timeout_ms, last, sizeof(last));
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
 * what this side asked (RELIABILITY S8: never a silent downgrade), then
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
		if (r)
			return fail(ENOMEDIUM, "%s: rpmemd on %s is PMDK "
				"1.12's, which has no tcp provider, and "
				"sockets cannot reach it", what, host);
		rpp->provider = PROTO_PROV_SOCKETS;
	}
	log_warn("%s: rpmemd on %s is PMDK 1.12's: speaking protocol 0.1 "
		"(RPMEM_ALLOW_PMDK_DAEMON) over %s, without lane security or "
		"lane tokens, strict persists in 8 KiB pieces", what, host,
		proto_provider_name(rpp->provider));
	return 0;
}

/* pool_start -- the shared body of rpmem_create and rpmem_open */
static RPMEMpool *
pool_start(enum proto_msg_type type, const char *target, const char *desc,
		void *addr, size_t size, unsigned *nlanes,
		const struct rpmem_pool_attr *cattr,
		struct rpmem_pool_attr *oattr)
{
	const char *what = type == PROTO_MSG_CREATE ? "create" : "open";
	if (check_pool_args(target, desc, addr, size, nlanes))
		return NULL;

	RPMEMpool *rpp = calloc(1, sizeof(*rpp));
	if (!rpp) {
		fail(ENOMEM, "!allocating pool handle");
		return NULL;
	}
	int r = target_parse(target, &rpp->target);
	if (r) {
		fail(EINVAL, "invalid target '%s'", target);
		goto err_free;
	}
	snprintf(rpp->desc, sizeof(rpp->desc), "%s", desc);
	rpp->pool_addr = addr;
	rpp->pool_size = size;
	struct proto_req_ext wish;
	if (lane_wish(&wish))
		goto err_free;

	/*
	 * libfabric's first use takes a fraction of a second: it runs while
	 * ssh logs in, unless the ssh command depends on it (sockets: -4)
	 */
	unsigned max_lanes;
	bool early = fabric_probe_first();
	if (early && provider(rpp, &max_lanes))
		goto err_free;
	if (daemon_spawn(rpp, false))
		goto err_free;
	if (!early && provider(rpp, &max_lanes)) {
		ssh_end(rpp, -ETIMEDOUT, NULL, 0, NULL);
		goto err_free;
	}
	lane_wish_provider(&wish, rpp->provider);

	bool pmdk = false;
	if (daemon_wait(rpp, false, &pmdk)) {
		bool again;
		if (!pmdk || pmdk_daemon(rpp, what, &max_lanes) ||
				daemon_spawn(rpp, true) ||
				daemon_wait(rpp, true, &again))
			goto err_free;
	}
	rpp->pmdk = pmdk;

	/* PMDK's 0.1 request has no extension and 8 KiB buffers */
	struct proto_req req = {
		.type = type,
		.common = {
			.major = PROTO_MAJOR,
			.minor = pmdk ? PROTO_MINOR_PMDK : PROTO_MINOR,
			.pool_size = size,
			.nlanes = *nlanes < max_lanes ? *nlanes : max_lanes,
			.provider = rpp->provider,
			.buff_size = pmdk ? PROTO_DEF_BUFF_SIZE :
				LANE_BUFF_DEFAULT,
		},
		.has_ext = !pmdk,
		.ext = wish,
	};
	memcpy(req.desc, rpp->desc, sizeof(req.desc));
	if (cattr && !proto_attr_is_zero(cattr)) {
		req.has_attr = true;
		req.attr = *cattr;
	}

	r = obc_call(rpp->ssh, &req, &rpp->resp, Env.timeout_ms);
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
		goto err_free;
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
	if (type == PROTO_MSG_CREATE) {
		rpp->no_headers = !req.has_attr;
	} else {
		rpp->no_headers = proto_attr_is_zero(&rpp->resp.attr);
		if (oattr)
			*oattr = rpp->resp.attr;
	}
	unsigned n = rpp->resp.ibc.nlanes;
	if (n == 0 || n > req.common.nlanes) {
		fail(EPROTO, "%s: rpmemd announced %u lanes for %u requested",
			what, n, req.common.nlanes);
		goto err_close;
	}
	if (rpp->resp.ext.buff_size < PROTO_DEF_BUFF_SIZE ||
			rpp->resp.ext.buff_size > req.common.buff_size) {
		fail(EPROTO, "%s: rpmemd chose a %llu-byte buffer for %llu "
			"requested", what,
			(unsigned long long)rpp->resp.ext.buff_size,
			(unsigned long long)req.common.buff_size);
		goto err_close;
	}

	struct lanesec_keys keys = { .policy = LANESEC_NONE };
	if (!pmdk && lane_keys(rpp, what, &wish, &keys))
		goto err_close;
	struct fabric_attr fa = {
		.provider = rpp->provider,
		.node = rpp->target.node,
		.ibc = &rpp->resp.ibc,
		.buff_size = (size_t)rpp->resp.ext.buff_size,
		.keys = &keys,
		.pmdk = pmdk,
		.pool_addr = addr,
		.pool_size = size,
		.nlanes = n,
		.timeout_ms = Env.timeout_ms,
		.ssh_fd = ssh_fd(rpp->ssh),
	};
	r = fabric_connect(&fa, &rpp->fab);
	lanesec_wipe(&keys, sizeof(keys));
	lanesec_wipe(&wish, sizeof(wish));
	if (r) {
		fail(-r, "!%s: connecting %u lanes to %s port %u (%s)", what, n,
			rpp->target.node, rpp->resp.ibc.port,
			proto_provider_name(rpp->provider));
		goto err_close;
	}
	rpp->nlanes = n;
	*nlanes = n;
	atomic_store(&rpp->state, RPMEM_ST_READY);
	log_info("%s of '%s' on %s: %u lanes, %s, %s", what, desc,
		rpp->target.node, n, proto_provider_name(rpp->provider),
		proto_pm_name(rpp->resp.ibc.persist_method));
	return rpp;

err_close: {
		int err = errno;
		char msg[ERRMSG_MAX];
		memcpy(msg, Errmsg, sizeof(msg));
		(void) pool_session_end(rpp, type == PROTO_MSG_CREATE ?
			PROTO_CLOSE_FLAG_REMOVE : 0);
		memcpy(Errmsg, msg, sizeof(msg));
		errno = err;
		pool_free(rpp);
		return NULL;
	}
err_free:
	pool_free(rpp);
	return NULL;
}

/* rpmem_create -- create a remote pool and connect to it */
API RPMEMpool *
rpmem_create(const char *target, const char *pool_set_name, void *pool_addr,
		size_t pool_size, unsigned *nlanes,
		const struct rpmem_pool_attr *create_attr)
{
	return pool_start(PROTO_MSG_CREATE, target, pool_set_name, pool_addr,
		pool_size, nlanes, create_attr, NULL);
}

/* rpmem_open -- open an existing remote pool and connect to it */
API RPMEMpool *
rpmem_open(const char *target, const char *pool_set_name, void *pool_addr,
		size_t pool_size, unsigned *nlanes,
		struct rpmem_pool_attr *open_attr)
{
	return pool_start(PROTO_MSG_OPEN, target, pool_set_name, pool_addr,
		pool_size, nlanes, NULL, open_attr);
}

/* check_ready -- -1 with the sticky errno when the handle is broken */
static int
check_ready(RPMEMpool *rpp)
{
	if (!rpp)
		return fail(EINVAL, "invalid pool handle: NULL");
	if (atomic_load(&rpp->state) != RPMEM_ST_READY) {
		return fail(atomic_load(&rpp->error), "!connection to '%s' on %s is lost",
			rpp->desc, rpp->target.node);
	}
	return 0;
}

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
	int r = obc_call(rpp->ssh, &req, &resp, Env.timeout_ms);
	if (r) {
		int err = pool_break(rpp, r == -ETIMEDOUT ? ETIMEDOUT :
			ECONNRESET);
		channel_fail(-err, "setting attributes",
			ssh_last_error(rpp->ssh));
		return -1;
	}
	if (resp.status)
		return fail(proto_status_errno(resp.status), "setting "
			"attributes of '%s' failed: %s", rpp->desc,
			proto_status_str(resp.status));
	return 0;
}

/* rpmem_close -- end the session; the remote pool stays */
API int
rpmem_close(RPMEMpool *rpp)
{
	if (!rpp)
		return fail(EINVAL, "invalid pool handle: NULL");
	int ret = pool_session_end(rpp, 0);
	int err = errno;
	pool_free(rpp);
	errno = err;
	return ret;
}

/* check_data_args -- flags, lane, header and range rules of data calls */
static int
check_data_args(RPMEMpool *rpp, size_t off, size_t len, unsigned lane,
		unsigned flags, unsigned allowed, bool hdr_check)
{
	if (check_ready(rpp))
		return -1;
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
 * data_result -- 0, or -1 with errno: a lost connection becomes the
 * handle's sticky error and hangs up the session so rpmemd stops applying
 * anything this client sent (RELIABILITY R3); a remote refusal of one
 * request (EINVAL, EIO) is reported and the lane stays usable.
 */
static int
data_result(RPMEMpool *rpp, int r, const char *what, size_t off, size_t len,
		unsigned lane)
{
	if (!r)
		return 0;
	int sticky = fabric_error(rpp->fab);
	if (sticky) {
		pool_break(rpp, sticky);
		ssh_hangup(rpp->ssh);
		if (r == ETIMEDOUT)
			return fail(r, "%s on lane %u: no answer from %s within "
				"%d s; connection dropped", what, lane,
				rpp->target.node, Env.timeout_ms / 1000);
		if (sticky == EBADMSG)
			return fail(sticky, "%s on lane %u: an answer from %s "
				"failed authentication (altered, forged, "
				"replayed, reordered or dropped on the way); "
				"connection dropped", what, lane,
				rpp->target.node);
		return fail(sticky, "!%s on lane %u: connection to %s lost",
			what, lane, rpp->target.node);
	}
	return fail(r, "!%s of %zu bytes at offset %zu on lane %u refused by "
		"%s", what, len, off, lane, rpp->target.node);
}

/* rpmem_flush -- start making a range durable on the remote side */
API int
rpmem_flush(RPMEMpool *rpp, size_t offset, size_t length, unsigned lane,
		unsigned flags)
{
	if (check_data_args(rpp, offset, length, lane, flags,
			RPMEM_FLUSH_RELAXED, true))
		return -1;
	if (length == 0)
		return 0;
	int r = fabric_flush(rpp->fab, lane, offset, length,
		flags & RPMEM_FLUSH_RELAXED, false);
	return data_result(rpp, r, "flush", offset, length, lane);
}

/* rpmem_drain -- wait until everything flushed on a lane is durable */
API int
rpmem_drain(RPMEMpool *rpp, unsigned lane, unsigned flags)
{
	if (check_data_args(rpp, 0, 0, lane, flags, 0, false))
		return -1;
	return data_result(rpp, fabric_drain(rpp->fab, lane), "drain", 0, 0,
		lane);
}

/* persist -- flush and drain on one lane */
static int
persist(RPMEMpool *rpp, size_t off, size_t len, unsigned lane,
		bool relaxed, bool deep)
{
	int r = fabric_flush(rpp->fab, lane, off, len, relaxed, deep);
	int d = fabric_drain(rpp->fab, lane);
	return r ? r : d;
}

/* rpmem_persist -- make a range durable on the remote side */
API int
rpmem_persist(RPMEMpool *rpp, size_t offset, size_t length, unsigned lane,
		unsigned flags)
{
	if (check_data_args(rpp, offset, length, lane, flags,
			RPMEM_PERSIST_RELAXED, true))
		return -1;
	if (length == 0)
		return 0;
	int r = persist(rpp, offset, length, lane,
		flags & RPMEM_PERSIST_RELAXED, false);
	return data_result(rpp, r, "persist", offset, length, lane);
}

/* rpmem_deep_persist -- persist and flush the remote platform's buffers */
API int
rpmem_deep_persist(RPMEMpool *rpp, size_t offset, size_t length,
		unsigned lane)
{
	if (check_data_args(rpp, offset, length, lane, 0, 0, true))
		return -1;
	if (length == 0)
		return 0;
	int r = persist(rpp, offset, length, lane, false, true);
	return data_result(rpp, r, "deep persist", offset, length, lane);
}

/* rpmem_read -- copy remote bytes into buff */
API int
rpmem_read(RPMEMpool *rpp, void *buff, size_t offset, size_t length,
		unsigned lane)
{
	if (check_data_args(rpp, offset, length, lane, 0, 0, false))
		return -1;
	if (!buff && length)
		return fail(EINVAL, "invalid buffer: NULL");
	if (length == 0)
		return 0;
	int r = fabric_read(rpp->fab, lane, buff, offset, length);
	return data_result(rpp, r, "read", offset, length, lane);
}

/* rpmem_remove -- remove a remote pool through `rpmemd --remove` */
API int
rpmem_remove(const char *target, const char *pool_set, int flags)
{
	if (flags & ~(RPMEM_REMOVE_FORCE | RPMEM_REMOVE_POOL_SET))
		return fail(EINVAL, "invalid flags 0x%x", (unsigned)flags);
	if (!target)
		return fail(EINVAL, "invalid target: NULL");
	if (!pool_set || !*pool_set)
		return fail(EINVAL, "invalid pool set name: %s",
			pool_set ? "empty" : "NULL");
	if (strlen(pool_set) >= PROTO_DESC_MAX)
		return fail(EINVAL, "pool set name longer than %d bytes",
			PROTO_DESC_MAX - 1);
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

	struct ssh *ssh;
	int r = ssh_open(&t, args, false, &ssh);
	if (r) {
		return fail(-r, "!starting ssh to %s", t.node);
	}
	r = ssh_wait_eof(ssh, Env.timeout_ms);
	char last[ERRMSG_MAX];
	int status = ssh_close(ssh, Env.timeout_ms, last, sizeof(last));
	if (r == -EPROTO)
		return fail(EPROTO, "removing '%s' on %s: unexpected output",
			pool_set, t.node);
	if (r)
		return fail(errno_of(r), "removing '%s' on %s: %s", pool_set,
			t.node, r == -ETIMEDOUT ? "timed out" : strerror(-r));
	if (status == 0)
		return 0;
	/* rpmemd exits with an errno; 126, 127 and 255 come from the shell
	 * and ssh themselves */
	int err = status > 0 && status < 126 ? status : ECONNRESET;
	return fail(err, "removing '%s' on %s failed: %s", pool_set, t.node,
		*last ? last : strerror(err));
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
		int r = obc_call(rpp->ssh, &req, &resp, Env.timeout_ms);
		if (r) {
			pool_break(rpp, r == -ETIMEDOUT ? ETIMEDOUT :
				ECONNRESET);
			return channel_fail(r, "hashing",
				ssh_last_error(rpp->ssh));
		}
		if (resp.status)
			return fail(proto_status_errno(resp.status), "hashing "
				"offset %zu length %zu on %s: %s", off, n,
				rpp->target.node,
				proto_status_str(resp.status));
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

/* rpmem_check_version -- NULL when this library provides the version */
API const char *
rpmem_check_version(unsigned major_required, unsigned minor_required)
{
	if (major_required != RPMEM_MAJOR_VERSION) {
		fail(EINVAL, "librpmem major version mismatch (need %u, "
			"found %u)", major_required, RPMEM_MAJOR_VERSION);
		return Errmsg;
	}
	if (minor_required > RPMEM_MINOR_VERSION) {
		fail(EINVAL, "librpmem minor version mismatch (need %u, "
			"found %u)", minor_required, RPMEM_MINOR_VERSION);
		return Errmsg;
	}
	return NULL;
}

/* rpmem_errormsg -- the calling thread's last error message */
API const char *
rpmem_errormsg(void)
{
	return Errmsg;
}
