/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * beat.c -- rpmemd's heartbeat thread (beat.h)
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "beat.h"
#include "log.h"
#include "obc.h"

struct beat {
	pthread_t thread;
	int out;
	int stop_fd;		/* readable: stop */
	_Atomic unsigned ms;
};

/* beat_run -- one beat an interval until stopped */
static void *
beat_run(void *arg)
{
	struct beat *b = arg;
	for (;;) {
		struct pollfd pfd = { .fd = b->stop_fd, .events = POLLIN };
		int r = poll(&pfd, 1, (int)atomic_load(&b->ms));
		if (r < 0 && errno == EINTR)
			continue;
		if (r != 0)
			break;
		int e = obc_send_beat(b->out);
		if (e == -EAGAIN)
			continue;	/* the client reads nothing: it stopped */
		if (e) {
			log_info("beat not sent: %s", strerror(-e));
			break;
		}
	}
	return NULL;
}

/* beat_start -- start beating, or change the interval */
int
beat_start(struct beat **bp, int out, unsigned ms)
{
	if (*bp) {
		atomic_store(&(*bp)->ms, ms);
		return 0;
	}
	struct beat *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->out = out;
	atomic_init(&b->ms, ms);
	b->stop_fd = eventfd(0, EFD_CLOEXEC);
	int r = b->stop_fd < 0 ? -errno : 0;
	if (!r)
		r = -pthread_create(&b->thread, NULL, beat_run, b);
	if (r) {
		if (b->stop_fd >= 0)
			close(b->stop_fd);
		free(b);
		return r;
	}
	*bp = b;
	return 0;
}

/* beat_stop -- stop and join the thread */
void
beat_stop(struct beat **bp)
{
	struct beat *b = *bp;
	if (!b)
		return;
	uint64_t one = 1;
	if (write(b->stop_fd, &one, sizeof(one)) != sizeof(one))
		log_err("cannot stop the heartbeat thread");
	pthread_join(b->thread, NULL);
	close(b->stop_fd);
	free(b);
	*bp = NULL;
}
