/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpath.c -- helpers of the data-path tests: messages, random bytes,
 * comparisons naming the first difference, pool sets read back from
 * their part files, pools created and opened
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dpath.h"

/* ------------------------------------------------------------ helpers */

/* say -- snprintf into a fixed message buffer, truncating silently */
void
say(char *buf, size_t len, const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	(void) vsnprintf(buf, len, f, ap);
	va_end(ap);
}

/* note -- progress for the log, flushed: a failing test exits at once */
void
note(const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	printf("  ");
	vprintf(f, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
}

/* seed_for -- a per-test seed derived from DATAPATH_SEED and a name */
uint64_t
seed_for(const char *name)
{
	uint64_t h = env.seed;
	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 0x100000001b3ULL;
	return h;
}

/* fill_random -- random bytes into p */
void
fill_random(char *p, size_t len, uint64_t *rng)
{
	while (len >= 8) {
		uint64_t v = tu_rnd(rng);
		memcpy(p, &v, 8);
		p += 8;
		len -= 8;
	}
	if (len) {
		uint64_t v = tu_rnd(rng);
		memcpy(p, &v, len);
	}
}

/* first_diff -- offset of the first differing byte, or SIZE_MAX */
size_t
first_diff(const char *a, const char *b, size_t len)
{
	if (memcmp(a, b, len) == 0)
		return SIZE_MAX;
	for (size_t i = 0; i < len; i++)
		if (a[i] != b[i])
			return i;
	return SIZE_MAX;
}

/* count_diff -- how many bytes differ */
size_t
count_diff(const char *a, const char *b, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		n += a[i] != b[i];
	return n;
}

/* same_bytes -- a[0..len) equals b; names the first difference */
void
same_bytes(const char *got, const char *want, size_t len, size_t base,
	const char *what)
{
	size_t d = first_diff(got, want, len);
	ck_assert_msg(d == SIZE_MAX, "%s: %zu of %zu bytes differ, the first"
		" at pool offset %zu (0x%02x, expected 0x%02x)", what,
		count_diff(got, want, len), len, base + d,
		(unsigned char)got[d], (unsigned char)want[d]);
}

/* failed -- the call gave -1 with errno `err` and said why */
void
failed(int ret, int err, const char *what)
{
	int e = errno;
	ck_assert_msg(ret == -1, "%s: returned %d, expected -1 (%s)", what,
		ret, ename(err));
	ck_assert_msg(e == err, "%s: errno %s (%s), expected %s: %s", what,
		ename(e), strerror(e), ename(err), errmsg());
	ck_assert_msg(errmsg()[0] != '\0', "%s: no rpmem_errormsg()", what);
}

/* attr_make -- pool attributes that mark a pool with headers */
void
attr_make(struct rpmem_pool_attr *a, unsigned char seed)
{
	memset(a, 0, sizeof(*a));
	memcpy(a->signature, "DATAPTH", 8);
	a->major = 1U + seed;
	a->incompat_features = 0x2U;
	for (unsigned i = 0; i < RPMEM_POOL_HDR_UUID_LEN; i++) {
		a->poolset_uuid[i] = (unsigned char)(seed + 1 + i);
		a->uuid[i] = (unsigned char)(0x31 + seed + 3 * i);
	}
}

/* ---------------------------------------------------------- pool sets */

/* set_make -- write poolset-dir/name.set: nparts parts in the part dir */
void
set_make(struct tset *s, const char *name, unsigned nparts,
	size_t part_size, const char *option)
{
	ck_assert_uint_le(nparts, MAX_PARTS);
	memset(s, 0, sizeof(*s));
	fmt(s->desc, sizeof(s->desc), "%s.set", name);
	fmt(s->path, sizeof(s->path), "%s/%s.set", env.t.poolset_dir, name);
	s->nparts = nparts;
	s->part_size = part_size;
	s->headers = option == NULL || strcmp(option, "NOHDRS") != 0;
	s->part_hdrs = option == NULL;
	s->size = part_size * nparts - (s->part_hdrs ? (nparts - 1) * HDR : 0);
	for (unsigned i = 0; i < nparts; i++)
		fmt(s->part[i], sizeof(s->part[i]), "%s/%s.part%u",
			env.t.part_dir, name, i);
	tu_poolset_write(s->path, s->part, nparts, part_size, option);
}

/* set_unlink -- remove the set file and its parts */
void
set_unlink(const struct tset *s)
{
	tu_poolset_unlink(s->path, (const char (*)[PATH_MAX])s->part,
		s->nparts);
}

/* set_locate -- the part and file offset holding pool offset `off` */
void
set_locate(const struct tset *s, size_t off, unsigned *part, size_t *foff,
	size_t *left)
{
	for (unsigned i = 0; i < s->nparts; i++) {
		size_t skip = i > 0 && s->part_hdrs ? HDR : 0;
		size_t span = s->part_size - skip;
		if (off < span) {
			*part = i;
			*foff = skip + off;
			*left = span - off;
			return;
		}
		off -= span;
	}
	ck_abort_msg("pool offset beyond the set's %zu bytes", s->size);
}

/* replica_read -- pool bytes [off, off + len) from the part files */
void
replica_read(const struct tset *s, char *buf, size_t off, size_t len)
{
	while (len) {
		unsigned i;
		size_t foff, left;
		set_locate(s, off, &i, &foff, &left);
		size_t n = len < left ? len : left;
		int fd = open(s->part[i], O_RDONLY | O_CLOEXEC);
		ck_assert_msg(fd >= 0, "%s: %s", s->part[i], strerror(errno));
		for (size_t done = 0; done < n;) {
			ssize_t r = pread(fd, buf + done, n - done,
				(off_t)(foff + done));
			ck_assert_msg(r > 0, "reading %s at %zu: %s",
				s->part[i], foff + done,
				r ? strerror(errno) : "end of file");
			done += (size_t)r;
		}
		close(fd);
		buf += n;
		off += n;
		len -= n;
	}
}

/* replica_image -- the whole pool as the part files hold it */
char *
replica_image(const struct tset *s)
{
	char *img = malloc(s->size);
	ck_assert_ptr_nonnull(img);
	replica_read(s, img, 0, s->size);
	return img;
}

/* pool_made -- rpp, which `what` of s returned on nlanes of `want` */
static RPMEMpool *
pool_made(RPMEMpool *rpp, const char *what, const struct tset *s,
	unsigned nlanes, unsigned want)
{
	if (rpp == NULL) {
		int e = errno;
		ck_abort_msg("%s of %s: %s (%s): %s", what, s->desc, ename(e),
			strerror(e), errmsg());
	}
	ck_assert_msg(nlanes >= 1 && nlanes <= want,
		"%s: nlanes %u for %u requested", what, nlanes, want);
	return rpp;
}

/* pool_create -- create the set's pool, asking for `*nlanes` lanes */
RPMEMpool *
pool_create(const struct tset *s, void *mem, unsigned *nlanes,
	unsigned char seed)
{
	struct rpmem_pool_attr attr;
	attr_make(&attr, seed);
	unsigned want = *nlanes;
	RPMEMpool *rpp = rpmem_create(env.t.target, s->desc, mem, s->size,
		nlanes, s->headers ? &attr : NULL);
	return pool_made(rpp, "create", s, *nlanes, want);
}

/* pool_open -- open the set's pool, asking for `*nlanes` lanes */
RPMEMpool *
pool_open(const struct tset *s, void *mem, unsigned *nlanes)
{
	struct rpmem_pool_attr attr;
	unsigned want = *nlanes;
	RPMEMpool *rpp = rpmem_open(env.t.target, s->desc, mem, s->size,
		nlanes, &attr);
	return pool_made(rpp, "open", s, *nlanes, want);
}

/* probe -- write `len` fresh bytes at off, persist on lane, read back */
void
probe(RPMEMpool *rpp, char *mem, size_t off, size_t len, unsigned lane,
	unsigned flags, uint64_t *rng, const char *what)
{
	char back[256];
	char msg[MSG_MAX];
	ck_assert_uint_le(len, sizeof(back));
	fill_random(mem + off, len, rng);
	say(msg, sizeof(msg), "%s: persist of %zu bytes at %zu on lane %u",
		what, len, off, lane);
	tu_ok(rpmem_persist(rpp, off, len, lane, flags), msg);
	memset(back, 0, sizeof(back));
	say(msg, sizeof(msg), "%s: read back on lane %u", what, lane);
	tu_ok(rpmem_read(rpp, back, off, len, lane), msg);
	same_bytes(back, mem + off, len, off, msg);
}

/* read_full -- read exactly len bytes from fd within ms; false if not */
bool
read_full(int fd, void *buf, size_t len, int ms)
{
	long long deadline = tu_now_ms() + ms;
	char *p = buf;
	while (len) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		long long left = deadline - tu_now_ms();
		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
			return false;
		ssize_t n = read(fd, p, len);
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

/* join_by -- join a thread by an absolute tu_now_ms() deadline */
bool
join_by(pthread_t t, long long deadline)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	long long left = deadline - tu_now_ms();
	if (left < 0)
		left = 0;
	ts.tv_sec += left / 1000;
	ts.tv_nsec += (left % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	return pthread_timedjoin_np(t, NULL, &ts) == 0;
}
