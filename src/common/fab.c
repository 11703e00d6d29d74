/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fab.c -- what both fabric ends share: provider hints and lane messages
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include "fab.h"
#include "log.h"

_Static_assert(sizeof(struct lane_msg) == 24, "PMDK persist message header");
_Static_assert(sizeof(struct lane_resp) == 8, "PMDK persist response");

/* fab_getinfo -- fi_getinfo with the hints both ends use */
int
fab_getinfo(uint32_t provider, const char *node, const char *service,
		uint64_t flags, struct fi_info **info)
{
	const char *name = proto_provider_name(provider);
	if (provider == PROTO_PROV_UNKNOWN || provider >= PROTO_PROV_MAX)
		return -EINVAL;

	int r = fablib_load();
	if (r)
		return r;
	struct fi_info *hints = fablib_dupinfo(NULL);
	if (!hints)
		return -ENOMEM;
	hints->ep_attr->type = FI_EP_MSG;
	hints->caps = FI_MSG | FI_RMA;
	hints->mode = FI_CONTEXT;
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
		FI_MR_PROV_KEY | FI_MR_LOCAL;
	hints->domain_attr->threading = FI_THREAD_SAFE;
	/* sealed messages are numbered: sends must arrive in order */
	hints->tx_attr->msg_order = FI_ORDER_SAW | FI_ORDER_RAW | FI_ORDER_SAS;
	hints->tx_attr->iov_limit = 2;	/* message header + pool bytes */
	hints->fabric_attr->prov_name = strdup(name);
	if (!hints->fabric_attr->prov_name) {
		fablib_freeinfo(hints);
		return -ENOMEM;
	}

	r = fablib_getinfo(FAB_API_VERSION, node, service, flags, hints,
		info);
	fablib_freeinfo(hints);
	if (r) {
		log_info("fi_getinfo(%s, node %s, service %s): %s", name,
			node ? node : "-", service ? service : "-",
			fablib_strerror(-r));
		return -fab_errno(r);
	}
	return 0;
}

/* fab_domain_open -- fabric, domain and event queue of `info` */
int
fab_domain_open(struct fi_info *info, struct fid_fabric **fabric,
		struct fid_domain **domain, struct fid_eq **eq)
{
	int r = fablib_fabric(info->fabric_attr, fabric, NULL);
	if (!r)
		r = fi_domain(*fabric, info, domain, NULL);
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };
	if (!r)
		r = fi_eq_open(*fabric, &eq_attr, eq, NULL);
	return r;
}

/* fab_listen -- a passive endpoint reporting to `eq`, listening */
int
fab_listen(struct fid_fabric *fabric, struct fi_info *info,
		struct fid_eq *eq, struct fid_pep **pep)
{
	int r = fi_passive_ep(fabric, info, pep, NULL);
	if (!r)
		r = fi_pep_bind(*pep, &eq->fid, 0);
	if (!r)
		r = fi_listen(*pep);
	return r;
}

/* fab_ep_open -- a lane's completion queue and its endpoint, enabled */
int
fab_ep_open(struct fid_domain *domain, struct fi_info *info,
		struct fid_eq *eq, size_t cq_size, void *ctx,
		struct fid_cq **cq, struct fid_ep **ep)
{
	struct fi_cq_attr cq_attr = {
		.size = cq_size,
		.format = FI_CQ_FORMAT_MSG,
		.wait_obj = FI_WAIT_UNSPEC,
	};
	int r = fi_cq_open(domain, &cq_attr, cq, NULL);
	if (!r)
		r = fi_endpoint(domain, info, ep, ctx);
	if (!r)
		r = fi_ep_bind(*ep, &eq->fid, 0);
	if (!r)
		r = fi_ep_bind(*ep, &(*cq)->fid,
			FI_TRANSMIT | FI_SELECTIVE_COMPLETION);
	if (!r)
		r = fi_ep_bind(*ep, &(*cq)->fid, FI_RECV);
	if (!r)
		r = fi_enable(*ep);
	return r;
}

/* fab_fd_budget -- lanes the descriptor limit leaves room for */
unsigned
fab_fd_budget(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return 1U << 16;
	return rl.rlim_cur > 64 ? (unsigned)((rl.rlim_cur - 64) / 4) : 1;
}

/* fab_strerror -- libfabric error text */
const char *
fab_strerror(int err)
{
	return fablib_strerror(err < 0 ? -err : err);
}

/* fab_errno -- libfabric codes above the errno range become EIO */
int
fab_errno(ssize_t ret)
{
	int e = (int)(ret < 0 ? -ret : ret);
	if (e == FI_EAGAIN)
		return EAGAIN;
	if (e >= FI_ERRNO_OFFSET)
		return e == FI_ETRUNC ? EMSGSIZE : EIO;
	return e ? e : EIO;
}

/* fab_eq_err -- the error of the entry waiting on `eq` (-FI_EAVAIL) */
int
fab_eq_err(struct fid_eq *eq)
{
	struct fi_eq_err_entry e;
	memset(&e, 0, sizeof(e));
	(void) fi_eq_readerr(eq, &e, 0);
	return e.err;
}

/* fab_ep_close -- shut down, cancel the posted receives, close */
void
fab_ep_close(struct fid_ep *ep, bool shutdown, void *ctx, size_t stride)
{
	if (shutdown)
		(void) fi_shutdown(ep, 0);
	/* some providers leak receives still posted at close */
	for (unsigned j = 0; j < LANE_SLOTS; j++)
		(void) fi_cancel(&ep->fid, (char *)ctx + j * stride);
	fi_close(&ep->fid);
}

/* fab_objs_close -- close whichever of the common objects are open */
void
fab_objs_close(struct fid_mr *pool_mr, struct fid_mr *buf_mr,
		struct fid_eq *eq, struct fid_domain *domain,
		struct fid_fabric *fabric, struct fi_info *info)
{
	if (pool_mr)
		fi_close(&pool_mr->fid);
	if (buf_mr)
		fi_close(&buf_mr->fid);
	if (eq)
		fi_close(&eq->fid);
	if (domain)
		fi_close(&domain->fid);
	if (fabric)
		fi_close(&fabric->fid);
	if (info)
		fablib_freeinfo(info);
}
