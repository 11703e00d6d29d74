/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * array.h -- arrays that grow by doubling as elements are appended
 */
#ifndef RPMEM_ARRAY_H
#define RPMEM_ARRAY_H 1

#include <stddef.h>

/*
 * array_grow -- make the array *arr, room for *cap elements of `size`
 * bytes, hold element n: when n reaches *cap it is reallocated to twice
 * *cap (`first` elements when it has none).  0, or -ENOMEM with *arr and
 * *cap as they were.
 */
int array_grow(void *arr, size_t n, size_t *cap, size_t size, size_t first);

#endif /* RPMEM_ARRAY_H */
