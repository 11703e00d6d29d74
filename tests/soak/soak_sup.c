/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * soak_sup.c -- the supervisor's steps: start workers, talk to them, wait
 * for their reports and for the rpmemd of a session to go, run the oracle
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "soak_sup.h"

#define OPEN_TRIES 3
#define LOGIN_WINDOW 8		/* ssh logins under way at once */
#define LATE_MS 5000		/* scheduling slack beyond RPMEM_TIMEOUT */
#define GONE_MS 60000		/* a cut link delivers the hang-up late */

/* sup_log -- one progress line on stdout, with the run's time */
void
sup_log(struct soak *s, const char *fmt, ...)
{
	va_list ap;
	printf("%s: %7.1f s ", s->label, (double)(tu_now_ms() - s->t0) /
		1000.0);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* sup_bound_ms -- how long a client may take to notice a fault */
int
sup_bound_ms(const struct soak *s)
{
	/* the failing wait, then close reaping an ssh that may not answer */
	return 2 * s->timeout_ms + 10000;
}

/* sup_send -- a command to a worker */
int
sup_send(struct client *c, enum soak_cmd cmd)
{
	uint32_t v = cmd;
	if (c->cmd_fd < 0 ||
			write(c->cmd_fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
		return -EPIPE;
	return 0;
}

/* gone_worker -- the worker's pipes are closed: forget them */
static void
gone_worker(struct client *c)
{
	if (c->msg_fd >= 0)
		close(c->msg_fd);
	if (c->cmd_fd >= 0)
		close(c->cmd_fd);
	c->msg_fd = c->cmd_fd = -1;
	c->ready = false;
}

/*
 * sup_wait -- the next report of c within ms, meanwhile keeping the
 * others' reports (c NULL: only keep them, for ms)
 */
int
sup_wait(struct soak *s, struct client *c, struct soak_msg *m, int ms)
{
	long long deadline = tu_now_ms() + ms;
	for (;;) {
		if (c && c->has_msg) {
			*m = c->inbox;
			c->has_msg = false;
			return 0;
		}
		if (c && c->msg_fd < 0)
			return -EPIPE;
		struct pollfd pfd[SOAK_MAX_CLIENTS];
		struct client *who[SOAK_MAX_CLIENTS];
		nfds_t n = 0;
		for (unsigned i = 0; i < s->nclients; i++) {
			struct client *o = &s->clients[i];
			if (o->msg_fd < 0 || o->has_msg)
				continue;
			pfd[n] = (struct pollfd){ .fd = o->msg_fd,
				.events = POLLIN };
			who[n++] = o;
		}
		long long left = deadline - tu_now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		int r = poll(pfd, n, (int)left);
		if (r < 0 && errno != EINTR)
			return -errno;
		for (nfds_t i = 0; r > 0 && i < n; i++) {
			if (!pfd[i].revents)
				continue;
			ssize_t got = read(pfd[i].fd, &who[i]->inbox,
				sizeof(who[i]->inbox));
			if (got == (ssize_t)sizeof(who[i]->inbox))
				who[i]->has_msg = true;
			else
				gone_worker(who[i]);
		}
	}
}

/* move_fd -- dup `fd` to `to` with close-on-exec cleared */
static void
move_fd(int fd, int to)
{
	if (dup2(fd, to) < 0)
		_exit(126);
}

/* sup_spawn -- start c's worker process */
int
sup_spawn(struct soak *s, struct client *c)
{
	int cmd[2], msg[2];
	if (pipe2(cmd, O_CLOEXEC))
		return -errno;
	if (pipe2(msg, O_CLOEXEC)) {
		int e = errno;
		close(cmd[0]);
		close(cmd[1]);
		return -e;
	}
	/* the worker's RPMEM_CMD names its log after it: "@W@" -> id */
	char rcmd[8192], id[16];
	snprintf(id, sizeof(id), "%u", c->id);
	size_t o = 0;
	for (const char *p = s->rpmemd_cmd; *p && o + 16 < sizeof(rcmd);) {
		if (strncmp(p, "@W@", 3) == 0) {
			o += (size_t)snprintf(rcmd + o, sizeof(rcmd) - o, "%s",
				id);
			p += 3;
		} else {
			rcmd[o++] = *p++;
		}
	}
	rcmd[o] = '\0';
	char size[32], lanes[16], seed[32], think[16];
	snprintf(size, sizeof(size), "%zu", s->pool_size);
	snprintf(lanes, sizeof(lanes), "%u", s->lanes);
	snprintf(seed, sizeof(seed), "%llu",
		(unsigned long long)tu_rnd(&s->rng));
	snprintf(think, sizeof(think), "%u", s->think_us);
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(cmd[0]);
		close(cmd[1]);
		close(msg[0]);
		close(msg[1]);
		return -e;
	}
	if (pid == 0) {
		/* above 4 first, so neither dup2 clobbers the other end */
		int in = fcntl(cmd[0], F_DUPFD_CLOEXEC, 10);
		int out = fcntl(msg[1], F_DUPFD_CLOEXEC, 10);
		if (in < 0 || out < 0)
			_exit(126);
		move_fd(in, 3);
		move_fd(out, 4);
		setenv("RPMEM_CMD", rcmd, 1);
		setenv("SOAK_WORKER", id, 1);
		char *argv[] = { s->self, (char *)"--worker", id, c->state_path,
			size, (char *)s->target, c->desc, lanes, seed, think,
			NULL };
		execv(s->self, argv);
		_exit(127);
	}
	close(cmd[0]);
	close(msg[1]);
	c->cmd_fd = cmd[1];
	c->msg_fd = msg[0];
	c->pid = pid;
	c->fds_base = -1;
	c->ready = false;
	c->has_msg = false;
	return 0;
}

/* reap_any -- collect exited children: workers and orphaned ssh */
static void
reap_any(struct soak *s)
{
	pid_t pid;
	int status;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (unsigned i = 0; i < s->nclients; i++) {
			struct client *c = &s->clients[i];
			if (c->pid != pid)
				continue;
			c->pid = 0;
			if (!WIFEXITED(status) || WEXITSTATUS(status)) {
				if (!WIFSIGNALED(status) ||
						WTERMSIG(status) != SIGKILL)
					sup_log(s, "worker %u ended with "
						"status %#x", c->id, status);
			}
		}
	}
}

/* sup_reap -- collect exited children; true once c's worker is gone */
bool
sup_reap(struct soak *s, struct client *c, int ms)
{
	if (c->pid && !tu_pidfd_wait(c->pid, ms))
		return false;
	reap_any(s);
	if (c->pid)
		return false;
	gone_worker(c);
	return true;
}

/* sup_rpmemd -- the pid of c's one running rpmemd, 0 if none */
pid_t
sup_rpmemd(struct soak *s, struct client *c)
{
	pid_t pids[256], found = 0;
	unsigned n = soak_rpmemd_pids(s->log_dir, (int)c->id, pids, 256);
	for (unsigned i = 0; i < n; i++)
		found = pids[i];
	return found;
}

/* sup_gone -- wait until no rpmemd of c runs; counts and ends leaks */
bool
sup_gone(struct soak *s, struct client *c, int ms)
{
	long long deadline = tu_now_ms() + ms;
	pid_t pids[256];
	bool ok = true;
	unsigned n = soak_rpmemd_pids(s->log_dir, (int)c->id, pids, 256);
	for (unsigned i = 0; i < n; i++) {
		long long left = deadline - tu_now_ms();
		if (tu_pidfd_wait(pids[i], left > 0 ? (int)left : 0))
			continue;
		/* still there: argv names our log dir, so it is ours */
		sup_log(s, "LEAK: rpmemd %d of worker %u still runs %d ms "
			"after its session ended", (int)pids[i], c->id, ms);
		s->fig.leaked_rpmemd++;
		ok = false;
		kill(pids[i], SIGCONT);
		kill(pids[i], SIGKILL);
		(void) tu_pidfd_wait(pids[i], 5000);
	}
	return ok;
}

/* sup_check -- the oracle on c's replica; false on any loss */
bool
sup_check(struct soak *s, struct client *c, const char *why)
{
	struct soak_verdict v;
	char found[512];
	int r = soak_oracle_check(&c->st, c->part, &v, found, sizeof(found));
	s->fig.checks++;
	s->fig.lost += v.lost;
	s->fig.torn += v.torn;
	s->fig.corrupt += v.corrupt;
	s->fig.inflight += v.inflight;
	if (r) {
		sup_log(s, "ORACLE: worker %u after %s: %s", c->id, why,
			found);
		s->fig.unexpected++;
		return false;
	}
	if (v.lost || v.torn || v.corrupt) {
		sup_log(s, "ORACLE: worker %u after %s: %llu lost, %llu torn, "
			"%llu corrupt: %s", c->id, why,
			(unsigned long long)v.lost, (unsigned long long)v.torn,
			(unsigned long long)v.corrupt, found);
		return false;
	}
	return true;
}

/* note_fds -- a report after a close: the worker's descriptors are back */
static void
note_fds(struct soak *s, struct client *c, const struct soak_msg *m)
{
	if (c->fds_base < 0) {
		c->fds_base = (int)m->fds;
		return;
	}
	if ((int)m->fds > c->fds_base) {
		sup_log(s, "LEAK: worker %u holds %u descriptors after a "
			"close, %d after its first", c->id, m->fds,
			c->fds_base);
		s->fig.leaked_fds += m->fds - (unsigned)c->fds_base;
		c->fds_base = (int)m->fds;
	}
}

/*
 * sup_open_failed -- count and log a CREATE or OPEN that did not end
 * READY.  A login that outlasted RPMEM_TIMEOUT before rpmemd's start-up
 * status (the machine busy, ssh slow) touched no pool: it is a slow
 * start, retried like any failure, and the soak fails only when the
 * client cannot be brought back at all (it is then lost, unverified).
 */
void
sup_open_failed(struct soak *s, struct client *c, const char *why,
		const struct soak_msg *m)
{
	const char *after = why ? " after " : "";
	why = why ? why : "";
	if (m && m->type == SOAK_MSG_OPEN_FAILED && m->err == ETIMEDOUT &&
			strstr(m->text, "starting rpmemd: no answer")) {
		s->fig.slow_starts++;
		sup_log(s, "slow start: worker %u%s%s: %s", c->id, after, why,
			m->text);
		return;
	}
	s->fig.open_failed++;
	sup_log(s, "OPEN FAILED: worker %u%s%s: %s", c->id, after, why,
		!m ? "no answer" : m->type == SOAK_MSG_OPEN_FAILED ? m->text :
		m->type == SOAK_MSG_READY ? "fewer lanes than asked" :
		"unexpected report");
}

/* sup_open -- CREATE or OPEN until READY; false once it gave up */
bool
sup_open(struct soak *s, struct client *c, enum soak_cmd cmd)
{
	for (int t = 0; t < OPEN_TRIES; t++) {
		struct soak_msg m;
		int r = sup_send(c, cmd);
		if (!r)
			r = sup_wait(s, c, &m, 3 * s->timeout_ms + 10000);
		if (!r && m.type == SOAK_MSG_READY) {
			c->ready = true;
			c->nlanes = m.nlanes;
			return true;
		}
		sup_open_failed(s, c, NULL, r ? NULL : &m);
		if (r)
			break;
		/* let a session that still holds the pool end first */
		sup_gone(s, c, GONE_MS);
	}
	c->lost = true;
	return false;
}

/* sup_close -- a clean CLOSE; false (and counted) if it was not */
bool
sup_close(struct soak *s, struct client *c)
{
	struct soak_msg m;
	int r = sup_send(c, SOAK_CMD_CLOSE);
	if (!r)
		r = sup_wait(s, c, &m, sup_bound_ms(s));
	c->ready = false;
	if (!r && m.type == SOAK_MSG_CLOSED && m.err == 0) {
		note_fds(s, c, &m);
		return true;
	}
	s->fig.unexpected++;
	sup_log(s, "UNEXPECTED: closing worker %u: %s", c->id,
		r ? strerror(-r) : m.text[0] ? m.text : strerror(m.err));
	return false;
}

/*
 * sup_broken -- wait for c's report of the error a fault at t_fault
 * caused; its latency goes into the figures
 */
bool
sup_broken(struct soak *s, struct client *c, long long t_fault,
		const char *fault)
{
	struct soak_msg m;
	int r = sup_wait(s, c, &m, sup_bound_ms(s));
	c->ready = false;
	if (r == -ETIMEDOUT) {
		s->fig.hangs++;
		sup_log(s, "HANG: worker %u reported no error %d ms after "
			"%s", c->id, sup_bound_ms(s), fault);
		return false;
	}
	if (r || m.type != SOAK_MSG_BROKEN) {
		s->fig.unexpected++;
		sup_log(s, "UNEXPECTED: worker %u after %s: %s", c->id, fault,
			r ? strerror(-r) : "a report other than an error");
		return false;
	}
	note_fds(s, c, &m);
	long long dt = m.t_ms - t_fault;
	if (dt > s->fig.err_max_ms)
		s->fig.err_max_ms = dt;
	/* librpmem(7): at most RPMEM_TIMEOUT after the peer went quiet */
	if (dt > s->timeout_ms + LATE_MS) {
		s->fig.hangs++;
		sup_log(s, "LATE: worker %u noticed %s after %lld ms", c->id,
			fault, dt);
	}
	bool ok = (m.err == ECONNRESET || m.err == ETIMEDOUT) && dt >= 0;
	if (!ok)
		s->fig.unexpected++;
	sup_log(s, "%s%s worker %u: %s after %lld ms (%s)", ok ? "" :
		"UNEXPECTED: ", fault, c->id, strerrorname_np(m.err), dt,
		m.text);
	return ok;
}

/*
 * sup_open_all -- CREATE or OPEN on every client, LOGIN_WINDOW logins at a
 * time (32 at once would only queue for the CPU), then until READY one by
 * one; returns how many are ready
 */
unsigned
sup_open_all(struct soak *s, struct client **cs, unsigned n,
		enum soak_cmd cmd, const char *why)
{
	bool sent[SOAK_MAX_CLIENTS] = { false };
	unsigned ready = 0, next = 0;
	for (unsigned i = 0; i < n; i++) {
		for (; next < n && next < i + LOGIN_WINDOW; next++)
			sent[next] = !cs[next]->lost &&
				sup_send(cs[next], cmd) == 0;
		struct client *c = cs[i];
		struct soak_msg m;
		if (!sent[i] || sup_wait(s, c, &m, 3 * s->timeout_ms + 10000))
			m.type = 0;
		if (m.type == SOAK_MSG_READY) {
			c->ready = true;
			c->nlanes = m.nlanes;
			ready++;
			continue;
		}
		sup_open_failed(s, c, why, m.type ? &m : NULL);
		sup_gone(s, c, GONE_MS);
		if (!c->lost && sup_open(s, c, cmd))
			ready++;
	}
	return ready;
}

/*
 * sup_recover -- after broken sessions: each rpmemd gone, the oracle,
 * then every client reopened at once
 */
void
sup_recover(struct soak *s, struct client **cs, unsigned n,
		const char *fault)
{
	for (unsigned i = 0; i < n; i++) {
		struct client *c = cs[i];
		sup_gone(s, c, GONE_MS);
		sup_check(s, c, fault);
		if (!c->pid && !c->lost && sup_spawn(s, c)) {
			sup_log(s, "cannot start worker %u again", c->id);
			c->lost = true;
		}
	}
	s->fig.reopens += sup_open_all(s, cs, n, SOAK_CMD_OPEN, fault);
}
