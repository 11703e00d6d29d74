/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * obc.c -- rpmemd side of the out-of-band channel (stdin/stdout over ssh)
 */
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>

#include "clock.h"
#include "fdio.h"
#include "log.h"
#include "obc.h"

/* wake_ready -- the wake descriptor turned readable: stop waiting */
static int
wake_ready(void *arg)
{
	(void) arg;
	return -ECANCELED;
}

/*
 * read_full -- read exactly len bytes within timeout_ms (< 0: as long as
 * it takes); -ECANCELED once wake_fd (when >= 0) is readable
 */
static int
read_full(int fd, int wake_fd, void *buf, size_t len, int timeout_ms)
{
	struct fdio_watch w = { wake_fd, wake_ready, NULL };
	return fdio_recv(fd, buf, len, timeout_ms < 0 ? FDIO_NEVER :
		clock_ms() + timeout_ms, &w);
}

/*
 * read_header -- the first byte within idle_ms, the rest of the header
 * within timeout_ms: a header cut short on a channel left open must not
 * hold the session forever (scenario R9)
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

/* whole messages: a response and a beat never interleave */
static pthread_mutex_t Send_lock = PTHREAD_MUTEX_INITIALIZER;

/* obc_send -- encode and write one response */
int
obc_send(int fd, const struct proto_resp *resp)
{
	unsigned char buf[PROTO_RESP_MAX];
	ssize_t len = proto_resp_encode(resp, buf, sizeof(buf));
	if (len < 0)
		return (int)len;
	pthread_mutex_lock(&Send_lock);
	int r = fdio_send(fd, buf, (size_t)len, FDIO_NEVER, NULL);
	pthread_mutex_unlock(&Send_lock);
	return r;
}

/* obc_send_beat -- one beat, unless the channel is full */
int
obc_send_beat(int fd)
{
	struct proto_resp beat = { .type = PROTO_MSG_BEAT_RESP };
	unsigned char buf[PROTO_BEAT_RESP_SIZE];
	ssize_t len = proto_resp_encode(&beat, buf, sizeof(buf));
	if (len < 0)
		return (int)len;
	pthread_mutex_lock(&Send_lock);
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	int r = poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLOUT) ?
		fdio_send(fd, buf, (size_t)len, FDIO_NEVER, NULL) : -EAGAIN;
	pthread_mutex_unlock(&Send_lock);
	return r;
}

/* obc_send_status -- the start-up status word */
int
obc_send_status(int fd, uint32_t status)
{
	return fdio_send(fd, &status, sizeof(status), FDIO_NEVER, NULL);
}
