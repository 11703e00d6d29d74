/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tu_proc.c -- processes, threads and descriptors seen through /proc;
 * a process is always named by its pid, never found by its name
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tu.h"

/* tu_slurp -- up to len - 1 bytes of a small file, NUL-terminated */
ssize_t
tu_slurp(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* stat_state -- state letter and parent from a stat file (0: gone) */
static char
stat_state(const char *path, pid_t *ppid)
{
	char buf[512];
	if (tu_slurp(path, buf, sizeof(buf)) <= 0)
		return 0;
	char *p = strrchr(buf, ')');
	char st;
	int pp;
	if (!p || sscanf(p + 1, " %c %d", &st, &pp) != 2)
		return 0;
	if (ppid)
		*ppid = pp;
	return st;
}

/* tu_proc_state -- state letter of a process (0: gone) and its parent */
char
tu_proc_state(pid_t pid, pid_t *ppid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	return stat_state(path, ppid);
}

/* tu_proc_live -- pid exists and is no zombie */
bool
tu_proc_live(pid_t pid)
{
	char st = tu_proc_state(pid, NULL);
	return st != 0 && st != 'Z' && st != 'X';
}

/* tu_proc_argv_has -- argv of pid, NULs read as spaces, has `needle` */
bool
tu_proc_argv_has(pid_t pid, const char *needle)
{
	char path[64], cmd[4096];
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	ssize_t n = tu_slurp(path, cmd, sizeof(cmd));
	if (n <= 0)
		return false;
	for (ssize_t i = 0; i < n; i++)
		if (cmd[i] == '\0')
			cmd[i] = ' ';
	return strstr(cmd, needle) != NULL;
}

/* tu_dir_each -- walk the entries of a directory (tu.h) */
int
tu_dir_each(const char *dir, bool (*fn)(const char *path, void *arg),
	void *arg)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int ret = 0;
	struct dirent *de;
	while (!ret && (de = readdir(d)) != NULL) {
		char path[600];
		if (de->d_name[0] != '.' && snprintf(path, sizeof(path),
				"%s/%s", dir, de->d_name) < (int)sizeof(path))
			ret = fn(path, arg);
	}
	closedir(d);
	return ret;
}

/* what tu_proc_stopped found of a process's threads */
struct threads {
	unsigned n;		/* seen */
	bool stopped;		/* each of them */
};

/* thread_seen -- count a thread (its /proc directory `task`); go on */
static bool
thread_seen(const char *task, void *arg)
{
	struct threads *t = arg;
	char path[700];
	snprintf(path, sizeof(path), "%s/stat", task);
	char st = stat_state(path, NULL);
	if (st != 0) {
		t->n++;
		t->stopped = t->stopped && (st == 'T' || st == 't');
	}
	return false;
}

/* tu_proc_stopped -- every thread of pid is stopped */
bool
tu_proc_stopped(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	struct threads t = { 0, true };
	if (tu_dir_each(path, thread_seen, &t) < 0)
		return false;
	return t.stopped && t.n > 0;
}

/* counted -- count an entry; go on */
static bool
counted(const char *path, void *arg)
{
	(void)path;
	++*(int *)arg;
	return false;
}

/* tu_dir_entries -- entries of a (/proc) directory (-1: gone) */
int
tu_dir_entries(const char *path)
{
	int n = 0;
	return tu_dir_each(path, counted, &n) < 0 ? -1 : n;
}

/* tu_proc_fds -- open descriptors of a process (-1: gone) */
int
tu_proc_fds(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	return tu_dir_entries(path);
}

/* tu_pidfd_wait -- wait for any process to exit; false after `ms` */
bool
tu_pidfd_wait(pid_t pid, int ms)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0)
		return errno == ESRCH;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	long long deadline = tu_now_ms() + ms;
	int r;
	do {
		long long left = deadline - tu_now_ms();
		r = poll(&p, 1, left > 0 ? (int)left : 0);
	} while (r < 0 && errno == EINTR);
	close(fd);
	return r > 0;
}
