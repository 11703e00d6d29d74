/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_pool.c -- rpmem create, info and rm: whole pools with remote replicas
 *
 * The master replica is mapped with the same part code rpmemd uses for
 * its pools (db_parts_*), so local and remote parts get identical PMDK
 * headers.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "db_int.h"
#include "librpmem.h"
#include "pool_hdr.h"
#include "poolset.h"
#include "tools.h"

#define POOL_SIG "RPMEMPL"	/* signature of pools rpmem create makes */
#define POOL_MAJOR 1

const char cmd_create_usage[] = "POOLSET";
const char cmd_create_help[] =
	"create the local parts and every remote replica of POOLSET";
const char cmd_info_usage[] = "POOLSET";
const char cmd_info_help[] =
	"show the replicas of POOLSET and whether each one opens";
const char cmd_rm_usage[] = "[-f] POOLSET";
const char cmd_rm_help[] =
	"remove the local parts and remote replicas of POOLSET "
	"(-f: ignore missing ones)";

/* load -- parse a poolset named on the command line */
static struct poolset *
load(const char *path)
{
	struct poolset *set;
	char err[POOLSET_ERR_MAX];
	if (poolset_parse_file(path, &set, err, sizeof(err))) {
		fprintf(stderr, "rpmem: %s\n", err);
		return NULL;
	}
	if (set->replicas[0].remote) {
		fprintf(stderr, "rpmem: %s: the first replica must be local\n",
			path);
		poolset_free(set);
		return NULL;
	}
	for (unsigned r = 1; r < set->nreplicas; r++) {
		if (!set->replicas[r].remote) {
			fprintf(stderr, "rpmem: %s:%u: local replicas other "
				"than the master are not handled by rpmem; "
				"use pmempool(1)\n", path,
				set->replicas[r].line);
			poolset_free(set);
			return NULL;
		}
	}
	return set;
}

/* one_arg -- the single POOLSET argument of a subcommand */
static const char *
one_arg(int argc, char *argv[], const char *name, const char *usage)
{
	if (argc - optind != 1) {
		fprintf(stderr, "usage: rpmem %s %s\n", name, usage);
		return NULL;
	}
	return argv[optind];
}

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

/* cmd_create -- create local parts, then each remote replica */
int
cmd_create(int argc, char *argv[])
{
	optind = 1;
	const char *path = one_arg(argc, argv, "create", cmd_create_usage);
	if (!path)
		return EXIT_USAGE;
	struct poolset *set = load(path);
	struct poolset *local = set ? load(path) : NULL;
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

/* print_uuid -- canonical text form of the 16 bytes PMDK stores */
static void
print_uuid(const char *label, const unsigned char *u)
{
	printf("  %-13s ", label);
	for (int i = 0; i < 16; i++)
		printf("%02x%s", u[i], (i == 3 || i == 5 || i == 7 ||
			i == 9) ? "-" : "");
	printf("\n");
}

/* print_attr -- what a replica's header says */
static void
print_attr(const struct rpmem_pool_attr *a)
{
	char sig[RPMEM_POOL_HDR_SIG_LEN + 1];
	for (int i = 0; i < RPMEM_POOL_HDR_SIG_LEN; i++)
		sig[i] = a->signature[i] >= 0x20 && a->signature[i] < 0x7f ?
			a->signature[i] : a->signature[i] ? '?' : '\0';
	sig[RPMEM_POOL_HDR_SIG_LEN] = '\0';
	printf("  signature     %s\n  major         %u\n", sig, a->major);
	print_uuid("poolset uuid", a->poolset_uuid);
	print_uuid("uuid", a->uuid);
}

/* cmd_info -- open each replica and show what it holds */
int
cmd_info(int argc, char *argv[])
{
	optind = 1;
	const char *path = one_arg(argc, argv, "info", cmd_info_usage);
	if (!path)
		return EXIT_USAGE;
	struct poolset *set = load(path);
	struct poolset *local = set ? load(path) : NULL;
	if (!local) {
		poolset_free(set);
		return 1;
	}
	int ret = 0;
	size_t size = poolset_replica_size(set, 0);
	printf("poolset %s: %u replica(s), %zu bytes\n", path,
		set->nreplicas, size);

	struct db_pool *pool;
	int e = db_parts_open(local, false, &pool);
	printf("replica 0: local, %u part(s)\n", set->replicas[0].nparts);
	if (e) {
		printf("  status        error: %s\n", strerror(-e));
		ret = 1;
	} else {
		e = pool->no_headers ? 0 : db_hdrs_verify(pool);
		printf("  status        %s\n", e ? strerror(-e) : "ok");
		if (!e && !pool->no_headers)
			print_attr(&pool->attr);
		ret |= e != 0;
		(void) db_parts_close(pool, false, false);
	}

	void *buf = mmap(NULL, size, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	for (unsigned r = 1; r < set->nreplicas; r++) {
		const struct poolset_replica *rep = &set->replicas[r];
		printf("replica %u: remote %s %s\n", r, rep->target, rep->desc);
		unsigned nlanes = 1;
		struct rpmem_pool_attr attr;
		RPMEMpool *rpp = buf == MAP_FAILED ? NULL :
			rpmem_open(rep->target, rep->desc, buf, size, &nlanes,
				&attr);
		if (!rpp) {
			printf("  status        error: %s\n", rpmem_errormsg());
			ret = 1;
			continue;
		}
		printf("  status        ok\n");
		print_attr(&attr);
		if (rpmem_close(rpp)) {
			printf("  close         error: %s\n", rpmem_errormsg());
			ret = 1;
		}
	}
	if (buf != MAP_FAILED)
		munmap(buf, size);
	poolset_free(set);
	return ret;
}

/* cmd_rm -- remove remote replicas, then the local parts */
int
cmd_rm(int argc, char *argv[])
{
	bool force = false;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt(argc, argv, "+f")) != -1) {
		if (c != 'f') {
			fprintf(stderr, "usage: rpmem rm %s\n", cmd_rm_usage);
			return EXIT_USAGE;
		}
		force = true;
	}
	const char *path = one_arg(argc, argv, "rm", cmd_rm_usage);
	if (!path)
		return EXIT_USAGE;
	struct poolset *set = load(path);
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
