/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * apply.c -- turning a lane message into durable pool bytes
 */
#include <errno.h>
#include <string.h>

#include <libpmem.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "apply.h"
#include "log.h"
#include "pool_hdr.h"
#include "range.h"

/*
 * store8 -- one 8-byte store to an aligned word.  On x86-64 a
 * non-temporal one (movnti): still a single 8-byte store, and the bytes
 * skip the cache on their way to memory, which roughly halves rpmemd's
 * CPU time per MiB; apply_copy8 fences them.
 */
static inline void
store8(unsigned char *d, uint64_t w)
{
#if defined(__x86_64__)
	_mm_stream_si64((long long *)(void *)d, (long long)w);
#else
	__atomic_store_n((uint64_t *)(void *)d, w, __ATOMIC_RELAXED);
#endif
}

/* apply_copy8 -- copy with single 8-byte stores for aligned words */
void
apply_copy8(void *dst, const void *src, size_t len)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	/* leading bytes of a word the range only partly covers */
	while (len && ((uintptr_t)d & 7)) {
		*d++ = *s++;
		len--;
	}
	for (; len >= 8; len -= 8, d += 8, s += 8) {
		uint64_t w;
		memcpy(&w, s, sizeof(w));
		store8(d, w);
	}
	while (len--)
		*d++ = *s++;
#if defined(__x86_64__)
	_mm_sfence();
#endif
}

/* apply_persist -- make a range durable, the way the medium needs */
int
apply_persist(const struct apply_pool *p, void *addr, size_t len, bool deep)
{
	if (len == 0)
		return 0;
	if (p->is_pmem) {
		if (deep)
			return pmem_deep_persist(addr, len) ? EIO : 0;
		pmem_persist(addr, len);
		return 0;
	}
	if (pmem_msync(addr, len)) {
		log_err("!msync of %zu bytes at pool offset %zu", len,
			(size_t)((char *)addr - p->base));
		return EIO;
	}
	return 0;
}

/* check_range -- a range a client may write: inside the pool, no header */
static int
check_range(const struct apply_pool *p, uint32_t lane, uint64_t addr,
		uint64_t size, size_t *off)
{
	if (addr < p->raddr || !range_within(addr - p->raddr, size,
			p->size)) {
		log_err("lane %u: range addr 0x%llx size %llu outside the pool",
			lane, (unsigned long long)addr,
			(unsigned long long)size);
		return EINVAL;
	}
	*off = (size_t)(addr - p->raddr);
	if (p->has_headers && *off < POOL_HDR_SIZE && size) {
		log_err("lane %u: offset %zu is inside the pool header", lane,
			*off);
		return EINVAL;
	}
	return 0;
}

/*
 * apply_batch -- the records of a LANE_OP_BATCH or LANE_OP_EPOCHS, all
 * checked before any is stored, each stored 8 bytes at a time and made
 * durable merged with its neighbours, so a run of small flushes costs
 * one persist; but never merged across an epoch's end (`epochs`): what
 * came before it is durable before a byte after it is stored
 */
static int
apply_batch(const struct apply_pool *p, const struct lane_msg *msg,
		size_t size, bool deep, bool epochs)
{
	for (size_t at = 0; at < size;) {
		const struct lane_rec *rec = (const void *)(msg->data + at);
		size_t off;
		uint64_t len = size - at < sizeof(*rec) ? 0 :
			rec->len & ~LANE_REC_END;
		if (size - at < sizeof(*rec) || len > size - at ||
				lane_rec_size((size_t)len) > size - at ||
				(!epochs && (rec->len & LANE_REC_END))) {
			log_err("lane %u: batch record at %zu overruns the "
				"%zu-byte batch", msg->lane, at, size);
			return EINVAL;
		}
		int r = check_range(p, msg->lane, rec->addr, len, &off);
		if (r)
			return r;
		at += lane_rec_size((size_t)len);
	}
	size_t lo = 0, hi = 0;
	bool ended = false;	/* the last record stored ended an epoch */
	for (size_t at = 0; at < size;) {
		const struct lane_rec *rec = (const void *)(msg->data + at);
		size_t off = (size_t)(rec->addr - p->raddr);
		size_t len = (size_t)(rec->len & ~LANE_REC_END);
		bool joins = lo != hi && !ended && off <= hi && off + len >= lo;
		if (lo != hi && !joins) {
			int r = apply_persist(p, p->base + lo, hi - lo, deep);
			if (r)
				return r;
			lo = hi = 0;
		}
		apply_copy8(p->base + off, rec->data, len);
		at += lane_rec_size(len);
		ended = rec->len & LANE_REC_END;
		if (joins) {
			lo = off < lo ? off : lo;
			hi = off + len > hi ? off + len : hi;
		} else {
			lo = off;
			hi = off + len;
		}
	}
	return apply_persist(p, p->base + lo, hi - lo, deep);
}

/* apply_msg -- validate and apply one lane message */
int
apply_msg(const struct apply_pool *p, const struct lane_msg *msg,
		size_t len, struct apply_pending *pending)
{
	if (len < sizeof(*msg)) {
		log_err("lane message of %zu bytes is shorter than its header",
			len);
		return EPROTO;
	}
	uint32_t op = msg->op & LANE_OP_MASK;
	bool deep = msg->op & LANE_F_DEEP;
	bool more = msg->op & LANE_F_MORE;
	if ((msg->op & ~(LANE_OP_MASK | LANE_F_DEEP | LANE_F_MORE)) ||
			(op != LANE_OP_WRITTEN && op != LANE_OP_INLINE &&
			op != LANE_OP_BATCH && op != LANE_OP_EPOCHS) ||
			((op == LANE_OP_BATCH || op == LANE_OP_EPOCHS) &&
			more)) {
		log_err("lane %u: unknown op 0x%x", msg->lane, msg->op);
		return EPROTO;
	}
	size_t size = (size_t)msg->size;
	if (op != LANE_OP_WRITTEN && (msg->size != len - sizeof(*msg) ||
			size > p->buff_size)) {
		log_err("lane %u: inline size %llu in a %zu-byte message "
			"(buffer %zu)", msg->lane,
			(unsigned long long)msg->size, len, p->buff_size);
		return EINVAL;
	}
	if (op == LANE_OP_BATCH || op == LANE_OP_EPOCHS)
		return apply_batch(p, msg, size, deep, op == LANE_OP_EPOCHS);

	size_t off;
	int r = check_range(p, msg->lane, msg->addr, msg->size, &off);
	if (r)
		return r;
	if (op == LANE_OP_INLINE)
		apply_copy8(p->base + off, msg->data, size);

	/* one persist for all pieces of a flush: its last one carries it */
	size_t lo = off, hi = off + size;
	if (pending->lo != pending->hi) {
		lo = pending->lo < lo ? pending->lo : lo;
		hi = pending->hi > hi ? pending->hi : hi;
	}
	if (more) {
		pending->lo = lo;
		pending->hi = hi;
		return 0;
	}
	pending->lo = pending->hi = 0;
	return apply_persist(p, p->base + lo, hi - lo, deep);
}
