/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fab.h -- what both fabric ends share: provider hints and lane messages
 *
 * One libfabric FI_EP_MSG endpoint per lane.  On a lane the client sends
 * lane_msg (header + optional inline data) and rpmemd answers every
 * message with a lane_resp (+ data for LANE_OP_READ), in order.  Native
 * byte order: both ends of a session run the same architecture (as in
 * PMDK).
 *
 * Under lane security (lanesec.h) every message, both ways, travels as
 * a LANESEC_TAG_LEN-byte tag followed by the message, sealed by the
 * sender's stream of that lane.  Buffers keep room for the tag in front
 * of every header (LANE_HDR_OFF), so the header sits at the same place
 * whether or not a session seals its messages.
 */
#ifndef RPMEM_FAB_H
#define RPMEM_FAB_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>

#include "fablib.h"
#include "lanesec.h"
#include "proto.h"

#define FAB_API_VERSION FI_VERSION(1, 10)

/* lane_msg.op values */
enum lane_op {
	LANE_OP_WRITTEN = 0,	/* bytes came by RMA write: persist them */
	LANE_OP_INLINE = 2,	/* bytes inline: 8-byte-atomic copy, persist */
	LANE_OP_BATCH = 3,	/* lane_rec records, each handled as INLINE */
	LANE_OP_READ = 4,	/* secured sessions: answer with the bytes */
	LANE_OP_EPOCHS = 5,	/* lane_rec records in epochs (minor 8) */
};

#define LANE_F_DEEP 0x100U	/* deep persist instead of persist */
#define LANE_F_MORE 0x200U	/* more pieces follow: persist with the last */
#define LANE_OP_MASK 0xffU

struct lane_msg {
	uint32_t op;		/* enum lane_op | LANE_F_* */
	uint32_t lane;		/* echoed in the response */
	uint64_t addr;		/* raddr + pool offset */
	uint64_t size;		/* bytes to persist (inline: bytes that follow) */
	uint8_t data[];
};

/*
 * one record of a LANE_OP_BATCH message: small flushes of a lane gathered
 * by the client and sent together at drain time, so a drain costs one
 * round trip however many flushes came before it
 */
struct lane_rec {
	uint64_t addr;		/* raddr + pool offset */
	uint64_t len;		/* data bytes that follow, padded to 8 */
	uint8_t data[];
};

/*
 * In a LANE_OP_EPOCHS message a record whose len carries LANE_REC_END
 * ends an epoch: rpmemd makes every record up to it durable before it
 * stores a byte of the next (an async replica's order, doc/async.md).
 * A LANE_OP_BATCH is one epoch; its records never carry the bit.
 */
#define LANE_REC_END (1ULL << 63)

/* lane_rec_size -- bytes a record of `len` data bytes takes */
static inline size_t
lane_rec_size(size_t len)
{
	return sizeof(struct lane_rec) + ((len + 7) & ~(size_t)7);
}

struct lane_resp {
	uint32_t status;	/* 0 or a positive errno */
	uint32_t lane;
	uint8_t data[];		/* LANE_OP_READ: the bytes asked for */
};

/* where a message starts in its buffer: after room for the tag */
#define LANE_HDR_OFF LANESEC_TAG_LEN

/*
 * what a connection request carries (scenario S2): a one-use token
 * derived from the session's keys, never a key or a reusable secret
 */
#define LANE_CONN_MAGIC 0x52504d4cU	/* "RPML" */
struct lane_conn {
	uint32_t magic;
	uint32_t lane;
	uint8_t token[LANESEC_TOKEN_LEN];
};

/*
 * Inline buffers: slots per lane, the buffer a client asks for and the
 * largest one rpmemd agrees to.  Sealed lanes use at most
 * LANE_SEALED_BUFF: each end seals or opens a whole message before the
 * next step, so larger pieces stall the pipeline more than per-message
 * costs save; unsealed pieces pay mostly per message (tests/perf).
 * LANE_BUFF_WISH is what a client asks for: a whole buffer and one
 * record header (LANE_REC_ROOM), so that an async sender's LANE_OP_EPOCHS
 * message carries a record of a whole buffer's bytes: a 1 MiB persist
 * as two records, not two and a 32-byte third (doc/async.md).  The
 * client's pieces stay whole pages (lane_buffs).
 */
#define LANE_SLOTS 4
#define LANE_BUFF_DEFAULT (512 * 1024)
#define LANE_SEALED_BUFF (256 * 1024)
#define LANE_BUFF_MAX (1024 * 1024)
#define LANE_REC_ROOM sizeof(struct lane_rec)
#define LANE_BUFF_WISH (LANE_BUFF_DEFAULT + LANE_REC_ROOM)

/*
 * lane_buffs -- of the buffer rpmemd granted: a piece, whole pages of it
 * and at most `most`; an async sender's message body, a piece and its
 * record header where the grant holds both, else a piece
 */
static inline void
lane_buffs(size_t granted, size_t most, size_t *piece, size_t *epochs)
{
	size_t p = granted > 4096 ? granted & ~(size_t)4095 : granted;
	p = p < most ? p : most;
	*piece = p;
	*epochs = p + LANE_REC_ROOM <= granted ? p + LANE_REC_ROOM : p;
}

/* rpmemd's message buffers of one session never exceed this */
#define LANE_MEM_MAX ((size_t)64 << 20)
/* rpmemd's send buffers per lane for read answers of secured sessions */
#define LANE_SENDBUFS 2

/* lane_slot_size -- bytes of one message slot for a given buff_size */
static inline size_t
lane_slot_size(size_t buff_size)
{
	return (LANE_HDR_OFF + sizeof(struct lane_msg) + buff_size + 63) &
		~(size_t)63;
}

/*
 * fab_getinfo -- fi_getinfo for a provider with the hints both sides use
 * (FI_EP_MSG, FI_MSG | FI_RMA, send-after-write and read-after-write
 * ordering).  `flags` FI_SOURCE for a listener.  Returns 0 or -errno.
 */
int fab_getinfo(uint32_t provider, const char *node, const char *service,
		uint64_t flags, struct fi_info **info);

/*
 * fab_rma_write_ok -- may clients RMA-write into the pool?  Only on RDMA
 * hardware (verbs).  Over tcp and sockets an RMA write is carried out by
 * rpmemd's own provider code, which would apply writes that arrive while
 * rpmemd is stopped even after the client gave up on them (scenario
 * R3); there relaxed persists travel inline like strict ones, and the
 * pool is registered for remote reads only.
 */
static inline bool
fab_rma_write_ok(uint32_t provider)
{
	return provider == PROTO_PROV_VERBS;
}

/*
 * fab_domain_open -- open the fabric, the domain and an event queue
 * (FI_WAIT_UNSPEC) of `info`, stopping at the first that fails; returns
 * 0 or a negative libfabric code, what is open left to the caller
 */
int fab_domain_open(struct fi_info *info, struct fid_fabric **fabric,
		struct fid_domain **domain, struct fid_eq **eq);

/*
 * fab_listen -- open a passive endpoint of `info`, bind it to `eq` and
 * listen; 0 or a negative libfabric code, *pep left to the caller
 */
int fab_listen(struct fid_fabric *fabric, struct fi_info *info,
		struct fid_eq *eq, struct fid_pep **pep);

/*
 * fab_ep_open -- open a completion queue of `cq_size` entries and an
 * endpoint of `info` with context `ctx`, bound to `eq` and to the queue
 * (sends completing only when asked: FI_SELECTIVE_COMPLETION), enabled;
 * stops at the first step that fails and returns 0 or a negative
 * libfabric code, *cq and *ep left to the caller to close
 */
int fab_ep_open(struct fid_domain *domain, struct fi_info *info,
		struct fid_eq *eq, size_t cq_size, void *ctx,
		struct fid_cq **cq, struct fid_ep **ep);

/*
 * fab_fd_budget -- lanes the descriptor limit leaves room for: a lane
 * costs a socket plus the provider's wait descriptors, about four
 */
unsigned fab_fd_budget(void);

/* fab_strerror -- libfabric error text for a negative return */
const char *fab_strerror(int err);

/* fab_errno -- a positive errno for a libfabric return code */
int fab_errno(ssize_t ret);

/* fab_eq_err -- the error of the entry waiting on `eq` (-FI_EAVAIL) */
int fab_eq_err(struct fid_eq *eq);

/*
 * fab_ep_close -- shut a lane's endpoint down (when `shutdown`), cancel
 * the LANE_SLOTS receives posted with the contexts ctx, ctx + stride...,
 * and close it
 */
void fab_ep_close(struct fid_ep *ep, bool shutdown, void *ctx,
		size_t stride);

/*
 * fab_objs_close -- close those of the objects both ends hold that are
 * open: the pool's and the buffers' registrations, the event queue, the
 * domain, the fabric and the fi_info
 */
void fab_objs_close(struct fid_mr *pool_mr, struct fid_mr *buf_mr,
		struct fid_eq *eq, struct fid_domain *domain,
		struct fid_fabric *fabric, struct fi_info *info);

#endif /* RPMEM_FAB_H */
