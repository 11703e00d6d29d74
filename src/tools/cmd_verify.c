/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_verify.c -- rpmem verify: compare every remote replica with the
 * master, by hashes computed on each side, and name what differs
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pmemobj_skip.h"
#include "replica.h"
#include "rpmem_tool.h"
#include "tools.h"

static int run(const struct cli_args *a);

static const struct cli_opt Opts[] = {
	CLI_OPT_JSON,
	{ "strict", 0, NULL, "compare every byte, those libpmemobj never "
		"persists too" },
	CLI_OPT_END,
};

const struct cli_cmd cmd_verify = {
	.name = "verify", .operands = "POOLSET", .nmin = 1, .nmax = 1,
	.summary = "compare every remote replica of POOLSET with the master",
	.opts = Opts,
	.run = run,
};

#define SHOW_MAX 100		/* ranges listed per replica */
#define EXIT_DIFFERS 3

/* the result for one replica */
struct verdict {
	struct remote r;	/* r.msg: why it is unavailable */
	bool opened;		/* its header was read */
	bool compared;		/* its data was compared */
	unsigned hdr;		/* ATTR_* differing from the master's */
	size_t nranges;
	size_t bytes;
	size_t nshown;
	size_t off[SHOW_MAX];
	size_t len[SHOW_MAX];
};

/* the whole report */
struct report {
	const char *path;
	struct poolset *set;
	size_t size, off, len;
	struct master m;
	bool strict;		/* --strict: nothing is skipped */
	struct replica_skip *skip;	/* left out of the comparison */
	size_t nskip;
	unsigned mhdr;		/* master's links that do not close the ring */
	struct verdict *v;	/* v[r] for remote replica r; v[0] unused */
};

/* on_range -- count a differing range, keep the first SHOW_MAX */
static int
on_range(size_t off, size_t len, void *arg)
{
	struct verdict *v = arg;
	if (v->nshown < SHOW_MAX) {
		v->off[v->nshown] = off;
		v->len[v->nshown] = len;
		v->nshown++;
	}
	v->nranges++;
	v->bytes += len;
	return 0;
}

/* verify_remote -- open a remote replica, compare header and data */
static void
verify_remote(struct report *rp, unsigned i)
{
	struct verdict *v = &rp->v[i];
	const struct rpmem_pool_attr *ref = &rp->m.pool->attr;
	replica_remote_open(&v->r, rp->set, i, rp->m.pool->addr, rp->size, 1,
		ref);
	if (!v->r.rpp)
		return;
	v->opened = true;
	v->hdr = replica_attr_diff(ref, &v->r.attr) &
		(ATTR_IDENTITY | ATTR_FLAGS);
	struct replica_diff d = {
		.base = rp->m.pool->addr, .rpp = v->r.rpp,
		.off = rp->off, .len = rp->len,
		.skip = rp->skip, .nskip = rp->nskip,
		.range = on_range, .arg = v,
	};
	if (replica_diff_run(&d)) {
		snprintf(v->r.msg, sizeof(v->r.msg), "%s", d.msg);
		(void) replica_remote_close(&v->r);
		return;
	}
	v->compared = true;
	if (replica_remote_close(&v->r))
		v->compared = false;
}

/* uuid_of -- replica i's own uuid, NULL when it could not be read */
static const unsigned char *
uuid_of(const struct report *rp, unsigned i)
{
	if (i == 0)
		return rp->m.pool->attr.uuid;
	return rp->v[i].opened ? rp->v[i].r.attr.uuid : NULL;
}

/* check_links -- prev/next uuids of each header against its neighbours */
static void
check_links(struct report *rp)
{
	unsigned n = rp->set->nreplicas;
	for (unsigned i = 0; i < n; i++) {
		const struct rpmem_pool_attr *a = i ? &rp->v[i].r.attr :
			&rp->m.pool->attr;
		if ((i && !rp->v[i].opened) || replica_attr_is_zero(a))
			continue;
		unsigned *bits = i ? &rp->v[i].hdr : &rp->mhdr;
		const unsigned char *prev = uuid_of(rp, (i + n - 1) % n);
		const unsigned char *next = uuid_of(rp, (i + 1) % n);
		if (prev && memcmp(prev, a->prev_uuid, sizeof(a->uuid)))
			*bits |= ATTR_PREV;
		if (next && memcmp(next, a->next_uuid, sizeof(a->uuid)))
			*bits |= ATTR_NEXT;
	}
}

/* status -- one word for a remote replica */
static const char *
status(const struct report *rp, const struct verdict *v)
{
	if (rp->m.state != REPLICA_OK)
		return "not compared";
	if (!v->compared)
		return "unavailable";
	return v->hdr || v->nranges ? "differs" : "equal";
}

/* header_note -- why the header differs, for text and JSON */
static void
header_note(const struct verdict *v, char *buf, size_t len)
{
	char what[160];
	replica_attr_diff_str(v->hdr, what, sizeof(what));
	if (v->r.state == REPLICA_INCOMPLETE)
		snprintf(buf, len, "signature %s: an interrupted rpmem sync; "
			"run rpmem sync", REPLICA_SYNC_SIG);
	else
		snprintf(buf, len, "header differs from the master's: %s",
			what);
}

/* print_text -- the report for people */
static void
print_text(const struct report *rp)
{
	unsigned n = rp->set->nreplicas;
	char note[256];
	printf("poolset %s: %u replica(s), %zu bytes, data at 0x%zx\n",
		rp->path, n, rp->size, rp->off);
	replica_skip_print(rp->skip, rp->nskip, "--strict compares them");
	if (rp->m.state != REPLICA_OK)
		printf("replica 0 (local): %s: %s\n",
			replica_state_name(rp->m.state), rp->m.msg);
	else if (rp->mhdr) {
		replica_attr_diff_str(rp->mhdr, note, sizeof(note));
		printf("replica 0 (local): master; its header does not link "
			"the replicas in order: %s\n", note);
	} else
		printf("replica 0 (local): master\n");
	for (unsigned i = 1; i < n; i++) {
		const struct verdict *v = &rp->v[i];
		const char *st = status(rp, v);
		printf("replica %u (%s %s): ", i, rp->set->replicas[i].target,
			rp->set->replicas[i].desc);
		if (strcmp(st, "unavailable") == 0) {
			printf("unavailable: %s\n", v->r.msg);
			continue;
		}
		if (strcmp(st, "differs") != 0) {
			printf("%s\n", st);
			continue;
		}
		printf("differs in %zu range(s), %zu bytes\n", v->nranges,
			v->bytes);
		if (v->hdr) {
			header_note(v, note, sizeof(note));
			printf("  %s\n", note);
		}
		for (size_t k = 0; k < v->nshown; k++)
			printf("  offset 0x%zx length 0x%zx\n", v->off[k],
				v->len[k]);
		if (v->nranges > v->nshown)
			printf("  ... and %zu more\n", v->nranges - v->nshown);
	}
}

/* print_hdr_json -- "header_differs": [names] */
static void
print_hdr_json(unsigned bits)
{
	char names[160];
	replica_attr_diff_str(bits, names, sizeof(names));
	printf(", \"header_differs\": [");
	char *save = NULL;
	bool first = true;
	for (char *t = strtok_r(names, ",", &save); t;
			t = strtok_r(NULL, ",", &save)) {
		printf("%s", first ? "" : ", ");
		json_str(stdout, t + (*t == ' '));
		first = false;
	}
	printf("]");
}

/* print_json -- the report as one JSON object */
static void
print_json(const struct report *rp, int ret)
{
	unsigned n = rp->set->nreplicas;
	printf("{\"poolset\": ");
	json_str(stdout, rp->path);
	printf(", \"size\": %zu, \"data_offset\": %zu, \"data_length\": %zu, "
		"\"result\": \"%s\", \"strict\": %s, ", rp->size, rp->off,
		rp->len, ret == 0 ? "equal" : "differs",
		rp->strict ? "true" : "false");
	printf("\"skipped_bytes\": %zu, \"skipped\": [",
		replica_skip_bytes(rp->skip, rp->nskip));
	for (size_t k = 0; k < rp->nskip; k++) {
		printf("%s{\"offset\": %zu, \"length\": %zu, \"what\": ",
			k ? ", " : "", rp->skip[k].off, rp->skip[k].len);
		json_str(stdout, rp->skip[k].what);
		printf("}");
	}
	printf("], \"replicas\": [\n");
	printf("  {\"index\": 0, \"kind\": \"local\", \"status\": \"%s\", "
		"\"error\": ", rp->m.state == REPLICA_OK ? "master" :
		replica_state_name(rp->m.state));
	json_str(stdout, rp->m.state == REPLICA_OK ? NULL : rp->m.msg);
	print_hdr_json(rp->mhdr);
	printf("}");
	for (unsigned i = 1; i < n; i++) {
		const struct verdict *v = &rp->v[i];
		const char *st = status(rp, v);
		char note[256];
		printf(",\n  {\"index\": %u, \"kind\": \"remote\", "
			"\"target\": ", i);
		json_str(stdout, rp->set->replicas[i].target);
		printf(", \"descriptor\": ");
		json_str(stdout, rp->set->replicas[i].desc);
		printf(", \"status\": \"%s\", \"state\": \"%s\", \"error\": ",
			st, rp->m.state == REPLICA_OK ?
			replica_state_name(v->r.state) : "unknown");
		json_str(stdout, strcmp(st, "unavailable") ? NULL : v->r.msg);
		header_note(v, note, sizeof(note));
		printf(", \"note\": ");
		json_str(stdout, v->hdr ? note : NULL);
		print_hdr_json(v->hdr);
		printf(", \"ranges_total\": %zu, \"bytes\": %zu, "
			"\"ranges_truncated\": %s, \"ranges\": [", v->nranges,
			v->bytes, v->nranges > v->nshown ? "true" : "false");
		for (size_t k = 0; k < v->nshown; k++)
			printf("%s{\"offset\": %zu, \"length\": %zu}",
				k ? ", " : "", v->off[k], v->len[k]);
		printf("]}");
	}
	printf("\n]}\n");
}

/* run -- compare, report, exit 0 (equal), 3 (differs) or 1 */
static int
run(const struct cli_args *a)
{
	rpmem_tool_readonly();
	bool json = cli_flag(a, "json");
	struct report rp = {
		.path = a->operand[0], .strict = cli_flag(a, "strict"),
	};
	int ret;
	rp.set = replica_load(rp.path);
	if (!rp.set)
		return 1;
	rp.size = poolset_replica_size(rp.set, 0);
	replica_data(rp.set, &rp.off, &rp.len);
	rp.v = calloc(rp.set->nreplicas, sizeof(*rp.v));
	if (!rp.v) {
		perror("rpmem");
		poolset_free(rp.set);
		return 1;
	}

	replica_master_open(rp.path, &rp.m);
	if (rp.m.state == REPLICA_ERROR) {
		fprintf(stderr, "rpmem: %s: master: %s\n", rp.path, rp.m.msg);
		ret = 1;
		goto out;
	}
	ret = 0;
	if (rp.m.state == REPLICA_OK) {
		if (!rp.strict && pmemobj_skip_list(&rp.m.pool->attr,
				rp.m.pool->addr, rp.size, &rp.skip,
				&rp.nskip)) {
			fprintf(stderr, "rpmem: %s: %s\n", rp.path,
				strerror(ENOMEM));
			ret = 1;
			goto close;
		}
		for (unsigned i = 1; i < rp.set->nreplicas; i++) {
			verify_remote(&rp, i);
			if (!rp.v[i].compared || rp.v[i].hdr ||
					rp.v[i].nranges)
				ret = EXIT_DIFFERS;
		}
		check_links(&rp);
		for (unsigned i = 1; i < rp.set->nreplicas; i++)
			if (rp.v[i].hdr)
				ret = EXIT_DIFFERS;
		if (rp.mhdr)
			ret = EXIT_DIFFERS;
	} else {
		ret = EXIT_DIFFERS;
	}
	if (json)
		print_json(&rp, ret);
	else
		print_text(&rp);
close:
	if (replica_master_close(&rp.m)) {
		fprintf(stderr, "rpmem: %s: closing the master failed\n",
			rp.path);
		ret = 1;
	}
out:
	free(rp.skip);
	free(rp.v);
	poolset_free(rp.set);
	return ret;
}
