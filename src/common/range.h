/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * range.h -- overflow-safe bounds checks, the one place they live
 */
#ifndef RPMEM_RANGE_H
#define RPMEM_RANGE_H 1

#include <stdbool.h>
#include <stdint.h>

/*
 * range_within -- true when [off, off + len) lies inside [0, size);
 * never computes off + len, so it cannot wrap.
 */
static inline bool
range_within(uint64_t off, uint64_t len, uint64_t size)
{
	return len <= size && off <= size - len;
}

/* range_add_ok -- true when a + b does not wrap; stores the sum */
static inline bool
range_add_ok(uint64_t a, uint64_t b, uint64_t *sum)
{
	return !__builtin_add_overflow(a, b, sum);
}

#endif /* RPMEM_RANGE_H */
