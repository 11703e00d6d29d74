/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * session_fence.c -- the rpmemd sessions holding a pool, found through
 * /proc, and their end (rpmem promote's fence of the old sessions)
 *
 * No record of its own: the part locks rpmemd already takes are the
 * truth about who serves a pool, and they vanish with the process, so
 * nothing stale is ever reported.  A session is ended with SIGKILL: a
 * fence must be certain, and an rpmemd given time to finish could still
 * apply what the old primary sends.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "session_fence.h"

#define SESSION_FENCE_WAIT_MS 10000	/* for the killed session to be gone */

/* holder_add -- pid once in h[], up to SESSION_HOLDERS_MAX */
static void
holder_add(struct session_holder *h, unsigned *n, pid_t pid)
{
	for (unsigned i = 0; i < *n; i++) {
		if (h[i].pid == pid)
			return;
	}
	if (*n < SESSION_HOLDERS_MAX) {
		memset(&h[*n], 0, sizeof(h[*n]));
		h[(*n)++].pid = pid;
	}
}

/* boot_time -- btime of /proc/stat, 0 when unknown */
static int64_t
boot_time(void)
{
	FILE *f = fopen("/proc/stat", "re");
	char line[256];
	long long bt = 0;
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "btime %lld", &bt) == 1)
			break;
	}
	if (f)
		fclose(f);
	return bt;
}

/* holder_since -- start time from field 22 of /proc/PID/stat */
static int64_t
holder_since(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "re");
	if (f == NULL)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')');	/* comm may hold blanks */
	unsigned long long start = 0;
	if (p == NULL || sscanf(p + 2, "%*c %*s %*s %*s %*s %*s %*s %*s %*s "
			"%*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu",
			&start) != 1)
		return 0;
	long hz = sysconf(_SC_CLK_TCK);
	int64_t bt = boot_time();
	return hz > 0 && bt ? bt + (int64_t)(start / (unsigned long long)hz) :
		0;
}

/* holder_client -- "ADDR port PORT" of the holder's SSH_CONNECTION */
static void
holder_client(struct session_holder *h)
{
	char path[64], buf[16384];
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)h->pid);
	FILE *f = fopen(path, "re");
	if (f == NULL)
		return;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	for (size_t i = 0; i < n; i += strlen(buf + i) + 1) {
		char addr[64];
		unsigned port;
		if (strncmp(buf + i, "SSH_CONNECTION=", 15) == 0 &&
				sscanf(buf + i + 15, "%63s %u", addr,
					&port) == 2) {
			snprintf(h->client, sizeof(h->client),
				"%s port %u", addr, port);
			return;
		}
	}
}

/* holder_fill -- what the holder is, as far as /proc tells */
static void
holder_fill(struct session_holder *h)
{
	char path[64], exe[PATH_MAX];
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)h->pid);
	ssize_t n = readlink(path, exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		char *del = strstr(exe, " (deleted)");
		if (del)
			*del = '\0';
		const char *base = strrchr(exe, '/');
		snprintf(h->exe, sizeof(h->exe), "%.63s",
			base ? base + 1 : exe);
		h->is_rpmemd = strcmp(h->exe, "rpmemd") == 0;
	} else {
		snprintf(h->exe, sizeof(h->exe), "process");
	}
	h->since = holder_since(h->pid);
	holder_client(h);
}

/* session_fence_find -- holders of a lock on any part of rep */
int
session_fence_find(const struct poolset_replica *rep,
		struct session_holder *h, unsigned *n)
{
	*n = 0;
	FILE *f = fopen("/proc/locks", "re");
	if (f == NULL)
		return -errno;

	char line[256];
	while (fgets(line, sizeof(line), f)) {
		int pid;
		unsigned maj, min;
		unsigned long long ino;
		/* "1: FLOCK  ADVISORY  WRITE 123 fd:01:456 0 EOF"; waiters
		 * ("1: -> FLOCK ...") hold nothing */
		if (strstr(line, "->") || sscanf(line, "%*s %*s %*s %*s %d "
				"%x:%x:%llu", &pid, &maj, &min, &ino) != 4)
			continue;
		if (pid == getpid())
			continue;
		for (unsigned p = 0; p < rep->nparts; p++) {
			struct stat st;
			if (stat(rep->parts[p].path, &st) == 0 &&
					major(st.st_dev) == maj &&
					minor(st.st_dev) == min &&
					st.st_ino == ino)
				holder_add(h, n, (pid_t)pid);
		}
	}
	fclose(f);
	for (unsigned i = 0; i < *n; i++)
		holder_fill(&h[i]);
	return 0;
}

/* session_fence_describe -- one line naming the holder */
void
session_fence_describe(const struct session_holder *h, char *buf,
		size_t len)
{
	char since[40] = "an unknown time";
	time_t t = (time_t)h->since;
	struct tm tm;
	if (h->since && gmtime_r(&t, &tm))
		strftime(since, sizeof(since), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(buf, len, "%s pid %d, client %s, since %s", h->exe,
		(int)h->pid, h->client[0] ? h->client :
		"unknown (no SSH_CONNECTION)", since);
}

/* wait_gone -- poll the pidfd until the process has exited */
static int
wait_gone(int pidfd)
{
	struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
	int r;
	do {
		r = poll(&pfd, 1, SESSION_FENCE_WAIT_MS);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return r == 0 ? -ETIMEDOUT : 0;
}

/* session_fence_end -- SIGKILL an rpmemd holder and wait until it is gone */
int
session_fence_end(const struct session_holder *h)
{
	if (!h->is_rpmemd)
		return -EPERM;
	int pidfd = (int)syscall(SYS_pidfd_open, h->pid, 0);
	if (pidfd < 0)
		return errno == ESRCH ? 0 : -errno;
	/* the pidfd pins a process: make sure it is still the rpmemd */
	struct session_holder now = { .pid = h->pid };
	holder_fill(&now);
	if (!now.is_rpmemd || now.since != h->since) {
		close(pidfd);
		return -ESRCH;
	}
	int ret = 0;
	if (syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0) &&
			errno != ESRCH)
		ret = -errno;
	if (!ret)
		ret = wait_gone(pidfd);
	close(pidfd);
	return ret;
}
