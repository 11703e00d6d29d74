/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * view.c -- the library's own mapping of the pool: the application's
 * pages mapped a second time (mremap of a shared mapping with an old
 * size of 0), so that whatever reads the pool in the background (a
 * resync, a reconnect) never reads memory the application has already
 * unmapped.  libpmemobj does exactly that: pmemobj_close unmaps the
 * master copy before it calls rpmem_close.  The view holds the same
 * pages (a file's page cache, or pmem through DAX), so every store the
 * application made is seen through it.
 *
 * Memory that cannot be mapped again (private or anonymous memory, a
 * range with holes, a device that refuses) is read where the
 * application keeps it, as before: such an application must call
 * rpmem_close before it unmaps, which librpmem(3) asks anyway.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "log.h"
#include "view.h"

/*
 * The view starts at the application's address modulo this, so that
 * huge pages (2 MiB, 1 GiB: fs-dax, device dax, tmpfs) fit it as they
 * fit the application's mapping
 */
#define VIEW_ALIGN ((uintptr_t)1 << 30)
#define PIECES_MAX 1024

struct piece {
	uintptr_t start;
	uintptr_t end;
};

/*
 * pieces -- the mappings that make up [a, b), from /proc/self/maps:
 * their number, or -1 when the range has a hole or a private mapping
 */
static int
pieces(uintptr_t a, uintptr_t b, struct piece *p)
{
	FILE *f = fopen("/proc/self/maps", "re");
	if (!f)
		return -1;
	int n = 0;
	uintptr_t at = a;
	char line[4096];
	while (at < b && fgets(line, sizeof(line), f)) {
		uintptr_t s, e;
		char perms[8];
		int got = sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s", &s,
			&e, perms);
		/* a long line (a path) goes on in the next fgets */
		while (!strchr(line, '\n') && fgets(line, sizeof(line), f))
			;
		if (got != 3 || e <= at)
			continue;
		if (s > at || perms[3] != 's' || n == PIECES_MAX) {
			n = -1;
			break;
		}
		p[n].start = at;
		p[n].end = e < b ? e : b;
		at = p[n++].end;
	}
	fclose(f);
	return n > 0 && at == b ? n : -1;
}

/* reserve -- room for the view: `size` bytes at addr's residue */
static char *
reserve(uintptr_t addr, size_t size)
{
	char *r = mmap(NULL, size + VIEW_ALIGN, PROT_NONE,
		MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED)
		return NULL;
	size_t lead = (addr - (uintptr_t)r) & (VIEW_ALIGN - 1);
	if (lead)
		munmap(r, lead);
	munmap(r + lead + size, VIEW_ALIGN - lead);
	return r + lead;
}

/*
 * view_map -- map [addr, addr + size) again; the view, its size in
 * *mapped, or addr itself with *mapped 0 when it cannot be
 */
void *
view_map(void *addr, size_t size, size_t *mapped)
{
	*mapped = 0;
	uintptr_t a = (uintptr_t)addr;
	struct piece *p = malloc(PIECES_MAX * sizeof(*p));
	int n = p ? pieces(a, a + size, p) : -1;
	char *v = n > 0 ? reserve(a, size) : NULL;
	const char *why = !p ? "out of memory" : n < 0 ?
		"not one shared mapping" : !v ? "no address space" : NULL;
	for (int i = 0; v && i < n; i++) {
		void *at = v + (p[i].start - a);
		void *r = mremap((void *)p[i].start, 0,
			p[i].end - p[i].start, MREMAP_MAYMOVE | MREMAP_FIXED,
			at);
		if (r != at) {
			why = strerror(errno);
			munmap(v, size);
			v = NULL;
		}
	}
	free(p);
	if (!v) {
		log_debug("the pool at %p is read where it is mapped (%s)",
			addr, why);
		return addr;
	}
	*mapped = size;
	return v;
}

/* view_unmap -- drop a view view_map made */
void
view_unmap(void *view, size_t mapped)
{
	if (mapped)
		munmap(view, mapped);
}
