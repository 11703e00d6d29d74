/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * names.c -- the one search of a name table, for the enums whose values
 * have names (log levels, replica states, lane security, providers)
 */
#include <errno.h>
#include <string.h>

#include "names.h"

/* names_find -- the first entry equal to `name` */
int
names_find(const char *const *names, size_t from, size_t n,
		const char *name)
{
	for (size_t i = from; name && i < n; i++)
		if (names[i] && strcmp(name, names[i]) == 0)
			return (int)i;
	return -EINVAL;
}
