/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_setup.c -- rpmem bench: what a session's set-up costs next to a
 * bare ssh to the same target and to libfabric's start-up, and the CPU
 * time spent per GiB persisted
 *
 * The bare ssh runs `ssh [-p PORT] -T -oBatchMode=yes -- HOST true` with
 * the ssh librpmem uses (RPMEM_SSH, else ssh): the same login without
 * rpmemd.  libfabric's start-up is this program run again as
 * `rpmem --probe-fabric`: a process that loads libfabric and asks it
 * once for a provider, as every rpmemd must before it can listen.  CPU time is this process's (getrusage) and the whole
 * machine's (/proc/stat) over a throughput point; on a loopback target
 * the difference is what rpmemd and the kernel below it spent.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "rpmem_tool.h"
#include "db_pool.h"
#include "poolset.h"

/* timed_run -- seconds a command took to succeed, silenced; -1 if not */
static double
timed_run(char *const argv[])
{
	uint64_t t0 = rawfab_now_ns();
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR);
		if (fd >= 0) {
			dup2(fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	uint64_t t1 = rawfab_now_ns();
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ?
		(double)(t1 - t0) / 1e9 : -1;
}

/* fabric_start -- seconds of `rpmem --probe-fabric`; -1 on failure */
static double
fabric_start(void)
{
	char *argv[] = { (char *)"/proc/self/exe", (char *)"--probe-fabric",
		NULL };
	return timed_run(argv);
}

/* ssh_true -- seconds of one bare login to the target; -1 on failure */
static double
ssh_true(const struct bench *b)
{
	const char *ssh = getenv("RPMEM_SSH");
	char host[TARGET_USER_MAX + TARGET_NODE_MAX + 1];
	if (b->target.user[0])
		snprintf(host, sizeof(host), "%s@%s", b->target.user,
			b->target.node);
	else
		snprintf(host, sizeof(host), "%s", b->target.node);
	char *argv[10];
	unsigned ac = 0;
	argv[ac++] = (char *)(ssh && *ssh ? ssh : "ssh");
	if (b->target.service[0]) {
		argv[ac++] = (char *)"-p";
		argv[ac++] = (char *)b->target.service;
	}
	argv[ac++] = (char *)"-T";
	argv[ac++] = (char *)"-oBatchMode=yes";
	argv[ac++] = (char *)"--";
	argv[ac++] = host;
	argv[ac++] = (char *)"true";
	argv[ac] = NULL;
	return timed_run(argv);
}

/* median -- of n values, sorted in place */
static double
median(double *v, unsigned n)
{
	for (unsigned i = 1; i < n; i++)
		for (unsigned j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n ? v[n / 2] : -1;
}

/*
 * bench_setup -- rounds of a bare ssh, rpmem_open and rpmem_close of the
 * replica with lane security none; the median of each into b->setup
 */
int
bench_setup(struct bench *b)
{
	unsigned n = b->quick ? SETUP_ROUNDS_QUICK : SETUP_ROUNDS;
	double ssh[SETUP_ROUNDS], op[SETUP_ROUNDS], cl[SETUP_ROUNDS],
		fab[SETUP_ROUNDS];
	setenv("RPMEM_LANE_SECURITY", "none", 1);
	for (unsigned i = 0; i < n; i++) {
		fab[i] = fabric_start();
		ssh[i] = ssh_true(b);
		if (ssh[i] < 0) {
			fprintf(stderr, "rpmem bench: a bare ssh to %s "
				"failed\n", b->target.node);
			return -1;
		}
		struct rpmem_pool_attr attr;
		unsigned lanes = b->lanes_req;
		uint64_t t0 = rawfab_now_ns();
		RPMEMpool *rpp = rpmem_open(b->rep->target, b->rep->desc,
			b->pool->addr, b->size, &lanes, &attr);
		uint64_t t1 = rawfab_now_ns();
		if (!rpp)
			return bench_fail("opening the remote replica");
		int r = rpmem_close(rpp);
		uint64_t t2 = rawfab_now_ns();
		if (r)
			return bench_fail("closing the remote replica");
		op[i] = (double)(t1 - t0) / 1e9;
		cl[i] = (double)(t2 - t1) / 1e9;
	}
	b->setup.rounds = n;
	b->setup.ssh = median(ssh, n);
	b->setup.fabric = median(fab, n);
	b->setup.open = median(op, n);
	b->setup.close = median(cl, n);
	return 0;
}

/* bench_cpu_now -- CPU seconds so far (bench.h) */
void
bench_cpu_now(struct bench *b, struct cpu_sample *s)
{
	double user, sys;
	s->daemon = rpmem_daemon_cpu(b->rpp, &user, &sys) ? -1 : user + sys;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	s->self = (double)ru.ru_utime.tv_sec +
		(double)ru.ru_utime.tv_usec / 1e6 +
		(double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	s->machine = -1;
	FILE *f = fopen("/proc/stat", "r");
	if (!f)
		return;
	unsigned long long v[8] = { 0 };
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
			&v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == 8) {
		/* all but idle (3) and iowait (4) */
		unsigned long long busy = v[0] + v[1] + v[2] + v[5] + v[6] +
			v[7];
		s->machine = (double)busy / (double)sysconf(_SC_CLK_TCK);
	}
	fclose(f);
}
