/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fabric_int.h -- what rpmemd's fabric.c (listener, admission, set-up,
 * tear-down) and fabric_lane.c (the workers that serve lanes) share
 */
#ifndef RPMEMD_FABRIC_INT_H
#define RPMEMD_FABRIC_INT_H 1

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include <rdma/fabric.h>

#include "fabric.h"
#include "lanesec.h"
#include "spin.h"

#define CQ_BATCH 16
#define WAIT_SLICE_MS 1000
#define INJECT_TRIES 100000

struct lane;

/* a receive slot; fi_context first so a completion context finds it */
struct slot {
	struct fi_context ctx;
	struct lane *lane;
	char *buf;		/* tag room, then the message (LANE_HDR_OFF) */
};

/* a send buffer for answers too large to inject (secured sessions) */
struct sendbuf {
	struct fi_context ctx;
	char *buf;
	_Atomic bool busy;
};

struct lane {
	struct fid_ep *ep;
	struct apply_pending pending;
	unsigned idx;
	unsigned worker;
	bool connected;
	bool epochs;			/* an async replica's records came */
	struct slot slots[LANE_SLOTS];
	struct sendbuf send[LANE_SENDBUFS];
	unsigned snext;			/* next send buffer */
	struct lanesec_stream rx;	/* opens what the client sealed */
	struct lanesec_stream tx;	/* seals the answers */
};

struct worker {
	struct fabric *fab;
	struct fid_cq *cq;		/* receives */
	struct fid_cq *txcq;		/* sends from send buffers */
	struct spin spin;		/* polls before sleeping in the kernel */
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
	char *bufs;			/* slots, then send buffers */
	size_t slot_size;
	size_t inject_size;
	struct apply_pool pool;
	unsigned nlanes;
	unsigned nworkers;
	struct lane *lanes;
	struct worker *workers;
	struct lanesec_keys keys;
	bool secure;			/* keys.policy != LANESEC_NONE */
	bool pmdk;			/* a PMDK 0.1 client (fabric.h) */
	unsigned admitted;		/* pmdk: lanes taken, in order */
	unsigned nconn;			/* lanes connected so far */
	long long accept_deadline;	/* of admission; 0 before it */
	int session_fd;
	int fail_fd;			/* eventfd: a lane ended the session */
	char fail_why[256];		/* the first lane failure */
	atomic_bool stop;
};

/* fabric_worker_run -- a worker thread: serve the lanes of one CQ */
void *fabric_worker_run(void *arg);

/* fabric_post_recv -- hand a slot back to its lane */
int fabric_post_recv(struct fabric *f, struct slot *s);

/*
 * fabric_fail -- end the session from a lane: log why, stop every
 * worker before it applies anything more, wake the session
 */
void fabric_fail(struct fabric *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* RPMEMD_FABRIC_INT_H */
