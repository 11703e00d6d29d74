/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_info.c -- rpmem info: each replica of a pool set opened and shown:
 * its header, role, markers, this host's record of it, and its copy's
 * data-generation identifiers with what they decide
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "db_gen.h"
#include "db_pool.h"
#include "librpmem.h"
#include "marker.h"
#include "poolset.h"
#include "replica.h"
#include "rpmem_tool.h"
#include "rstate.h"
#include "tools.h"

#define INFO_LANES 1024		/* what libpmemobj asks for */

static int run_info(const struct cli_args *a);

static const struct cli_opt Info_opts[] = {
	CLI_OPT_JSON,
	CLI_OPT_END,
};

const struct cli_cmd cmd_info = {
	.name = "info", .operands = "POOLSET", .nmin = 1, .nmax = 1,
	.summary = "show the replicas of POOLSET and whether each one opens",
	.opts = Info_opts,
	.run = run_info,
};

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
	bool has_gen;		/* its data-generation identifiers: */
	struct gen gen;		/* local, its file's; remote, as rpmemd
				 * found them at the session's start */
	const char *verdict;	/* remote: what both sides' decide */
	const char *why;
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
	struct poolset *set = replica_load(path);
	struct gen_file f;
	if (set && db_gen_read(&set->replicas[0], &f, NULL) == 0) {
		ir->has_gen = true;
		ir->gen = f.g;
	}
	poolset_free(set);
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
	struct gen m;
	struct gen_decision d;
	if (rpmem_tool_gens(r.rpp, &m, &ir->gen, &d)) {
		ir->has_gen = ir->gen.id != 0;
		ir->verdict = m.current ? gen_verdict_name(d.verdict) : NULL;
		ir->why = d.why;
	}
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

/* gen_text -- the generation lines of rpmem info */
static void
gen_text(const struct info_rep *ir)
{
	char c[GEN_STR], g[GEN_STR];
	if (!ir->has_gen) {
		printf("  generation    none kept\n");
	} else {
		gen_str(ir->gen.id, c);
		gen_str(ir->gen.current, g);
		printf("  generation    %s (copy %s)\n", g, c);
		char what[512];
		gen_describe(&ir->gen, what, sizeof(what));
		const char *more = strchr(what, ',');
		if (more)
			printf("  generations   %s\n", more + 2);
	}
	if (ir->verdict)
		printf("  decision      %s: %s\n", ir->verdict, ir->why);
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
		gen_text(&ir[r]);
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
		printf(", \"poolset_uuid_matches\": %s", same ?
			(strcmp(same, "yes") ? "false" : "true") : "null");
		printf(", \"generations\": ");
		if (ir[r].has_gen)
			json_gen(stdout, &ir[r].gen);
		else
			printf("null");
		printf(", \"decision\": ");
		json_str(stdout, ir[r].verdict);
		printf("}");
	}
	printf("\n]}\n");
}

/* run_info -- open each replica and show what it holds */
static int
run_info(const struct cli_args *a)
{
	rpmem_tool_readonly();
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

