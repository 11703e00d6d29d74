/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_out.c -- rpmem bench: the targets, and the report for people
 * (bench_json.c writes it as one JSON object)
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "fab.h"
#include "poolset.h"

#define RTT_FACTOR 2.0		/* strict 64 B p50 <= 2x raw RTT p50 */
#define BW_SHARE 0.9		/* strict 1 MiB >= 90% of sync_floor */
#define BW_SHARE_64K 0.7	/* strict 64 KiB >= 70% of sync_floor */
#define SEAL_LAT 1.15		/* encrypt 64 B p50 <= 1.15x none's */
/*
 * encrypt 1 MiB >= 0.75x of 1 / (none's time per MiB + sealing and
 * opening 1 MiB here): the cipher's own time is no overhead of ours
 */
#define SEAL_BW 0.75
/*
 * open + close - bare ssh <= libfabric's start-up (every rpmemd pays it
 * before it can listen: Debian's build calibrates the TSC for 100 ms in
 * libinfinipath's constructor, and its verbs provider reads
 * /proc/kallsyms twice) + this much for the session's own steps
 */
#define SETUP_OWN 0.05
/*
 * strict 1 MiB persists, whole machine, <= this much the CPU per GiB of
 * the raw RMA writes: a persist is one write, a message and its answer,
 * one at a time, where the baseline streams 8 writes in flight
 */
#define CPU_RAW_FACTOR 2.0
#define FIRST_SHARE 0.7		/* first pass >= 70% of the steady state */
/*
 * fewer CPUs than this on a loopback target: the client, rpmemd, ssh
 * and the baseline's peer take turns on them, and where the scheduler
 * puts each moves a figure by tens of percent from run to run (a 2-CPU
 * VM: none's 1 MiB figure 1865 to 3952 MiB/s, encrypt's 64 B p50 1.1 to
 * 1.3 times none's), more than the margins of several targets
 */
#define SHARED_CPUS 4
#define IDX_64 1		/* Bench_sizes[1] == 64 */
#define IDX_4K 4		/* Bench_sizes[4] == 4096 */
#define IDX_64K 0		/* Bench_bw_sizes[0] == 64 KiB */
#define IDX_1M 1		/* Bench_bw_sizes[1] == 1 MiB */
#define IDX_READ_1M 2		/* Bench_read_sizes[2] == 1 MiB */
#define RUN_NONE 0		/* Bench_policies[0] */
#define RUN_ENCRYPT 2

/* bench_ratio -- ours / baseline; 0 when there is no baseline */
double
bench_ratio(double ours, double base)
{
	return base > 0 ? ours / base : 0;
}

/* bench_raw_rtt -- raw round trip p50 of a size (section e) */
double
bench_raw_rtt(const struct run *r, size_t size)
{
	for (int i = 0; i < NSIZES; i++)
		if (Bench_sizes[i] == size)
			return r->raw_rtt[i].p50;
	return 0;
}

/* size_str -- "8 B", "4 KiB", "1 MiB" */
static const char *
size_str(size_t size, char *buf, size_t len)
{
	if (size >= (1 << 20) && size % (1 << 20) == 0)
		snprintf(buf, len, "%zu MiB", size >> 20);
	else if (size >= 1024 && size % 1024 == 0)
		snprintf(buf, len, "%zu KiB", size >> 10);
	else
		snprintf(buf, len, "%zu B", size);
	return buf;
}

/*
 * sync_floor -- MiB/s that `lanes` lanes of strict persists of `size`
 * bytes could reach at most: each lane's write at the raw rate per
 * endpoint, then one raw round trip before the next, as a strict persist
 * must wait (the raw baseline streams 8 writes in flight instead)
 */
static double
sync_floor(const struct run *r, unsigned s, size_t size, unsigned lanes)
{
	double per_ep = r->raw_bw[s][lanes] / lanes;	/* MiB/s */
	double rtt = r->raw_rtt[0].p50 / 1e6;		/* s */
	double mib = (double)size / (1 << 20);
	return per_ep > 0 ? lanes * mib / (mib / per_ep + rtt) : NAN;
}

/*
 * checks -- the targets: against the raw baseline without lane security
 * (the none run), and the cost of encrypt against none; a figure whose
 * run the target did not allow is "not measured" (value NaN; a value may
 * be below 0: open + close can beat a bare ssh on a loaded machine)
 */
void
bench_checks(const struct bench *b, struct bench_check c[NCHECKS])
{
	const struct run *n = &b->runs[RUN_NONE], *e = &b->runs[RUN_ENCRYPT];
	bool both = n->measured && e->measured;
	c[0] = (struct bench_check){
		.what = "none: strict 64 B persist p50 <= 2x raw round trip "
			"p50",
		.value = n->measured ? n->persist[STRICT][IDX_64].p50 : NAN,
		.limit = RTT_FACTOR * n->raw_rtt[IDX_64].p50,
		.le = true, .unit = "us",
	};
	c[1] = (struct bench_check){
		.what = "none: strict 1 MiB persist throughput, 1 lane >= 90% "
			"of a raw 1 MiB write and round trip, 1 endpoint",
		.value = n->measured ? n->bw[STRICT][IDX_1M][1] : NAN,
		.limit = BW_SHARE * sync_floor(n, IDX_1M, MAX_SIZE, 1),
		.unit = "MiB/s",
	};
	c[2] = (struct bench_check){
		.what = "none: strict 1 MiB persist throughput, 2 lanes >= 90% "
			"of the raw floor, 2 endpoints",
		.value = n->measured && b->lanes >= 2 ?
			n->bw[STRICT][IDX_1M][2] : NAN,
		.limit = BW_SHARE * sync_floor(n, IDX_1M, MAX_SIZE, 2),
		.unit = "MiB/s",
	};
	c[3] = (struct bench_check){
		.what = "none: strict 1 MiB persist throughput, 2 lanes >= 1 "
			"lane",
		.value = n->measured && b->lanes >= 2 ?
			n->bw[STRICT][IDX_1M][2] : NAN,
		.limit = n->bw[STRICT][IDX_1M][1],
		.unit = "MiB/s",
	};
	c[4] = (struct bench_check){
		.what = "none: strict 64 KiB persist throughput, 1 lane >= 70% "
			"of a raw 64 KiB write and round trip, 1 endpoint",
		.value = n->measured ? n->bw[STRICT][IDX_64K][1] : NAN,
		.limit = BW_SHARE_64K * sync_floor(n, IDX_64K, 64 << 10, 1),
		.unit = "MiB/s",
	};
	c[5] = (struct bench_check){
		.what = "encrypt: strict 64 B persist p50 <= 1.15x none's",
		.value = both ? e->persist[STRICT][IDX_64].p50 : NAN,
		.limit = SEAL_LAT * n->persist[STRICT][IDX_64].p50,
		.le = true, .unit = "us",
	};
	/* none's time per MiB plus the cipher's at both ends, this run */
	double none_1m = n->bw[STRICT][IDX_1M][1];
	double sealed_1m = both && none_1m > 0 && e->seal_open_s_mib > 0 ?
		1.0 / (1.0 / none_1m + e->seal_open_s_mib) : NAN;
	c[6] = (struct bench_check){
		.what = "encrypt: strict 1 MiB persist throughput, 1 lane >= "
			"0.75x none's with the cipher's time added",
		.value = both ? e->bw[STRICT][IDX_1M][1] : NAN,
		.limit = SEAL_BW * sealed_1m,
		.unit = "MiB/s",
	};
	const struct setup *u = &b->setup;
	c[7] = (struct bench_check){
		.what = "rpmem_open + rpmem_close above a bare ssh <= "
			"libfabric's start-up + 0.05 s, median",
		.value = u->rounds && u->fabric >= 0 ?
			u->open + u->close - u->ssh : NAN,
		.limit = u->fabric + SETUP_OWN,
		.le = true, .unit = "s",
	};
	c[8] = (struct bench_check){
		.what = "none: CPU per GiB of strict 1 MiB persists, 1 lane, "
			"whole machine <= 2x raw 1 MiB RMA writes'",
		.value = n->measured && n->cpu_self >= 0 && n->cpu_rest >= 0 &&
			n->raw_cpu > 0 ? n->cpu_self + n->cpu_rest : NAN,
		.limit = CPU_RAW_FACTOR * n->raw_cpu,
		.le = true, .unit = "s",
	};
	c[9] = (struct bench_check){
		.what = "none: first strict 1 MiB pass over a new replica >= "
			"70% of the pass after it",
		.value = b->first.measured ? b->first.first : NAN,
		.limit = FIRST_SHARE * b->first.steady,
		.unit = "MiB/s",
	};
	for (int i = 0; i < NCHECKS; i++)
		c[i].pass = !isnan(c[i].value) && (c[i].le ?
			c[i].value <= c[i].limit : c[i].value >= c[i].limit);
}

/* bench_llc -- bytes of the largest cache sysconf knows, or 0 */
long
bench_llc(void)
{
	static const int Names[] = {
		_SC_LEVEL4_CACHE_SIZE, _SC_LEVEL3_CACHE_SIZE,
		_SC_LEVEL2_CACHE_SIZE,
	};
	for (size_t i = 0; i < sizeof(Names) / sizeof(Names[0]); i++) {
		long v = sysconf(Names[i]);
		if (v > 0)
			return v;
	}
	return 0;
}

/* text_header -- what was measured against what */
static void
text_header(const struct bench *b, FILE *f)
{
	const char *prov = proto_provider_name(b->provider);
	fprintf(f, "rpmem bench %s%s\n", b->path, b->quick ? " --quick" : "");
	fprintf(f, "target %s (replica %u, %s), provider %s, pool %zu bytes "
		"(%.1f MiB), lanes %u (asked %u), buff size %d (requested)\n",
		b->rep->target, b->rep_idx, b->rep->desc, prov, b->size,
		(double)b->size / MIB, b->lanes, b->lanes_req,
		LANE_BUFF_DEFAULT);
	fprintf(f, "baseline: raw libfabric %s, FI_EP_MSG with fab_getinfo "
		"hints, to a peer forked by this process (pid %d), measured "
		"on loopback %s\n", prov, (int)rawfab_peer_pid(b->raw),
		RAWFAB_NODE);
	if (!b->loopback)
		fprintf(f, "note: the replica's host in '%s' is not a "
			"loopback address; the baseline was measured on "
			"loopback all the same\n", b->rep->target);
	fprintf(f, "baseline waits: %s; RMA writes: %u in flight per "
		"endpoint\n", RAWFAB_WAIT_STYLE, WINDOW);
	long llc = bench_llc();
	size_t ws = b->region * b->lanes;
	fprintf(f, "working set: %.0f MiB per lane, %.0f MiB on %u lanes "
		"(the baseline's the same)", (double)b->region / MIB,
		(double)ws / MIB, b->lanes);
	if (llc > 0)
		fprintf(f, "; last-level cache %.0f MiB (sysconf): %.1fx\n",
			(double)llc / MIB, (double)ws / (double)llc);
	else
		fprintf(f, "\n");
	fprintf(f, "each point: %.2f s (latency) or %.2f s (throughput), "
		"at least 20 iterations\n", (double)b->lat_ns / 1e9,
		(double)b->bw_ns / 1e9);
}

/* text_ours -- sections a to d */
static void
text_ours(const struct bench *b, const struct run *r, FILE *f)
{
	char s[32];
	fprintf(f, "\na) persist latency, lane 0, us; ratio = p50 / raw "
		"round trip p50 of the same size\n"
		"   size     mode          n      p50      p99     mean"
		"  raw p50   ratio\n");
	for (int m = 0; m < NMODES; m++)
		for (int i = 0; i < NSIZES; i++) {
			const struct lat *l = &r->persist[m][i];
			fprintf(f, "   %-8s %-8s %6u %8.2f %8.2f %8.2f %8.2f "
				"%6.2fx\n", size_str(Bench_sizes[i], s,
				sizeof(s)), Bench_modes[m], l->n, l->p50,
				l->p99, l->mean, r->raw_rtt[i].p50,
				bench_ratio(l->p50, r->raw_rtt[i].p50));
		}
	fprintf(f, "\nb) persist throughput, one thread per lane, MiB/s; "
		"ratio = ours / raw RMA write bandwidth, as many endpoints\n"
		"   size     mode     lanes     MiB/s  raw MiB/s   ratio\n");
	for (int m = 0; m < NMODES; m++)
		for (int i = 0; i < NBW; i++)
			for (unsigned l = 1; l <= b->lanes; l++)
				fprintf(f, "   %-8s %-8s %5u %9.1f %10.1f "
					"%6.2fx\n", size_str(Bench_bw_sizes[i],
					s, sizeof(s)), Bench_modes[m], l,
					r->bw[m][i][l], r->raw_bw[i][l],
					bench_ratio(r->bw[m][i][l],
					r->raw_bw[i][l]));
	fprintf(f, "\nc) k x rpmem_flush + rpmem_drain, lane 0, us (p50 per "
		"round); ratio = round / raw round trip p50 of one size\n"
		"   size     mode      k   flush(each)    drain    round"
		"  raw p50   ratio\n");
	for (int m = 0; m < NMODES; m++)
		for (int i = 0; i < NFD_SIZES; i++)
			for (int k = 0; k < NFD_K; k++) {
				const struct fd *d = &r->fd[m][i][k];
				double raw = bench_raw_rtt(r,
					Bench_fd_sizes[i]);
				fprintf(f, "   %-8s %-8s %2u %13.2f %8.2f "
					"%8.2f %8.2f %6.2fx\n",
					size_str(Bench_fd_sizes[i], s,
					sizeof(s)), Bench_modes[m],
					Bench_fd_k[k], d->flush, d->drain,
					d->round, raw,
					bench_ratio(d->round, raw));
			}
	fprintf(f, "\nd) rpmem_read, lane 0, us; ratio = p50 / raw RMA read "
		"p50\n   size          n      p50      p99     mean     MiB/s"
		"  raw p50   ratio\n");
	for (int i = 0; i < NREAD; i++) {
		const struct lat *l = &r->read[i];
		fprintf(f, "   %-8s %8u %8.2f %8.2f %8.2f %9.1f %8.2f %6.2fx\n",
			size_str(Bench_read_sizes[i], s, sizeof(s)), l->n,
			l->p50, l->p99, l->mean, r->read_mibs[i],
			r->raw_read[i].p50,
			bench_ratio(l->p50, r->raw_read[i].p50));
	}
}

/* text_raw -- section e: the raw baseline measured in this session */
static void
text_raw(const struct bench *b, const struct run *r, FILE *f)
{
	char s[32];
	fprintf(f, "\ne) raw libfabric baseline on loopback %s\n"
		"   round trip: SEND of size bytes, 8-byte answer, us\n"
		"   size          n      p50      p99     mean\n", RAWFAB_NODE);
	for (int i = 0; i < NSIZES; i++) {
		const struct lat *l = &r->raw_rtt[i];
		fprintf(f, "   %-8s %8u %8.2f %8.2f %8.2f\n",
			size_str(Bench_sizes[i], s, sizeof(s)), l->n, l->p50,
			l->p99, l->mean);
	}
	fprintf(f, "   RMA read, us\n");
	for (int i = 0; i < NREAD; i++) {
		const struct lat *l = &r->raw_read[i];
		fprintf(f, "   %-8s %8u %8.2f %8.2f %8.2f\n",
			size_str(Bench_read_sizes[i], s, sizeof(s)), l->n,
			l->p50, l->p99, l->mean);
	}
	fprintf(f, "   RMA write bandwidth, %u in flight per endpoint, MiB/s\n"
		"   size     endpoints     MiB/s\n", WINDOW);
	for (int i = 0; i < NBW; i++)
		for (unsigned l = 1; l <= b->lanes; l++)
			fprintf(f, "   %-8s %9u %9.1f\n",
				size_str(Bench_bw_sizes[i], s, sizeof(s)), l,
				r->raw_bw[i][l]);
}

/* a figure of section f: a double of every run */
struct cost_fig {
	const char *what, *unit;
	size_t off;		/* in struct run */
};

#define RUN_FIG(field) offsetof(struct run, field)

/* the figures of section f; CPU s per GiB < 0: unknown */
static const struct cost_fig Cost_figs[] = {
	{ "strict 64 B persist p50", "us",
		RUN_FIG(persist[STRICT][IDX_64].p50) },
	{ "strict 4 KiB persist p50", "us",
		RUN_FIG(persist[STRICT][IDX_4K].p50) },
	{ "strict 1 MiB persist, 1 lane", "MiB/s",
		RUN_FIG(bw[STRICT][IDX_1M][1]) },
	{ "rpmem_read 1 MiB", "MiB/s", RUN_FIG(read_mibs[IDX_READ_1M]) },
	{ "CPU/GiB strict 1 MiB, this process", "s", RUN_FIG(cpu_self) },
	{ "CPU/GiB, rpmemd", "s", RUN_FIG(cpu_daemon) },
	{ "CPU/GiB, all but this process", "s", RUN_FIG(cpu_rest) },
	/* the whole machine's, of raw writes */
	{ "CPU/GiB raw 1 MiB RMA write, all", "s", RUN_FIG(raw_cpu) },
};

/* fig -- figure c of run r */
static double
fig(const struct run *r, const struct cost_fig *c)
{
	return *(const double *)((const char *)r + c->off);
}

/* cost_row -- one figure of every run, with its ratio to none's */
static void
cost_row(const struct bench *b, FILE *f, const struct cost_fig *c)
{
	const struct run *n = &b->runs[RUN_NONE];
	fprintf(f, "   %-36s %-6s", c->what, c->unit);
	for (int i = 0; i < NRUNS; i++) {
		const struct run *r = &b->runs[i];
		double v = fig(r, c);
		if (!r->measured)
			fprintf(f, " %20s", "not measured");
		else if (i == RUN_NONE || !n->measured)
			fprintf(f, " %20.*f", v < 10 ? 3 : 1, v);
		else
			fprintf(f, " %11.*f (%5.2fx)", v < 10 ? 3 : 1, v,
				bench_ratio(v, fig(n, c)));
	}
	fprintf(f, "\n");
}

/* text_cost -- section f: what sealing lanes costs, same run */
static void
text_cost(const struct bench *b, FILE *f)
{
	fprintf(f, "\nf) the cost of lane security in this run; ratio to "
		"none\n   %-36s %-6s", "figure", "unit");
	for (int i = 0; i < NRUNS; i++)
		fprintf(f, " %20s", Bench_policies[i]);
	fprintf(f, "\n");
	for (size_t k = 0; k < sizeof(Cost_figs) / sizeof(Cost_figs[0]); k++)
		cost_row(b, f, &Cost_figs[k]);
}

/* text_setup -- section g: a session's set-up against a bare ssh */
static void
text_setup(const struct bench *b, FILE *f)
{
	const struct setup *u = &b->setup;
	fprintf(f, "\ng) session set-up, median of %u rounds, and a new "
		"replica's first pass (strict 1 MiB, lane 0), lane security "
		"none\n", u->rounds);
	fprintf(f, "   %-36s %8.3f s\n", "bare ssh HOST true", u->ssh);
	fprintf(f, "   %-36s %8.3f s\n", "libfabric's start-up, a process",
		u->fabric);
	fprintf(f, "   %-36s %8.3f s\n", "rpmem_open", u->open);
	fprintf(f, "   %-36s %8.3f s\n", "rpmem_close", u->close);
	fprintf(f, "   %-36s %8.3f s\n", "open + close above the bare ssh",
		u->open + u->close - u->ssh);
	fprintf(f, "   %-36s %8.1f MiB/s\n", "first pass over a new replica",
		b->first.first);
	fprintf(f, "   %-36s %8.1f MiB/s\n", "the pass after it",
		b->first.steady);
	if (!b->loopback)
		fprintf(f, "   note: \"all but this process\" in f) "
			"counts rpmemd only on a loopback target\n");
}

/*
 * bench_shared_cpus -- the CPUs a loopback target's processes share
 * when they are too few to give each its own (SHARED_CPUS), else 0
 */
long
bench_shared_cpus(const struct bench *b)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return b->loopback && n > 0 && n < SHARED_CPUS ? n : 0;
}

/*
 * text_checks -- the targets, PASS or MISS; a MISS measured where the
 * processes share too few CPUs says so beside it
 */
static void
text_checks(const struct bench *b, FILE *f)
{
	struct bench_check c[NCHECKS];
	bench_checks(b, c);
	long shared = bench_shared_cpus(b);
	fprintf(f, "\n");
	for (int i = 0; i < NCHECKS; i++) {
		fprintf(f, "%s: %s: ", c[i].pass ? "PASS" : "MISS", c[i].what);
		if (isnan(c[i].value))
			fprintf(f, "not measured\n");
		else
			fprintf(f, "%.2f %s (%s %.2f %s)\n", c[i].value,
				c[i].unit, c[i].le ? "limit" : "needed",
				c[i].limit, c[i].unit);
		if (!c[i].pass && !isnan(c[i].value) && shared)
			fprintf(f, "      (not a verdict here: the client, "
				"rpmemd and ssh share %ld CPUs, and a figure "
				"moves by tens of percent between runs with "
				"where they run; see rpmem(1))\n", shared);
	}
}

/* bench_print_text -- the report for people */
void
bench_print_text(const struct bench *b, FILE *f)
{
	text_header(b, f);
	for (int i = 0; i < NRUNS; i++) {
		const struct run *r = &b->runs[i];
		fprintf(f, "\n== lane security %s", r->asked);
		if (!r->measured) {
			fprintf(f, ": not measured, the target enforces %s\n",
				r->policy ? r->policy : "more");
			continue;
		}
		fprintf(f, "%s%s ==\n", strcmp(r->cipher, "none") ? ", " : "",
			strcmp(r->cipher, "none") ? r->cipher : "");
		text_ours(b, r, f);
		text_raw(b, r, f);
	}
	text_cost(b, f);
	text_setup(b, f);
	bench_obj_print_text(b, f);
	text_checks(b, f);
}

