/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gc_soak.c -- genclient's soak (random persists, each logged once
 * acknowledged) and its two oracles: every acknowledged persist is on a
 * sync replica (acked), an async replica is the image of a prefix of
 * them (prefix)
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gc.h"
#include "tu.h"

/* soak_seed -- the pattern of persist number `n` */
static uint64_t
soak_seed(uint64_t seed, uint64_t n)
{
	return seed << 24 | (n & 0xffffff);
}

/* cmd_soak -- random persists, each logged once acknowledged */
int
cmd_soak(uint64_t seed, const char *dir)
{
	char path[PATH_MAX], stop[PATH_MAX];
	snprintf(path, sizeof(path), "%s/acks", dir);
	snprintf(stop, sizeof(stop), "%s/stop", dir);
	int log = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (log < 0) {
		fprintf(stderr, "genclient: %s: %s\n", path, strerror(errno));
		return 1;
	}
	RPMEMpool *rpp = open_pool();
	if (!rpp)
		return EXIT_OPEN;
	/* numbers go on from where an earlier run of the soak left them */
	uint64_t n = 0;
	FILE *old = fopen(path, "r");
	for (int c; old && (c = getc(old)) != EOF; )
		n += c == '\n';
	if (old)
		fclose(old);
	uint64_t s = (seed + n) * 0x2545f4914f6cdd1dULL + 1;
	for (; access(stop, F_OK); n++) {
		size_t len = 8 * (1 + tu_rnd(&s) % 32768);
		size_t off = HDR + (tu_rnd(&s) % (Size - HDR - len)) / 8 * 8;
		pattern(soak_seed(seed, n), off, len);
		if (rpmem_persist(rpp, off, len, (unsigned)(n % 4), 0)) {
			fprintf(stderr, "genclient: persist %llu: %s\n",
				(unsigned long long)n, rpmem_errormsg());
			(void) rpmem_close(rpp);
			return 3;
		}
		char line[64];
		int k = snprintf(line, sizeof(line), "%llu %zu %zu\n",
			(unsigned long long)n, off, len);
		if (write(log, line, (size_t)k) != k) {
			fprintf(stderr, "genclient: %s: %s\n", path,
				strerror(errno));
			return 1;
		}
	}
	close(log);
	return close_pool(rpp);
}

/*
 * later -- does `got` at word w hold the pattern of a persist numbered
 * from `from` to `to`?  A run of the soak numbers its persists on from
 * the acknowledged ones, so a higher number was issued later; one an
 * earlier run had in flight when it failed or was killed (its bytes in
 * the master's memory, and so in a resync from it) reused its number for
 * another range: its ranges are not in the log
 */
static bool
later(uint64_t seed, uint64_t got, size_t w, uint64_t from, uint64_t to)
{
	for (uint64_t q = from; q <= to; q++)
		if (got == word(soak_seed(seed, q), w * 8))
			return true;
	return false;
}

/*
 * cmd_acked -- the first `upto` acknowledged persists, as the last one
 * to write each word left it, are in the part file `part`, but where a
 * later one put its own: an acknowledged one (the promote began
 * meanwhile, so it may have landed before the session ended), or one in
 * flight, of this run or of an earlier one (later)
 */
int
cmd_acked(uint64_t seed, const char *acks, long long upto, const char *part)
{
	size_t nw = Size / 8;
	uint64_t *last = calloc(nw, sizeof(*last));
	uint64_t *got = calloc(nw, sizeof(*got));
	FILE *f = fopen(acks, "r");
	int fd = open(part, O_RDONLY);
	if (!last || !got || !f || fd < 0 ||
			pread(fd, got, Size, 0) != (ssize_t)Size) {
		fprintf(stderr, "genclient: %s or %s: %s\n", acks, part,
			strerror(errno));
		return 1;
	}
	unsigned long long n, final = 0;
	size_t off, len;
	long long k = 0;
	while (fscanf(f, "%llu %zu %zu", &n, &off, &len) == 3) {
		bool early = upto < 0 || k++ < upto;
		for (size_t w = off / 8; w < (off + len) / 8; w++) {
			if (early)
				last[w] = n + 1;
			else if (last[w] && got[w] == word(soak_seed(seed, n),
					w * 8))
				last[w] = 0;	/* a later one landed */
		}
		final = n;
	}
	fclose(f);
	int ret = 0;
	for (size_t w = HDR / 8; !ret && w < nw; w++) {
		if (!last[w] || got[w] == word(soak_seed(seed, last[w] - 1),
				w * 8) || later(seed, got[w], w, last[w],
				final + 1))
			continue;
		printf("acknowledged persist %llu is not in %s at offset "
			"%zu\n", (unsigned long long)last[w] - 1, part, w * 8);
		ret = 1;
	}
	printf("%lld acknowledged persists checked: %s\n", upto < 0 ? k :
		upto, ret ? "one is missing" : "all there");
	close(fd);
	free(last);
	free(got);
	return ret;
}

/* one persist of the soak's log */
struct ack {
	uint64_t n;
	size_t off, len;
};

/* read_acks -- the soak's log, in order; NULL with the reason */
static struct ack *
read_acks(const char *path, size_t *count)
{
	FILE *f = fopen(path, "r");
	struct ack *a = NULL;
	size_t cap = 0, k = 0;
	unsigned long long n;
	size_t off, len;
	while (f && fscanf(f, "%llu %zu %zu", &n, &off, &len) == 3) {
		if (k == cap) {
			cap = cap ? 2 * cap : 1024;
			struct ack *b = realloc(a, cap * sizeof(*a));
			if (!b)
				break;
			a = b;
		}
		a[k++] = (struct ack){ n, off, len };
	}
	if (!f) {
		fprintf(stderr, "genclient: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	fclose(f);
	*count = k;
	return a ? a : calloc(1, sizeof(*a));
}

/*
 * cmd_prefix -- the replica is the image after a prefix of the soak's
 * persists (the last one of it possibly in part): for each word, which
 * persist's pattern it holds (the newest that wrote it, of those in ACKS
 * or the one in flight after them); the newest of all, M, ends the
 * prefix; then every word must hold what the persists before M left
 * there, or M's own bytes
 */
int
cmd_prefix(uint64_t seed, const char *acks, const char *part, size_t lag)
{
	size_t nw = Size / 8, k;
	struct ack *a = read_acks(acks, &k);
	int64_t *seen = malloc(nw * sizeof(*seen));	/* persist index */
	int64_t *last = malloc(nw * sizeof(*last));
	uint64_t *got = malloc(nw * sizeof(*got));
	int fd = open(part, O_RDONLY);
	if (!a || !seen || !last || !got || fd < 0 ||
			pread(fd, got, Size, 0) != (ssize_t)Size) {
		fprintf(stderr, "genclient: %s: %s\n", part, strerror(errno));
		return 1;
	}
	close(fd);
	uint64_t flight = k ? a[k - 1].n + 1 : 0;
	int64_t m = -1;
	for (size_t w = HDR / 8; w < nw; w++) {
		seen[w] = -1;
		last[w] = -1;
		if (got[w] == word(soak_seed(seed, flight), w * 8))
			seen[w] = (int64_t)k;
	}
	for (size_t i = 0; i < k; i++)
		for (size_t w = a[i].off / 8; w < (a[i].off + a[i].len) / 8;
				w++)
			if (seen[w] < (int64_t)i && got[w] ==
					word(soak_seed(seed, a[i].n), w * 8))
				seen[w] = (int64_t)i;
	for (size_t w = HDR / 8; w < nw; w++)
		m = seen[w] > m ? seen[w] : m;
	/* the image of the persists before m */
	for (int64_t i = 0; i < m && i < (int64_t)k; i++)
		for (size_t w = a[i].off / 8; w < (a[i].off + a[i].len) / 8;
				w++)
			last[w] = i;
	int ret = 0;
	for (size_t w = HDR / 8; !ret && w < nw; w++) {
		uint64_t want = last[w] < 0 ? word(0, w * 8) :
			word(soak_seed(seed, a[last[w]].n), w * 8);
		if (got[w] == want || (m >= 0 && seen[w] == m))
			continue;
		printf("a hole: offset %zu holds %s, the prefix of %lld "
			"persists left persist %lld's bytes there\n", w * 8,
			seen[w] < 0 ? "no persist's bytes (torn, or lost)" :
			"an earlier persist's bytes", (long long)m,
			(long long)last[w]);
		ret = 1;
	}
	/* what was acknowledged and is not on the replica: the persists
	 * after m, and the words of m it lacks */
	size_t behind = 0;
	for (size_t i = m < 0 ? 0 : (size_t)m + 1; i < k; i++)
		behind += a[i].len;
	for (size_t w = m < 0 || m >= (int64_t)k ? 0 : a[m].off / 8;
			m >= 0 && m < (int64_t)k &&
			w < (a[m].off + a[m].len) / 8; w++)
		behind += seen[w] == m ? 0 : 8;
	printf("replica: the first %lld of %zu acknowledged persists%s, "
		"%zu bytes behind (bound %zu)\n", m < 0 ? 0LL : (long long)m,
		k, m == (int64_t)k ? " and the one in flight" : "", behind,
		lag);
	if (beyond_bound(behind, lag))
		ret = 1;
	free(a);
	free(seen);
	free(last);
	free(got);
	return ret;
}
