/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gc_mt.c -- genclient's soak of many threads (mtsoak) and its oracle
 * (order): the ordering rule of an async replica across lanes
 * (doc/async.md, "The ordering rule")
 *
 * Each thread persists on a lane of its own, 8 B to 64 KiB at random
 * places past the header, so the threads' ranges overlap.  A persist's
 * range is held (a lock per 64 KiB block, taken in order) from before
 * its bytes are stored until it returned, as a correct application
 * holds what it writes: two persists of the same bytes never run at
 * once, one returned before the other began.  Each persist takes a tick
 * of one clock when it begins (the locks held) and once it returned, so
 * "A returned before B began" is A.end < B.begin.  Every word a persist
 * stores names it (its number + 1 in the upper half, a check of seed,
 * number and offset in the lower), so the oracle reads the writer of
 * each word off the word itself.
 *
 * DIR/ops.T, one per thread: "b N OFF LEN TICK" before persist N
 * stores, "e N TICK" once it returned; whole lines, one write() each.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gc.h"
#include "tu.h"

#define BLOCK ((size_t)64 << 10)	/* a range lock's span */
#define MT_MAX_LEN BLOCK		/* the largest persist */
#define THREADS_MAX 16
#define NONE UINT64_MAX

static _Atomic uint64_t Tick;		/* the one clock */
static _Atomic uint64_t Next;		/* the next persist's number */
static pthread_mutex_t *Locks;		/* one per BLOCK of the pool */
static RPMEMpool *Rpp;
static uint64_t Seed;
static const char *Dir;
static _Atomic int Failed;		/* a persist failed: all stop */

/* mt_word -- the word persist n stores at offset off */
static uint64_t
mt_word(uint64_t seed, uint64_t n, size_t off)
{
	uint64_t check = tu_mix(seed * 0x9e3779b97f4a7c15ULL ^
		(n + 1) * 0xc2b2ae3d27d4eb4fULL ^ off);
	return (n + 1) << 32 | (check & 0xffffffffULL);
}

/* logline -- one whole line into the thread's log; 0 or -1 */
static int
logline(int fd, const char *line)
{
	size_t k = strlen(line);
	return write(fd, line, k) == (ssize_t)k ? 0 : -1;
}

/* one persist: lock, log, store, persist, log, unlock; 0 or -1 */
static int
one(int fd, unsigned lane, uint64_t *s)
{
	size_t len = 8 * (1 + tu_rnd(s) % (MT_MAX_LEN / 8));
	size_t off = HDR + (tu_rnd(s) % (Size - HDR - len)) / 8 * 8;
	size_t b0 = off / BLOCK, b1 = (off + len - 1) / BLOCK;
	for (size_t b = b0; b <= b1; b++)
		pthread_mutex_lock(&Locks[b]);
	uint64_t n = atomic_fetch_add(&Next, 1);
	char line[96];
	snprintf(line, sizeof(line), "b %llu %zu %zu %llu\n",
		(unsigned long long)n, off, len,
		(unsigned long long)atomic_fetch_add(&Tick, 1));
	int r = logline(fd, line);
	for (size_t k = 0; !r && k < len; k += 8) {
		uint64_t v = mt_word(Seed, n, off + k);
		memcpy(Pool + off + k, &v, 8);
	}
	if (!r && rpmem_persist(Rpp, off, len, lane, 0)) {
		fprintf(stderr, "genclient: persist %llu on lane %u: %s\n",
			(unsigned long long)n, lane, rpmem_errormsg());
		r = -1;
	}
	if (!r) {
		snprintf(line, sizeof(line), "e %llu %llu\n",
			(unsigned long long)n,
			(unsigned long long)atomic_fetch_add(&Tick, 1));
		r = logline(fd, line);
	}
	for (size_t b = b1 + 1; b-- > b0; )
		pthread_mutex_unlock(&Locks[b]);
	return r;
}

/* worker -- one thread's persists until DIR/stop or a failure */
static void *
worker(void *arg)
{
	unsigned lane = (unsigned)(uintptr_t)arg;
	char path[PATH_MAX], stop[PATH_MAX];
	snprintf(path, sizeof(path), "%s/ops.%u", Dir, lane);
	snprintf(stop, sizeof(stop), "%s/stop", Dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND |
		O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "genclient: %s: %s\n", path, strerror(errno));
		atomic_store(&Failed, 1);
		return NULL;
	}
	uint64_t s = (Seed << 8 | lane) * 0x2545f4914f6cdd1dULL + 1;
	while (!atomic_load(&Failed) && access(stop, F_OK))
		if (one(fd, lane, &s))
			atomic_store(&Failed, 1);
	close(fd);
	return NULL;
}

/* cmd_mtsoak -- THREADS threads of persists until DIR/stop */
int
cmd_mtsoak(uint64_t seed, unsigned threads, const char *dir)
{
	if (threads < 1 || threads > THREADS_MAX) {
		fprintf(stderr, "genclient: 1 to %d threads\n", THREADS_MAX);
		return 1;
	}
	size_t nb = (Size + BLOCK - 1) / BLOCK;
	Locks = calloc(nb, sizeof(*Locks));
	if (!Locks)
		return 1;
	for (size_t b = 0; b < nb; b++)
		pthread_mutex_init(&Locks[b], NULL);
	Seed = seed;
	Dir = dir;
	unsigned nlanes = threads;
	struct rpmem_pool_attr a;
	Rpp = rpmem_open(Target, Set, Pool, Size, &nlanes, &a);
	if (!Rpp || nlanes < threads) {
		fprintf(stderr, "open failed: %s (%u lanes)\n",
			rpmem_errormsg(), nlanes);
		return EXIT_OPEN;
	}
	printf("opened: %u threads\n", threads);
	fflush(stdout);
	pthread_t t[THREADS_MAX];
	for (unsigned i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i);
	for (unsigned i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	if (atomic_load(&Failed))
		return 3;
	return close_pool(Rpp);
}

/* one persist of the logs */
struct op {
	size_t off, len;
	uint64_t b, e;		/* ticks; e NONE: it never returned */
	bool known;
};

/* read_ops -- every DIR/ops.*: the persists by number; NULL on error */
static struct op *
read_ops(const char *dir, uint64_t *count)
{
	struct op *ops = NULL;
	uint64_t cap = 0;
	*count = 0;
	for (unsigned t = 0; t < THREADS_MAX; t++) {
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s/ops.%u", dir, t);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		char kind;
		unsigned long long n, x, y, z;
		int got;
		while ((got = fscanf(f, " %c %llu", &kind, &n)) == 2) {
			if (n >= cap) {
				uint64_t c = cap ? cap : 1024;
				while (c <= n)
					c *= 2;
				struct op *o = realloc(ops, c * sizeof(*o));
				if (!o) {
					fclose(f);
					free(ops);
					return NULL;
				}
				memset(o + cap, 0, (c - cap) * sizeof(*o));
				ops = o;
				cap = c;
			}
			if (kind == 'b' && fscanf(f, "%llu %llu %llu", &x, &y,
					&z) == 3)
				ops[n] = (struct op){ x, y, z, NONE, true };
			else if (kind == 'e' && fscanf(f, "%llu", &x) == 1)
				ops[n].e = x;
			else
				break;	/* a line the kill cut */
			if (n + 1 > *count)
				*count = n + 1;
		}
		fclose(f);
	}
	return ops ? ops : calloc(1, sizeof(*ops));
}

/* writer -- which persist the word at `off` names: its number, NONE
 * for the pool's first pattern, NONE - 1 for no persist (torn, lost) */
static uint64_t
writer(const struct op *ops, uint64_t count, uint64_t v, size_t off)
{
	if (v == word(0, off))
		return NONE;
	uint64_t n = (v >> 32) - 1;
	if ((v >> 32) == 0 || n >= count || !ops[n].known ||
			off < ops[n].off || off >= ops[n].off + ops[n].len ||
			v != mt_word(Seed, n, off))
		return NONE - 1;
	return n;
}

/*
 * cmd_order -- the replica's part PART against the soak's logs: every
 * word holds the pool's first pattern or one of the persists that wrote
 * it, whole; M, the latest beginning of a persist found there; every
 * persist that returned before M holds each of its words, unless a later
 * persist of that word does; the returned persists it lacks hold at
 * most LAG bytes
 */
int
cmd_order(uint64_t seed, const char *dir, const char *part, size_t lag)
{
	Seed = seed;
	uint64_t count;
	struct op *ops = read_ops(dir, &count);
	size_t nw = Size / 8;
	uint64_t *got = malloc(Size), *who = malloc(nw * sizeof(*who));
	int fd = open(part, O_RDONLY);
	if (!ops || !got || !who || fd < 0 ||
			pread(fd, got, Size, 0) != (ssize_t)Size) {
		fprintf(stderr, "genclient: %s: %s\n", part, strerror(errno));
		return 1;
	}
	close(fd);
	int ret = 0;
	uint64_t m = 0, returned = 0, seen = 0;
	for (size_t w = HDR / 8; w < nw; w++) {
		who[w] = writer(ops, count, got[w], w * 8);
		if (who[w] == NONE - 1 && !ret) {
			printf("offset %zu holds no persist's word (torn or "
				"foreign)\n", w * 8);
			ret = 1;
		}
		if (who[w] < NONE - 1 && ops[who[w]].b + 1 > m)
			m = ops[who[w]].b + 1;
	}
	size_t behind = 0;
	for (uint64_t n = 0; n < count; n++) {
		const struct op *a = &ops[n];
		if (!a->known)
			continue;
		returned += a->e != NONE;
		bool whole = true;
		size_t lacks = 0;	/* bytes of it the replica lacks */
		for (size_t w = a->off / 8; w < (a->off + a->len) / 8; w++) {
			uint64_t x = who[w];
			if (x == n || (x < NONE - 1 && ops[x].b > a->b))
				continue;
			whole = false;
			lacks += 8;
			/* returned before a persist the replica holds began */
			if (a->e != NONE && a->e < m && !ret) {
				printf("a hole: persist %llu returned (tick "
					"%llu) before one on the replica began "
					"(tick %llu), its word at %zu is not "
					"there\n", (unsigned long long)n,
					(unsigned long long)a->e,
					(unsigned long long)m - 1, w * 8);
				ret = 1;
			}
		}
		seen += whole;
		if (a->e != NONE)
			behind += lacks;
	}
	printf("replica: %llu of %llu persists whole (%llu returned), the "
		"latest it holds began at tick %llu; %zu bytes of returned "
		"ones behind (bound %zu)\n", (unsigned long long)seen,
		(unsigned long long)count, (unsigned long long)returned,
		(unsigned long long)(m ? m - 1 : 0), behind, lag);
	if (beyond_bound(behind, lag))
		ret = 1;
	free(ops);
	free(got);
	free(who);
	return ret;
}
