/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replica.c -- the master and the remote replicas, shared by rpmem info,
 * verify and sync (their comparison is in replica_diff.c)
 *
 * The master is mapped with rpmemd's own part code (db_parts_*), so its
 * headers are read and written exactly as rpmemd does for a remote
 * replica.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "marker.h"
#include "replica.h"
#include "rpmem_tool.h"
#include "utf8.h"

/* replica_load -- parse a poolset named on the command line */
struct poolset *
replica_load(const char *path)
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

/* replica_data -- where the pool's data lies */
void
replica_data(const struct poolset *set, size_t *off, size_t *len)
{
	size_t size = poolset_replica_size(set, 0);
	*off = set->options & POOLSET_OPT_NOHDRS ? 0 : POOL_HDR_SIZE;
	*len = size > *off ? size - *off : 0;
}

/* replica_state_name -- one word per state */
const char *
replica_state_name(enum replica_state s)
{
	switch (s) {
	case REPLICA_OK: return "ok";
	case REPLICA_MISSING: return "missing";
	case REPLICA_DAMAGED: return "damaged";
	case REPLICA_INCOMPLETE: return "incomplete";
	case REPLICA_FOREIGN: return "foreign";
	case REPLICA_ERROR: return "error";
	}
	return "?";
}

/* replica_master_open -- open the master as it is, and classify it */
void
replica_master_open(const char *path, struct master *m)
{
	memset(m, 0, sizeof(*m));
	m->state = REPLICA_ERROR;
	struct poolset *set = replica_load(path);
	if (!set) {
		snprintf(m->msg, sizeof(m->msg), "cannot load %s", path);
		return;
	}
	/* name the missing part: db_parts_open would only say ENOENT */
	const struct poolset_replica *rep = &set->replicas[0];
	for (unsigned p = 0; p < rep->nparts; p++) {
		struct stat st;
		if (stat(rep->parts[p].path, &st) && errno == ENOENT) {
			m->state = REPLICA_MISSING;
			snprintf(m->msg, sizeof(m->msg), "part %s is missing",
				rep->parts[p].path);
			poolset_free(set);
			return;
		}
	}
	int e = db_parts_open(set, false, &m->pool);
	if (e) {
		m->pool = NULL;
		m->state = e == -ENOENT ? REPLICA_MISSING : e == -EINVAL ?
			REPLICA_DAMAGED : REPLICA_ERROR;
		snprintf(m->msg, sizeof(m->msg), "%s%s",
			e == -EWOULDBLOCK ? "in use by another process: " :
			e == -EINVAL ? "a part is not a regular file of the "
			"size in the pool set: " : "", strerror(-e));
		return;
	}
	if (m->pool->no_headers) {
		m->state = REPLICA_OK;
		return;
	}
	e = db_hdrs_verify(m->pool);
	if (e) {
		m->state = e == -EINVAL ? REPLICA_DAMAGED : REPLICA_ERROR;
		snprintf(m->msg, sizeof(m->msg), "%s", e == -EINVAL ?
			"no valid pool header" : strerror(-e));
	} else if (memcmp(m->pool->attr.signature, REPLICA_SYNC_SIG,
			sizeof(REPLICA_SYNC_SIG)) == 0) {
		m->state = REPLICA_INCOMPLETE;
		snprintf(m->msg, sizeof(m->msg), "signature %s: an "
			"interrupted rpmem sync", REPLICA_SYNC_SIG);
	} else {
		m->state = REPLICA_OK;
		return;
	}
	(void) db_parts_close(m->pool, false, false);
	m->pool = NULL;
}

/* replica_master_close -- unmap and unlock */
int
replica_master_close(struct master *m)
{
	int e = m->pool ? db_parts_close(m->pool, false, false) : 0;
	m->pool = NULL;
	return e;
}

/* replica_attr_is_zero -- attributes of a pool without headers */
bool
replica_attr_is_zero(const struct rpmem_pool_attr *a)
{
	static const struct rpmem_pool_attr zero;
	return memcmp(a, &zero, sizeof(zero)) == 0;
}

/* is_marker -- a header sync left while it copied */
static bool
is_marker(const struct rpmem_pool_attr *a)
{
	return memcmp(a->signature, REPLICA_SYNC_SIG,
		sizeof(REPLICA_SYNC_SIG)) == 0;
}

/* replica_remote_open -- open a remote replica and classify it */
void
replica_remote_open(struct remote *r, const struct poolset *set,
		unsigned index, void *addr, size_t size, unsigned nlanes,
		const struct rpmem_pool_attr *ref)
{
	memset(r, 0, sizeof(*r));
	r->index = index;
	r->rep = &set->replicas[index];
	r->nlanes = nlanes;
	r->rpp = rpmem_open(r->rep->target, r->rep->desc, addr, size,
		&r->nlanes, &r->attr);
	if (!r->rpp) {
		r->err = errno;
		snprintf(r->msg, sizeof(r->msg), "%s", rpmem_errormsg());
		r->state = r->err == ENOENT ? REPLICA_MISSING :
			r->err == EINVAL ? REPLICA_DAMAGED : REPLICA_ERROR;
		return;
	}
	rpmem_daemon_version(r->rpp, r->version, sizeof(r->version));
	r->limits = rpmem_daemon_limits(r->rpp);
	r->state = REPLICA_OK;
	unsigned bits = ref ? replica_attr_diff(ref, &r->attr) &
		ATTR_IDENTITY : 0;
	if (!replica_attr_is_zero(&r->attr) && is_marker(&r->attr) &&
			!(bits & ~ATTR_SIG)) {
		r->state = REPLICA_INCOMPLETE;
		snprintf(r->msg, sizeof(r->msg), "signature %s: an "
			"interrupted rpmem sync", REPLICA_SYNC_SIG);
	} else if (bits) {
		char what[128];
		replica_attr_diff_str(bits, what, sizeof(what));
		r->state = REPLICA_FOREIGN;
		snprintf(r->msg, sizeof(r->msg), "header differs from the "
			"master's: %s", what);
	}
}

/* replica_remote_close -- end the session, keep the message */
int
replica_remote_close(struct remote *r)
{
	if (!r->rpp)
		return 0;
	int ret = rpmem_close(r->rpp);
	r->rpp = NULL;
	if (ret)
		snprintf(r->msg, sizeof(r->msg), "closing: %s",
			rpmem_errormsg());
	return ret;
}

/* replica_attr_diff -- which header fields differ */
unsigned
replica_attr_diff(const struct rpmem_pool_attr *ref,
		const struct rpmem_pool_attr *a)
{
	if (replica_attr_is_zero(ref) != replica_attr_is_zero(a))
		return ATTR_HEADER;
	unsigned bits = 0;
	if (memcmp(ref->signature, a->signature, sizeof(a->signature)))
		bits |= ATTR_SIG;
	if (ref->major != a->major)
		bits |= ATTR_MAJOR;
	if (ref->compat_features != a->compat_features ||
			ref->incompat_features != a->incompat_features ||
			ref->ro_compat_features != a->ro_compat_features)
		bits |= ATTR_FEATURES;
	if (memcmp(ref->poolset_uuid, a->poolset_uuid, sizeof(a->uuid)))
		bits |= ATTR_POOLSET_UUID;
	if (memcmp(ref->user_flags, a->user_flags, sizeof(a->user_flags)))
		bits |= ATTR_FLAGS;
	if (memcmp(ref->prev_uuid, a->prev_uuid, sizeof(a->uuid)))
		bits |= ATTR_PREV;
	if (memcmp(ref->next_uuid, a->next_uuid, sizeof(a->uuid)))
		bits |= ATTR_NEXT;
	return bits;
}

/* replica_attr_diff_str -- the names of the differing fields */
void
replica_attr_diff_str(unsigned bits, char *buf, size_t len)
{
	static const char *const names[] = {
		"signature", "major", "features", "poolset uuid",
		"arch flags", "previous replica uuid", "next replica uuid",
		"presence of a header",
	};
	size_t pos = 0;
	buf[0] = '\0';
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(bits & (1U << i)) || pos >= len)
			continue;
		int n = snprintf(buf + pos, len - pos, "%s%s",
			pos ? ", " : "", names[i]);
		pos += n > 0 ? (size_t)n : 0;
	}
}

/* replica_ring -- identity of the pool, own uuid, neighbours' uuids */
void
replica_ring(struct rpmem_pool_attr *a, const struct rpmem_pool_attr *base,
		unsigned char (*uuids)[RPMEM_POOL_HDR_UUID_LEN], unsigned rep,
		unsigned n)
{
	*a = *base;
	memcpy(a->uuid, uuids[rep], sizeof(a->uuid));
	memcpy(a->next_uuid, uuids[(rep + 1) % n], sizeof(a->uuid));
	memcpy(a->prev_uuid, uuids[(rep + n - 1) % n], sizeof(a->uuid));
}

/* replica_sig_str -- printable signature */
void
replica_sig_str(const char *sig, char out[RPMEM_POOL_HDR_SIG_LEN + 1])
{
	for (int i = 0; i < RPMEM_POOL_HDR_SIG_LEN; i++)
		out[i] = sig[i] >= 0x20 && sig[i] < 0x7f ? sig[i] :
			sig[i] ? '?' : '\0';
	out[RPMEM_POOL_HDR_SIG_LEN] = '\0';
}

/* replica_uuid_str -- the text form pmempool prints (marker.c) */
void
replica_uuid_str(const unsigned char *u, char out[37])
{
	marker_uuid_str(u, out);
}

/* replica_print_attr -- signature, major and uuids of a header */
void
replica_print_attr(const struct rpmem_pool_attr *a)
{
	char sig[RPMEM_POOL_HDR_SIG_LEN + 1];
	char u[37];
	replica_sig_str(a->signature, sig);
	printf("  signature     %s\n  major         %u\n", sig, a->major);
	replica_uuid_str(a->poolset_uuid, u);
	printf("  poolset uuid  %s\n", u);
	replica_uuid_str(a->uuid, u);
	printf("  uuid          %s\n", u);
}

/* json_str -- a quoted, escaped JSON string; invalid bytes as U+FFFD */
void
json_str(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	const unsigned char *p = (const unsigned char *)s;
	fputc('"', f);
	while (*p) {
		if (*p == '"' || *p == '\\') {
			fprintf(f, "\\%c", *p++);
		} else if (*p == '\n') {
			fputs("\\n", f);
			p++;
		} else if (*p == '\t') {
			fputs("\\t", f);
			p++;
		} else if (*p < 0x20 || *p == 0x7f) {
			fprintf(f, "\\u%04x", *p++);
		} else if (*p < 0x80) {
			fputc(*p++, f);
		} else {
			size_t n = utf8_len(p);
			if (n) {
				fwrite(p, 1, n, f);
				p += n;
			} else {
				fputs("\\ufffd", f);
				p++;
			}
		}
	}
	fputc('"', f);
}

/* json_hex -- a 64-bit identifier as a JSON string, null for 0 */
static void
json_hex(FILE *f, uint64_t v)
{
	if (v)
		fprintf(f, "\"%016" PRIx64 "\"", v);
	else
		fprintf(f, "null");
}

/* json_gen -- a copy's data-generation identifiers as a JSON object */
void
json_gen(FILE *f, const struct gen *g)
{
	fprintf(f, "{\"copy\": ");
	json_hex(f, g->id);
	fprintf(f, ", \"current\": ");
	json_hex(f, g->current);
	fprintf(f, ", \"history\": [");
	for (unsigned i = 0; i < GEN_HISTORY && g->history[i]; i++) {
		fprintf(f, "%s", i ? ", " : "");
		json_hex(f, g->history[i]);
	}
	fprintf(f, "], \"peers\": [");
	for (unsigned i = 0; i < g->npeers && i < GEN_PEERS; i++) {
		fprintf(f, "%s{\"copy\": ", i ? ", " : "");
		json_hex(f, g->peers[i].id);
		fprintf(f, ", \"bitmap\": ");
		json_hex(f, g->peers[i].bitmap);
		fprintf(f, ", \"open\": %s}", g->peers[i].open ? "true" :
			"false");
	}
	fprintf(f, "], \"target\": ");
	json_hex(f, g->target);
	fprintf(f, ", \"master\": ");
	json_hex(f, g->master);
	fprintf(f, ", \"discarded\": %s}", g->discarded ? "true" : "false");
}
