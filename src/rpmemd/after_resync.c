/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * after_resync.c -- rpmemd's after-resync handler: the node a resync went
 * into learns it at once, from the one process that wrote it (DRBD's
 * after-resync-target).  A cluster's handler lifts a fence the replica
 * has now outlived (crm-unfence-peer), so that a master lost between the
 * end of its resync and its own unfence-peer handler leaves a copy that
 * can be promoted without waiting for a monitor.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "after_resync.h"
#include "log.h"
#include "shspawn.h"

/* reap -- wait for the handler (a detached thread) and log how it ended */
static void *
reap(void *arg)
{
	pid_t pid = (pid_t)(intptr_t)arg;
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			log_err("after-resync handler %d: %s", (int)pid,
				strerror(errno));
			return NULL;
		}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		log_notice("after-resync handler %d: done", (int)pid);
	else if (WIFEXITED(status))
		log_err("after-resync handler %d exited %d", (int)pid,
			WEXITSTATUS(status));
	else
		log_err("after-resync handler %d killed by signal %d",
			(int)pid, WTERMSIG(status));
	return NULL;
}

/* after_resync -- start the handler, as after_resync.h says */
int
after_resync(const char *cmd, const char *set, const struct gen *g,
		const char *log)
{
	char cur[GEN_STR] = "";
	char hist[GEN_HISTORY * GEN_STR] = "";
	gen_str(g->current, cur);
	size_t n = 0;
	for (unsigned i = 0; i < GEN_HISTORY && g->history[i]; i++) {
		char h[GEN_STR];
		gen_str(g->history[i], h);
		n += (size_t)snprintf(hist + n, sizeof(hist) - n, "%s%s",
			i ? "," : "", h);
	}
	const char *const vals[][2] = {
		{ "RPMEMD_POOL_SET", set },
		{ "RPMEMD_GENERATION", cur },
		{ "RPMEMD_HISTORY", hist },
	};
	char **env = spawn_env(vals, sizeof(vals) / sizeof(vals[0]),
		"RPMEMD_");
	if (!env)
		return -ENOMEM;
	pid_t pid;
	int r = spawn_sh(cmd, env, log, true, &pid);
	spawn_env_free(env);
	if (r) {
		log_err("after-resync handler '%s' did not start: %s", cmd,
			strerror(r));
		return -r;
	}
	log_notice("after-resync handler %d started: %s", (int)pid, cmd);
	pthread_t t;
	pthread_attr_t at;
	r = pthread_attr_init(&at);
	if (!r) {
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		r = pthread_create(&t, &at, reap, (void *)(intptr_t)pid);
		pthread_attr_destroy(&at);
	}
	if (r)	/* left for init to reap once rpmemd ends */
		log_warn("after-resync handler %d not watched: %s", (int)pid,
			strerror(r));
	return 0;
}
