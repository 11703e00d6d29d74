/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * target.h -- parser of `[user@]host[:port]` replica targets
 */
#ifndef RPMEM_TARGET_H
#define RPMEM_TARGET_H 1

#include <netdb.h>

#define TARGET_USER_MAX 33		/* incl. NUL */
#define TARGET_NODE_MAX 256		/* incl. NUL */
#define TARGET_SERVICE_MAX (NI_MAXSERV + 1)

struct target {
	char user[TARGET_USER_MAX];		/* "" when absent */
	char node[TARGET_NODE_MAX];		/* never empty, brackets removed */
	char service[TARGET_SERVICE_MAX];	/* "" when absent, else 1..65535 */
};

/*
 * target_parse -- split `str` into user, node and ssh port.
 *
 * `user@host`, `host:22`, `user@[::1]:22`, bare IPv6 `::1` (two or more
 * colons and no brackets: all host).  Refused with -EINVAL: empty host,
 * a user or host starting with '-' (ssh option injection), whitespace or
 * control characters, a second '@', missing ']', a port that is not a
 * decimal 1..65535, fields longer than their limits.
 */
int target_parse(const char *str, struct target *t);

#endif /* RPMEM_TARGET_H */
