/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * db_promote.c -- a replica's headers rewritten as a master's: a
 * standalone pool's, or one copy's of a two-copy pair
 *
 * libpmemobj opens a one-replica set only when part 0's prev and next
 * replica uuids name part 0 itself (PMDK's util_replica_check: "wrong
 * replica UUID" otherwise), and when the shutdown state in part 0 does
 * not report an unsafe shutdown of another device.  A replica's links
 * name its master; its shutdown state is whatever rpmemd wrote.  So a
 * standalone promotion points the links at part 0 and clears the
 * shutdown state; a pair's keeps the links (copy A names B, B names A,
 * so either copy's master set opens) and clears only the shutdown state.
 * Identity (poolset uuid, part uuids and ring, features) and data stay.
 */
#include <string.h>

#include "db_pool.h"

/* db_pool_is_master -- part 0's replica links name part 0 itself */
bool
db_pool_is_master(const struct pool_hdr *hdr0)
{
	return memcmp(hdr0->prev_repl_uuid, hdr0->uuid,
			POOL_HDR_UUID_LEN) == 0 &&
		memcmp(hdr0->next_repl_uuid, hdr0->uuid,
			POOL_HDR_UUID_LEN) == 0;
}

/*
 * db_pool_peer -- the other copy of a two-copy pool: part 0's links
 * name one replica (prev == next) that is not part 0 itself; NULL when
 * they do not
 */
const uint8_t *
db_pool_peer(const struct pool_hdr *hdr0)
{
	if (memcmp(hdr0->prev_repl_uuid, hdr0->next_repl_uuid,
			POOL_HDR_UUID_LEN) ||
			memcmp(hdr0->next_repl_uuid, hdr0->uuid,
			POOL_HDR_UUID_LEN) == 0)
		return NULL;
	return hdr0->next_repl_uuid;
}

/*
 * db_hdr_promote -- part i's replica links pointed at `link` (part 0 of
 * this pool, or of the other copy of a pair); part 0's shutdown state
 * cleared, so that libpmemobj takes this host's device state as the
 * pool's on its next open (PMDK reinitialises a zero one) instead of
 * comparing it with the lost master's
 */
int
db_hdr_promote(struct db_pool *pool, unsigned i, const uint8_t *link)
{
	struct pool_hdr hdr;
	int ret = db_hdr_read(pool, i, &hdr);
	if (ret)
		return ret;

	memcpy(hdr.prev_repl_uuid, link, POOL_HDR_UUID_LEN);
	memcpy(hdr.next_repl_uuid, link, POOL_HDR_UUID_LEN);
	memset(&hdr.sds, 0, sizeof(hdr.sds));
	return db_hdr_write(pool, i, &hdr);
}
