/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * datapath_faults.c -- faults mid-stream (group fault), a stream of
 * blocks acknowledged one by one while:
 *
 *   scenario R2  rpmemd is SIGKILLed: calls fail ECONNRESET, never a
 *                   false ack; acked data stays; the next open works
 *   R5              ssh drops: both sides end the session
 *   R1              the client is SIGKILLed: rpmemd exits, acked data
 *                   stays, no stale lock
 *   R3              rpmemd is stopped past the timeout: calls fail within
 *                   the bound, no thread hangs, stale writes are dropped
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dpath.h"

/* -------------------------------------------- streams for the faults */

#define BLK (100 * KIB)		/* one iteration's block */
#define FAULT_ACKS 30U		/* acks to wait for before a fault */

/* blk_word -- word w of the block written by iteration `it` */
static uint64_t
blk_word(unsigned it, size_t w)
{
	return ((uint64_t)(it + 1) << 32) | (uint64_t)w;
}

/* blk_off -- where iteration `it` writes: blocks cycle over the pool */
static size_t
blk_off(const struct tset *s, unsigned it)
{
	size_t nb = (s->size - HDR) / BLK;
	return HDR + (it % nb) * BLK;
}

/* blk_strict -- is iteration `it` 8-byte atomic (not relaxed)? */
static bool
blk_strict(unsigned it)
{
	return it % 3 != 1;
}

/*
 * blk_write -- iteration `it`: fill its block locally, then make it
 * durable by a strict persist, a relaxed persist, or two strict flushes
 * and a drain, in turn
 */
static int
blk_write(RPMEMpool *rpp, char *mem, const struct tset *s, unsigned it,
	unsigned lane)
{
	size_t off = blk_off(s, it);
	for (size_t w = 0; w < BLK / 8; w++) {
		uint64_t v = blk_word(it, w);
		memcpy(mem + off + 8 * w, &v, 8);
	}
	switch (it % 3) {
	case 0:
		return rpmem_persist(rpp, off, BLK, lane, 0);
	case 1:
		return rpmem_persist(rpp, off, BLK, lane,
			RPMEM_PERSIST_RELAXED);
	default:
		if (rpmem_flush(rpp, off, BLK / 2, lane, 0) ||
				rpmem_flush(rpp, off + BLK / 2, BLK / 2, lane,
					0))
			return -1;
		return rpmem_drain(rpp, lane, 0);
	}
}

/*
 * blk_check -- R1/R2 "nothing lost": in the replica image, every block
 * holds what the last acked iteration (< acked) wrote there, or zeros;
 * the block of iteration `acked`, which may have been in flight, holds
 * per 8-byte word the old or the new value when it was strict
 */
static void
blk_check(const struct tset *s, const char *img, unsigned acked)
{
	size_t nb = (s->size - HDR) / BLK;
	size_t inflight = (size_t)acked % nb;
	for (size_t b = 0; b < nb; b++) {
		size_t off = HDR + b * BLK;
		bool written = acked > b;
		unsigned last = 0;
		if (written)
			last = (unsigned)(b + (acked - 1 - b) / nb * nb);
		if (b == inflight && !blk_strict(acked))
			continue;
		for (size_t w = 0; w < BLK / 8; w++) {
			uint64_t got, old = written ? blk_word(last, w) : 0;
			memcpy(&got, img + off + 8 * w, 8);
			if (got == old)
				continue;
			ck_assert_msg(b == inflight && got ==
				blk_word(acked, w), "block %zu word %zu (pool "
				"offset %zu): 0x%016" PRIx64 ", expected "
				"0x%016" PRIx64 " (acked iterations: %u)%s", b,
				w, off + 8 * w, got, old, acked,
				b == inflight ? " or the in-flight value" : "");
		}
	}
}

/* a thread persisting blocks in a loop until a call fails */
struct streamer {
	RPMEMpool *rpp;
	char *mem;
	const struct tset *s;
	atomic_uint acked;
	int err;
	long long t_fail;
	pthread_t thread;
};

/* stream_run -- thread body: iterations on lane 0 until one fails */
static void *
stream_run(void *arg)
{
	struct streamer *st = arg;
	for (unsigned it = 0; it < 1000000; it++) {
		if (blk_write(st->rpp, st->mem, st->s, it, 0)) {
			st->err = errno;
			st->t_fail = tu_now_ms();
			return NULL;
		}
		atomic_store(&st->acked, it + 1);
	}
	return NULL;
}

/* wait_acks -- until the streamer has `n` acks; false after `ms` */
static bool
wait_acks(struct streamer *st, unsigned n, int ms)
{
	long long deadline = tu_now_ms() + ms;
	while (atomic_load(&st->acked) < n && !st->t_fail) {
		if (tu_now_ms() > deadline)
			return false;
		tu_nap(1);
	}
	return atomic_load(&st->acked) >= n;
}

/* stream_start -- a streamer on rpp, once it has FAULT_ACKS acks */
static void
stream_start(struct streamer *st, RPMEMpool *rpp, char *mem,
	const struct tset *s, const char *fault)
{
	*st = (struct streamer){ .rpp = rpp, .mem = mem, .s = s };
	atomic_init(&st->acked, 0);
	ck_assert_int_eq(pthread_create(&st->thread, NULL, stream_run, st),
		0);
	ck_assert_msg(wait_acks(st, FAULT_ACKS, 30000), "only %u acks "
		"before %s (err %s)", atomic_load(&st->acked), fault,
		ename(st->err));
}

/*
 * stream_cut -- SIGKILL `victim` under a streamer: the call in flight
 * fails with ECONNRESET within `bound` ms and the thread ends; returns
 * the acks it had
 */
static unsigned
stream_cut(struct streamer *st, pid_t victim, long long bound,
	const char *what)
{
	long long t_kill = tu_now_ms();
	ck_assert_int_eq(kill(victim, SIGKILL), 0);
	ck_assert_msg(join_by(st->thread, t_kill + bound + 3000),
		"%s: the persisting thread hung after the kill", what);
	unsigned acked = atomic_load(&st->acked);
	note("%s: %u acked, the next failed with %s after %lld ms", what,
		acked, ename(st->err), st->t_fail - t_kill);
	ck_assert_msg(st->t_fail != 0, "%s: the stream ended without a "
		"failure", what);
	ck_assert_msg(st->err == ECONNRESET, "%s: in-flight call: errno %s, "
		"expected ECONNRESET", what, ename(st->err));
	ck_assert_msg(st->t_fail - t_kill < bound, "%s: in-flight call "
		"failed %lld ms after the kill, bound %lld", what,
		st->t_fail - t_kill, bound);
	return acked;
}

/*
 * reopen_works -- no stale lock: open, persist on every lane, close; then
 * img and mem freed and the set removed
 */
static void
reopen_works(struct tset *s, char *mem, char *img,
	uint64_t *rng)
{
	unsigned n = NLANES;
	RPMEMpool *rpp = pool_open(s, mem, &n);
	char *back = malloc(s->size);
	ck_assert_ptr_nonnull(back);
	tu_ok(rpmem_read(rpp, back, 0, s->size, 0), "read after reopen");
	same_bytes(back + HDR, img + HDR, s->size - HDR, HDR,
		"rpmem_read after reopen vs the part files");
	free(back);
	memcpy(mem, img, s->size);
	for (unsigned l = 0; l < n; l++)
		probe(rpp, mem, HDR + l * 64, 64, l, 0, rng,
			"persist after reopen");
	tu_ok(rpmem_close(rpp), "close after reopen");
	free(img);
	munmap(mem, s->size);
	set_unlink(s);
}

/* a pool served for a fault: its set, local memory and rpmemd */
struct served {
	struct tset s;
	uint64_t rng;
	char *mem;
	long long bound;	/* RPMEM_TIMEOUT + 2 s: a call's bound */
	unsigned n;		/* lanes */
	char log[PATH_MAX];	/* rpmemd's log */
	pid_t pid;		/* rpmemd */
};

/* served_set -- v's 16 MiB set `name`, its memory, seed, bound, lanes */
static void
served_set(struct served *v, const char *name)
{
	v->rng = seed_for(name);
	set_make(&v->s, name, 1, 16 * MIB, NULL);
	v->mem = tu_pool_map(v->s.size);
	v->bound = env.timeout_ms + 2000;
	v->n = NLANES;
}

/* served_pool -- pool_served on NLANES lanes for v (seed: pool_served's) */
static RPMEMpool *
served_pool(struct served *v, unsigned char seed)
{
	v->n = NLANES;
	return pool_served(&v->s, v->mem, &v->n, seed, &v->pid, v->log,
		sizeof(v->log));
}

/* -------------------------------------------------- 3. rpmemd killed */

/*
 * R2: rpmemd SIGKILLed while a thread streams persists: the call in
 * flight and every later call fail with ECONNRESET within RPMEM_TIMEOUT
 * + 2 s, never a false ack; close returns and releases its descriptors
 * and threads; the pool reopens and holds every acked block
 */
START_TEST(rpmemd_killed_fails_econnreset_and_keeps_acked_data)
{
	struct served v;
	served_set(&v, "kill9");

	/* a first session, so lazily made library state is in the baseline */
	tu_ok(rpmem_close(pool_create(&v.s, v.mem, &v.n, 5)),
		"close after create");
	unsigned fds0 = count_dir("/proc/self/fd");
	unsigned threads0 = count_dir("/proc/self/task");

	RPMEMpool *rpp = served_pool(&v, 0);
	ck_assert_uint_ge(v.n, 3);

	struct streamer st;
	stream_start(&st, rpp, v.mem, &v.s, "the kill");
	unsigned acked = stream_cut(&st, v.pid, v.bound, "kill9");

	/* every later call, on any lane */
	struct rpmem_pool_attr attr;
	attr_make(&attr, 7);
	char buf[64];
	for (int c = 0; c < 6; c++) {
		static const char *const what[] = { "persist", "flush",
			"drain", "read", "deep persist", "set_attr" };
		long long t0 = tu_now_ms();
		int r = c == 0 ? rpmem_persist(rpp, HDR, 8, 1, 0) :
			c == 1 ? rpmem_flush(rpp, HDR, 8, 2, 0) :
			c == 2 ? rpmem_drain(rpp, 2, 0) :
			c == 3 ? rpmem_read(rpp, buf, 0, sizeof(buf), 1) :
			c == 4 ? rpmem_deep_persist(rpp, HDR, 8, 0) :
			rpmem_set_attr(rpp, &attr);
		long long dt = tu_now_ms() - t0;
		char msg[MSG_MAX];
		fmt(msg, sizeof(msg), "%s after the kill", what[c]);
		failed(r, ECONNRESET, msg);
		ck_assert_msg(dt < v.bound, "%s took %lld ms", msg, dt);
	}
	long long t0 = tu_now_ms();
	int r = rpmem_close(rpp);
	int e = errno;
	long long dt = tu_now_ms() - t0;
	note("kill9: close returned %d (%s) in %lld ms", r,
		r ? ename(e) : "ok", dt);
	ck_assert_msg(dt < v.bound, "close took %lld ms", dt);
	ck_assert_msg(wait_gone(v.pid, 10000), "killed rpmemd %d still there",
		(int)v.pid);
	ck_assert_uint_eq(count_dir("/proc/self/fd"), fds0);
	ck_assert_uint_eq(count_dir("/proc/self/task"), threads0);

	char *img = replica_image(&v.s);
	blk_check(&v.s, img, acked);
	reopen_works(&v.s, v.mem, img, &v.rng);
}
END_TEST

/* ssh_child -- the one ssh process this test process has spawned */
static pid_t
ssh_child(void)
{
	char path[64], buf[256];
	fmt(path, sizeof(path), "/proc/%d/task/%d/children", (int)getpid(),
		(int)getpid());
	FILE *f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot read %s", path);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *end;
	long pid = strtol(buf, &end, 10);
	ck_assert_msg(pid > 0 && strtol(end, NULL, 10) == 0,
		"expected exactly one child (ssh), found '%s'", buf);
	return (pid_t)pid;
}

/*
 * R5: the ssh channel drops while the lanes are up (ssh SIGKILLed): the
 * client fails with ECONNRESET within the bound, rpmemd ends the session
 * (stops its lanes, closes the pool, exits) and the next open works with
 * every acked block in place
 */
START_TEST(ssh_dropped_ends_the_session_on_both_sides)
{
	struct served v;
	served_set(&v, "sshdrop");
	RPMEMpool *rpp = served_pool(&v, 6);
	pid_t ssh = ssh_child();

	struct streamer st;
	stream_start(&st, rpp, v.mem, &v.s, "ssh was killed");
	unsigned acked = stream_cut(&st, ssh, v.bound, "sshdrop");
	ck_assert_msg(wait_gone(v.pid, 10000), "rpmemd %d kept its session "
		"10 s after ssh dropped", (int)v.pid);
	ck_assert_msg(log_count(v.log, "session ended") == 1, "rpmemd did not "
		"end its session cleanly (%s)", v.log);
	failed(rpmem_persist(rpp, HDR, 8, 1, 0), ECONNRESET, "persist after "
		"ssh dropped");
	(void) rpmem_close(rpp);

	char *img = replica_image(&v.s);
	blk_check(&v.s, img, acked);
	reopen_works(&v.s, v.mem, img, &v.rng);
}
END_TEST

/* -------------------------------------------------- 4. client killed */

/*
 * client_child -- the client to be killed: create the pool, stream
 * blocks on lane 0, tell out_fd each acked iteration; never returns
 */
static void __attribute__((noreturn))
client_child(const struct tset *s, int out_fd)
{
	char *mem = mmap(NULL, s->size, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (mem == MAP_FAILED)
		_exit(10);
	struct rpmem_pool_attr attr;
	attr_make(&attr, 8);
	unsigned n = NLANES;
	RPMEMpool *rpp = rpmem_create(env.t.target, s->desc, mem, s->size, &n,
		&attr);
	if (!rpp) {
		fprintf(stderr, "client child: create: %s\n", errmsg());
		_exit(11);
	}
	for (unsigned it = 0; it < 1000000; it++) {
		if (blk_write(rpp, mem, s, it, 0)) {
			fprintf(stderr, "client child: iteration %u: %s\n",
				it, errmsg());
			_exit(12);
		}
		if (write(out_fd, &it, sizeof(it)) != (ssize_t)sizeof(it))
			_exit(13);
	}
	_exit(14);
}

/*
 * R1: a client SIGKILLed while streaming persists: its rpmemd sees the
 * EOF and ends the session as interrupted ("session ended without a
 * CLOSE", exit 1, as PMDK's), every acked block is in the replica, the in-flight one is old or new per 8-byte word,
 * and the next open works (no stale lock)
 */
START_TEST(client_killed_rpmemd_exits_and_acked_data_stays)
{
	struct tset s;
	uint64_t rng = seed_for("clientkill");
	set_make(&s, "clientkill", 1, 16 * MIB, NULL);
	int pfd[2];
	ck_assert_int_eq(pipe2(pfd, O_CLOEXEC), 0);
	struct logsnap *before = log_snapshot();
	pid_t child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		close(pfd[0]);
		client_child(&s, pfd[1]);
	}
	close(pfd[1]);

	unsigned acked = 0, it;
	while (acked < FAULT_ACKS) {
		if (!read_full(pfd[0], &it, sizeof(it), 30000)) {
			int st;
			kill(child, SIGKILL);
			waitpid(child, &st, 0);
			ck_abort_msg("the client child stopped after %u acks "
				"(status 0x%x)", acked, st);
		}
		acked = it + 1;
	}
	long long t_kill = tu_now_ms();
	ck_assert_int_eq(kill(child, SIGKILL), 0);
	int status;
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	while (read_full(pfd[0], &it, sizeof(it), 1000))
		acked = it + 1;
	close(pfd[0]);

	char log[PATH_MAX];
	pid_t pid = session_find(before, log, sizeof(log), 5000);
	free(before);
	ck_assert_msg(wait_gone(pid, 10000), "rpmemd %d still runs 10 s "
		"after its client was killed", (int)pid);
	note("clientkill: %u acked; rpmemd %d gone %lld ms after the kill",
		acked, (int)pid, tu_now_ms() - t_kill);
	ck_assert_msg(log_count(log, "session ended without a CLOSE") == 1,
		"rpmemd did not end its session as interrupted, see %s", log);

	char *img = replica_image(&s);
	blk_check(&s, img, acked);
	char *mem = tu_pool_map(s.size);
	reopen_works(&s, mem, img, &rng);
}
END_TEST

/* ------------------------------------------------- 5. rpmemd stopped */

/* one call made while rpmemd is stopped */
struct stalled {
	RPMEMpool *rpp;
	char *mem;
	unsigned lane;
	int kind;		/* 0 persist, 1 relaxed, 2 flush + drain */
	size_t off, len;
	int ret, err;
	long long dt;
	pthread_t thread;
};

static const char *const Stall_names[] = { "strict persist",
	"relaxed persist", "flush + drain" };

/* stall_run -- thread body: write the marker, make the call, time it */
static void *
stall_run(void *arg)
{
	struct stalled *c = arg;
	memset(c->mem + c->off, 0xa0 + c->kind, c->len);
	long long t0 = tu_now_ms();
	switch (c->kind) {
	case 0:
		c->ret = rpmem_persist(c->rpp, c->off, c->len, c->lane, 0);
		break;
	case 1:
		c->ret = rpmem_persist(c->rpp, c->off, c->len, c->lane,
			RPMEM_PERSIST_RELAXED);
		break;
	default:
		c->ret = rpmem_flush(c->rpp, c->off, c->len, c->lane, 0);
		if (!c->ret)
			c->ret = rpmem_drain(c->rpp, c->lane, 0);
		break;
	}
	c->err = errno;
	c->dt = tu_now_ms() - t0;
	return NULL;
}

/* wait_cond -- poll `pred(pid)` until it is `want`; false after `ms` */
static bool
wait_cond(bool (*pred)(pid_t), pid_t pid, bool want, int ms)
{
	long long deadline = tu_now_ms() + ms;
	while (pred(pid) != want) {
		if (tu_now_ms() > deadline)
			return false;
		tu_nap(10);
	}
	return true;
}

/*
 * R3: rpmemd SIGSTOPped longer than RPMEM_TIMEOUT: a strict persist, a
 * relaxed persist and a flush + drain on three lanes all fail within
 * RPMEM_TIMEOUT + 2 s (ETIMEDOUT or ECONNRESET), later calls fail at
 * once with ECONNRESET, close returns; once the client has hung up, a resumed rpmemd
 * exits without applying any of the failed calls' bytes; reopen works
 */
START_TEST(rpmemd_stopped_fails_in_bound_and_drops_stale_writes)
{
	struct served v;
	served_set(&v, "stopped");
	RPMEMpool *rpp = served_pool(&v, 9);
	ck_assert_uint_ge(v.n, 4);
	for (unsigned l = 0; l < v.n; l++)
		probe(rpp, v.mem, HDR + l * 64, 64, l, 0, &v.rng, "warm-up");

	ck_assert_int_eq(kill(v.pid, SIGSTOP), 0);
	ck_assert_msg(wait_cond(tu_proc_stopped, v.pid, true, 5000),
		"rpmemd %d did not stop", (int)v.pid);
	struct stalled c[3];
	for (int k = 0; k < 3; k++) {
		c[k] = (struct stalled){ .rpp = rpp, .mem = v.mem,
			.lane = (unsigned)k, .kind = k,
			.off = MIB + (size_t)k * 512 * KIB, .len = 256 * KIB };
		ck_assert_int_eq(pthread_create(&c[k].thread, NULL, stall_run,
			&c[k]), 0);
	}
	long long t0 = tu_now_ms();
	for (int k = 0; k < 3; k++) {
		ck_assert_msg(join_by(c[k].thread, t0 + v.bound + 3000),
			"%s hangs with rpmemd stopped", Stall_names[k]);
		note("stopped: %s failed with %s after %lld ms",
			Stall_names[k], ename(c[k].err), c[k].dt);
		ck_assert_msg(c[k].ret == -1, "%s returned %d with rpmemd "
			"stopped", Stall_names[k], c[k].ret);
		ck_assert_msg(c[k].err == ETIMEDOUT || c[k].err == ECONNRESET,
			"%s: errno %s", Stall_names[k], ename(c[k].err));
		ck_assert_msg(c[k].dt < v.bound, "%s failed after %lld ms, "
			"bound %lld", Stall_names[k], c[k].dt, v.bound);
	}
	long long t1 = tu_now_ms();
	/* the call that waited out the peer says ETIMEDOUT; the link is
	 * dropped then, so later calls see ECONNRESET */
	failed(rpmem_persist(rpp, HDR, 8, 3, 0), ECONNRESET, "persist after "
		"the timeout");
	ck_assert_msg(tu_now_ms() - t1 < 1000, "a call on a dead handle "
		"waited %lld ms", tu_now_ms() - t1);
	t1 = tu_now_ms();
	(void) rpmem_close(rpp);
	note("stopped: close took %lld ms", tu_now_ms() - t1);
	ck_assert_msg(tu_now_ms() - t1 < v.bound, "close took %lld ms",
		tu_now_ms() - t1);

	/* the client has hung up: sshd closes rpmemd's stdin */
	ck_assert_msg(wait_cond(stdin_has_writer, v.pid, false, 10000),
		"rpmemd's stdin still open 10 s after the client left");
	ck_assert_int_eq(kill(v.pid, SIGCONT), 0);
	ck_assert_msg(wait_gone(v.pid, 10000), "resumed rpmemd %d did not "
		"exit", (int)v.pid);
	note("stopped: resumed rpmemd dropped %u lane messages",
		log_count(v.log, "dropped"));

	char *img = replica_image(&v.s);
	char bad[MSG_MAX] = "";
	for (int k = 0; k < 3; k++) {
		size_t stale = 0;
		for (size_t i = 0; i < c[k].len; i++)
			stale += img[c[k].off + i] != 0;
		note("stopped: %zu of %zu bytes of the failed %s are in the "
			"replica", stale, c[k].len, Stall_names[k]);
		if (stale && !bad[0])
			say(bad, sizeof(bad), "%zu of %zu bytes of the failed "
				"%s reached the replica after rpmemd resumed",
				stale, c[k].len, Stall_names[k]);
	}
	ck_assert_msg(bad[0] == '\0', "%s", bad);
	reopen_works(&v.s, v.mem, img, &v.rng);
}
END_TEST

/* dpath_add_faults -- the fault cases */
void
dpath_add_faults(TCase *tc)
{
	tcase_add_test(tc, rpmemd_killed_fails_econnreset_and_keeps_acked_data);
	tcase_add_test(tc, client_killed_rpmemd_exits_and_acked_data_stays);
	tcase_add_test(tc, ssh_dropped_ends_the_session_on_both_sides);
	tcase_add_test(tc,
		rpmemd_stopped_fails_in_bound_and_drops_stale_writes);
}
