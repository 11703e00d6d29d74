/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replconf.h -- a replica's replication settings: sync or async, and an
 * async replica's lag bounds and congestion policy (doc/async.md)
 *
 * In order of precedence: the section of the client configuration file
 * whose target and poolset keys name the replica, RPMEM_REPLICATION,
 * the file's [default] section, the built-in defaults.  The file is
 * RPMEM_CONF when set (then it must exist), else the first of
 * $XDG_CONFIG_HOME/rpmem/librpmem.conf (~/.config when unset) and
 * /etc/rpmem/librpmem.conf that exists.  It is checked line by line
 * (conffile.h) and read with iniparser.
 */
#ifndef RPMEM_REPLCONF_H
#define RPMEM_REPLCONF_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum replconf_mode {
	REPLCONF_SYNC,		/* a persist returns once the replica holds it */
	REPLCONF_ASYNC,		/* once it is in the handle's send log */
};

/* what an async replica does when a lag bound would be passed */
enum replconf_congestion {
	REPLCONF_BLOCK,		/* persists wait for room */
	REPLCONF_PULL_AHEAD,	/* stop shipping, record, resync later */
};

#define REPLCONF_LAG_BYTES_DEFAULT (64ULL << 20)
#define REPLCONF_LAG_BYTES_MIN (1ULL << 20)
#define REPLCONF_LAG_BYTES_MAX (16ULL << 30)
#define REPLCONF_LAG_MS_DEFAULT 2000U
#define REPLCONF_LAG_MS_MIN 10U
#define REPLCONF_LAG_MS_MAX 3600000U
#define REPLCONF_FROM_MAX 160

struct replconf {
	enum replconf_mode mode;
	uint64_t lag_bytes;	/* the send log's size */
	unsigned lag_ms;	/* the oldest record's age, at most */
	enum replconf_congestion congestion;
	char from[REPLCONF_FROM_MAX];	/* where the mode came from */
};

/*
 * replconf_get -- the settings of the replica `poolset` on `target`,
 * from the environment and the file it names or the usual places; 0,
 * or -errno with the reason (naming the file and line) in err
 */
int replconf_get(const char *target, const char *poolset,
		struct replconf *c, char *err, size_t errlen);

/*
 * replconf_load -- the same from the file `path` (NULL: none;
 * `required`: a missing one is an error) and `env`, the value of
 * RPMEM_REPLICATION (NULL: unset)
 */
int replconf_load(const char *path, bool required, const char *env,
		const char *target, const char *poolset, struct replconf *c,
		char *err, size_t errlen);

/* replconf_mode_name -- "sync", "async" */
const char *replconf_mode_name(enum replconf_mode mode);

/* replconf_congestion_name -- "block", "pull-ahead" */
const char *replconf_congestion_name(enum replconf_congestion c);

#endif /* RPMEM_REPLCONF_H */
