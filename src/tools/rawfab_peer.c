/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rawfab_peer.c -- the forked end of the raw baseline: listen, answer
 *
 * It does per message what rpmemd does minus the work: a thread per
 * connection sleeping in fi_cq_sread, the receive slot reposted, an
 * 8-byte answer by fi_inject.  RMA writes and reads land in one
 * registered area without any help from it beyond progress.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include "fab.h"
#include "rawfab.h"

#define SLICE_MS 100
#define PEER_SLICE_MS 1000	/* as rpmemd's workers */
#define CQ_BATCH 16

/* a connection the peer serves */
struct pconn {
	struct peer *p;
	struct fid_ep *ep;
	struct fid_cq *cq;
	char *slots;		/* RAWFAB_RECV_SLOTS receive buffers */
	struct fi_context ctx[RAWFAB_RECV_SLOTS];
	pthread_t thread;
	bool running;
};

struct peer {
	struct rawfab_cfg cfg;
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_eq *eq;
	struct fid_pep *pep;
	struct fid_mr *mr;
	void *desc;
	char *bufs;
	size_t slot_size;
	size_t rma_total;
	unsigned nconn;
	struct pconn conns[RAWFAB_MAX_EPS];
	atomic_bool stop;
};

/* peer_post -- give receive slot i of a connection back */
static int
peer_post(struct peer *p, struct pconn *c, unsigned i)
{
	ssize_t r;
	do {
		r = fi_recv(c->ep, c->slots + i * p->slot_size, p->slot_size,
			p->desc, 0, &c->ctx[i]);
	} while (r == -FI_EAGAIN);
	return (int)r;
}

/* peer_serve -- answer every message of one connection, as rpmemd does */
static void *
peer_serve(void *arg)
{
	struct pconn *c = arg;
	struct peer *p = c->p;
	struct fi_cq_msg_entry ent[CQ_BATCH];
	uint64_t resp[RAWFAB_RESP_SIZE / sizeof(uint64_t)] = { 0 };

	while (!atomic_load(&p->stop)) {
		ssize_t n = fi_cq_sread(c->cq, ent, CQ_BATCH, NULL,
			PEER_SLICE_MS);
		if (n == -FI_EAGAIN || n == -FI_ECANCELED)
			continue;
		if (n == -FI_EAVAIL) {
			struct fi_cq_err_entry e;
			memset(&e, 0, sizeof(e));
			(void) fi_cq_readerr(c->cq, &e, 0);
			continue;
		}
		if (n < 0)
			break;
		for (ssize_t i = 0; i < n; i++) {
			if (!(ent[i].flags & FI_RECV))
				continue;
			struct fi_context *ctx = ent[i].op_context;
			if (peer_post(p, c, (unsigned)(ctx - c->ctx)))
				return NULL;
			ssize_t s;
			do {
				s = fi_inject(c->ep, resp, sizeof(resp), 0);
			} while (s == -FI_EAGAIN && !atomic_load(&p->stop));
		}
	}
	return NULL;
}

/* peer_accept -- endpoint, queue, receives and a thread for a request */
static int
peer_accept(struct peer *p, struct fi_info *info)
{
	if (p->nconn >= p->cfg.neps) {
		(void) fi_reject(p->pep, info->handle, NULL, 0);
		return 0;
	}
	struct pconn *c = &p->conns[p->nconn];
	c->p = p;
	c->slots = p->bufs + p->rma_total +
		(size_t)p->nconn * RAWFAB_RECV_SLOTS * p->slot_size;
	info->tx_attr->size = 2 * RAWFAB_RECV_SLOTS;
	info->rx_attr->size = RAWFAB_RECV_SLOTS;
	struct fi_cq_attr cq_attr = {
		.size = RAWFAB_RECV_SLOTS * 4,
		.format = FI_CQ_FORMAT_MSG,
		.wait_obj = FI_WAIT_UNSPEC,
	};
	int r = fi_cq_open(p->domain, &cq_attr, &c->cq, NULL);
	if (!r)
		r = fi_endpoint(p->domain, info, &c->ep, c);
	if (!r)
		r = fi_ep_bind(c->ep, &p->eq->fid, 0);
	if (!r)
		r = fi_ep_bind(c->ep, &c->cq->fid, FI_TRANSMIT | FI_RECV);
	if (!r)
		r = fi_enable(c->ep);
	for (unsigned i = 0; !r && i < RAWFAB_RECV_SLOTS; i++)
		r = peer_post(p, c, i);
	if (!r)
		r = fi_accept(c->ep, NULL, 0);
	if (!r)
		r = -pthread_create(&c->thread, NULL, peer_serve, c);
	if (r) {
		fprintf(stderr, "rpmem bench: peer: accepting: %s\n",
			fab_strerror(r));
		return r;
	}
	c->running = true;
	p->nconn++;
	return 0;
}

/* peer_open -- listen on loopback with a registered RMA area */
static int
peer_open(struct peer *p, struct rawfab_peer_info *pi)
{
	int r = fab_getinfo(p->cfg.provider, RAWFAB_NODE, NULL, FI_SOURCE,
		&p->info);
	if (r)
		return r;
	r = fab_domain_open(p->info, &p->fabric, &p->domain, &p->eq);
	if (!r)
		r = fab_listen(p->fabric, p->info, p->eq, &p->pep);
	if (r)
		return r;

	p->slot_size = (p->cfg.max_size + 2 * RAWFAB_RESP_STRIDE) &
		~(size_t)(RAWFAB_RESP_STRIDE - 1);
	pi->ep_stride = p->cfg.area;
	p->rma_total = p->cfg.neps * pi->ep_stride;
	size_t total = p->rma_total +
		(size_t)p->cfg.neps * RAWFAB_RECV_SLOTS * p->slot_size;
	if (posix_memalign((void **)&p->bufs, 4096, total))
		return -ENOMEM;
	memset(p->bufs, 0, total);
	r = fi_mr_reg(p->domain, p->bufs, total, FI_RECV | FI_SEND |
		FI_REMOTE_READ | FI_REMOTE_WRITE, 0, RAWFAB_MR_KEY, 0, &p->mr,
		NULL);
	if (r)
		return r;
	p->desc = fi_mr_desc(p->mr);
	pi->key = fi_mr_key(p->mr);
	pi->addr = (p->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) ?
		(uint64_t)(uintptr_t)p->bufs : 0;

	struct sockaddr_storage ss;
	size_t len = sizeof(ss);
	r = fi_getname(&p->pep->fid, &ss, &len);
	if (r)
		return r;
	if (ss.ss_family != AF_INET)
		return -EAFNOSUPPORT;
	pi->port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	return 0;
}

/* peer_loop -- connection events until the parent closes its end */
static void
peer_loop(struct peer *p, int sock)
{
	char buf[sizeof(struct fi_eq_cm_entry) + 256]
		__attribute__((aligned(8)));
	for (;;) {
		struct pollfd pfd = { .fd = sock, .events = POLLIN };
		if (poll(&pfd, 1, 0) != 0)
			return;
		uint32_t event;
		ssize_t n = fi_eq_sread(p->eq, &event, buf, sizeof(buf),
			SLICE_MS, 0);
		if (n == -FI_EAVAIL) {
			(void) fab_eq_err(p->eq);
			continue;
		}
		if (n < 0)
			continue;
		struct fi_eq_cm_entry *ent = (void *)buf;
		if (event == FI_CONNREQ) {
			(void) peer_accept(p, ent->info);
			fablib_freeinfo(ent->info);
		}
	}
}

/* peer_close -- stop the threads, release everything */
static void
peer_close(struct peer *p)
{
	atomic_store(&p->stop, true);
	for (unsigned i = 0; i < p->nconn; i++) {
		struct pconn *c = &p->conns[i];
		if (c->running) {
			(void) fi_cq_signal(c->cq);
			pthread_join(c->thread, NULL);
		}
	}
	for (unsigned i = 0; i < RAWFAB_MAX_EPS; i++) {
		if (p->conns[i].ep)
			fi_close(&p->conns[i].ep->fid);
		if (p->conns[i].cq)
			fi_close(&p->conns[i].cq->fid);
	}
	if (p->pep)
		fi_close(&p->pep->fid);
	fab_objs_close(p->mr, NULL, p->eq, p->domain, p->fabric, p->info);
	free(p->bufs);
}

/* rawfab_peer_main -- the forked child: serve until the parent goes away */
void
rawfab_peer_main(const struct rawfab_cfg *cfg, int sock, pid_t parent)
{
	(void) prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	static struct peer p;
	p.cfg = *cfg;
	atomic_init(&p.stop, false);
	struct rawfab_peer_info pi = { 0 };
	pi.status = peer_open(&p, &pi);
	if (pi.status)
		fprintf(stderr, "rpmem bench: peer on %s: %s\n", RAWFAB_NODE,
			fab_strerror(pi.status));
	ssize_t w = write(sock, &pi, sizeof(pi));
	if (w == (ssize_t)sizeof(pi) && !pi.status)
		peer_loop(&p, sock);
	peer_close(&p);
	_exit(pi.status ? 1 : 0);
}
