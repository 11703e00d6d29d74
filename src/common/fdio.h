/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fdio.h -- whole messages over a stream descriptor: the out-of-band
 * channel's framing, shared by librpmem (ssh.c) and rpmemd (obc.c)
 */
#ifndef RPMEM_FDIO_H
#define RPMEM_FDIO_H 1

#include <stddef.h>

#define FDIO_NEVER (-1LL)	/* a deadline that never passes */

/* a second descriptor a transfer watches while it waits */
struct fdio_watch {
	int fd;				/* -1: none */
	/*
	 * fd turned readable: 0 goes on watching it, > 0 stops watching
	 * it (it is closed), < 0 ends the transfer with that error
	 */
	int (*ready)(void *arg);
	void *arg;
};

/*
 * fdio_recv -- read exactly `len` bytes from `fd` before `deadline`
 * (clock_ms(), or FDIO_NEVER); `w` may be NULL.  Returns 0,
 * -ECONNRESET at end of file or on a reset, -ETIMEDOUT, what w->ready
 * returned, or another -errno.
 */
int fdio_recv(int fd, void *buf, size_t len, long long deadline,
		const struct fdio_watch *w);

/*
 * fdio_send -- write all `len` bytes of `buf` to `fd` before `deadline`,
 * as fdio_recv; -ECONNRESET when the reader has gone.  A socket never
 * raises SIGPIPE; any other descriptor is written with write(2), so its
 * process must ignore SIGPIPE.
 */
int fdio_send(int fd, const void *buf, size_t len, long long deadline,
		const struct fdio_watch *w);

#endif /* RPMEM_FDIO_H */
