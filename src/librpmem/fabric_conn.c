/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fabric_conn.c -- librpmem's lanes: provider choice, connection set-up,
 * the monitor that notices a lost peer, and tear-down
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include "clock.h"
#include "fabric_int.h"
#include "log.h"

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

/* fabric_probe_first -- must the provider be chosen before ssh? */
bool
fabric_probe_first(void)
{
	const char *forced = getenv("RPMEM_PROVIDER");
	if (forced && *forced) {
		uint32_t p = proto_provider_parse(forced);
		return p == PROTO_PROV_SOCKETS || p == PROTO_PROV_UNKNOWN;
	}
	return env_flag("RPMEM_ENABLE_SOCKETS") > 0;
}

/* fabric_provider_check -- can a provider reach the node? */
int
fabric_provider_check(const char *node, uint32_t provider,
		unsigned *max_lanes)
{
	struct fi_info *info;
	int r = fab_getinfo(provider, node, NULL, 0, &info);
	if (r)
		return r == -ENOMEM || r == -ELIBACC ? r : -ENOMEDIUM;
	*max_lanes = lane_limit(info);
	fablib_freeinfo(info);
	return 0;
}

/* fabric_provider -- pick the provider for a node (see fabric.h) */
int
fabric_provider(const char *node, uint32_t *provider, unsigned *max_lanes)
{
	const char *forced = getenv("RPMEM_PROVIDER");
	if (forced && *forced) {
		uint32_t p = proto_provider_parse(forced);
		if (p == PROTO_PROV_UNKNOWN)
			return -EINVAL;
		int r = fabric_provider_check(node, p, max_lanes);
		if (r)
			return r;
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
		/* out of memory is no reason to settle for the next one */
		int r = fabric_provider_check(node, p, max_lanes);
		if (r == -ENOMEM || r == -ELIBACC)
			return r;
		if (r == 0) {
			*provider = p;
			return 0;
		}
	}
	return -ENOMEDIUM;
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
			(void) fab_eq_err(f->eq);
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
 * queue has a descriptor to wait on; with a watch, call it every
 * watch_ms and when the channel turns readable (rpmemd's beats)
 */
static void *
monitor_run(void *arg)
{
	struct fabric *f = arg;
	struct fid *fids[1] = { &f->eq->fid };
	bool busy = false;	/* the watch cannot read the channel now */
	for (;;) {
		eq_drain(f);
		/* once broken, the channel's end is old news */
		bool broken = fabric_error(f) != 0;
		bool watching = f->watch && !broken;
		struct pollfd pfd[3] = {
			{ .fd = f->stop_fd, .events = POLLIN },
			{ .fd = broken ? -1 : f->ssh_fd, .events = POLLRDHUP |
				(watching && !busy ? POLLIN : 0) },
			{ .fd = f->eq_fd, .events = POLLIN },
		};
		int timeout = SLICE_MS;
		if (f->eq_fd >= 0) {
			if (fi_trywait(f->fabric, fids, 1) != FI_SUCCESS)
				continue;
			timeout = -1;
		}
		if (watching && (timeout < 0 || f->watch_ms < timeout))
			timeout = f->watch_ms;
		int n = poll(pfd, f->eq_fd >= 0 ? 3 : 2, timeout);
		if (n > 0 && pfd[0].revents)
			break;
		if (n > 0 && (pfd[1].revents & (POLLRDHUP | POLLHUP | POLLERR)))
			fabric_break(f, ECONNRESET);
		if (watching) {
			int w = f->watch(f->watch_arg);
			if (w < 0)
				fabric_break(f, -w);
			busy = w == 1;
		}
	}
	return NULL;
}

/* batch_size -- bytes of a batch buffer: tag room, header, `cap` bytes */
static size_t
batch_size(size_t cap)
{
	return (LANE_HDR_OFF + sizeof(struct lane_msg) + cap + 63) &
		~(size_t)63;
}

/*
 * lane_bufs -- carve the lane's share of the registered buffers: send
 * slots, answer slots, the APM read word, two batches; an async
 * sender's lane its window of large ones, after every lane's share
 */
static void
lane_bufs(struct fabric *f, unsigned i, char *base)
{
	struct lane *l = &f->lanes[i];
	for (unsigned j = 0; j < LANE_SLOTS; j++) {
		l->send[j] = (struct op){ .kind = OP_SEND, .buf = base };
		base += f->slot_size;
	}
	for (unsigned j = 0; j < LANE_SLOTS; j++) {
		l->recv[j] = (struct op){ .kind = OP_RECV, .buf = base };
		base += f->rslot_size;
	}
	l->read = (struct op){ .kind = OP_READ, .buf = base };
	base += SMALL_SLOT;
	size_t size = batch_size(f->batch_cap);
	l->nbatch = 2;
	if (i == f->epochs_lane) {
		base = f->bufs + f->stride * f->nlanes;
		size = batch_size(f->epochs_cap);
		l->nbatch = FABRIC_EPOCHS_WINDOW;
	}
	for (unsigned j = 0; j < l->nbatch; j++) {
		l->batch[j] = (struct op){ .kind = OP_SEND, .buf = base };
		base += size;
	}
}

/* lane_open -- endpoint, completion queue, answer slots, connect */
static int
lane_open(struct fabric *f, unsigned i, const struct lanesec_keys *keys)
{
	struct lane *l = &f->lanes[i];
	lane_bufs(f, i, f->bufs + (size_t)i * f->stride);
	spin_init(&l->spin, f->spin);
	int r = lanesec_stream_init(&l->tx, keys, LANESEC_C2S, i, true);
	if (!r)
		r = lanesec_stream_init(&l->rx, keys, LANESEC_S2C, i, false);
	if (r)
		return r;

	r = fab_ep_open(f->domain, f->info, f->eq, 4 * LANE_SLOTS + 4, l,
		&l->cq, &l->ep);
	for (unsigned j = 0; !r && j < LANE_SLOTS; j++)
		r = fabric_post_recv(f, l, &l->recv[j]);
	if (r)
		return r;
	/* PMDK's rpmemd takes lanes in order, with no connection data */
	if (f->pmdk)
		return fi_connect(l->ep, f->info->dest_addr, NULL, 0);
	struct lane_conn conn = { .magic = LANE_CONN_MAGIC, .lane = i };
	r = lanesec_token(keys, i, conn.token);
	if (r)
		return r;
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
			log_err("lane connection refused: %s",
				fablib_strerror(fab_eq_err(f->eq)));
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

	r = fablib_fabric(f->info->fabric_attr, &f->fabric, NULL);
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

	/*
	 * Unencrypted, a send slot holds a header: the data goes straight
	 * from the pool.  Sealed, answers may carry read bytes; encrypted,
	 * the data is encrypted into the slot.  Pages of the large slots
	 * are touched only when used.
	 */
	bool sealed = f->policy != LANESEC_NONE;
	size_t big = lane_slot_size(f->buff_size);
	f->slot_size = f->policy == LANESEC_ENCRYPT ? big : SMALL_SLOT;
	f->rslot_size = sealed ? big : SMALL_SLOT;
	f->batch_cap = f->buff_size < BATCH_MAX ? f->buff_size : BATCH_MAX;
	f->stride = (LANE_SLOTS * (f->slot_size + f->rslot_size) +
		SMALL_SLOT + 2 * batch_size(f->batch_cap) + 4095) &
		~(size_t)4095;
	size_t total = f->stride * f->nlanes;
	if (f->epochs_lane < f->nlanes)
		total += FABRIC_EPOCHS_WINDOW * batch_size(f->epochs_cap);
	if (posix_memalign((void **)&f->bufs, 4096, total))
		return -ENOMEM;
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
	f->policy = attr->keys->policy;
	f->pmdk = attr->pmdk;
	f->window = f->pmdk ? 1 : LANE_SLOTS;
	/*
	 * PMDK's own client sends a strict persist over its rpmemd's inline
	 * buffer as RMA writes over sockets, as 8 KiB inline pieces over
	 * verbs (pmdk-interop 4.7): ours does the same on each, giving neither
	 * less atomicity nor less speed than it
	 */
	f->strict_rma = f->pmdk && attr->provider == PROTO_PROV_SOCKETS;
	/*
	 * Sealed sessions send every byte in messages rpmemd checks; PMDK's
	 * rpmemd takes RMA writes over every provider.
	 */
	f->rma_write = (fab_rma_write_ok(attr->provider) || f->pmdk) &&
		f->policy == LANESEC_NONE;
	/*
	 * pieces of whole pages, and an async sender's body one record
	 * header more where rpmemd granted it (LANE_BUFF_WISH); an older
	 * rpmemd may grant sealed lanes more than they use well
	 */
	lane_buffs(attr->buff_size, f->policy != LANESEC_NONE ?
		LANE_SEALED_BUFF : SIZE_MAX, &f->buff_size, &f->epochs_cap);
	f->timeout_ms = attr->timeout_ms;
	f->spin = spin_conf_env(attr->writes_back ? SPIN_GROW_US :
		SPIN_DEFAULT_US);
	f->ssh_fd = attr->ssh_fd;
	f->watch = attr->watch;
	f->watch_arg = attr->watch_arg;
	f->on_break = attr->on_break;
	f->break_arg = attr->break_arg;
	f->watch_ms = attr->watch_ms > 0 ? attr->watch_ms : SLICE_MS;
	f->stop_fd = -1;
	f->eq_fd = -1;
	f->nlanes = attr->nlanes;
	f->epochs_lane = attr->epochs_lane && f->nlanes ? f->nlanes - 1 :
		f->nlanes;
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
		r = lane_open(f, i, attr->keys);
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
		if (l->ep)
			fab_ep_close(l->ep, l->connected, &l->recv[0].ctx,
				sizeof(l->recv[0]));
		if (l->cq)
			fi_close(&l->cq->fid);
		lanesec_stream_fini(&l->tx);
		lanesec_stream_fini(&l->rx);
	}
	fab_objs_close(f->pool_mr, f->buf_mr, f->eq, f->domain, f->fabric,
		f->info);
	free(f->bufs);
	free(f->lanes);
	free(f);
}
