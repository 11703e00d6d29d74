/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * datapath_stray.c -- scenario S2 (group stray): strangers at the
 * fabric port while rpmemd admits lanes are refused without taking a
 * lane, and the port closes once the client's lanes are in
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <rdma/fi_errno.h>

#include "fab.h"	/* struct lane_conn: what a stray client imitates */
#include "dpath.h"

/* ------------------------------------------------ 6. stray connections */

/* a create made in a thread, while the test plays the stranger */
struct creator {
	const struct tset *s;
	char *mem;
	unsigned nlanes;
	RPMEMpool *rpp;
	int err;
	char msg[MSG_MAX];
	pthread_t thread;
};

/* create_run -- thread body: rpmem_create, keeping errno and message */
static void *
create_run(void *arg)
{
	struct creator *c = arg;
	struct rpmem_pool_attr attr;
	attr_make(&attr, 10);
	c->rpp = rpmem_create(env.t.target, c->s->desc, c->mem, c->s->size,
		&c->nlanes, &attr);
	c->err = errno;
	say(c->msg, sizeof(c->msg), "%s", errmsg());
	return NULL;
}

/*
 * S2: while rpmemd admits lanes (the test holds the create's response
 * back with the ssh gate, so the listener is up and the client has not
 * connected yet), plain TCP connections and libfabric connection
 * requests without the lane token are refused without taking a lane
 * slot: the real client then gets all its lanes, lane 0 and the last
 * included, and they work; after admission the port is closed.
 */
START_TEST(stray_connections_are_refused_without_taking_a_lane)
{
	struct tset s;
	uint64_t rng = seed_for("stray");
	set_make(&s, "stray", 1, 8 * MIB, NULL);
	int gate = open(env.gate, O_RDWR | O_CLOEXEC);
	ck_assert_msg(gate >= 0, "%s: %s", env.gate, strerror(errno));
	struct logsnap *before = log_snapshot();
	struct creator cr = { .s = &s, .mem = tu_pool_map(s.size),
		.nlanes = NLANES };
	ck_assert_int_eq(pthread_create(&cr.thread, NULL, create_run, &cr),
		0);

	char log[PATH_MAX], prov[64];
	pid_t pid = session_find(before, log, sizeof(log), 15000);
	free(before);
	ck_assert_msg(log_wait(log, "listening on ", 1, 15000),
		"rpmemd %d never listened, see %s", (int)pid, log);
	char *text = slurp(log);
	unsigned port = 0;
	const char *l = strstr(text, "listening on 127.0.0.1 port ");
	ck_assert_msg(l && sscanf(l, "listening on 127.0.0.1 port %u "
		"(%63[^)])", &port, prov) == 2, "no port in %s", log);
	free(text);
	note("stray: rpmemd %d listens on port %u (%s)", (int)pid,
		port, prov);

	/* plain TCP: garbage, then a connection that stays silent */
	int fd = tu_tcp_stranger("127.0.0.1", port);
	ck_assert_msg(fd >= 0, "connect to the listener: %s", ename(-fd));
	char junk[64];
	memset(junk, 0xff, sizeof(junk));
	ck_assert_int_eq(write(fd, junk, sizeof(junk)), (int)sizeof(junk));
	close(fd);
	int silent = tu_tcp_stranger("127.0.0.1", port);
	ck_assert_msg(silent >= 0, "connect: %s", ename(-silent));

	/* libfabric: no data, short data, bad magic, wrong tokens */
	struct lane_conn bad;
	memset(&bad, 0, sizeof(bad));
	bad.magic = LANE_CONN_MAGIC;
	fill_random((char *)bad.token, sizeof(bad.token), &rng);
	struct lane_conn nomagic = bad;
	nomagic.magic = ~LANE_CONN_MAGIC;
	struct lane_conn last = bad;
	last.lane = NLANES - 1;
	char why_last[64];
	fmt(why_last, sizeof(why_last), "wrong session token (lane %u)",
		NLANES - 1);
	const struct {
		const char *what;
		const void *data;
		size_t len;
		const char *why;	/* rpmemd's reason */
	} st[] = {
		{ "no connection data", NULL, 0, "no connection data" },
		{ "4 bytes of connection data", &bad, 4,
			"no connection data" },
		{ "a wrong magic", &nomagic, sizeof(nomagic),
			"wrong session token" },
		{ "a wrong token for lane 0", &bad, sizeof(bad),
			"wrong session token (lane 0)" },
		{ "a wrong token for the last lane", &last, sizeof(last),
			why_last },
	};
	const unsigned nst = TU_NELEMS(st);
	for (unsigned i = 0; i < nst; i++) {
		char why[128];
		fmt(why, sizeof(why), "refused a lane connection: %s",
			st[i].why);
		unsigned had = log_count(log, why);
		int r = tu_fabric_stranger(prov, "127.0.0.1", port,
			st[i].data, st[i].len, 5000);
		ck_assert_msg(r == 0, "stray libfabric client with %s: %s",
			st[i].what, r == 1 ? "ACCEPTED" : fi_strerror(-r));
		ck_assert_msg(log_wait(log, why, had + 1, 5000), "stray "
			"with %s: rpmemd did not log \"%s\"", st[i].what,
			why);
	}
	ck_assert_uint_eq(log_count(log, "refused a lane connection"), nst);

	/* now let the real client hear its response and connect */
	ck_assert_int_eq(write(gate, "go\n", 3), 3);
	ck_assert_msg(join_by(cr.thread, tu_now_ms() + 2 * env.timeout_ms +
		5000), "create hangs after the strays");
	ck_assert_msg(cr.rpp != NULL, "create after the strays: %s: %s",
		ename(cr.err), cr.msg);
	ck_assert_uint_eq(cr.nlanes, NLANES);
	for (unsigned i = 0; i < cr.nlanes; i++)
		probe(cr.rpp, cr.mem, HDR + i * 64, 64, i, 0, &rng,
			"persist after the strays");
	ck_assert_msg(log_wait(log, "lanes connected; listener closed", 1,
		5000), "rpmemd did not close its listener");
	int late = tu_tcp_stranger("127.0.0.1", port);
	ck_assert_msg(late == -ECONNREFUSED, "connect after admission: %s",
		late >= 0 ? "accepted" : ename(-late));

	/* the silent stranger must not keep a connection into rpmemd */
	struct pollfd p = { .fd = silent, .events = POLLIN };
	int pr = poll(&p, 1, 2000);
	char c1;
	ssize_t got = pr > 0 ? recv(silent, &c1, 1, MSG_DONTWAIT) : -2;
	note("stray: silent connection after admission: %s",
		pr == 0 ? "still open" : got == 0 ? "closed by rpmemd" :
		"reset");
	close(silent);

	tu_ok(rpmem_close(cr.rpp), "close");
	ck_assert_msg(wait_gone(pid, 10000), "rpmemd %d did not exit",
		(int)pid);
	close(gate);
	munmap(cr.mem, s.size);
	set_unlink(&s);
}
END_TEST


/* dpath_add_stray -- the stray connections */
void
dpath_add_stray(TCase *tc)
{
	tcase_add_test(tc, stray_connections_are_refused_without_taking_a_lane);
}
