/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fabric.c -- librpmem's in-band side: lanes to rpmemd over libfabric
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "fab.h"
#include "fabric.h"
#include "clock.h"
#include "log.h"

#define CQ_BATCH 16
#define SPIN_READS 64		/* polls before sleeping in the kernel */
#define SLICE_MS 100		/* recheck the sticky error this often */
#define LANE_STRIDE_EXTRA 4096	/* response slots and the APM read word */
#define BATCH_MAX (64 * 1024)	/* bytes of one batch of small flushes */
#define BATCH_ITEM_MAX 4096	/* larger flushes are sent on their own */

/* keys of local registrations, for providers that take ours */
#define MR_KEY_BUFS 1
#define MR_KEY_POOL 2
#define MR_KEY_READ 3		/* and up: one per read in flight */
static atomic_uint_fast64_t Read_key = MR_KEY_READ;

enum op_kind { OP_SEND, OP_RECV, OP_READ };

/* what a completion's context points at: fi_context must come first */
struct op {
	struct fi_context ctx;
	enum op_kind kind;
	bool busy;
	void *buf;
};

struct lane {
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct op send[LANE_SLOTS];	/* buf: struct lane_msg + data */
	struct op recv[LANE_SLOTS];	/* buf: struct lane_resp */
	struct op read;			/* buf: APM read target */
	struct op batch[2];		/* buf: lane_msg + lane_rec records */
	unsigned bcur;			/* batch being filled */
	size_t bused;			/* its record bytes */
	unsigned next;			/* next send slot */
	unsigned inflight;		/* messages not answered yet */
	unsigned reads;			/* reads not completed yet */
	int status;			/* first remote error since drain */
	bool written;			/* APM: writes not yet made durable */
	bool connected;
};

struct fabric {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_eq *eq;
	struct fid_mr *buf_mr;
	struct fid_mr *pool_mr;
	void *buf_desc;
	void *pool_desc;
	char *bufs;
	size_t stride;			/* registered bytes per lane */
	size_t slot_size;
	size_t batch_cap;		/* record bytes of one batch */
	size_t buff_size;
	size_t max_msg;
	char *pool_addr;
	size_t pool_size;
	uint64_t raddr;
	uint64_t rkey;
	uint32_t pm;
	bool rma_write;			/* relaxed persists by RMA write */
	bool local_mr;			/* provider wants local buffers registered */
	unsigned nlanes;
	struct lane *lanes;
	int timeout_ms;
	int ssh_fd;
	int stop_fd;
	int eq_fd;			/* -1: the event queue has none */
	pthread_t monitor;
	bool monitor_running;
	_Atomic int error;
};

/* env_flag -- integer environment switch: -1 unset, else its value */
static long
env_flag(const char *name)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return -1;
	char *end;
	long v = strtol(s, &end, 10);
	return *end ? 0 : v;
}

/* lane_limit -- lanes a provider and our descriptors allow */
static unsigned
lane_limit(const struct fi_info *info)
{
	size_t n = fab_fd_budget();
	const struct fi_domain_attr *d = info->domain_attr;
	if (d->cq_cnt && d->cq_cnt < n)
		n = d->cq_cnt;
	if (d->ep_cnt && d->ep_cnt < n)
		n = d->ep_cnt;
	return n ? (unsigned)n : 1;
}

/* fabric_provider -- pick the provider for a node (see fabric.h) */
int
fabric_provider(const char *node, uint32_t *provider, unsigned *max_lanes)
{
	const char *forced = getenv("RPMEM_PROVIDER");
	struct fi_info *info;
	if (forced && *forced) {
		uint32_t p = proto_provider_parse(forced);
		if (p == PROTO_PROV_UNKNOWN)
			return -EINVAL;
		if (fab_getinfo(p, node, NULL, 0, &info))
			return -ENOMEDIUM;
		*max_lanes = lane_limit(info);
		fi_freeinfo(info);
		*provider = p;
		return 0;
	}
	static const uint32_t order[] = {
		PROTO_PROV_VERBS, PROTO_PROV_SOCKETS, PROTO_PROV_TCP,
	};
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		uint32_t p = order[i];
		if (p == PROTO_PROV_VERBS && env_flag("RPMEM_ENABLE_VERBS") == 0)
			continue;
		if (p == PROTO_PROV_SOCKETS &&
				env_flag("RPMEM_ENABLE_SOCKETS") <= 0)
			continue;
		if (fab_getinfo(p, node, NULL, 0, &info) == 0) {
			*max_lanes = lane_limit(info);
			fi_freeinfo(info);
			*provider = p;
			return 0;
		}
	}
	return -ENOMEDIUM;
}

/* fabric_break -- make `err` sticky and wake every waiting lane */
static void
fabric_break(struct fabric *f, int err)
{
	int expected = 0;
	if (!atomic_compare_exchange_strong(&f->error, &expected, err))
		return;
	log_err("connection lost: %s", strerror(err));
	for (unsigned i = 0; i < f->nlanes; i++)
		if (f->lanes[i].cq)
			(void) fi_cq_signal(f->lanes[i].cq);
}

/* fabric_error -- the sticky errno, or 0 */
int
fabric_error(const struct fabric *f)
{
	return atomic_load(&f->error);
}

/* eq_drain -- read pending connection events; a shutdown breaks us */
static void
eq_drain(struct fabric *f)
{
	char buf[sizeof(struct fi_eq_cm_entry) + 64];
	uint32_t event;
	ssize_t n;
	while ((n = fi_eq_read(f->eq, &event, buf, sizeof(buf), 0)) != 0) {
		if (n == -FI_EAVAIL) {
			struct fi_eq_err_entry e;
			memset(&e, 0, sizeof(e));
			(void) fi_eq_readerr(f->eq, &e, 0);
			fabric_break(f, ECONNRESET);
		} else if (n < 0) {
			return;
		} else if (event == FI_SHUTDOWN) {
			fabric_break(f, ECONNRESET);
		}
	}
}

/*
 * monitor_run -- sleep until a lane's connection or the ssh channel
 * ends (or close stops us), without polling on a timer where the event
 * queue has a descriptor to wait on
 */
static void *
monitor_run(void *arg)
{
	struct fabric *f = arg;
	struct fid *fids[1] = { &f->eq->fid };
	for (;;) {
		eq_drain(f);
		struct pollfd pfd[3] = {
			{ .fd = f->stop_fd, .events = POLLIN },
			{ .fd = f->ssh_fd, .events = POLLRDHUP },
			{ .fd = f->eq_fd, .events = POLLIN },
		};
		int timeout = SLICE_MS;
		if (f->eq_fd >= 0) {
			if (fi_trywait(f->fabric, fids, 1) != FI_SUCCESS)
				continue;
			timeout = -1;
		}
		if (poll(pfd, f->eq_fd >= 0 ? 3 : 2, timeout) <= 0)
			continue;
		if (pfd[0].revents)
			break;
		if (pfd[1].revents & (POLLRDHUP | POLLHUP | POLLERR))
			fabric_break(f, ECONNRESET);
	}
	return NULL;
}

/* post_recv -- give a response slot back to the lane */
static int
post_recv(struct fabric *f, struct lane *l, struct op *op)
{
	ssize_t r;
	do {
		r = fi_recv(l->ep, op->buf, sizeof(struct lane_resp),
			f->buf_desc, 0, &op->ctx);
	} while (r == -FI_EAGAIN);
	return (int)r;
}

/* complete -- account one completion of this lane */
static int
complete(struct fabric *f, struct lane *l, struct op *op)
{
	switch (op->kind) {
	case OP_SEND:
		op->busy = false;
		return 0;
	case OP_READ:
		l->reads--;
		return 0;
	case OP_RECV: {
		const struct lane_resp *resp = op->buf;
		if (resp->status && !l->status)
			l->status = (int)resp->status;
		l->inflight--;
		return post_recv(f, l, op) ? ECONNRESET : 0;
	}
	}
	return EPROTO;
}

/*
 * progress -- reap this lane's completions, spinning briefly, then
 * sleeping in slices so a broken connection is noticed.
 */
static int
progress(struct fabric *f, struct lane *l, long long deadline)
{
	struct fi_cq_msg_entry ent[CQ_BATCH];
	ssize_t n = -FI_EAGAIN;
	for (int i = 0; i < SPIN_READS && n == -FI_EAGAIN; i++)
		n = fi_cq_read(l->cq, ent, CQ_BATCH);
	while (n == -FI_EAGAIN) {
		int err = fabric_error(f);
		if (err)
			return err;
		long long left = deadline - clock_ms();
		if (left <= 0) {
			/* the call says why; later ones see a dropped link */
			fabric_break(f, ECONNRESET);
			return ETIMEDOUT;
		}
		n = fi_cq_sread(l->cq, ent, CQ_BATCH, NULL,
			left < SLICE_MS ? (int)left : SLICE_MS);
		if (n == -FI_ECANCELED)
			n = -FI_EAGAIN;
	}
	if (n == -FI_EAVAIL) {
		struct fi_cq_err_entry e;
		memset(&e, 0, sizeof(e));
		(void) fi_cq_readerr(l->cq, &e, 0);
		log_err("lane operation failed: %s", fi_strerror(e.err));
		fabric_break(f, ECONNRESET);
		return ECONNRESET;
	}
	if (n < 0) {
		fabric_break(f, ECONNRESET);
		return ECONNRESET;
	}
	for (ssize_t i = 0; i < n; i++) {
		int r = complete(f, l, ent[i].op_context);
		if (r) {
			fabric_break(f, r);
			return r;
		}
	}
	return fabric_error(f);
}

/* wait_slot -- until `op` is free and the peer has room for a message */
static int
wait_slot(struct fabric *f, struct lane *l, struct op *op)
{
	long long deadline = clock_ms() + f->timeout_ms;
	while (l->inflight >= LANE_SLOTS || op->busy) {
		int r = progress(f, l, deadline);
		if (r)
			return r;
	}
	return 0;
}

/* retry -- repeat a post that found the queue full, making progress */
#define RETRY(f, l, call) ({ \
	ssize_t _r; \
	long long _dl = clock_ms() + (f)->timeout_ms; \
	while ((_r = (call)) == -FI_EAGAIN) { \
		int _e = progress((f), (l), _dl); \
		if (_e) { \
			_r = -_e; \
			break; \
		} \
	} \
	_r; })

/* post_send -- post `op` (its buf holds the message header) */
static int
post_send(struct fabric *f, struct lane *l, struct op *op, size_t hlen,
		const void *data, size_t dlen)
{
	struct iovec iov[2] = {
		{ .iov_base = op->buf, .iov_len = hlen },
		{ .iov_base = (void *)data, .iov_len = dlen },
	};
	void *desc[2] = { f->buf_desc, f->pool_desc };
	struct fi_msg msg = {
		.msg_iov = iov, .desc = desc, .iov_count = dlen ? 2 : 1,
		.context = &op->ctx,
	};
	ssize_t s = RETRY(f, l, fi_sendmsg(l->ep, &msg, FI_COMPLETION));
	if (s) {
		fabric_break(f, ECONNRESET);
		return ECONNRESET;
	}
	op->busy = true;
	l->inflight++;
	return 0;
}

/* msg_init -- fill a lane message header */
static void
msg_init(struct fabric *f, struct lane *l, struct lane_msg *m, uint32_t op,
		uint64_t addr, uint64_t size)
{
	m->op = op;
	m->lane = (uint32_t)(l - f->lanes);
	m->addr = addr;
	m->size = size;
}

/* send_msg -- post a lane message that takes the next slot */
static int
send_msg(struct fabric *f, struct lane *l, uint32_t op_code, size_t off,
		size_t size, const void *data, size_t dlen)
{
	struct op *op = &l->send[l->next % LANE_SLOTS];
	int r = wait_slot(f, l, op);
	if (r)
		return r;
	l->next++;
	msg_init(f, l, op->buf, op_code, f->raddr + off, size);
	/* inline bytes go straight from the pool: no copy into the slot */
	return post_send(f, l, op, sizeof(struct lane_msg), data, dlen);
}

/* batch_send -- send the lane's open batch of small flushes, if any */
static int
batch_send(struct fabric *f, struct lane *l)
{
	if (!l->bused)
		return 0;
	struct op *op = &l->batch[l->bcur];
	int r = wait_slot(f, l, op);
	if (r)
		return r;
	msg_init(f, l, op->buf, LANE_OP_BATCH, 0, l->bused);
	r = post_send(f, l, op, sizeof(struct lane_msg) + l->bused, NULL, 0);
	l->bcur ^= 1;
	l->bused = 0;
	return r;
}

/*
 * batch_add -- copy a small flush into the lane's open batch: the bytes
 * are taken now, as a flush promises, and travel with the others at
 * the next drain (or when the batch is full)
 */
static int
batch_add(struct fabric *f, struct lane *l, size_t off, size_t len)
{
	size_t need = lane_rec_size(len);
	if (l->bused + need > f->batch_cap) {
		int r = batch_send(f, l);
		if (r)
			return r;
	}
	struct op *op = &l->batch[l->bcur];
	long long deadline = clock_ms() + f->timeout_ms;
	while (op->busy) {
		int r = progress(f, l, deadline);
		if (r)
			return r;
	}
	struct lane_msg *m = op->buf;
	struct lane_rec *rec = (void *)(m->data + l->bused);
	rec->addr = f->raddr + off;
	rec->len = len;
	memcpy(rec->data, f->pool_addr + off, len);
	l->bused += need;
	return 0;
}

/* rma -- post an RMA write (no completion) or read (with one) */
static int
rma(struct fabric *f, struct lane *l, bool write, void *buf, void *desc,
		size_t off, size_t len, struct op *op)
{
	while (len) {
		size_t chunk = len < f->max_msg ? len : f->max_msg;
		struct iovec iov = { .iov_base = buf, .iov_len = chunk };
		struct fi_rma_iov riov = {
			.addr = f->raddr + off, .len = chunk, .key = f->rkey,
		};
		struct fi_msg_rma msg = {
			.msg_iov = &iov, .desc = &desc, .iov_count = 1,
			.rma_iov = &riov, .rma_iov_count = 1,
			.context = op ? &op->ctx : NULL,
		};
		ssize_t r = write ?
			RETRY(f, l, fi_writemsg(l->ep, &msg, 0)) :
			RETRY(f, l, fi_readmsg(l->ep, &msg, FI_COMPLETION));
		if (r) {
			fabric_break(f, ECONNRESET);
			return ECONNRESET;
		}
		if (!write)
			l->reads++;
		buf = (char *)buf + chunk;
		off += chunk;
		len -= chunk;
	}
	return 0;
}

/* fabric_flush -- start making a range durable (see fabric.h) */
int
fabric_flush(struct fabric *f, unsigned lane, size_t off, size_t len,
		bool relaxed, bool deep)
{
	struct lane *l = &f->lanes[lane];
	int r = fabric_error(f);
	if (r)
		return r;
	if (relaxed && !deep && f->rma_write) {
		/* batched flushes first: the replica applies them in order */
		r = batch_send(f, l);
		if (!r)
			r = rma(f, l, true, f->pool_addr + off, f->pool_desc,
				off, len, NULL);
		if (r)
			return r;
		if (f->pm == PROTO_PM_APM) {
			l->written = true;
			return 0;
		}
		return send_msg(f, l, LANE_OP_WRITTEN, off, len, NULL, 0);
	}
	if (!deep && len <= BATCH_ITEM_MAX &&
			lane_rec_size(len) <= f->batch_cap)
		return batch_add(f, l, off, len);
	/* what was flushed before goes first */
	r = batch_send(f, l);
	if (r)
		return r;
	uint32_t code = LANE_OP_INLINE | (deep ? LANE_F_DEEP : 0);
	while (len) {
		uint32_t more = 0;
		/*
		 * Pieces end on 8-byte boundaries of the pool, so no aligned
		 * word is split between two messages (DESIGN decision 3).
		 */
		size_t chunk = len;
		if (len > f->buff_size) {
			chunk = ((off + f->buff_size) & ~(size_t)7) - off;
			more = LANE_F_MORE;
		}
		r = send_msg(f, l, code | more, off, chunk, f->pool_addr + off,
			chunk);
		if (r)
			return r;
		off += chunk;
		len -= chunk;
	}
	return 0;
}

/* fabric_drain -- wait for everything flushed on the lane */
int
fabric_drain(struct fabric *f, unsigned lane)
{
	struct lane *l = &f->lanes[lane];
	int r = batch_send(f, l);
	if (r)
		return r;
	if (l->written) {
		/* APM: a read after the writes makes them durable */
		r = rma(f, l, false, l->read.buf, f->buf_desc, 0,
			sizeof(uint64_t), &l->read);
		if (r)
			return r;
		l->written = false;
	}
	long long deadline = clock_ms() + f->timeout_ms;
	while (l->inflight || l->reads) {
		r = progress(f, l, deadline);
		if (r)
			return r;
	}
	r = l->status;
	l->status = 0;
	return r;
}

/* fabric_read -- RMA read into the caller's buffer */
int
fabric_read(struct fabric *f, unsigned lane, void *buf, size_t off,
		size_t len)
{
	struct lane *l = &f->lanes[lane];
	int r = fabric_error(f);
	if (r)
		return r;
	struct fid_mr *mr = NULL;
	void *desc = NULL;
	if (f->local_mr) {
		r = fi_mr_reg(f->domain, buf, len, FI_READ, 0,
			atomic_fetch_add(&Read_key, 1), 0, &mr, NULL);
		if (r)
			return fab_errno(r);
		desc = fi_mr_desc(mr);
	}
	r = rma(f, l, false, buf, desc, off, len, &l->read);
	long long deadline = clock_ms() + f->timeout_ms;
	while (!r && l->reads)
		r = progress(f, l, deadline);
	if (mr)
		fi_close(&mr->fid);
	return r;
}

/* fabric_nlanes -- lanes connected */
unsigned
fabric_nlanes(const struct fabric *f)
{
	return f->nlanes;
}

/* lane_open -- endpoint, completion queue, response slots, connect */
static int
lane_open(struct fabric *f, unsigned i, const uint8_t *secret)
{
	struct lane *l = &f->lanes[i];
	char *base = f->bufs + (size_t)i * f->stride;
	for (unsigned j = 0; j < LANE_SLOTS; j++) {
		l->send[j] = (struct op){ .kind = OP_SEND,
			.buf = base + (size_t)j * f->slot_size };
		l->recv[j] = (struct op){ .kind = OP_RECV,
			.buf = base + LANE_SLOTS * f->slot_size + j * 64 };
	}
	l->read = (struct op){ .kind = OP_READ,
		.buf = base + LANE_SLOTS * f->slot_size + LANE_SLOTS * 64 };
	char *bbase = base + LANE_SLOTS * f->slot_size + LANE_STRIDE_EXTRA;
	for (unsigned j = 0; j < 2; j++)
		l->batch[j] = (struct op){ .kind = OP_SEND,
			.buf = bbase + j * (sizeof(struct lane_msg) +
				f->batch_cap) };

	struct fi_cq_attr cq_attr = {
		.size = 4 * LANE_SLOTS + 4,
		.format = FI_CQ_FORMAT_MSG,
		.wait_obj = FI_WAIT_UNSPEC,
	};
	int r = fi_cq_open(f->domain, &cq_attr, &l->cq, NULL);
	if (r)
		return r;
	r = fi_endpoint(f->domain, f->info, &l->ep, l);
	if (r)
		return r;
	r = fi_ep_bind(l->ep, &f->eq->fid, 0);
	if (!r)
		r = fi_ep_bind(l->ep, &l->cq->fid,
			FI_TRANSMIT | FI_SELECTIVE_COMPLETION);
	if (!r)
		r = fi_ep_bind(l->ep, &l->cq->fid, FI_RECV);
	if (!r)
		r = fi_enable(l->ep);
	for (unsigned j = 0; !r && j < LANE_SLOTS; j++)
		r = post_recv(f, l, &l->recv[j]);
	if (r)
		return r;
	struct lane_conn conn = { .magic = LANE_CONN_MAGIC, .lane = i };
	memcpy(conn.secret, secret, sizeof(conn.secret));
	return fi_connect(l->ep, f->info->dest_addr, &conn, sizeof(conn));
}

/* wait_connected -- every lane reports FI_CONNECTED in time */
static int
wait_connected(struct fabric *f)
{
	long long deadline = clock_ms() + f->timeout_ms;
	char buf[sizeof(struct fi_eq_cm_entry) + 64];
	for (unsigned done = 0; done < f->nlanes;) {
		long long left = deadline - clock_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		uint32_t event;
		ssize_t n = fi_eq_sread(f->eq, &event, buf, sizeof(buf),
			(int)left, 0);
		if (n == -FI_EAGAIN)
			continue;
		if (n == -FI_EAVAIL) {
			struct fi_eq_err_entry e;
			memset(&e, 0, sizeof(e));
			(void) fi_eq_readerr(f->eq, &e, 0);
			log_err("lane connection refused: %s",
				fi_strerror(e.err));
			return -ECONNREFUSED;
		}
		if (n < 0)
			return (int)n;
		struct fi_eq_cm_entry *ent = (void *)buf;
		struct lane *l = ent->fid->context;
		if (event == FI_CONNECTED && l && !l->connected) {
			l->connected = true;
			done++;
		} else if (event == FI_SHUTDOWN) {
			return -ECONNRESET;
		}
	}
	return 0;
}

/* open_domain -- provider, fabric, domain, event queue, buffers */
static int
open_domain(struct fabric *f, const struct fabric_attr *attr)
{
	char service[16];
	snprintf(service, sizeof(service), "%" PRIu32, attr->ibc->port);
	int r = fab_getinfo(attr->provider, attr->node, service, 0, &f->info);
	if (r)
		return r;
	f->info->tx_attr->size = 4 * LANE_SLOTS;
	f->info->rx_attr->size = LANE_SLOTS;
	f->local_mr = f->info->domain_attr->mr_mode & FI_MR_LOCAL;
	f->max_msg = f->info->ep_attr->max_msg_size ?
		f->info->ep_attr->max_msg_size : SIZE_MAX;

	r = fi_fabric(f->info->fabric_attr, &f->fabric, NULL);
	if (!r)
		r = fi_domain(f->fabric, f->info, &f->domain, NULL);
	if (r)
		return r;
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_FD };
	if (fi_eq_open(f->fabric, &eq_attr, &f->eq, NULL) == 0) {
		if (fi_control(&f->eq->fid, FI_GETWAIT, &f->eq_fd))
			f->eq_fd = -1;
	} else {
		eq_attr.wait_obj = FI_WAIT_UNSPEC;
		r = fi_eq_open(f->fabric, &eq_attr, &f->eq, NULL);
		if (r)
			return r;
	}

	f->slot_size = 64;		/* a lane_msg header: data is sent in place */
	f->batch_cap = f->buff_size < BATCH_MAX ? f->buff_size : BATCH_MAX;
	f->stride = (LANE_SLOTS * f->slot_size + LANE_STRIDE_EXTRA +
		2 * (sizeof(struct lane_msg) + f->batch_cap) + 4095) &
		~(size_t)4095;
	size_t total = f->stride * f->nlanes;
	if (posix_memalign((void **)&f->bufs, 4096, total))
		return -ENOMEM;
	memset(f->bufs, 0, total);
	r = fi_mr_reg(f->domain, f->bufs, total, FI_SEND | FI_RECV | FI_READ,
		0, MR_KEY_BUFS, 0, &f->buf_mr, NULL);
	if (r)
		return r;
	f->buf_desc = fi_mr_desc(f->buf_mr);
	r = fi_mr_reg(f->domain, f->pool_addr, f->pool_size,
		FI_WRITE | FI_SEND, 0, MR_KEY_POOL, 0, &f->pool_mr, NULL);
	if (r)
		return r;
	f->pool_desc = fi_mr_desc(f->pool_mr);
	return 0;
}

/* fabric_connect -- connect every lane announced by rpmemd */
int
fabric_connect(const struct fabric_attr *attr, struct fabric **fabp)
{
	struct fabric *f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->pool_addr = attr->pool_addr;
	f->pool_size = attr->pool_size;
	f->raddr = attr->ibc->raddr;
	f->rkey = attr->ibc->rkey;
	f->pm = attr->ibc->persist_method;
	f->rma_write = fab_rma_write_ok(attr->provider);
	f->buff_size = attr->buff_size;
	f->timeout_ms = attr->timeout_ms;
	f->ssh_fd = attr->ssh_fd;
	f->stop_fd = -1;
	f->eq_fd = -1;
	f->nlanes = attr->nlanes;
	atomic_init(&f->error, 0);

	f->lanes = calloc(f->nlanes, sizeof(*f->lanes));
	int r = f->lanes ? open_domain(f, attr) : -ENOMEM;
	if (r) {
		log_err("opening %s to %s: %s",
			proto_provider_name(attr->provider), attr->node,
			fab_strerror(r));
		goto err;
	}
	for (unsigned i = 0; i < f->nlanes; i++) {
		r = lane_open(f, i, attr->secret);
		if (r) {
			log_err("lane %u: %s", i, fab_strerror(r));
			goto err;
		}
	}
	r = wait_connected(f);
	if (r) {
		log_err("connecting %u lanes: %s", f->nlanes,
			fab_strerror(r));
		goto err;
	}
	f->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (f->stop_fd < 0) {
		r = -errno;
		goto err;
	}
	r = pthread_create(&f->monitor, NULL, monitor_run, f);
	if (r) {
		r = -r;
		goto err;
	}
	f->monitor_running = true;
	*fabp = f;
	return 0;
err:
	fabric_close(f);
	return r < 0 ? -fab_errno(r) : -EIO;
}

/* fabric_close -- stop the monitor, shut lanes down, free */
void
fabric_close(struct fabric *f)
{
	if (!f)
		return;
	if (f->monitor_running) {
		uint64_t one = 1;
		if (write(f->stop_fd, &one, sizeof(one)) == sizeof(one))
			pthread_join(f->monitor, NULL);
		else
			log_err("!stopping the lane monitor");
	}
	if (f->stop_fd >= 0)
		close(f->stop_fd);
	for (unsigned i = 0; f->lanes && i < f->nlanes; i++) {
		struct lane *l = &f->lanes[i];
		if (l->ep) {
			if (l->connected)
				(void) fi_shutdown(l->ep, 0);
			fi_close(&l->ep->fid);
		}
		if (l->cq)
			fi_close(&l->cq->fid);
	}
	if (f->pool_mr)
		fi_close(&f->pool_mr->fid);
	if (f->buf_mr)
		fi_close(&f->buf_mr->fid);
	if (f->eq)
		fi_close(&f->eq->fid);
	if (f->domain)
		fi_close(&f->domain->fid);
	if (f->fabric)
		fi_close(&f->fabric->fid);
	if (f->info)
		fi_freeinfo(f->info);
	free(f->bufs);
	free(f->lanes);
	free(f);
}
