/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * soak_worker.c -- one soak client: random strict, relaxed and deep
 * persists, flush + drain batches and reads on every lane of its pool,
 * recording each range before it is sent and once it is acknowledged
 *
 *   soak --worker ID STATE SIZE TARGET DESC LANES SEED THINK_US
 *
 * Commands arrive on descriptor 3, reports leave on descriptor 4 (see
 * soak.h).  Only librpmem's public API and documented errors are used.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include "librpmem.h"
#include "soak.h"

#define CMD_FD 3
#define MSG_FD 4
#define LEN_BITS 19		/* ranges of 1 B .. 256 KiB */
#define BATCH_MAX 4		/* flushes before one drain */
#define TRAFFIC_NICE 10

static const struct rpmem_pool_attr Attr = {
	.signature = "SOAKPOOL",
	.major = 1,
	.poolset_uuid = { 0x50, 0x4f, 0x4f, 0x4c },
	.uuid = { 0x53, 0x4f, 0x41, 0x4b },
};

struct worker {
	unsigned id;
	const char *target;
	const char *desc;
	unsigned want;			/* lanes asked for */
	unsigned think_us;		/* mean pause between two calls */
	struct soak_state st;
	uint64_t seed;
	RPMEMpool *rpp;
	unsigned nlanes;
	int wake;			/* eventfd: a lane failed */
	atomic_bool stop;
	pthread_mutex_t lock;		/* the first failure below */
	int err;
	long long t_err;
	char text[SOAK_MSG_TEXT];
};

struct lane {
	struct worker *w;
	unsigned idx;
	uint64_t rng;
	size_t lo, hi;			/* its region of the pool */
	char *buf;			/* rpmem_read target */
	pthread_t thread;
};

/* send_msg -- one report to the supervisor; it going away ends us */
static void
send_msg(uint32_t type, int err, long long t_ms, unsigned nlanes,
		const char *text)
{
	struct soak_msg m = { .type = type, .err = err, .t_ms = t_ms,
		.nlanes = nlanes };
	DIR *d = opendir("/proc/self/fd");
	if (d) {
		struct dirent *de;
		while ((de = readdir(d)) != NULL)
			m.fds += de->d_name[0] != '.';
		m.fds--;	/* the directory's own descriptor */
		closedir(d);
	}
	snprintf(m.text, sizeof(m.text), "%s", text ? text : "");
	if (write(MSG_FD, &m, sizeof(m)) != (ssize_t)sizeof(m))
		_exit(2);
}

/* lane_failed -- keep the first failure of the session, wake main */
static int
lane_failed(struct lane *l, const char *what)
{
	struct worker *w = l->w;
	int err = errno;
	long long t = tu_now_ms();
	pthread_mutex_lock(&w->lock);
	if (!w->err) {
		w->err = err ? err : EIO;
		w->t_err = t;
		snprintf(w->text, sizeof(w->text), "%s on lane %u: %s", what,
			l->idx, rpmem_errormsg());
	}
	pthread_mutex_unlock(&w->lock);
	atomic_store(&w->stop, true);
	uint64_t one = 1;
	if (write(w->wake, &one, sizeof(one)) < 0)
		_exit(2);
	return -1;
}

/* pick -- a range of 1 B .. 256 KiB in [lo, hi), half of them aligned */
static void
pick(struct lane *l, size_t lo, size_t hi, size_t *off, size_t *len)
{
	size_t span = hi - lo;
	size_t n = 1 + tu_rnd(&l->rng) % ((size_t)1 << (tu_rnd(&l->rng) %
		LEN_BITS));
	if (n > span)
		n = span;
	size_t o = lo + tu_rnd(&l->rng) % (span - n + 1);
	if (tu_rnd(&l->rng) & 1) {
		o = lo + ((o - lo) & ~(size_t)7);
		size_t n8 = (n + 7) & ~(size_t)7;
		if (o + n8 <= hi)
			n = n8;
	}
	*off = o;
	*len = n;
}

/* fill -- fresh bytes into the local pool, recorded as in flight first */
static void
fill(struct lane *l, size_t off, size_t len, enum soak_kind kind)
{
	struct soak_lane *ln = &l->w->st.head->lane[l->idx];
	unsigned n = atomic_load(&ln->n);
	ln->r[n] = (struct soak_range){ .off = off, .len = len,
		.kind = kind };
	atomic_store(&ln->n, n + 1);
	char *p = l->w->st.pool + off;
	for (size_t i = 0; i < len; i += 8) {
		uint64_t v = tu_rnd(&l->rng);
		memcpy(p + i, &v, len - i < 8 ? len - i : 8);
	}
}

/* acked -- the lane's ranges are durable: into the image, record clear */
static void
acked(struct lane *l)
{
	struct soak_head *h = l->w->st.head;
	struct soak_lane *ln = &h->lane[l->idx];
	atomic_store(&ln->acked, 1);
	unsigned n = atomic_load(&ln->n);
	for (unsigned i = 0; i < n; i++) {
		memcpy(l->w->st.image + ln->r[i].off,
			l->w->st.pool + ln->r[i].off, ln->r[i].len);
		atomic_fetch_add(&h->bytes, ln->r[i].len);
	}
	atomic_store(&ln->n, 0);
	atomic_store(&ln->acked, 0);
}

/* call -- count a data call in progress while it runs */
#define CALL(h, expr) ({ \
	atomic_fetch_add(&(h)->in_call, 1); \
	int r_ = (expr); \
	atomic_fetch_sub(&(h)->in_call, 1); \
	if (!r_) \
		atomic_fetch_add(&(h)->ops, 1); \
	r_; \
})

/* op_persist -- one strict, relaxed or deep persist */
static int
op_persist(struct lane *l, int how)
{
	static const char *const what[] = { "persist", "relaxed persist",
		"deep persist" };
	struct worker *w = l->w;
	size_t off, len;
	pick(l, l->lo, l->hi, &off, &len);
	fill(l, off, len, how == 1 ? SOAK_RELAXED : SOAK_STRICT);
	int r = how == 2 ?
		CALL(w->st.head, rpmem_deep_persist(w->rpp, off, len, l->idx)) :
		CALL(w->st.head, rpmem_persist(w->rpp, off, len, l->idx,
			how == 1 ? RPMEM_PERSIST_RELAXED : 0));
	if (r)
		return lane_failed(l, what[how]);
	acked(l);
	return 0;
}

/* op_batch -- up to BATCH_MAX flushes of disjoint ranges, then a drain */
static int
op_batch(struct lane *l)
{
	struct worker *w = l->w;
	unsigned k = 1 + (unsigned)(tu_rnd(&l->rng) % BATCH_MAX);
	size_t slice = ((l->hi - l->lo) / k) & ~(size_t)7;
	for (unsigned i = 0; i < k; i++) {
		size_t off, len;
		bool relaxed = tu_rnd(&l->rng) & 1;
		pick(l, l->lo + i * slice, l->lo + (i + 1) * slice, &off,
			&len);
		fill(l, off, len, relaxed ? SOAK_RELAXED : SOAK_STRICT);
		if (CALL(w->st.head, rpmem_flush(w->rpp, off, len, l->idx,
				relaxed ? RPMEM_FLUSH_RELAXED : 0)))
			return lane_failed(l, "flush");
	}
	if (CALL(w->st.head, rpmem_drain(w->rpp, l->idx, 0)))
		return lane_failed(l, "drain");
	acked(l);
	return 0;
}

/* op_read -- read a range of the lane's region back, hold it to image */
static int
op_read(struct lane *l)
{
	struct worker *w = l->w;
	size_t off, len;
	pick(l, l->lo, l->hi, &off, &len);
	if (CALL(w->st.head, rpmem_read(w->rpp, l->buf, off, len, l->idx)))
		return lane_failed(l, "read");
	if (memcmp(l->buf, w->st.image + off, len)) {
		atomic_fetch_add(&w->st.head->bad_reads, 1);
		fprintf(stderr, "soak worker %u: rpmem_read of %zu bytes at "
			"%#zx on lane %u differs from what was acknowledged\n",
			w->id, len, off, l->idx);
	}
	return 0;
}

/*
 * lane_run -- thread body: random calls until stopped or one fails; the
 * traffic runs niced, so that ssh logins and the tests running beside
 * the soak keep the CPU they need to meet their timeouts
 */
static void *
lane_run(void *arg)
{
	struct lane *l = arg;
	(void) setpriority(PRIO_PROCESS, (id_t)gettid(), TRAFFIC_NICE);
	while (!atomic_load(&l->w->stop)) {
		if (l->w->think_us) {
			/* load shaping, not a wait: 0 .. 2x the mean pause */
			uint64_t us = tu_rnd(&l->rng) %
				(2 * (uint64_t)l->w->think_us + 1);
			struct timespec ts = { .tv_sec = (time_t)(us / 1000000),
				.tv_nsec = (long)(us % 1000000) * 1000 };
			nanosleep(&ts, NULL);
		}
		unsigned p = (unsigned)(tu_rnd(&l->rng) % 100);
		int r = p < 30 ? op_persist(l, 0) :
			p < 45 ? op_persist(l, 1) :
			p < 55 ? op_persist(l, 2) :
			p < 80 ? op_batch(l) : op_read(l);
		if (r)
			break;
	}
	return NULL;
}

/* read_cmd -- the next command; the supervisor gone means exit */
static uint32_t
read_cmd(void)
{
	uint32_t cmd;
	ssize_t n = read(CMD_FD, &cmd, sizeof(cmd));
	if (n != (ssize_t)sizeof(cmd))
		_exit(n == 0 ? 0 : 2);
	return cmd;
}

/* lanes_run -- one thread per lane, each on its own region of the pool */
static unsigned
lanes_run(struct worker *w, struct lane *lanes)
{
	size_t size = (size_t)w->st.head->pool_size;
	size_t region = ((size - SOAK_HDR) / w->nlanes) & ~(size_t)4095;
	atomic_store(&w->stop, false);
	unsigned started = 0;
	for (unsigned i = 0; i < w->nlanes; i++) {
		struct lane *l = &lanes[i];
		*l = (struct lane){ .w = w, .idx = i,
			.rng = tu_rnd(&w->seed),
			.lo = SOAK_HDR + i * region,
			.hi = SOAK_HDR + (i + 1) * region,
			.buf = malloc((size_t)1 << LEN_BITS) };
		if (!l->buf || pthread_create(&l->thread, NULL, lane_run, l)) {
			free(l->buf);
			pthread_mutex_lock(&w->lock);
			if (!w->err) {
				w->err = ENOMEM;
				snprintf(w->text, sizeof(w->text), "cannot "
					"start lane threads");
			}
			pthread_mutex_unlock(&w->lock);
			break;
		}
		started++;
	}
	return started;
}

/* lanes_stop -- every lane thread ends after its call in progress */
static void
lanes_stop(struct worker *w, struct lane *lanes, unsigned started)
{
	atomic_store(&w->stop, true);
	for (unsigned i = 0; i < started; i++) {
		pthread_join(lanes[i].thread, NULL);
		free(lanes[i].buf);
	}
	uint64_t v;
	if (read(w->wake, &v, sizeof(v)) < 0 && errno != EAGAIN)
		_exit(2);
}

/* wait_cmd -- the next command, or 0 when a lane failed first */
static uint32_t
wait_cmd(struct worker *w)
{
	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = CMD_FD, .events = POLLIN },
			{ .fd = w->wake, .events = POLLIN },
		};
		if (poll(pfd, 2, -1) < 0)
			continue;
		if (pfd[1].revents)
			return 0;
		if (pfd[0].revents)
			return read_cmd();
	}
}

/*
 * session -- run the lanes until one fails or the supervisor says close;
 * PAUSE stops them with nothing in flight, so the replica can be read,
 * until RESUME
 */
static void
session(struct worker *w)
{
	struct lane lanes[SOAK_MAX_LANES];
	w->err = 0;
	for (;;) {
		unsigned started = lanes_run(w, lanes);
		uint32_t cmd = started == w->nlanes ? wait_cmd(w) : 0;
		lanes_stop(w, lanes, started);
		if (w->err)
			break;
		if (cmd == SOAK_CMD_PAUSE) {
			send_msg(SOAK_MSG_PAUSED, 0, 0, w->nlanes, "");
			cmd = read_cmd();
			if (cmd == SOAK_CMD_RESUME)
				continue;
		}
		if (cmd != SOAK_CMD_CLOSE)
			_exit(3);
		int r = rpmem_close(w->rpp);
		int err = r ? errno : 0;
		w->rpp = NULL;
		send_msg(SOAK_MSG_CLOSED, err, 0, 0, r ? rpmem_errormsg() :
			"");
		return;
	}
	(void) rpmem_close(w->rpp);
	w->rpp = NULL;
	/* a close or pause asked for meanwhile is answered by this report */
	send_msg(SOAK_MSG_BROKEN, w->err, w->t_err, 0, w->text);
}

/* start -- create or open the pool, report, then serve the session */
static void
start(struct worker *w, bool create)
{
	unsigned n = w->want;
	struct rpmem_pool_attr attr;
	void *pool = w->st.pool;
	size_t size = (size_t)w->st.head->pool_size;
	w->rpp = create ?
		rpmem_create(w->target, w->desc, pool, size, &n, &Attr) :
		rpmem_open(w->target, w->desc, pool, size, &n, &attr);
	if (!w->rpp) {
		send_msg(SOAK_MSG_OPEN_FAILED, errno, 0, 0, rpmem_errormsg());
		return;
	}
	/* rpmemd fills in unset replica links: the identity must match */
	if (!create && (memcmp(attr.signature, Attr.signature,
			sizeof(attr.signature)) || memcmp(attr.uuid, Attr.uuid,
			sizeof(attr.uuid)) || attr.major != Attr.major)) {
		(void) rpmem_close(w->rpp);
		w->rpp = NULL;
		send_msg(SOAK_MSG_OPEN_FAILED, EPROTO, 0, 0, "the pool "
			"attributes read back differ from those created");
		return;
	}
	if (n > SOAK_MAX_LANES || n == 0) {
		(void) rpmem_close(w->rpp);
		w->rpp = NULL;
		send_msg(SOAK_MSG_OPEN_FAILED, EPROTO, 0, n, "lane count "
			"out of range");
		return;
	}
	w->nlanes = n;
	send_msg(SOAK_MSG_READY, 0, 0, n, "");
	session(w);
}

/* soak_worker_main -- body of `soak --worker ...` */
int
soak_worker_main(int argc, char *argv[])
{
	if (argc != 10) {
		fprintf(stderr, "usage: soak --worker ID STATE SIZE TARGET "
			"DESC LANES SEED THINK_US\n");
		return 2;
	}
	struct worker w = {
		.id = (unsigned)strtoul(argv[2], NULL, 10),
		.target = argv[5],
		.desc = argv[6],
		.want = (unsigned)strtoul(argv[7], NULL, 10),
		.seed = strtoull(argv[8], NULL, 10),
		.think_us = (unsigned)strtoul(argv[9], NULL, 10),
		.lock = PTHREAD_MUTEX_INITIALIZER,
	};
	size_t size = strtoull(argv[4], NULL, 10);
	int r = soak_state_map(argv[3], size, false, &w.st);
	if (r) {
		fprintf(stderr, "soak worker: %s: %s\n", argv[3],
			strerror(-r));
		return 2;
	}
	/* ssh, which librpmem spawns, must not hold the supervisor's pipes */
	if (fcntl(CMD_FD, F_SETFD, FD_CLOEXEC) ||
			fcntl(MSG_FD, F_SETFD, FD_CLOEXEC))
		return 2;
	w.wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w.wake < 0 || w.want == 0 || w.want > SOAK_MAX_LANES)
		return 2;
	for (;;) {
		uint32_t cmd = read_cmd();
		switch (cmd) {
		case SOAK_CMD_CREATE:
		case SOAK_CMD_OPEN:
			start(&w, cmd == SOAK_CMD_CREATE);
			break;
		case SOAK_CMD_REMOVE:
			r = rpmem_remove(w.target, w.desc, 0);
			send_msg(SOAK_MSG_REMOVED, r ? errno : 0, 0, 0,
				r ? rpmem_errormsg() : "");
			break;
		case SOAK_CMD_EXIT:
			soak_state_unmap(&w.st);
			return 0;
		default:
			return 3;
		}
	}
}
