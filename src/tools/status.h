/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * status.h -- what rpmem status's parts share: the exit statuses, the
 * text helpers (cmd_status.c: the open handles and closed records,
 * status_set.c: pool set files, their markers and generations)
 */
#ifndef RPMEM_TOOLS_STATUS_H
#define RPMEM_TOOLS_STATUS_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* the exit statuses, the worst of what is listed */
#define SEV_OK 0		/* connected, in sync */
#define SEV_ATTENTION 1		/* degraded, resyncing, frozen, out of sync */
#define SEV_BROKEN 3		/* split-brain, refused, broken, unreadable */

/* status_worse -- raise *worst to `sev` */
void status_worse(int *worst, int sev);

/* status_safe -- `s` for a terminal: other than printable ASCII as \xNN */
const char *status_safe(const char *s, char *buf, size_t len);

/* status_row -- one aligned "label: value" line of a block */
__attribute__((format(printf, 2, 3)))
void status_row(const char *label, const char *fmt, ...);

/* status_when -- "2026-01-31T12:00:00Z (3h 12m ago)", or "unknown" */
const char *status_when(time_t now, int64_t t, char *buf, size_t len);

/*
 * status_set -- a pool set file of this host: its markers and the
 * generations of its local copy, as text or one JSON object (`first`:
 * no separator before it); *worst raised as they say
 */
void status_set(int *worst, time_t now, const char *set, bool json,
		bool first);

#endif /* RPMEM_TOOLS_STATUS_H */
