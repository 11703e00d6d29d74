/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * status.h -- what rpmem status's parts share: the facts gathered once
 * (status_load.c: open handles and closed records; status_set.c: pool
 * set files, their markers and generations) and the three renderings
 * of them (cmd_status.c: text and JSON; status_prom.c: Prometheus'
 * text exposition format, written by prom.c), the exit statuses and
 * the text helpers
 */
#ifndef RPMEM_TOOLS_STATUS_H
#define RPMEM_TOOLS_STATUS_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "gen_file.h"
#include "rstate.h"

/* the exit statuses, the worst of what is listed */
#define SEV_OK 0		/* connected, in sync */
#define SEV_ATTENTION 1		/* degraded, resyncing, frozen, out of sync */
#define SEV_BROKEN 3		/* split-brain, refused, broken, unreadable */
#define SEV_NO_OUTPUT 4		/* --output could not be written */

/* a replica out of sync whose pool is closed */
struct status_closed {
	struct rstate_record r;	/* its ranges freed */
	size_t nranges;
	uint64_t bytes;		/* in them */
};

/* a marker found beside a pool set file (or not: err) */
struct status_mark {
	const char *name;	/* "promoted", "outdated": label, JSON key */
	int err;		/* 0, -ENOENT: none, else unreadable */
	int64_t time;		/* seconds since the epoch */
	char date[32];		/* the same as 2026-01-31T12:00:00Z */
	char text[512];		/* one line of what it says */
};

#define STATUS_MARKS 2		/* promoted, outdated */

/* a pool set file named on the command line, as found */
struct status_set {
	const char *path;
	char error[256];	/* the file cannot be stat'ed: why; or "" */
	int gen_err;		/* its copy's generations: 0, -ENOENT (none),
				 * -EINVAL (malformed), another -errno */
	struct gen_file gen;	/* when gen_err is 0 */
	struct status_mark marks[STATUS_MARKS];
};

/* everything rpmem status found: gathered once, rendered thrice */
struct status_found {
	char dir[4096];		/* the state directory ("" with sets) */
	bool sets_only;		/* SET operands: only those */
	struct rstate_status *h;	/* live handles */
	size_t nh, hcap;
	struct status_closed *r;	/* replicas out of sync, pool closed */
	size_t nr, rcap;
	struct status_set *s;	/* the SET operands */
	size_t ns;
	int worst;		/* SEV_*: the exit status */
	time_t now;
};

/*
 * status_load -- the live handles of the state directory, then the
 * records of replicas out of sync they do not hold, sorted; what cannot
 * be read is named on stderr.  0, or 1 (said on stderr)
 */
int status_load(struct status_found *f);

/* status_free -- what status_load and status_set_load allocated */
void status_free(struct status_found *f);

/* status_worse -- raise *worst to `sev` */
void status_worse(int *worst, int sev);

/* status_safe -- `s` for a terminal: other than printable ASCII as \xNN */
const char *status_safe(const char *s, char *buf, size_t len);

/* status_row -- one aligned "label: value" line of a block */
__attribute__((format(printf, 3, 4)))
void status_row(FILE *o, const char *label, const char *fmt, ...);

/* status_when -- "2026-01-31T12:00:00Z (3h 12m ago)", or "unknown" */
const char *status_when(time_t now, int64_t t, char *buf, size_t len);

/*
 * status_set_load -- a pool set file of this host: its markers and the
 * generations of its local copy into *s; what cannot be read is named
 * on stderr; *worst raised as they say
 */
void status_set_load(struct status_set *s, const char *path, int *worst);

/*
 * status_set_show -- *s as text or one JSON object (`first`: no
 * separator before it)
 */
void status_set_show(FILE *o, const struct status_set *s, time_t now,
		bool json, bool first);

/* status_prom -- everything found in Prometheus' text exposition format */
void status_prom(FILE *o, const struct status_found *f);

#endif /* RPMEM_TOOLS_STATUS_H */
