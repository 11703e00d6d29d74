/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tu_stranger.c -- strangers at a lane port (scenario S2): a plain TCP
 * connection, and a libfabric connection request with any connection data
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include "tu.h"

/* answer -- the first connection event on eq: 1 in, 0 refused, or -code */
static int
answer(struct fid_eq *eq, int ms)
{
	int ret = -FI_ETIMEDOUT;
	long long deadline = tu_now_ms() + ms;
	while (tu_now_ms() < deadline) {
		uint32_t event;
		char buf[sizeof(struct fi_eq_cm_entry) + 256];
		ssize_t m = fi_eq_sread(eq, &event, buf, sizeof(buf), 100, 0);
		if (m == -FI_EAVAIL) {
			struct fi_eq_err_entry e;
			memset(&e, 0, sizeof(e));
			(void) fi_eq_readerr(eq, &e, 0);
			return e.err == FI_ECONNREFUSED ? 0 : -e.err;
		}
		if (m > 0 && (event == FI_CONNECTED || event == FI_SHUTDOWN))
			return event == FI_CONNECTED;
	}
	return ret;
}

/* tu_fabric_stranger -- one connection request carrying `len` bytes */
int
tu_fabric_stranger(const char *prov, const char *addr, unsigned port,
	const void *data, size_t len, int ms)
{
	char service[16];
	snprintf(service, sizeof(service), "%u", port);
	struct fi_info *hints = fi_allocinfo(), *info = NULL;
	if (!hints)
		return -FI_ENOMEM;
	hints->ep_attr->type = FI_EP_MSG;
	hints->caps = FI_MSG;
	hints->mode = FI_CONTEXT;
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
		FI_MR_PROV_KEY | FI_MR_LOCAL;
	hints->fabric_attr->prov_name = strdup(prov);
	int r = fi_getinfo(FI_VERSION(1, 10), addr, service, 0, hints, &info);
	fi_freeinfo(hints);
	if (r)
		return r;
	struct fid_fabric *fab = NULL;
	struct fid_domain *dom = NULL;
	struct fid_eq *eq = NULL;
	struct fid_cq *cq = NULL;
	struct fid_ep *ep = NULL;
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };
	struct fi_cq_attr cq_attr = { .size = 8, .format = FI_CQ_FORMAT_MSG,
		.wait_obj = FI_WAIT_UNSPEC };
	r = fi_fabric(info->fabric_attr, &fab, NULL);
	if (!r)
		r = fi_domain(fab, info, &dom, NULL);
	if (!r)
		r = fi_eq_open(fab, &eq_attr, &eq, NULL);
	if (!r)
		r = fi_cq_open(dom, &cq_attr, &cq, NULL);
	if (!r)
		r = fi_endpoint(dom, info, &ep, NULL);
	if (!r)
		r = fi_ep_bind(ep, &eq->fid, 0);
	if (!r)
		r = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV);
	if (!r)
		r = fi_enable(ep);
	if (!r)
		r = fi_connect(ep, info->dest_addr, data, len);
	int ret = r ? r : answer(eq, ms);
	/* closed in the reverse order of their opening */
	struct fid *opened[] = { ep ? &ep->fid : NULL, cq ? &cq->fid : NULL,
		eq ? &eq->fid : NULL, dom ? &dom->fid : NULL,
		fab ? &fab->fid : NULL };
	for (size_t i = 0; i < TU_NELEMS(opened); i++)
		if (opened[i])
			fi_close(opened[i]);
	fi_freeinfo(info);
	return ret;
}

/* tu_tcp_stranger -- a plain TCP connection; fd or -errno */
int
tu_tcp_stranger(const char *addr, unsigned port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
		.sin_port = htons((uint16_t)port) };
	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1)
		return -EINVAL;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin))) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}
