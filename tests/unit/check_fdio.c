/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_fdio.c -- unit tests of the out-of-band channel's framing
 * (fdio.c), over a socket pair and a pipe alike
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "fdio.h"
#include "tu_check.h"

#define BIG (1024 * 1024)	/* more than either kind buffers */

/* the two kinds of channel rpmemd and librpmem see */
static const char *const Kind[] = { "socket pair", "pipe" };

/* channel -- a one-way channel of kind k: fd[0] reads, fd[1] writes */
static void
channel(int k, int fd[2])
{
	int r = k == 0 ? socketpair(AF_UNIX, SOCK_STREAM, 0, fd) : pipe(fd);
	ck_assert_int_eq(r, 0);
}

struct sender {
	int fd;
	const unsigned char *buf;
	int r;
};

/* send_all -- a thread that sends BIG bytes, then closes its end */
static void *
send_all(void *arg)
{
	struct sender *s = arg;
	s->r = fdio_send(s->fd, s->buf, BIG, clock_ms() + 10000, NULL);
	close(s->fd);
	return NULL;
}

START_TEST(test_whole_message_in_pieces)
{
	static unsigned char out[BIG], in[BIG];
	for (size_t i = 0; i < BIG; i++)
		out[i] = (unsigned char)(i * 7 + i / 4096);
	int fd[2];
	channel(_i, fd);
	struct sender s = { fd[1], out, -1 };
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, send_all, &s), 0);
	int r = fdio_recv(fd[0], in, BIG, clock_ms() + 10000, NULL);
	pthread_join(t, NULL);
	ck_assert_msg(r == 0 && s.r == 0, "%s: recv %d, send %d", Kind[_i],
		r, s.r);
	ck_assert_msg(memcmp(in, out, BIG) == 0, "%s: bytes differ",
		Kind[_i]);
	/* and the end of file after it */
	r = fdio_recv(fd[0], in, 1, clock_ms() + 10000, NULL);
	ck_assert_msg(r == -ECONNRESET, "%s: at EOF %d", Kind[_i], r);
	close(fd[0]);
}
END_TEST

/* how a transfer ends when the other side fails it */
enum end { CUT, GONE, SILENT };

static const struct {
	const char *name;
	enum end end;
	int r;
} Ends[] = {
	{ "a message cut short is a reset", CUT, -ECONNRESET },
	{ "a reader gone is a reset", GONE, -ECONNRESET },
	{ "nothing by the deadline is a timeout", SILENT, -ETIMEDOUT },
};

START_TEST(test_ends)
{
	signal(SIGPIPE, SIG_IGN);	/* fdio_send's contract for a pipe */
	for (int k = 0; k < 2; k++) {
		int fd[2];
		channel(k, fd);
		char buf[8];
		long long t0 = clock_ms();
		int r;
		switch (Ends[_i].end) {
		case CUT:
			ck_assert_int_eq(write(fd[1], "abc", 3), 3);
			close(fd[1]);
			r = fdio_recv(fd[0], buf, sizeof(buf), FDIO_NEVER,
				NULL);
			close(fd[0]);
			break;
		case GONE:
			close(fd[0]);
			r = fdio_send(fd[1], "abc", 3, FDIO_NEVER, NULL);
			close(fd[1]);
			break;
		default:
			r = fdio_recv(fd[0], buf, 1, t0 + 100, NULL);
			close(fd[0]);
			close(fd[1]);
		}
		long long took = clock_ms() - t0;
		ck_assert_msg(r == Ends[_i].r, "%s (%s): %d", Ends[_i].name,
			Kind[k], r);
		ck_assert_msg(Ends[_i].end != SILENT || (took >= 100 &&
			took < 5000), "%s (%s): after %lld ms", Ends[_i].name,
			Kind[k], took);
	}
}
END_TEST

struct watched {
	int calls;
	int answer;
};

/* ready -- count the call, answer as told */
static int
ready(void *arg)
{
	struct watched *w = arg;
	w->calls++;
	return w->answer;
}

/* what a watch's answer does to a wait for a byte that never comes */
static const struct {
	const char *name;
	int answer;
	int r;
	int max_calls;
} Watch[] = {
	{ "a negative answer ends the transfer", -ECANCELED, -ECANCELED, 1 },
	{ "a positive one stops the watching", 1, -ETIMEDOUT, 1 },
};

START_TEST(test_watch)
{
	for (int k = 0; k < 2; k++) {
		int fd[2], wfd[2];
		channel(k, fd);
		ck_assert_int_eq(pipe(wfd), 0);
		close(wfd[1]);		/* readable at once: its EOF */
		struct watched w = { 0, Watch[_i].answer };
		struct fdio_watch fw = { wfd[0], ready, &w };
		char c;
		int r = fdio_recv(fd[0], &c, 1, clock_ms() + 100, &fw);
		ck_assert_msg(r == Watch[_i].r && w.calls >= 1 &&
			w.calls <= Watch[_i].max_calls,
			"%s (%s): %d, %d calls", Watch[_i].name, Kind[k], r,
			w.calls);
		close(wfd[0]);
		close(fd[0]);
		close(fd[1]);
	}
}
END_TEST

/* fdio_suite -- every fdio test */
static Suite *
fdio_suite(void)
{
	TCase *tc;
	Suite *s = tu_suite("fdio", "fdio", NULL, NULL, &tc);
	tcase_add_loop_test(tc, test_whole_message_in_pieces, 0, 2);
	TU_LOOP(tc, test_ends, Ends);
	TU_LOOP(tc, test_watch, Watch);
	return tu_suite_add(s, tc);
}

TU_MAIN(fdio_suite)
