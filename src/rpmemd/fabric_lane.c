/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fabric_lane.c -- rpmemd's lanes at work: receive a message, open it
 * when the session seals its lanes, apply it, answer
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include "clock.h"
#include "fabric_int.h"
#include "log.h"
#include "range.h"

#define SEND_TIMEOUT_MS 30000	/* a client that stops reading answers */
#define INJECT_MAX 128		/* answers up to this size are injected */

/* fabric_post_recv -- hand a slot back to the lane for the next message */
int
fabric_post_recv(struct fabric *f, struct slot *s)
{
	/* unsealed messages land after the tag's room: headers line up */
	size_t off = f->secure ? 0 : LANE_HDR_OFF;
	for (int tries = 0; tries < INJECT_TRIES; tries++) {
		ssize_t r = fi_recv(s->lane->ep, s->buf + off,
			f->slot_size - off, f->desc, 0, &s->ctx);
		if (r != -FI_EAGAIN)
			return (int)r;
	}
	return -FI_EAGAIN;
}

/* fabric_fail -- stop applying anything and wake the session */
void
fabric_fail(struct fabric *f, const char *fmt, ...)
{
	char why[sizeof(f->fail_why)];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	log_err("%s", why);
	if (atomic_exchange(&f->stop, true))
		return;
	memcpy(f->fail_why, why, sizeof(why));
	uint64_t one = 1;
	if (write(f->fail_fd, &one, sizeof(one)) != (ssize_t)sizeof(one))
		log_err("!waking the session");
}

/* session_gone -- the client hung up on the out-of-band channel */
static bool
session_gone(const struct fabric *f)
{
	if (f->session_fd < 0)
		return false;
	struct pollfd pfd = { .fd = f->session_fd, .events = POLLRDHUP };
	return poll(&pfd, 1, 0) > 0 &&
		(pfd.revents & (POLLHUP | POLLRDHUP | POLLERR));
}

/* reap_sends -- free the send buffers whose sends completed */
static int
reap_sends(struct worker *w, int timeout_ms)
{
	struct fi_cq_msg_entry ent[CQ_BATCH];
	ssize_t n = fi_cq_sread(w->txcq, ent, CQ_BATCH, NULL, timeout_ms);
	if (n == -FI_EAGAIN || n == -FI_ECANCELED)
		return 0;
	if (n == -FI_EAVAIL) {
		struct fi_cq_err_entry e;
		memset(&e, 0, sizeof(e));
		(void) fi_cq_readerr(w->txcq, &e, 0);
		log_err("sending an answer failed: %s", fablib_strerror(e.err));
		return -EIO;
	}
	if (n < 0)
		return (int)n;
	for (ssize_t i = 0; i < n; i++) {
		struct sendbuf *b = ent[i].op_context;
		b->busy = false;
	}
	return 0;
}

/* sendbuf_get -- the lane's next send buffer, once its last send is done */
static struct sendbuf *
sendbuf_get(struct fabric *f, struct lane *l)
{
	struct sendbuf *b = &l->send[l->snext];
	long long deadline = clock_ms() + SEND_TIMEOUT_MS;
	while (b->busy) {
		if (atomic_load(&f->stop) || clock_ms() > deadline ||
				reap_sends(&f->workers[l->worker], 100))
			return NULL;
	}
	l->snext = (l->snext + 1) % LANE_SENDBUFS;
	return b;
}

/* post -- send `len` bytes: injected when small enough, else from `b` */
static int
post(struct fabric *f, struct lane *l, const char *buf, size_t len,
		struct sendbuf *b)
{
	ssize_t n;
	int tries = 0;
	if (!b) {
		do {
			n = fi_inject(l->ep, buf, len, 0);
		} while (n == -FI_EAGAIN && ++tries < INJECT_TRIES);
		return (int)n;
	}
	struct iovec iov = { .iov_base = b->buf, .iov_len = len };
	struct fi_msg msg = {
		.msg_iov = &iov, .desc = &f->desc, .iov_count = 1,
		.context = &b->ctx,
	};
	do {
		n = fi_sendmsg(l->ep, &msg, FI_COMPLETION);
	} while (n == -FI_EAGAIN && ++tries < INJECT_TRIES);
	if (!n)
		b->busy = true;
	return (int)n;
}

/*
 * answer -- the response to one message, with the bytes a READ asked
 * for; sealed (tag first) when the session seals its lanes
 */
static void
answer(struct fabric *f, struct lane *l, uint32_t status, uint32_t lane,
		const char *data, size_t dlen)
{
	struct lane_resp resp = { .status = status, .lane = lane };
	if (!f->secure) {
		int r = post(f, l, (const char *)&resp, sizeof(resp), NULL);
		if (r)
			log_err("lane %u: sending a response: %s", l->idx,
				fab_strerror(r));
		return;
	}
	size_t len = LANESEC_TAG_LEN + sizeof(resp) + dlen;
	char small[INJECT_MAX];
	struct sendbuf *b = NULL;
	char *buf = small;
	if (len > f->inject_size || len > sizeof(small)) {
		b = sendbuf_get(f, l);
		if (!b) {
			fabric_fail(f, "lane %u: the client takes no answers "
				"(%d s): session ended", l->idx,
				SEND_TIMEOUT_MS / 1000);
			return;
		}
		buf = b->buf;
	}
	char *body = buf + LANESEC_TAG_LEN;
	memcpy(body, &resp, sizeof(resp));
	/* only authenticated, the bytes go as they are: copy, then seal */
	if (f->keys.policy == LANESEC_AUTHENTICATE && dlen) {
		memcpy(body + sizeof(resp), data, dlen);
		data = body + sizeof(resp);
	}
	struct lanesec_piece p[2] = {
		{ body, body, sizeof(resp) },
		{ data, body + sizeof(resp), dlen },
	};
	int r = lanesec_seal(&l->tx, p, 2, (uint8_t *)buf);
	if (r) {
		fabric_fail(f, "lane %u: sealing an answer: %s", l->idx,
			strerror(-r));
		return;
	}
	r = post(f, l, buf, len, b);
	if (r)
		log_err("lane %u: sending a response: %s", l->idx,
			fab_strerror(r));
}

/*
 * read_range -- the bytes a READ asks for: anywhere in the pool, header
 * included, at most one buffer's worth.  0 or a positive errno.
 */
static int
read_range(const struct fabric *f, const struct lane_msg *msg, size_t len,
		const char **data, size_t *dlen)
{
	const struct apply_pool *p = &f->pool;
	if (len != sizeof(*msg)) {
		log_err("lane %u: READ carries %zu bytes", msg->lane,
			len - sizeof(*msg));
		return EPROTO;
	}
	if (msg->size > p->buff_size || msg->addr < p->raddr ||
			!range_within(msg->addr - p->raddr, msg->size,
			p->size)) {
		log_err("lane %u: READ addr 0x%llx size %llu outside the "
			"pool or over %zu bytes", msg->lane,
			(unsigned long long)msg->addr,
			(unsigned long long)msg->size, p->buff_size);
		return EINVAL;
	}
	*data = p->base + (msg->addr - p->raddr);
	*dlen = (size_t)msg->size;
	return 0;
}

/* PMDK 1.12's persist message flags (pmdk-interop 4.6) */
#define PMDK_MODE_MASK 0x3U
#define PMDK_MODE_WRITE 0U	/* persist what RMA wrote */
#define PMDK_MODE_DEEP 1U	/* the same, deep */
#define PMDK_MODE_SEND 2U	/* inline bytes: copy, persist */
#define PMDK_COMPLETION 0x4U	/* the client's own bookkeeping */

/*
 * pmdk_op -- our op for the flags of a PMDK 0.1 persist message, or
 * UINT32_MAX for flags PMDK never sends
 */
static uint32_t
pmdk_op(uint32_t flags)
{
	if (flags & ~(PMDK_MODE_MASK | PMDK_COMPLETION))
		return UINT32_MAX;
	switch (flags & PMDK_MODE_MASK) {
	case PMDK_MODE_WRITE:
		return LANE_OP_WRITTEN;
	case PMDK_MODE_DEEP:
		return LANE_OP_WRITTEN | LANE_F_DEEP;
	case PMDK_MODE_SEND:
		return LANE_OP_INLINE;
	default:
		return UINT32_MAX;
	}
}

/*
 * pmdk_apply -- a PMDK 0.1 client's message: its client ignores the
 * answer's content, so a message that cannot be applied ends the
 * session instead of being answered
 */
static int
pmdk_apply(struct fabric *f, struct lane *l, struct lane_msg *msg, size_t len)
{
	uint32_t op = len >= sizeof(*msg) ? pmdk_op(msg->op) : UINT32_MAX;
	if (op == UINT32_MAX) {
		fabric_fail(f, "lane %u: a PMDK client's message of %zu bytes "
			"with flags 0x%x: session ended", l->idx, len,
			len >= sizeof(*msg) ? msg->op : 0);
		return EPROTO;
	}
	msg->op = op;
	int status = apply_msg(&f->pool, msg, len, &l->pending);
	if (status)
		fabric_fail(f, "lane %u: a PMDK client's persist failed (%s); "
			"its client cannot be told in-band: session ended",
			l->idx, strerror(status));
	return status;
}

/*
 * handle_recv -- one message: verify it when sealed (nothing of a message
 * that fails reaches the pool: it ends the session), apply or read it,
 * recycle its slot, answer
 */
static void
handle_recv(struct fabric *f, struct slot *s, size_t len)
{
	struct lane *l = s->lane;
	struct lane_msg *msg = (void *)(s->buf + LANE_HDR_OFF);
	if (f->secure) {
		if (len < LANESEC_TAG_LEN + sizeof(*msg)) {
			fabric_fail(f, "lane %u: a %zu-byte message cannot be "
				"a sealed one: session ended", l->idx, len);
			return;
		}
		len -= LANESEC_TAG_LEN;
		struct lanesec_piece p = { msg, msg, len };
		if (lanesec_open(&l->rx, &p, 1, (const uint8_t *)s->buf)) {
			fabric_fail(f, "lane %u: message %llu failed "
				"authentication (altered, forged, replayed, "
				"reordered, or one before it dropped): "
				"session ended, nothing of it applied", l->idx,
				(unsigned long long)l->rx.seq);
			return;
		}
	}
	const char *data = NULL;
	size_t dlen = 0;
	int status;
	if (f->pmdk) {
		if (pmdk_apply(f, l, msg, len))
			return;
		status = 0;
	} else if (f->secure && len >= sizeof(*msg) &&
			msg->op == LANE_OP_READ) {
		status = read_range(f, msg, len, &data, &dlen);
	} else {
		if (len >= sizeof(*msg) && msg->op == LANE_OP_EPOCHS &&
				!l->epochs) {
			l->epochs = true;
			log_msg(LOG_LVL_INFO, "lane %u: an async replica's "
				"records, applied in order", l->idx);
		}
		status = apply_msg(&f->pool, msg, len, &l->pending);
	}
	uint32_t lane = len >= sizeof(*msg) ? msg->lane : l->idx;
	int r = fabric_post_recv(f, s);
	if (r) {
		log_err("lane %u: reposting a receive: %s", l->idx,
			fab_strerror(r));
		return;
	}
	answer(f, l, (uint32_t)status, lane, data, dlen);
}

/*
 * next_batch -- the next completions of the worker's queue: those
 * already there, else polled for while messages come in quick
 * succession (spin.h), else waited for in the kernel for up to a slice
 */
static ssize_t
next_batch(struct worker *w, struct fi_cq_msg_entry *ent)
{
	struct spin_wait sw;
	ssize_t n = spin_cq_try(&w->spin, w->cq, ent, CQ_BATCH, &sw);
	if (n == -FI_EAGAIN)
		n = fi_cq_sread(w->cq, ent, CQ_BATCH, NULL, WAIT_SLICE_MS);
	spin_wait_end(&w->spin, &sw);
	return n;
}

/* fabric_worker_run -- serve the lanes whose completions land on one CQ */
void *
fabric_worker_run(void *arg)
{
	struct worker *w = arg;
	struct fabric *f = w->fab;
	struct fi_cq_msg_entry ent[CQ_BATCH];

	while (!atomic_load(&f->stop)) {
		ssize_t n = next_batch(w, ent);
		if (n == -FI_EAGAIN || n == -FI_ECANCELED)
			continue;
		if (n == -FI_EAVAIL) {
			struct fi_cq_err_entry e;
			memset(&e, 0, sizeof(e));
			if (fi_cq_readerr(w->cq, &e, 0) > 0 &&
					e.err != FI_ECANCELED)
				log_info("completion error: %s",
					fablib_strerror(e.err));
			continue;
		}
		if (n < 0) {
			log_err("reading completions: %s",
				fab_strerror((int)n));
			break;
		}
		/*
		 * scenario R3: never apply what a client that gave up sent;
		 * once per batch, as a stopped daemon resumes with all of it
		 */
		if (session_gone(f)) {
			log_notice("session hung up: %zd lane message(s) "
				"dropped", n);
			atomic_store(&f->stop, true);
			break;
		}
		/* a lane that failed stops the others at once, too */
		for (ssize_t i = 0; i < n && !atomic_load(&f->stop); i++) {
			if (ent[i].flags & FI_RECV)
				handle_recv(f, ent[i].op_context, ent[i].len);
		}
	}
	return NULL;
}
