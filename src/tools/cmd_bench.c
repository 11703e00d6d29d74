/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_bench.c -- rpmem bench: persist costs next to a raw libfabric baseline
 *
 * Every figure of ours is printed with the same figure measured in the same
 * run between this process and a forked peer that does nothing but answer
 * (rawfab.c), so what the library and rpmemd add can be read off directly.
 * The report itself is printed by bench_out.c.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include "bench.h"
#include "db_int.h"
#include "fab.h"
#include "poolset.h"
#include "tools.h"

const char cmd_bench_usage[] = "POOLSET [--quick] [--lanes N] [--json]";
const char cmd_bench_help[] =
	"time persists to the first remote replica against raw libfabric "
	"(overwrites data at offsets >= 4096)";

const size_t Bench_sizes[NSIZES] = {
	8, 64, 256, 1024, 4096, 64 << 10, 256 << 10, 1 << 20,
};
const size_t Bench_bw_sizes[NBW] = { 64 << 10, 1 << 20 };
const size_t Bench_fd_sizes[NFD_SIZES] = { 64, 4096 };
const unsigned Bench_fd_k[NFD_K] = { 1, 4, 16 };
const size_t Bench_read_sizes[NREAD] = { 64, 4096, 1 << 20 };
const char *const Bench_modes[NMODES] = { "strict", "relaxed" };

#define DATA_OFF 4096		/* the pool header is below */
#define MIN_ITERS 20
#define WARM_ITERS 3
#define MAX_SAMPLES 100000
#define LAT_NS 300000000ULL	/* time per latency point */
#define BW_NS 300000000ULL	/* time per throughput round */
#define REPS 3			/* throughput rounds; --quick: 1 */
#define QUICK_LAT_NS 50000000ULL
#define QUICK_BW_NS 100000000ULL
#define MAX_REGION ((size_t)16 << 20)	/* walked by each lane */

typedef int (*op_fn)(struct bench *b, size_t size, unsigned i,
		unsigned flags);

/* cmp_double -- qsort order */
static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* stats -- p50, p99 (nearest rank) and mean of n samples, sorted here */
static void
stats(double *s, unsigned n, struct lat *out)
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
		stats(b->samples, n, out);
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
	stats(fl, n, &s);
	out->flush = s.p50;
	stats(dr, n, &s);
	out->drain = s.p50;
	stats(rd, n, &s);
	out->round = s.p50;
	out->n = n;
	return 0;
}

/* fail_rpmem -- report a failed librpmem call */
static int
fail_rpmem(const char *what)
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
measure_latency(struct bench *b)
{
	for (unsigned s = 0; s < NSIZES; s++) {
		if (sample(b, op_ping, Bench_sizes[s], 0, &b->raw_rtt[s]))
			return fail_raw("round trip");
		for (int m = 0; m < NMODES; m++)
			if (sample(b, op_persist, Bench_sizes[s], m == RELAXED ?
					RPMEM_PERSIST_RELAXED : 0,
					&b->persist[m][s]))
				return fail_rpmem("persist");
	}
	for (unsigned s = 0; s < NREAD; s++) {
		if (sample(b, op_raw_read, Bench_read_sizes[s], 0,
				&b->raw_read[s]))
			return fail_raw("read");
		if (sample(b, op_read, Bench_read_sizes[s], 0, &b->read[s]))
			return fail_rpmem("read");
		b->read_mibs[s] = (double)Bench_read_sizes[s] / MIB /
			(b->read[s].mean / 1e6);
	}
	return 0;
}

/*
 * measure_throughput -- b and the raw write bandwidth: the median of
 * `reps` rounds of raw, strict, relaxed, so drift hits all three alike
 */
static int
measure_throughput(struct bench *b)
{
	unsigned reps = b->quick ? 1 : REPS;
	for (unsigned s = 0; s < NBW; s++) {
		for (unsigned l = 1; l <= b->lanes; l++) {
			double v[NMODES + 1][REPS];
			for (unsigned r = 0; r < reps; r++) {
				for (int m = -1; m < NMODES; m++) {
					if (throughput(b, m, Bench_bw_sizes[s],
							l, &v[m + 1][r]))
						return m < 0 ?
							fail_raw("write") :
							fail_rpmem("persist");
				}
			}
			struct lat med;
			stats(v[0], reps, &med);
			b->raw_bw[s][l] = med.p50;
			for (int m = 0; m < NMODES; m++) {
				stats(v[m + 1], reps, &med);
				b->bw[m][s][l] = med.p50;
			}
		}
	}
	return 0;
}

/* measure_fd -- c */
static int
measure_fd(struct bench *b)
{
	for (int m = 0; m < NMODES; m++)
		for (unsigned s = 0; s < NFD_SIZES; s++)
			for (unsigned k = 0; k < NFD_K; k++)
				if (flush_drain(b, m == RELAXED ?
						RPMEM_FLUSH_RELAXED : 0,
						Bench_fd_sizes[s],
						Bench_fd_k[k], &b->fd[m][s][k]))
					return fail_rpmem("flush/drain");
	return 0;
}

/* warm_up -- fault in both sides' pages: relaxed persist of the data area */
static int
warm_up(struct bench *b)
{
	size_t end = DATA_OFF + b->lanes * b->region;
	for (size_t off = DATA_OFF; off < end; off += MAX_SIZE) {
		size_t len = end - off < MAX_SIZE ? end - off : MAX_SIZE;
		if (rpmem_persist(b->rpp, off, len, 0, RPMEM_PERSIST_RELAXED))
			return fail_rpmem("warm-up persist");
	}
	memset(b->rbuf, 0, MAX_SIZE);
	return 0;
}

/* is_loopback -- a literal loopback address or "localhost" */
static bool
is_loopback(const char *node)
{
	struct in_addr a4;
	struct in6_addr a6;
	if (inet_pton(AF_INET, node, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, node, &a6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&a6);
	return strcmp(node, "localhost") == 0;
}

/* baseline_provider -- RPMEM_PROVIDER, else what librpmem picks on lo */
static uint32_t
baseline_provider(void)
{
	const char *p = getenv("RPMEM_PROVIDER");
	if (p && *p)
		return proto_provider_parse(p);
	const char *s = getenv("RPMEM_ENABLE_SOCKETS");
	return s && atoi(s) > 0 ? PROTO_PROV_SOCKETS : PROTO_PROV_TCP;
}

/* parse_args -- options and the poolset; EXIT_USAGE on error */
static int
parse_args(struct bench *b, int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "lanes", required_argument, NULL, 'l' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	optind = 1;
	opterr = 0;
	b->lanes_req = DEFAULT_LANES;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		char *end;
		unsigned long v;
		switch (c) {
		case 'q':
			b->quick = true;
			break;
		case 'j':
			b->json = true;
			break;
		case 'l':
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || *end || v < 1 || v > MAX_LANES ||
					optarg[0] == '-') {
				fprintf(stderr, "rpmem bench: --lanes wants "
					"1..%d, not '%s'\n", MAX_LANES, optarg);
				return EXIT_USAGE;
			}
			b->lanes_req = (unsigned)v;
			break;
		default:
			fprintf(stderr, "usage: rpmem bench %s\n",
				cmd_bench_usage);
			return EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, "usage: rpmem bench %s\n", cmd_bench_usage);
		return EXIT_USAGE;
	}
	b->path = argv[optind];
	b->lat_ns = b->quick ? QUICK_LAT_NS : LAT_NS;
	b->bw_ns = b->quick ? QUICK_BW_NS : BW_NS;
	b->provider = baseline_provider();
	if (b->provider == PROTO_PROV_UNKNOWN) {
		fprintf(stderr, "rpmem bench: unknown RPMEM_PROVIDER=%s\n",
			getenv("RPMEM_PROVIDER"));
		return 1;
	}
	return 0;
}

/* load_set -- parse the poolset; pick the first remote replica */
static int
load_set(struct bench *b)
{
	char err[POOLSET_ERR_MAX];
	if (poolset_parse_file(b->path, &b->set, err, sizeof(err)) ||
			poolset_parse_file(b->path, &b->local, err,
				sizeof(err))) {
		fprintf(stderr, "rpmem bench: %s\n", err);
		return -1;
	}
	if (b->set->replicas[0].remote) {
		fprintf(stderr, "rpmem bench: %s: the first replica must be "
			"local\n", b->path);
		return -1;
	}
	for (unsigned r = 1; r < b->set->nreplicas && !b->rep; r++)
		if (b->set->replicas[r].remote) {
			b->rep = &b->set->replicas[r];
			b->rep_idx = r;
		}
	if (!b->rep) {
		fprintf(stderr, "rpmem bench: %s has no remote replica\n",
			b->path);
		return -1;
	}
	struct target t;
	if (target_parse(b->rep->target, &t)) {
		fprintf(stderr, "rpmem bench: invalid target '%s'\n",
			b->rep->target);
		return -1;
	}
	b->loopback = is_loopback(t.node);
	b->size = poolset_replica_size(b->set, 0);
	size_t data = b->size > DATA_OFF ? b->size - DATA_OFF : 0;
	b->region = (data / b->lanes_req) & ~(size_t)4095;
	if (b->region > MAX_REGION)
		b->region = MAX_REGION;
	if (b->region < MAX_SIZE) {
		fprintf(stderr, "rpmem bench: a %zu-byte pool is too small "
			"for %u lanes: need %zu bytes per lane\n", b->size,
			b->lanes_req, MAX_SIZE);
		return -1;
	}
	return 0;
}

/* open_pool -- map the master, open the remote replica */
static int
open_pool(struct bench *b)
{
	int e = db_parts_open(b->local, false, &b->pool);
	b->local = NULL;	/* db_parts_open took it over */
	if (e) {
		fprintf(stderr, "rpmem bench: opening the local parts of %s: "
			"%s\n", b->path, strerror(-e));
		return -1;
	}
	fprintf(stderr, "rpmem bench: warning: overwriting the data area "
		"(offsets >= %d) of replica %u (%s %s) with the master's "
		"bytes\n", DATA_OFF, b->rep_idx, b->rep->target, b->rep->desc);
	struct rpmem_pool_attr attr;
	b->lanes = b->lanes_req;
	b->rpp = rpmem_open(b->rep->target, b->rep->desc, b->pool->addr,
		b->size, &b->lanes, &attr);
	if (!b->rpp)
		return fail_rpmem("opening the remote replica");
	if (b->lanes < b->lanes_req)
		fprintf(stderr, "rpmem bench: %u lanes asked, %u granted\n",
			b->lanes_req, b->lanes);
	return 0;
}

/* bench_free -- close everything that was opened */
static int
bench_free(struct bench *b, int ret)
{
	if (b->rpp && rpmem_close(b->rpp))
		ret = fail_rpmem("closing the remote replica");
	rawfab_close(b->raw);
	if (b->pool)
		(void) db_parts_close(b->pool, false, false);
	if (b->local)
		poolset_free(b->local);
	if (b->set)
		poolset_free(b->set);
	free(b->samples);
	free(b->rbuf);
	free(b);
	return ret ? 1 : 0;
}

/* cmd_bench -- measure, compare with the raw baseline, report */
int
cmd_bench(int argc, char *argv[])
{
	struct bench *b = calloc(1, sizeof(*b));
	if (!b) {
		perror("rpmem bench");
		return 1;
	}
	int r = parse_args(b, argc, argv);
	if (r) {
		free(b);
		return r;
	}
	if (load_set(b))
		return bench_free(b, -1);

	/* fork before this process uses libfabric or starts threads */
	struct rawfab_cfg rc = {
		.provider = b->provider, .neps = b->lanes_req,
		.max_size = MAX_SIZE, .window = WINDOW, .area = b->region,
	};
	r = rawfab_spawn(&rc, &b->raw);
	if (r) {
		fprintf(stderr, "rpmem bench: starting the baseline peer: "
			"%s\n", strerror(-r));
		return bench_free(b, -1);
	}
	b->samples = malloc(3 * MAX_SAMPLES * sizeof(double));
	if (!b->samples || posix_memalign(&b->rbuf, 4096, MAX_SIZE)) {
		perror("rpmem bench");
		return bench_free(b, -1);
	}
	if (open_pool(b))
		return bench_free(b, -1);
	r = rawfab_connect(b->raw);
	if (r) {
		fprintf(stderr, "rpmem bench: connecting to the baseline peer "
			"on %s: %s\n", RAWFAB_NODE, fab_strerror(r));
		return bench_free(b, -1);
	}
	if (warm_up(b) || measure_latency(b) || measure_throughput(b) ||
			measure_fd(b))
		return bench_free(b, -1);
	if (b->json)
		bench_print_json(b, stdout);
	else
		bench_print_text(b, stdout);
	return bench_free(b, 0);
}
