/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fabric.c -- rpmemd's in-band side: listener, lanes, worker threads
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include "fabric.h"
#include "clock.h"
#include "log.h"

#define CQ_BATCH 16
#define WAIT_SLICE_MS 1000
#define INJECT_TRIES 100000
#define MR_KEY_BUFS 1		/* key of the message buffers */
#define ACCEPT_SLICE_MS 100	/* how often admission looks at the session */

struct lane;

/* a receive slot; fi_context first so a completion context finds it */
struct slot {
	struct fi_context ctx;
	struct lane *lane;
	struct lane_msg *msg;
};

struct lane {
	struct fid_ep *ep;
	struct apply_pending pending;
	unsigned idx;
	unsigned worker;
	bool connected;
	struct slot slots[LANE_SLOTS];
};

struct worker {
	struct fabric *fab;
	struct fid_cq *cq;
	pthread_t thread;
	bool running;
};

struct fabric {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_eq *eq;
	struct fid_pep *pep;
	struct fid_mr *pool_mr;
	struct fid_mr *buf_mr;
	void *desc;			/* of buf_mr */
	char *bufs;			/* nlanes * LANE_SLOTS message slots */
	size_t slot_size;
	struct apply_pool pool;
	unsigned nlanes;
	unsigned nworkers;
	struct lane *lanes;
	struct worker *workers;
	uint8_t secret[PROTO_SECRET_LEN];
	int session_fd;
	atomic_bool stop;
};

/* post_recv -- hand a slot back to the lane for the next message */
static int
post_recv(struct fabric *f, struct slot *s)
{
	for (int tries = 0; tries < INJECT_TRIES; tries++) {
		ssize_t r = fi_recv(s->lane->ep, s->msg, f->slot_size, f->desc,
			0, &s->ctx);
		if (r != -FI_EAGAIN)
			return (int)r;
	}
	return -FI_EAGAIN;
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

/* session_speaks -- the client wrote to or hung up the session */
static bool
session_speaks(const struct fabric *f)
{
	if (f->session_fd < 0)
		return false;
	struct pollfd pfd = { .fd = f->session_fd, .events = POLLIN };
	return poll(&pfd, 1, 0) > 0 && pfd.revents;
}

/* handle_recv -- apply one message, recycle its slot, answer */
static void
handle_recv(struct fabric *f, struct slot *s, size_t len)
{
	struct lane *l = s->lane;
	struct lane_resp resp = {
		.status = (uint32_t)apply_msg(&f->pool, s->msg, len,
			&l->pending),
		.lane = len >= sizeof(struct lane_msg) ? s->msg->lane : l->idx,
	};
	int r = post_recv(f, s);
	if (r) {
		log_err("lane %u: reposting a receive: %s", l->idx,
			fab_strerror(r));
		return;
	}
	ssize_t n;
	int tries = 0;
	do {
		n = fi_inject(l->ep, &resp, sizeof(resp), 0);
	} while (n == -FI_EAGAIN && ++tries < INJECT_TRIES);
	if (n)
		log_err("lane %u: sending a response: %s", l->idx,
			fab_strerror((int)n));
}

/* worker_run -- serve the lanes whose completions land on one CQ */
static void *
worker_run(void *arg)
{
	struct worker *w = arg;
	struct fabric *f = w->fab;
	struct fi_cq_msg_entry ent[CQ_BATCH];

	while (!atomic_load(&f->stop)) {
		ssize_t n = fi_cq_sread(w->cq, ent, CQ_BATCH, NULL,
			WAIT_SLICE_MS);
		if (n == -FI_EAGAIN || n == -FI_ECANCELED)
			continue;
		if (n == -FI_EAVAIL) {
			struct fi_cq_err_entry e;
			memset(&e, 0, sizeof(e));
			if (fi_cq_readerr(w->cq, &e, 0) > 0 &&
					e.err != FI_ECANCELED)
				log_info("completion error: %s",
					fi_strerror(e.err));
			continue;
		}
		if (n < 0) {
			log_err("reading completions: %s",
				fab_strerror((int)n));
			break;
		}
		/*
		 * RELIABILITY R3: never apply what a client that gave up sent;
		 * once per batch, as a stopped daemon resumes with all of it
		 */
		if (session_gone(f)) {
			log_notice("session hung up: %zd lane message(s) "
				"dropped", n);
			atomic_store(&f->stop, true);
			break;
		}
		for (ssize_t i = 0; i < n; i++) {
			if (ent[i].flags & FI_RECV)
				handle_recv(f, ent[i].op_context, ent[i].len);
		}
	}
	return NULL;
}

/* reject -- refuse a connection request without spending a lane */
static void
reject(struct fabric *f, struct fi_info *info, const char *why,
		unsigned lane)
{
	log_warn("refused a lane connection: %s (lane %u)", why, lane);
	(void) fi_reject(f->pep, info->handle, NULL, 0);
	fi_freeinfo(info);
}

/* secret_eq -- compare in constant time */
static bool
secret_eq(const uint8_t *a, const uint8_t *b)
{
	uint8_t d = 0;
	for (size_t i = 0; i < PROTO_SECRET_LEN; i++)
		d |= (uint8_t)(a[i] ^ b[i]);
	return d == 0;
}

/* handle_connreq -- admit a lane that proves the secret */
static int
handle_connreq(struct fabric *f, struct fi_eq_cm_entry *ent, size_t datalen)
{
	struct fi_info *info = ent->info;
	struct lane_conn conn;
	if (datalen < sizeof(conn)) {
		reject(f, info, "no connection data", 0);
		return 0;
	}
	memcpy(&conn, ent->data, sizeof(conn));
	if (conn.magic != LANE_CONN_MAGIC ||
			!secret_eq(conn.secret, f->secret)) {
		reject(f, info, "wrong session secret", conn.lane);
		return 0;
	}
	if (conn.lane >= f->nlanes || f->lanes[conn.lane].ep) {
		reject(f, info, "lane out of range or taken", conn.lane);
		return 0;
	}

	struct lane *l = &f->lanes[conn.lane];
	info->tx_attr->size = 2 * LANE_SLOTS;
	info->rx_attr->size = LANE_SLOTS;
	int r = fi_endpoint(f->domain, info, &l->ep, l);
	if (r)
		goto err_info;
	r = fi_ep_bind(l->ep, &f->eq->fid, 0);
	if (!r)
		r = fi_ep_bind(l->ep, &f->workers[l->worker].cq->fid,
			FI_TRANSMIT | FI_RECV);
	if (!r)
		r = fi_enable(l->ep);
	for (unsigned i = 0; !r && i < LANE_SLOTS; i++)
		r = post_recv(f, &l->slots[i]);
	if (!r)
		r = fi_accept(l->ep, NULL, 0);
	if (r)
		goto err_ep;
	fi_freeinfo(info);
	return 0;

err_ep:
	fi_close(&l->ep->fid);
	l->ep = NULL;
err_info:
	log_err("accepting lane %u: %s", conn.lane, fab_strerror(r));
	(void) fi_reject(f->pep, info->handle, NULL, 0);
	fi_freeinfo(info);
	return r;
}

/* fabric_accept -- admit every announced lane, then stop listening */
int
fabric_accept(struct fabric *f, int timeout_ms)
{
	long long deadline = clock_ms() + timeout_ms;
	unsigned nconn = 0;
	int ret = 0;
	char buf[sizeof(struct fi_eq_cm_entry) + 512]
		__attribute__((aligned(8)));

	while (nconn < f->nlanes) {
		long long left = deadline - clock_ms();
		if (left <= 0) {
			log_err("only %u of %u lanes connected in %d ms", nconn,
				f->nlanes, timeout_ms);
			ret = -ETIMEDOUT;
			break;
		}
		/*
		 * A client that gave up on its lanes says so on the session
		 * (CLOSE, or hanging up): stop waiting for them at once.
		 */
		if (session_speaks(f)) {
			log_notice("the client spoke before connecting its "
				"lanes (%u of %u)", nconn, f->nlanes);
			ret = -ECONNABORTED;
			break;
		}
		uint32_t event;
		ssize_t n = fi_eq_sread(f->eq, &event, buf, sizeof(buf),
			left < ACCEPT_SLICE_MS ? (int)left : ACCEPT_SLICE_MS,
			0);
		if (n == -FI_EAGAIN)
			continue;
		if (n == -FI_EAVAIL) {
			struct fi_eq_err_entry e;
			memset(&e, 0, sizeof(e));
			(void) fi_eq_readerr(f->eq, &e, 0);
			log_info("connection event error: %s",
				fi_strerror(e.err));
			continue;
		}
		if (n < 0) {
			log_err("reading connection events: %s",
				fab_strerror((int)n));
			ret = -fab_errno(n);
			break;
		}
		struct fi_eq_cm_entry *ent = (void *)buf;
		if (event == FI_CONNREQ) {
			size_t dlen = (size_t)n > sizeof(*ent) ?
				(size_t)n - sizeof(*ent) : 0;
			(void) handle_connreq(f, ent, dlen);
		} else if (event == FI_CONNECTED) {
			struct lane *l = ent->fid->context;
			if (l && !l->connected) {
				l->connected = true;
				nconn++;
			}
		} else if (event == FI_SHUTDOWN) {
			log_err("a lane disconnected during set-up");
			ret = -ECONNRESET;
			break;
		}
	}
	fi_close(&f->pep->fid);
	f->pep = NULL;
	if (!ret)
		log_notice("%u lanes connected; listener closed", nconn);
	return ret;
}

/* fabric_start -- one thread per completion queue */
int
fabric_start(struct fabric *f)
{
	for (unsigned i = 0; i < f->nworkers; i++) {
		struct worker *w = &f->workers[i];
		int r = pthread_create(&w->thread, NULL, worker_run, w);
		if (r) {
			log_err("starting worker %u: %s", i, strerror(r));
			return -r;
		}
		w->running = true;
	}
	return 0;
}

/* listen_port -- the port the passive endpoint got */
static int
listen_port(struct fabric *f, uint32_t *port)
{
	struct sockaddr_storage ss;
	size_t len = sizeof(ss);
	int r = fi_getname(&f->pep->fid, &ss, &len);
	if (r)
		return r;
	if (ss.ss_family == AF_INET)
		*port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	else if (ss.ss_family == AF_INET6)
		*port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	else
		return -EAFNOSUPPORT;
	return *port ? 0 : -EADDRNOTAVAIL;
}

/* open_resources -- fabric, domain, event queue, listener */
static int
open_resources(struct fabric *f, const struct fabric_attr *attr)
{
	int r = fab_getinfo(attr->provider, attr->node, NULL, FI_SOURCE,
		&f->info);
	if (r)
		return r;
	r = fi_fabric(f->info->fabric_attr, &f->fabric, NULL);
	if (!r)
		r = fi_domain(f->fabric, f->info, &f->domain, NULL);
	if (r)
		return r;
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };
	r = fi_eq_open(f->fabric, &eq_attr, &f->eq, NULL);
	if (!r)
		r = fi_passive_ep(f->fabric, f->info, &f->pep, NULL);
	if (!r)
		r = fi_pep_bind(f->pep, &f->eq->fid, 0);
	if (!r)
		r = fi_listen(f->pep);
	return r;
}

/* setup_lanes -- lane count, buffers, completion queues */
static int
setup_lanes(struct fabric *f, const struct fabric_attr *attr)
{
	unsigned n = attr->nlanes;
	size_t cq_cnt = f->info->domain_attr->cq_cnt;
	size_t ep_cnt = f->info->domain_attr->ep_cnt;
	if (cq_cnt && n > cq_cnt)
		n = (unsigned)cq_cnt;
	if (ep_cnt && n > ep_cnt)
		n = (unsigned)ep_cnt;
	if (n > fab_fd_budget())
		n = fab_fd_budget();
	f->nlanes = n;
	f->nworkers = attr->nthreads && attr->nthreads < n ?
		attr->nthreads : n;
	if (f->nworkers > cq_cnt && cq_cnt)
		f->nworkers = (unsigned)cq_cnt;

	f->slot_size = lane_slot_size(f->pool.buff_size);
	size_t total = (size_t)n * LANE_SLOTS * f->slot_size;
	if (posix_memalign((void **)&f->bufs, 4096, total))
		return -ENOMEM;
	f->lanes = calloc(n, sizeof(*f->lanes));
	f->workers = calloc(f->nworkers, sizeof(*f->workers));
	if (!f->lanes || !f->workers)
		return -ENOMEM;
	int r = fi_mr_reg(f->domain, f->bufs, total, FI_RECV, 0, MR_KEY_BUFS,
		0, &f->buf_mr, NULL);
	if (r)
		return r;
	f->desc = fi_mr_desc(f->buf_mr);

	for (unsigned i = 0; i < n; i++) {
		struct lane *l = &f->lanes[i];
		l->idx = i;
		l->worker = i % f->nworkers;
		for (unsigned j = 0; j < LANE_SLOTS; j++) {
			l->slots[j].lane = l;
			l->slots[j].msg = (void *)(f->bufs +
				((size_t)i * LANE_SLOTS + j) * f->slot_size);
		}
	}
	unsigned per = (n + f->nworkers - 1) / f->nworkers;
	for (unsigned i = 0; i < f->nworkers; i++) {
		struct fi_cq_attr cq_attr = {
			.size = (size_t)per * LANE_SLOTS * 2,
			.format = FI_CQ_FORMAT_MSG,
			.wait_obj = FI_WAIT_UNSPEC,
		};
		f->workers[i].fab = f;
		r = fi_cq_open(f->domain, &cq_attr, &f->workers[i].cq, NULL);
		if (r)
			return r;
	}
	return 0;
}

/* fabric_init -- provider, pool registration, buffers, listener */
int
fabric_init(const struct fabric_attr *attr, struct fabric **fabp,
		struct proto_ibc *ibc)
{
	struct fabric *f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->pool = attr->pool;
	f->session_fd = attr->session_fd;
	memcpy(f->secret, attr->secret, sizeof(f->secret));
	atomic_init(&f->stop, false);

	int r = open_resources(f, attr);
	if (r) {
		log_err("%s provider on %s: %s",
			proto_provider_name(attr->provider),
			attr->node ? attr->node : "(any)", fab_strerror(r));
		goto err;
	}
	/*
	 * Providers that take our key (no FI_MR_PROV_KEY) get a random one:
	 * the secret keeps strangers off the lanes, this keeps them guessing.
	 */
	uint64_t key;
	if (getrandom(&key, sizeof(key), 0) != (ssize_t)sizeof(key))
		key = (uint64_t)clock_ms();
	key |= MR_KEY_BUFS + 1;
	uint64_t access = FI_REMOTE_READ |
		(fab_rma_write_ok(attr->provider) ? FI_REMOTE_WRITE : 0);
	r = fi_mr_reg(f->domain, f->pool.base, f->pool.size, access, 0, key, 0,
		&f->pool_mr, NULL);
	if (r) {
		log_err("registering the %zu-byte pool: %s", f->pool.size,
			fab_strerror(r));
		goto err;
	}
	f->pool.raddr = (f->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) ?
		(uint64_t)(uintptr_t)f->pool.base : 0;
	r = setup_lanes(f, attr);
	if (r) {
		log_err("setting up %u lanes: %s", attr->nlanes,
			fab_strerror(r));
		goto err;
	}
	r = listen_port(f, &ibc->port);
	if (r) {
		log_err("dynamic allocation of a port failed: %s",
			fab_strerror(r));
		goto err;
	}
	ibc->rkey = fi_mr_key(f->pool_mr);
	ibc->raddr = f->pool.raddr;
	ibc->nlanes = f->nlanes;
	log_notice("listening on %s port %u (%s), %u lanes, %u threads",
		attr->node ? attr->node : "(any)", ibc->port,
		f->info->fabric_attr->prov_name, f->nlanes, f->nworkers);
	*fabp = f;
	return 0;
err:
	fabric_fini(f);
	return r < 0 ? -fab_errno(r) : -EIO;
}

/* fabric_fini -- stop workers, close lanes, deregister, free */
void
fabric_fini(struct fabric *f)
{
	if (!f)
		return;
	atomic_store(&f->stop, true);
	for (unsigned i = 0; f->workers && i < f->nworkers; i++) {
		struct worker *w = &f->workers[i];
		if (w->running) {
			(void) fi_cq_signal(w->cq);
			pthread_join(w->thread, NULL);
		}
	}
	for (unsigned i = 0; f->lanes && i < f->nlanes; i++) {
		if (f->lanes[i].ep) {
			(void) fi_shutdown(f->lanes[i].ep, 0);
			fi_close(&f->lanes[i].ep->fid);
		}
	}
	for (unsigned i = 0; f->workers && i < f->nworkers; i++)
		if (f->workers[i].cq)
			fi_close(&f->workers[i].cq->fid);
	if (f->pep)
		fi_close(&f->pep->fid);
	if (f->buf_mr)
		fi_close(&f->buf_mr->fid);
	if (f->pool_mr)
		fi_close(&f->pool_mr->fid);
	if (f->eq)
		fi_close(&f->eq->fid);
	if (f->domain)
		fi_close(&f->domain->fid);
	if (f->fabric)
		fi_close(&f->fabric->fid);
	if (f->info)
		fi_freeinfo(f->info);
	free(f->workers);
	free(f->lanes);
	free(f->bufs);
	free(f);
}
