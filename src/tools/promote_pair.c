/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * promote_pair.c -- rpmem promote --master-set (promote_pair.h): the
 * master set checked against the replica set, part 0's links checked to
 * name one other copy, and this host's record of that copy
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "marker.h"
#include "promote_pair.h"
#include "replica.h"
#include "rstate.h"

/* misfit -- "rpmem promote: FILE[:LINE]: what; nothing written"; 1 */
__attribute__((format(printf, 3, 4)))
static int
misfit(const struct pair *pr, unsigned line, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "rpmem promote: %s", pr->path);
	if (line)
		fprintf(stderr, ":%u", line);
	fputs(": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("; nothing written\n", stderr);
	return 1;
}

/* same_file -- both paths name one file (or, not there, one name) */
static bool
same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	return strcmp(a, b) == 0;
}

/*
 * shape -- the master set has one local replica, the first, and one
 * remote one; 0 or 1 after the message
 */
static int
shape(struct pair *pr)
{
	const struct poolset *m = pr->mset;
	unsigned nlocal = 0, nremote = 0;
	for (unsigned r = 0; r < m->nreplicas; r++) {
		if (!m->replicas[r].remote)
			nlocal++;
		else if (nremote++ == 0)
			pr->other = &m->replicas[r];
	}
	if (nlocal != 1 || m->replicas[0].remote)
		return misfit(pr, 0, "%u local replicas; a master set has one, "
			"the parts of the replica set, first", nlocal);
	if (nremote != 1)
		return misfit(pr, 0, "%u REPLICA lines naming a host; a master "
			"set of a pair has one, the other copy's replica set",
			nremote);
	return 0;
}

/*
 * record_path -- where this host's record of the other copy goes: the
 * state directory librpmem uses, made as librpmem makes it; 0 or 1 after
 * the message
 */
static int
record_path(struct pair *pr)
{
	char dir[PATH_MAX] = "";
	int e = rstate_dir(dir, sizeof(dir), true);
	if (!e)
		e = rstate_record_path(dir, pr->other->target,
			pr->other->desc, pr->record, sizeof(pr->record));
	if (e)
		return misfit(pr, pr->other->line, "this host's record of %s "
			"on %s cannot be kept in the state directory %s: %s "
			"(RPMEM_STATE_DIR names the application's)",
			pr->other->desc, pr->other->target, dir[0] ? dir :
			"(none)", strerror(-e));
	return 0;
}

/* pair_load -- the master set, checked against the replica set */
int
pair_load(struct pair *pr, const char *file, const char *set_path,
		const struct poolset *set)
{
	memset(pr, 0, sizeof(*pr));
	pr->path = file;
	char err[POOLSET_ERR_MAX];
	if (poolset_parse_file(file, &pr->mset, err, sizeof(err))) {
		fprintf(stderr, "rpmem promote: %s; nothing written\n", err);
		return 1;
	}
	if (shape(pr))
		return 1;
	const struct poolset_replica *mine = &set->replicas[0];
	const struct poolset_replica *its = &pr->mset->replicas[0];
	if (pr->mset->options != set->options)
		return misfit(pr, 0, "its OPTION lines differ from those of "
			"the replica set %s", set_path);
	if (its->nparts != mine->nparts)
		return misfit(pr, 0, "%u part(s), the replica set %s has %u",
			its->nparts, set_path, mine->nparts);
	for (unsigned i = 0; i < its->nparts; i++) {
		const struct poolset_part *a = &its->parts[i], *b =
			&mine->parts[i];
		if (a->size != b->size || !same_file(a->path, b->path))
			return misfit(pr, a->line, "part %u is %zu bytes of "
				"%s, the replica set %s names %zu bytes of %s",
				i, a->size, a->path, set_path, b->size,
				b->path);
	}
	pr->pool_size = poolset_replica_size(pr->mset, 0);
	return record_path(pr);
}

/* pair_peer -- the one other copy part 0 names, or NULL */
const uint8_t *
pair_peer(const struct pair *pr, const char *set_path,
		const struct pool_hdr *hdr0)
{
	const uint8_t *peer = db_pool_peer(hdr0);
	if (peer)
		return peer;
	if (db_pool_is_master(hdr0))
		fprintf(stderr, "rpmem promote: %s: part 0 names itself as "
			"its replica: a standalone pool (promoted without "
			"--master-set?), which %s cannot open; make the other "
			"copy its replica with 'rpmem sync %s', then promote "
			"again; nothing written\n", set_path, pr->path,
			pr->path);
	else
		fprintf(stderr, "rpmem promote: %s: part 0 links to two "
			"different replicas: not one copy of a pair; nothing "
			"written\n", set_path);
	return NULL;
}

/*
 * peer_attr -- the attributes rpmemd returns for the other copy: its
 * part 0 header is ours (pool_hdr_to_attr, as rpmemd maps it) with the
 * roles swapped, its uuid our link and its links our uuid
 */
static void
peer_attr(const struct pool_hdr *hdr0, struct rpmem_pool_attr *a)
{
	pool_hdr_to_attr(hdr0, a);
	memcpy(a->uuid, hdr0->next_repl_uuid, sizeof(a->uuid));
	memcpy(a->prev_uuid, hdr0->uuid, sizeof(a->prev_uuid));
	memcpy(a->next_uuid, hdr0->uuid, sizeof(a->next_uuid));
}

/* pair_record -- this host's record of the other copy, durably */
int
pair_record(struct pair *pr, const struct pool_hdr *hdr0)
{
	struct rstate_record r;
	memset(&r, 0, sizeof(r));
	snprintf(r.target, sizeof(r.target), "%s", pr->other->target);
	snprintf(r.pool_set, sizeof(r.pool_set), "%s", pr->other->desc);
	r.pool_size = pr->pool_size;
	r.has_attr = true;
	peer_attr(hdr0, &r.attr);
	r.since = (int64_t)time(NULL);
	char host[MARKER_HOST_MAX] = "";
	(void) gethostname(host, sizeof(host) - 1);
	snprintf(r.reason, sizeof(r.reason), "promoted on %s: compared "
		"whole at the next session", host);
	int e = rstate_record_write(pr->record, &r);
	if (e) {
		fprintf(stderr, "rpmem promote: promoted, but the record of "
			"%s on %s (%s) cannot be written: %s; run promote "
			"again\n", pr->other->desc, pr->other->target,
			pr->record, strerror(-e));
		return 1;
	}
	pr->recorded = true;
	return 0;
}

/* pair_text -- the line saying what was recorded */
void
pair_text(const struct pair *pr)
{
	printf("%s: the other copy, %s on %s, is out of sync and compared "
		"whole at the next session (%s)\n", pr->path, pr->other->desc,
		pr->other->target, pr->record);
}

/* pair_json -- "record": {path, target, pool_set, pool_size} or null */
void
pair_json(const struct pair *pr)
{
	printf(", \"record\": ");
	if (!pr || !pr->recorded) {
		printf("null");
		return;
	}
	printf("{\"path\": ");
	json_str(stdout, pr->record);
	printf(", \"master_set\": ");
	json_str(stdout, pr->path);
	printf(", \"target\": ");
	json_str(stdout, pr->other->target);
	printf(", \"pool_set\": ");
	json_str(stdout, pr->other->desc);
	printf(", \"pool_size\": %zu}", pr->pool_size);
}

/* pair_free -- free what pair_load made */
void
pair_free(struct pair *pr)
{
	if (pr->mset)
		poolset_free(pr->mset);
	pr->mset = NULL;
	pr->other = NULL;
}
