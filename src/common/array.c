/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * array.c -- the one way an array grows to take one more element
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "array.h"

/* array_grow -- double *arr when element n does not fit */
int
array_grow(void *arr, size_t n, size_t *cap, size_t size, size_t first)
{
	void **p = arr;
	if (n < *cap)
		return 0;
	size_t c = *cap ? 2 * *cap : first;
	if (c < *cap || c > SIZE_MAX / size)
		return -ENOMEM;
	void *q = realloc(*p, c * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}
