/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pmemobj_heap.c -- the bytes of a libpmemobj heap that libpmemobj writes
 * and never persists, found by walking the zone, chunk and run headers
 * of the heap as the master holds them
 *
 * The heap's layout, as libpmemobj 1.7 to 1.12 write it (format 6,
 * x86_64; PMDK 1.12.1's src/libpmemobj/heap_layout.h): a 1 KiB heap
 * header (a 16-byte signature "MEMORY_HEAP_HDR", major 1, minor, a word
 * unused, the chunk size, 256 KiB, and the chunks a zone holds, 65528),
 * then the zones, one after the other, each ZONE_SPAN bytes but the last:
 * a 64-byte zone header (magic 0xC3F0A2D2, how many chunks the zone
 * uses), a table of 65528 8-byte chunk headers (type, flags: 16 bits
 * each; size in chunks: 32 bits), then the chunks.  A block of chunks
 * starts with a header naming its type and size; the walk steps from one
 * block to the next.  A run (small objects) starts its first chunk with
 * its unit size and alignment (8 bytes each) and the bitmap of its units.
 *
 * Three kinds of bytes there are written with plain stores and never
 * handed to a persist, so a replica that got every persist still holds
 * other bytes (PMDK 1.12.1's memblock.c, container_ravl.c and ulog.c):
 *
 * - Chunk headers after the first of a huge block (free or used).  The
 *   last is the block's footer, a copy of its header that lets the
 *   block after it find it; libpmemobj writes it when it makes the
 *   block and again each time it opens the pool, never persisting it.
 *   Those between are footers of smaller blocks since merged.  Nothing
 *   reads them from media: a heap is walked from block to block.
 *
 * - The head of a free chunk: the first HEAD_SPAN bytes of a chunk,
 *   where they are free space.  While a huge block is free, libpmemobj
 *   keeps its entry in its index of free blocks (its in-memory
 *   description, 48 bytes with two pointers) inside the block, after
 *   where the block's allocation header would go (0, 16 or 64 bytes, by
 *   the chunk's flags), so within 112 bytes of its first chunk.  The
 *   entry stays when the chunk becomes part of a larger free block, or
 *   of a run, where it lies in free units until one is allocated.  So
 *   the head of every chunk of a free block is skipped, and in a run
 *   the free part of the head of each of its chunks.
 *
 * - A freed undo log's generation number.  An undo log that outgrows its
 *   lane chains logs allocated in the heap; the generation number of the
 *   second (24 bytes into it; a log starts at the first cache line of
 *   its object) is counted up unpersisted (pmemobj_skip.c), and each
 *   pmemobj_open frees those logs, leaving the number in a free unit or
 *   chunk.  So in every free unit of a run, the 8 bytes where a log
 *   allocated there would keep its number are skipped (in a free chunk
 *   they lie in its head).
 *
 * Nothing of an allocated object is skipped, nor a run's header and
 * bitmap (libpmemobj persists them).  In a run whose units are aligned
 * (CHUNK_FLAG_ALIGNED) nothing is: where its units start depends on the
 * address libpmemobj mapped the pool at.
 *
 * Everything is read from the master's mapping with bounds checked; a
 * header that does not make sense ends the walk of its zone, keeping
 * only what was found before it.
 */
#include <stdbool.h>
#include <string.h>

#include "pmemobj_skip.h"

#define HEAP_HDR_SIZE 1024
#define HEAP_SIG "MEMORY_HEAP_HDR"	/* 16 bytes with the NUL */
#define HEAP_MAJOR 1
#define CHUNK ((size_t)256 << 10)
#define ZONE_CHUNKS 65528
#define ZONE_HDR_SIZE 64
#define ZONE_MAGIC 0xC3F0A2D2U
#define CHUNK_HDR_SIZE 8
#define ZONE_META (ZONE_HDR_SIZE + (size_t)ZONE_CHUNKS * CHUNK_HDR_SIZE)
#define ZONE_SPAN (ZONE_META + (size_t)ZONE_CHUNKS * CHUNK)

/* chunk types and flags */
#define TYPE_FREE 2
#define TYPE_USED 3
#define TYPE_RUN 4
#define FLAG_COMPACT 0x0001U
#define FLAG_NO_HEADER 0x0002U
#define FLAG_ALIGNED 0x0004U
#define FLAG_FLEX_BITMAP 0x0008U

/* a run: unit size, alignment, then the bitmap */
#define RUN_HDR_SIZE 16
#define RUN_FIXED_BITMAP 304	/* the bitmap of runs without FLEX_BITMAP */
#define RUN_FIXED_UNITS (RUN_FIXED_BITMAP * 8)
#define CACHELINE 64

/* the head of a free chunk: an index entry after a 64-byte header */
#define HEAD_SPAN 112
#define ULOG_GEN 24		/* an undo log's generation number */

/* one chunk header */
struct chunk_hdr {
	unsigned type, flags;
	uint32_t size;		/* in chunks */
};

/* the heap being walked */
struct heap {
	struct pmemobj_skips *s;
	const unsigned char *pool;
	size_t size;		/* of the pool: nothing is read beyond */
	size_t zone;		/* offset of the current zone */
};

/* hdr_off -- where chunk header i of the zone lies */
static size_t
hdr_off(const struct heap *h, size_t i)
{
	return h->zone + ZONE_HDR_SIZE + i * CHUNK_HDR_SIZE;
}

/* chunk_off -- where chunk i of the zone lies */
static size_t
chunk_off(const struct heap *h, size_t i)
{
	return h->zone + ZONE_META + i * CHUNK;
}

/* chunk_hdr -- chunk header i of the zone */
static struct chunk_hdr
chunk_hdr(const struct heap *h, size_t i)
{
	uint64_t v = pmemobj_load64(h->pool, hdr_off(h, i));
	return (struct chunk_hdr){ (unsigned)(v & 0xffff),
		(unsigned)((v >> 16) & 0xffff), (uint32_t)(v >> 32) };
}

/* the geometry of a run's units */
struct run {
	size_t start, end;	/* the run's chunks */
	size_t hdr;		/* an object's allocation header */
	size_t data;		/* its first unit */
	size_t unit;		/* unit size */
	size_t nbits;		/* units */
	size_t bitmap;		/* offset of the bitmap */
};

/*
 * run_geometry -- where a run's units lie, as libpmemobj computes it from
 * the header's flags and the run's unit size and alignment; false when
 * that cannot be told
 */
static bool
run_geometry(const struct heap *h, size_t first, struct chunk_hdr c,
		struct run *r)
{
	r->start = chunk_off(h, first);
	r->end = r->start + c.size * CHUNK;
	r->unit = pmemobj_load64(h->pool, r->start);
	uint64_t align = pmemobj_load64(h->pool, r->start + 8);
	r->bitmap = r->start + RUN_HDR_SIZE;
	r->hdr = (c.flags & FLAG_COMPACT) ? 16 :
		(c.flags & FLAG_NO_HEADER) ? 0 : 64;
	size_t content = r->end - r->bitmap;
	if (r->unit == 0 || r->unit > content || (c.flags & FLAG_ALIGNED))
		return false;
	size_t bitmap;
	if (c.flags & FLAG_FLEX_BITMAP) {
		/* the bitmap, in words, ends where a cache line does */
		size_t words = (content / r->unit + 63) / 64;
		size_t per_line = CACHELINE / 8;
		size_t meta = RUN_HDR_SIZE / 8;
		words = (words + meta + per_line - 1) / per_line * per_line -
			meta;
		bitmap = words * 8;
		if (bitmap >= content)
			return false;
		r->nbits = (content - bitmap) / r->unit;
	} else {
		bitmap = RUN_FIXED_BITMAP;
		r->nbits = (content - bitmap) / r->unit;
		if (r->nbits > RUN_FIXED_UNITS)
			r->nbits = RUN_FIXED_UNITS;
	}
	if (align && r->nbits)
		r->nbits--;
	r->data = r->bitmap + bitmap;
	return true;
}

/* unit_used -- unit u of the run is allocated (its bit is set) */
static bool
unit_used(const struct heap *h, const struct run *r, size_t u)
{
	if (u >= r->nbits)
		return false;
	uint64_t word = pmemobj_load64(h->pool, r->bitmap + u / 64 * 8);
	return (word >> (u % 64)) & 1;
}

/*
 * run_span -- skip, as `what`, what of [b, e) inside the run is free:
 * neither the run's header and bitmap nor an allocated unit
 */
static void
run_span(const struct heap *h, const struct run *r, size_t b, size_t e,
		const char *what)
{
	if (b < r->data)
		b = r->data;
	if (e > r->end)
		e = r->end;
	while (b < e) {
		size_t u = (b - r->data) / r->unit;
		size_t ue = r->data + (u + 1) * r->unit;
		size_t pe = ue < e ? ue : e;
		if (!unit_used(h, r, u))
			pmemobj_skip_add(h->s, b, pe - b, what);
		b = pe;
	}
}

/* huge_block -- the headers after its first; a free one's entries */
static void
huge_block(const struct heap *h, size_t first, struct chunk_hdr c)
{
	if (c.size > 1)
		pmemobj_skip_add(h->s, hdr_off(h, first + 1),
			(c.size - 1) * CHUNK_HDR_SIZE, pmemobj_skip_footer);
	if (c.type != TYPE_FREE)
		return;
	for (size_t k = first; k < first + c.size; k++)
		pmemobj_skip_add(h->s, chunk_off(h, k), HEAD_SPAN,
			pmemobj_skip_head);
}

/*
 * run_block -- in each free unit, where a freed undo log kept its
 * generation number; the free part of the head of each of its chunks
 */
static void
run_block(const struct heap *h, size_t first, struct chunk_hdr c)
{
	struct run r;
	if (!run_geometry(h, first, c, &r))
		return;
	for (size_t u = 0; u < r.nbits; u++) {
		if (unit_used(h, &r, u))
			continue;
		size_t log = r.data + u * r.unit + r.hdr;
		log = (log + CACHELINE - 1) / CACHELINE * CACHELINE;
		run_span(h, &r, log + ULOG_GEN, log + ULOG_GEN +
			sizeof(uint64_t), pmemobj_skip_freed_gen);
	}
	for (size_t k = first; k < first + c.size; k++)
		run_span(h, &r, chunk_off(h, k), chunk_off(h, k) + HEAD_SPAN,
			pmemobj_skip_head);
}

/*
 * zone_walk -- from block to block through the zone's `n` chunks; the
 * walk ends at a header that does not make sense
 */
static void
zone_walk(const struct heap *h, size_t n)
{
	for (size_t i = 0; i < n; ) {
		struct chunk_hdr c = chunk_hdr(h, i);
		if (c.size == 0 || c.size > n - i)
			return;
		if (c.type == TYPE_FREE || c.type == TYPE_USED)
			huge_block(h, i, c);
		else if (c.type == TYPE_RUN)
			run_block(h, i, c);
		else
			return;
		i += c.size;
	}
}

/* heap_known -- the heap header is that of libpmemobj's format */
static bool
heap_known(const unsigned char *pool, size_t size, size_t heap_off)
{
	if (heap_off > size || size - heap_off < HEAP_HDR_SIZE + ZONE_META)
		return false;
	const unsigned char *p = pool + heap_off;
	return memcmp(p, HEAP_SIG, sizeof(HEAP_SIG)) == 0 &&
		pmemobj_load64(pool, heap_off + 16) == HEAP_MAJOR &&
		pmemobj_load64(pool, heap_off + 40) == CHUNK &&
		pmemobj_load64(pool, heap_off + 48) == ZONE_CHUNKS;
}

/* pmemobj_heap_skips -- every zone in use, walked */
bool
pmemobj_heap_skips(struct pmemobj_skips *s, const unsigned char *pool,
		size_t size, size_t heap_off)
{
	if (!heap_known(pool, size, heap_off))
		return false;
	struct heap h = { s, pool, size, heap_off + HEAP_HDR_SIZE };
	for (; h.zone <= size - ZONE_META; h.zone += ZONE_SPAN) {
		size_t fit = (size - h.zone - ZONE_META) / CHUNK;
		uint64_t zh = pmemobj_load64(pool, h.zone);
		uint32_t n = (uint32_t)(zh >> 32);
		if ((uint32_t)zh == ZONE_MAGIC && n <= ZONE_CHUNKS && n <= fit)
			zone_walk(&h, n);
		if (size - h.zone < ZONE_SPAN + ZONE_META)
			break;
	}
	return true;
}
