/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replica_diff.c -- the comparison of the master with a remote replica:
 * hashes of the same ranges, computed here and by rpmemd next to the
 * replica's bytes with the same function, so only hashes cross the wire
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "replica.h"
#include "rpmem_tool.h"

/* diff_emit -- extend the pending range by a block, or flush it */
static int
diff_emit(struct replica_diff *d, size_t *poff, size_t *plen, size_t off,
		size_t len)
{
	if (*plen && *poff + *plen == off) {
		*plen += len;
		return 0;
	}
	int ret = *plen ? d->range(*poff, *plen, d->arg) : 0;
	*poff = off;
	*plen = len;
	return ret;
}

/* diff_fail -- the message of a failed remote hash */
static int
diff_fail(struct replica_diff *d, size_t off, size_t len)
{
	snprintf(d->msg, sizeof(d->msg), "hashing offset 0x%zx length 0x%zx "
		"on the replica: %s", off, len, rpmem_errormsg());
	return -1;
}

/* hashes per batch: PROTO_HASH_MAX chunks of REPLICA_CHUNK, 1 GiB */
#define BATCH_CHUNKS 1024
#define BATCH_BLOCKS (BATCH_CHUNKS * (REPLICA_CHUNK / REPLICA_BLOCK))

/*
 * diff_blocks -- second pass over the differing chunks [off, off + len):
 * block hashes on both sides, differing blocks handed to diff_emit
 */
static int
diff_blocks(struct replica_diff *d, size_t off, size_t len, uint64_t *lh,
		uint64_t *rh, size_t *poff, size_t *plen)
{
	size_t n = (len + REPLICA_BLOCK - 1) / REPLICA_BLOCK;
	hash64_chunks(d->base + off, len, REPLICA_BLOCK, lh);
	if (rpmem_hash(d->rpp, off, len, REPLICA_BLOCK, rh))
		return diff_fail(d, off, len);
	for (size_t j = 0; j < n; j++) {
		if (lh[j] == rh[j])
			continue;
		size_t boff = off + j * REPLICA_BLOCK;
		size_t blen = off + len - boff < REPLICA_BLOCK ?
			off + len - boff : REPLICA_BLOCK;
		int ret = diff_emit(d, poff, plen, boff, blen);
		if (ret)
			return ret;
	}
	return 0;
}

/* local hashing of one batch, while rpmemd hashes the same bytes */
struct local_job {
	const char *buf;
	size_t len;
	uint64_t *out;
};

/* local_hash -- the thread body: chunk hashes of the local mapping */
static void *
local_hash(void *arg)
{
	struct local_job *j = arg;
	hash64_chunks(j->buf, j->len, REPLICA_CHUNK, j->out);
	return NULL;
}

/*
 * hash_both -- chunk hashes of [off, off + len) here (in a thread) and
 * on the replica at the same time; 0 or -1 after rpmem_hash failed
 */
static int
hash_both(struct replica_diff *d, size_t off, size_t len, uint64_t *lc,
		uint64_t *rc)
{
	struct local_job j = { d->base + off, len, lc };
	pthread_t t;
	bool threaded = pthread_create(&t, NULL, local_hash, &j) == 0;
	int ret = rpmem_hash(d->rpp, off, len, REPLICA_CHUNK, rc);
	if (threaded)
		pthread_join(t, NULL);
	else
		local_hash(&j);
	return ret;
}

/* replica_diff_run -- compare an area, chunk hashes then block hashes */
int
replica_diff_run(struct replica_diff *d)
{
	uint64_t *lc = calloc(BATCH_CHUNKS, sizeof(*lc));
	uint64_t *rc = calloc(BATCH_CHUNKS, sizeof(*rc));
	uint64_t *lb = calloc(BATCH_BLOCKS, sizeof(*lb));
	uint64_t *rb = calloc(BATCH_BLOCKS, sizeof(*rb));
	int ret = -1;
	size_t poff = 0, plen = 0;
	d->msg[0] = '\0';
	if (!lc || !rc || !lb || !rb) {
		snprintf(d->msg, sizeof(d->msg), "%s", strerror(ENOMEM));
		goto out;
	}
	size_t end = d->off + d->len;
	for (size_t b = d->off; b < end; ) {
		size_t blen = end - b < BATCH_CHUNKS * REPLICA_CHUNK ?
			end - b : BATCH_CHUNKS * REPLICA_CHUNK;
		size_t n = (blen + REPLICA_CHUNK - 1) / REPLICA_CHUNK;
		if (hash_both(d, b, blen, lc, rc)) {
			ret = diff_fail(d, b, blen);
			goto out;
		}
		/* each run of differing chunks in one request */
		for (size_t i = 0; i < n; ) {
			if (lc[i] == rc[i]) {
				i++;
				continue;
			}
			size_t k = i;
			while (k < n && lc[k] != rc[k])
				k++;
			size_t off = b + i * REPLICA_CHUNK;
			size_t len = (k == n ? b + blen : b + k *
				REPLICA_CHUNK) - off;
			ret = diff_blocks(d, off, len, lb, rb, &poff, &plen);
			if (ret)
				goto out;
			i = k;
		}
		b += blen;
		if (d->tick)
			d->tick(b - d->off, d->arg);
	}
	ret = plen ? d->range(poff, plen, d->arg) : 0;
out:
	free(lc);
	free(rc);
	free(lb);
	free(rb);
	return ret;
}
