/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fake_rpmemd_obc.c -- the fake rpmemd's out-of-band loop (protocol 0.1)
 *
 * Requests on stdin, responses on stdout, as PMDK 1.12's rpmemd handles
 * them (facts 3.4-3.6): CREATE or OPEN once per session (a second is
 * FATAL; a failed one is answered and ends the session), SET_ATTR,
 * CLOSE; a request that does not parse ends the session with a stray
 * status word where its response was due.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_rpmemd.h"

#define MSG_MAX ((uint64_t)1 << 20)	/* stands for a failed malloc */

/* one session: at most one pool, and its lanes */
struct session {
	const struct fr_obc_cfg *cfg;
	char *node;		/* the fabric listens here */
	struct fr_pool pool;
	char *desc;		/* of the open pool */
	int have_pool;
	int created;
	struct fr_fip *fip;
	int closing;
};

/* send_resp -- a response of `type`; ibc and attr where the type has them */
static int
send_resp(uint32_t type, uint32_t status, const struct w01_ibc *ibc,
		const struct w01_attr *attr)
{
	unsigned char buf[W01_OPEN_RESP_SIZE];
	size_t size = W01_HDR_RESP;

	memset(buf, 0, sizeof(buf));
	if (type == W01_CREATE_RESP)
		size = W01_CREATE_RESP_SIZE;
	else if (type == W01_OPEN_RESP)
		size = W01_OPEN_RESP_SIZE;
	w01_put_hdr_resp(buf, status, type, size);
	if (size > W01_HDR_RESP)
		w01_put_ibc(buf + W01_RESP_IBC, ibc);
	if (type == W01_OPEN_RESP)
		w01_put_attr(buf + W01_OPEN_RESP_ATTR, attr);
	fr_log(FR_NOTICE, "response type %u status %u (%s)", type, status,
		w01_status_str(status));
	if (w01_write_full(STDOUT_FILENO, buf, size) != 0) {
		fr_log(FR_ERR, "sending the response: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * check_req -- PMDK's checks of CREATE and OPEN (facts 3.5), in its
 * order: version, descriptor, provider.  `fixed` is the message size
 * without the descriptor.
 */
static int
check_req(const unsigned char *buf, uint64_t size, size_t fixed,
		struct w01_common *c)
{
	if (size < fixed) {
		fr_log(FR_ERR, "message of %llu bytes is shorter than %zu",
			(unsigned long long)size, fixed);
		return -1;
	}
	w01_get_common(buf + W01_REQ_COMMON, c);
	if (c->major != W01_MAJOR || c->minor != W01_MINOR) {
		fr_log(FR_ERR, "unsupported protocol version -- %u.%u",
			c->major, c->minor);
		return -1;
	}
	uint32_t dsize = w01_get32(buf, fixed - 4);
	if (size != fixed + (uint64_t)dsize) {
		fr_log(FR_ERR, "message and pool descriptor size mismatch "
			"-- is %llu should be %llu", (unsigned long long)size,
			(unsigned long long)(fixed + dsize));
		return -1;
	}
	if (dsize < 2 || buf[fixed + dsize - 1] != '\0' ||
			strlen((const char *)buf + fixed) + 1 != dsize) {
		fr_log(FR_ERR, "invalid pool descriptor (size %u)", dsize);
		return -1;
	}
	if (c->provider == 0 || c->provider >= W01_PROV_MAX) {
		fr_log(FR_ERR, "invalid provider -- %u", c->provider);
		return -1;
	}
	return 0;
}

/* drop_pool -- close the session's pool, removing it when asked */
static void
drop_pool(struct session *s, int remove)
{
	fr_pool_close(&s->pool);
	s->have_pool = 0;
	if (remove && s->desc != NULL) {
		int ret = fr_pool_remove(s->cfg->poolset_dir, s->desc, 0);
		fr_log(ret ? FR_ERR : FR_NOTICE, "removing '%s': %s", s->desc,
			ret ? strerror(-ret) : "done");
	}
	free(s->desc);
	s->desc = NULL;
}

/* lanes_up -- in-band part of CREATE and OPEN; status or W01_OK */
static uint32_t
lanes_up(struct session *s, const struct w01_common *c, struct w01_ibc *ibc)
{
	struct fr_fip_attr fa = {
		.addr = s->pool.addr,
		.size = c->pool_size,
		.nlanes = c->nlanes,
		.provider = c->provider,
		.buff_size = c->buff_size,
		.nthreads = s->cfg->nthreads,
	};
	uint32_t status;

	s->fip = fr_fip_init(s->node, &fa, ibc, &status);
	if (s->fip == NULL)
		return status;
	fr_log(FR_NOTICE, "port %u, rkey 0x%llx, raddr 0x%llx, nlanes %u, "
		"persist method GPSPM", ibc->port,
		(unsigned long long)ibc->rkey, (unsigned long long)ibc->raddr,
		ibc->nlanes);
	return W01_OK;
}

/*
 * handle_create_open -- one pool per session (a second request is FATAL);
 * a failure answers with its status and ends the session
 */
static int
handle_create_open(struct session *s, uint32_t type, const unsigned char *buf,
		const struct w01_common *c, const char *desc)
{
	int create = type == W01_CREATE;
	uint32_t rtype = create ? W01_CREATE_RESP : W01_OPEN_RESP;
	struct w01_ibc ibc;
	struct w01_attr attr;
	uint32_t status = W01_OK;
	int ret;

	memset(&ibc, 0, sizeof(ibc));
	memset(&attr, 0, sizeof(attr));
	if (create)
		w01_get_attr(buf + W01_CREATE_ATTR, &attr);
	fr_log(FR_NOTICE, "%s request: descriptor '%s', pool size %llu, "
		"nlanes %u, provider %s, buff_size %llu, attributes %s",
		create ? "create" : "open", desc,
		(unsigned long long)c->pool_size, c->nlanes,
		w01_provider_name(c->provider),
		(unsigned long long)c->buff_size,
		create ? (w01_attr_zero(&attr) ? "none" : "given") : "-");

	if (s->have_pool) {
		fr_log(FR_ERR, "a pool is already open in this session");
		status = W01_ERR_FATAL;
		goto fail;
	}
	if (create && c->pool_size < W01_MIN_POOL) {
		fr_log(FR_ERR, "pool size %llu is below %u",
			(unsigned long long)c->pool_size, W01_MIN_POOL);
		status = W01_ERR_POOL_CFG;
		goto fail;
	}
	ret = create ? fr_pool_create(s->cfg->poolset_dir, desc,
		c->pool_size, &attr, &s->pool) :
		fr_pool_open(s->cfg->poolset_dir, desc, &s->pool);
	if (ret) {
		fr_log(FR_ERR, "%s of pool '%s': %s", create ? "creation" :
			"opening", desc, strerror(-ret));
		status = fr_pool_status(-ret);
		goto fail;
	}
	s->have_pool = 1;
	s->created = create;
	s->desc = strdup(desc);
	attr = s->pool.attr;
	if (s->desc == NULL) {
		status = W01_ERR_FATAL;
	} else if (s->pool.size < W01_MIN_POOL) {
		status = W01_ERR_POOL_CFG;
	} else if (s->pool.size < c->pool_size) {
		fr_log(FR_ERR, "pool of %zu bytes, %llu asked for",
			s->pool.size, (unsigned long long)c->pool_size);
		status = W01_ERR_BADSIZE;
	} else {
		status = lanes_up(s, c, &ibc);
	}
	if (status != W01_OK) {
		drop_pool(s, create);
		memset(&ibc, 0, sizeof(ibc));
		memset(&attr, 0, sizeof(attr));
		goto fail;
	}

	if (send_resp(rtype, W01_OK, &ibc, &attr) != 0 ||
			fr_fip_start(s->fip) != 0) {
		fr_fip_fini(s->fip);
		s->fip = NULL;
		drop_pool(s, create);
		s->closing = 1;
		return -1;
	}
	return 0;

fail:
	s->closing = 1;
	return send_resp(rtype, status, &ibc, &attr);
}

/*
 * handle_close -- stop the lanes, close the pool (remove it when this
 * session created it and the client asks, or the lanes had failed),
 * answer, and end the session
 */
static int
handle_close(struct session *s, uint32_t flags)
{
	uint32_t status = W01_OK;

	fr_log(FR_NOTICE, "close request (flags 0x%x)", flags);
	s->closing = 1;
	if (!s->have_pool) {
		fr_log(FR_ERR, "close request without an open pool");
		return send_resp(W01_CLOSE_RESP, W01_ERR_FATAL, NULL, NULL);
	}
	if (fr_fip_stop(s->fip) != 0)
		status = W01_ERR_FATAL;
	fr_fip_fini(s->fip);
	s->fip = NULL;
	drop_pool(s, s->created &&
		(status != W01_OK || (flags & W01_CLOSE_REMOVE)));
	return send_resp(W01_CLOSE_RESP, status, NULL, NULL);
}

/* handle_set_attr -- new attributes for the open pool */
static int
handle_set_attr(struct session *s, const unsigned char *buf)
{
	struct w01_attr attr;

	fr_log(FR_NOTICE, "set attributes request");
	if (!s->have_pool)
		fr_die("set attributes request before a pool is open");
	w01_get_attr(buf + W01_SET_ATTR_ATTR, &attr);
	int ret = fr_pool_set_attr(&s->pool, &attr);
	if (ret)
		fr_log(FR_ERR, "storing attributes: %s", strerror(-ret));
	return send_resp(W01_SET_ATTR_RESP, ret ? fr_pool_status(-ret) :
		W01_OK, NULL, NULL);
}

/* body_min -- the least a request of `type` must carry; 0: no such type */
static size_t
body_min(uint32_t type)
{
	switch (type) {
	case W01_CREATE:
		return W01_CREATE_SIZE;
	case W01_OPEN:
		return W01_OPEN_SIZE;
	case W01_CLOSE:
		return W01_CLOSE_SIZE;
	case W01_SET_ATTR:
		return W01_SET_ATTR_SIZE;
	default:
		return 0;
	}
}

/*
 * process -- read one request and handle it: 0, 1 when stdin ended,
 * -1 when the message did not parse (PMDK's process loop error)
 */
static int
process(struct session *s)
{
	unsigned char hdr[W01_HDR];
	uint32_t type;
	uint64_t size;

	int ret = w01_read_full(STDIN_FILENO, hdr, sizeof(hdr), -1);
	if (ret == 1) {
		fr_log(FR_NOTICE, "out-of-band connection disconnected");
		return 1;
	}
	if (ret < 0) {
		fr_log(FR_ERR, "reading a message header: %s",
			strerror(errno));
		return -1;
	}
	w01_get_hdr(hdr, &type, &size);
	if (body_min(type) == 0 || size < W01_HDR) {
		fr_log(FR_ERR, "invalid message type %u or size %llu", type,
			(unsigned long long)size);
		return -1;
	}
	/* PMDK reads whatever it was told; this one stops short of UB */
	if (size > MSG_MAX || size < body_min(type)) {
		fr_log(FR_ERR, "message type %u of %llu bytes", type,
			(unsigned long long)size);
		return -1;
	}
	unsigned char *buf = malloc((size_t)size + 1);
	if (buf == NULL)
		return -1;
	memcpy(buf, hdr, sizeof(hdr));
	buf[size] = '\0';
	ret = w01_read_full(STDIN_FILENO, buf + W01_HDR,
		(size_t)size - W01_HDR, -1);
	if (ret != 0) {
		fr_log(FR_ERR, "reading a message body failed");
		free(buf);
		return -1;
	}

	struct w01_common c;
	switch (type) {
	case W01_CREATE:
	case W01_OPEN:
		ret = check_req(buf, size, body_min(type), &c);
		if (ret == 0)
			ret = handle_create_open(s, type, buf, &c,
				(const char *)buf + body_min(type));
		else
			fr_log(FR_ERR, "parsing message body failed");
		break;
	case W01_CLOSE:
		ret = handle_close(s, w01_get32h(buf, W01_CLOSE_FLAGS));
		break;
	default:
		ret = handle_set_attr(s, buf);
		break;
	}
	free(buf);
	return ret;
}

/*
 * cleanup -- the session ends without CLOSE: stop the lanes, close the
 * pool; remove it only if it was created here and the lanes had failed
 */
static void
cleanup(struct session *s)
{
	if (!s->have_pool)
		return;
	int ret = fr_fip_stop(s->fip);
	fr_fip_fini(s->fip);
	s->fip = NULL;
	drop_pool(s, s->created && ret != 0);
}

/* fabric_node -- the server address of SSH_CONNECTION, or loopback */
static char *
fabric_node(void)
{
	const char *conn = getenv("SSH_CONNECTION");
	char ip[256];

	/* "client-ip client-port server-ip server-port" */
	if (conn != NULL && sscanf(conn, "%*s %*s %255s", ip) == 1)
		return strdup(ip);
	return strdup("127.0.0.1");
}

/*
 * fr_obc_serve -- the session after the start-up status; returns the
 * exit status: 0 after a response that ends it, 1 when stdin ended
 * first, 255 when a request did not parse
 */
int
fr_obc_serve(const struct fr_obc_cfg *cfg)
{
	struct session s = {.cfg = cfg, .node = fabric_node()};

	fr_log(FR_NOTICE, "ssh connection: %s", getenv("SSH_CONNECTION") ?
		getenv("SSH_CONNECTION") : "(null)");
	fr_log(FR_NOTICE, "pool set directory: '%s', fabric on %s",
		cfg->poolset_dir, s.node ? s.node : "(null)");

	int ret = 0;
	while (ret == 0 && !s.closing)
		ret = process(&s);
	if (ret != 0) {
		/*
		 * PMDK's process loop failed: it cleans up and writes its
		 * errno as a stray status word where a response was due
		 */
		fr_log(FR_ERR, "out-of-band connection process failed");
		cleanup(&s);
		fr_send_status(ret == 1 ? ECONNRESET : EPROTO);
	} else {
		fr_log(FR_NOTICE, "session ends");
	}
	free(s.desc);
	free(s.node);
	return ret == 0 ? 0 : ret == 1 ? 1 : 255;
}
