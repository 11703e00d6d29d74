/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fabric.h -- librpmem's in-band side: lanes to rpmemd over libfabric
 *
 * Each lane has its own endpoint, completion queue and message slots, so
 * lanes used from different threads share no lock.  A flush posts
 * messages without waiting (up to LANE_SLOTS in flight); a drain waits
 * for every answer outstanding on its lane: one round trip however many
 * flushes came before it.  Under lane security every message is sealed
 * (lanesec.h) and every answer opened before it counts; relaxed persists
 * then travel inline and reads as messages, never by RMA.
 */
#ifndef RPMEM_FABRIC_H
#define RPMEM_FABRIC_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fab.h"
#include "lanesec.h"
#include "proto.h"

struct fabric;

struct fabric_attr {
	uint32_t provider;
	const char *node;		/* target host as the user wrote it */
	const struct proto_ibc *ibc;	/* rpmemd's answer */
	size_t buff_size;		/* negotiated inline buffer */
	bool writes_back;		/* rpmemd's persists wait for its
					 * file system: lanes may poll
					 * through that (spin.h) */
	const struct lanesec_keys *keys;	/* the session's */
	bool pmdk;			/* rpmemd is PMDK 1.12's: no lane
					 * tokens, one message in flight per
					 * lane, PMDK's flags, 8 KiB pieces */
	void *pool_addr;
	size_t pool_size;
	unsigned nlanes;		/* lanes to connect (<= ibc->nlanes) */
	int timeout_ms;			/* bound of every wait */
	int ssh_fd;			/* out-of-band channel to watch */
	int (*watch)(void *arg);	/* NULL, or called by the monitor
					 * every watch_ms and whenever
					 * ssh_fd turns readable: < 0 breaks
					 * the fabric with that -errno, 1
					 * asks not to be called again for
					 * ssh_fd until watch_ms passed */
	void *watch_arg;
	int watch_ms;
	void (*on_break)(void *arg);	/* NULL, or called once, by the
					 * thread that breaks the fabric
					 * first, whatever locks it holds:
					 * it must not block */
	void *break_arg;
	bool epochs_lane;		/* the last lane is an async replica's
					 * sender's: FABRIC_EPOCHS_WINDOW
					 * messages of buff_size bytes in
					 * flight there */
};

/* an async sender's messages in flight on its lane: one per send slot */
#define FABRIC_EPOCHS_WINDOW LANE_SLOTS

/*
 * fabric_provider -- choose the provider for `node`: RPMEM_PROVIDER if
 * set, else verbs when a device reaches the node (unless
 * RPMEM_ENABLE_VERBS=0), else sockets when RPMEM_ENABLE_SOCKETS is
 * non-zero, else tcp.  *max_lanes is what this side can open (endpoint,
 * queue and descriptor limits).  Returns -ENOMEDIUM when none is usable,
 * -EINVAL for an unknown RPMEM_PROVIDER, -ENOMEM when memory ran out
 * while asking libfabric, -ELIBACC when libfabric cannot be loaded
 * (fablib_error says why).
 */
int fabric_provider(const char *node, uint32_t *provider,
		unsigned *max_lanes);

/*
 * fabric_probe_first -- must fabric_provider run before ssh starts?  Yes
 * when it may choose sockets, which changes the ssh command (-4), or when
 * RPMEM_PROVIDER names no provider, so that the error comes first;
 * decided from RPMEM_PROVIDER and RPMEM_ENABLE_SOCKETS, without libfabric.
 */
bool fabric_probe_first(void);

/*
 * fabric_provider_check -- can `provider` reach `node`?  *max_lanes as
 * fabric_provider gives it.  0, -ENOMEDIUM, or -ENOMEM and -ELIBACC as
 * fabric_provider.
 */
int fabric_provider_check(const char *node, uint32_t provider,
		unsigned *max_lanes);

/* fabric_connect -- connect every lane; on success *nlanes is final */
int fabric_connect(const struct fabric_attr *attr, struct fabric **fab);

/*
 * fabric_flush -- start making [off, off + len) durable on `lane`:
 * relaxed sends the bytes by RMA write where allowed, otherwise inline
 * for rpmemd to store 8 bytes at a time.  Returns 0 or -errno
 * (-EBADMSG: an answer failed authentication).
 */
int fabric_flush(struct fabric *fab, unsigned lane, size_t off, size_t len,
		bool relaxed, bool deep);

/*
 * fabric_drain -- wait for every flush on `lane`; 0, or -errno (the
 * first error wins: a lost connection, or rpmemd's status)
 */
int fabric_drain(struct fabric *fab, unsigned lane);

/*
 * An async replica's sender (async.c) owns one lane: it builds the body
 * of a LANE_OP_EPOCHS message in the lane's next batch buffer
 * (fabric_epochs_buf: waits until that buffer is free, *cap bytes: up
 * to rpmemd's buffer), sends it (fabric_epochs_send: `len` bytes of
 * the buffer, then `dlen` bytes at `data`, which stay put until the
 * answer; FABRIC_EPOCHS_WINDOW may be in flight), and learns that
 * rpmemd holds the oldest ones (fabric_answers: until at most `left`
 * wait).  0 or -errno: a lost connection, or rpmemd's status.
 * fabric_epochs_room: the most bytes of a body; *direct true when
 * `data` may be memory the provider never saw registered.
 */
int fabric_epochs_buf(struct fabric *fab, unsigned lane, void **body,
		size_t *cap);
int fabric_epochs_send(struct fabric *fab, unsigned lane, size_t len,
		const void *data, size_t dlen);
size_t fabric_epochs_room(const struct fabric *fab, bool *direct);
int fabric_answers(struct fabric *fab, unsigned lane, unsigned left);

/* fabric_read -- remote bytes into buf: RMA read, or sealed READs; -errno */
int fabric_read(struct fabric *fab, unsigned lane, void *buf, size_t off,
		size_t len);

/*
 * fabric_break -- make `err` (an errno value) sticky and wake every
 * waiting lane
 */
void fabric_break(struct fabric *fab, int err);

/* fabric_error -- the sticky errno value of a broken connection, or 0 */
int fabric_error(const struct fabric *fab);

/* fabric_close -- shut lanes down, stop the monitor, free */
void fabric_close(struct fabric *fab);

#endif /* RPMEM_FABRIC_H */
