/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * soak_main.c -- scenarios L1/L2: clients on their own replicated pools
 * under random traffic and random faults for a time budget, every replica
 * held against what was acknowledged; ends with one line of figures
 *
 *   soak --target T --poolset-dir D --part-dir D --state-dir D \
 *        --log-dir D --rpmemd-cmd CMD [--seconds N] [--clients N] \
 *        [--lanes N] [--pool-mib N] [--faults LIST] [--per-round N] \
 *        [--gate-dir D] [--cut CMD --heal CMD] [--fill PATH] \
 *        [--ssh-exe PATH] [--sshd-pid PID] [--check-mem] \
 *        [--seed N] [--steady N] [--think-us N] [--label NAME]
 *
 * tests/soak/soak.sh sets it up (sshd, network namespace, small tmpfs)
 * and explains the options; RPMEM_TIMEOUT bounds every wait.  Exit
 * status 0 only when every must-be-zero figure is zero.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fab.h"
#include "soak_sup.h"

#define SAMPLE_MS 500		/* memory and process figures this often */
#define GAP_MIN_MS 200		/* quiet time between two faults */
#define GAP_SPAN_MS 1300
#define END_MS 10000		/* for what a run started to go away */
#define MIN_ROUNDS 2		/* fault rounds a run makes, late or not */
/* rpmemd's private memory beyond its lane buffers: code, libfabric, stacks */
#define MEM_SLACK_KIB (16UL << 10)

/* usage -- how to call it, then exit 2 */
static void __attribute__((noreturn))
usage(const char *why)
{
	fprintf(stderr, "soak: %s\nusage: soak --target T --poolset-dir D "
		"--part-dir D --state-dir D --log-dir D --rpmemd-cmd CMD "
		"[--seconds N] [--clients N] [--lanes N] [--pool-mib N] "
		"[--faults LIST] [--per-round N] [--gate-dir D] "
		"[--cut CMD --heal CMD] [--fill PATH] [--ssh-exe PATH] "
		"[--sshd-pid PID] [--check-mem] [--seed N] [--steady N] "
		"[--think-us N] "
		"[--label NAME]\n", why);
	exit(2);
}

/* number -- a decimal option value in [min, max] */
static unsigned long long
number(const char *opt, const char *v, unsigned long long min,
		unsigned long long max)
{
	char *end;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	if (errno || *end || v[0] == '-' || !v[0] || n < min || n > max) {
		char why[128];
		snprintf(why, sizeof(why), "--%s: '%s' is not a number in "
			"%llu..%llu", opt, v, min, max);
		usage(why);
	}
	return n;
}

/* options -- read the command line into s */
static void
options(struct soak *s, int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "label", required_argument, NULL, 'L' },
		{ "seconds", required_argument, NULL, 's' },
		{ "clients", required_argument, NULL, 'c' },
		{ "lanes", required_argument, NULL, 'l' },
		{ "pool-mib", required_argument, NULL, 'p' },
		{ "target", required_argument, NULL, 't' },
		{ "poolset-dir", required_argument, NULL, 'P' },
		{ "part-dir", required_argument, NULL, 'D' },
		{ "state-dir", required_argument, NULL, 'S' },
		{ "log-dir", required_argument, NULL, 'O' },
		{ "gate-dir", required_argument, NULL, 'g' },
		{ "rpmemd-cmd", required_argument, NULL, 'r' },
		{ "cut", required_argument, NULL, 'x' },
		{ "heal", required_argument, NULL, 'h' },
		{ "fill", required_argument, NULL, 'f' },
		{ "ssh-exe", required_argument, NULL, 'e' },
		{ "faults", required_argument, NULL, 'F' },
		{ "per-round", required_argument, NULL, 'n' },
		{ "sshd-pid", required_argument, NULL, 'i' },
		{ "check-mem", no_argument, NULL, 'm' },
		{ "seed", required_argument, NULL, 'z' },
		{ "steady", required_argument, NULL, 'y' },
		{ "think-us", required_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 },
	};
	const char *faults = "all";
	s->label = "soak";
	s->seconds = 120;
	s->nclients = 4;
	s->lanes = 4;
	s->pool_size = (size_t)8 << 20;
	s->per_round = 1;
	s->seed = (uint64_t)tu_now_ms() ^ (uint64_t)getpid() << 32;
	int o;
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'L': s->label = optarg; break;
		case 's': s->seconds = (unsigned)number("seconds", optarg, 1,
				7 * 24 * 3600); break;
		case 'c': s->nclients = (unsigned)number("clients", optarg, 1,
				SOAK_MAX_CLIENTS); break;
		case 'l': s->lanes = (unsigned)number("lanes", optarg, 1,
				SOAK_MAX_LANES); break;
		case 'p': s->pool_size = (size_t)number("pool-mib", optarg, 2,
				1024) << 20; break;
		case 't': s->target = optarg; break;
		case 'P': s->poolset_dir = optarg; break;
		case 'D': s->part_dir = optarg; break;
		case 'S': s->state_dir = optarg; break;
		case 'O': s->log_dir = optarg; break;
		case 'g': s->gate_dir = optarg; break;
		case 'r': s->rpmemd_cmd = optarg; break;
		case 'x': s->cut_cmd = optarg; break;
		case 'h': s->heal_cmd = optarg; break;
		case 'f': s->fill_path = optarg; break;
		case 'e': s->ssh_exe = optarg; break;
		case 'F': faults = optarg; break;
		case 'n': s->per_round = (unsigned)number("per-round", optarg,
				1, SOAK_MAX_IN_ROUND); break;
		case 'i': s->sshd_pid = (pid_t)number("sshd-pid", optarg, 1,
				4194304); break;
		case 'm': s->mem_cap_kib = (LANE_MEM_MAX >> 10) +
				MEM_SLACK_KIB; break;
		case 'z': s->seed = number("seed", optarg, 0, ~0ULL); break;
		case 'k': s->think_us = (unsigned)number("think-us", optarg, 0,
				10000000); break;
		case 'y': s->steady = (unsigned)number("steady", optarg, 1,
				7 * 24 * 3600); break;
		default: usage("unknown option");
		}
	}
	if (optind != argc)
		usage("unexpected argument");
	if (!s->target || !s->poolset_dir || !s->part_dir || !s->state_dir ||
			!s->log_dir || !s->rpmemd_cmd)
		usage("--target, --poolset-dir, --part-dir, --state-dir, "
			"--log-dir and --rpmemd-cmd are needed");
	if (fault_parse(faults, &s->fault_mask))
		usage("--faults: a comma-separated list of rpmemd-kill, "
			"rpmemd-stop, ssh-kill, client-kill, link-cut, "
			"fs-full, stray; or all, or none");
	unsigned usable = fault_usable(s);
	if (strcmp(faults, "all") == 0)
		s->fault_mask &= usable;
	for (unsigned f = 0; f < FAULT_MAX; f++) {
		if ((s->fault_mask & ~usable) & (1U << f)) {
			char why[160];
			snprintf(why, sizeof(why), "fault %s needs an option "
				"this run lacks (--cut/--heal, --fill, "
				"--gate-dir or --ssh-exe)", fault_name(f));
			usage(why);
		}
	}
	const char *t = getenv("RPMEM_TIMEOUT");
	s->timeout_ms = (int)(t && *t ? number("RPMEM_TIMEOUT", t, 1, 3600) :
		60) * 1000;
	s->rng = s->seed;
}

/* client_init -- set file, state file and gate of client i */
static int
client_init(struct soak *s, unsigned i)
{
	struct client *c = &s->clients[i];
	c->id = i;
	c->cmd_fd = c->msg_fd = -1;
	snprintf(c->desc, sizeof(c->desc), "%s-w%u.set", s->label, i);
	snprintf(c->set_path, sizeof(c->set_path), "%s/%s-w%u.set",
		s->poolset_dir, s->label, i);
	snprintf(c->part, sizeof(c->part), "%s/%s-w%u.part0", s->part_dir,
		s->label, i);
	snprintf(c->state_path, sizeof(c->state_path), "%s/%s-w%u.state",
		s->state_dir, s->label, i);
	FILE *f = fopen(c->set_path, "wx");
	if (!f)
		return -errno;
	fprintf(f, "PMEMPOOLSET\n%zuM %s\n", s->pool_size >> 20, c->part);
	if (fclose(f))
		return -errno;
	int r = soak_state_map(c->state_path, s->pool_size, true, &c->st);
	if (r)
		return r;
	if (s->gate_dir) {
		char gate[PATH_MAX];
		snprintf(gate, sizeof(gate), "%s/gate.%u", s->gate_dir, i);
		if (mkfifo(gate, 0600) && errno != EEXIST)
			return -errno;
	}
	return 0;
}

/* sample -- peak memory of each rpmemd and of the target's processes */
static void
sample(struct soak *s)
{
	for (unsigned i = 0; i < s->nclients; i++) {
		pid_t pid = sup_rpmemd(s, &s->clients[i]);
		unsigned long hwm, anon;
		if (pid <= 0 || soak_proc_mem(pid, &hwm, &anon))
			continue;
		if (hwm > s->fig.hwm_max_kib)
			s->fig.hwm_max_kib = hwm;
		if (anon > s->fig.anon_max_kib)
			s->fig.anon_max_kib = anon;
	}
	if (s->sshd_pid) {
		unsigned p, f;
		soak_tree_count(s->sshd_pid, &p, &f);
		if (p > s->fig.tree_peak[0])
			s->fig.tree_peak[0] = p;
		if (f > s->fig.tree_peak[1])
			s->fig.tree_peak[1] = f;
	}
}

/*
 * idle -- let the clients run for ms; a report now is an error no fault
 * explains: count it and bring that client back
 */
static void
idle(struct soak *s, int ms)
{
	long long end = tu_now_ms() + ms;
	for (;;) {
		long long left = end - tu_now_ms();
		if (left <= 0)
			return;
		(void) sup_wait(s, NULL, NULL, left < SAMPLE_MS ? (int)left :
			SAMPLE_MS);
		sample(s);
		for (unsigned i = 0; i < s->nclients; i++) {
			struct client *c = &s->clients[i];
			if (!c->has_msg && (c->msg_fd >= 0 || !c->ready))
				continue;
			c->has_msg = false;
			s->fig.unexpected++;
			sup_log(s, "UNEXPECTED: worker %u without a fault: %s",
				c->id, c->msg_fd < 0 ? "worker gone" :
				c->inbox.text);
			c->ready = false;
			sup_reap(s, c, END_MS);
			sup_recover(s, &c, 1, "an unexplained error");
		}
	}
}

/* ready_all -- the clients with a session up, into cs[] */
static unsigned
ready_all(struct soak *s, struct client **cs)
{
	unsigned n = 0;
	for (unsigned i = 0; i < s->nclients; i++)
		if (s->clients[i].ready)
			cs[n++] = &s->clients[i];
	return n;
}

/*
 * pause_check -- stop every client's lanes with nothing in flight, hold
 * each replica against its record while the sessions stay up, resume
 */
static void
pause_check(struct soak *s)
{
	long long t0 = tu_now_ms();
	struct client *cs[SOAK_MAX_CLIENTS];
	unsigned n = ready_all(s, cs);
	for (unsigned i = 0; i < n; i++)
		if (sup_send(cs[i], SOAK_CMD_PAUSE))
			cs[i]->ready = false;
	for (unsigned i = 0; i < n; i++) {
		struct client *c = cs[i];
		struct soak_msg m;
		if (c->ready && !sup_wait(s, c, &m, sup_bound_ms(s)) &&
				m.type == SOAK_MSG_PAUSED) {
			s->fig.paused++;
			if (sup_check(s, c, "a pause"))
				s->fig.verified_paused++;
			(void) sup_send(c, SOAK_CMD_RESUME);
			continue;
		}
		s->fig.unexpected++;
		sup_log(s, "UNEXPECTED: worker %u did not pause", c->id);
		sup_reap(s, c, 0);
		sup_recover(s, &c, 1, "a failed pause");
	}
	sup_log(s, "%u of %u replicas as acknowledged with their sessions "
		"up (%lld ms)", s->fig.verified_paused, n, tu_now_ms() - t0);
}

/* finish -- close every client at once, verify each, end the workers */
static void
finish(struct soak *s)
{
	struct client *cs[SOAK_MAX_CLIENTS];
	unsigned n = ready_all(s, cs);
	for (unsigned i = 0; i < n; i++)
		(void) sup_send(cs[i], SOAK_CMD_CLOSE);
	for (unsigned i = 0; i < n; i++) {
		struct client *c = cs[i];
		struct soak_msg m;
		int r = sup_wait(s, c, &m, sup_bound_ms(s));
		c->ready = false;
		if (r || m.type != SOAK_MSG_CLOSED || m.err) {
			s->fig.unexpected++;
			sup_log(s, "UNEXPECTED: closing worker %u: %s", c->id,
				r ? strerror(-r) : m.text);
			continue;
		}
		sup_gone(s, c, sup_bound_ms(s));
		if (sup_check(s, c, "the final close"))
			s->fig.verified++;
	}
	for (unsigned i = 0; i < s->nclients; i++)
		(void) sup_send(&s->clients[i], SOAK_CMD_EXIT);
	for (unsigned i = 0; i < s->nclients; i++) {
		struct client *c = &s->clients[i];
		if (c->pid && !sup_reap(s, c, END_MS)) {
			s->fig.leaked_procs++;
			sup_log(s, "LEAK: worker %u did not exit", c->id);
			kill(c->pid, SIGKILL);
			sup_reap(s, c, END_MS);
		}
		s->fig.ops += atomic_load(&c->st.head->ops);
		s->fig.bytes += atomic_load(&c->st.head->bytes);
		s->fig.bad_reads += atomic_load(&c->st.head->bad_reads);
		soak_state_unmap(&c->st);
		/* rpmem_remove has its own test in the fs-full fault */
		unlink(c->part);
		unlink(c->state_path);
		unlink(c->set_path);
	}
}

/* leaks -- every process the run started is gone, the target at base */
static void
leaks(struct soak *s)
{
	pid_t pids[4096];
	unsigned n = soak_rpmemd_pids(s->log_dir, -1, pids, 4096);
	for (unsigned i = 0; i < n; i++) {
		if (tu_pidfd_wait(pids[i], END_MS))
			continue;
		s->fig.leaked_rpmemd++;
		sup_log(s, "LEAK: rpmemd %d still runs", (int)pids[i]);
		kill(pids[i], SIGKILL);
	}
	/* orphaned ssh processes came to us: they must end too */
	unsigned procs, fds;
	long long deadline = tu_now_ms() + END_MS;
	do {
		soak_tree_count(getpid(), &procs, &fds);
		if (procs > 1)
			usleep(20000);
	} while (procs > 1 && tu_now_ms() < deadline);
	if (procs > 1) {
		s->fig.leaked_procs += procs - 1;
		sup_log(s, "LEAK: %u client-side processes left", procs - 1);
	}
	if (!s->sshd_pid)
		return;
	unsigned *base = s->fig.tree_base, *end = s->fig.tree_end;
	deadline = tu_now_ms() + END_MS;
	do {
		soak_tree_count(s->sshd_pid, &end[0], &end[1]);
		if (end[0] > base[0] || end[1] > base[1])
			usleep(20000);
	} while ((end[0] > base[0] || end[1] > base[1]) &&
		tu_now_ms() < deadline);
	if (end[0] > base[0] || end[1] > base[1]) {
		sup_log(s, "LEAK: the target holds %u processes and %u "
			"descriptors, %u and %u before the run", end[0],
			end[1], base[0], base[1]);
		s->fig.leaked_procs += end[0] > base[0] ? end[0] - base[0] : 0;
		s->fig.leaked_fds += end[1] > base[1] ? end[1] - base[1] : 0;
	}
}

/* figures -- the one line; true when every must-be-zero figure is 0 */
static bool
figures(struct soak *s)
{
	struct figures *g = &s->fig;
	unsigned nfaults = 0;
	char kinds[512] = "";
	size_t o = 0;
	for (unsigned f = 0; f < FAULT_MAX; f++) {
		nfaults += g->faults[f];
		o += (size_t)snprintf(kinds + o, sizeof(kinds) - o, "%s%s=%u",
			f ? "," : "", fault_name(f), g->faults[f]);
	}
	bool over_cap = s->mem_cap_kib && g->anon_max_kib > s->mem_cap_kib;
	bool pass = !g->lost && !g->torn && !g->corrupt && !g->hangs &&
		!g->unexpected && !g->open_failed && !g->leaked_rpmemd &&
		!g->leaked_fds && !g->leaked_procs && !g->leftovers &&
		!g->stray_in && !g->bad_reads && !over_cap &&
		g->verified == s->nclients && g->verified_paused == g->paused &&
		(!s->steady || g->paused == s->nclients);
	printf("%s figures: seconds=%lld clients=%u lanes=%u ops=%llu "
		"acked-bytes=%llu faults=%u(%s) reopens=%u oracle-checks=%u "
		"inflight-bytes=%llu lost-bytes=%llu torn-words=%llu "
		"corrupt-bytes=%llu bad-reads=%llu fault-to-error-max-ms=%lld "
		"hangs=%u unexpected=%u open-failed=%u slow-starts=%u "
		"strays-let-in=%u leftover-parts=%u leaked-rpmemd=%u "
		"leaked-fds=%u "
		"leaked-procs=%u verified-paused=%u/%u verified=%u/%u "
		"rpmemd-hwm-max-kib=%lu "
		"rpmemd-anon-max-kib=%lu%s target-procs=%u/%u/%u "
		"target-fds=%u/%u/%u result=%s\n", s->label,
		(tu_now_ms() - s->t0) / 1000, s->nclients, s->lanes,
		(unsigned long long)g->ops, (unsigned long long)g->bytes,
		nfaults, kinds, g->reopens, g->checks,
		(unsigned long long)g->inflight, (unsigned long long)g->lost,
		(unsigned long long)g->torn, (unsigned long long)g->corrupt,
		(unsigned long long)g->bad_reads, g->err_max_ms, g->hangs,
		g->unexpected, g->open_failed, g->slow_starts, g->stray_in,
		g->leftovers, g->leaked_rpmemd, g->leaked_fds, g->leaked_procs,
		g->verified_paused, g->paused, g->verified, s->nclients,
		g->hwm_max_kib, g->anon_max_kib,
		over_cap ? "(OVER CAP)" : "", g->tree_base[0], g->tree_peak[0],
		g->tree_end[0], g->tree_base[1], g->tree_peak[1],
		g->tree_end[1], pass ? "pass" : "FAIL");
	fflush(stdout);
	return pass;
}

int
main(int argc, char *argv[])
{
	if (argc > 1 && strcmp(argv[1], "--worker") == 0)
		return soak_worker_main(argc, argv);
	static struct soak soak;
	struct soak *s = &soak;
	options(s, argc, argv);
	signal(SIGPIPE, SIG_IGN);
	/* orphans of killed workers (their ssh) come to us, not to init */
	(void) prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	ssize_t n = readlink("/proc/self/exe", s->self, sizeof(s->self) - 1);
	if (n <= 0)
		return 2;
	s->self[n] = '\0';
	s->t0 = tu_now_ms();
	printf("%s: seed %llu, %u clients x %u lanes, %zu MiB pools, %u s, "
		"RPMEM_TIMEOUT %d s, faults:", s->label,
		(unsigned long long)s->seed, s->nclients, s->lanes,
		s->pool_size >> 20, s->seconds, s->timeout_ms / 1000);
	for (unsigned f = 0; f < FAULT_MAX; f++)
		if (s->fault_mask & (1U << f))
			printf(" %s", fault_name(f));
	printf("%s\n", s->fault_mask ? "" : " none");
	fflush(stdout);
	for (unsigned i = 0; i < s->nclients; i++) {
		int r = client_init(s, i);
		if (r) {
			fprintf(stderr, "soak: client %u: %s\n", i,
				strerror(-r));
			return 2;
		}
	}
	if (s->sshd_pid)
		soak_tree_count(s->sshd_pid, &s->fig.tree_base[0],
			&s->fig.tree_base[1]);
	struct client *all[SOAK_MAX_CLIENTS];
	for (unsigned i = 0; i < s->nclients; i++) {
		all[i] = &s->clients[i];
		if (sup_spawn(s, all[i]))
			return 2;
	}
	long long t_open = tu_now_ms();
	unsigned up = sup_open_all(s, all, s->nclients, SOAK_CMD_CREATE,
		"start");
	sup_log(s, "%u of %u pools created at once in %lld ms", up,
		s->nclients, tu_now_ms() - t_open);
	/* the budget counts from the sessions being up */
	long long end = tu_now_ms() + (long long)s->seconds * 1000;
	if (s->steady) {
		idle(s, s->steady * 1000);
		pause_check(s);
	}
	/*
	 * On a busy host creating and checking the pools may eat the whole
	 * budget: MIN_ROUNDS fault rounds are owed whatever the clock says
	 */
	unsigned rounds = 0;
	while (tu_now_ms() < end ||
			(s->fault_mask && rounds < MIN_ROUNDS)) {
		long long left = end - tu_now_ms();
		int gap = GAP_MIN_MS + (int)(tu_rnd(&s->rng) % GAP_SPAN_MS);
		bool owed = s->fault_mask && rounds < MIN_ROUNDS;
		idle(s, s->fault_mask && (gap < left || owed) ? gap :
			(int)left);
		if (s->fault_mask && (tu_now_ms() < end || owed)) {
			fault_round(s, s->fault_mask);
			rounds++;
		}
	}
	sample(s);
	finish(s);
	leaks(s);
	return figures(s) ? 0 : 1;
}
