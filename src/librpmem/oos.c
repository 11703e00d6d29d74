/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * oos.c -- the out-of-sync bitmap of a degraded handle (see oos.h)
 */
#include <errno.h>
#include <stdlib.h>

#include "oos.h"

#define WORD_BITS 64

/* oos_init -- a clear record of a `size`-byte pool */
int
oos_init(struct oos *o, size_t size)
{
	size_t chunks = (size + OOS_CHUNK - 1) / OOS_CHUNK;
	o->size = size;
	o->nwords = (chunks + WORD_BITS - 1) / WORD_BITS;
	o->words = calloc(o->nwords ? o->nwords : 1, sizeof(*o->words));
	return o->words ? 0 : -ENOMEM;
}

/* oos_fini -- free it */
void
oos_fini(struct oos *o)
{
	free(o->words);
	o->words = NULL;
}

/* mark_bits -- set chunks [first, last] */
static void
mark_bits(struct oos *o, size_t first, size_t last)
{
	for (size_t c = first; c <= last; ) {
		size_t w = c / WORD_BITS, b = c % WORD_BITS;
		size_t n = WORD_BITS - b;
		if (n > last - c + 1)
			n = last - c + 1;
		uint64_t m = n == WORD_BITS ? ~0ULL :
			((1ULL << n) - 1) << b;
		atomic_fetch_or_explicit(&o->words[w], m,
			memory_order_release);
		c += n;
	}
}

/* oos_mark -- record [off, off + len) as out of sync */
void
oos_mark(struct oos *o, size_t off, size_t len)
{
	if (len == 0 || off >= o->size)
		return;
	size_t end = len > o->size - off ? o->size : off + len;
	mark_bits(o, off / OOS_CHUNK, (end - 1) / OOS_CHUNK);
}

/* oos_mark_all -- record the whole pool from `from` on */
void
oos_mark_all(struct oos *o, size_t from)
{
	if (from < o->size)
		oos_mark(o, from, o->size - from);
}

/* chunk_len -- bytes of chunk c (the last one may be shorter) */
static size_t
chunk_len(const struct oos *o, size_t c)
{
	size_t off = c * OOS_CHUNK;
	return o->size - off < OOS_CHUNK ? o->size - off : OOS_CHUNK;
}

/* oos_bytes -- bytes recorded */
size_t
oos_bytes(const struct oos *o)
{
	size_t sum = 0;
	for (size_t w = 0; w < o->nwords; w++) {
		uint64_t v = atomic_load_explicit(&o->words[w],
			memory_order_relaxed);
		if (!v)
			continue;
		size_t n = (size_t)__builtin_popcountll(v);
		sum += n * OOS_CHUNK;
		/* the pool's last chunk may be short */
		size_t lastc = (o->size - 1) / OOS_CHUNK;
		if (w == lastc / WORD_BITS && (v >> (lastc % WORD_BITS)) & 1)
			sum -= OOS_CHUNK - chunk_len(o, lastc);
	}
	return sum;
}

/* next_set -- the first set chunk at or after c, or SIZE_MAX */
static size_t
next_set(const struct oos *o, size_t c)
{
	size_t chunks = (o->size + OOS_CHUNK - 1) / OOS_CHUNK;
	while (c < chunks) {
		size_t w = c / WORD_BITS, b = c % WORD_BITS;
		uint64_t v = atomic_load_explicit(&o->words[w],
			memory_order_relaxed) >> b;
		if (v)
			return c + (size_t)__builtin_ctzll(v);
		c = (w + 1) * WORD_BITS;
	}
	return SIZE_MAX;
}

/* take_bit -- clear chunk c; was it set? */
static bool
take_bit(struct oos *o, size_t c)
{
	uint64_t m = 1ULL << (c % WORD_BITS);
	uint64_t was = atomic_fetch_and_explicit(&o->words[c / WORD_BITS],
		~m, memory_order_acq_rel);
	return (was & m) != 0;
}

/* oos_take -- take up to `max` bytes of contiguous recorded chunks */
bool
oos_take(struct oos *o, size_t *pos, size_t max, size_t *off, size_t *len)
{
	size_t c = next_set(o, *pos / OOS_CHUNK);
	while (c != SIZE_MAX && !take_bit(o, c))
		c = next_set(o, c + 1);
	if (c == SIZE_MAX) {
		*pos = o->size;
		return false;
	}
	*off = c * OOS_CHUNK;
	*len = chunk_len(o, c);
	size_t chunks = (o->size + OOS_CHUNK - 1) / OOS_CHUNK;
	while (*len + OOS_CHUNK <= max && ++c < chunks && take_bit(o, c))
		*len += chunk_len(o, c);
	*pos = *off + *len;
	return true;
}

/* oos_ranges -- the record as ranges */
int
oos_ranges(const struct oos *o, struct rstate_range **r, size_t *n)
{
	size_t cap = 0;
	*r = NULL;
	*n = 0;
	for (size_t c = next_set(o, 0); c != SIZE_MAX;
			c = next_set(o, c + 1)) {
		size_t off = c * OOS_CHUNK, len = chunk_len(o, c);
		struct rstate_range *last = *n ? &(*r)[*n - 1] : NULL;
		if (last && (last->off + last->len == off ||
				*n == RSTATE_RANGES_MAX)) {
			last->len = off + len - last->off;
			continue;
		}
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			void *p = realloc(*r, cap * sizeof(**r));
			if (!p) {
				free(*r);
				*r = NULL;
				*n = 0;
				return -ENOMEM;
			}
			*r = p;
		}
		(*r)[(*n)++] = (struct rstate_range){ off, len };
	}
	return 0;
}
