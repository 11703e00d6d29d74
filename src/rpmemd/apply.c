/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * apply.c -- turning a lane message into durable pool bytes
 */
#include <errno.h>
#include <string.h>

#include <libpmem.h>

#include "apply.h"
#include "log.h"
#include "pool_hdr.h"
#include "range.h"

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
		__atomic_store_n((uint64_t *)(void *)d, w, __ATOMIC_RELAXED);
	}
	while (len--)
		*d++ = *s++;
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
			(op != LANE_OP_WRITTEN && op != LANE_OP_INLINE)) {
		log_err("lane %u: unknown op 0x%x", msg->lane, msg->op);
		return EPROTO;
	}
	if (msg->addr < p->raddr || !range_within(msg->addr - p->raddr,
			msg->size, p->size)) {
		log_err("lane %u: range addr 0x%llx size %llu outside the pool",
			msg->lane, (unsigned long long)msg->addr,
			(unsigned long long)msg->size);
		return EINVAL;
	}
	size_t off = (size_t)(msg->addr - p->raddr);
	size_t size = (size_t)msg->size;
	if (p->has_headers && off < POOL_HDR_SIZE && size) {
		log_err("lane %u: offset %zu is inside the pool header",
			msg->lane, off);
		return EINVAL;
	}
	char *dst = p->base + off;
	if (op == LANE_OP_INLINE) {
		if (size != len - sizeof(*msg) || size > p->buff_size) {
			log_err("lane %u: inline size %zu in a %zu-byte message"
				" (buffer %zu)", msg->lane, size, len,
				p->buff_size);
			return EINVAL;
		}
		apply_copy8(dst, msg->data, size);
	}
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
