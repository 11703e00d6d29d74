/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fake_rpmemd_fip.c -- the fake rpmemd's lanes, GPSPM as PMDK 1.12 serves
 *
 * Facts 4.1-4.6 and 4.9: the pool is registered for remote reads and
 * writes at its own virtual address; a passive endpoint listens on an
 * ephemeral port; an accept thread takes exactly nlanes connection
 * requests (no connection data: PMDK reads a bare event entry) and posts
 * one receive on each; worker threads, one per lane unless --nthreads,
 * answer every persist message with {flags, lane}.  A message with a bad
 * lane or range ends its worker, so its lanes go unanswered, as in PMDK.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "fab01.h"
#include "fake_rpmemd.h"

#define CQ_WAIT_MS 100		/* RPMEMD_FIP_CQ_WAIT_MS */
#define CQ_PER_LANE 3
#define MSG_MEM_MAX ((size_t)1 << 30)	/* stands for a failed malloc */
#define ERRLEN 256

enum { CTX_RECV, CTX_SEND };

struct fr_thread;

struct fr_lane {
	unsigned index;
	struct fid_ep *ep;
	struct fr_thread *thread;
	struct f01_ctx recv_ctx;
	struct f01_ctx send_ctx;
	struct w01_persist *msg;	/* receive slot */
	struct w01_persist_resp *resp;	/* send slot */
	struct w01_persist_resp stash;	/* answer waiting for the slot */
	int recv_posted;
	int send_posted;
};

struct fr_thread {
	struct fr_fip *fip;
	struct fid_cq *cq;
	pthread_t tid;
	int started;
};

struct fr_fip {
	struct f01_base b;	/* fi, fabric, domain, eq */
	struct fid_pep *pep;
	struct fid_mr *mr;

	unsigned char *addr;
	size_t size;
	uint64_t buff_size;
	size_t pmsg_size;
	unsigned nlanes;
	size_t nthreads;

	struct fr_lane *lanes;
	struct fr_thread *threads;

	void *pmsg;
	struct fid_mr *pmsg_mr;
	struct w01_persist_resp *pres;
	struct fid_mr *pres_mr;

	pthread_t accept_tid;
	int accept_started;
	int accept_result;
	atomic_int closing;
};

/* post -- the lane's receive slot (send 0) or its answer (send 1) */
static int
post(struct fr_fip *fip, struct fr_lane *lane, int send)
{
	ssize_t ret = send ?
		f01_post(lane->ep, 1, lane->resp, sizeof(*lane->resp),
			fip->pres_mr, &lane->send_ctx) :
		f01_post(lane->ep, 0, lane->msg, fip->pmsg_size,
			fip->pmsg_mr, &lane->recv_ctx);
	if (ret) {
		fr_log(FR_ERR, "lane %u: posting %s failed: %s", lane->index,
			send ? "an answer" : "a receive",
			fi_strerror((int)-ret));
		return -1;
	}
	if (send)
		lane->send_posted = 1;
	else
		lane->recv_posted = 1;
	return 0;
}

/* check_msg -- lane number and range inside the registered pool */
static int
check_msg(struct fr_fip *fip, const struct w01_persist *m, size_t len)
{
	if (len < sizeof(*m)) {
		fr_log(FR_ERR, "persist message of %zu bytes", len);
		return -1;
	}
	if (m->lane >= fip->nlanes) {
		fr_log(FR_ERR, "invalid lane number -- %u", m->lane);
		return -1;
	}
	uint64_t base = (uintptr_t)fip->addr;
	if (m->addr < base || m->size > fip->size ||
			m->addr - base > fip->size - m->size) {
		fr_log(FR_ERR, "persist of 0x%llx, %llu bytes is outside "
			"the pool (0x%llx, %zu bytes)",
			(unsigned long long)m->addr,
			(unsigned long long)m->size,
			(unsigned long long)base, fip->size);
		return -1;
	}
	/* PMDK copies without looking; the stand-in refuses to overread */
	if ((m->flags & W01_MODE_MASK) == W01_PERSIST_SEND &&
			(m->size > fip->buff_size ||
			len - sizeof(*m) < m->size)) {
		fr_log(FR_ERR, "inline persist of %llu bytes in a message "
			"of %zu (buffer %llu)", (unsigned long long)m->size,
			len, (unsigned long long)fip->buff_size);
		return -1;
	}
	return 0;
}

/* process_recv -- apply one persist message and answer it */
static int
process_recv(struct fr_fip *fip, struct fr_lane *lane, size_t len)
{
	lane->recv_posted = 0;

	struct w01_persist *m = lane->msg;
	if (check_msg(fip, m, len))
		return -1;

	void *addr = (void *)(uintptr_t)m->addr;
	unsigned mode = m->flags & W01_MODE_MASK;
	fr_log(FR_DEBUG, "lane %u: mode %u flags 0x%x offset %llu size %llu",
		lane->index, mode, m->flags,
		(unsigned long long)(m->addr - (uintptr_t)fip->addr),
		(unsigned long long)m->size);

	int ret;
	if (mode == W01_PERSIST_SEND) {
		fr_pool_copy(addr, m->data, m->size);
		ret = fr_pool_persist(addr, m->size);
	} else {
		/* deep persist of a file mapping is the same msync */
		ret = fr_pool_persist(addr, m->size);
	}
	if (ret)
		fr_log(FR_ERR, "lane %u: msync: %s", lane->index,
			strerror(-ret));

	struct w01_persist_resp *r = lane->send_posted ? &lane->stash :
		lane->resp;
	r->flags = 0;
	r->lane = m->lane;
	if (lane->send_posted)
		return 0;	/* posted when the previous answer completes */
	if (post(fip, lane, 0))
		return -1;
	return post(fip, lane, 1);
}

/* process_send -- an answer went out: send the stashed one, if any */
static int
process_send(struct fr_fip *fip, struct fr_lane *lane)
{
	lane->send_posted = 0;
	if (lane->recv_posted)
		return 0;

	*lane->resp = lane->stash;
	if (post(fip, lane, 0))
		return -1;
	return post(fip, lane, 1);
}

/* worker -- serve the lanes of one CQ until closing or an error */
static void *
worker(void *arg)
{
	struct fr_thread *t = arg;
	struct fr_fip *fip = t->fip;
	char err[ERRLEN];

	while (!atomic_load(&fip->closing)) {
		struct fi_cq_msg_entry e;
		ssize_t n = fi_cq_sread(t->cq, &e, 1, NULL, CQ_WAIT_MS);
		if (atomic_load(&fip->closing))
			break;
		if (n == 0 || n == -FI_EAGAIN || n == -FI_ETIMEDOUT ||
				n == -FI_ECANCELED)
			continue;
		if (n < 0) {
			f01_cq_error(t->cq, err, sizeof(err));
			fr_log(FR_ERR, "completion queue: %s", err);
			return (void *)-1;
		}
		struct f01_ctx *ctx = e.op_context;
		if (ctx == NULL || !(e.flags & (FI_SEND | FI_RECV))) {
			fr_log(FR_ERR, "unexpected completion 0x%llx",
				(unsigned long long)e.flags);
			return (void *)-1;
		}
		struct fr_lane *lane = ctx->owner;
		int ret = ctx->kind == CTX_RECV ?
			process_recv(fip, lane, e.len) :
			process_send(fip, lane);
		if (ret) {
			fr_log(FR_ERR, "worker of lane %u stops: its lanes "
				"are not served any more", lane->index);
			return (void *)-1;
		}
	}
	return NULL;
}

/* accept_one -- endpoint for a connection request, receive, accept */
static int
accept_one(struct fr_fip *fip, struct fi_info *info, struct fr_lane *lane)
{
	info->tx_attr->size = 1;
	info->rx_attr->size = 1;

	int ret = fi_endpoint(fip->b.domain, info, &lane->ep, NULL);
	if (ret == 0)
		ret = fi_ep_bind(lane->ep, &fip->b.eq->fid, 0);
	if (ret == 0)
		ret = fi_ep_bind(lane->ep, &lane->thread->cq->fid,
			FI_RECV | FI_TRANSMIT | FI_SELECTIVE_COMPLETION);
	if (ret == 0)
		ret = fi_enable(lane->ep);
	if (ret) {
		fr_log(FR_ERR, "lane %u: endpoint: %s", lane->index,
			fi_strerror(-ret));
		return -1;
	}
	if (post(fip, lane, 0))
		return -1;
	ret = fi_accept(lane->ep, NULL, 0);
	if (ret) {
		fr_log(FR_ERR, "lane %u: accept: %s", lane->index,
			fi_strerror(-ret));
		return -1;
	}
	return 0;
}

/* accept_all -- nlanes requests and nlanes connections, or a shutdown */
static int
accept_all(struct fr_fip *fip)
{
	unsigned nreq = 0, ncon = 0;
	char err[ERRLEN];

	while (nreq < fip->nlanes || ncon < fip->nlanes) {
		struct fi_eq_cm_entry entry;
		uint32_t event;
		size_t len;
		int ret = f01_eq_read(fip->b.eq, &event, &entry, &len,
			F01_ACCEPT_MS, err, sizeof(err));
		if (ret) {
			fr_log(FR_ERR, "waiting for lane connections "
				"(%u of %u requested, %u connected): %s",
				nreq, fip->nlanes, ncon, err);
			return -1;
		}
		switch (event) {
		case FI_CONNREQ:
			if (len != sizeof(entry)) {
				/* PMDK's fixed-size event read fails here */
				fr_log(FR_ERR, "connection request with %zu "
					"bytes of connection data: PMDK 1.12's "
					"rpmemd cannot read it",
					len - sizeof(entry));
				fi_freeinfo(entry.info);
				return -1;
			}
			if (nreq == fip->nlanes) {
				fr_log(FR_ERR, "a connection request beyond "
					"the %u lanes", fip->nlanes);
				fi_freeinfo(entry.info);
				return -1;
			}
			ret = accept_one(fip, entry.info, &fip->lanes[nreq]);
			fi_freeinfo(entry.info);
			if (ret)
				return -1;
			nreq++;
			break;
		case FI_CONNECTED:
			ncon++;
			break;
		case FI_SHUTDOWN:
			/* as PMDK: stop waiting, serve what is there */
			fr_log(FR_WARN, "a lane shut down while connecting");
			return 0;
		default:
			fr_log(FR_ERR, "unexpected event %u while accepting",
				event);
			return -1;
		}
	}
	return 0;
}

/* accept_thread -- connect the lanes, then start the workers */
static void *
accept_thread(void *arg)
{
	struct fr_fip *fip = arg;

	fr_log(FR_INFO, "waiting for %u lane connections", fip->nlanes);
	if (accept_all(fip)) {
		fip->accept_result = -1;
		return NULL;
	}
	fr_log(FR_NOTICE, "in-band connection established");

	for (size_t i = 0; i < fip->nthreads; i++) {
		struct fr_thread *t = &fip->threads[i];
		int ret = pthread_create(&t->tid, NULL, worker, t);
		if (ret) {
			fr_log(FR_ERR, "starting a worker: %s", strerror(ret));
			fip->accept_result = -1;
			return NULL;
		}
		t->started = 1;
	}
	return NULL;
}

/* init_fabric -- fabric, domain, event queue, passive endpoint, pool MR */
static int
init_fabric(struct fr_fip *fip)
{
	int ret = f01_base_open(&fip->b);
	if (ret == 0)
		ret = fi_passive_ep(fip->b.fabric, fip->b.fi, &fip->pep, NULL);
	if (ret == 0)
		ret = fi_pep_bind(fip->pep, &fip->b.eq->fid, 0);
	if (ret == 0)
		ret = fi_mr_reg(fip->b.domain, fip->addr, fip->size,
			FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0, &fip->mr,
			NULL);
	if (ret)
		fr_log(FR_ERR, "fabric resources: %s", fi_strerror(-ret));
	return ret;
}

/* init_lanes -- threads with their CQs, lanes, message buffers */
static int
init_lanes(struct fr_fip *fip)
{
	size_t per_thread = (fip->nlanes - 1) / fip->nthreads + 1;
	struct fi_cq_attr cq_attr = {
		.size = per_thread * CQ_PER_LANE,
		.format = FI_CQ_FORMAT_MSG,
		.wait_obj = FI_WAIT_UNSPEC,
	};

	fip->lanes = calloc(fip->nlanes, sizeof(*fip->lanes));
	fip->threads = calloc(fip->nthreads, sizeof(*fip->threads));
	if (fip->lanes == NULL || fip->threads == NULL)
		return -1;
	for (size_t i = 0; i < fip->nthreads; i++) {
		fip->threads[i].fip = fip;
		int ret = fi_cq_open(fip->b.domain, &cq_attr,
			&fip->threads[i].cq, NULL);
		if (ret) {
			fr_log(FR_ERR, "completion queue: %s",
				fi_strerror(-ret));
			return -1;
		}
	}

	fip->pmsg_size = w01_pmsg_size(fip->buff_size);
	if (fip->buff_size > MSG_MEM_MAX ||
			fip->pmsg_size > MSG_MEM_MAX / fip->nlanes) {
		fr_log(FR_ERR, "cannot allocate %u message buffers of %llu "
			"bytes", fip->nlanes,
			(unsigned long long)fip->buff_size);
		return -1;
	}
	fip->pmsg = calloc(fip->nlanes, fip->pmsg_size);
	fip->pres = calloc(fip->nlanes, sizeof(*fip->pres));
	if (fip->pmsg == NULL || fip->pres == NULL)
		return -1;
	int ret = fi_mr_reg(fip->b.domain, fip->pmsg,
		fip->nlanes * fip->pmsg_size, FI_RECV, 0, 0, 0,
		&fip->pmsg_mr, NULL);
	if (ret == 0)
		ret = fi_mr_reg(fip->b.domain, fip->pres,
			fip->nlanes * sizeof(*fip->pres), FI_SEND, 0, 0, 0,
			&fip->pres_mr, NULL);
	if (ret) {
		fr_log(FR_ERR, "message buffers: %s", fi_strerror(-ret));
		return -1;
	}

	for (unsigned i = 0; i < fip->nlanes; i++) {
		struct fr_lane *lane = &fip->lanes[i];
		lane->index = i;
		lane->thread = &fip->threads[i % fip->nthreads];
		lane->msg = (void *)((char *)fip->pmsg + i * fip->pmsg_size);
		lane->resp = &fip->pres[i];
		lane->recv_ctx = (struct f01_ctx){.owner = lane,
			.kind = CTX_RECV};
		lane->send_ctx = (struct f01_ctx){.owner = lane,
			.kind = CTX_SEND};
	}
	return 0;
}

/* listen_port -- listen and learn the ephemeral port */
static int
listen_port(struct fr_fip *fip, uint32_t *port, uint32_t *status)
{
	union {
		struct sockaddr_in in;
		struct sockaddr_in6 in6;
	} sa;
	size_t len = sizeof(sa);

	int ret = fi_listen(fip->pep);
	if (ret) {
		fr_log(FR_ERR, "listen: %s", fi_strerror(-ret));
		*status = W01_ERR_FATAL_CONN;
		return -1;
	}
	*status = W01_ERR_FATAL;
	memset(&sa, 0, sizeof(sa));
	ret = fi_getname(&fip->pep->fid, &sa, &len);
	if (ret) {
		fr_log(FR_ERR, "listener address: %s", fi_strerror(-ret));
		return -1;
	}
	if (fip->b.fi->addr_format == FI_SOCKADDR_IN)
		*port = ntohs(sa.in.sin_port);
	else if (fip->b.fi->addr_format == FI_SOCKADDR_IN6)
		*port = ntohs(sa.in6.sin6_port);
	else
		*port = 0;
	if (*port == 0) {
		fr_log(FR_ERR, "no ephemeral port for the listener");
		return -1;
	}
	return 0;
}

/* fr_fip_init -- everything before the response goes out */
struct fr_fip *
fr_fip_init(const char *node, const struct fr_fip_attr *attr,
		struct w01_ibc *ibc, uint32_t *status)
{
	struct fr_fip *fip = calloc(1, sizeof(*fip));
	if (fip == NULL) {
		*status = W01_ERR_FATAL;
		return NULL;
	}
	fip->addr = attr->addr;
	fip->size = attr->size;
	fip->buff_size = attr->buff_size;

	struct fi_info *hints = f01_hints(attr->provider);
	int ret = hints == NULL ? -FI_ENOMEM :
		fi_getinfo(F01_API, node, NULL, FI_SOURCE, hints, &fip->b.fi);
	fi_freeinfo(hints);
	if (ret) {
		fr_log(FR_ERR, "fi_getinfo of %s on %s: %s",
			w01_provider_name(attr->provider), node,
			fi_strerror(-ret));
		*status = W01_ERR_BADPROVIDER;
		free(fip);
		return NULL;
	}

	size_t max = f01_max_lanes(fip->b.fi);
	fip->nlanes = attr->nlanes < max ? attr->nlanes : (unsigned)max;
	if (fip->nlanes == 0)
		fr_die("nlanes is 0 (PMDK's rpmemd asserts nlanes > 0)");
	fip->nthreads = attr->nthreads ? attr->nthreads : fip->nlanes;

	*status = W01_ERR_FATAL;
	if (init_fabric(fip) || init_lanes(fip) ||
			listen_port(fip, &ibc->port, status)) {
		fr_fip_fini(fip);
		return NULL;
	}

	ibc->persist_method = W01_PM_GPSPM;
	ibc->rkey = fi_mr_key(fip->mr);
	ibc->raddr = (uintptr_t)fip->addr;
	ibc->nlanes = fip->nlanes;
	*status = W01_OK;
	return fip;
}

/* fr_fip_start -- start the accept thread */
int
fr_fip_start(struct fr_fip *fip)
{
	int ret = pthread_create(&fip->accept_tid, NULL, accept_thread, fip);
	if (ret) {
		fr_log(FR_ERR, "starting the accept thread: %s",
			strerror(ret));
		return -1;
	}
	fip->accept_started = 1;
	return 0;
}

/* fr_fip_stop -- join the accept thread, then the workers */
int
fr_fip_stop(struct fr_fip *fip)
{
	if (!fip->accept_started)
		return -1;
	pthread_join(fip->accept_tid, NULL);
	fip->accept_started = 0;

	atomic_store(&fip->closing, 1);
	for (size_t i = 0; i < fip->nthreads; i++) {
		struct fr_thread *t = &fip->threads[i];
		if (!t->started)
			continue;
		fi_cq_signal(t->cq);
		void *res;
		pthread_join(t->tid, &res);
		t->started = 0;
		if (res != NULL)
			fr_log(FR_ERR, "a worker had failed");
	}
	if (fip->accept_result)
		fr_log(FR_ERR, "the in-band connection had failed");
	return fip->accept_result;
}

/* fr_fip_fini -- close and free everything; safe on a partial init */
void
fr_fip_fini(struct fr_fip *fip)
{
	if (fip->accept_started)
		fr_fip_stop(fip);
	for (unsigned i = 0; fip->lanes != NULL && i < fip->nlanes; i++)
		F01_CLOSE(fip->lanes[i].ep);
	F01_CLOSE(fip->pmsg_mr);
	F01_CLOSE(fip->pres_mr);
	for (size_t i = 0; fip->threads != NULL && i < fip->nthreads; i++)
		F01_CLOSE(fip->threads[i].cq);
	F01_CLOSE(fip->mr);
	F01_CLOSE(fip->pep);
	f01_base_close(&fip->b);
	free(fip->pmsg);
	free(fip->pres);
	free(fip->lanes);
	free(fip->threads);
	free(fip);
}
