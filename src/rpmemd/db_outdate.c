/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * db_outdate.c -- mark a replica outdated, or clear the mark
 *
 * When a master goes on without its replica (degraded mode), its
 * fence-peer handler has SET.outdated written beside the replica's set
 * file (marker.h): `rpmem promote` then refuses the replica unless
 * forced, since its data lags behind (scenarios D5, D6).  A resync to
 * equality clears it.  Both arrive as OUTDATE in a session, or as
 * `rpmemd --outdate` over ssh; the lookups are confined beneath
 * poolset-dir as every descriptor's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db_int.h"
#include "log.h"
#include "marker.h"

/* uuids_from_part0 -- those of part 0 of `desc` (marker_uuids_from_part) */
static void
uuids_from_part0(struct db *db, const char *desc, struct marker *m)
{
	char *path;
	if (db_set_part0(db, desc, &path))
		return;
	marker_uuids_from_part(path, m);
	free(path);
}

/* uuids_from_attr -- the same from the attributes of an open pool */
static void
uuids_from_attr(const struct rpmem_pool_attr *a, struct marker *m)
{
	static const uint8_t zero[RPMEM_POOL_HDR_UUID_LEN];
	if (memcmp(a->prev_uuid, zero, sizeof(zero)))
		marker_uuid_str(a->prev_uuid, m->master);
	if (memcmp(a->poolset_uuid, zero, sizeof(zero)))
		marker_uuid_str(a->poolset_uuid, m->poolset);
}

/* fill -- the marker a mark writes */
static void
fill(struct db *db, const char *desc, const struct db_outdate *o,
		struct marker *m)
{
	memset(m, 0, sizeof(*m));
	m->kind = MARKER_OUTDATED;
	m->time = o->time > 0 ? o->time : (int64_t)time(NULL);
	snprintf(m->host, sizeof(m->host), "%s",
		o->host && o->host[0] ? o->host : "unknown");
	if (o->attr)
		uuids_from_attr(o->attr, m);
	else
		uuids_from_part0(db, desc, m);
}

/* db_outdate -- write or remove SET.outdated beside the set `desc` */
int
db_outdate(struct db *db, const char *desc, const struct db_outdate *o)
{
	char *part0;
	int ret = db_set_part0(db, desc, &part0);	/* it is a set here */
	if (ret)
		return ret;
	free(part0);
	if (o->mark) {
		ret = db_promoted_check(db->dirfd, db->dir, desc);
		if (ret)
			return ret;
	}

	const char *base;
	int dirfd = db_parent_open(db, desc, O_RDONLY, &base);
	if (dirfd < 0)
		return dirfd;
	struct marker m;
	char what[384];
	if (o->mark) {
		fill(db, desc, o, &m);
		ret = marker_write_at(dirfd, base, &m);
		marker_describe(&m, what, sizeof(what));
		if (ret)
			log_err("pool set %s: writing its %s marker: %s",
				log_quote(desc).s, MARKER_OUTDATED_SUFFIX,
				strerror(-ret));
		else
			log_notice("pool set %s marked %s", log_quote(desc).s,
				what);
	} else {
		ret = marker_remove_at(dirfd, base, MARKER_OUTDATED);
		if (ret == -ENOENT) {
			ret = 0;
			log_notice("pool set %s: not outdated, nothing to "
				"clear", log_quote(desc).s);
		} else if (ret) {
			log_err("pool set %s: removing its %s marker: %s",
				log_quote(desc).s, MARKER_OUTDATED_SUFFIX,
				strerror(-ret));
		} else {
			log_notice("pool set %s: outdated mark cleared (the "
				"replica equals its master)",
				log_quote(desc).s);
		}
	}
	db_parent_close(db, dirfd);
	return ret;
}
