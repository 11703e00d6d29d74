/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench.h -- rpmem bench: set-up and sessions (cmd_bench.c), what is
 * measured (bench_measure.c), how it is shown (bench_out.c)
 */
#ifndef RPMEM_BENCH_H
#define RPMEM_BENCH_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "librpmem.h"
#include "proto.h"
#include "rawfab.h"
#include "target.h"

#define NSIZES 8		/* persist latency and raw round trip */
#define NBW 2			/* throughput: 64 KiB, 1 MiB */
#define NFD_SIZES 2		/* flush x k + drain: 64 B, 4 KiB */
#define NFD_K 3			/* k = 1, 4, 16 */
#define NREAD 3			/* read: 64 B, 4 KiB, 1 MiB */
#define MAX_SIZE ((size_t)1 << 20)
#define MAX_LANES RAWFAB_MAX_EPS
#define DEFAULT_LANES 4
#define WINDOW 8		/* raw RMA writes in flight per endpoint */
#define DATA_OFF 4096		/* the pool header is below */
#define MAX_SAMPLES 100000	/* per latency point */
#define REPS 3			/* throughput rounds, --quick too */
#define MIB (1024.0 * 1024.0)
#define SETUP_ROUNDS 5		/* ssh, open, close rounds; --quick: 2 */
#define SETUP_ROUNDS_QUICK 2
#define NOBJ 2			/* libpmemobj transactions: 64 B, 4 KiB */

enum bench_mode { STRICT, RELAXED, NMODES };

/* the lane-security policies measured, each in a session of its own */
#define NRUNS 3

extern const size_t Bench_sizes[NSIZES];
extern const size_t Bench_bw_sizes[NBW];
extern const size_t Bench_fd_sizes[NFD_SIZES];
extern const unsigned Bench_fd_k[NFD_K];
extern const size_t Bench_read_sizes[NREAD];
extern const char *const Bench_modes[NMODES];
extern const char *const Bench_policies[NRUNS];
extern const size_t Bench_obj_sizes[NOBJ];

/* a latency point, microseconds */
struct lat {
	double p50, p99, mean;
	unsigned n;
};

/* a flush x k + drain point: p50 microseconds per flush, drain, round */
struct fd {
	double flush, drain, round;
	unsigned n;
};

/* everything measured in one session, next to its raw baseline */
struct run {
	const char *asked;	/* RPMEM_LANE_SECURITY of the session */
	const char *policy;	/* what the session got */
	const char *cipher;
	bool measured;		/* false: the target enforces more */

	struct lat raw_rtt[NSIZES];
	struct lat raw_read[NREAD];
	double raw_bw[NBW][MAX_LANES + 1];	/* [size][endpoints] */
	struct lat persist[NMODES][NSIZES];
	double bw[NMODES][NBW][MAX_LANES + 1];	/* [mode][size][lanes] */
	struct fd fd[NMODES][NFD_SIZES][NFD_K];
	struct lat read[NREAD];
	double read_mibs[NREAD];
	/* CPU seconds per GiB of strict 1 MiB persists on 1 lane: this
	 * process, rpmemd (its own getrusage, asked over ssh), and the rest
	 * of the machine (rpmemd, the kernel and the rest on a loopback
	 * target); < 0 where not known */
	double cpu_self, cpu_daemon, cpu_rest;
	/* the whole machine's CPU seconds per GiB of the raw 1 MiB RMA
	 * writes on 1 endpoint, both ends in this run: the baseline of
	 * cpu_self + cpu_rest; < 0 where not known */
	double raw_cpu;
	/* seconds to seal and then open 1 MiB with the session's cipher in
	 * this process (both ends' share of a sealed 1 MiB persist); < 0
	 * where the run seals nothing or it failed */
	double seal_open_s_mib;
};

/* CPU seconds so far: this process, rpmemd, the whole machine (< 0:
 * unknown) */
struct cpu_sample {
	double self, daemon, machine;
};

/* strict 1 MiB persists over a new replica's data area, MiB/s */
struct first {
	bool measured;
	double first, steady;	/* the first pass, the one after it */
};

/* session set-up, medians in seconds (lane security none) */
struct setup {
	unsigned rounds;
	double ssh;		/* a bare `ssh HOST true` */
	double fabric;		/* `rpmem --probe-fabric`; < 0 if it failed */
	double open, close;	/* rpmem_open, rpmem_close */
};

/* libpmemobj transactions of one size (lane security none) */
struct obj_tx {
	struct lat lat;		/* per transaction, us */
	double round_trips;	/* persists and drains per transaction */
	double flushes;		/* flushes per transaction */
};

struct obj {
	bool measured;
	char why[256];		/* when not */
	struct obj_tx tx[NOBJ];	/* by Bench_obj_sizes */
};

struct bench {
	/* set-up */
	const char *path;
	bool quick, json;
	unsigned lanes_req;
	unsigned lanes;		/* granted by rpmem_open */
	uint64_t lat_ns, bw_ns;	/* time per latency / throughput point */
	uint32_t provider;	/* of the baseline */
	struct poolset *set;
	struct poolset *local;	/* handed to db_parts_open */
	const struct poolset_replica *rep;
	unsigned rep_idx;
	struct target target;	/* of the replica */
	bool loopback;		/* the replica's host is a loopback address */
	size_t size;		/* pool size */
	size_t region;		/* data bytes per lane */
	struct db_pool *pool;
	RPMEMpool *rpp;
	struct rawfab *raw;
	double *samples;
	void *rbuf;		/* rpmem_read target */
	struct rpmem_pool_attr attr;	/* the replica's, at the first open */

	/* results, by Bench_policies */
	struct run runs[NRUNS];
	struct setup setup;
	struct first first;
	struct obj obj;
};

#define NCHECKS 10

/* a target of the bench, PASS or MISS (bench_out.c) */
struct bench_check {
	const char *what;
	double value;		/* NaN: not measured */
	double limit;		/* pass: value <= limit (le) or >= limit */
	bool le;
	bool pass;
	const char *unit;
};

/* bench_checks -- every target, measured or not (value < 0) */
void bench_checks(const struct bench *b, struct bench_check c[NCHECKS]);

/* bench_ratio -- ours / baseline; 0 when there is no baseline */
double bench_ratio(double ours, double base);

/* bench_raw_rtt -- raw round trip p50 of a size in run r */
double bench_raw_rtt(const struct run *r, size_t size);

/* bench_llc -- bytes of the last-level cache (sysconf), 0 unknown */
long bench_llc(void);

/*
 * bench_shared_cpus -- on a loopback target, the CPUs its processes
 * share when too few to give each its own; 0 otherwise
 */
long bench_shared_cpus(const struct bench *b);

/* bench_fail -- report a failed librpmem call; returns -1 */
int bench_fail(const char *what);

/* bench_measure -- every figure of one session into `r` */
int bench_measure(struct bench *b, struct run *r);

/* bench_stats -- p50, p99 and mean of n samples, sorted in place */
void bench_stats(double *s, unsigned n, struct lat *out);

/*
 * bench_obj -- time libpmemobj transactions on a pool replicated to the
 * replica, which it leaves a libpmemobj pool (bench_obj.c); b->obj says
 * whether it could
 */
void bench_obj(struct bench *b);

/* bench_obj_print_text, bench_obj_print_json -- its part of the report */
void bench_obj_print_text(const struct bench *b, FILE *f);
void bench_obj_print_json(const struct bench *b, FILE *f);

/* bench_setup -- ssh, open and close timed (bench_setup.c) */
int bench_setup(struct bench *b);

/*
 * bench_first_pass -- remove the replica (if it is there) and create it
 * again with b->attr, then time a first and a second strict pass over
 * its data area (bench_first.c)
 */
int bench_first_pass(struct bench *b);

/* bench_cpu_now -- CPU seconds so far, rpmemd's that of b->rpp */
void bench_cpu_now(struct bench *b, struct cpu_sample *s);

/* bench_print_text -- the report for people */
void bench_print_text(const struct bench *b, FILE *f);

/* bench_print_json -- the same report as one JSON object */
void bench_print_json(const struct bench *b, FILE *f);

#endif /* RPMEM_BENCH_H */
