/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shspawn.h -- handlers: a command run through /bin/sh with what it needs
 * in its environment (librpmem's fence-peer and unfence-peer handlers,
 * rpmemd's after-resync handler)
 */
#ifndef RPMEM_SHSPAWN_H
#define RPMEM_SHSPAWN_H 1

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * spawn_env -- this process's environment without the variables whose
 * names begin with `prefix`, and the n name/value pairs of `vals` first;
 * NULL when out of memory.  Free with spawn_env_free.
 */
char **spawn_env(const char *const vals[][2], size_t n, const char *prefix);

/* spawn_env_free -- free what spawn_env made */
void spawn_env_free(char **env);

/*
 * spawn_sh -- start `/bin/sh -c cmd` with `env`, standard input from
 * /dev/null; its standard output to our standard error when `out` is
 * NULL, else it and its standard error appended to the file `out` (or
 * /dev/null when that cannot be opened); with `own_session` in a session
 * of its own, so that the hang-up of ours does not reach it.  0 and *pid,
 * or an errno value.
 */
int spawn_sh(const char *cmd, char *const env[], const char *out,
		bool own_session, pid_t *pid);

#endif /* RPMEM_SHSPAWN_H */
