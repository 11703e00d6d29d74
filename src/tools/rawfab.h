/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rawfab.h -- raw libfabric baseline for rpmem bench: a forked loopback peer
 *
 * The cheapest thing a remote persist could be on a provider: the client
 * SENDs the payload, the peer answers with an 8-byte fi_inject, nothing
 * is copied or made durable.  Also plain RMA writes and reads into a
 * buffer the peer registered.  Both ends use fab_getinfo's hints, one
 * FI_EP_MSG endpoint and completion queue per connection, and wait the
 * way librpmem and rpmemd do, so only our own work differs.
 */
#ifndef RPMEM_RAWFAB_H
#define RPMEM_RAWFAB_H 1

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define RAWFAB_NODE "127.0.0.1"	/* the peer listens here only */
#define RAWFAB_MAX_EPS 64
#define RAWFAB_MAX_WINDOW 16

/* how both ends wait, for the report */
#define RAWFAB_WAIT_STYLE "client: fi_cq_read x64 spin, then fi_cq_sread " \
	"in 100 ms slices (as librpmem); peer: one thread per endpoint in " \
	"fi_cq_sread, answer by fi_inject (as rpmemd)"

struct rawfab;

struct rawfab_cfg {
	uint32_t provider;	/* enum proto_provider */
	unsigned neps;		/* endpoints to connect, <= RAWFAB_MAX_EPS */
	size_t max_size;	/* largest SEND, write or read */
	unsigned window;	/* RMA writes in flight, <= RAWFAB_MAX_WINDOW */
	size_t area;		/* bytes per endpoint that RMA walks through */
};

/*
 * rawfab_spawn -- fork the peer and wait until it listens.  Call it
 * before this process uses libfabric or starts threads.  Returns 0 or
 * -errno; the message is on stderr.
 */
int rawfab_spawn(const struct rawfab_cfg *cfg, struct rawfab **rf);

/* rawfab_connect -- connect cfg->neps endpoints to the peer */
int rawfab_connect(struct rawfab *rf);

/* rawfab_ping -- SEND `size` bytes on `ep`, wait for the 8-byte answer */
int rawfab_ping(struct rawfab *rf, unsigned ep, size_t size);

/* rawfab_read -- RMA read of `size` bytes on `ep`, wait for it */
int rawfab_read(struct rawfab *rf, unsigned ep, size_t size);

/*
 * rawfab_write_until -- RMA writes of `size` bytes on `ep`, window
 * outstanding, at consecutive offsets of the area on both sides (as
 * persists walk a pool), until CLOCK_MONOTONIC `deadline_ns`; then wait
 * for all.  *bytes is what completed.
 */
int rawfab_write_until(struct rawfab *rf, unsigned ep, size_t size,
		uint64_t deadline_ns, uint64_t *bytes);

/* rawfab_peer_pid -- the forked peer */
pid_t rawfab_peer_pid(const struct rawfab *rf);

/* rawfab_close -- disconnect, stop and reap the peer, free */
void rawfab_close(struct rawfab *rf);

/* rawfab_now_ns -- CLOCK_MONOTONIC in nanoseconds */
uint64_t rawfab_now_ns(void);

/*
 * rawfab_probe -- ask libfabric once for the tcp provider, as a new
 * process does before it can listen (rpmem --probe-fabric); 0 or an error
 */
int rawfab_probe(void);

/* between rawfab.c and rawfab_peer.c */
#define RAWFAB_RECV_SLOTS 2	/* receives posted per endpoint, each end */
#define RAWFAB_RESP_SIZE 8	/* the answer, as struct lane_resp */
#define RAWFAB_RESP_STRIDE 64
#define RAWFAB_MR_KEY 1		/* for providers that take our keys */

/* what the peer reports through the socket pair once it listens */
struct rawfab_peer_info {
	int32_t status;		/* 0 or a negative libfabric code */
	uint32_t port;
	uint64_t addr;		/* remote address of the RMA area */
	uint64_t key;
	uint64_t ep_stride;	/* RMA bytes per endpoint: cfg.area */
};

/*
 * rawfab_peer_main -- the forked child: listen on RAWFAB_NODE, report on
 * `sock`, serve until `sock` closes or `parent` dies; never returns
 */
void rawfab_peer_main(const struct rawfab_cfg *cfg, int sock, pid_t parent)
	__attribute__((noreturn));

#endif /* RPMEM_RAWFAB_H */
