/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rawfab.c -- raw libfabric baseline for rpmem bench: the measuring end
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "fab.h"
#include "rawfab.h"

#define SPIN_READS 64		/* as librpmem's progress() */
#define SLICE_MS 100
#define WAIT_MS 10000		/* bound of every wait */
/* the peer's start: fabric set-up, then touching its area, 4 s a GiB */
#define SPAWN_WAIT_MS(area) (WAIT_MS + (int)((area) >> 30) * 4000)
#define CQ_BATCH 16

/* a client endpoint */
struct rep {
	struct fid_ep *ep;
	struct fid_cq *cq;
	char *send;		/* max_size bytes: read target */
	char *rma;		/* cfg.area bytes */
	char *resp;		/* RAWFAB_RECV_SLOTS answer slots */
	struct fi_context send_ctx;
	struct fi_context recv_ctx[RAWFAB_RECV_SLOTS];
	struct fi_context rma_ctx[RAWFAB_MAX_WINDOW];
	unsigned rma_busy;	/* bit per rma_ctx in flight */
	size_t next;		/* offset of the next write in the area */
	uint64_t sends, answers, rmas;	/* completions so far */
	bool connected;
};

struct rawfab {
	struct rawfab_cfg cfg;
	pid_t pid;
	int sock;		/* closing it stops the peer */
	struct rawfab_peer_info peer;
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_eq *eq;
	struct fid_mr *mr;
	void *desc;
	char *bufs;
	struct rep *eps;
};

/* rawfab_now_ns -- CLOCK_MONOTONIC in nanoseconds */
uint64_t
rawfab_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* rawfab_spawn -- fork the peer, learn its port and RMA area */
int
rawfab_spawn(const struct rawfab_cfg *cfg, struct rawfab **rfp)
{
	if (cfg->neps == 0 || cfg->neps > RAWFAB_MAX_EPS ||
			cfg->window == 0 || cfg->window > RAWFAB_MAX_WINDOW ||
			cfg->area < cfg->max_size)
		return -EINVAL;
	struct rawfab *rf = calloc(1, sizeof(*rf));
	if (!rf)
		return -ENOMEM;
	rf->cfg = *cfg;
	rf->sock = -1;
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		free(rf);
		return -errno;
	}
	fflush(NULL);
	pid_t parent = getpid();
	rf->pid = fork();
	if (rf->pid == 0) {
		close(sv[0]);
		rawfab_peer_main(cfg, sv[1], parent);
	}
	close(sv[1]);
	rf->sock = sv[0];
	if (rf->pid < 0) {
		int e = errno;
		rawfab_close(rf);
		return -e;
	}
	struct pollfd pfd = { .fd = rf->sock, .events = POLLIN };
	ssize_t n = poll(&pfd, 1,
		SPAWN_WAIT_MS((size_t)cfg->neps * cfg->area)) == 1 ?
		read(rf->sock, &rf->peer, sizeof(rf->peer)) : -1;
	if (n != (ssize_t)sizeof(rf->peer) || rf->peer.status) {
		int e = n != (ssize_t)sizeof(rf->peer) ? -ETIMEDOUT :
			-fab_errno(rf->peer.status);
		rawfab_close(rf);
		return e;
	}
	*rfp = rf;
	return 0;
}

/* reap -- take completions of one endpoint, spinning, then sleeping */
static int
reap(struct rawfab *rf, struct rep *e)
{
	struct fi_cq_msg_entry ent[CQ_BATCH];
	ssize_t n = -FI_EAGAIN;
	for (int i = 0; i < SPIN_READS && n == -FI_EAGAIN; i++)
		n = fi_cq_read(e->cq, ent, CQ_BATCH);
	uint64_t deadline = rawfab_now_ns() + WAIT_MS * 1000000ULL;
	while (n == -FI_EAGAIN || n == -FI_ECANCELED) {
		if (rawfab_now_ns() > deadline)
			return -ETIMEDOUT;
		n = fi_cq_sread(e->cq, ent, CQ_BATCH, NULL, SLICE_MS);
	}
	if (n == -FI_EAVAIL) {
		struct fi_cq_err_entry err;
		memset(&err, 0, sizeof(err));
		(void) fi_cq_readerr(e->cq, &err, 0);
		fprintf(stderr, "rpmem bench: raw operation failed: %s\n",
			fablib_strerror(err.err));
		return -EIO;
	}
	if (n < 0)
		return (int)n;
	for (ssize_t i = 0; i < n; i++) {
		struct fi_context *ctx = ent[i].op_context;
		if (ctx == &e->send_ctx) {
			e->sends++;
		} else if (ctx >= e->recv_ctx && ctx < e->recv_ctx +
				RAWFAB_RECV_SLOTS) {
			unsigned j = (unsigned)(ctx - e->recv_ctx);
			e->answers++;
			ssize_t r;
			do {
				r = fi_recv(e->ep,
					e->resp + j * RAWFAB_RESP_STRIDE,
					RAWFAB_RESP_SIZE, rf->desc, 0, ctx);
			} while (r == -FI_EAGAIN);
			if (r)
				return (int)r;
		} else {
			e->rma_busy &= ~(1U << (ctx - e->rma_ctx));
			e->rmas++;
		}
	}
	return 0;
}

/* post -- repeat a post the provider found no room for */
#define POST(rf, e, call) ({ \
	ssize_t _r; \
	while ((_r = (call)) == -FI_EAGAIN) { \
		int _e = reap((rf), (e)); \
		if (_e) { \
			_r = _e; \
			break; \
		} \
	} \
	(int)_r; })

/*
 * walk -- the next offset of `size` in the area: like persists walking a
 * pool, the data is not always in cache
 */
static size_t
walk(struct rawfab *rf, struct rep *e, size_t size)
{
	if (e->next + size > rf->cfg.area)
		e->next = 0;
	size_t off = e->next;
	e->next += (size + 63) & ~(size_t)63;
	return off;
}

/* rawfab_ping -- SEND size bytes, wait for its completion and the answer */
int
rawfab_ping(struct rawfab *rf, unsigned ep, size_t size)
{
	struct rep *e = &rf->eps[ep];
	uint64_t sends = e->sends + 1, answers = e->answers + 1;
	struct iovec iov = {
		.iov_base = e->rma + walk(rf, e, size), .iov_len = size,
	};
	struct fi_msg msg = {
		.msg_iov = &iov, .desc = &rf->desc, .iov_count = 1,
		.context = &e->send_ctx,
	};
	int r = POST(rf, e, fi_sendmsg(e->ep, &msg, FI_COMPLETION));
	while (!r && (e->sends < sends || e->answers < answers))
		r = reap(rf, e);
	return r;
}

/*
 * rma -- post with context i an RMA write from `off` of the local area or
 * a read into the send buffer, from or to `off` of the remote area
 */
static int
rma(struct rawfab *rf, unsigned ep, bool write, unsigned i, size_t off,
		size_t size)
{
	struct rep *e = &rf->eps[ep];
	struct iovec iov = {
		.iov_base = write ? e->rma + off : e->send, .iov_len = size,
	};
	struct fi_rma_iov riov = {
		.addr = rf->peer.addr + ep * rf->peer.ep_stride + off,
		.len = size, .key = rf->peer.key,
	};
	struct fi_msg_rma msg = {
		.msg_iov = &iov, .desc = &rf->desc, .iov_count = 1,
		.rma_iov = &riov, .rma_iov_count = 1,
		.context = &e->rma_ctx[i],
	};
	int r = write ? POST(rf, e, fi_writemsg(e->ep, &msg, FI_COMPLETION)) :
		POST(rf, e, fi_readmsg(e->ep, &msg, FI_COMPLETION));
	if (!r)
		e->rma_busy |= 1U << i;
	return r;
}

/* rawfab_read -- one RMA read, waited for */
int
rawfab_read(struct rawfab *rf, unsigned ep, size_t size)
{
	struct rep *e = &rf->eps[ep];
	int r = rma(rf, ep, false, 0, walk(rf, e, size), size);
	while (!r && e->rma_busy)
		r = reap(rf, e);
	return r;
}

/* rawfab_write_until -- windowed RMA writes until the deadline */
int
rawfab_write_until(struct rawfab *rf, unsigned ep, size_t size,
		uint64_t deadline_ns, uint64_t *bytes)
{
	struct rep *e = &rf->eps[ep];
	uint64_t base = e->rmas;
	unsigned full = (1U << rf->cfg.window) - 1;
	int r = 0;
	while (!r && rawfab_now_ns() < deadline_ns) {
		if ((e->rma_busy & full) == full) {
			r = reap(rf, e);
			continue;
		}
		unsigned i = (unsigned)__builtin_ctz(~e->rma_busy & full);
		r = rma(rf, ep, true, i, walk(rf, e, size), size);
	}
	while (!r && e->rma_busy)
		r = reap(rf, e);
	*bytes = (e->rmas - base) * size;
	return r;
}

/* rep_open -- endpoint, queue, answer slots, connection request */
static int
rep_open(struct rawfab *rf, unsigned i, size_t stride)
{
	struct rep *e = &rf->eps[i];
	e->send = rf->bufs + i * stride;
	e->rma = e->send + rf->cfg.max_size;
	e->resp = e->rma + rf->cfg.area;
	int r = fab_ep_open(rf->domain, rf->info, rf->eq,
		2 * RAWFAB_MAX_WINDOW + 4 * RAWFAB_RECV_SLOTS, e, &e->cq, &e->ep);
	for (unsigned j = 0; !r && j < RAWFAB_RECV_SLOTS; j++)
		r = (int)fi_recv(e->ep, e->resp + j * RAWFAB_RESP_STRIDE,
			RAWFAB_RESP_SIZE, rf->desc, 0, &e->recv_ctx[j]);
	if (!r)
		r = fi_connect(e->ep, rf->info->dest_addr, NULL, 0);
	return r;
}

/* wait_connected -- FI_CONNECTED for every endpoint */
static int
wait_connected(struct rawfab *rf)
{
	char buf[sizeof(struct fi_eq_cm_entry) + 256]
		__attribute__((aligned(8)));
	uint64_t deadline = rawfab_now_ns() + WAIT_MS * 1000000ULL;
	for (unsigned done = 0; done < rf->cfg.neps;) {
		if (rawfab_now_ns() > deadline)
			return -ETIMEDOUT;
		uint32_t event;
		ssize_t n = fi_eq_sread(rf->eq, &event, buf, sizeof(buf),
			SLICE_MS, 0);
		if (n == -FI_EAGAIN)
			continue;
		if (n < 0)
			return n == -FI_EAVAIL ? -ECONNREFUSED : (int)n;
		struct fi_eq_cm_entry *ent = (void *)buf;
		struct rep *e = ent->fid->context;
		if (event == FI_CONNECTED && e && !e->connected) {
			e->connected = true;
			done++;
		}
	}
	return 0;
}

/* rawfab_connect -- domain, registered buffers, neps connections */
int
rawfab_connect(struct rawfab *rf)
{
	char service[16];
	snprintf(service, sizeof(service), "%u", rf->peer.port);
	int r = fab_getinfo(rf->cfg.provider, RAWFAB_NODE, service, 0,
		&rf->info);
	if (r)
		return r;
	rf->info->tx_attr->size = RAWFAB_MAX_WINDOW + 4;
	rf->info->rx_attr->size = RAWFAB_RECV_SLOTS;
	r = fab_domain_open(rf->info, &rf->fabric, &rf->domain, &rf->eq);
	if (r)
		return r;

	size_t stride = rf->cfg.max_size + rf->cfg.area + 4096;
	size_t total = stride * rf->cfg.neps;
	rf->eps = calloc(rf->cfg.neps, sizeof(*rf->eps));
	if (!rf->eps || posix_memalign((void **)&rf->bufs, 4096, total))
		return -ENOMEM;
	memset(rf->bufs, 0x5a, total);
	r = fi_mr_reg(rf->domain, rf->bufs, total, FI_SEND | FI_RECV |
		FI_READ | FI_WRITE, 0, RAWFAB_MR_KEY, 0, &rf->mr, NULL);
	if (r)
		return r;
	rf->desc = fi_mr_desc(rf->mr);
	for (unsigned i = 0; !r && i < rf->cfg.neps; i++)
		r = rep_open(rf, i, stride);
	return r ? r : wait_connected(rf);
}

/* rawfab_probe -- see rawfab.h */
int
rawfab_probe(void)
{
	struct fi_info *info = NULL;
	int r = fab_getinfo(PROTO_PROV_TCP, RAWFAB_NODE, NULL, 0, &info);
	if (!r)
		fablib_freeinfo(info);
	return r;
}

/* rawfab_peer_pid -- the forked peer */
pid_t
rawfab_peer_pid(const struct rawfab *rf)
{
	return rf->pid;
}

/* reap_child -- wait up to 5 s for the peer, then kill it */
static void
reap_child(pid_t pid)
{
	for (int i = 0; i < 500; i++) {
		pid_t w = waitpid(pid, NULL, WNOHANG);
		if (w == pid || (w < 0 && errno != EINTR))
			return;
		usleep(10000);
	}
	fprintf(stderr, "rpmem bench: peer %d did not stop; killing it\n",
		(int)pid);
	kill(pid, SIGKILL);
	(void) waitpid(pid, NULL, 0);
}

/* rawfab_close -- disconnect, stop and reap the peer, free */
void
rawfab_close(struct rawfab *rf)
{
	if (!rf)
		return;
	for (unsigned i = 0; rf->eps && i < rf->cfg.neps; i++) {
		struct rep *e = &rf->eps[i];
		if (e->ep) {
			if (e->connected)
				(void) fi_shutdown(e->ep, 0);
			fi_close(&e->ep->fid);
		}
		if (e->cq)
			fi_close(&e->cq->fid);
	}
	fab_objs_close(rf->mr, NULL, rf->eq, rf->domain, rf->fabric,
		rf->info);
	if (rf->sock >= 0)
		close(rf->sock);
	if (rf->pid > 0)
		reap_child(rf->pid);
	free(rf->bufs);
	free(rf->eps);
	free(rf);
}
