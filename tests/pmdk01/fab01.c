/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fab01.c -- libfabric helpers of the PMDK stand-in client (hostile.sh)
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fab01.h"
#include "wire01.h"

/* room for connection data after the entry: PMDK never sends any */
#define EQ_DATA_ROOM 256

/* f01_hints -- PMDK's hints (pmdk-interop 4.1) for a provider id */
struct fi_info *
f01_hints(uint32_t provider)
{
	struct fi_info *hints = fi_allocinfo();
	if (hints == NULL)
		return NULL;

	hints->ep_attr->type = FI_EP_MSG;
	hints->domain_attr->mr_mode = FI_MR_BASIC;
	hints->domain_attr->threading = FI_THREAD_SAFE;
	hints->caps = FI_MSG | FI_RMA;
	hints->mode = FI_CONTEXT | FI_LOCAL_MR | FI_RX_CQ_DATA;
	hints->tx_attr->msg_order = FI_ORDER_RAW | FI_ORDER_SAW;
	hints->addr_format = FI_SOCKADDR;

	const char *name = w01_provider_name(provider);
	if (name != NULL) {
		hints->fabric_attr->prov_name = strdup(name);
		if (hints->fabric_attr->prov_name == NULL) {
			fi_freeinfo(hints);
			return NULL;
		}
	}
	return hints;
}

/* f01_base_open -- what both sides open first, as PMDK does */
int
f01_base_open(struct f01_base *b)
{
	struct fi_eq_attr eq_attr = {.wait_obj = FI_WAIT_UNSPEC};

	int ret = fi_fabric(b->fi->fabric_attr, &b->fabric, NULL);
	if (ret == 0)
		ret = fi_domain(b->fabric, b->fi, &b->domain, NULL);
	if (ret == 0)
		ret = fi_eq_open(b->fabric, &eq_attr, &b->eq, NULL);
	return ret;
}

/* f01_base_close -- the reverse of f01_base_open, and the info */
void
f01_base_close(struct f01_base *b)
{
	F01_CLOSE(b->eq);
	F01_CLOSE(b->domain);
	F01_CLOSE(b->fabric);
	fi_freeinfo(b->fi);
	*b = (struct f01_base){NULL, NULL, NULL, NULL};
}

/* f01_post -- fi_sendmsg or fi_recvmsg of one buffer, completion asked */
ssize_t
f01_post(struct fid_ep *ep, int send, void *buf, size_t len,
		struct fid_mr *mr, struct f01_ctx *ctx)
{
	struct iovec iov = {buf, len};
	void *desc = fi_mr_desc(mr);
	struct fi_msg msg = {
		.msg_iov = &iov, .desc = &desc, .iov_count = 1,
		.context = ctx,
	};

	return send ? fi_sendmsg(ep, &msg, FI_COMPLETION) :
		fi_recvmsg(ep, &msg, FI_COMPLETION);
}

/* f01_max_lanes -- min(tx_ctx_cnt, rx_ctx_cnt, cq_cnt) of the domain */
size_t
f01_max_lanes(const struct fi_info *fi)
{
	size_t n = fi->domain_attr->tx_ctx_cnt;

	if (fi->domain_attr->rx_ctx_cnt < n)
		n = fi->domain_attr->rx_ctx_cnt;
	if (fi->domain_attr->cq_cnt < n)
		n = fi->domain_attr->cq_cnt;
	return n;
}

/* f01_eq_read -- one event, its entry size, or a timeout or error */
int
f01_eq_read(struct fid_eq *eq, uint32_t *event,
		struct fi_eq_cm_entry *entry, size_t *len, int timeout_ms,
		char *err, size_t errlen)
{
	union {
		struct fi_eq_cm_entry cm;
		unsigned char raw[sizeof(struct fi_eq_cm_entry) +
			EQ_DATA_ROOM];
	} buf;

	memset(&buf, 0, sizeof(buf));
	ssize_t n = fi_eq_sread(eq, event, &buf, sizeof(buf), timeout_ms, 0);
	if (n == -FI_ETIMEDOUT || n == -FI_EAGAIN) {
		snprintf(err, errlen, "timed out after %d ms", timeout_ms);
		return -ETIMEDOUT;
	}
	if (n == -FI_EAVAIL) {
		struct fi_eq_err_entry ee;
		memset(&ee, 0, sizeof(ee));
		if (fi_eq_readerr(eq, &ee, 0) > 0) {
			snprintf(err, errlen, "%s (%s)",
				fi_strerror(ee.err), fi_eq_strerror(eq,
				ee.prov_errno, ee.err_data, NULL, 0));
			return ee.err > 0 ? -ee.err : -EIO;
		}
		snprintf(err, errlen, "an error event could not be read");
		return -EIO;
	}
	if (n < 0) {
		snprintf(err, errlen, "%s", fi_strerror((int)-n));
		return (int)n;
	}
	if ((size_t)n < sizeof(struct fi_eq_cm_entry)) {
		snprintf(err, errlen, "short event entry of %zd bytes", n);
		return -EIO;
	}
	*entry = buf.cm;
	*len = (size_t)n;
	return 0;
}

/* f01_cq_error -- read the error entry of a CQ into text */
void
f01_cq_error(struct fid_cq *cq, char *buf, size_t len)
{
	struct fi_cq_err_entry ee;

	memset(&ee, 0, sizeof(ee));
	if (fi_cq_readerr(cq, &ee, 0) <= 0) {
		snprintf(buf, len, "an error completion could not be read");
		return;
	}
	snprintf(buf, len, "%s (%s)", fi_strerror(ee.err),
		fi_cq_strerror(cq, ee.prov_errno, ee.err_data, NULL, 0));
}

/* f01_close -- close a fabric object that may not exist */
int
f01_close(struct fid *fid)
{
	return fid != NULL ? fi_close(fid) : 0;
}
