/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fabric_int.h -- what fabric.c (lanes at work) and fabric_conn.c
 * (choosing, connecting, watching and closing them) share
 */
#ifndef RPMEM_FABRIC_INT_H
#define RPMEM_FABRIC_INT_H 1

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>

#include "fab.h"
#include "fabric.h"
#include "lanesec.h"
#include "spin.h"

#define CQ_BATCH 16
#define SLICE_MS 100		/* recheck the sticky error this often */
#define SMALL_SLOT 64		/* tag room + a header, or an answer */
#define BATCH_MAX (64 * 1024)	/* bytes of one batch of small flushes */
#define BATCH_ITEM_MAX 4096	/* larger flushes are sent on their own */

/* keys of local registrations, for providers that take ours */
#define MR_KEY_BUFS 1
#define MR_KEY_POOL 2
#define MR_KEY_READ 3		/* and up: one per read in flight */

enum op_kind { OP_SEND, OP_RECV, OP_READ };

/* what a completion's context points at: fi_context must come first */
struct op {
	struct fi_context ctx;
	enum op_kind kind;
	bool busy;
	void *buf;
};

/* what a message in flight waits for: an answer, with bytes for a READ */
struct expect {
	char *dst;			/* READ: where its bytes go */
	size_t len;			/* READ: how many */
};

/*
 * Every buffer keeps LANE_HDR_OFF bytes in front of the message for the
 * tag of a sealed session; unsealed messages are sent from, and answers
 * land at, buf + LANE_HDR_OFF.
 */
struct lane {
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct op send[LANE_SLOTS];	/* buf: lane_msg (+ data if sealed) */
	struct op recv[LANE_SLOTS];	/* buf: lane_resp (+ read bytes) */
	struct op read;			/* buf: APM read target */
	struct op batch[LANE_SLOTS];	/* buf: lane_msg + lane_rec records */
	unsigned nbatch;		/* 2; an async sender's lane: its
					 * window (FABRIC_EPOCHS_WINDOW) */
	unsigned bcur;			/* batch being filled */
	size_t bused;			/* its record bytes */
	unsigned next;			/* next send slot */
	unsigned inflight;		/* messages not answered yet */
	unsigned ehead;			/* expect[] of the oldest of them */
	struct expect expect[LANE_SLOTS];
	unsigned reads;			/* reads not completed yet */
	int status;			/* first remote error since drain */
	int rstatus;			/* first remote error of a read */
	bool written;			/* APM: writes not yet made durable */
	bool connected;
	struct spin spin;		/* polls before sleeping in the kernel */
	struct lanesec_stream tx;	/* seals our messages */
	struct lanesec_stream rx;	/* opens rpmemd's answers */
};

struct fabric {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_eq *eq;
	struct fid_mr *buf_mr;
	struct fid_mr *pool_mr;
	void *buf_desc;
	void *pool_desc;
	char *bufs;
	size_t stride;			/* registered bytes per lane */
	size_t slot_size;		/* a send slot */
	size_t rslot_size;		/* an answer slot */
	size_t batch_cap;		/* record bytes of one batch */
	size_t epochs_cap;		/* of one async sender's message */
	unsigned epochs_lane;		/* the async sender's (nlanes: none) */
	size_t buff_size;
	size_t max_msg;
	char *pool_addr;
	size_t pool_size;
	uint64_t raddr;
	uint64_t rkey;
	uint32_t pm;
	enum lanesec_policy policy;	/* how messages are sealed */
	bool pmdk;			/* rpmemd is PMDK 1.12's (fabric.h) */
	bool strict_rma;		/* PMDK's, sockets: big strict by RMA */
	unsigned window;		/* messages in flight per lane */
	bool rma_write;			/* relaxed persists by RMA write */
	bool local_mr;			/* provider wants local buffers registered */
	unsigned nlanes;
	struct lane *lanes;
	int timeout_ms;
	struct spin_conf spin;		/* how a lane spins */
	int ssh_fd;
	int (*watch)(void *arg);	/* fabric_attr's */
	void *watch_arg;
	int watch_ms;
	void (*on_break)(void *arg);	/* fabric_attr's */
	void *break_arg;
	int stop_fd;
	int eq_fd;			/* -1: the event queue has none */
	pthread_t monitor;
	bool monitor_running;
	_Atomic int error;
};

/* fabric_post_recv -- give a response slot back to the lane */
int fabric_post_recv(struct fabric *f, struct lane *l, struct op *op);

#endif /* RPMEM_FABRIC_INT_H */
