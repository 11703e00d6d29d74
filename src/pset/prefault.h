/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prefault.h -- a pool's pages faulted in ahead of the client's writes
 */
#ifndef PSET_PREFAULT_H
#define PSET_PREFAULT_H 1

#include <stddef.h>

struct prefault;

/*
 * prefault_start -- fault in [addr, addr + len) from a thread of its own,
 * from the start of the pool up, so that the client's first writes do not
 * pay a page fault each.  Only pages are faulted in; no byte is written.
 * NULL where the thread cannot start (the pool then faults on demand).
 */
struct prefault *prefault_start(void *addr, size_t len);

/* prefault_stop -- stop the thread and wait for it (before munmap) */
void prefault_stop(struct prefault *pf);

#endif
