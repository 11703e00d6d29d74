/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_bench.c -- rpmem bench: persist costs next to a raw libfabric baseline
 *
 * Every figure of ours is printed with the same figure measured in the same
 * run between this process and a forked peer that does nothing but answer
 * (rawfab.c), so what the library and rpmemd add can be read off directly.
 * The replica is opened once per lane-security policy, and each session
 * measures everything (bench_measure.c), so the cost of sealing lanes is
 * read off the same run too.  Then come the session set-up
 * (bench_setup.c), libpmemobj transactions (bench_obj.c) and the first
 * pass over a new replica (bench_first.c).  The report is printed by
 * bench_out.c.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include "bench.h"
#include "build_kind.h"
#include "db_pool.h"
#include "fab.h"
#include "poolset.h"
#include "rpmem_tool.h"
#include "tools.h"

static int run_bench(const struct cli_args *a);

static const struct cli_opt Opts[] = {
	{ "quick", 0, NULL, "shorter runs, rougher figures" },
	{ "lanes", 0, "N", "lanes and threads for throughput, 1 to 64 "
		"(default 4)" },
	CLI_OPT_JSON,
	CLI_OPT_END,
};

const struct cli_cmd cmd_bench = {
	.name = "bench", .operands = "POOLSET", .nmin = 1, .nmax = 1,
	.summary = "time persists to the first remote replica against raw "
		"libfabric",
	.opts = Opts,
	.run = run_bench,
};

const size_t Bench_sizes[NSIZES] = {
	8, 64, 256, 1024, 4096, 64 << 10, 256 << 10, 1 << 20,
};
const size_t Bench_bw_sizes[NBW] = { 64 << 10, 1 << 20 };
const size_t Bench_fd_sizes[NFD_SIZES] = { 64, 4096 };
const unsigned Bench_fd_k[NFD_K] = { 1, 4, 16 };
const size_t Bench_read_sizes[NREAD] = { 64, 4096, 1 << 20 };
const char *const Bench_modes[NMODES] = { "strict", "relaxed" };
/* none first: the cost of the others is read against it */
const char *const Bench_policies[NRUNS] = { "none", "authenticate",
	"encrypt" };

#define LAT_NS 300000000ULL	/* time per latency point */
#define BW_NS 300000000ULL	/* time per throughput round */
#define QUICK_LAT_NS 50000000ULL
#define QUICK_BW_NS 35000000ULL	/* 3 rounds: about 0.1 s a point */
#define MAX_REGION ((size_t)1 << 30)	/* walked by each lane */

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
parse_args(struct bench *b, const struct cli_args *a)
{
	b->lanes_req = DEFAULT_LANES;
	if (cli_uint(a, "lanes", 1, MAX_LANES, &b->lanes_req))
		return EXIT_USAGE;
	b->quick = cli_flag(a, "quick");
	b->json = cli_flag(a, "json");
	b->path = a->operand[0];
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
	if (target_parse(b->rep->target, &b->target)) {
		fprintf(stderr, "rpmem bench: invalid target '%s'\n",
			b->rep->target);
		return -1;
	}
	b->loopback = is_loopback(b->target.node);
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

/* open_master -- map the master's parts */
static int
open_master(struct bench *b)
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
	return 0;
}

/*
 * open_session -- open the remote replica asking for the run's lane
 * security; a target that enforces more gives the run no figures
 */
static int
open_session(struct bench *b, struct run *r)
{
	struct rpmem_pool_attr attr;
	setenv("RPMEM_LANE_SECURITY", r->asked, 1);
	b->lanes = b->lanes_req;
	b->rpp = rpmem_open(b->rep->target, b->rep->desc, b->pool->addr,
		b->size, &b->lanes, &attr);
	if (!b->rpp)
		return bench_fail("opening the remote replica");
	if (b->lanes < b->lanes_req)
		fprintf(stderr, "rpmem bench: %u lanes asked, %u granted\n",
			b->lanes_req, b->lanes);
	if (r == &b->runs[0])
		b->attr = attr;
	rpmem_lane_security(b->rpp, &r->policy, &r->cipher);
	r->measured = strcmp(r->policy, r->asked) == 0;
	if (!r->measured)
		fprintf(stderr, "rpmem bench: lane security %s asked, %s "
			"enforced by the target: not measured\n", r->asked,
			r->policy);
	return 0;
}

/* close_session -- close the session of a run */
static int
close_session(struct bench *b)
{
	int r = rpmem_close(b->rpp);
	b->rpp = NULL;
	return r ? bench_fail("closing the remote replica") : 0;
}

/* run_all -- one session per policy, every figure in each; set-up */
static int
run_all(struct bench *b)
{
	const char *saved = getenv("RPMEM_LANE_SECURITY");
	char *keep = saved ? strdup(saved) : NULL;
	int ret = 0;
	for (unsigned i = 0; !ret && i < NRUNS; i++) {
		struct run *r = &b->runs[i];
		r->asked = Bench_policies[i];
		ret = open_session(b, r);
		if (!ret && r->measured)
			ret = bench_measure(b, r);
		if (b->rpp && close_session(b))
			ret = -1;
	}
	if (!ret)
		ret = bench_setup(b);
	if (!ret)
		bench_obj(b);
	if (!ret)
		ret = bench_first_pass(b);
	if (keep)
		setenv("RPMEM_LANE_SECURITY", keep, 1);
	else
		unsetenv("RPMEM_LANE_SECURITY");
	free(keep);
	return ret;
}

/* bench_free -- close everything that was opened */
static int
bench_free(struct bench *b, int ret)
{
	if (b->rpp && close_session(b))
		ret = -1;
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

/* run_bench -- measure, compare with the raw baseline, report */
static int
run_bench(const struct cli_args *a)
{
	struct bench *b = calloc(1, sizeof(*b));
	if (!b) {
		perror("rpmem bench");
		return 1;
	}
	int r = parse_args(b, a);
	if (!r && build_kind_check("rpmem bench"))
		r = EXIT_REFUSED;
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
	if (open_master(b))
		return bench_free(b, -1);
	r = rawfab_connect(b->raw);
	if (r) {
		fprintf(stderr, "rpmem bench: connecting to the baseline peer "
			"on %s: %s\n", RAWFAB_NODE, fab_strerror(r));
		return bench_free(b, -1);
	}
	if (run_all(b))
		return bench_free(b, -1);
	if (b->json)
		bench_print_json(b, stdout);
	else
		bench_print_text(b, stdout);
	return bench_free(b, 0);
}
