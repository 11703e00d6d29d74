/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * degraded_client.c -- the client side of tests/perf/degraded.sh: what a
 * lost replica and its resync cost the application
 *
 *   degraded_client TARGET SET DIR MIB SECONDS REPS PHASE...
 *
 * Creates a pool of MIB MiB + 8 MiB with its remote replica (the time
 * rpmem_create takes is printed: the session set-up the reconnects are
 * held against), then runs each PHASE in order, one output line each,
 * `name key=value...`:
 *   base    strict 64 B persists for SECONDS while connected: p50, p99
 *   loss    REPS times: rpmemd's pids asked of the script, SIGKILLed
 *           from here, then 64 B persists until one returns with the
 *           live status no longer connected (ms since the kill); then
 *           until connected again (sshd stays up)
 *   load    the replica cut (the script stops sshd and hands over
 *           rpmemd's pids), MIB MiB persisted while degraded, sshd
 *           restarted: 64 B persists throughout the resync, their p50
 *           and p99 while the status says resyncing, the resync's bytes
 *           and time, and the restart to resyncing and to connected
 *   idle    the same without persists during the resync (its rate)
 * The live status (RPMEM_STATE_DIR/run/PID-SEQ.status) is read about
 * once a millisecond; a latency counts for a state only when the reads
 * before and after it found that state.  The script is asked for
 * things by a file DIR/NAME, and answers with DIR/NAME.done.
 */
#include <errno.h>
#include <glob.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "librpmem.h"
#include "tu.h"

#define HDR 4096			/* left alone, as a header would be */
#define PROBE ((size_t)4 << 20)		/* where the 64 B persists go */
#define SMALL 64
#define PIECE ((size_t)1 << 20)		/* a persist of the dirtying */
#define MAX_SAMPLES 4000000
#define POLL_MS 1.0
#define WAIT_S 30.0

static RPMEMpool *Rpp;
static char *Pool;
static size_t Size, Dirty;		/* Dirty: MIB MiB from HDR on */
static const char *Dir;
static char Status[4096];		/* this handle's live status file */
static size_t Probe_n;			/* 64 B persists made */
static double *Samples;
static unsigned Gen = 1;		/* of the dirtying pattern */

/* now_ms -- CLOCK_MONOTONIC in ms */
static double
now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* wall_ms -- CLOCK_REALTIME in ms, as the script's `date +%s%3N` */
static double
wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* die -- report what failed and exit 1 */
static void
die(const char *what)
{
	fprintf(stderr, "degraded_client: %s: %s\n", what,
		errno ? strerror(errno) : "failed");
	exit(1);
}

/* nap -- sleep ms milliseconds */
static void
nap(double ms)
{
	struct timespec ts = { (time_t)(ms / 1e3),
		(long)((ms - (double)(time_t)(ms / 1e3) * 1e3) * 1e6) };
	nanosleep(&ts, NULL);
}

/* status_get -- the value of key in the live status, "" when none */
static void
status_get(const char *key, char *val, size_t size)
{
	val[0] = '\0';
	if (!Status[0]) {
		char pat[4096];
		const char *sd = getenv("RPMEM_STATE_DIR");
		glob_t g;
		snprintf(pat, sizeof(pat), "%s/run/%ld-*.status", sd ? sd : ".",
			(long)getpid());
		if (glob(pat, 0, NULL, &g) || g.gl_pathc != 1) {
			globfree(&g);
			return;
		}
		snprintf(Status, sizeof(Status), "%s", g.gl_pathv[0]);
		globfree(&g);
	}
	FILE *f = fopen(Status, "r");
	if (!f)
		return;
	char line[512];
	size_t kl = strlen(key);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ' ') {
			snprintf(val, size, "%s", line + kl + 1);
			val[strcspn(val, "\n")] = '\0';
			break;
		}
	fclose(f);
}

/* state_is -- does the live status say state s? */
static bool
state_is(const char *s)
{
	char v[64];
	status_get("state", v, sizeof(v));
	return !strcmp(v, s);
}

/* probe -- one strict 64 B persist; its latency in us */
static double
probe(void)
{
	size_t off = HDR + Dirty + (Probe_n++ % (PROBE / SMALL)) * SMALL;
	Pool[off]++;
	double t0 = now_ms();
	if (rpmem_persist(Rpp, off, SMALL, 0, 0))
		die(rpmem_errormsg());
	return (now_ms() - t0) * 1e3;
}

/* file_path -- DIR/name */
static void
file_path(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", Dir, name);
}

/* ask -- ask the script for `name` (DIR/name created) */
static void
ask(const char *name)
{
	char p[4096];
	file_path(p, sizeof(p), name);
	FILE *f = fopen(p, "w");
	if (!f || fclose(f))
		die(p);
}

/* wait_done -- until DIR/name.done exists (64 B persists when busy) */
static void
wait_done(const char *name, bool busy)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/%s.done", Dir, name);
	double end = now_ms() + WAIT_S * 1e3;
	while (access(p, F_OK)) {
		if (now_ms() > end)
			die("no answer from the script");
		if (busy)
			(void) probe();
		nap(1);
	}
}

/* done_open -- DIR/name.done, unlinked (read it, then fclose) */
static FILE *
done_open(const char *name)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/%s.done", Dir, name);
	FILE *f = fopen(p, "r");
	if (!f)
		die(p);
	unlink(p);
	return f;
}

/* kill_listed -- SIGKILL the pids DIR/name.done lists; how many */
static int
kill_listed(const char *name)
{
	FILE *f = done_open(name);
	long pid;
	int n = 0;
	while (fscanf(f, "%ld", &pid) == 1)
		if (pid > 1 && kill((pid_t)pid, SIGKILL) == 0)
			n++;
	fclose(f);
	return n;
}

/* cmp_double -- qsort order */
static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* pct -- the p-th percentile of s[0..n) (sorted); -1 when empty */
static double
pct(const double *s, size_t n, unsigned p)
{
	return n ? s[n * p / 100] : -1;
}

/* run_base -- 64 B persists while connected */
static void
run_base(double secs)
{
	size_t n = 0;
	for (unsigned i = 0; i < 200; i++)
		(void) probe();
	double end = now_ms() + secs * 1e3;
	while (n < MAX_SAMPLES && now_ms() < end)
		Samples[n++] = probe();
	qsort(Samples, n, sizeof(*Samples), cmp_double);
	printf("base p50=%.2f p99=%.2f n=%zu\n", pct(Samples, n, 50),
		pct(Samples, n, 99), n);
}

/* wait_state -- until the status says s (a 64 B persist every ms) */
static void
wait_state(const char *s)
{
	double end = now_ms() + WAIT_S * 1e3;
	while (!state_is(s)) {
		if (now_ms() > end)
			die("the live status did not reach the state wanted");
		(void) probe();
		nap(1);
	}
}

/*
 * kill_and_notice -- SIGKILL the rpmemd the script listed under `name`,
 * 64 B persists until one returns with the status not connected; the
 * ms from the kill to that return, the persists in *n
 */
static double
kill_and_notice(const char *name, size_t *n)
{
	for (unsigned i = 0; i < 50; i++)
		(void) probe();
	*n = 0;
	double t0 = now_ms();
	if (!kill_listed(name))
		die("no rpmemd to kill");
	do {
		(void) probe();
		++*n;
		if (now_ms() - t0 > WAIT_S * 1e3)
			die("the loss was never noticed");
	} while (state_is("connected"));
	return now_ms() - t0;
}

/* run_loss -- kill rpmemd, time until a persist returns degraded */
static void
run_loss(void)
{
	wait_state("connected");
	ask("pids");
	wait_done("pids", true);
	size_t n;
	double ms = kill_and_notice("pids", &n);
	double t1 = now_ms();
	wait_state("connected");
	printf("loss ms=%.2f persists=%zu back_ms=%.0f\n", ms, n,
		now_ms() - t1);
}

/* dirty -- MIB MiB rewritten and persisted (recorded while degraded) */
static void
dirty(void)
{
	Gen++;
	for (size_t o = 0; o < Dirty; o += PIECE) {
		size_t len = Dirty - o < PIECE ? Dirty - o : PIECE;
		memset(Pool + HDR + o, (int)(Gen & 0xff), len);
		if (rpmem_persist(Rpp, HDR + o, len, 0, 0))
			die(rpmem_errormsg());
	}
}

/* state ids of the resync run */
enum st { ST_DEGRADED, ST_RESYNCING, ST_CONNECTED, ST_OTHER };

/* state_now -- the status's state as an enum st */
static enum st
state_now(void)
{
	char v[64];
	status_get("state", v, sizeof(v));
	return !strcmp(v, "degraded") ? ST_DEGRADED :
		!strcmp(v, "resyncing") ? ST_RESYNCING :
		!strcmp(v, "connected") ? ST_CONNECTED : ST_OTHER;
}

/*
 * run_resync -- cut, dirty, restart, and watch the resync (with 64 B
 * persists throughout when `load`)
 */
static void
run_resync(bool load)
{
	wait_state("connected");
	ask("cut");			/* sshd stopped, rpmemd's pids */
	wait_done("cut", true);
	size_t n;
	double loss = kill_and_notice("cut", &n);
	dirty();
	char v[64];
	status_get("out_of_sync", v, sizeof(v));
	unsigned long long oos = strtoull(v, NULL, 10);
	ask("restore");			/* sshd started again */
	size_t ns = 0, bucket = 0;
	double t_res = -1, t_con = -1, poll = now_ms();
	double end = poll + WAIT_S * 1e3;
	enum st cur = state_now();
	while (t_con < 0) {
		if (load) {
			double us = probe();
			if (cur == ST_RESYNCING && ns + bucket < MAX_SAMPLES)
				Samples[ns + bucket++] = us;
		} else {
			nap(POLL_MS);
		}
		double t = now_ms();
		if (t - poll < POLL_MS)
			continue;
		poll = t;
		enum st s = state_now();
		if (s == cur && cur == ST_RESYNCING)
			ns += bucket;	/* resyncing before and after */
		bucket = 0;
		if (s == ST_RESYNCING && t_res < 0)
			t_res = wall_ms();
		if (s == ST_CONNECTED)
			t_con = wall_ms();
		cur = s;
		if (t > end)
			die("the resync did not end");
	}
	status_get("resync_done", v, sizeof(v));
	unsigned long long bytes = strtoull(v, NULL, 10);
	wait_done("restore", false);
	FILE *f = done_open("restore");
	double t_up = 0;
	if (fscanf(f, "%lf", &t_up) != 1)
		die("restore.done holds no time");
	fclose(f);
	qsort(Samples, ns, sizeof(*Samples), cmp_double);
	printf("%s loss_ms=%.2f out_of_sync=%llu resync_bytes=%llu "
		"resync_ms=%.0f to_resyncing_ms=%.0f to_connected_ms=%.0f "
		"p50=%.3f p99=%.3f n=%zu\n", load ? "load" : "idle", loss, oos,
		bytes, t_res < 0 ? -1 : t_con - t_res,
		t_res < 0 ? -1 : t_res - t_up, t_con - t_up,
		pct(Samples, ns, 50), pct(Samples, ns, 99), ns);
}

int
main(int argc, char *argv[])
{
	if (!tu_usage(argc >= 8, "degraded_client TARGET SET DIR MIB "
			"SECONDS REPS PHASE..."))
		return 2;
	Dir = argv[3];
	Dirty = (size_t)strtoul(argv[4], NULL, 10) << 20;
	double secs = strtod(argv[5], NULL);
	unsigned reps = (unsigned)strtoul(argv[6], NULL, 10);
	Size = Dirty + ((size_t)8 << 20);
	Samples = malloc(MAX_SAMPLES * sizeof(*Samples));
	Pool = mmap(NULL, Size, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (!Samples || Pool == MAP_FAILED)
		die("memory");
	memset(Pool, 0x5a, Size);
	unsigned lanes = 1;
	double t0 = now_ms();
	/*
	 * no attributes: with some, each reconnect is refused as "not
	 * those of its last session" (to be looked into, see the commit)
	 */
	Rpp = rpmem_create(argv[1], argv[2], Pool, Size, &lanes, NULL);
	if (!Rpp)
		die(rpmem_errormsg());
	printf("connect ms=%.1f\n", now_ms() - t0);
	for (size_t o = HDR; o < Size; o += PIECE) {
		size_t len = Size - o < PIECE ? Size - o : PIECE;
		if (rpmem_persist(Rpp, o, len, 0, 0))
			die(rpmem_errormsg());
	}
	fflush(stdout);
	for (int i = 7; i < argc; i++) {
		if (!strcmp(argv[i], "base"))
			run_base(secs);
		else if (!strcmp(argv[i], "loss"))
			for (unsigned r = 0; r < reps; r++) {
				run_loss();
				fflush(stdout);
			}
		else if (!strcmp(argv[i], "load") || !strcmp(argv[i], "idle"))
			run_resync(!strcmp(argv[i], "load"));
		else
			die(argv[i]);
		fflush(stdout);
	}
	if (rpmem_close(Rpp))
		die(rpmem_errormsg());
	munmap(Pool, Size);
	free(Samples);
	return 0;
}
