/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fabric.c -- rpmemd's in-band side: provider, listener, admission of
 * lanes, start and tear-down (the workers are in fabric_lane.c)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <unistd.h>

#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include "clock.h"
#include "fabric_int.h"
#include "log.h"

#define MR_KEY_BUFS 1		/* key of the message buffers */
#define ACCEPT_SLICE_MS 100	/* how often admission looks at the session */

/* session_speaks -- the client wrote to or hung up the session */
static bool
session_speaks(const struct fabric *f)
{
	if (f->session_fd < 0)
		return false;
	struct pollfd pfd = { .fd = f->session_fd, .events = POLLIN };
	return poll(&pfd, 1, 0) > 0 && pfd.revents;
}

/* reject -- refuse a connection request without spending a lane */
static void
reject(struct fabric *f, struct fi_info *info, const char *why,
		unsigned lane)
{
	log_warn("refused a lane connection: %s (lane %u)", why, lane);
	(void) fi_reject(f->pep, info->handle, NULL, 0);
	fablib_freeinfo(info);
}

/* handle_connreq -- admit a lane whose request carries its token */
static int
handle_connreq(struct fabric *f, struct fi_eq_cm_entry *ent, size_t datalen)
{
	struct fi_info *info = ent->info;
	struct lane_conn conn;
	if (f->pmdk) {
		/* PMDK's client sends nothing: lanes are taken in order */
		conn.lane = f->admitted;
	} else if (datalen < sizeof(conn)) {
		reject(f, info, "no connection data", 0);
		return 0;
	} else {
		memcpy(&conn, ent->data, sizeof(conn));
		if (conn.magic != LANE_CONN_MAGIC ||
				!lanesec_token_ok(&f->keys, conn.lane,
				conn.token)) {
			reject(f, info, "wrong session token", conn.lane);
			return 0;
		}
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
	struct worker *w = &f->workers[l->worker];
	r = fi_ep_bind(l->ep, &f->eq->fid, 0);
	if (!r)
		r = fi_ep_bind(l->ep, &w->cq->fid, FI_RECV);
	if (!r)
		r = fi_ep_bind(l->ep, &(w->txcq ? w->txcq : w->cq)->fid,
			FI_TRANSMIT | FI_SELECTIVE_COMPLETION);
	if (!r)
		r = fi_enable(l->ep);
	for (unsigned i = 0; !r && i < LANE_SLOTS; i++)
		r = fabric_post_recv(f, &l->slots[i]);
	if (!r)
		r = fi_accept(l->ep, NULL, 0);
	if (r)
		goto err_ep;
	f->admitted++;
	fablib_freeinfo(info);
	return 0;

err_ep:
	fi_close(&l->ep->fid);
	l->ep = NULL;
err_info:
	log_err("accepting lane %u: %s", conn.lane, fab_strerror(r));
	(void) fi_reject(f->pep, info->handle, NULL, 0);
	fablib_freeinfo(info);
	return r;
}

/* fabric_accept -- admit every announced lane, then stop listening */
int
fabric_accept(struct fabric *f, int timeout_ms, bool heed_session)
{
	if (!f->accept_deadline)
		f->accept_deadline = clock_ms() + timeout_ms;
	int ret = 0;
	char buf[sizeof(struct fi_eq_cm_entry) + 512]
		__attribute__((aligned(8)));

	while (f->nconn < f->nlanes) {
		long long left = f->accept_deadline - clock_ms();
		if (left <= 0) {
			log_err("only %u of %u lanes connected in %d ms",
				f->nconn, f->nlanes, timeout_ms);
			ret = -ETIMEDOUT;
			break;
		}
		/*
		 * The client spoke: a CLOSE (it gave up on its lanes) or a
		 * hang-up must be heard at once; any other request is read
		 * by the session and served once the lanes are in, since a
		 * provider may complete our side of a connection (sockets
		 * does so asynchronously) after the client saw its own.
		 */
		if (heed_session && session_speaks(f)) {
			log_info("the client spoke with %u of %u lanes "
				"connected", f->nconn, f->nlanes);
			return -EINPROGRESS;
		}
		uint32_t event;
		ssize_t n = fi_eq_sread(f->eq, &event, buf, sizeof(buf),
			left < ACCEPT_SLICE_MS ? (int)left : ACCEPT_SLICE_MS,
			0);
		if (n == -FI_EAGAIN)
			continue;
		if (n == -FI_EAVAIL) {
			log_info("connection event error: %s",
				fablib_strerror(fab_eq_err(f->eq)));
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
				f->nconn++;
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
		log_notice("%u lanes connected; listener closed", f->nconn);
	return ret;
}

/* fabric_settle -- finish an admission a request interrupted */
struct fabric *
fabric_settle(struct fabric *f, int timeout_ms)
{
	if (!f || !f->pep || !f->accept_deadline)
		return f;
	if (fabric_accept(f, timeout_ms, false) == 0)
		return f;
	fabric_fini(f);
	return NULL;
}

/* fabric_start -- one thread per completion queue */
int
fabric_start(struct fabric *f)
{
	for (unsigned i = 0; i < f->nworkers; i++) {
		struct worker *w = &f->workers[i];
		int r = pthread_create(&w->thread, NULL, fabric_worker_run, w);
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
	/* no address given: any IPv4 one (libfabric's tcp finds nothing
	 * for no node at all) */
	int r = fab_getinfo(attr->provider, attr->node ? attr->node :
		"0.0.0.0", NULL, FI_SOURCE, &f->info);
	if (r)
		return r;
	r = fab_domain_open(f->info, &f->fabric, &f->domain, &f->eq);
	if (!r)
		r = fab_listen(f->fabric, f->info, f->eq, &f->pep);
	return r;
}

/* cq_open -- a completion queue of `size` entries */
static int
cq_open(struct fabric *f, size_t size, struct fid_cq **cq)
{
	struct fi_cq_attr cq_attr = {
		.size = size,
		.format = FI_CQ_FORMAT_MSG,
		.wait_obj = FI_WAIT_UNSPEC,
	};
	return fi_cq_open(f->domain, &cq_attr, cq, NULL);
}

/*
 * setup_lanes -- lane count, message slots (and send buffers and cipher
 * streams when the session seals its lanes), completion queues
 */
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
	/*
	 * PMDK's client connects no more lanes than the provider's contexts
	 * (pmdk-interop 4.4: sockets has 16) and never says so: announcing more
	 * would leave the accept waiting for lanes that never come
	 */
	size_t tx = f->info->domain_attr->tx_ctx_cnt;
	size_t rx = f->info->domain_attr->rx_ctx_cnt;
	if (f->pmdk && tx && n > tx)
		n = (unsigned)tx;
	if (f->pmdk && rx && n > rx)
		n = (unsigned)rx;
	f->nlanes = n;
	f->nworkers = attr->nthreads && attr->nthreads < n ?
		attr->nthreads : n;
	/* a worker has a receive queue, and a send queue when sealing */
	size_t cqs = f->secure ? 2 : 1;
	if (cq_cnt && f->nworkers > cq_cnt / cqs)
		f->nworkers = cq_cnt / cqs ? (unsigned)(cq_cnt / cqs) : 1;

	f->slot_size = lane_slot_size(f->pool.buff_size);
	size_t per_lane = LANE_SLOTS + (f->secure ? LANE_SENDBUFS : 0);
	size_t total = (size_t)n * per_lane * f->slot_size;
	if (posix_memalign((void **)&f->bufs, 4096, total))
		return -ENOMEM;
	f->lanes = calloc(n, sizeof(*f->lanes));
	f->workers = calloc(f->nworkers, sizeof(*f->workers));
	if (!f->lanes || !f->workers)
		return -ENOMEM;
	int r = fi_mr_reg(f->domain, f->bufs, total, FI_RECV | FI_SEND, 0,
		MR_KEY_BUFS, 0, &f->buf_mr, NULL);
	if (r)
		return r;
	f->desc = fi_mr_desc(f->buf_mr);

	for (unsigned i = 0; i < n; i++) {
		struct lane *l = &f->lanes[i];
		char *base = f->bufs + (size_t)i * per_lane * f->slot_size;
		l->idx = i;
		l->worker = i % f->nworkers;
		for (unsigned j = 0; j < LANE_SLOTS; j++) {
			l->slots[j].lane = l;
			l->slots[j].buf = base + j * f->slot_size;
		}
		if (!f->secure)
			continue;
		for (unsigned j = 0; j < LANE_SENDBUFS; j++)
			l->send[j].buf = base + (LANE_SLOTS + j) *
				f->slot_size;
		r = lanesec_stream_init(&l->rx, &f->keys, LANESEC_C2S, i,
			false);
		if (!r)
			r = lanesec_stream_init(&l->tx, &f->keys, LANESEC_S2C,
				i, true);
		if (r)
			return r;
	}
	unsigned per = (n + f->nworkers - 1) / f->nworkers;
	struct spin_conf spin = spin_conf_env(SPIN_DEFAULT_US);
	for (unsigned i = 0; i < f->nworkers; i++) {
		struct worker *w = &f->workers[i];
		w->fab = f;
		spin_init(&w->spin, spin);
		r = cq_open(f, (size_t)per * LANE_SLOTS * 2, &w->cq);
		if (!r && f->secure)
			r = cq_open(f, (size_t)per * LANE_SENDBUFS * 2,
				&w->txcq);
		if (r)
			return r;
	}
	return 0;
}

/*
 * register_pool -- let clients reach the pool by RMA where they may: not
 * at all when the session seals its lanes (every byte travels in sealed
 * messages, rpmemd's own code checks each one), reads only over tcp and
 * sockets (fab_rma_write_ok).  raddr is what clients add offsets to: the
 * pool's address where the provider wants virtual addresses, else 0.
 */
static int
register_pool(struct fabric *f, uint32_t provider)
{
	if (f->secure) {
		f->pool.raddr = 0;
		return 0;
	}
	/*
	 * Providers that take our key (no FI_MR_PROV_KEY) get a random one:
	 * the token keeps strangers off the lanes, this keeps them guessing.
	 */
	uint64_t key;
	if (getrandom(&key, sizeof(key), 0) != (ssize_t)sizeof(key))
		key = (uint64_t)clock_ms();
	key |= MR_KEY_BUFS + 1;
	/* PMDK's client writes by RMA whatever the provider */
	uint64_t access = FI_REMOTE_READ |
		(fab_rma_write_ok(provider) || f->pmdk ? FI_REMOTE_WRITE : 0);
	int r = fi_mr_reg(f->domain, f->pool.base, f->pool.size, access, 0,
		key, 0, &f->pool_mr, NULL);
	if (r) {
		log_err("registering the %zu-byte pool: %s", f->pool.size,
			fab_strerror(r));
		return r;
	}
	f->pool.raddr = (f->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) ?
		(uint64_t)(uintptr_t)f->pool.base : 0;
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
	f->keys = *attr->keys;
	f->secure = f->keys.policy != LANESEC_NONE;
	f->pmdk = attr->pmdk;
	atomic_init(&f->stop, false);
	f->fail_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (f->fail_fd < 0) {
		int err = errno;
		lanesec_wipe(&f->keys, sizeof(f->keys));
		free(f);
		return -err;
	}

	int r = open_resources(f, attr);
	if (r) {
		log_err("%s provider on %s: %s",
			proto_provider_name(attr->provider),
			attr->node ? attr->node : "(any)", fab_strerror(r));
		goto err;
	}
	f->inject_size = f->info->tx_attr->inject_size;
	r = register_pool(f, attr->provider);
	if (r)
		goto err;
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
	ibc->rkey = f->pool_mr ? fi_mr_key(f->pool_mr) : 0;
	ibc->raddr = f->pool.raddr;
	ibc->nlanes = f->nlanes;
	log_notice("listening on %s port %u (%s), %u lanes, %u threads, "
		"pool %s", attr->node ? attr->node : "(any)", ibc->port,
		f->info->fabric_attr->prov_name, f->nlanes, f->nworkers,
		f->pool_mr ? (fab_rma_write_ok(attr->provider) || f->pmdk ?
		"open to RMA reads and writes" : "open to RMA reads") :
		"closed to RMA (every byte travels sealed)");
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
		struct lane *l = &f->lanes[i];
		if (l->ep)
			fab_ep_close(l->ep, true, &l->slots[0].ctx,
				sizeof(l->slots[0]));
		lanesec_stream_fini(&l->rx);
		lanesec_stream_fini(&l->tx);
	}
	for (unsigned i = 0; f->workers && i < f->nworkers; i++) {
		if (f->workers[i].cq)
			fi_close(&f->workers[i].cq->fid);
		if (f->workers[i].txcq)
			fi_close(&f->workers[i].txcq->fid);
	}
	if (f->pep)
		fi_close(&f->pep->fid);
	fab_objs_close(f->pool_mr, f->buf_mr, f->eq, f->domain, f->fabric,
		f->info);
	if (f->fail_fd >= 0)
		close(f->fail_fd);
	lanesec_wipe(&f->keys, sizeof(f->keys));
	free(f->workers);
	free(f->lanes);
	free(f->bufs);
	free(f);
}

/* fabric_fail_fd -- readable once a lane ended the session */
int
fabric_fail_fd(const struct fabric *f)
{
	return f ? f->fail_fd : -1;
}

/* fabric_fail_reason -- why a lane ended the session */
const char *
fabric_fail_reason(const struct fabric *f)
{
	return f->fail_why;
}
