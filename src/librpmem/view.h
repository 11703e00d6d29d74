/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * view.h -- the library's own mapping of the application's pool memory
 * (see view.c)
 */
#ifndef RPMEM_VIEW_H
#define RPMEM_VIEW_H

#include <stddef.h>

void *view_map(void *addr, size_t size, size_t *mapped);
void view_unmap(void *view, size_t mapped);

#endif /* RPMEM_VIEW_H */
