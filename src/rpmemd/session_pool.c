/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * session_pool.c -- CREATE and OPEN: what a session agrees with its
 * client (protocol, provider, lane security, buffers, persist method)
 * before the pool's lanes are set up
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric.h"
#include "log.h"
#include "session_int.h"

/*
 * session_check_version -- protocol negotiation (scenario R19): ours from
 * 0.3 on, at the lower of the client's minor and ours (a 0.3 client
 * has no OUTDATE), or exactly PMDK's 0.1 from the PMDK client main.c
 * admitted
 */
int
session_check_version(struct session *s, const struct proto_common *c)
{
	if (s->pmdk) {
		if (c->major == PROTO_MAJOR && c->minor == PROTO_MINOR_PMDK) {
			s->minor = PROTO_MINOR_PMDK;
			return 0;
		}
		log_err("protocol %u.%u from a client started as PMDK's "
			"(no --protocol): only 0.1 is served that way",
			c->major, c->minor);
		return -EPROTONOSUPPORT;
	}
	if (c->major != PROTO_MAJOR) {
		log_err("protocol major version mismatch: client %u.%u, "
			"rpmemd %u.%u", c->major, c->minor, PROTO_MAJOR,
			PROTO_MINOR);
		return -EPROTONOSUPPORT;
	}
	if (c->minor < PROTO_MINOR_EXT) {
		log_err("protocol %u.%u is not supported (client %u.%u, "
			"rpmemd needs %u.%u: admitted lanes, lane security)",
			c->major, c->minor, c->major, c->minor, PROTO_MAJOR,
			PROTO_MINOR_EXT);
		return -EPROTONOSUPPORT;
	}
	s->minor = c->minor < PROTO_MINOR ? c->minor : PROTO_MINOR;
	return 0;
}

/* check_provider -- providers this daemon can serve (PMDK's: not tcp) */
static int
check_provider(const struct session *s, uint32_t provider)
{
	switch (provider) {
	case PROTO_PROV_TCP:
		if (s->pmdk) {
			log_err("provider tcp from a PMDK 0.1 client");
			return -EMEDIUMTYPE;
		}
		return 0;
	case PROTO_PROV_SOCKETS:
	case PROTO_PROV_VERBS:
		return 0;
	default:
		log_err("unsupported provider %u", provider);
		return -EMEDIUMTYPE;
	}
}

/*
 * ssh_server_addr -- the address the client reached us at: third field
 * of SSH_CONNECTION ("client port server port"); NULL (any) without it,
 * or when that field holds more than an address's characters
 */
static const char *
ssh_server_addr(void)
{
	static char addr[64];
	const char *conn = getenv("SSH_CONNECTION");
	if (!conn || sscanf(conn, "%*s %*s %63s", addr) != 1) {
		log_warn("SSH_CONNECTION not set: listening on any address");
		return NULL;
	}
	/* digits, hex, dots, colons and an IPv6 scope ("%eth0") */
	if (addr[strspn(addr, "0123456789abcdefghijklmnopqrstuvwxyz"
			"ABCDEFGHIJKLMNOPQRSTUVWXYZ.:%_-")] != '\0') {
		log_warn("SSH_CONNECTION=%s names no server address: "
			"listening on any address", log_quote(conn).s);
		return NULL;
	}
	return addr;
}

/*
 * buff_size -- the inline buffer we agree to: the client's, capped so
 * that the message buffers of all lanes (receive slots, and send
 * buffers when the lanes are sealed) stay within LANE_MEM_MAX
 * (scenario R10), sealed lanes' at LANE_SEALED_BUFF and a record header
 * (LANE_BUFF_WISH, fab.h), never below PMDK's 8 KiB
 */
static size_t
buff_size(uint64_t wanted, unsigned nlanes, bool sealed)
{
	size_t per_lane = LANE_SLOTS + (sealed ? LANE_SENDBUFS : 0);
	size_t cap = LANE_MEM_MAX / ((size_t)nlanes * per_lane);
	size_t most = sealed ? LANE_SEALED_BUFF + LANE_REC_ROOM :
		LANE_BUFF_MAX;
	cap = cap > most ? most : cap & ~(size_t)4095;
	if (wanted > cap)
		wanted = cap;
	return wanted < PROTO_DEF_BUFF_SIZE ? PROTO_DEF_BUFF_SIZE :
		(size_t)wanted;
}

/*
 * persist_method -- APM only where RMA writes reach persistence without
 * our help: RDMA hardware (verbs) into pmem.  Over tcp and sockets the
 * provider's own memcpy leaves data in CPU caches, so APM there would
 * claim durability the platform lacks (scenario R20).
 */
static uint32_t
persist_method(const struct session *s, const struct db_pool *p,
		uint32_t provider, bool sealed)
{
	uint32_t pm = PROTO_PM_GPSPM;
	if (s->cfg->persist_apm) {
		if (p->is_pmem && provider == PROTO_PROV_VERBS && !sealed)
			pm = PROTO_PM_APM;
		else
			log_notice("persist-apm requested, but %s: using GPSPM",
				sealed ? "the lanes are sealed (no RMA)" :
				p->is_pmem ? "the provider is not verbs" :
				"the pool is not on pmem");
	}
	log_notice("persist method: %s, persist flush: %s", proto_pm_name(pm),
		pm == PROTO_PM_APM ? "none" :
		p->is_pmem ? "pmem_persist" : "pmem_msync");
	return pm;
}

/*
 * lane_security -- the session's policy: the stronger of the client's
 * and rpmemd's minimums (scenario S8), its cipher and keys; the
 * daemon's half of the key material goes into the answer.  -EPROTO when
 * the client asks for a policy unknown here.
 */
static int
lane_security(const struct session *s, const struct proto_req *req,
		struct lanesec_keys *keys, struct proto_ext *ext)
{
	uint32_t provider = req->common.provider;
	int dmin = s->cfg->lane_security == CONFIG_LANE_SECURITY_DEFAULT ?
		(int)lanesec_policy_default(provider) : s->cfg->lane_security;
	unsigned cmin = req->ext.security;
	if (cmin >= LANESEC_POLICY_MAX) {
		log_err("the client asks for lane security %u, unknown here; "
			"rpmemd has lane-security %s", cmin,
			lanesec_policy_name((unsigned)dmin));
		return -EPROTO;
	}
	enum lanesec_policy policy = cmin > (unsigned)dmin ?
		(enum lanesec_policy)cmin : (enum lanesec_policy)dmin;
	enum lanesec_cipher cipher = policy == LANESEC_NONE ?
		LANESEC_CIPHER_NONE : lanesec_cipher_choose(req->ext.cipher);
	int r = lanesec_random(ext->random, sizeof(ext->random));
	if (!r)
		r = lanesec_derive(keys, policy, cipher, req->ext.random,
			ext->random);
	if (r) {
		log_err("deriving the session's lane keys: %s", strerror(-r));
		return r;
	}
	ext->security = (uint16_t)policy;
	ext->cipher = (uint16_t)cipher;
	log_notice("lane security: %s%s%s (client asks at least %s, "
		"rpmemd at least %s%s)", lanesec_policy_name(policy),
		cipher ? ", " : "", cipher ? lanesec_cipher_name(cipher) : "",
		lanesec_policy_name(cmin), lanesec_policy_name((unsigned)dmin),
		s->cfg->lane_security == CONFIG_LANE_SECURITY_DEFAULT ?
		", its default for the provider" : "");
	if (policy != LANESEC_NONE && provider == PROTO_PROV_VERBS)
		log_notice("sealed lanes over verbs: every persist travels "
			"inline, none as an RDMA write");
	return 0;
}

/*
 * check_request -- what CREATE and OPEN ask, before any file is touched.
 * The order decides the status of a request wrong in several ways: the
 * protocol first (without it nothing else can be read), then the
 * descriptor (BADNAME: what the request is about), the provider
 * (PROVNOSUP), the lanes (BADNLANES), the size (BADSIZE).
 */
static int
check_request(struct session *s, const struct proto_req *req)
{
	int r = session_check_version(s, &req->common);
	if (!r)
		r = db_desc_check(req->desc);
	if (!r)
		r = check_provider(s, req->common.provider);
	if (r)
		return r;
	if (req->common.nlanes == 0) {
		log_err("invalid number of lanes: 0");
		return -ERANGE;
	}
	/* a pool the size of PMDK's smallest, which libpmemobj probes with */
	if (req->common.pool_size < RPMEM_MIN_POOL) {
		log_err("invalid pool size %llu: below the minimum %zu",
			(unsigned long long)req->common.pool_size,
			RPMEM_MIN_POOL);
		return -EFBIG;
	}
	return 0;
}

/* session_handle_pool -- CREATE or OPEN */
int
session_handle_pool(struct session *s, const struct proto_req *req)
{
	const char *what = proto_msg_name(req->type);
	struct proto_resp resp;
	memset(&resp, 0, sizeof(resp));

	log_notice("request %s: desc %s size %llu nlanes %u provider %s "
		"buff_size %llu", what, log_quote(req->desc).s,
		(unsigned long long)req->common.pool_size, req->common.nlanes,
		proto_provider_name(req->common.provider),
		(unsigned long long)req->common.buff_size);

	int r = check_request(s, req);
	if (r)
		return session_reply(s, req->type, -r, NULL) ?: r;

	if (req->type == PROTO_MSG_CREATE)
		r = db_pool_create(s->db, req->desc,
			req->has_attr ? &req->attr : NULL, &s->pool);
	else
		r = db_pool_open(s->db, req->desc, &s->pool);
	if (r) {
		log_err("%s of pool set %s in poolset-dir %s failed: %s", what,
			log_quote(req->desc).s, s->cfg->poolset_dir,
			strerror(-r));
		return session_reply(s, req->type, -r, NULL) ?: r;
	}

	struct db_pool *p = s->pool;
	s->created = req->type == PROTO_MSG_CREATE;
	if (s->created)
		r = session_gen_drop(p);
	else if (s->pmdk || s->minor < PROTO_MINOR_GEN)
		r = session_gen_legacy(p);
	if (r)
		goto err_close;
	if (p->size < RPMEM_MIN_POOL) {
		log_err("pool %s is %zu bytes, smaller than the minimum %zu",
			log_quote(req->desc).s, p->size, RPMEM_MIN_POOL);
		r = -EINVAL;
		goto err_close;
	}
	if (p->size < req->common.pool_size) {
		log_err("pool %s is %zu bytes, %llu requested",
			log_quote(req->desc).s, p->size,
			(unsigned long long)req->common.pool_size);
		r = -EFBIG;
		goto err_close;
	}
	s->size = req->common.pool_size;
	struct lanesec_keys keys = { .policy = LANESEC_NONE };
	r = s->pmdk ? 0 : lane_security(s, req, &keys, &resp.ext);
	if (r)
		goto err_close;
	bool sealed = keys.policy != LANESEC_NONE;

	unsigned nlanes = req->common.nlanes < s->cfg->max_lanes ?
		req->common.nlanes : s->cfg->max_lanes;
	struct fabric_attr fa = {
		.provider = req->common.provider,
		.node = ssh_server_addr(),
		.pool = {
			.base = p->addr,
			.size = (size_t)req->common.pool_size,
			.buff_size = buff_size(req->common.buff_size, nlanes,
				sealed),
			.is_pmem = p->is_pmem,
			.has_headers = !p->no_headers,
		},
		.nlanes = nlanes,
		.nthreads = s->cfg->nthreads,
		.keys = &keys,
		.pmdk = s->pmdk,
		.session_fd = s->in,
	};
	r = fabric_init(&fa, &s->fab, &resp.ibc);
	lanesec_wipe(&keys, sizeof(keys));
	if (r) {
		r = r == -EINVAL || r == -ENODATA ? -EMEDIUMTYPE : r;
		goto err_close;
	}
	/*
	 * The workers before the answer: a daemon that cannot run them
	 * must fail the create or open, not leave the client a pool whose
	 * lanes go nowhere (scenario R17).
	 */
	r = fabric_start(s->fab);
	if (r)
		goto err_close;
	resp.ibc.persist_method = persist_method(s, p, fa.provider, sealed);
	resp.ext.buff_size = fa.pool.buff_size;
	/* a client polls through the msync only if told (spin.h) */
	if (p->writes_back && s->minor >= PROTO_MINOR_FLAGS)
		resp.ext.flags = PROTO_EXT_WRITES_BACK;
	if (req->type == PROTO_MSG_OPEN)
		resp.attr = p->attr;

	r = session_reply(s, req->type, 0, &resp);
	if (r)
		goto err_close_quiet;
	s->state = SESSION_OPEN;
	memcpy(s->desc, req->desc, sizeof(s->desc));

	/*
	 * A client that fails to connect its lanes says so with CLOSE; the
	 * session stays open to hear it, without lanes.  Another request
	 * that comes before the last lane is in finishes admission first
	 * (fabric_settle).
	 */
	r = fabric_accept(s->fab, s->accept_ms, true);
	if (r && r != -EINPROGRESS) {
		fabric_fini(s->fab);
		s->fab = NULL;
	}
	return 0;

err_close:
	(void) session_reply(s, req->type, -r, NULL);
err_close_quiet:
	fabric_fini(s->fab);
	s->fab = NULL;
	(void) db_pool_close(s->pool, p->created);
	s->pool = NULL;
	return r;
}

