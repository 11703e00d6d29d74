/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_outdate.c -- rpmem outdate and rpmem fence-peer: mark a replica
 * whose master went on without it (scenarios D5, D6)
 *
 * `rpmem outdate SET` writes SET.outdated beside a local pool set file
 * (marker.h), for operators and handlers; `--clear` removes it.
 * `rpmem fence-peer` is the fence-peer command librpmem runs when the
 * master goes on without a replica: it has rpmemd on the replica's host
 * mark the replica (rpmem_outdate_remote) and says by its exit status
 * whether the replica is marked, so that the master may go on (0) or
 * must not (1).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "librpmem.h"
#include "marker.h"
#include "poolset.h"
#include "rpmem_tool.h"
#include "tools.h"

#define FENCE_PEER_FAILED 1	/* the replica may not be marked */

static const struct cli_opt outdate_opts[] = {
	{ "clear", 0, NULL, "remove the mark (the replica equals its "
		"master again)" },
	{ "master", 0, "HOST", "the master's host name (default: this "
		"host's)" },
	CLI_OPT_END,
};

static int outdate_run(const struct cli_args *a);

const struct cli_cmd cmd_outdate = {
	.name = "outdate",
	.operands = "POOLSET",
	.nmin = 1, .nmax = 1,
	.summary = "mark a local replica outdated (its master went on "
		"without it)",
	.opts = outdate_opts,
	.run = outdate_run,
};

static const struct cli_opt fence_peer_opts[] = {
	{ "target", 0, "TARGET", "the replica's [user@]host[:port] "
		"(default: $RPMEM_FENCE_TARGET)" },
	{ "pool-set", 0, "SET", "its pool set name (default: "
		"$RPMEM_FENCE_POOL_SET)" },
	CLI_OPT_END,
};

static int fence_peer_run(const struct cli_args *a);

const struct cli_cmd cmd_fence_peer = {
	.name = "fence-peer",
	.operands = "",
	.nmin = 0, .nmax = 0,
	.summary = "the fence-peer command: mark the replica outdated",
	.opts = fence_peer_opts,
	.run = fence_peer_run,
};

/* this_host -- gethostname, "unknown" when it fails */
static void
this_host(char *buf, size_t len)
{
	if (gethostname(buf, len) || !buf[0])
		snprintf(buf, len, "unknown");
	buf[len - 1] = '\0';
}

/* hdr0_uuids -- those of part 0 of the set `path` (its master replica) */
static void
hdr0_uuids(const char *path, struct marker *m)
{
	struct poolset *set;
	char err[POOLSET_ERR_MAX];
	if (poolset_parse_file(path, &set, err, sizeof(err)))
		return;
	if (set->nreplicas && set->replicas[0].nparts &&
			!set->replicas[0].remote)
		marker_uuids_from_part(set->replicas[0].parts[0].path, m);
	poolset_free(set);
}

/* outdate_run -- rpmem outdate [--clear] [--master HOST] POOLSET */
static int
outdate_run(const struct cli_args *a)
{
	const char *set = a->operand[0];
	if (access(set, F_OK)) {
		fprintf(stderr, "rpmem outdate: %s: %s\n", set,
			strerror(errno));
		return 1;
	}
	if (cli_flag(a, "clear")) {
		int e = marker_remove(MARKER_OUTDATED, set);
		if (e == -ENOENT) {
			printf("%s: not outdated; nothing to do\n", set);
			return 0;
		}
		if (e) {
			fprintf(stderr, "rpmem outdate: removing %s%s: %s\n",
				set, MARKER_OUTDATED_SUFFIX, strerror(-e));
			return 1;
		}
		printf("%s: outdated mark removed\n", set);
		return 0;
	}
	struct marker p;
	if (marker_read(MARKER_PROMOTED, set, &p) == 0) {
		char what[384];
		marker_describe(&p, what, sizeof(what));
		fprintf(stderr, "rpmem outdate: %s was %s; it is no replica "
			"to mark outdated\n", set, what);
		return 1;
	}
	struct marker m = { .kind = MARKER_OUTDATED };
	m.time = (int64_t)time(NULL);
	const char *host = cli_value(a, "master");
	if (host)
		snprintf(m.host, sizeof(m.host), "%s", host);
	else
		this_host(m.host, sizeof(m.host));
	hdr0_uuids(set, &m);
	int e = marker_write(set, &m);
	if (e) {
		fprintf(stderr, "rpmem outdate: writing %s%s: %s\n", set,
			MARKER_OUTDATED_SUFFIX, strerror(-e));
		return 1;
	}
	char what[384];
	marker_describe(&m, what, sizeof(what));
	printf("%s: %s\n", set, what);
	return 0;
}

/* fence_peer_run -- rpmem fence-peer [--target T] [--pool-set SET] */
static int
fence_peer_run(const struct cli_args *a)
{
	const char *target = cli_value(a, "target");
	const char *set = cli_value(a, "pool-set");
	const char *reason = getenv("RPMEM_FENCE_REASON");
	const char *uuid = getenv("RPMEM_FENCE_POOLSET_UUID");
	if (!target)
		target = getenv("RPMEM_FENCE_TARGET");
	if (!set)
		set = getenv("RPMEM_FENCE_POOL_SET");
	if (!target || !*target || !set || !*set) {
		fprintf(stderr, "rpmem fence-peer: no %s: set "
			"RPMEM_FENCE_TARGET and RPMEM_FENCE_POOL_SET (librpmem "
			"does) or give --target and --pool-set\n",
			!target || !*target ? "target" : "pool set");
		return FENCE_PEER_FAILED;
	}
	char host[MARKER_HOST_MAX];
	this_host(host, sizeof(host));
	if (rpmem_outdate_remote(target, set, host)) {
		fprintf(stderr, "rpmem fence-peer: the replica %s on %s is "
			"NOT marked outdated (%s): the master must not go on "
			"without it\n", set, target, rpmem_errormsg());
		return FENCE_PEER_FAILED;
	}
	printf("rpmem fence-peer: replica %s on %s marked outdated%s%s; "
		"master %s goes on without it%s%s\n", set, target,
		uuid && *uuid ? ", pool set uuid " : "", uuid && *uuid ? uuid :
		"", host, reason && *reason ? ": " : "",
		reason && *reason ? reason : "");
	return 0;
}
