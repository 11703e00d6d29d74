/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * soak_proc.c -- the processes a soak started, found through /proc from
 * known parents and through the log files named after their pids; never
 * by a process name
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "soak.h"

#define TREE_MAX 4096

/* soak_proc_alive -- pid exists, is no zombie, argv contains `needle` */
bool
soak_proc_alive(pid_t pid, const char *needle)
{
	return tu_proc_live(pid) && tu_proc_argv_has(pid, needle);
}

/* children -- append the children of every thread of pid to out[] */
static unsigned
children(pid_t pid, pid_t *out, unsigned n, unsigned max)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return n;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		char cpath[600], buf[4096];
		snprintf(cpath, sizeof(cpath), "%s/%s/children", path,
			de->d_name);
		if (tu_slurp(cpath, buf, sizeof(buf)) <= 0)
			continue;
		char *p = buf, *end;
		long c;
		while (n < max && (c = strtol(p, &end, 10)) > 0) {
			out[n++] = (pid_t)c;
			p = end;
		}
	}
	closedir(d);
	return n;
}

/* tree -- root and all its descendants, breadth first */
static unsigned
tree(pid_t root, pid_t *out, unsigned max)
{
	unsigned n = 0;
	out[n++] = root;
	for (unsigned i = 0; i < n; i++)
		n = children(out[i], out, n, max);
	return n;
}

/* soak_proc_find -- a descendant of `root` whose executable is `exe` */
pid_t
soak_proc_find(pid_t root, const char *exe)
{
	static pid_t all[TREE_MAX];
	unsigned n = tree(root, all, TREE_MAX);
	for (unsigned i = 1; i < n; i++) {
		char path[64], target[4096];
		snprintf(path, sizeof(path), "/proc/%d/exe", (int)all[i]);
		ssize_t m = readlink(path, target, sizeof(target) - 1);
		if (m <= 0)
			continue;
		target[m] = '\0';
		if (strcmp(target, exe) == 0)
			return all[i];
	}
	return 0;
}

/* soak_tree_count -- processes and descriptors of root and descendants */
void
soak_tree_count(pid_t root, unsigned *procs, unsigned *fds)
{
	static pid_t all[TREE_MAX];
	unsigned n = tree(root, all, TREE_MAX);
	*procs = 0;
	*fds = 0;
	for (unsigned i = 0; i < n; i++) {
		int f = tu_proc_fds(all[i]);
		if (f < 0)
			continue;
		(*procs)++;
		*fds += (unsigned)f;
	}
}

/* soak_proc_mem -- peak RSS and current private RSS of a process, KiB */
int
soak_proc_mem(pid_t pid, unsigned long *hwm_kib, unsigned long *anon_kib)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (tu_slurp(path, buf, sizeof(buf)) <= 0)
		return -1;
	const char *h = strstr(buf, "\nVmHWM:");
	const char *a = strstr(buf, "\nRssAnon:");
	if (!h || !a)
		return -1;
	*hwm_kib = strtoul(h + 7, NULL, 10);
	*anon_kib = strtoul(a + 9, NULL, 10);
	return 0;
}

/* log_name -- parse "rpmemd.w<id>.<pid>.<ns>.log" */
static bool
log_name(const char *name, int *id, pid_t *pid, unsigned long long *ns)
{
	int w, p, used = 0;
	if (sscanf(name, "rpmemd.w%d.%d.%llu.log%n", &w, &p, ns, &used) != 3 ||
			name[used] != '\0')
		return false;
	*id = w;
	*pid = (pid_t)p;
	return true;
}

/*
 * soak_rpmemd_pids -- running rpmemds of the logs "rpmemd.w<id>.<pid>.*.log"
 * in `logdir` (id < 0: any worker); returns how many were stored.  A pid
 * counts only while its argv names that very log file: over a long run
 * pids wrap, and an old log's pid may be another worker's rpmemd now.
 */
unsigned
soak_rpmemd_pids(const char *logdir, int id, pid_t *pids, unsigned max)
{
	DIR *d = opendir(logdir);
	if (!d)
		return 0;
	unsigned n = 0;
	struct dirent *de;
	while (n < max && (de = readdir(d)) != NULL) {
		int w;
		pid_t p;
		unsigned long long ns;
		char path[PATH_MAX];
		if (!log_name(de->d_name, &w, &p, &ns) || (id >= 0 && w != id))
			continue;
		snprintf(path, sizeof(path), "%s/%s", logdir, de->d_name);
		if (soak_proc_alive(p, path))
			pids[n++] = p;
	}
	closedir(d);
	return n;
}

/* soak_log_find -- the newest log of worker id, into path; false: none */
bool
soak_log_find(const char *logdir, int id, const char *after, char *path,
		size_t len)
{
	DIR *d = opendir(logdir);
	if (!d)
		return false;
	unsigned long long best = 0;
	char name[256] = "";
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		int w;
		pid_t p;
		unsigned long long ns;
		if (log_name(de->d_name, &w, &p, &ns) && w == id && ns > best) {
			best = ns;
			snprintf(name, sizeof(name), "%s", de->d_name);
		}
	}
	closedir(d);
	if (!name[0])
		return false;
	snprintf(path, len, "%s/%s", logdir, name);
	return !after || strcmp(path, after) != 0;
}
