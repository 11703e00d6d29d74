/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perf_client.c -- the client side of tests/perf/sidebyside.sh
 *
 *   perf_client lat TARGET SET SIZE SECONDS
 *   perf_client bw TARGET SET SIZE LANES SECONDS|BYTES [PERSIST]
 *   perf_client obj POOLSET SECONDS
 *   perf_client setup TARGET SET SIZE LANES ROUNDS
 *   perf_client local SIZE SECONDS
 *
 * Built on the public librpmem API only, so that one binary measures
 * this project's librpmem.so.1 and PMDK 1.12.1's alike (the caller picks
 * one with LD_LIBRARY_PATH): lat times strict 64 B persists on lane 0,
 * bw strict persists of PERSIST bytes (default 1M) on LANES lanes at
 * once (a thread each), each on its own span of the pool cycled through,
 * for SECONDS or until BYTES (2G, 512M: a size) went in all, after a
 * pass over each span or PERF_WARMUP persists per lane; obj
 * 64 B undo-logged libpmemobj transactions on POOLSET (which it creates,
 * replicated through whichever librpmem.so.1 libpmemobj loads); setup
 * times ROUNDS rpmem_open + rpmem_close of LANES lanes of the replica it
 * created (medians: what a session's set-up costs above its ssh); local
 * times what lat's 64 B persist costs without a replica at all: a
 * memcpy into memory of SIZE bytes and pmem_persist (an async
 * replica's floor).  The
 * CPU time of this process (getrusage) and of the daemon (whose pid the
 * file named by PERF_DAEMON_PIDFILE holds, read from /proc: the target
 * runs on this host, possibly in a network namespace) is taken around
 * the timed part.  One line on stdout, `key=value` pairs; exit 1 and a
 * line on stderr when a call fails.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <libpmem.h>
#include <libpmemobj.h>

#include "librpmem.h"

#define HDR 4096		/* the pool header, left to rpmem_create */
#define SMALL 64		/* a lat persist, a transaction's update */
#define MAX_LANES 16
#define MAX_SAMPLES 2000000

static RPMEMpool *Rpp;
static char *Pool;
static size_t Size;
static double Stop_at;		/* bw: threads stop at this time, or */
static uint64_t Quota;		/* bw: once a lane persisted this much */
static unsigned Lanes;		/* bw: lanes at once */
static size_t Big = (size_t)1 << 20;	/* bw: bytes of a persist */

/* now_s -- CLOCK_MONOTONIC in seconds */
static double
now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* die -- report a failed call and exit 1 */
static void
die(const char *what)
{
	fprintf(stderr, "perf_client: %s: %s: %s\n", what, strerror(errno),
		rpmem_errormsg());
	exit(1);
}

/* cpu_self -- CPU seconds of this process so far; its context switches
 * in *switches when not NULL */
static double
cpu_self(double *switches)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	if (switches)
		*switches = (double)ru.ru_nvcsw + (double)ru.ru_nivcsw;
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		(double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* cpu_daemon -- CPU seconds of the daemon so far; -1 when unknown */
static double
cpu_daemon(void)
{
	const char *pf = getenv("PERF_DAEMON_PIDFILE");
	FILE *f = pf ? fopen(pf, "r") : NULL;
	int pid = 0;
	if (!f)
		return -1;
	if (fscanf(f, "%d", &pid) != 1)
		pid = 0;
	fclose(f);
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = pid ? fopen(path, "r") : NULL;
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* utime and stime: fields 14 and 15, after "(comm)" */
	char *p = strrchr(buf, ')');
	unsigned long long ut, st;
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u "
			"%*u %llu %llu", &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* cmp_double -- qsort order */
static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* open_pool -- the local pool image and the remote replica */
static unsigned
open_pool(const char *target, const char *set, unsigned lanes)
{
	Pool = mmap(NULL, Size, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (Pool == MAP_FAILED)
		die("mmap");
	memset(Pool, 0x5a, Size);
	struct rpmem_pool_attr attr;
	memset(&attr, 0, sizeof(attr));
	memcpy(attr.signature, "PERFCLI", 8);
	attr.major = 1;
	Rpp = rpmem_create(target, set, Pool, Size, &lanes, &attr);
	if (!Rpp)
		die("rpmem_create");
	return lanes;
}

/* run_lat -- strict 64 B persists on lane 0 */
static void
run_lat(double secs)
{
	double *s = malloc(MAX_SAMPLES * sizeof(*s));
	if (!s)
		die("malloc");
	size_t span = (Size - HDR) / SMALL;
	unsigned n = 0;
	for (unsigned i = 0; i < 200; i++)	/* warm up */
		if (rpmem_persist(Rpp, HDR + i * SMALL, SMALL, 0, 0))
			die("rpmem_persist");
	double c0 = cpu_self(NULL), d0 = cpu_daemon(), t0 = now_s(), t = t0;
	while (n < MAX_SAMPLES && t - t0 < secs) {
		Pool[HDR + (n % span) * SMALL]++;
		if (rpmem_persist(Rpp, HDR + (n % span) * SMALL, SMALL, 0, 0))
			die("rpmem_persist");
		double t1 = now_s();
		s[n++] = (t1 - t) * 1e6;
		t = t1;
	}
	double c = cpu_self(NULL) - c0, d = cpu_daemon();
	qsort(s, n, sizeof(*s), cmp_double);
	printf("p50=%.2f p99=%.2f n=%u cpu_client_us=%.2f "
		"cpu_daemon_us=%.2f\n", s[n / 2], s[n * 99 / 100], n,
		c / n * 1e6, d0 < 0 || d < 0 ? -1.0 : (d - d0) / n * 1e6);
	free(s);
}

/* run_local -- 64 B memcpy + pmem_persist, cycled through the pool */
static void
run_local(double secs)
{
	double *s = malloc(MAX_SAMPLES * sizeof(*s));
	if (!s)
		die("malloc");
	char src[SMALL];
	memset(src, 0x5a, sizeof(src));
	size_t span = (Size - HDR) / SMALL;
	unsigned n = 0;
	double c0 = cpu_self(NULL), t0 = now_s(), t = t0;
	while (n < MAX_SAMPLES && t - t0 < secs) {
		char *dst = Pool + HDR + (n % span) * SMALL;
		src[0] = (char)n;
		memcpy(dst, src, SMALL);
		pmem_persist(dst, SMALL);
		double t1 = now_s();
		s[n++] = (t1 - t) * 1e6;
		t = t1;
	}
	double c = cpu_self(NULL) - c0;
	qsort(s, n, sizeof(*s), cmp_double);
	printf("p50=%.2f p99=%.2f n=%u cpu_client_us=%.2f\n", s[n / 2],
		s[n * 99 / 100], n, c / n * 1e6);
	free(s);
}

/* bw_lane -- a lane's strict persists of Big bytes, until Stop_at or Quota */
static void *
bw_lane(void *arg)
{
	unsigned lane = (unsigned)(uintptr_t)arg;
	size_t region = (Size - HDR) / Lanes / Big * Big;
	size_t base = HDR + lane * region, at = 0;
	uint64_t bytes = 0;
	while (Stop_at ? now_s() < Stop_at : bytes < Quota) {
		if (rpmem_persist(Rpp, base + at, Big, lane, 0))
			die("rpmem_persist");
		bytes += Big;
		at = (at + Big) % region;
	}
	return (void *)(uintptr_t)bytes;
}

/* bw_round -- every lane at once; the bytes they persisted */
static uint64_t
bw_round(void)
{
	pthread_t th[MAX_LANES];
	for (unsigned i = 0; i < Lanes; i++)
		if (pthread_create(&th[i], NULL, bw_lane, (void *)(uintptr_t)i))
			die("pthread_create");
	uint64_t bytes = 0;
	for (unsigned i = 0; i < Lanes; i++) {
		void *b;
		pthread_join(th[i], &b);
		bytes += (uintptr_t)b;
	}
	return bytes;
}

/*
 * run_bw -- strict persists of Big bytes on `lanes` lanes at once for
 * `secs` seconds or `total` bytes, after a pass over each lane's region
 * (the replica's pages touched once) or PERF_WARMUP persists per lane
 */
static void
run_bw(unsigned lanes, double secs, uint64_t total)
{
	Lanes = lanes;
	Stop_at = 0;
	const char *warm = getenv("PERF_WARMUP");
	Quota = warm ? strtoull(warm, NULL, 10) * Big :
		(Size - HDR) / Lanes / Big * Big;
	(void) bw_round();
	double w0, w1;
	double c0 = cpu_self(&w0), d0 = cpu_daemon(), t0 = now_s();
	Stop_at = total ? 0 : t0 + secs;
	Quota = total / lanes / Big * Big;
	uint64_t bytes = bw_round();
	double t = now_s() - t0, c = cpu_self(&w1) - c0, d = cpu_daemon();
	double gib = (double)bytes / (1 << 30);
	printf("mibs=%.1f cpu_client_s_gib=%.3f cpu_daemon_s_gib=%.3f "
		"switches_client_gib=%.0f\n", (double)bytes / (1 << 20) / t,
		c / gib, d0 < 0 || d < 0 ? -1.0 : (d - d0) / gib,
		(w1 - w0) / gib);
}

/* run_setup -- `rounds` opens and closes of the replica, medians */
static void
run_setup(const char *target, const char *set, unsigned lanes,
		unsigned rounds)
{
	double op[64], cl[64];
	if (rpmem_close(Rpp))
		die("rpmem_close");
	if (rounds > 64)
		rounds = 64;
	for (unsigned i = 0; i < rounds; i++) {
		struct rpmem_pool_attr attr;
		unsigned n = lanes;
		double t0 = now_s();
		Rpp = rpmem_open(target, set, Pool, Size, &n, &attr);
		double t1 = now_s();
		if (!Rpp)
			die("rpmem_open");
		if (i + 1 < rounds && rpmem_close(Rpp))
			die("rpmem_close");
		op[i] = t1 - t0;
		cl[i] = now_s() - t1;
	}
	qsort(op, rounds, sizeof(*op), cmp_double);
	qsort(cl, rounds, sizeof(*cl), cmp_double);
	printf("open=%.4f close=%.4f\n", op[rounds / 2], cl[rounds / 2]);
}

/* run_obj -- 64 B undo-logged transactions on a new replicated pool */
static int
run_obj(const char *set, double secs)
{
	PMEMobjpool *pop = pmemobj_create(set, "perf", 0, 0600);
	if (!pop) {
		fprintf(stderr, "perf_client: pmemobj_create: %s\n",
			pmemobj_errormsg());
		return 1;
	}
	PMEMoid root = pmemobj_root(pop, 1 << 20);
	char *obj = pmemobj_direct(root);
	double *s = malloc(MAX_SAMPLES * sizeof(*s));
	unsigned n = 0;
	double t0 = now_s(), t = t0;
	for (unsigned i = 0; s && n < MAX_SAMPLES && t - t0 < secs; i++) {
		char *at = obj + (i % 4096) * SMALL;
		TX_BEGIN(pop) {
			pmemobj_tx_add_range_direct(at, SMALL);
			memset(at, (int)i, SMALL);
		} TX_ONABORT {
			fprintf(stderr, "perf_client: transaction aborted\n");
			exit(1);
		} TX_END
		double t1 = now_s();
		if (i >= 20)	/* warm up */
			s[n++] = (t1 - t) * 1e6;
		t = t1;
	}
	pmemobj_close(pop);
	if (!s || !n)
		return 1;
	qsort(s, n, sizeof(*s), cmp_double);
	printf("p50=%.2f p99=%.2f n=%u\n", s[n / 2], s[n * 99 / 100], n);
	free(s);
	return 0;
}

/* parse_size -- bytes of a size with an optional K, M or G suffix */
static size_t
parse_size(const char *s)
{
	char *end;
	size_t v = strtoull(s, &end, 0);
	switch (*end) {
	case 'G': v <<= 10; /* fall through */
	case 'M': v <<= 10; /* fall through */
	case 'K': v <<= 10; break;
	default: break;
	}
	return v;
}

int
main(int argc, char *argv[])
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "obj"))
		return run_obj(argv[2], atof(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "local")) {
		Size = parse_size(argv[2]);
		Pool = mmap(NULL, Size, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (Size <= HDR || Pool == MAP_FAILED)
			die("mmap");
		run_local(atof(argv[3]));
		return 0;
	}
	bool lat = argc == 6 && !strcmp(argv[1], "lat");
	bool bw = (argc == 7 || argc == 8) && !strcmp(argv[1], "bw");
	bool setup = argc == 7 && !strcmp(argv[1], "setup");
	if (!lat && !bw && !setup) {
		fprintf(stderr, "usage: perf_client lat TARGET SET SIZE SECS\n"
			"       perf_client bw TARGET SET SIZE LANES SECS|BYTES "
			"[PERSIST]\n"
			"       perf_client obj POOLSET SECS\n"
			"       perf_client setup TARGET SET SIZE LANES "
			"ROUNDS\n"
			"       perf_client local SIZE SECS\n");
		return 2;
	}
	Size = parse_size(argv[4]);
	unsigned want = bw || setup ? (unsigned)atoi(argv[5]) : 1;
	if (argc == 8)
		Big = parse_size(argv[7]);
	if (want < 1 || want > MAX_LANES || !Big || Size < HDR + want * Big)
		return 2;
	unsigned got = open_pool(argv[2], argv[3], want);
	if (got < want) {
		fprintf(stderr, "perf_client: %u lanes of %u\n", got, want);
		return 1;
	}
	if (setup)
		run_setup(argv[2], argv[3], want, (unsigned)atoi(argv[6]));
	else if (lat)
		run_lat(atof(argv[5]));
	else if (strpbrk(argv[6], "KMG"))
		run_bw(want, 0, parse_size(argv[6]));
	else
		run_bw(want, atof(argv[6]), 0);
	if (rpmem_close(Rpp))
		die("rpmem_close");
	return 0;
}
