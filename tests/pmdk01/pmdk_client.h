/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pmdk_client.h -- a stand-in for PMDK 1.12's librpmem client, for what
 * the real one never sends (hostile.sh): its parts
 *
 * pmdk_client.c runs the command line and the out-of-band exchange,
 * pmdk_client_cmd.c the remote command and its start-up status,
 * pmdk_client_ops.c the operations and the byte-for-byte check,
 * pmdk_client_fip.c the lanes (GPSPM as PMDK does it, pmdk-interop 4.5-4.7).
 */
#ifndef PMDK01_PMDK_CLIENT_H
#define PMDK01_PMDK_CLIENT_H 1

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "wire01.h"

/* pc_say -- one line of output, "pmdk_client: " first */
void pc_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* the remote command: its pid and our ends of its stdin/stdout/stderr */
struct pc_remote {
	pid_t pid;
	int in, out, err;
};

/* pc_spawn -- sh -c COMMAND on three socket pairs; 0 or -errno */
int pc_spawn(const char *cmd, struct pc_remote *r);

/*
 * pc_startup_status -- the 4-byte start-up word; 0 or the errno PMDK's
 * client would leave, after printing what it would say
 */
int pc_startup_status(const char *node, int timeout_ms, struct pc_remote *r);

/* pc_finish -- close the channel, wait (bounded); the exit status or -1 */
int pc_finish(struct pc_remote *r, int timeout_ms);

/* what the lanes need from the response and the command line */
struct pc_fip_attr {
	const char *node;	/* the target host, as PMDK connects to it */
	uint32_t port;		/* from the response */
	uint32_t provider;
	unsigned nlanes;	/* min(asked, the daemon's) */
	uint64_t raddr;
	uint64_t rkey;
	void *laddr;		/* the local pool */
	size_t size;
	size_t buff_size;	/* inline buffer per lane */
	int timeout_ms;		/* for every wait */
};

struct pc_fip;

/* pc_fip_probe -- is the provider there for node? 0 or -ENOMEDIUM */
int pc_fip_probe(const char *node, uint32_t provider);

/*
 * pc_fip_init -- getinfo, one endpoint per lane, connect them in turn
 * (no connection data), register the pool and the message buffers, post
 * a receive on each lane.  *nlanes gets the final count.  NULL on
 * failure with `err` saying what failed.
 */
struct pc_fip *pc_fip_init(const struct pc_fip_attr *attr, unsigned *nlanes,
		char *err, size_t errlen);

/*
 * pc_fip_persist -- one persist of [off, off + len) on a lane: mode 0
 * and 1 write the bytes by RMA and send a 24-byte message, mode 2 sends
 * them inline (len <= buff_size per message); every message waits for
 * its 8-byte answer.  0 or -errno (pc_fip_errmsg says more).
 */
int pc_fip_persist(struct pc_fip *fip, size_t off, size_t len,
		unsigned lane, unsigned flags);

/*
 * pc_fip_bad -- send what PMDK's client never sends (a lane number past
 * the last, or with `range` a range past the pool) and expect no answer:
 * 0 when none came within the timeout, -EPROTO when one did
 */
int pc_fip_bad(struct pc_fip *fip, unsigned lane, int range);

/* pc_fip_read -- RMA read of [off, off + len) into buf; 0 or -errno */
int pc_fip_read(struct pc_fip *fip, void *buf, size_t off, size_t len,
		unsigned lane);

/* pc_fip_errmsg -- what the last failure was */
const char *pc_fip_errmsg(const struct pc_fip *fip);

/* pc_fip_shutdown -- deregister the pool and shut every lane down */
void pc_fip_shutdown(struct pc_fip *fip);

/* pc_fip_fini -- close and free everything */
void pc_fip_fini(struct pc_fip *fip);

/* what each kind of operation did */
struct pc_stats {
	unsigned n_write, n_inline, n_deep, n_read;
	uint64_t b_write, b_inline, b_deep, b_read;
	uint64_t b_checked;
};

struct pc_ops_cfg {
	size_t size;		/* of the pool */
	unsigned nlanes;
	uint64_t seed;		/* of the patterns and of the ranges */
};

/*
 * pc_ops_run -- the sequence of persists of one session (mode 0 over the
 * whole pool past its header, mode 0 pieces, mode 2 inline pieces,
 * mode 1 deep persists), each range filled with a fresh pattern first.
 * 0 or -errno.
 */
int pc_ops_run(struct pc_fip *fip, unsigned char *pool,
		const struct pc_ops_cfg *cfg, struct pc_stats *st);

/*
 * pc_ops_verify -- read the pool back (whole on lane 0, pieces on the
 * others) and compare every byte past the header with `pool`; 0, -EIO on
 * a difference (reported), or another -errno
 */
int pc_ops_verify(struct pc_fip *fip, const unsigned char *pool,
		const struct pc_ops_cfg *cfg, struct pc_stats *st);

#endif /* PMDK01_PMDK_CLIENT_H */
