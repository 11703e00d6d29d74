/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_pool.c -- rpmem create and rm: whole pools with remote replicas
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
#include "db_gen.h"
#include "replica.h"
#include "rpmem_tool.h"
#include "tools.h"

#define POOL_SIG "RPMEMPL"	/* signature of pools rpmem create makes */
#define POOL_MAJOR 1

static int run_create(const struct cli_args *a);
static int run_rm(const struct cli_args *a);

const struct cli_cmd cmd_create = {
	.name = "create", .operands = "POOLSET", .nmin = 1, .nmax = 1,
	.summary = "create the local parts and every remote replica of "
		"POOLSET",
	.run = run_create,
};

static const struct cli_opt Rm_opts[] = {
	{ "force", 'f', NULL, "missing parts and replicas are not errors" },
	CLI_OPT_END,
};

const struct cli_cmd cmd_rm = {
	.name = "rm", .operands = "POOLSET", .nmin = 1, .nmax = 1,
	.summary = "remove the local parts and remote replicas of POOLSET",
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
	/* the master copy's generations go with its parts */
	int e = ret ? 0 : db_gen_remove(m);
	if (e) {
		fprintf(stderr, "rpmem: the generations beside %s: %s\n",
			m->parts[0].path, strerror(-e));
		ret = 1;
	}
	poolset_free(set);
	return ret;
}
