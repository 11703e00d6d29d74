/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pmemobj_skip.c -- the run-time state in a libpmemobj pool descriptor
 *
 * Source layout: struct pmemobjpool of PMDK 1.12.1 (src/libpmemobj/obj.h
 * at tag 1.12.1), x86_64, as Debian 12's libpmemobj1 1.12.1 is built;
 * pool header signature "PMEMOBJ", format major 6.  The structure lies at
 * pool offset 0 and fills 8 KiB:
 *
 *	   0  4096  pool header
 *	4096  2048  persistent descriptor: layout name, lanes and heap
 *		    offsets, checksum
 *	6144   544  persistent: root offset, run id, root size, conversion
 *		    flags, heap size, persistent statistics, 496 reserved
 *		    bytes that stay zero
 *	6688   584  run-time state, below
 *	7272   920  padding to 8 KiB, never written
 *
 * The run-time state, field by field (offset, size; holes are alignment
 * padding between them):
 *
 *	6688 8 addr        6696 4 is_pmem     6700 4 rdonly
 *	6704 144 heap      6848 24 lanes_desc 6872 8 uuid_lo
 *	6880 4 is_dev_dax  6888 8 ctl         6896 8 stats
 *	6904 8 set         6912 8 replica     6920 48 persist_local ..
 *	6968 80 p_ops      7048 64 rootlock      memset_local (6)
 *	7112 4 is_master_replica              7116 4 has_remote_replicas
 *	7120 8 rpp         7128 8 remote_base 7136 8 node_addr
 *	7144 8 pool_desc   7152 8 persist_remote
 *	7160 4 vg_boot     7164 4 tx_debug_skip_expensive_checks
 *	7168 8 tx_params   7176 24 mutex_head, rwlock_head, cond_head
 *	7200 64 ulog_user_buffers             7264 8 user_data
 *
 * libpmemobj sets these with plain stores whenever it creates or opens
 * the pool (pointers into its own process, the heap's and lanes'
 * volatile bookkeeping) and never flushes them, so a replica legitimately
 * holds other bytes there.  They are skipped as one range from the first
 * byte of addr to the last of user_data; the persistent fields before
 * and the padding after are compared like any other byte.  Every
 * libpmemobj that writes format 6 (1.7 to 1.12) has the same persistent
 * fields up to offset 6688, so no durable byte of such a pool is ever
 * skipped; where the run-time state ends is 1.12.1's.
 * tests/unit/check_pmemobj_skip.c checks both ends against the installed
 * libpmemobj.
 */
#include <string.h>

#include "pmemobj_skip.h"

#define OBJ_SIG "PMEMOBJ"	/* 8 bytes with the NUL */
#define OBJ_MAJOR 6		/* the format of libpmemobj 1.7 to 1.12 */
#define OBJ_DESC_END 8192	/* end of struct pmemobjpool */

static const struct replica_skip Obj_skip[] = {
	{ 6688, 584, "libpmemobj run-time state (pool descriptor, "
		"addr .. user_data)" },
};

/* pmemobj_skip_list -- Obj_skip for a PMEMOBJ pool of format 6 */
size_t
pmemobj_skip_list(const struct rpmem_pool_attr *hdr, size_t size,
		const struct replica_skip **list)
{
	*list = NULL;
	if (memcmp(hdr->signature, OBJ_SIG, sizeof(OBJ_SIG)) != 0 ||
			hdr->major != OBJ_MAJOR || size < OBJ_DESC_END)
		return 0;
	*list = Obj_skip;
	return sizeof(Obj_skip) / sizeof(Obj_skip[0]);
}
