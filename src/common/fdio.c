/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fdio.c -- whole messages over a stream descriptor, within a deadline,
 * while a second descriptor is watched
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "fdio.h"

/* left_ms -- poll(2)'s timeout until `deadline` */
static int
left_ms(long long deadline)
{
	if (deadline == FDIO_NEVER)
		return -1;
	long long left = deadline - clock_ms();
	if (left <= 0)
		return 0;
	return left > 1000000 ? 1000000 : (int)left;
}

/*
 * wait_fd -- poll `fd` for `events`, calling w->ready whenever w->fd is
 * readable (until it says to stop); 0 when fd is ready, else the
 * transfer's error
 */
static int
wait_fd(int fd, short events, long long deadline,
		const struct fdio_watch *w)
{
	int wfd = w ? w->fd : -1;
	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = fd, .events = events },
			{ .fd = wfd, .events = POLLIN },
		};
		int r = poll(pfd, wfd >= 0 ? 2 : 1, left_ms(deadline));
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (wfd >= 0 && pfd[1].revents) {
			int e = w->ready(w->arg);
			if (e < 0)
				return e;
			if (e > 0)
				wfd = -1;
		}
		if (pfd[0].revents)
			return 0;
		if (r == 0 || (deadline != FDIO_NEVER &&
				clock_ms() >= deadline))
			return -ETIMEDOUT;
	}
}

/* move -- one send or receive: a socket's without blocking or SIGPIPE */
static ssize_t
move(int fd, void *buf, size_t len, bool out)
{
	ssize_t n = out ? send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT) :
		recv(fd, buf, len, MSG_DONTWAIT);
	if (n < 0 && errno == ENOTSOCK)
		n = out ? write(fd, buf, len) : read(fd, buf, len);
	return n;
}

/* xfer -- move all `len` bytes in one direction */
static int
xfer(int fd, char *p, size_t len, bool out, long long deadline,
		const struct fdio_watch *w)
{
	while (len) {
		int r = wait_fd(fd, out ? POLLOUT : POLLIN, deadline, w);
		if (r)
			return r;
		ssize_t n = move(fd, p, len, out);
		if (n == 0 && !out)
			return -ECONNRESET;
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return errno == EPIPE ? -ECONNRESET : -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* fdio_recv -- read exactly len bytes */
int
fdio_recv(int fd, void *buf, size_t len, long long deadline,
		const struct fdio_watch *w)
{
	return xfer(fd, buf, len, false, deadline, w);
}

/* fdio_send -- write all of buf */
int
fdio_send(int fd, const void *buf, size_t len, long long deadline,
		const struct fdio_watch *w)
{
	return xfer(fd, (char *)buf, len, true, deadline, w);
}
