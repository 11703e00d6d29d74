/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * obc.c -- rpmemd side of the out-of-band channel (stdin/stdout over ssh)
 */
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "obc.h"

/*
 * read_full -- read exactly len bytes; timeout_ms < 0 waits forever;
 * -ECANCELED once wake_fd (when >= 0) is readable
 */
static int
read_full(int fd, int wake_fd, void *buf, size_t len, int timeout_ms)
{
	char *p = buf;
	while (len) {
		struct pollfd pfd[2] = {
			{ .fd = fd, .events = POLLIN },
			{ .fd = wake_fd, .events = POLLIN },
		};
		int r = poll(pfd, wake_fd >= 0 ? 2 : 1, timeout_ms);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -ETIMEDOUT;
		if (pfd[1].revents)
			return -ECANCELED;
		ssize_t n = read(fd, p, len);
		if (n == 0)
			return -ECONNRESET;
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* write_full -- write all of buf */
static int
write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return errno == EPIPE ? -ECONNRESET : -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * read_header -- the first byte within idle_ms, the rest of the header
 * within timeout_ms: a header cut short on a channel left open must not
 * hold the session forever (RELIABILITY R9)
 */
static int
read_header(int fd, int wake_fd, unsigned char *buf, int idle_ms,
		int timeout_ms)
{
	int r = read_full(fd, wake_fd, buf, 1, idle_ms);
	if (r == -ETIMEDOUT) {
		log_err("no request within %d ms", idle_ms);
		return r;
	}
	if (r)
		return r;
	r = read_full(fd, -1, buf + 1, PROTO_HDR_SIZE - 1, timeout_ms);
	if (r == -ETIMEDOUT)
		log_err("request header incomplete: the rest of its %d bytes "
			"did not arrive within %d ms", PROTO_HDR_SIZE,
			timeout_ms);
	else if (r)
		log_err("request header incomplete: %s", r == -ECONNRESET ?
			"the channel closed" : strerror(-r));
	return r == -ECONNRESET ? -EPROTO : r;
}

/* obc_recv -- read and decode one request */
int
obc_recv(int fd, int wake_fd, struct proto_req *req, uint32_t *type,
		int idle_ms, int timeout_ms)
{
	unsigned char buf[PROTO_REQ_MAX];
	*type = 0;

	int r = read_header(fd, wake_fd, buf, idle_ms, timeout_ms);
	if (r)
		return r;
	uint64_t size;
	r = proto_hdr_decode(buf, PROTO_HDR_SIZE, type, &size);
	if (r) {
		uint32_t t;
		uint64_t s64;
		memcpy(&t, buf, sizeof(t));
		memcpy(&s64, buf + 4, sizeof(s64));
		log_err("invalid request header: type %u size %llu (%s)",
			be32toh(t), (unsigned long long)be64toh(s64),
			r == -EMSGSIZE ? "over the limit of its type" :
			proto_resp_type(be32toh(t)) ? "wrong for its type" :
			"not a request type");
		/* a request named by its type is answered, with FATAL */
		*type = proto_resp_type(*type) ? *type : 0;
		return r;
	}
	/* size is within [PROTO_HDR_SIZE, PROTO_REQ_MAX]: checked above */
	r = read_full(fd, -1, buf + PROTO_HDR_SIZE,
		(size_t)size - PROTO_HDR_SIZE, timeout_ms);
	if (r) {
		log_err("request of type %u: body of %llu bytes %s", *type,
			(unsigned long long)size, r == -ETIMEDOUT ?
			"did not arrive in time" : "cut short");
		return r == -ETIMEDOUT ? r : -EPROTO;
	}
	r = proto_req_decode(buf, (size_t)size, req);
	if (r)
		log_err("invalid request of type %u (size %llu): %s", *type,
			(unsigned long long)size, strerror(-r));
	return r;
}

/* obc_send -- encode and write one response */
int
obc_send(int fd, const struct proto_resp *resp)
{
	unsigned char buf[PROTO_RESP_MAX];
	ssize_t len = proto_resp_encode(resp, buf, sizeof(buf));
	if (len < 0)
		return (int)len;
	return write_full(fd, buf, (size_t)len);
}

/* obc_send_status -- the start-up status word */
int
obc_send_status(int fd, uint32_t status)
{
	return write_full(fd, &status, sizeof(status));
}
