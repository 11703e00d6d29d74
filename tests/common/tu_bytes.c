/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tu_bytes.c -- numbers at byte offsets of a message: big-endian ones
 * read and written byte by byte (without endian.h, so that a test does
 * not share the code it checks), host-order u32s as they lie
 */
#include <string.h>

#include "tu.h"

/* tu_be_at -- the `n`-byte big-endian number at `b` + `off` */
uint64_t
tu_be_at(const unsigned char *b, size_t off, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v = (v << 8) | b[off + i];
	return v;
}

/* tu_be_set -- write `v` as an `n`-byte big-endian number at b + off */
void
tu_be_set(unsigned char *b, size_t off, size_t n, uint64_t v)
{
	for (size_t i = n; i > 0; i--) {
		b[off + i - 1] = (unsigned char)(v & 0xff);
		v >>= 8;
	}
}

/* tu_host32_at -- the host-order u32 at `b` + `off` */
uint32_t
tu_host32_at(const unsigned char *b, size_t off)
{
	uint32_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

/* tu_host32_set -- write `v` in host order at `b` + `off` */
void
tu_host32_set(unsigned char *b, size_t off, uint32_t v)
{
	memcpy(b + off, &v, sizeof(v));
}
