/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prefault.c -- a pool's pages faulted in ahead of the client's writes
 *
 * A first write to a page of the replica costs rpmemd a page fault (some
 * 10 us in a VM), which made the first pass over a fresh replica several
 * times slower than later ones.  A thread walks the pool in 2 MiB steps:
 * MADV_POPULATE_WRITE maps each page writable (where nothing is written
 * back: on a file system it would dirty the whole pool, and the next
 * seconds' write-back would copy all of it to disk beside the persists'
 * msyncs), else MADV_POPULATE_READ maps it for reading, after
 * MADV_WILLNEED has read the step in: the mapping is MADV_RANDOM there
 * (db_part.c), so a fault reads one page, and read-ahead by request
 * brings pages of the smallest folio size in large reads (a cold 64 MiB
 * part: 1.0 s page by page, 0.07 s so).  One load per page then takes
 * what a VM's nested paging still charges on a first access.  None
 * changes a byte, so the walk may overlap the client's writes.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "prefault.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define STEP ((size_t)2 << 20)
#define RA_CHUNK ((size_t)128 << 10)	/* the smallest default window */

struct prefault {
	pthread_t thread;
	char *addr;
	size_t len;
	int advice;		/* MADV_POPULATE_WRITE or _READ */
	atomic_bool stop;
};

/* now_ms -- a monotonic clock in milliseconds */
static long long
now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * read_ahead -- read [p, p + n) of a mapped file into the page cache;
 * the kernel reads ahead at most a read-ahead window a call
 */
static void
read_ahead(char *p, size_t n)
{
	for (size_t at = 0; at < n; at += RA_CHUNK)
		(void) madvise(p + at, n - at < RA_CHUNK ? n - at : RA_CHUNK,
			MADV_WILLNEED);
}

/* walk -- populate, then touch, one step at a time until done or told */
static void *
walk(void *arg)
{
	struct prefault *pf = arg;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	long long t0 = now_ms();
	size_t done = 0;
	while (done < pf->len && !atomic_load(&pf->stop)) {
		size_t n = pf->len - done < STEP ? pf->len - done : STEP;
		char *p = pf->addr + done;
		if (pf->advice == MADV_POPULATE_READ)
			read_ahead(p, n);
		if (madvise(p, n, pf->advice) && errno == EINVAL)
			break;	/* a kernel before 5.14 */
		for (size_t at = 0; at < n; at += page)
			(void) *(volatile char *)(p + at);
		done += n;
	}
	log_debug("prefault: %zu of %zu bytes in %lld ms", done, pf->len,
		now_ms() - t0);
	return NULL;
}

/* prefault_start -- start the walk (see prefault.h) */
struct prefault *
prefault_start(void *addr, size_t len, bool writable)
{
	struct prefault *pf = calloc(1, sizeof(*pf));
	if (!pf)
		return NULL;
	pf->addr = addr;
	pf->len = len;
	pf->advice = writable ? MADV_POPULATE_WRITE : MADV_POPULATE_READ;
	atomic_init(&pf->stop, false);
	if (pthread_create(&pf->thread, NULL, walk, pf)) {
		free(pf);
		return NULL;
	}
	return pf;
}

/* prefault_stop -- stop and join the walk */
void
prefault_stop(struct prefault *pf)
{
	if (!pf)
		return;
	atomic_store(&pf->stop, true);
	pthread_join(pf->thread, NULL);
	free(pf);
}
