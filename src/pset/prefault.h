/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prefault.h -- a pool's pages faulted in ahead of the client's writes
 */
#ifndef PSET_PREFAULT_H
#define PSET_PREFAULT_H 1

#include <stdbool.h>
#include <stddef.h>

struct prefault;

/*
 * prefault_start -- fault in [addr, addr + len) from a thread of its own,
 * from the start of the pool up, so that the client's first writes do not
 * pay a page fault each.  Only pages are faulted in; no byte is written.
 * `writable`: mapped for writing, which dirties a file's pages (only
 * where nothing is written back: persistent memory, tmpfs); else for
 * reading.  NULL where the thread cannot start (the pool then faults on
 * demand).
 */
struct prefault *prefault_start(void *addr, size_t len, bool writable);

/* prefault_stop -- stop the thread and wait for it (before munmap) */
void prefault_stop(struct prefault *pf);

#endif
