/* SPDX-License-Identifier: BSD-3-Clause */
/* shspawn.c -- handlers run through /bin/sh (shspawn.h) */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shspawn.h"

extern char **environ;

/* spawn_env -- our environment, `prefix` dropped, `vals` first */
char **
spawn_env(const char *const vals[][2], size_t n, const char *prefix)
{
	size_t m = 0;
	while (environ && environ[m])
		m++;
	char **env = calloc(n + m + 1, sizeof(*env));
	if (!env)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (asprintf(&env[k++], "%s=%s", vals[i][0], vals[i][1]) < 0) {
			env[--k] = NULL;
			goto oom;
		}
	size_t plen = strlen(prefix);
	for (size_t i = 0; i < m; i++) {
		if (plen && strncmp(environ[i], prefix, plen) == 0)
			continue;
		if (!(env[k] = strdup(environ[i])))
			goto oom;
		k++;
	}
	return env;
oom:
	spawn_env_free(env);
	return NULL;
}

/* spawn_env_free -- free what spawn_env made */
void
spawn_env_free(char **env)
{
	for (size_t i = 0; env[i]; i++)
		free(env[i]);
	free(env);
}

/* spawn_sh -- /bin/sh -c cmd, as shspawn.h says */
int
spawn_sh(const char *cmd, char *const env[], const char *out,
		bool own_session, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	int r = posix_spawn_file_actions_init(&fa);
	if (r)
		return r;
	r = posix_spawnattr_init(&at);
	if (r) {
		posix_spawn_file_actions_destroy(&fa);
		return r;
	}
	r = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY,
		0);
	if (!r && !out)
		r = posix_spawn_file_actions_adddup2(&fa, 2, 1);
	if (!r && out) {
		/* a log file that cannot be opened: the output goes */
		int fd = open(out, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
			0600);
		if (fd >= 0)
			close(fd);
		r = posix_spawn_file_actions_addopen(&fa, 1, fd >= 0 ? out :
			"/dev/null", O_WRONLY | O_APPEND, 0);
		if (!r)
			r = posix_spawn_file_actions_adddup2(&fa, 1, 2);
	}
	/* the handler starts with default signals, none blocked */
	sigset_t none, all;
	sigemptyset(&none);
	sigfillset(&all);
	short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
	if (own_session)
		flags |= POSIX_SPAWN_SETSID;
	if (!r)
		r = posix_spawnattr_setflags(&at, flags);
	if (!r)
		r = posix_spawnattr_setsigmask(&at, &none);
	if (!r)
		r = posix_spawnattr_setsigdefault(&at, &all);
	char *argv[] = { "sh", "-c", (char *)cmd, NULL };
	if (!r)
		r = posix_spawn(pid, "/bin/sh", &fa, &at, argv, env);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	return r;
}
