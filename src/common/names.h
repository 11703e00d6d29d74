/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * names.h -- an enum's values by name: a table of names indexed by value
 */
#ifndef RPMEM_NAMES_H
#define RPMEM_NAMES_H 1

#include <stddef.h>

/*
 * names_find -- the index of `name` in names[from, n), or -EINVAL (name
 * NULL too); entries may be NULL
 */
int names_find(const char *const *names, size_t from, size_t n,
		const char *name);

#endif /* RPMEM_NAMES_H */
