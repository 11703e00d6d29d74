/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * soak_oracle.c -- a client's record outside its pool, and the replica
 * held against it: every acknowledged byte present, every in-flight word
 * of a strict persist wholly old or wholly new
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "soak.h"

_Static_assert(sizeof(struct soak_head) <= SOAK_HDR,
	"the record's head fits its page");

/* soak_state_map -- map (creating with `create`) a client's state file */
int
soak_state_map(const char *path, size_t pool_size, bool create,
		struct soak_state *st)
{
	if (pool_size <= SOAK_HDR || pool_size % SOAK_HDR)
		return -EINVAL;
	int fd = open(path, O_RDWR | O_CLOEXEC | (create ? O_CREAT | O_EXCL :
		0), 0600);
	if (fd < 0)
		return -errno;
	size_t len = SOAK_HDR + 2 * pool_size;
	if (create && ftruncate(fd, (off_t)len)) {
		int e = errno;
		close(fd);
		return -e;
	}
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	int e = errno;
	close(fd);
	if (p == MAP_FAILED)
		return -e;
	st->head = p;
	st->image = (char *)p + SOAK_HDR;
	st->pool = st->image + pool_size;
	st->map_len = len;
	if (create) {
		st->head->magic = SOAK_MAGIC;
		st->head->pool_size = pool_size;
	} else if (st->head->magic != SOAK_MAGIC ||
			st->head->pool_size != pool_size) {
		soak_state_unmap(st);
		return -EINVAL;
	}
	return 0;
}

/* soak_state_unmap -- drop the mapping */
void
soak_state_unmap(struct soak_state *st)
{
	if (st->head)
		munmap(st->head, st->map_len);
	memset(st, 0, sizeof(*st));
}

/* note -- append one finding to `why`, keeping the first few */
static void
note(char *why, size_t len, const char *what, uint64_t off)
{
	size_t n = strlen(why);
	if (n + 64 < len)
		snprintf(why + n, len - n, "%s%s at %#llx", n ? "; " : "",
			what, (unsigned long long)off);
}

/*
 * check_inflight -- a range the lane sent without an acknowledgement:
 * whole aligned words of a strict range old or new as a whole, any other
 * byte old or new on its own
 */
static void
check_inflight(const char *rep, const char *old, const char *new,
		const struct soak_range *r, struct soak_verdict *v, char *why,
		size_t whylen)
{
	uint64_t end = r->off + r->len;
	uint64_t o = r->off;
	while (o < end) {
		uint64_t w = o & ~7ULL;
		if (r->kind == SOAK_STRICT && w == o && o + 8 <= end) {
			if (memcmp(rep + o, old + o, 8) &&
					memcmp(rep + o, new + o, 8)) {
				if (!v->torn)
					note(why, whylen, "torn word", o);
				v->torn++;
			}
			o += 8;
			continue;
		}
		if (rep[o] != old[o] && rep[o] != new[o]) {
			if (!v->corrupt)
				note(why, whylen, "in-flight byte neither "
					"old nor new", o);
			v->corrupt++;
		}
		o++;
	}
	v->inflight += r->len;
}

/* read_part -- pool bytes [SOAK_HDR, size) of a one-part replica */
static int
read_part(const char *part, char *buf, size_t size)
{
	int fd = open(part, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t done = SOAK_HDR;
	while (done < size) {
		ssize_t n = pread(fd, buf + done, size - done, (off_t)done);
		if (n <= 0) {
			int e = n < 0 ? errno : EIO;
			close(fd);
			return -e;
		}
		done += (size_t)n;
	}
	close(fd);
	return 0;
}

/*
 * soak_oracle_check -- hold the replica against the record, then make
 * image and pool agree with it and clear the ranges in flight
 */
int
soak_oracle_check(struct soak_state *st, const char *part,
		struct soak_verdict *v, char *why, size_t whylen)
{
	size_t size = (size_t)st->head->pool_size;
	char *rep = malloc(size);
	char *exp = malloc(size);
	if (!rep || !exp) {
		free(rep);
		free(exp);
		return -ENOMEM;
	}
	memset(v, 0, sizeof(*v));
	why[0] = '\0';
	int r = read_part(part, rep, size);
	if (r) {
		snprintf(why, whylen, "reading %s: %s", part, strerror(-r));
		goto out;
	}
	memcpy(exp, st->image, size);
	for (unsigned l = 0; l < SOAK_MAX_LANES; l++) {
		struct soak_lane *ln = &st->head->lane[l];
		unsigned n = atomic_load(&ln->n);
		bool acked = atomic_load(&ln->acked);
		for (unsigned i = 0; i < n && i < SOAK_MAX_PENDING; i++) {
			const struct soak_range *g = &ln->r[i];
			if (g->off < SOAK_HDR || g->off > size ||
					g->len > size - g->off) {
				note(why, whylen, "bad record", g->off);
				r = -EINVAL;
				goto out;
			}
			/* acknowledged: only the new bytes will do */
			if (acked) {
				memcpy(exp + g->off, st->pool + g->off, g->len);
				continue;
			}
			check_inflight(rep, st->image, st->pool, g, v, why,
				whylen);
			memcpy(exp + g->off, rep + g->off, g->len);
		}
	}
	for (size_t o = SOAK_HDR; o < size; o++) {
		if (exp[o] != rep[o]) {
			if (!v->lost)
				note(why, whylen, "acknowledged byte lost", o);
			v->lost++;
		}
	}
	/* the replica is what the next session starts from */
	memcpy(st->image + SOAK_HDR, rep + SOAK_HDR, size - SOAK_HDR);
	memcpy(st->pool + SOAK_HDR, rep + SOAK_HDR, size - SOAK_HDR);
	for (unsigned l = 0; l < SOAK_MAX_LANES; l++) {
		atomic_store(&st->head->lane[l].n, 0);
		atomic_store(&st->head->lane[l].acked, 0);
	}
out:
	free(rep);
	free(exp);
	return r;
}

/* soak_oracle_reset -- a new, zeroed pool: image and local pool zeroed */
void
soak_oracle_reset(struct soak_state *st)
{
	size_t size = (size_t)st->head->pool_size;
	memset(st->image + SOAK_HDR, 0, size - SOAK_HDR);
	memset(st->pool + SOAK_HDR, 0, size - SOAK_HDR);
	for (unsigned l = 0; l < SOAK_MAX_LANES; l++) {
		atomic_store(&st->head->lane[l].n, 0);
		atomic_store(&st->head->lane[l].acked, 0);
	}
}
