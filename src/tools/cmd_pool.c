/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_pool.c -- rpmem create, info and rm: whole pools with remote replicas
 *
 * The master replica is mapped with the same part code rpmemd uses for
 * its pools (db_parts_*), so local and remote parts get identical PMDK
 * headers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "db_pool.h"
#include "librpmem.h"
#include "pool_hdr.h"
#include "poolset.h"
#include "marker.h"
#include "replica.h"
#include "rstate.h"
#include "tools.h"

#define POOL_SIG "RPMEMPL"	/* signature of pools rpmem create makes */
#define POOL_MAJOR 1
#define INFO_LANES 1024		/* what libpmemobj asks for */

static int run_create(const struct cli_args *a);
static int run_info(const struct cli_args *a);
static int run_rm(const struct cli_args *a);

const struct cli_cmd cmd_create = {
	.name = "create", .operands = "POOLSET", .nmin = 1, .nmax = 1,
	.summary = "create the local parts and every remote replica of "
		"POOLSET",
	.desc =
	"Create the pool POOLSET describes: the part files of the master,\n"
	"with a pool header, then every remote replica through rpmemd on its\n"
	"target, with one pool set uuid and their uuids linked in a ring.\n"
	"When a replica cannot be created, what was made is removed again.\n"
	"Pools for libpmemobj are made with 'pmempool create obj' instead.\n",
	.run = run_create,
};

static const struct cli_opt Info_opts[] = {
	CLI_OPT_JSON,
	CLI_OPT_END,
};

const struct cli_cmd cmd_info = {
	.name = "info", .operands = "POOLSET", .nmin = 1, .nmax = 1,
	.summary = "show the replicas of POOLSET and whether each one opens",
	.desc =
	"Open every replica of POOLSET and show what its header says; for\n"
	"the master its parts, for a remote replica the version of rpmemd,\n"
	"the lanes it grants and whether it belongs to the same pool; the\n"
	"role of each: master, replica, or promoted (rpmem promote) on a date\n"
	"from a master, and since when which master went on without it when\n"
	"POOLSET.outdated exists.  Exit status 1 when a replica does not open.\n",
	.opts = Info_opts,
	.run = run_info,
};

static const struct cli_opt Rm_opts[] = {
	{ "force", 'f', NULL, "missing parts and replicas are not errors" },
	CLI_OPT_END,
};

const struct cli_cmd cmd_rm = {
	.name = "rm", .operands = "POOLSET", .nmin = 1, .nmax = 1,
	.summary = "remove the local parts and remote replicas of POOLSET",
	.desc =
	"Remove every remote replica of POOLSET (rpmemd --remove on its\n"
	"target), then the part files of the master.\n",
	.opts = Rm_opts,
	.run = run_rm,
};

/* make_attr -- attributes of replica `rep` in a ring of `n` uuids */
static void
make_attr(struct rpmem_pool_attr *a, const struct poolset *set,
		uint8_t (*uuids)[POOL_HDR_UUID_LEN], unsigned rep,
		const uint8_t *poolset_uuid)
{
	unsigned n = set->nreplicas;
	memset(a, 0, sizeof(*a));
	memcpy(a->signature, POOL_SIG, sizeof(POOL_SIG));
	a->major = POOL_MAJOR;
	if (set->options & POOLSET_OPT_SINGLEHDR)
		a->incompat_features |= POOL_FEAT_SINGLEHDR;
	memcpy(a->poolset_uuid, poolset_uuid, POOL_HDR_UUID_LEN);
	memcpy(a->uuid, uuids[rep], POOL_HDR_UUID_LEN);
	memcpy(a->next_uuid, uuids[(rep + 1) % n], POOL_HDR_UUID_LEN);
	memcpy(a->prev_uuid, uuids[(rep + n - 1) % n], POOL_HDR_UUID_LEN);
	struct pool_arch_flags af;
	pool_hdr_arch_flags(&af);
	memcpy(a->user_flags, &af, sizeof(a->user_flags));
}

/* run_create -- create local parts, then each remote replica */
static int
run_create(const struct cli_args *a)
{
	const char *path = a->operand[0];
	struct poolset *set = replica_load(path);
	struct poolset *local = set ? replica_load(path) : NULL;
	if (!local) {
		poolset_free(set);
		return 1;
	}
	bool nohdrs = set->options & POOLSET_OPT_NOHDRS;
	size_t size = poolset_replica_size(set, 0);

	uint8_t(*uuids)[POOL_HDR_UUID_LEN] = calloc(set->nreplicas,
		POOL_HDR_UUID_LEN);
	uint8_t psuuid[POOL_HDR_UUID_LEN];
	int ret = 1;
	if (!uuids)
		goto out_set;
	for (unsigned r = 0; r < set->nreplicas; r++)
		pool_hdr_uuid_generate(uuids[r]);
	pool_hdr_uuid_generate(psuuid);

	struct db_pool *pool;
	int e = db_parts_open(local, true, &pool);
	if (e) {
		fprintf(stderr, "rpmem: creating the local parts of %s: %s\n",
			path, strerror(-e));
		goto out_uuids;
	}
	struct rpmem_pool_attr attr;
	make_attr(&attr, set, uuids, 0, psuuid);
	if (!nohdrs && (e = db_hdrs_create(pool, &attr)) != 0) {
		fprintf(stderr, "rpmem: writing the headers: %s\n",
			strerror(-e));
		goto out_local;
	}
	printf("created local replica: %zu bytes, %u part(s)\n", size,
		set->replicas[0].nparts);

	unsigned r;
	for (r = 1; r < set->nreplicas; r++) {
		const struct poolset_replica *rep = &set->replicas[r];
		make_attr(&attr, set, uuids, r, psuuid);
		unsigned nlanes = 1;
		RPMEMpool *rpp = rpmem_create(rep->target, rep->desc,
			pool->addr, size, &nlanes, nohdrs ? NULL : &attr);
		if (!rpp) {
			fprintf(stderr, "rpmem: replica %u (%s %s): %s\n", r,
				rep->target, rep->desc, rpmem_errormsg());
			break;
		}
		if (rpmem_close(rpp)) {
			fprintf(stderr, "rpmem: replica %u: closing: %s\n", r,
				rpmem_errormsg());
			r++;
			break;
		}
		printf("created remote replica %u: %s %s\n", r, rep->target,
			rep->desc);
	}
	if (r == set->nreplicas) {
		ret = 0;
		goto out_local;
	}
	/* undo: nothing half-made stays behind */
	while (--r >= 1) {
		const struct poolset_replica *rep = &set->replicas[r];
		if (rpmem_remove(rep->target, rep->desc, RPMEM_REMOVE_FORCE))
			fprintf(stderr, "rpmem: replica %u: removing after the "
				"failure: %s\n", r, rpmem_errormsg());
	}
out_local:
	(void) db_parts_close(pool, false, ret != 0);
out_uuids:
	free(uuids);
out_set:
	poolset_free(set);
	return ret;
}

/* one replica as info shows it */
struct info_rep {
	bool ok;
	char msg[REPLICA_MSG_MAX];	/* why not */
	bool has_attr;
	struct rpmem_pool_attr attr;
	char version[32];	/* remote: rpmemd's */
	unsigned nlanes;	/* remote: lanes granted */
	const char *limits;	/* remote: what its rpmemd does not give */
	const char *role;	/* master, replica, promoted...; NULL: unknown */
	bool promoted;		/* mark holds SET.promoted */
	struct marker mark;
	bool outdated;		/* odmark holds SET.outdated (D5, D6) */
	struct marker odmark;
	bool recorded;		/* remote: this host's record of it (rstate.h) */
	struct rstate_record rec;	/* its ranges freed */
	uint64_t rec_bytes;	/* out of sync in the recorded ranges */
};

/* info_record -- this host's record of remote replica rep, if any */
static void
info_record(const struct poolset_replica *rep, struct info_rep *ir)
{
	char dir[4096], path[4096];
	if (rstate_dir(dir, sizeof(dir), false) ||
			rstate_record_path(dir, rep->target, rep->desc, path,
			sizeof(path)) ||
			rstate_record_read(path, &ir->rec))
		return;
	ir->recorded = true;
	for (size_t k = 0; k < ir->rec.nranges; k++)
		ir->rec_bytes += ir->rec.ranges[k].len;
	rstate_record_free(&ir->rec);
}

/* record_date -- seconds since the epoch as 2026-01-31T12:00:00Z */
static void
record_date(int64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* record_text -- the line of rpmem info on this host's record */
static void
record_text(const struct info_rep *ir)
{
	if (!ir->recorded)
		return;
	if (ir->rec.in_sync) {
		printf("  this host     in sync at the end of its last "
			"session\n");
		return;
	}
	char date[32];
	record_date(ir->rec.since, date, sizeof(date));
	printf("  this host     out of sync since %s: %s\n", date,
		ir->rec.reason);
	if (ir->rec.ranges_known)
		printf("  out of sync   %llu bytes, resynced at the next open\n",
			(unsigned long long)ir->rec_bytes);
	else
		printf("  out of sync   unknown: the next open compares hashes\n");
}

/*
 * info_role -- what the master's header and marker say it is: linked to
 * itself, a master (promoted, when SET.promoted exists); linked to others,
 * the master of a set with REPLICA lines or else a replica; a replica
 * with a marker is a promote that stopped half way
 */
static void
info_role(const char *path, const struct poolset *set, struct info_rep *ir)
{
	ir->outdated = marker_read(MARKER_OUTDATED, path, &ir->odmark) == 0;
	if (!ir->ok || !ir->has_attr)
		return;
	const struct rpmem_pool_attr *a = &ir->attr;
	bool self = !memcmp(a->prev_uuid, a->uuid, sizeof(a->uuid)) &&
		!memcmp(a->next_uuid, a->uuid, sizeof(a->uuid));
	ir->promoted = marker_read(MARKER_PROMOTED, path, &ir->mark) == 0;
	if (self)
		ir->role = ir->promoted ? "promoted" : "master";
	else if (set->nreplicas > 1)
		ir->role = "master";
	else
		ir->role = ir->promoted ? "promoting" : "replica";
}

/* role_text -- the role line of rpmem info */
static void
role_text(const struct info_rep *ir)
{
	char u[37], what[384];
	if (ir->outdated) {
		marker_describe(&ir->odmark, what, sizeof(what));
		printf("  outdated      %s\n", what + strlen("outdated "));
	}
	if (ir->role == NULL)
		return;
	if (strcmp(ir->role, "replica") == 0) {
		replica_uuid_str(ir->attr.prev_uuid, u);
		printf("  role          replica (of master %s)\n", u);
	} else if (strcmp(ir->role, "promoting") == 0) {
		printf("  role          replica, its promotion interrupted "
			"(run rpmem promote again)\n");
	} else if (ir->promoted) {
		marker_describe(&ir->mark, what, sizeof(what));
		printf("  role          master, %s\n", what);
	} else {
		printf("  role          %s\n", ir->role);
	}
}

/* info_master -- open the master read-only-ish and read its header */
static void
info_master(const char *path, struct info_rep *ir)
{
	struct master m;
	replica_master_open(path, &m);
	ir->ok = m.state == REPLICA_OK;
	snprintf(ir->msg, sizeof(ir->msg), "%s: %.*s",
		replica_state_name(m.state), REPLICA_MSG_MAX - 32, m.msg);
	if (ir->ok && !m.pool->no_headers) {
		ir->has_attr = true;
		ir->attr = m.pool->attr;
	}
	(void) replica_master_close(&m);
}

/* info_remote -- open remote replica i and note what it says */
static void
info_remote(const struct poolset *set, unsigned i, void *buf, size_t size,
		struct info_rep *ir)
{
	struct remote r;
	replica_remote_open(&r, set, i, buf, size, INFO_LANES, NULL);
	ir->ok = r.rpp != NULL;
	snprintf(ir->msg, sizeof(ir->msg), "%s", r.msg);
	if (!ir->ok) {
		/* rpmemd's refusal of a set promoted on its host */
		if (strstr(r.msg, "promoted to a master"))
			ir->role = "promoted";
		return;
	}
	ir->role = "replica";
	ir->has_attr = !replica_attr_is_zero(&r.attr);
	ir->attr = r.attr;
	ir->nlanes = r.nlanes;
	snprintf(ir->version, sizeof(ir->version), "%s", r.version);
	ir->limits = r.limits;
	if (replica_remote_close(&r)) {
		ir->ok = false;
		snprintf(ir->msg, sizeof(ir->msg), "%s", r.msg);
	}
}

/* same_pool -- "yes", "no", or NULL when either header is unknown */
static const char *
same_pool(const struct info_rep *master, const struct info_rep *ir)
{
	if (!master->ok || !ir->ok || master->has_attr != ir->has_attr)
		return master->ok && ir->ok ? "no" : NULL;
	if (!ir->has_attr)
		return "yes";
	return memcmp(master->attr.poolset_uuid, ir->attr.poolset_uuid,
		sizeof(ir->attr.poolset_uuid)) ? "no" : "yes";
}

/* info_text -- replica by replica, for people */
static void
info_text(const char *path, const struct poolset *set, size_t size,
		const struct info_rep *ir)
{
	printf("poolset %s: %u replica(s), %zu bytes\n", path,
		set->nreplicas, size);
	for (unsigned r = 0; r < set->nreplicas; r++) {
		const struct poolset_replica *rep = &set->replicas[r];
		if (r == 0)
			printf("replica 0: local, %u part(s)\n", rep->nparts);
		else
			printf("replica %u: remote %s %s\n", r, rep->target,
				rep->desc);
		for (unsigned p = 0; p < rep->nparts; p++)
			printf("  part          %s (%zu bytes)\n",
				rep->parts[p].path, rep->parts[p].size);
		if (!ir[r].ok) {
			printf("  status        error: %s\n", ir[r].msg);
			if (ir[r].role)
				printf("  role          %s\n", ir[r].role);
			record_text(&ir[r]);
			continue;
		}
		printf("  status        ok\n");
		role_text(&ir[r]);
		if (r > 0)
			printf("  rpmemd        %s\n  lanes         %u\n",
				ir[r].version, ir[r].nlanes);
		if (r > 0 && ir[r].limits)
			printf("  guarantees    %s\n", ir[r].limits);
		if (ir[r].has_attr)
			replica_print_attr(&ir[r].attr);
		else
			printf("  header        none (OPTION NOHDRS)\n");
		const char *same = same_pool(&ir[0], &ir[r]);
		if (r > 0)
			printf("  same pool     %s\n", same ? same :
				"unknown (the master cannot be read)");
		record_text(&ir[r]);
	}
}

/* json_uuid -- a uuid as a JSON string, null without a header */
static void
json_uuid(const struct info_rep *ir, const unsigned char *u)
{
	char s[37];
	replica_uuid_str(u, s);
	json_str(stdout, ir->ok && ir->has_attr ? s : NULL);
}

/* info_json -- the same as one JSON object */
static void
info_json(const char *path, const struct poolset *set, size_t size,
		const struct info_rep *ir)
{
	printf("{\"poolset\": ");
	json_str(stdout, path);
	printf(", \"size\": %zu, \"replicas\": [", size);
	for (unsigned r = 0; r < set->nreplicas; r++) {
		const struct poolset_replica *rep = &set->replicas[r];
		printf("%s\n  {\"index\": %u, \"kind\": \"%s\", \"target\": ",
			r ? "," : "", r, rep->remote ? "remote" : "local");
		json_str(stdout, rep->target);
		printf(", \"descriptor\": ");
		json_str(stdout, rep->desc);
		printf(", \"parts\": ");
		if (rep->remote)
			printf("null");
		for (unsigned p = 0; p < rep->nparts; p++) {
			printf("%s{\"path\": ", p ? ", " : "[");
			json_str(stdout, rep->parts[p].path);
			printf(", \"size\": %zu}%s", rep->parts[p].size,
				p + 1 == rep->nparts ? "]" : "");
		}
		printf(", \"status\": \"%s\", \"error\": ",
			ir[r].ok ? "ok" : "error");
		json_str(stdout, ir[r].ok ? NULL : ir[r].msg);
		char sig[RPMEM_POOL_HDR_SIG_LEN + 1];
		replica_sig_str(ir[r].attr.signature, sig);
		printf(", \"signature\": ");
		json_str(stdout, ir[r].ok && ir[r].has_attr ? sig : NULL);
		printf(", \"major\": ");
		if (ir[r].ok && ir[r].has_attr)
			printf("%u", ir[r].attr.major);
		else
			printf("null");
		printf(", \"uuid\": ");
		json_uuid(&ir[r], ir[r].attr.uuid);
		printf(", \"poolset_uuid\": ");
		json_uuid(&ir[r], ir[r].attr.poolset_uuid);
		printf(", \"daemon_version\": ");
		json_str(stdout, r && ir[r].ok ? ir[r].version : NULL);
		printf(", \"daemon_limits\": ");
		json_str(stdout, r && ir[r].ok ? ir[r].limits : NULL);
		if (r && ir[r].ok)
			printf(", \"nlanes\": %u", ir[r].nlanes);
		else
			printf(", \"nlanes\": null");
		printf(", \"role\": ");
		json_str(stdout, ir[r].role);
		char date[32];
		marker_date(&ir[r].mark, date, sizeof(date));
		printf(", \"promoted\": ");
		json_str(stdout, ir[r].promoted ? date : NULL);
		printf(", \"promoted_from\": ");
		json_str(stdout, ir[r].promoted ? ir[r].mark.master : NULL);
		marker_date(&ir[r].odmark, date, sizeof(date));
		printf(", \"outdated\": ");
		json_str(stdout, ir[r].outdated ? date : NULL);
		printf(", \"outdated_by\": ");
		json_str(stdout, ir[r].outdated ? ir[r].odmark.host : NULL);
		printf(", \"outdated_by_uuid\": ");
		json_str(stdout, ir[r].outdated && ir[r].odmark.master[0] ?
			ir[r].odmark.master : NULL);
		const char *same = r ? same_pool(&ir[0], &ir[r]) : NULL;
		printf(", \"in_sync\": %s", !ir[r].recorded ? "null" :
			ir[r].rec.in_sync ? "true" : "false");
		record_date(ir[r].rec.since, date, sizeof(date));
		printf(", \"out_of_sync_since\": ");
		json_str(stdout, ir[r].recorded && !ir[r].rec.in_sync ? date :
			NULL);
		printf(", \"out_of_sync_reason\": ");
		json_str(stdout, ir[r].recorded && !ir[r].rec.in_sync ?
			ir[r].rec.reason : NULL);
		printf(", \"poolset_uuid_matches\": %s}", same ?
			(strcmp(same, "yes") ? "false" : "true") : "null");
	}
	printf("\n]}\n");
}

/* run_info -- open each replica and show what it holds */
static int
run_info(const struct cli_args *a)
{
	const char *path = a->operand[0];
	bool json = cli_flag(a, "json");
	int ret = 0;
	struct poolset *set = replica_load(path);
	if (!set)
		return 1;
	size_t size = poolset_replica_size(set, 0);
	struct info_rep *ir = calloc(set->nreplicas, sizeof(*ir));
	void *buf = mmap(NULL, size, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (!ir || buf == MAP_FAILED) {
		perror("rpmem");
		ret = 1;
		goto out;
	}
	info_master(path, &ir[0]);
	info_role(path, set, &ir[0]);
	for (unsigned r = 1; r < set->nreplicas; r++) {
		info_remote(set, r, buf, size, &ir[r]);
		info_record(&set->replicas[r], &ir[r]);
	}
	if (json)
		info_json(path, set, size, ir);
	else
		info_text(path, set, size, ir);
	for (unsigned r = 0; r < set->nreplicas; r++)
		ret |= !ir[r].ok;
out:
	if (buf != MAP_FAILED)
		munmap(buf, size);
	free(ir);
	poolset_free(set);
	return ret;
}

/* run_rm -- remove remote replicas, then the local parts */
static int
run_rm(const struct cli_args *a)
{
	const char *path = a->operand[0];
	bool force = cli_flag(a, "force");
	struct poolset *set = replica_load(path);
	if (!set)
		return 1;
	int ret = 0;
	for (unsigned r = 1; r < set->nreplicas; r++) {
		const struct poolset_replica *rep = &set->replicas[r];
		if (rpmem_remove(rep->target, rep->desc,
				force ? RPMEM_REMOVE_FORCE : 0)) {
			fprintf(stderr, "rpmem: replica %u (%s %s): %s\n", r,
				rep->target, rep->desc, rpmem_errormsg());
			ret = 1;
		} else {
			printf("removed remote replica %u: %s %s\n", r,
				rep->target, rep->desc);
		}
	}
	const struct poolset_replica *m = &set->replicas[0];
	for (unsigned p = 0; p < m->nparts; p++) {
		if (unlink(m->parts[p].path) == 0) {
			printf("removed %s\n", m->parts[p].path);
		} else if (!(force && errno == ENOENT)) {
			fprintf(stderr, "rpmem: %s: %s\n", m->parts[p].path,
				strerror(errno));
			ret = 1;
		}
	}
	poolset_free(set);
	return ret;
}
