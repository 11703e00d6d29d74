/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pmemobj_skip.c -- the bytes of a libpmemobj pool that libpmemobj
 * writes and never persists: the run-time state in its pool descriptor,
 * a counter in the undo logs of its lanes, and (pmemobj_heap.c) bytes of
 * its heap
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
 *
 * The descriptor's persistent part also says where the lanes are and how
 * many (offsets 5120 and 5128: lanes_offset, nlanes) and where the heap
 * is (5136: heap_offset).  A lane is 3 KiB: two redo logs (256 and 704
 * bytes), then its undo log, each a 64-byte header (checksum, next,
 * capacity, generation number, flags, reserved) and entries.  A
 * transaction whose snapshots outgrow the lane's undo log chains more
 * logs, allocated in the heap, through `next` (the offset of the next
 * log, which starts at the cache line at or after it).  At the end of
 * every transaction libpmemobj counts up the generation number of the
 * lane's first log, persisted, and that of the second one with a plain
 * store (PMDK 1.12.1's ulog.c: "we'll never read gen_num of the second
 * ulog"): entries are checked against the first log's number only.  So
 * the 8 bytes of the second log's generation number are skipped, for
 * every lane whose undo log has a second one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "pmemobj_skip.h"

#define OBJ_SIG "PMEMOBJ"	/* 8 bytes with the NUL */
#define OBJ_MAJOR 6		/* the format of libpmemobj 1.7 to 1.12 */
#define OBJ_DESC_END 8192	/* end of struct pmemobjpool */
#define RUNTIME_OFF 6688	/* addr */
#define RUNTIME_LEN 584		/* .. the end of user_data */

#define DESC_LANES 5120		/* lanes_offset, then nlanes, heap_offset */
#define LANE_SIZE 3072
#define LANE_UNDO 960		/* the undo log, after the two redo logs */
#define ULOG_NEXT 8		/* in a log's header: next, */
#define ULOG_GEN 24		/* the generation number */
#define ULOG_HDR 64
#define CACHELINE 64

const char pmemobj_skip_runtime[] = "libpmemobj run-time state (pool "
	"descriptor, addr .. user_data)";
const char pmemobj_skip_footer[] = "heap: chunk headers inside a huge block "
	"(its footer, stale footers)";
const char pmemobj_skip_head[] = "heap: the head of a free chunk "
	"(libpmemobj's index of free blocks)";
const char pmemobj_skip_freed_gen[] = "heap: a free unit's undo log "
	"generation number (of a log freed at an open)";
const char pmemobj_skip_gen[] = "lanes: the generation number of a second "
	"undo log";

/* pmemobj_load64 -- the little-endian 8 bytes at `off` of the pool */
uint64_t
pmemobj_load64(const unsigned char *pool, size_t off)
{
	uint64_t v;
	memcpy(&v, pool + off, sizeof(v));
	return v;
}

/* pmemobj_skip_add -- append, or continue the last range */
void
pmemobj_skip_add(struct pmemobj_skips *s, size_t off, size_t len,
		const char *what)
{
	if (!len || s->err)
		return;
	struct replica_skip *last = s->n ? &s->r[s->n - 1] : NULL;
	if (last && last->what == what && last->off + last->len == off) {
		last->len += len;
		return;
	}
	if (array_grow(&s->r, s->n, &s->cap, sizeof(*s->r), 64)) {
		s->err = -ENOMEM;
		return;
	}
	s->r[s->n++] = (struct replica_skip){ off, len, what };
}

/*
 * lane_skips -- the generation number of each lane's second undo log;
 * the lanes lie in [lanes, heap), the logs in the heap
 */
static void
lane_skips(struct pmemobj_skips *s, const unsigned char *pool, size_t size,
		size_t lanes, size_t nlanes, size_t heap)
{
	for (size_t i = 0; i < nlanes; i++) {
		uint64_t next = pmemobj_load64(pool,
			lanes + i * LANE_SIZE + LANE_UNDO + ULOG_NEXT);
		if (next < heap || next > size - ULOG_HDR - CACHELINE)
			continue;
		size_t log = (next + CACHELINE - 1) / CACHELINE * CACHELINE;
		pmemobj_skip_add(s, log + ULOG_GEN, sizeof(uint64_t),
			pmemobj_skip_gen);
	}
}

/* by_offset -- qsort order of ranges */
static int
by_offset(const void *a, const void *b)
{
	const struct replica_skip *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off;
}

/*
 * in_order -- sort the ranges; one that overlaps the one before it (only
 * a damaged master's headers make such) is merged into it
 */
static void
in_order(struct pmemobj_skips *s)
{
	qsort(s->r, s->n, sizeof(s->r[0]), by_offset);
	size_t k = 0;
	for (size_t i = 1; i < s->n; i++) {
		struct replica_skip *p = &s->r[k];
		if (s->r[i].off < p->off + p->len) {
			size_t end = s->r[i].off + s->r[i].len;
			if (end > p->off + p->len)
				p->len = end - p->off;
			continue;
		}
		s->r[++k] = s->r[i];
	}
	if (s->n)
		s->n = k + 1;
}

/* pmemobj_skip_list -- the descriptor's state, the lanes', the heap's */
int
pmemobj_skip_list(const struct rpmem_pool_attr *hdr, const void *pool,
		size_t size, struct replica_skip **list, size_t *n)
{
	*list = NULL;
	*n = 0;
	if (memcmp(hdr->signature, OBJ_SIG, sizeof(OBJ_SIG)) != 0 ||
			hdr->major != OBJ_MAJOR || size < OBJ_DESC_END)
		return 0;
	struct pmemobj_skips s = { NULL, 0, 0, 0 };
	pmemobj_skip_add(&s, RUNTIME_OFF, RUNTIME_LEN, pmemobj_skip_runtime);
	const unsigned char *p = pool;
	uint64_t lanes = pmemobj_load64(p, DESC_LANES);
	uint64_t nlanes = pmemobj_load64(p, DESC_LANES + 8);
	uint64_t heap = pmemobj_load64(p, DESC_LANES + 16);
	bool lanes_fit = lanes >= OBJ_DESC_END && heap >= lanes &&
		heap <= size && nlanes <= (heap - lanes) / LANE_SIZE;
	if (pmemobj_heap_skips(&s, p, size, heap) && lanes_fit)
		lane_skips(&s, p, size, lanes, nlanes, heap);
	if (s.err) {
		free(s.r);
		return s.err;
	}
	in_order(&s);
	*list = s.r;
	*n = s.n;
	return 0;
}
