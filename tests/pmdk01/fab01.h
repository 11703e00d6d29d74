/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fab01.h -- the libfabric side of the PMDK stand-in client (pmdk-interop 4.1),
 * kept for what the real PMDK 1.12.1 never sends (hostile.sh)
 *
 * PMDK asks for API 1.4 with FI_MR_BASIC (provider keys, absolute
 * virtual addresses), FI_LOCAL_MR and FI_CONTEXT modes, one FI_EP_MSG
 * endpoint per lane and read-after-write / send-after-write ordering.
 */
#ifndef PMDK01_FAB01_H
#define PMDK01_FAB01_H 1

#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#define F01_API FI_VERSION(1, 4)
#define F01_ACCEPT_MS 30000	/* RPMEM_ACCEPT_TIMEOUT */
#define F01_CONNECT_MS 30000	/* RPMEM_CONNECT_TIMEOUT */

/*
 * an operation's context: FI_CONTEXT mode lends the provider the first
 * bytes until the completion, the rest tells us whose it is
 */
struct f01_ctx {
	struct fi_context fc;	/* first: the provider's scratch */
	void *owner;
	unsigned kind;
};

/* what every side opens from its fi_info: fabric, domain, event queue */
struct f01_base {
	struct fi_info *fi;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_eq *eq;
};

/* f01_base_open -- fabric, domain and event queue of base->fi; 0 or -FI */
int f01_base_open(struct f01_base *b);

/* f01_base_close -- close what is open and free fi */
void f01_base_close(struct f01_base *b);

/*
 * f01_post -- one send (send != 0) or receive of a registered buffer,
 * with a completion for `ctx`; 0 or a negative libfabric code
 */
ssize_t f01_post(struct fid_ep *ep, int send, void *buf, size_t len,
		struct fid_mr *mr, struct f01_ctx *ctx);

/* f01_hints -- PMDK's hints for a provider id (0: any provider) */
struct fi_info *f01_hints(uint32_t provider);

/* f01_max_lanes -- lanes a domain can hold: min of tx, rx and cq counts */
size_t f01_max_lanes(const struct fi_info *fi);

/*
 * f01_eq_read -- one event from an event queue within timeout_ms (-1:
 * forever).  *len is the size of the entry the provider returned, so a
 * caller sees connection data that PMDK's fixed-size read would choke
 * on.  Returns 0, -ETIMEDOUT or another -errno with `err` filled in.
 */
int f01_eq_read(struct fid_eq *eq, uint32_t *event,
		struct fi_eq_cm_entry *entry, size_t *len, int timeout_ms,
		char *err, size_t errlen);

/* f01_cq_error -- the text of the error entry waiting on a CQ */
void f01_cq_error(struct fid_cq *cq, char *buf, size_t len);

/* f01_close -- fi_close if the object exists; returns its result */
int f01_close(struct fid *fid);
#define F01_CLOSE(obj) f01_close((obj) != NULL ? &(obj)->fid : NULL)

#endif /* PMDK01_FAB01_H */
