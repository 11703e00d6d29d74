/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * db_promote.c -- a replica's headers rewritten as a standalone pool's
 *
 * libpmemobj opens a one-replica set only when part 0's prev and next
 * replica uuids name part 0 itself (PMDK's util_replica_check: "wrong
 * replica UUID" otherwise), and when the shutdown state in part 0 does
 * not report an unsafe shutdown of another device.  A replica's links
 * name its master; its shutdown state is whatever rpmemd wrote.  So a
 * promotion rewrites exactly those fields and the checksum of each
 * header: identity (poolset uuid, part uuids and ring, features) and
 * data stay as they are.
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
 * db_hdr_promote -- part i's replica links pointed at part 0 of this
 * pool; part 0's shutdown state cleared, so that libpmemobj takes this
 * host's device state as the pool's on its next open (PMDK reinitialises
 * a zero one) instead of comparing it with the lost master's
 */
int
db_hdr_promote(struct db_pool *pool, unsigned i, const uint8_t *uuid0)
{
	struct pool_hdr hdr;
	int ret = db_hdr_read(pool, i, &hdr);
	if (ret)
		return ret;

	memcpy(hdr.prev_repl_uuid, uuid0, POOL_HDR_UUID_LEN);
	memcpy(hdr.next_repl_uuid, uuid0, POOL_HDR_UUID_LEN);
	memset(&hdr.sds, 0, sizeof(hdr.sds));
	return db_hdr_write(pool, i, &hdr);
}
