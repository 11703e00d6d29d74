/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pmdk_client_fip.c -- the PMDK stand-in client's lanes (GPSPM)
 *
 * As PMDK 1.12's librpmem (pmdk-interop 4.3-4.7): one endpoint and CQ per lane,
 * connected one after the other with no connection data, the pool
 * registered after the lanes are up, one posted receive per lane for
 * the 8-byte answer.  A persist waits for the lane's previous send,
 * writes by RMA (modes 0 and 1) or copies inline (mode 2), sends the
 * message and waits for the answer.  Unlike PMDK every wait is bounded
 * and the answer must echo the lane with zero flags.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fab01.h"
#include "pmdk_client.h"

#define WQ_SIZE 50		/* RPMEM_WORK_QUEUE_SIZE's default */
#define CQ_PER_LANE 3
#define TICK_MS 1000
#define ERRLEN 512

struct pc_lane {
	struct fid_ep *ep;
	struct fid_cq *cq;
	uint64_t pending;	/* FI_SEND, FI_RECV, FI_READ awaited */
	struct f01_ctx send_ctx, recv_ctx, write_ctx, read_ctx;
	struct w01_persist *msg;
	struct w01_persist_resp *resp;
};

struct pc_fip {
	struct f01_base b;	/* fi, fabric, domain, eq */
	unsigned nlanes;
	struct pc_lane *lanes;

	unsigned char *laddr;
	size_t size;
	struct fid_mr *mr;
	uint64_t raddr, rkey;
	size_t buff_size, pmsg_size;
	void *pmsg;
	struct fid_mr *pmsg_mr;
	struct w01_persist_resp *pres;
	struct fid_mr *pres_mr;

	int timeout_ms;
	int errnum;		/* of the last failure */
	int shutdown;		/* FI_SHUTDOWN seen on the event queue */
	char err[ERRLEN];
};

/* fail -- record what failed; returns -err for the caller to pass on */
static int
fail(struct pc_fip *fip, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int
fail(struct pc_fip *fip, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(fip->err, sizeof(fip->err), fmt, ap);
	va_end(ap);
	fip->errnum = err;
	return -err;
}

/* now_ms -- a monotonic clock in milliseconds */
static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* see_shutdown -- has the daemon shut a lane down? (PMDK's monitor) */
static int
see_shutdown(struct pc_fip *fip)
{
	struct fi_eq_cm_entry entry;
	uint32_t event;

	ssize_t n = fi_eq_read(fip->b.eq, &event, &entry, sizeof(entry), 0);
	if (n == -FI_EAVAIL) {
		struct fi_eq_err_entry ee;
		fi_eq_readerr(fip->b.eq, &ee, 0);
		fip->shutdown = 1;
	} else if (n > 0 && event == FI_SHUTDOWN) {
		fip->shutdown = 1;
	}
	return fip->shutdown;
}

/* lane_wait -- completions until none of `ev` is pending, bounded */
static int
lane_wait(struct pc_fip *fip, unsigned lane, uint64_t ev)
{
	struct pc_lane *l = &fip->lanes[lane];
	int64_t deadline = now_ms() + fip->timeout_ms;
	char cqerr[256];

	while (l->pending & ev) {
		struct fi_cq_msg_entry e;
		ssize_t n = fi_cq_sread(l->cq, &e, 1, NULL, TICK_MS);
		if (n == 1) {
			l->pending &= ~(e.flags & (FI_SEND | FI_RECV |
				FI_READ | FI_WRITE));
			continue;
		}
		if (n == -FI_EAVAIL) {
			f01_cq_error(l->cq, cqerr, sizeof(cqerr));
			return fail(fip, see_shutdown(fip) ? ECONNRESET : EIO,
				"lane %u: completion error: %s", lane, cqerr);
		}
		if (n != 0 && n != -FI_EAGAIN && n != -FI_ETIMEDOUT)
			return fail(fip, EIO, "lane %u: reading completions: "
				"%s", lane, fi_strerror((int)-n));
		if (see_shutdown(fip))
			return fail(fip, ECONNRESET, "lane %u: the daemon "
				"shut the connection down", lane);
		if (now_ms() >= deadline)
			return fail(fip, ETIMEDOUT, "lane %u: no answer within "
				"%d ms", lane, fip->timeout_ms);
	}
	return 0;
}

/* post_recv -- the lane's slot for its next 8-byte answer */
static int
post_recv(struct pc_fip *fip, unsigned lane)
{
	struct pc_lane *l = &fip->lanes[lane];

	memset(l->resp, 0xff, sizeof(*l->resp));
	ssize_t ret = f01_post(l->ep, 0, l->resp, sizeof(*l->resp),
		fip->pres_mr, &l->recv_ctx);
	if (ret)
		return fail(fip, EIO, "lane %u: posting a receive: %s", lane,
			fi_strerror((int)-ret));
	return 0;
}

/* check_answer -- PMDK's daemon echoes the lane and leaves flags zero */
static int
check_answer(struct pc_fip *fip, unsigned lane)
{
	const struct w01_persist_resp *r = fip->lanes[lane].resp;

	if (r->lane != lane)
		return fail(fip, EPROTO, "the answer on lane %u names lane %u",
			lane, r->lane);
	if (r->flags != 0)
		return fail(fip, EPROTO, "the answer on lane %u has flags "
			"0x%x: PMDK's client ignores them, so no status can "
			"travel there", lane, r->flags);
	return 0;
}

/* send_msg -- post the lane's persist message of `len` bytes, answer it */
static int
send_msg(struct pc_fip *fip, unsigned lane, size_t len)
{
	struct pc_lane *l = &fip->lanes[lane];

	l->pending |= FI_SEND | FI_RECV;
	ssize_t ret = f01_post(l->ep, 1, l->msg, len, fip->pmsg_mr,
		&l->send_ctx);
	if (ret)
		return fail(fip, EIO, "lane %u: sending a persist message: %s",
			lane, fi_strerror((int)-ret));
	int err = lane_wait(fip, lane, FI_RECV);
	if (err)
		return err;
	err = check_answer(fip, lane);
	if (err)
		return err;
	return post_recv(fip, lane);
}

/* persist_one -- one message's worth: RMA write + message, or inline */
static int
persist_one(struct pc_fip *fip, size_t off, size_t len, unsigned lane,
		unsigned flags)
{
	struct pc_lane *l = &fip->lanes[lane];
	unsigned mode = flags & W01_MODE_MASK;

	int err = lane_wait(fip, lane, FI_SEND);
	if (err)
		return err;

	if (mode != W01_PERSIST_SEND) {
		/* no completion: send-after-write ordering covers it */
		struct iovec iov = {fip->laddr + off, len};
		void *desc = fi_mr_desc(fip->mr);
		struct fi_rma_iov rma = {fip->raddr + off, len, fip->rkey};
		struct fi_msg_rma wr = {
			.msg_iov = &iov, .desc = &desc, .iov_count = 1,
			.rma_iov = &rma, .rma_iov_count = 1,
			.context = &l->write_ctx,
		};
		ssize_t ret = fi_writemsg(l->ep, &wr, 0);
		if (ret)
			return fail(fip, EIO, "lane %u: RMA write: %s", lane,
				fi_strerror((int)-ret));
		flags = mode;	/* PMDK sends only the mode with a write */
	}

	l->msg->flags = flags;
	l->msg->lane = lane;
	l->msg->addr = fip->raddr + off;
	l->msg->size = len;
	size_t mlen = sizeof(*l->msg);
	if (mode == W01_PERSIST_SEND) {
		memcpy(l->msg->data, fip->laddr + off, len);
		mlen += len;
	}
	return send_msg(fip, lane, mlen);
}

/* pc_fip_persist -- persist a range in pieces of max_msg_size/buff_size */
int
pc_fip_persist(struct pc_fip *fip, size_t off, size_t len, unsigned lane,
		unsigned flags)
{
	if (lane >= fip->nlanes || off >= fip->size ||
			len > fip->size - off)
		return fail(fip, EINVAL, "persist of %zu bytes at %zu on lane "
			"%u is out of range", len, off, lane);

	size_t max = fip->b.fi->ep_attr->max_msg_size;
	if ((flags & W01_MODE_MASK) == W01_PERSIST_SEND &&
			fip->buff_size < max)
		max = fip->buff_size;
	while (len > 0) {
		size_t n = len < max ? len : max;
		int err = persist_one(fip, off, n, lane, flags);
		if (err)
			return err;
		off += n;
		len -= n;
	}
	return 0;
}

/*
 * pc_fip_bad -- a persist message PMDK's client never sends: lane number
 * past the last lane, or a range past the pool.  PMDK's rpmemd stops
 * serving the lane, so no answer may come: 0 when none came within the
 * timeout (or the daemon shut the lane), -EPROTO when one did.
 */
int
pc_fip_bad(struct pc_fip *fip, unsigned lane, int range)
{
	struct pc_lane *l = &fip->lanes[lane];

	int err = lane_wait(fip, lane, FI_SEND);
	if (err)
		return err;
	l->msg->flags = W01_FLUSH_WRITE;
	l->msg->lane = range ? lane : fip->nlanes;
	l->msg->addr = fip->raddr + (range ? fip->size - 8 : 0);
	l->msg->size = range ? 16 : 8;
	err = send_msg(fip, lane, sizeof(*l->msg));
	if (err == -ETIMEDOUT || err == -ECONNRESET || err == -EIO)
		return 0;
	if (err == 0 || err == -EPROTO)
		return fail(fip, EPROTO, "lane %u: a persist of %s was "
			"answered", lane, range ? "a range past the pool" :
			"lane number past the last lane");
	return err;
}

/* pc_fip_read -- RMA reads into a registered bounce buffer */
int
pc_fip_read(struct pc_fip *fip, void *buf, size_t off, size_t len,
		unsigned lane)
{
	if (lane >= fip->nlanes || off > fip->size || len > fip->size - off)
		return fail(fip, EINVAL, "read of %zu bytes at %zu on lane %u "
			"is out of range", len, off, lane);
	if (len == 0)
		return 0;

	struct pc_lane *l = &fip->lanes[lane];
	size_t max = fip->b.fi->ep_attr->max_msg_size;
	size_t bsize = len < max ? len : max;
	void *bounce;
	struct fid_mr *mr;
	if (posix_memalign(&bounce, (size_t)sysconf(_SC_PAGESIZE), bsize))
		return fail(fip, ENOMEM, "no memory for a read buffer");
	int ret = fi_mr_reg(fip->b.domain, bounce, bsize, FI_READ, 0, 0, 0,
		&mr, NULL);
	if (ret) {
		free(bounce);
		return fail(fip, EIO, "registering a read buffer: %s",
			fi_strerror(-ret));
	}

	int err = 0;
	for (size_t done = 0; done < len && err == 0; ) {
		size_t n = len - done < bsize ? len - done : bsize;
		struct iovec iov = {bounce, n};
		void *desc = fi_mr_desc(mr);
		struct fi_rma_iov rma = {fip->raddr + off + done, n, fip->rkey};
		struct fi_msg_rma rd = {
			.msg_iov = &iov, .desc = &desc, .iov_count = 1,
			.rma_iov = &rma, .rma_iov_count = 1,
			.context = &l->read_ctx,
		};
		l->pending |= FI_READ;
		ssize_t r = fi_readmsg(l->ep, &rd, FI_COMPLETION);
		if (r) {
			l->pending &= ~(uint64_t)FI_READ;
			err = fail(fip, EIO, "lane %u: RMA read: %s", lane,
				fi_strerror((int)-r));
			break;
		}
		err = lane_wait(fip, lane, FI_READ);
		if (err == 0)
			memcpy((char *)buf + done, bounce, n);
		done += n;
	}
	F01_CLOSE(mr);
	free(bounce);
	return err;
}

/* open_lane -- CQ and endpoint of one lane, bound and enabled */
static int
open_lane(struct pc_fip *fip, struct pc_lane *l)
{
	struct fi_cq_attr cq_attr = {
		.size = CQ_PER_LANE,
		.format = FI_CQ_FORMAT_MSG,
		.wait_obj = FI_WAIT_UNSPEC,
	};

	int ret = fi_cq_open(fip->b.domain, &cq_attr, &l->cq, NULL);
	if (ret == 0)
		ret = fi_endpoint(fip->b.domain, fip->b.fi, &l->ep, NULL);
	if (ret == 0)
		ret = fi_ep_bind(l->ep, &fip->b.eq->fid, 0);
	if (ret == 0)
		ret = fi_ep_bind(l->ep, &l->cq->fid,
			FI_RECV | FI_TRANSMIT | FI_SELECTIVE_COMPLETION);
	if (ret == 0)
		ret = fi_enable(l->ep);
	return ret;
}

/* connect_lane -- fi_connect with no data, then FI_CONNECTED for it */
static int
connect_lane(struct pc_fip *fip, unsigned lane)
{
	struct pc_lane *l = &fip->lanes[lane];
	struct fi_eq_cm_entry entry;
	uint32_t event;
	size_t len;
	char err[256];

	int ret = fi_connect(l->ep, fip->b.fi->dest_addr, NULL, 0);
	if (ret)
		return fail(fip, EIO, "lane %u: connect: %s", lane,
			fi_strerror(-ret));
	ret = f01_eq_read(fip->b.eq, &event, &entry, &len, F01_CONNECT_MS,
		err, sizeof(err));
	if (ret)
		return fail(fip, -ret, "lane %u: waiting for the connection: "
			"%s", lane, err);
	if (event != FI_CONNECTED || entry.fid != &l->ep->fid)
		return fail(fip, ECONNREFUSED, "lane %u: event %u instead of "
			"FI_CONNECTED", lane, event);
	return 0;
}

/* setup -- everything pc_fip_init does after getinfo */
static int
setup(struct pc_fip *fip)
{
	int ret = f01_base_open(&fip->b);
	if (ret)
		return fail(fip, EIO, "fabric resources: %s",
			fi_strerror(-ret));
	fip->lanes = calloc(fip->nlanes, sizeof(*fip->lanes));
	if (fip->lanes == NULL)
		return fail(fip, ENOMEM, "no memory for lanes");
	for (unsigned i = 0; i < fip->nlanes; i++) {
		ret = open_lane(fip, &fip->lanes[i]);
		if (ret)
			return fail(fip, EIO, "lane %u: %s", i,
				fi_strerror(-ret));
	}
	for (unsigned i = 0; i < fip->nlanes; i++) {
		ret = connect_lane(fip, i);
		if (ret)
			return ret;
	}

	/* as PMDK: memory is registered once the lanes are connected */
	fip->pmsg_size = w01_pmsg_size(fip->buff_size);
	fip->pmsg = calloc(fip->nlanes, fip->pmsg_size);
	fip->pres = calloc(fip->nlanes, sizeof(*fip->pres));
	if (fip->pmsg == NULL || fip->pres == NULL)
		return fail(fip, ENOMEM, "no memory for message buffers");
	ret = fi_mr_reg(fip->b.domain, fip->laddr, fip->size, FI_WRITE, 0, 0,
		0, &fip->mr, NULL);
	if (ret == 0)
		ret = fi_mr_reg(fip->b.domain, fip->pmsg,
			fip->nlanes * fip->pmsg_size, FI_SEND, 0, 0, 0,
			&fip->pmsg_mr, NULL);
	if (ret == 0)
		ret = fi_mr_reg(fip->b.domain, fip->pres,
			fip->nlanes * sizeof(*fip->pres), FI_RECV, 0, 0, 0,
			&fip->pres_mr, NULL);
	if (ret)
		return fail(fip, EIO, "registering memory: %s",
			fi_strerror(-ret));
	for (unsigned i = 0; i < fip->nlanes; i++) {
		struct pc_lane *l = &fip->lanes[i];
		l->msg = (void *)((char *)fip->pmsg + i * fip->pmsg_size);
		l->resp = &fip->pres[i];
		ret = post_recv(fip, i);
		if (ret)
			return ret;
	}
	return 0;
}

/* pc_fip_probe -- PMDK's provider probe before all else (pmdk-interop 4.2) */
int
pc_fip_probe(const char *node, uint32_t provider)
{
	struct fi_info *hints = f01_hints(0), *fi = NULL, *p;
	const char *name = w01_provider_name(provider);

	int ret = hints == NULL ? -FI_ENOMEM :
		fi_getinfo(F01_API, node, NULL, 0, hints, &fi);
	fi_freeinfo(hints);
	for (p = ret == 0 ? fi : NULL; p != NULL; p = p->next) {
		if (name != NULL &&
				strcmp(p->fabric_attr->prov_name, name) == 0)
			break;
	}
	fi_freeinfo(fi);
	return p != NULL ? 0 : -ENOMEDIUM;
}

/* pc_fip_init -- provider limits, lanes up, memory registered */
struct pc_fip *
pc_fip_init(const struct pc_fip_attr *attr, unsigned *nlanes, char *err,
		size_t errlen)
{
	struct pc_fip *fip = calloc(1, sizeof(*fip));
	struct fi_info *hints = f01_hints(attr->provider);
	struct fi_info *probe = NULL;
	char port[16];

	if (fip == NULL || hints == NULL) {
		snprintf(err, errlen, "out of memory");
		goto err;
	}
	fip->laddr = attr->laddr;
	fip->size = attr->size;
	fip->raddr = attr->raddr;
	fip->rkey = attr->rkey;
	fip->buff_size = attr->buff_size;
	fip->timeout_ms = attr->timeout_ms;

	/* PMDK probes the provider for its largest work queue first */
	int ret = fi_getinfo(F01_API, attr->node, NULL, 0, hints, &probe);
	if (ret) {
		snprintf(err, errlen, "cannot find provider %s for %s: %s",
			w01_provider_name(attr->provider), attr->node,
			fi_strerror(-ret));
		goto err;
	}
	size_t wq = probe->tx_attr->size;
	fi_freeinfo(probe);
	hints->tx_attr->size = wq < WQ_SIZE ? wq : WQ_SIZE;
	hints->rx_attr->size = 1;
	snprintf(port, sizeof(port), "%u", attr->port);
	ret = fi_getinfo(F01_API, attr->node, port, 0, hints, &fip->b.fi);
	if (ret) {
		snprintf(err, errlen, "getinfo for %s:%s: %s", attr->node,
			port, fi_strerror(-ret));
		goto err;
	}
	size_t max = f01_max_lanes(fip->b.fi);
	fip->nlanes = attr->nlanes < max ? attr->nlanes : (unsigned)max;
	*nlanes = fip->nlanes;
	if (setup(fip) != 0) {
		snprintf(err, errlen, "%s", fip->err);
		goto err;
	}
	fi_freeinfo(hints);
	return fip;

err:
	fi_freeinfo(hints);
	int errnum = fip != NULL && fip->errnum ? fip->errnum : ENOMEDIUM;
	if (fip != NULL)
		pc_fip_fini(fip);
	errno = errnum;
	return NULL;
}

/* pc_fip_errmsg -- the last failure's text */
const char *
pc_fip_errmsg(const struct pc_fip *fip)
{
	return fip->err;
}

/* pc_fip_shutdown -- as PMDK's close: pool MR gone, every lane shut */
void
pc_fip_shutdown(struct pc_fip *fip)
{
	F01_CLOSE(fip->mr);
	fip->mr = NULL;
	for (unsigned i = 0; fip->lanes != NULL && i < fip->nlanes; i++) {
		if (fip->lanes[i].ep != NULL)
			fi_shutdown(fip->lanes[i].ep, 0);
	}
}

/* pc_fip_fini -- close and free everything, also after a partial init */
void
pc_fip_fini(struct pc_fip *fip)
{
	for (unsigned i = 0; fip->lanes != NULL && i < fip->nlanes; i++) {
		F01_CLOSE(fip->lanes[i].ep);
		F01_CLOSE(fip->lanes[i].cq);
	}
	F01_CLOSE(fip->mr);
	F01_CLOSE(fip->pmsg_mr);
	F01_CLOSE(fip->pres_mr);
	f01_base_close(&fip->b);
	free(fip->lanes);
	free(fip->pmsg);
	free(fip->pres);
	free(fip);
}
