/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_measure.c -- rpmem bench: the figures of one session, each next
 * to the same figure of the raw libfabric baseline (rawfab.c) measured
 * right before it
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "lanesec.h"

#define MIN_ITERS 20
#define WARM_ITERS 3

typedef int (*op_fn)(struct bench *b, size_t size, unsigned i,
		unsigned flags);

/* cmp_double -- qsort order */
static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* bench_stats -- p50, p99 (nearest rank) and mean of n samples (bench.h) */
void
bench_stats(double *s, unsigned n, struct lat *out)
{
	double sum = 0;
	qsort(s, n, sizeof(*s), cmp_double);
	for (unsigned i = 0; i < n; i++)
		sum += s[i];
	size_t i99 = ((size_t)n * 99 + 99) / 100;
	out->n = n;
	out->p50 = s[n / 2];
	out->p99 = s[i99 ? i99 - 1 : 0];
	out->mean = sum / n;
}

/* lane_off -- pool offset of the i-th range of `size` in a lane's region */
static size_t
lane_off(const struct bench *b, unsigned lane, unsigned i, size_t size)
{
	size_t step = (size + 63) & ~(size_t)63;
	size_t slots = b->region / step;
	return DATA_OFF + lane * b->region + (i % slots) * step;
}

/* us -- microseconds from t0 to t1 */
static double
us(uint64_t t0, uint64_t t1)
{
	return (double)(t1 - t0) / 1e3;
}

/* sample -- latency of op(size) over the time budget, min MIN_ITERS */
static int
sample(struct bench *b, op_fn op, size_t size, unsigned flags,
		struct lat *out)
{
	int r = 0;
	for (unsigned i = 0; !r && i < WARM_ITERS; i++)
		r = op(b, size, i, flags);
	uint64_t t = rawfab_now_ns(), end = t + b->lat_ns;
	unsigned n = 0;
	while (!r && n < MAX_SAMPLES && (n < MIN_ITERS || t < end)) {
		uint64_t t0 = t;
		r = op(b, size, n, flags);
		t = rawfab_now_ns();
		b->samples[n++] = us(t0, t);
	}
	if (!r)
		bench_stats(b->samples, n, out);
	return r;
}

/* op_ping -- raw: SEND size, wait for the answer */
static int
op_ping(struct bench *b, size_t size, unsigned i, unsigned flags)
{
	(void) i;
	(void) flags;
	return rawfab_ping(b->raw, 0, size);
}

/* op_raw_read -- raw: one RMA read */
static int
op_raw_read(struct bench *b, size_t size, unsigned i, unsigned flags)
{
	(void) i;
	(void) flags;
	return rawfab_read(b->raw, 0, size);
}

/* op_persist -- rpmem_persist on lane 0 */
static int
op_persist(struct bench *b, size_t size, unsigned i, unsigned flags)
{
	return rpmem_persist(b->rpp, lane_off(b, 0, i, size), size, 0, flags);
}

/* op_read -- rpmem_read on lane 0 */
static int
op_read(struct bench *b, size_t size, unsigned i, unsigned flags)
{
	(void) flags;
	return rpmem_read(b->rpp, b->rbuf, lane_off(b, 0, i, size), size, 0);
}

/* a start line every thread of a throughput point waits at */
struct gate {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int go;			/* 0 wait, 1 run, -1 give up */
};

struct worker {
	struct bench *b;
	struct gate *gate;
	unsigned lane;
	int mode;		/* -1: raw RMA writes */
	size_t size;
	uint64_t bytes;
	uint64_t ns;
	int err;
};

/* gate_wait -- until the gate opens; false when the point was abandoned */
static bool
gate_wait(struct gate *g)
{
	pthread_mutex_lock(&g->lock);
	while (!g->go)
		pthread_cond_wait(&g->cond, &g->lock);
	int go = g->go;
	pthread_mutex_unlock(&g->lock);
	return go > 0;
}

/* gate_open -- let the threads run (1) or go home (-1) */
static void
gate_open(struct gate *g, int go)
{
	pthread_mutex_lock(&g->lock);
	g->go = go;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
}

/* worker_run -- one lane's share of a throughput point */
static void *
worker_run(void *arg)
{
	struct worker *w = arg;
	struct bench *b = w->b;
	if (!gate_wait(w->gate))
		return NULL;
	uint64_t t0 = rawfab_now_ns(), end = t0 + b->bw_ns, t = t0;
	if (w->mode < 0) {
		w->err = rawfab_write_until(b->raw, w->lane, w->size, end,
			&w->bytes);
		t = rawfab_now_ns();
	}
	unsigned flags = w->mode == RELAXED ? RPMEM_PERSIST_RELAXED : 0;
	for (unsigned i = 0; w->mode >= 0 && !w->err && t < end; i++) {
		if (rpmem_persist(b->rpp, lane_off(b, w->lane, i, w->size),
				w->size, w->lane, flags))
			w->err = errno ? errno : EIO;
		else
			w->bytes += w->size;
		t = rawfab_now_ns();
	}
	w->ns = t - t0;
	return NULL;
}

/* throughput -- MiB/s of `nlanes` threads, one per lane */
static int
throughput(struct bench *b, int mode, size_t size, unsigned nlanes,
		double *mibs)
{
	struct worker w[MAX_LANES];
	pthread_t th[MAX_LANES];
	struct gate g = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
		0 };
	unsigned n = 0;
	for (; n < nlanes; n++) {
		w[n] = (struct worker){ .b = b, .gate = &g, .lane = n,
			.mode = mode, .size = size };
		if (pthread_create(&th[n], NULL, worker_run, &w[n]))
			break;
	}
	gate_open(&g, n == nlanes ? 1 : -1);
	uint64_t bytes = 0, ns = 1;
	int err = n == nlanes ? 0 : EAGAIN;
	for (unsigned i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		bytes += w[i].bytes;
		ns = w[i].ns > ns ? w[i].ns : ns;
		err = err ? err : w[i].err;
	}
	if (n < nlanes)
		fprintf(stderr, "rpmem bench: cannot start thread %u\n", n);
	*mibs = (double)bytes / MIB / ((double)ns / 1e9);
	return err ? -1 : 0;
}

/* flush_drain -- k flushes and a drain per round on lane 0 */
static int
flush_drain(struct bench *b, unsigned flags, size_t size, unsigned k,
		struct fd *out)
{
	double *fl = b->samples, *dr = fl + MAX_SAMPLES, *rd = dr + MAX_SAMPLES;
	uint64_t t = rawfab_now_ns(), end = t + b->lat_ns;
	unsigned n = 0, i = 0;
	while (n < MAX_SAMPLES && (n < MIN_ITERS || t < end)) {
		uint64_t t0 = rawfab_now_ns();
		for (unsigned j = 0; j < k; j++, i++)
			if (rpmem_flush(b->rpp, lane_off(b, 0, i, size), size,
					0, flags))
				return -1;
		uint64_t t1 = rawfab_now_ns();
		if (rpmem_drain(b->rpp, 0, 0))
			return -1;
		t = rawfab_now_ns();
		fl[n] = us(t0, t1) / k;
		dr[n] = us(t1, t);
		rd[n++] = us(t0, t);
	}
	struct lat s;
	bench_stats(fl, n, &s);
	out->flush = s.p50;
	bench_stats(dr, n, &s);
	out->drain = s.p50;
	bench_stats(rd, n, &s);
	out->round = s.p50;
	out->n = n;
	return 0;
}

/* bench_fail -- report a failed librpmem call; -1 */
int
bench_fail(const char *what)
{
	fprintf(stderr, "rpmem bench: %s: %s\n", what, rpmem_errormsg());
	return -1;
}

/* fail_raw -- report a failed baseline measurement */
static int
fail_raw(const char *what)
{
	fprintf(stderr, "rpmem bench: raw baseline %s failed\n", what);
	return -1;
}

/*
 * measure_latency -- a, d and the raw round trips and reads; each size's
 * baseline right before ours, so both see the same machine
 */
static int
measure_latency(struct bench *b, struct run *r)
{
	for (unsigned s = 0; s < NSIZES; s++) {
		if (sample(b, op_ping, Bench_sizes[s], 0, &r->raw_rtt[s]))
			return fail_raw("round trip");
		for (int m = 0; m < NMODES; m++)
			if (sample(b, op_persist, Bench_sizes[s], m == RELAXED ?
					RPMEM_PERSIST_RELAXED : 0,
					&r->persist[m][s]))
				return bench_fail("persist");
	}
	for (unsigned s = 0; s < NREAD; s++) {
		if (sample(b, op_raw_read, Bench_read_sizes[s], 0,
				&r->raw_read[s]))
			return fail_raw("read");
		if (sample(b, op_read, Bench_read_sizes[s], 0, &r->read[s]))
			return bench_fail("read");
		r->read_mibs[s] = (double)Bench_read_sizes[s] / MIB /
			(r->read[s].mean / 1e6);
	}
	return 0;
}

/* CPU time over some throughput points, and the MiB they moved */
struct cpu_use {
	struct cpu_sample at;	/* when the current point began */
	uint64_t t0;
	double self, daemon, machine, mib;
};

/* cpu_begin -- a point starts */
static void
cpu_begin(struct bench *b, struct cpu_use *u)
{
	bench_cpu_now(b, &u->at);
	u->t0 = rawfab_now_ns();
}

/* cpu_end -- a point that ran at `mibs` MiB/s ended */
static void
cpu_end(struct bench *b, struct cpu_use *u, double mibs)
{
	struct cpu_sample now;
	bench_cpu_now(b, &now);
	u->mib += mibs * (double)(rawfab_now_ns() - u->t0) / 1e9;
	u->self += now.self - u->at.self;
	u->daemon = now.daemon < 0 || u->at.daemon < 0 || u->daemon < 0 ?
		-1 : u->daemon + now.daemon - u->at.daemon;
	u->machine = now.machine < 0 || u->machine < 0 ? -1 :
		u->machine + now.machine - u->at.machine;
}

/*
 * measure_throughput -- b and the raw write bandwidth: the median of
 * REPS rounds of raw, strict, relaxed, so drift hits all three alike
 */
static int
measure_throughput(struct bench *b, struct run *r)
{
	struct cpu_use cpu = { 0 }, raw = { 0 };
	for (unsigned s = 0; s < NBW; s++) {
		for (unsigned l = 1; l <= b->lanes; l++) {
			double v[NMODES + 1][REPS];
			for (unsigned k = 0; k < REPS; k++) {
				for (int m = -1; m < NMODES; m++) {
					/* strict and raw, 1 MiB on 1 lane */
					struct cpu_use *c = NULL;
					if (l == 1 && Bench_bw_sizes[s] ==
							MAX_SIZE)
						c = m < 0 ? &raw : m == STRICT ?
							&cpu : NULL;
					if (c)
						cpu_begin(b, c);
					if (throughput(b, m, Bench_bw_sizes[s],
							l, &v[m + 1][k]))
						return m < 0 ?
							fail_raw("write") :
							bench_fail("persist");
					if (c)
						cpu_end(b, c, v[m + 1][k]);
				}
			}
			struct lat med;
			bench_stats(v[0], REPS, &med);
			r->raw_bw[s][l] = med.p50;
			for (int m = 0; m < NMODES; m++) {
				bench_stats(v[m + 1], REPS, &med);
				r->bw[m][s][l] = med.p50;
			}
		}
	}
	double gib = cpu.mib / 1024.0;
	r->cpu_self = gib > 0 ? cpu.self / gib : -1;
	r->cpu_daemon = gib > 0 && cpu.daemon >= 0 ? cpu.daemon / gib : -1;
	r->cpu_rest = gib > 0 && cpu.machine >= 0 ?
		(cpu.machine - cpu.self) / gib : -1;
	gib = raw.mib / 1024.0;
	r->raw_cpu = gib > 0 && raw.machine >= 0 ? raw.machine / gib : -1;
	return 0;
}

/* measure_fd -- c */
static int
measure_fd(struct bench *b, struct run *r)
{
	for (int m = 0; m < NMODES; m++)
		for (unsigned s = 0; s < NFD_SIZES; s++)
			for (unsigned k = 0; k < NFD_K; k++)
				if (flush_drain(b, m == RELAXED ?
						RPMEM_FLUSH_RELAXED : 0,
						Bench_fd_sizes[s],
						Bench_fd_k[k], &r->fd[m][s][k]))
					return bench_fail("flush/drain");
	return 0;
}

/*
 * warm_up -- fault in both sides' pages: a relaxed persist of the data
 * area, and the baseline's RMA writes over each endpoint's area, which
 * may not have been touched since the peer started
 */
static int
warm_up(struct bench *b)
{
	size_t end = DATA_OFF + b->lanes * b->region;
	for (size_t off = DATA_OFF; off < end; off += MAX_SIZE) {
		size_t len = end - off < MAX_SIZE ? end - off : MAX_SIZE;
		if (rpmem_persist(b->rpp, off, len, 0, RPMEM_PERSIST_RELAXED))
			return bench_fail("warm-up persist");
	}
	for (unsigned ep = 0; ep < b->lanes; ep++)
		for (uint64_t done = 0, n; done < b->region; done += n)
			if (rawfab_write_until(b->raw, ep, MAX_SIZE,
					rawfab_now_ns() + b->bw_ns, &n))
				return fail_raw("warm-up write");
	memset(b->rbuf, 0, MAX_SIZE);
	return 0;
}

#define CIPHER_MIB 64	/* MiB sealed and opened to time the cipher */

/*
 * measure_cipher -- seconds per MiB of sealing 1 MiB messages with the
 * run's cipher and policy and opening them again, in this process: what
 * the two ends of a sealed persist spend on the cipher alone
 */
static void
measure_cipher(struct run *r)
{
	enum lanesec_policy pol;
	enum lanesec_cipher cip;
	r->seal_open_s_mib = -1;
	if (lanesec_policy_parse(r->policy, &pol) || pol == LANESEC_NONE ||
			!r->cipher || lanesec_cipher_parse(r->cipher, &cip))
		return;
	uint8_t rnd[LANESEC_RANDOM_LEN] = { 0 }, tag[LANESEC_TAG_LEN];
	struct lanesec_keys k;
	struct lanesec_stream tx = { 0 }, rx = { 0 };
	char *buf = malloc(MAX_SIZE);
	if (buf && !lanesec_derive(&k, pol, cip, rnd, rnd) &&
			!lanesec_stream_init(&tx, &k, LANESEC_C2S, 0, true) &&
			!lanesec_stream_init(&rx, &k, LANESEC_C2S, 0, false)) {
		memset(buf, 0x5a, MAX_SIZE);
		struct lanesec_piece p = { buf, buf, MAX_SIZE };
		uint64_t t0 = rawfab_now_ns();
		int e = 0;
		for (unsigned i = 0; !e && i < CIPHER_MIB; i++)
			e = lanesec_seal(&tx, &p, 1, tag) ||
				lanesec_open(&rx, &p, 1, tag);
		if (!e)
			r->seal_open_s_mib = (double)(rawfab_now_ns() - t0) /
				1e9 / CIPHER_MIB;
	}
	lanesec_stream_fini(&tx);
	lanesec_stream_fini(&rx);
	lanesec_wipe(&k, sizeof(k));
	free(buf);
}

/* bench_measure -- every figure of the open session into `r` */
int
bench_measure(struct bench *b, struct run *r)
{
	if (warm_up(b) || measure_latency(b, r) || measure_throughput(b, r) ||
			measure_fd(b, r))
		return -1;
	measure_cipher(r);
	return 0;
}
