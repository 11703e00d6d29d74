/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hash.c -- 64-bit content hash of pool ranges (rpmem verify)
 *
 * One multiply-rotate step per 8-byte word (the word order matters
 * because each step depends on the previous one), then a finalizer that
 * spreads every input bit over the result.
 */
#include <string.h>

#include "hash.h"

#define K1 0x9e3779b97f4a7c15ULL
#define K2 0xc2b2ae3d27d4eb4fULL
#define K3 0x165667b19e3779f9ULL

/* rotl -- rotate left */
static inline uint64_t
rotl(uint64_t x, unsigned r)
{
	return (x << r) | (x >> (64 - r));
}

/* step -- fold one word into the state */
static inline uint64_t
step(uint64_t h, uint64_t w)
{
	return rotl(h ^ (w * K2), 31) * K1;
}

/* hash64 -- hash of `len` bytes */
uint64_t
hash64(const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint64_t h = K3 ^ ((uint64_t)len * K1);
	size_t n = len / 8;

	for (size_t i = 0; i < n; i++, p += 8) {
		uint64_t w;
		memcpy(&w, p, sizeof(w));
		h = step(h, w);
	}
	size_t tail = len % 8;
	if (tail) {
		uint64_t w = 0;
		memcpy(&w, p, tail);
		h = step(h, w ^ ((uint64_t)tail << 56));
	}
	h ^= h >> 33;
	h *= K2;
	h ^= h >> 29;
	h *= K3;
	h ^= h >> 32;
	return h;
}

/* hash64_chunks -- one hash per chunk of a range */
void
hash64_chunks(const void *buf, size_t len, size_t chunk, uint64_t *out)
{
	const unsigned char *p = buf;
	while (len) {
		size_t n = len < chunk ? len : chunk;
		*out++ = hash64(p, n);
		p += n;
		len -= n;
	}
}
