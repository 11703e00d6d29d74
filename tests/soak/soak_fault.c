/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * soak_fault.c -- the faults a soak injects (scenarios R1-R5, R13,
 * S2), one table; each round picks one kind and its targets, injects,
 * waits for the clients to notice, then brings them back
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "soak_sup.h"

#define STOP_MS 5000		/* a stopped process shows it at once */
#define CALL_MS 2000		/* a worker is mid-call almost always */
#define FILL_CHUNK ((off_t)1 << 20)

/* how a fault is chosen and run */
struct fault {
	const char *name;
	bool single;		/* one target, whatever --per-round says */
	bool global;		/* hits every client at once */
	int sig;		/* signal faults: what the victim gets */
	pid_t (*victim)(struct soak *s, struct client *c);
	void (*run)(struct soak *s, const struct fault *f,
		struct client **t, unsigned n);
};

/* victim_rpmemd -- the rpmemd serving c */
static pid_t
victim_rpmemd(struct soak *s, struct client *c)
{
	return sup_rpmemd(s, c);
}

/* victim_ssh -- the ssh process among c's worker's descendants */
static pid_t
victim_ssh(struct soak *s, struct client *c)
{
	return soak_proc_find(c->pid, s->ssh_exe);
}

/* victim_client -- the worker itself, once it is inside a data call */
static pid_t
victim_client(struct soak *s, struct client *c)
{
	(void) s;
	long long deadline = tu_now_ms() + CALL_MS;
	while (atomic_load(&c->st.head->in_call) == 0 &&
			tu_now_ms() < deadline)
		usleep(200);
	return c->pid;
}

/*
 * run_signal -- signal each target's victim; stopped ones stay stopped
 * until their client has given up (longer than RPMEM_TIMEOUT)
 */
static void
run_signal(struct soak *s, const struct fault *f, struct client **t,
		unsigned n)
{
	pid_t victim[SOAK_MAX_IN_ROUND];
	unsigned hit = 0;
	struct client *ht[SOAK_MAX_IN_ROUND];
	/*
	 * A killed victim's client may notice at once: the clock starts
	 * before the first kill (a busy supervisor was seen to read it
	 * after the client's error).  A stopped one starts it once stopped.
	 */
	long long t_fault = 0;
	for (unsigned i = 0; i < n; i++) {
		pid_t v = f->victim(s, t[i]);
		if (hit == 0)
			t_fault = tu_now_ms();
		if (v <= 0 || kill(v, f->sig)) {
			sup_log(s, "%s worker %u: no victim found", f->name,
				t[i]->id);
			continue;
		}
		victim[hit] = v;
		ht[hit++] = t[i];
	}
	long long deadline = tu_now_ms() + STOP_MS;
	for (unsigned i = 0; f->sig == SIGSTOP && i < hit; i++) {
		while (!tu_proc_stopped(victim[i]) &&
				tu_now_ms() < deadline)
			usleep(1000);
	}
	if (f->sig == SIGSTOP)
		t_fault = tu_now_ms();
	for (unsigned i = 0; i < hit; i++) {
		if (f->victim == victim_client) {
			if (!sup_reap(s, ht[i], sup_bound_ms(s))) {
				s->fig.hangs++;
				sup_log(s, "HANG: killed worker %u did not "
					"go", ht[i]->id);
			}
			ht[i]->ready = false;
			continue;
		}
		(void) sup_broken(s, ht[i], t_fault, f->name);
	}
	for (unsigned i = 0; f->sig == SIGSTOP && i < hit; i++)
		kill(victim[i], SIGCONT);
	sup_recover(s, ht, hit, f->name);
}

/* shell -- run a command of the driver's; false if it failed */
static bool
shell(struct soak *s, const char *cmd)
{
	int r = system(cmd);
	if (r != 0)
		sup_log(s, "'%s' failed with status %d", cmd, r);
	return r == 0;
}

/* run_link -- cut the link to the target, heal it once all gave up */
static void
run_link(struct soak *s, const struct fault *f, struct client **t,
		unsigned n)
{
	if (!shell(s, s->cut_cmd))
		return;
	long long t_fault = tu_now_ms();
	for (unsigned i = 0; i < n; i++)
		(void) sup_broken(s, t[i], t_fault, f->name);
	if (!shell(s, s->heal_cmd)) {
		s->fig.unexpected++;
		return;
	}
	sup_recover(s, t, n, f->name);
}

/* part_absent -- no part file may be left; counted if one is */
static void
part_absent(struct soak *s, struct client *c, const char *after)
{
	struct stat st;
	if (stat(c->part, &st) == 0) {
		s->fig.leftovers++;
		sup_log(s, "LEFTOVER: %s exists after %s", c->part, after);
	}
}

/*
 * remove_pool -- rpmem_remove of c's pool.  Like an open, its login may
 * outlast RPMEM_TIMEOUT on a busy machine: that is a slow start, and the
 * remove is asked again unless the part is already gone (rpmemd removed
 * it, its answer came late).  false (counted) on any other failure.
 */
static bool
remove_pool(struct soak *s, struct client *c)
{
	struct soak_msg m;
	struct stat st;
	for (int t = 0;; t++) {
		int r = sup_send(c, SOAK_CMD_REMOVE);
		if (!r)
			r = sup_wait(s, c, &m, sup_bound_ms(s));
		if (!r && m.type == SOAK_MSG_REMOVED && !m.err)
			return true;
		if (!r && m.type == SOAK_MSG_REMOVED && m.err == ETIMEDOUT &&
				t < 2) {
			s->fig.slow_starts++;
			sup_log(s, "slow start: removing worker %u's pool: %s",
				c->id, m.text);
			sup_gone(s, c, sup_bound_ms(s));
			if (stat(c->part, &st) != 0)
				return true;
			continue;
		}
		s->fig.unexpected++;
		sup_log(s, "UNEXPECTED: removing worker %u's pool: %s", c->id,
			r ? strerror(-r) : m.text);
		return false;
	}
}

/* fill -- take every free block of the file system (R13's ENOSPC) */
static int
fill(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	off_t at = 0;
	for (off_t chunk = FILL_CHUNK; chunk >= 4096; chunk /= 16) {
		while (posix_fallocate(fd, at, chunk) == 0)
			at += chunk;
	}
	close(fd);
	struct statvfs sv;
	if (statvfs(path, &sv) == 0 && sv.f_bavail > 0)
		return -EAGAIN;
	return 0;
}

/*
 * run_fs_full -- the target's file system is full when a pool is made:
 * the create fails, leaves no part behind, and works once there is room
 */
static void
run_fs_full(struct soak *s, const struct fault *f, struct client **t,
		unsigned n)
{
	struct client *c = t[0];
	struct soak_msg m;
	(void) n;
	if (!sup_close(s, c))
		goto recover;
	sup_gone(s, c, sup_bound_ms(s));
	(void) sup_check(s, c, "a clean close");
	if (!remove_pool(s, c))
		goto recover;
	part_absent(s, c, "rpmem_remove");
	int r = fill(s->fill_path);
	if (r)
		sup_log(s, "filling %s: %s", s->fill_path, strerror(-r));
	int err = 0;
	if (sup_send(c, SOAK_CMD_CREATE) ||
			sup_wait(s, c, &m, 3 * s->timeout_ms + 10000)) {
		s->fig.hangs++;
		sup_log(s, "HANG: create on a full file system");
	} else if (m.type == SOAK_MSG_READY) {
		s->fig.unexpected++;
		sup_log(s, "UNEXPECTED: create succeeded on a full file "
			"system");
		c->ready = true;
		(void) sup_close(s, c);
		sup_gone(s, c, sup_bound_ms(s));
		(void) sup_send(c, SOAK_CMD_REMOVE);
		(void) sup_wait(s, c, &m, sup_bound_ms(s));
	} else {
		err = m.err;
	}
	sup_gone(s, c, sup_bound_ms(s));
	part_absent(s, c, "a create on a full file system");
	unlink(s->fill_path);
	sup_log(s, "%s worker %u: create failed with %s (%s)", f->name, c->id,
		err ? strerrorname_np(err) : "-", m.text);
	soak_oracle_reset(&c->st);
	if (sup_open_all(s, &c, 1, SOAK_CMD_CREATE, f->name))
		s->fig.reopens++;
	return;
recover:
	sup_recover(s, &c, 1, f->name);
}

/* listening -- wait for "listening on ADDR port N (PROV)" in a log */
static bool
listening(const char *log, char *addr, unsigned *port, char *prov, int ms)
{
	long long deadline = tu_now_ms() + ms;
	do {
		char buf[16384];
		int fd = open(log, O_RDONLY | O_CLOEXEC);
		ssize_t len = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		if (fd >= 0)
			close(fd);
		if (len > 0) {
			buf[len] = '\0';
			const char *l = strstr(buf, "listening on ");
			if (l && sscanf(l, "listening on %63s port %u "
					"(%63[^)])", addr, port, prov) == 3)
				return true;
		}
		usleep(10000);
	} while (tu_now_ms() < deadline);
	return false;
}

/*
 * run_stray -- strangers at the lane port while rpmemd admits lanes: the
 * worker's ssh wrapper holds rpmemd's answer back until the gate opens,
 * so the listener is up and the client not yet connected
 */
static void
run_stray(struct soak *s, const struct fault *f, struct client **t,
		unsigned n)
{
	struct client *c = t[0];
	char prev[PATH_MAX] = "", log[PATH_MAX], arm[PATH_MAX], gate[PATH_MAX];
	(void) n;
	if (!sup_close(s, c)) {
		sup_recover(s, &c, 1, f->name);
		return;
	}
	sup_gone(s, c, sup_bound_ms(s));
	(void) sup_check(s, c, "a clean close");
	(void) soak_log_find(s->log_dir, (int)c->id, NULL, prev,
		sizeof(prev));
	snprintf(arm, sizeof(arm), "%s/arm.%u", s->gate_dir, c->id);
	snprintf(gate, sizeof(gate), "%s/gate.%u", s->gate_dir, c->id);
	int afd = open(arm, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (afd >= 0)
		close(afd);
	if (sup_send(c, SOAK_CMD_OPEN)) {
		c->lost = true;
		return;
	}
	long long deadline = tu_now_ms() + 3 * s->timeout_ms + 10000;
	bool found = false;
	while (!found && tu_now_ms() < deadline) {
		found = soak_log_find(s->log_dir, (int)c->id, prev, log,
			sizeof(log));
		if (!found)
			usleep(10000);
	}
	char addr[64], prov[64];
	unsigned port = 0;
	int silent = -1;
	if (found && listening(log, addr, &port, prov, 3 * s->timeout_ms)) {
		char why[256];
		int in = soak_stray(prov, addr, port, &s->rng, &silent, why,
			sizeof(why));
		if (in != 0) {
			s->fig.stray_in += in > 0 ? (unsigned)in : 0;
			sup_log(s, "%s%s worker %u: %s", in > 0 ? "LET IN: " :
				"", f->name, c->id, why);
		} else {
			sup_log(s, "%s worker %u: strangers at %s port %u "
				"refused%s%s", f->name, c->id, addr, port,
				why[0] ? "; " : "", why);
		}
	} else {
		sup_log(s, "%s worker %u: rpmemd never listened", f->name,
			c->id);
	}
	int gfd = open(gate, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (gfd < 0 || write(gfd, "go\n", 3) != 3)
		sup_log(s, "cannot open the gate %s", gate);
	if (gfd >= 0)
		close(gfd);
	struct soak_msg m;
	int r = sup_wait(s, c, &m, 3 * s->timeout_ms + 10000);
	if (silent >= 0)
		close(silent);
	unlink(arm);
	if (!r && m.type == SOAK_MSG_READY && m.nlanes == s->lanes) {
		c->ready = true;
		c->nlanes = m.nlanes;
		s->fig.reopens++;
		return;
	}
	sup_open_failed(s, c, "strangers", r ? NULL : &m);
	if (!r && m.type == SOAK_MSG_READY) {
		c->ready = true;
		c->nlanes = m.nlanes;
	} else if (!c->lost) {
		(void) sup_open(s, c, SOAK_CMD_OPEN);
	}
}

static const struct fault Faults[FAULT_MAX] = {
	[FAULT_RPMEMD_KILL] = { "rpmemd-kill", false, false, SIGKILL,
		victim_rpmemd, run_signal },
	[FAULT_RPMEMD_STOP] = { "rpmemd-stop", false, false, SIGSTOP,
		victim_rpmemd, run_signal },
	[FAULT_SSH_KILL] = { "ssh-kill", false, false, SIGKILL, victim_ssh,
		run_signal },
	[FAULT_CLIENT_KILL] = { "client-kill", false, false, SIGKILL,
		victim_client, run_signal },
	[FAULT_LINK_CUT] = { "link-cut", false, true, 0, NULL, run_link },
	[FAULT_FS_FULL] = { "fs-full", true, false, 0, NULL, run_fs_full },
	[FAULT_STRAY] = { "stray", true, false, 0, NULL, run_stray },
};

/* fault_name -- the figures' name of a fault */
const char *
fault_name(enum fault_id f)
{
	return Faults[f].name;
}

/* fault_parse -- a comma-separated list of names, "all" or "none" */
int
fault_parse(const char *list, unsigned *mask)
{
	*mask = 0;
	if (strcmp(list, "none") == 0)
		return 0;
	if (strcmp(list, "all") == 0) {
		*mask = (1U << FAULT_MAX) - 1;
		return 0;
	}
	const char *p = list;
	while (*p) {
		size_t len = strcspn(p, ",");
		unsigned f;
		for (f = 0; f < FAULT_MAX; f++)
			if (strlen(Faults[f].name) == len &&
					strncmp(p, Faults[f].name, len) == 0)
				break;
		if (f == FAULT_MAX)
			return -EINVAL;
		*mask |= 1U << f;
		p += len + (p[len] == ',');
	}
	return 0;
}

/* fault_usable -- faults this run's set-up allows */
unsigned
fault_usable(const struct soak *s)
{
	unsigned m = (1U << FAULT_MAX) - 1;
	if (!s->cut_cmd || !s->heal_cmd)
		m &= ~(1U << FAULT_LINK_CUT);
	if (!s->fill_path)
		m &= ~(1U << FAULT_FS_FULL);
	if (!s->gate_dir)
		m &= ~(1U << FAULT_STRAY);
	if (!s->ssh_exe)
		m &= ~(1U << FAULT_SSH_KILL);
	return m;
}

/* fault_round -- pick a fault among `mask` and targets, inject, recover */
void
fault_round(struct soak *s, unsigned mask)
{
	unsigned kinds[FAULT_MAX], nk = 0;
	for (unsigned f = 0; f < FAULT_MAX; f++)
		if (mask & (1U << f))
			kinds[nk++] = f;
	struct client *ready[SOAK_MAX_CLIENTS];
	unsigned nr = 0;
	for (unsigned i = 0; i < s->nclients; i++)
		if (s->clients[i].ready)
			ready[nr++] = &s->clients[i];
	if (!nk || !nr)
		return;
	const struct fault *f = &Faults[kinds[tu_rnd(&s->rng) % nk]];
	unsigned want = f->global ? nr : f->single ? 1 : s->per_round;
	if (want > nr)
		want = nr;
	if (!f->global && want > SOAK_MAX_IN_ROUND)
		want = SOAK_MAX_IN_ROUND;
	/* a random choice of `want` clients: the head of a shuffle */
	for (unsigned i = 0; i < want; i++) {
		unsigned j = i + (unsigned)(tu_rnd(&s->rng) % (nr - i));
		struct client *tmp = ready[i];
		ready[i] = ready[j];
		ready[j] = tmp;
	}
	s->fig.faults[f - Faults] += f->global ? 1 : want;
	f->run(s, f, ready, want);
}
