/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * db_hdr.c -- PMDK pool headers of rpmemd pools: write, verify, rewrite
 *
 * What libpmemobj and pmempool expect to find (pmdk-interop 6.5): every part
 * with a header names its neighbours in a ring of part uuids, all carry
 * the client's attributes, part 0's uuid is the client's.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "db_pool.h"
#include "log.h"

/* uuid_is_zero -- an unset uuid */
static bool
uuid_is_zero(const uint8_t *uuid)
{
	static const uint8_t zero[POOL_HDR_UUID_LEN];

	return memcmp(uuid, zero, sizeof(zero)) == 0;
}

/*
 * hdr_link -- point part i at its neighbours in the ring of headers
 * (with SINGLEHDR the only header is its own neighbour, as in PMDK)
 */
static void
hdr_link(struct pool_hdr *hdr, uint8_t (*uuids)[POOL_HDR_UUID_LEN],
		unsigned i, unsigned n)
{
	memcpy(hdr->uuid, uuids[i], POOL_HDR_UUID_LEN);
	memcpy(hdr->prev_part_uuid, uuids[(i + n - 1) % n], POOL_HDR_UUID_LEN);
	memcpy(hdr->next_part_uuid, uuids[(i + 1) % n], POOL_HDR_UUID_LEN);
}

/*
 * hdrs_write -- every header from `attr`, linked into the ring of
 * `uuids`; with `old` (the headers there now) each part keeps its
 * creation time and, where both sides have SDS, its shutdown state,
 * else all are created at `crtime` and, as PMDK keeps it, only part 0
 * has a shutdown state.  Part 0 goes last: its header is the one an
 * open trusts first.  pool->attr then says what part 0 holds.
 */
static int
hdrs_write(struct db_pool *pool, const struct rpmem_pool_attr *attr,
		uint8_t (*uuids)[POOL_HDR_UUID_LEN],
		const struct pool_hdr *old, uint64_t crtime)
{
	unsigned n = ((struct db_priv *)pool->priv)->nhdrs;
	struct pool_hdr hdr;
	for (unsigned i = n; i-- > 0; ) {
		pool_hdr_from_attr(&hdr, attr);
		hdr_link(&hdr, uuids, i, n);
		hdr.crtime = old ? old[i].crtime : crtime;
		if (old && (old[i].features.incompat & hdr.features.incompat &
				POOL_FEAT_SDS))
			hdr.sds = old[i].sds;
		else if (i > 0)
			memset(&hdr.sds, 0, sizeof(hdr.sds));
		int ret = db_hdr_write(pool, i, &hdr);
		if (ret)
			return ret;
	}
	pool_hdr_to_attr(&hdr, &pool->attr);
	return 0;
}

/*
 * db_hdrs_create -- PMDK's util_header_create for every header: part 0
 * takes the client's uuid, others a fresh one; an unset poolset uuid is
 * generated and unset replica links point at this replica itself
 */
int
db_hdrs_create(struct db_pool *pool, const struct rpmem_pool_attr *attr)
{
	struct db_priv *priv = pool->priv;
	unsigned n = priv->nhdrs;
	uint8_t (*uuids)[POOL_HDR_UUID_LEN] = calloc(n, sizeof(*uuids));
	if (uuids == NULL)
		return -ENOMEM;

	int ret = 0;
	memcpy(uuids[0], attr->uuid, POOL_HDR_UUID_LEN);
	for (unsigned i = 1; i < n; i++) {
		ret = pool_hdr_uuid_generate(uuids[i]);
		if (ret)
			goto out;
	}

	/* unset: a fresh poolset uuid, replica links to this replica */
	struct rpmem_pool_attr a = *attr;
	if (uuid_is_zero(a.poolset_uuid)) {
		ret = pool_hdr_uuid_generate(a.poolset_uuid);
		if (ret)
			goto out;
	}
	if (uuid_is_zero(a.prev_uuid))
		memcpy(a.prev_uuid, uuids[0], POOL_HDR_UUID_LEN);
	if (uuid_is_zero(a.next_uuid))
		memcpy(a.next_uuid, uuids[0], POOL_HDR_UUID_LEN);

	struct stat st;
	if (fstat(priv->parts[0].fd, &st)) {
		ret = -errno;
		goto out;
	}
	ret = hdrs_write(pool, &a, uuids, NULL, (uint64_t)st.st_ctime);

out:
	free(uuids);
	return ret;
}

/* db_hdrs_verify -- every header valid and agreeing with part 0's */
int
db_hdrs_verify(struct db_pool *pool)
{
	struct db_priv *priv = pool->priv;
	struct pool_hdr hdr0;
	struct pool_hdr hdr;

	int ret = db_hdr_read(pool, 0, &hdr0);
	if (ret)
		return ret;
	if (!pool_hdr_valid(&hdr0)) {
		log_err("part '%s' has no valid pool header",
				priv->parts[0].path);
		return -EINVAL;
	}

	bool single = (hdr0.features.incompat & POOL_FEAT_SINGLEHDR) != 0;
	if (single != ((priv->set->options & POOLSET_OPT_SINGLEHDR) != 0)) {
		log_err("part '%s': SINGLEHDR feature %s but the pool set %s "
				"the option", priv->parts[0].path,
				single ? "set" : "clear",
				single ? "lacks" : "has");
		return -EINVAL;
	}

	/*
	 * Every later part belongs to the same pool (poolset uuid) and the
	 * part uuids form a ring in set order, so a part swapped in from
	 * another pool with the same signature is refused, as PMDK does.
	 */
	struct pool_hdr prev = hdr0;
	for (unsigned i = 1; i <= priv->nhdrs; i++) {
		if (i == priv->nhdrs) {
			hdr = hdr0;
		} else {
			ret = db_hdr_read(pool, i, &hdr);
			if (ret)
				return ret;
		}
		if (i < priv->nhdrs && !pool_hdr_valid(&hdr)) {
			log_err("part '%s' has no valid pool header",
					priv->parts[i].path);
			return -EINVAL;
		}
		if (memcmp(hdr.signature, hdr0.signature, POOL_HDR_SIG_LEN) ||
				hdr.major != hdr0.major ||
				memcmp(&hdr.features, &hdr0.features,
					sizeof(hdr.features)) ||
				memcmp(hdr.poolset_uuid, hdr0.poolset_uuid,
					POOL_HDR_UUID_LEN)) {
			log_err("part '%s': signature, major, features or "
					"poolset uuid differ from part '%s'",
					priv->parts[i % priv->nhdrs].path,
					priv->parts[0].path);
			return -EINVAL;
		}
		if (memcmp(prev.next_part_uuid, hdr.uuid, POOL_HDR_UUID_LEN) ||
				memcmp(hdr.prev_part_uuid, prev.uuid,
					POOL_HDR_UUID_LEN)) {
			log_err("part '%s': not linked to part '%s' by part "
					"uuids", priv->parts[i % priv->nhdrs].path,
					priv->parts[i - 1].path);
			return -EINVAL;
		}
		prev = hdr;
	}

	pool_hdr_to_attr(&hdr0, &pool->attr);
	return 0;
}

/*
 * The unsafe shutdown count and the id sum of the pool's devices, which
 * PMDK reads through libpmem2 (ndctl).  This build reads neither and
 * takes 0 for both, what PMDK records on a file system without them; on
 * a device that has them, a state PMDK recorded reads as changed, so a
 * pool PMDK's rpmemd left open (dirty) is refused where PMDK, seeing the
 * count unchanged, would open it: stricter, never laxer.
 */
#define DEV_USC 0
#define DEV_UUID 0

/* sds_write -- part 0's header with a new shutdown state, checksummed */
static int
sds_write(struct db_pool *pool, struct pool_hdr *hdr, bool dirty)
{
	pool_sds_set(&hdr->sds, DEV_USC, DEV_UUID, dirty);
	/* a 4 KiB header checksum (db_hdr_write's) covers the state too */
	return db_hdr_write(pool, 0, hdr);
}

/*
 * db_sds_open -- PMDK's unsafe-shutdown check on open (its
 * util_header_check_remote): a pool whose state says the devices had an
 * unsafe shutdown while it was open is refused as possibly corrupt, with
 * EINVAL, the status PMDK answers ("Invalid pool set configuration"), so
 * that libpmempool takes the replica as broken and never syncs from it.
 * Otherwise the state is recorded afresh and dirty while the pool is
 * open, as PMDK does; a close, whatever ended the session, clears it.
 */
int
db_sds_open(struct db_pool *pool)
{
	struct db_priv *priv = pool->priv;
	struct pool_hdr hdr;
	int ret = db_hdr_read(pool, 0, &hdr);
	if (ret || !(hdr.features.incompat & POOL_FEAT_SDS))
		return ret;
	if (pool_sds_check(&hdr.sds, DEV_USC, DEV_UUID) == POOL_SDS_CORRUPT) {
		log_err("part '%s': the pool may be corrupt: an unsafe "
				"shutdown while it was open (shutdown state "
				"dirty, unsafe shutdown count %llu recorded, "
				"%llu now)", priv->parts[0].path,
				(unsigned long long)hdr.sds.usc,
				(unsigned long long)DEV_USC);
		return -EINVAL;
	}
	ret = sds_write(pool, &hdr, true);
	priv->sds_dirty = ret == 0;
	return ret;
}

/* db_sds_close -- the pool is closed cleanly: clear the dirty mark */
int
db_sds_close(struct db_pool *pool)
{
	struct db_priv *priv = pool->priv;
	struct pool_hdr hdr;
	if (!priv->sds_dirty)
		return 0;
	priv->sds_dirty = false;
	int ret = db_hdr_read(pool, 0, &hdr);
	if (ret || !(hdr.features.incompat & POOL_FEAT_SDS))
		return ret;
	return sds_write(pool, &hdr, false);
}

/*
 * db_hdrs_set_attr -- rewrite every header from `attr` as PMDK's
 * util_replica_set_attr does: identity fields, arch flags and replica
 * links from `attr` (stored as given), part 0 takes attr->uuid and the
 * part ring is relinked to it; later parts keep their uuid, every part
 * its creation time and shutdown state
 */
int
db_hdrs_set_attr(struct db_pool *pool, const struct rpmem_pool_attr *attr)
{
	struct db_priv *priv = pool->priv;
	unsigned n = priv->nhdrs;
	struct pool_hdr *old = calloc(n, sizeof(*old));
	uint8_t (*uuids)[POOL_HDR_UUID_LEN] = calloc(n, sizeof(*uuids));
	int ret = -ENOMEM;
	if (old == NULL || uuids == NULL)
		goto out;

	for (unsigned i = 0; i < n; i++) {
		ret = db_hdr_read(pool, i, &old[i]);
		if (ret)
			goto out;
		memcpy(uuids[i], i ? old[i].uuid : attr->uuid,
				POOL_HDR_UUID_LEN);
	}

	ret = hdrs_write(pool, attr, uuids, old, 0);

out:
	free(uuids);
	free(old);
	return ret;
}

