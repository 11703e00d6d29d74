/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * obc.c -- client side of the out-of-band exchange with rpmemd: requests
 * and their answers, and rpmemd's heartbeat (minor 6), whose beats are
 * skipped where an answer is awaited and read by the fabric's monitor
 * while no request is out
 */
#include <errno.h>
#include <poll.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "obc.h"

/* obc_initial_status -- read the start-up status word */
int
obc_initial_status(struct ssh *ssh, int timeout_ms, uint32_t *status)
{
	uint32_t word;
	int r = ssh_recv(ssh, &word, sizeof(word), timeout_ms);
	if (r)
		return r;
	*status = word;
	return 0;
}

/* is_beat -- is this response header one of rpmemd's beats? */
static bool
is_beat(const unsigned char *hdr)
{
	uint32_t status;
	uint64_t size;
	return proto_hdr_resp_decode(hdr, PROTO_HDR_RESP_SIZE,
		PROTO_MSG_BEAT_RESP, &status, &size) == 0 &&
		status == PROTO_SUCCESS;
}

/* silent -- say that rpmemd stopped beating */
static int
silent(struct ssh *ssh, long long ms)
{
	log_err("rpmemd on %s has been silent for %lld ms (it beats every "
		"quarter of RPMEM_PEER_TIMEOUT_MS=%d): stopped, hung or cut "
		"off, it is lost", ssh_host(ssh), ms, ssh_silence(ssh));
	return -ETIMEDOUT;
}

/*
 * next_header -- the next response header that is not a beat (unless a
 * beat is what is awaited), within timeout_ms; once rpmemd beats, no
 * wait outlasts the silence it is allowed
 */
static int
next_header(struct ssh *ssh, unsigned char *hdr, uint32_t expected,
		int timeout_ms)
{
	long long deadline = clock_ms() + timeout_ms;
	for (;;) {
		long long left = deadline - clock_ms();
		int wait = left > 0 ? (int)left : 0;
		int silence = ssh_silence(ssh);
		bool bounded = silence > 0 && silence < wait;
		int r = ssh_recv(ssh, hdr, PROTO_HDR_RESP_SIZE,
			bounded ? silence : wait);
		if (r == -ETIMEDOUT && bounded)
			return silent(ssh, silence);
		if (r)
			return r;
		if (expected == PROTO_MSG_BEAT_RESP || !is_beat(hdr))
			return 0;
	}
}

/* call -- obc_call with the channel's reader lock held */
static int
call(struct ssh *ssh, const struct proto_req *req, struct proto_resp *resp,
		int timeout_ms)
{
	unsigned char buf[PROTO_REQ_MAX > PROTO_RESP_MAX ?
		PROTO_REQ_MAX : PROTO_RESP_MAX];

	ssize_t len = proto_req_encode(req, buf, sizeof(buf));
	if (len < 0)
		return (int)len;
	int r = ssh_send(ssh, buf, (size_t)len, timeout_ms);
	if (r)
		return r;

	uint32_t expected = proto_resp_type(req->type);
	r = next_header(ssh, buf, expected, timeout_ms);
	if (r)
		return r;
	uint32_t status;
	uint64_t size;
	r = proto_hdr_resp_decode(buf, PROTO_HDR_RESP_SIZE, expected,
		&status, &size);
	if (r) {
		log_err("malformed response header (expected type %u)",
			expected);
		return r;
	}
	/* size was capped at PROTO_RESP_MAX by the decoder */
	r = ssh_recv(ssh, buf + PROTO_HDR_RESP_SIZE,
		(size_t)size - PROTO_HDR_RESP_SIZE, timeout_ms);
	if (r)
		return r;
	r = proto_resp_decode(buf, (size_t)size, expected, resp);
	if (r)
		log_err("malformed response of type %u, size %llu", expected,
			(unsigned long long)size);
	return r;
}

/* obc_call -- one request/response round trip */
int
obc_call(struct ssh *ssh, const struct proto_req *req,
		struct proto_resp *resp, int timeout_ms)
{
	ssh_io_lock(ssh);
	int r = call(ssh, req, resp, timeout_ms);
	ssh_io_unlock(ssh);
	return r;
}

/* obc_beat -- ask rpmemd to beat; silent silence_ms from then: lost */
int
obc_beat(struct ssh *ssh, unsigned interval_ms, int silence_ms,
		int timeout_ms)
{
	struct proto_req req = {
		.type = PROTO_MSG_BEAT,
		.beat_ms = interval_ms,
	};
	struct proto_resp resp;
	int r = obc_call(ssh, &req, &resp, timeout_ms);
	if (r)
		return r;
	if (resp.status)
		return -proto_status_errno(resp.status);
	ssh_heard_now(ssh);
	ssh_set_silence(ssh, silence_ms);
	return 0;
}

/*
 * obc_watch -- the beats that came while no request was out, read; a
 * rpmemd silent longer than allowed is lost
 */
int
obc_watch(void *arg)
{
	struct ssh *ssh = arg;
	int silence = ssh_silence(ssh);
	if (!silence)
		return 0;
	/* this thread did not run for a while: it cannot blame rpmemd */
	if (ssh_watch_gap(ssh) > silence / 2)
		ssh_heard_now(ssh);
	int r = 0;
	bool reader = ssh_io_trylock(ssh);
	if (reader) {
		struct pollfd pfd = { .fd = ssh_fd(ssh), .events = POLLIN };
		while (!r && poll(&pfd, 1, 0) == 1) {
			unsigned char hdr[PROTO_HDR_RESP_SIZE];
			r = ssh_recv(ssh, hdr, sizeof(hdr), silence);
			if (!r && !is_beat(hdr)) {
				log_err("rpmemd on %s sent a message nobody "
					"asked for", ssh_host(ssh));
				r = -EPROTO;
			}
		}
		ssh_io_unlock(ssh);
	}
	if (r)
		return r;
	/* a call waiting on the lanes says ECONNRESET: the link is gone */
	long long quiet = clock_ms() - ssh_heard(ssh);
	if (quiet > silence) {
		(void) silent(ssh, quiet);
		return -ECONNRESET;
	}
	return reader ? 0 : 1;
}
