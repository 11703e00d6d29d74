/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * datapath.c -- data-path tests: persist, flush, drain, read through rpmemd
 *
 * Started by datapath.sh, which runs a private sshd on 127.0.0.1 and sets
 * RPMEM_SSH, RPMEM_CMD and RPMEM_TIMEOUT (read by librpmem once, at load)
 * and:
 *
 *   RPMEM_TEST_TARGET        [user@]127.0.0.1:port of that sshd
 *   RPMEM_TEST_POOLSET_DIR   rpmemd's --poolset-dir (absolute)
 *   RPMEM_TEST_PART_DIR      where the tests' part files go
 *   RPMEM_TEST_LOG_DIR       rpmemd's logs: one file per session, named
 *                            rpmemd.<pid>.<nanoseconds>.log
 *   RPMEM_TEST_MAX_LANES     rpmemd's max-lanes
 *   RPMEM_TEST_GATE          stray: a fifo; ssh's output after rpmemd's
 *                            start-up status is held until a line comes
 *   DATAPATH_SEED            seed of the random mixes (default: the time)
 *   DATAPATH_OPS             operations per thread in a mix (default 400)
 *   DATAPATH_TORN_ITERS      persists of the torn-word test (default 2000)
 *
 * argv[1] names the group: data, fault or stray.  The target is this
 * host, so the tests read the replica's part files directly; the pid of
 * the rpmemd serving a test comes from the name of its new log file.
 * Each test uses its own pool set names and removes its files.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <arpa/inet.h>
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
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
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include "fab.h"	/* struct lane_conn: what a stray client imitates */
#include "itest.h"
#include "tu.h"
#include "librpmem.h"

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)
#define HDR ((size_t)4096)	/* pool header; header of each later part */
#define NLANES 4U
#define MAX_PARTS 2
#define MSG_MAX 1024
#define MAX_LOGS 2048
#define LOG_NAME_MAX 96
#define NPAT 15			/* torn test: patterns 0x11..11 * 1..15 */
#define PAT_UNIT 0x1111111111111111ULL

static struct {
	const char *target;
	const char *poolset_dir;
	const char *part_dir;
	const char *log_dir;
	const char *gate;
	uint64_t seed;
	unsigned ops;
	unsigned torn_iters;
	unsigned max_lanes;
	int timeout_ms;		/* RPMEM_TIMEOUT */
} env;

/* a pool set file, its parts, and how pool offsets map onto them */
struct tset {
	char desc[PATH_MAX];	/* descriptor, relative to poolset-dir */
	char path[PATH_MAX];	/* the set file */
	unsigned nparts;
	size_t part_size;
	char part[MAX_PARTS][PATH_MAX];
	bool headers;		/* the pool has a header at 0..4095 */
	bool part_hdrs;		/* each later part starts with a header */
	size_t size;		/* usable size of the pool */
};

/* ------------------------------------------------------------ helpers */

/* say -- snprintf into a fixed message buffer, truncating silently */
static void say(char *buf, size_t len, const char *f, ...)
	__attribute__((format(printf, 3, 4)));
static void
say(char *buf, size_t len, const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	(void) vsnprintf(buf, len, f, ap);
	va_end(ap);
}

/* note -- progress for the log, flushed: a failing test exits at once */
static void note(const char *f, ...) __attribute__((format(printf, 1, 2)));
static void
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
static uint64_t
seed_for(const char *name)
{
	uint64_t h = env.seed;
	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 0x100000001b3ULL;
	return h;
}

/* fill_random -- random bytes into p */
static void
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
static size_t
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
static size_t
count_diff(const char *a, const char *b, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		n += a[i] != b[i];
	return n;
}

/* same_bytes -- a[0..len) equals b; names the first difference */
static void
same_bytes(const char *got, const char *want, size_t len, size_t base,
	const char *what)
{
	size_t d = first_diff(got, want, len);
	ck_assert_msg(d == SIZE_MAX, "%s: %zu of %zu bytes differ, the first"
		" at pool offset %zu (0x%02x, expected 0x%02x)", what,
		count_diff(got, want, len), len, base + d,
		(unsigned char)got[d], (unsigned char)want[d]);
}

/* unlink_quiet -- remove path; a missing file is fine */
static void
unlink_quiet(const char *path)
{
	ck_assert_msg(unlink(path) == 0 || errno == ENOENT,
		"cannot remove %s: %s", path, strerror(errno));
}

/* pool_map -- page-aligned anonymous memory standing for the local pool */
static char *
pool_map(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ck_assert_msg(p != MAP_FAILED, "mmap %zu: %s", size, strerror(errno));
	return p;
}

/* ok -- an int-returning call succeeded */
static void
ok(int ret, const char *what)
{
	if (ret != 0) {
		int e = errno;
		ck_abort_msg("%s returned %d: %s (%s): %s", what, ret,
			ename(e), strerror(e), errmsg());
	}
}

/* failed -- the call gave -1 with errno `err` and said why */
static void
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
static void
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
static void
set_make(struct tset *s, const char *name, unsigned nparts,
	size_t part_size, const char *option)
{
	ck_assert_uint_le(nparts, MAX_PARTS);
	memset(s, 0, sizeof(*s));
	fmt(s->desc, sizeof(s->desc), "%s.set", name);
	fmt(s->path, sizeof(s->path), "%s/%s.set", env.poolset_dir, name);
	s->nparts = nparts;
	s->part_size = part_size;
	s->headers = option == NULL || strcmp(option, "NOHDRS") != 0;
	s->part_hdrs = option == NULL;
	s->size = part_size * nparts - (s->part_hdrs ? (nparts - 1) * HDR : 0);
	for (unsigned i = 0; i < nparts; i++) {
		fmt(s->part[i], sizeof(s->part[i]), "%s/%s.part%u",
			env.part_dir, name, i);
		/* what an earlier, failed run of this test may have left */
		unlink_quiet(s->part[i]);
	}
	FILE *f = fopen(s->path, "w");
	ck_assert_msg(f != NULL, "cannot create %s: %s", s->path,
		strerror(errno));
	fprintf(f, "PMEMPOOLSET\n");
	if (option)
		fprintf(f, "OPTION %s\n", option);
	for (unsigned i = 0; i < nparts; i++)
		fprintf(f, "%zuM %s\n", part_size / MIB, s->part[i]);
	ck_assert_msg(fclose(f) == 0, "writing %s: %s", s->path,
		strerror(errno));
}

/* set_unlink -- remove the set file and its parts */
static void
set_unlink(const struct tset *s)
{
	for (unsigned i = 0; i < s->nparts; i++)
		unlink_quiet(s->part[i]);
	unlink_quiet(s->path);
}

/* set_locate -- the part and file offset holding pool offset `off` */
static void
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
static void
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
static char *
replica_image(const struct tset *s)
{
	char *img = malloc(s->size);
	ck_assert_ptr_nonnull(img);
	replica_read(s, img, 0, s->size);
	return img;
}

/* pool_create -- create the set's pool, asking for `*nlanes` lanes */
static RPMEMpool *
pool_create(const struct tset *s, void *mem, unsigned *nlanes,
	unsigned char seed)
{
	struct rpmem_pool_attr attr;
	attr_make(&attr, seed);
	unsigned want = *nlanes;
	RPMEMpool *rpp = rpmem_create(env.target, s->desc, mem, s->size,
		nlanes, s->headers ? &attr : NULL);
	if (rpp == NULL) {
		int e = errno;
		ck_abort_msg("create of %s: %s (%s): %s", s->desc, ename(e),
			strerror(e), errmsg());
	}
	ck_assert_msg(*nlanes >= 1 && *nlanes <= want,
		"create: nlanes %u for %u requested", *nlanes, want);
	return rpp;
}

/* pool_open -- open the set's pool, asking for `*nlanes` lanes */
static RPMEMpool *
pool_open(const struct tset *s, void *mem, unsigned *nlanes)
{
	struct rpmem_pool_attr attr;
	unsigned want = *nlanes;
	RPMEMpool *rpp = rpmem_open(env.target, s->desc, mem, s->size,
		nlanes, &attr);
	if (rpp == NULL) {
		int e = errno;
		ck_abort_msg("open of %s: %s (%s): %s", s->desc, ename(e),
			strerror(e), errmsg());
	}
	ck_assert_msg(*nlanes >= 1 && *nlanes <= want,
		"open: nlanes %u for %u requested", *nlanes, want);
	return rpp;
}

/* probe -- write `len` fresh bytes at off, persist on lane, read back */
static void
probe(RPMEMpool *rpp, char *mem, size_t off, size_t len, unsigned lane,
	unsigned flags, uint64_t *rng, const char *what)
{
	char back[256];
	char msg[MSG_MAX];
	ck_assert_uint_le(len, sizeof(back));
	fill_random(mem + off, len, rng);
	say(msg, sizeof(msg), "%s: persist of %zu bytes at %zu on lane %u",
		what, len, off, lane);
	ok(rpmem_persist(rpp, off, len, lane, flags), msg);
	memset(back, 0, sizeof(back));
	say(msg, sizeof(msg), "%s: read back on lane %u", what, lane);
	ok(rpmem_read(rpp, back, off, len, lane), msg);
	same_bytes(back, mem + off, len, off, msg);
}

/* --------------------------------------------------- rpmemd processes */

/* a listing of the log directory */
struct logsnap {
	unsigned n;
	char name[MAX_LOGS][LOG_NAME_MAX];
};

/* log_snapshot -- the rpmemd logs that exist now */
static struct logsnap *
log_snapshot(void)
{
	struct logsnap *ls = calloc(1, sizeof(*ls));
	ck_assert_ptr_nonnull(ls);
	DIR *d = opendir(env.log_dir);
	ck_assert_msg(d != NULL, "%s: %s", env.log_dir, strerror(errno));
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "rpmemd.", 7) != 0)
			continue;
		ck_assert_uint_lt(ls->n, MAX_LOGS);
		fmt(ls->name[ls->n++], LOG_NAME_MAX, "%s", de->d_name);
	}
	closedir(d);
	return ls;
}

/* log_known -- was `name` in the snapshot? */
static bool
log_known(const struct logsnap *ls, const char *name)
{
	for (unsigned i = 0; i < ls->n; i++)
		if (strcmp(ls->name[i], name) == 0)
			return true;
	return false;
}

/* slurp -- a file's contents, NUL-terminated; NULL when unreadable */
static char *
slurp(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	ck_assert_ptr_nonnull(buf);
	for (;;) {
		if (len + 1 >= cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			ck_assert_ptr_nonnull(buf);
		}
		ssize_t n = read(fd, buf + len, cap - len - 1);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return buf;
}

/* log_count -- occurrences of `needle` in a log */
static unsigned
log_count(const char *path, const char *needle)
{
	char *text = slurp(path);
	unsigned n = 0;
	for (char *p = text; p && (p = strstr(p, needle)); p++)
		n++;
	free(text);
	return n;
}

/* log_wait -- until `needle` is in the log `count` times, or timeout */
static bool
log_wait(const char *path, const char *needle, unsigned count, int ms)
{
	long long deadline = tu_now_ms() + ms;
	while (log_count(path, needle) < count) {
		if (tu_now_ms() > deadline)
			return false;
		tu_nap(10);
	}
	return true;
}

/*
 * session_find -- the pid of the one rpmemd started since `before`, once
 * its log says "session: pid N"; its log path into `path`
 */
static pid_t
session_find(const struct logsnap *before, char *path, size_t len, int ms)
{
	long long deadline = tu_now_ms() + ms;
	for (;;) {
		struct logsnap *now = log_snapshot();
		const char *found = NULL;
		unsigned nnew = 0;
		for (unsigned i = 0; i < now->n; i++) {
			if (!log_known(before, now->name[i])) {
				found = now->name[i];
				nnew++;
			}
		}
		ck_assert_msg(nnew <= 1, "%u rpmemd sessions started, "
			"expected one", nnew);
		pid_t pid = 0;
		if (found) {
			int p;
			ck_assert_int_eq(sscanf(found, "rpmemd.%d.", &p), 1);
			fmt(path, len, "%s/%s", env.log_dir, found);
			char line[64];
			fmt(line, sizeof(line), "session: pid %d ", p);
			if (log_count(path, line) == 1)
				pid = p;
		}
		free(now);
		if (pid)
			return pid;
		ck_assert_msg(tu_now_ms() < deadline, "no rpmemd session log "
			"in %s after %d ms", env.log_dir, ms);
		tu_nap(10);
	}
}

/*
 * rpmemd_running -- is pid a live (not zombie) rpmemd of this test?  Its
 * argv must name our poolset dir, so a recycled pid does not count.
 */
static bool
rpmemd_running(pid_t pid)
{
	return tu_proc_live(pid) && tu_proc_argv_has(pid, "rpmemd") &&
		tu_proc_argv_has(pid, env.poolset_dir);
}

/* wait_gone -- until rpmemd `pid` has exited; false after `ms` */
static bool
wait_gone(pid_t pid, int ms)
{
	long long deadline = tu_now_ms() + ms;
	while (rpmemd_running(pid)) {
		if (tu_now_ms() > deadline)
			return false;
		tu_nap(10);
	}
	return true;
}

/*
 * stdin_has_writer -- does any process but pid hold the pipe that is
 * pid's stdin?  (sshd holds the write end until the client's EOF.)
 */
static bool
stdin_has_writer(pid_t pid)
{
	char path[64], want[64], got[64];
	fmt(path, sizeof(path), "/proc/%d/fd/0", (int)pid);
	ssize_t n = readlink(path, want, sizeof(want) - 1);
	if (n <= 0)
		return false;
	want[n] = '\0';
	DIR *d = opendir("/proc");
	ck_assert_ptr_nonnull(d);
	bool found = false;
	struct dirent *de;
	while (!found && (de = readdir(d)) != NULL) {
		int p = atoi(de->d_name);
		if (p <= 0 || p == pid)
			continue;
		char fdir[64];
		fmt(fdir, sizeof(fdir), "/proc/%d/fd", p);
		DIR *fds = opendir(fdir);
		if (!fds)
			continue;
		struct dirent *fe;
		while ((fe = readdir(fds)) != NULL) {
			if (fe->d_name[0] == '.')
				continue;
			char lpath[128];
			fmt(lpath, sizeof(lpath), "%s/%s", fdir, fe->d_name);
			ssize_t m = readlink(lpath, got, sizeof(got) - 1);
			if (m == n && memcmp(got, want, (size_t)n) == 0) {
				found = true;
				break;
			}
		}
		closedir(fds);
	}
	closedir(d);
	return found;
}

/* count_dir -- entries of a /proc/self directory (fds, threads) */
static unsigned
count_dir(const char *path)
{
	int n = tu_dir_entries(path);
	ck_assert_msg(n >= 0, "%s: %s", path, strerror(errno));
	return (unsigned)n;
}

/* --------------------------------------------------- 1. random mixes */

enum mix_op { MIX_PERSIST, MIX_RELAXED, MIX_DEEP, MIX_FLUSH, MIX_OPS };

/* one writer thread of a mix: its own lane and its own region */
struct mixer {
	RPMEMpool *rpp;
	char *pool;
	unsigned lane;
	size_t lo, hi;
	uint64_t rng;
	unsigned ops;
	unsigned count[MIX_OPS];
	unsigned reads;
	char *back;		/* read-back buffer, 1 MiB */
	char err[MSG_MAX];	/* first failure; empty when none */
	pthread_t thread;
};

/* mix_range -- 1 B to 1 MiB, log-uniform, anywhere in the region */
static void
mix_range(struct mixer *m, size_t *off, size_t *len)
{
	size_t span = m->hi - m->lo;
	unsigned bits = (unsigned)(tu_rnd(&m->rng) % 21);
	size_t l = 1 + (size_t)(tu_rnd(&m->rng) % ((uint64_t)1 << bits));
	if (l > span)
		l = span;
	*off = m->lo + (size_t)(tu_rnd(&m->rng) % (span - l + 1));
	*len = l;
}

/* mix_one -- one random operation; 0 or -1 with m->err set */
static int
mix_one(struct mixer *m, unsigned i)
{
	unsigned op = (unsigned)(tu_rnd(&m->rng) % 5);
	size_t off, len;
	int r = 0;
	if (op > MIX_FLUSH)
		op = MIX_FLUSH;
	if (op != MIX_FLUSH) {
		mix_range(m, &off, &len);
		fill_random(m->pool + off, len, &m->rng);
		if (op == MIX_DEEP)
			r = rpmem_deep_persist(m->rpp, off, len, m->lane);
		else
			r = rpmem_persist(m->rpp, off, len, m->lane,
				op == MIX_RELAXED ? RPMEM_PERSIST_RELAXED : 0);
	} else {
		size_t offs[4], lens[4];
		unsigned k = 1 + (unsigned)(tu_rnd(&m->rng) % 4);
		for (unsigned j = 0; j < k; j++) {
			mix_range(m, &offs[j], &lens[j]);
			fill_random(m->pool + offs[j], lens[j], &m->rng);
		}
		for (unsigned j = 0; j < k && !r; j++)
			r = rpmem_flush(m->rpp, offs[j], lens[j], m->lane,
				tu_rnd(&m->rng) & 1 ? RPMEM_FLUSH_RELAXED : 0);
		if (!r)
			r = rpmem_drain(m->rpp, m->lane, 0);
		off = offs[0];
		len = lens[0];
	}
	if (r) {
		int e = errno;
		say(m->err, sizeof(m->err), "lane %u op #%u (kind %u, %zu "
			"bytes at %zu): %s: %s", m->lane, i, op, len, off,
			ename(e), errmsg());
		return -1;
	}
	m->count[op]++;
	if (tu_rnd(&m->rng) % 8)
		return 0;
	/* read-after-persist on the same lane */
	m->reads++;
	if (rpmem_read(m->rpp, m->back, off, len, m->lane)) {
		int e = errno;
		say(m->err, sizeof(m->err), "lane %u read-back of %zu bytes at"
			" %zu: %s: %s", m->lane, len, off, ename(e), errmsg());
		return -1;
	}
	size_t d = first_diff(m->back, m->pool + off, len);
	if (d != SIZE_MAX) {
		say(m->err, sizeof(m->err), "lane %u op #%u: read-back of %zu "
			"bytes at %zu differs first at %zu", m->lane, i, len,
			off, off + d);
		return -1;
	}
	return 0;
}

/* mix_run -- thread body: m->ops random operations */
static void *
mix_run(void *arg)
{
	struct mixer *m = arg;
	for (unsigned i = 0; i < m->ops; i++)
		if (mix_one(m, i))
			break;
	return NULL;
}

/* one reader thread of the read-back: chunks j with j % n == lane */
struct chunk_reader {
	RPMEMpool *rpp;
	char *dst;
	const size_t *cut;	/* chunk j is [cut[j], cut[j + 1]) */
	size_t nchunks;
	unsigned lane, nthreads;
	char err[MSG_MAX];
	pthread_t thread;
};

/* chunk_run -- thread body: read this thread's chunks on its lane */
static void *
chunk_run(void *arg)
{
	struct chunk_reader *c = arg;
	for (size_t j = c->lane; j < c->nchunks; j += c->nthreads) {
		size_t off = c->cut[j], len = c->cut[j + 1] - c->cut[j];
		if (rpmem_read(c->rpp, c->dst + off, off, len, c->lane)) {
			int e = errno;
			say(c->err, sizeof(c->err), "read of %zu bytes at %zu"
				" on lane %u: %s: %s", len, off, c->lane,
				ename(e), errmsg());
			break;
		}
	}
	return NULL;
}

/*
 * read_back -- reopen the pool and rpmem_read all of it in random chunks
 * (1 B to 4 MiB) on every lane at once, into an unaligned buffer
 */
static void
read_back(const struct tset *s, const char *img, uint64_t *rng)
{
	unsigned nlanes = NLANES;
	char *mem = pool_map(s->size);
	RPMEMpool *rpp = pool_open(s, mem, &nlanes);
	ck_assert_uint_eq(nlanes, NLANES);

	size_t cap = 64, n = 0;
	size_t *cut = malloc(cap * sizeof(*cut));
	ck_assert_ptr_nonnull(cut);
	cut[n++] = 0;
	while (cut[n - 1] < s->size) {
		unsigned bits = (unsigned)(tu_rnd(rng) % 23);
		size_t l = 1 + (size_t)(tu_rnd(rng) % ((uint64_t)1 << bits));
		size_t left = s->size - cut[n - 1];
		if (n == cap) {
			cap *= 2;
			cut = realloc(cut, cap * sizeof(*cut));
			ck_assert_ptr_nonnull(cut);
		}
		cut[n] = cut[n - 1] + (l < left ? l : left);
		n++;
	}
	char *buf = malloc(s->size + 1);
	ck_assert_ptr_nonnull(buf);
	memset(buf, 0x5a, s->size + 1);

	struct chunk_reader cr[NLANES];
	for (unsigned t = 0; t < NLANES; t++) {
		cr[t] = (struct chunk_reader){ .rpp = rpp, .dst = buf + 1,
			.cut = cut, .nchunks = n - 1, .lane = t,
			.nthreads = NLANES };
		ck_assert_int_eq(pthread_create(&cr[t].thread, NULL,
			chunk_run, &cr[t]), 0);
	}
	for (unsigned t = 0; t < NLANES; t++) {
		pthread_join(cr[t].thread, NULL);
		ck_assert_msg(cr[t].err[0] == '\0', "read-back: %s",
			cr[t].err);
	}
	note("read back %zu bytes in %zu chunks on %u lanes", s->size,
		n - 1, NLANES);
	same_bytes(buf + 1, img, s->size, 0, "rpmem_read after reopen vs "
		"the part files");
	ok(rpmem_close(rpp), "close after read-back");
	free(buf);
	free(cut);
	munmap(mem, s->size);
}

/*
 * mix_case -- NLANES threads, each on its own lane and region, run random
 * persists, relaxed persists, deep persists and flush batches + drain;
 * the part files must then equal the local pool, and so must a read-back
 */
static void
mix_case(const char *name, unsigned nparts, size_t part_size,
	const char *option)
{
	struct tset s;
	uint64_t rng = seed_for(name);
	set_make(&s, name, nparts, part_size, option);
	char *mem = pool_map(s.size);
	unsigned nlanes = NLANES;
	RPMEMpool *rpp = pool_create(&s, mem, &nlanes, 1);
	ck_assert_uint_eq(nlanes, NLANES);

	size_t lo = s.headers ? HDR : 0;
	size_t q = (s.size - lo) / NLANES;
	struct mixer m[NLANES];
	for (unsigned t = 0; t < NLANES; t++) {
		m[t] = (struct mixer){ .rpp = rpp, .pool = mem, .lane = t,
			.lo = lo + t * q,
			.hi = t + 1 == NLANES ? s.size : lo + (t + 1) * q,
			.rng = tu_rnd(&rng), .ops = env.ops,
			.back = malloc(MIB) };
		ck_assert_ptr_nonnull(m[t].back);
	}
	long long t0 = tu_now_ms();
	for (unsigned t = 0; t < NLANES; t++)
		ck_assert_int_eq(pthread_create(&m[t].thread, NULL, mix_run,
			&m[t]), 0);
	unsigned count[MIX_OPS] = { 0 }, reads = 0;
	for (unsigned t = 0; t < NLANES; t++) {
		pthread_join(m[t].thread, NULL);
		ck_assert_msg(m[t].err[0] == '\0', "%s: %s", name, m[t].err);
		for (unsigned k = 0; k < MIX_OPS; k++)
			count[k] += m[t].count[k];
		reads += m[t].reads;
		free(m[t].back);
	}
	note("%s: %u persists, %u relaxed, %u deep, %u flush batches, "
		"%u read-backs in %lld ms", name, count[MIX_PERSIST],
		count[MIX_RELAXED], count[MIX_DEEP], count[MIX_FLUSH], reads,
		tu_now_ms() - t0);
	/* every kind of call across each seam between parts, one per lane */
	for (unsigned i = 1; i < s.nparts; i++) {
		size_t seam = i * s.part_size - (s.part_hdrs ? (i - 1) * HDR :
			0);
		for (unsigned k = 0; k < NLANES; k++) {
			size_t off = seam - 5000 + 7 * k, len = 10000 + k;
			char msg[MSG_MAX];
			fill_random(mem + off, len, &rng);
			say(msg, sizeof(msg), "call %u across the seam at %zu",
				k, seam);
			ok(k == 0 ? rpmem_persist(rpp, off, len, k, 0) :
				k == 1 ? rpmem_persist(rpp, off, len, k,
					RPMEM_PERSIST_RELAXED) :
				k == 2 ? rpmem_deep_persist(rpp, off, len, k) :
				rpmem_flush(rpp, off, len, k, 0) ||
				rpmem_drain(rpp, k, 0), msg);
		}
	}
	ok(rpmem_close(rpp), "close after the mix");

	char *img = replica_image(&s);
	same_bytes(img + lo, mem + lo, s.size - lo, lo,
		"part files vs local pool");
	read_back(&s, img, &rng);
	free(img);
	munmap(mem, s.size);
	set_unlink(&s);
}

/* R2 "nothing lost" without faults: one part with headers */
START_TEST(random_mix_reaches_replica_with_headers)
{
	mix_case("mix-hdrs", 1, 16 * MIB, NULL);
}
END_TEST

/* the whole pool is writable from offset 0 */
START_TEST(random_mix_reaches_replica_nohdrs)
{
	mix_case("mix-nohdrs", 1, 16 * MIB, "NOHDRS");
}
END_TEST

/* pool offsets cross into part 1, whose header is not pool space */
START_TEST(random_mix_reaches_replica_two_parts)
{
	mix_case("mix-2parts", 2, 8 * MIB, NULL);
}
END_TEST

/* two parts without headers: part 1 is mapped whole */
START_TEST(random_mix_reaches_replica_two_parts_nohdrs)
{
	mix_case("mix-2parts-nohdrs", 2, 8 * MIB, "NOHDRS");
}
END_TEST

/* -------------------------------------------------- 2. torn words */

/* what the torn-word reader saw */
struct torn_report {
	uint64_t passes;
	uint64_t torn_reads;	/* reads of a word that was no pattern */
	uint64_t torn_words;	/* distinct words ever seen torn */
	uint32_t seen;		/* bit k: pattern k was observed */
	uint32_t nfirst;
	struct {
		uint64_t off;	/* pool offset */
		uint64_t val;
	} first[4];		/* the first distinct torn words */
};

/*
 * torn_reader -- child: map the part MAP_SHARED read-only and check every
 * aligned word of [off, off + len) until stop_fd fires or the parent
 * goes; each must be PAT_UNIT * k, 1 <= k <= NPAT.  The report goes to
 * out_fd, after one 'r' byte that says the mapping is in place.
 */
static void __attribute__((noreturn))
torn_reader(const char *part, size_t off, size_t len, int stop_fd,
	int out_fd, pid_t parent)
{
	struct torn_report rep;
	memset(&rep, 0, sizeof(rep));
	int fd = open(part, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		_exit(2);
	char *map = mmap(NULL, off + len, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		_exit(3);
	const uint64_t *w = (const void *)(map + off);
	size_t n = len / 8;
	unsigned char *torn = calloc(n, 1);
	if (!torn)
		_exit(4);
	char ready = 'r';
	if (write(out_fd, &ready, 1) != 1)
		_exit(5);
	for (;;) {
		struct pollfd p = { .fd = stop_fd, .events = POLLIN };
		if (poll(&p, 1, 0) != 0 || getppid() != parent)
			break;
		for (size_t j = 0; j < n; j++) {
			uint64_t v = __atomic_load_n(&w[j], __ATOMIC_RELAXED);
			uint64_t k = v / PAT_UNIT;
			if (v % PAT_UNIT == 0 && k >= 1 && k <= NPAT) {
				rep.seen |= 1U << k;
				continue;
			}
			rep.torn_reads++;
			if (torn[j])
				continue;
			torn[j] = 1;
			rep.torn_words++;
			if (rep.nfirst < 4) {
				rep.first[rep.nfirst].off = off + 8 * j;
				rep.first[rep.nfirst].val = v;
				rep.nfirst++;
			}
		}
		rep.passes++;
	}
	_exit(write(out_fd, &rep, sizeof(rep)) == (ssize_t)sizeof(rep) ?
		0 : 6);
}

/* read_full -- read exactly len bytes from fd within ms; false if not */
static bool
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

/*
 * DESIGN decision 3, RELIABILITY "no aligned 8-byte word written by a
 * strict persist is ever seen torn": a reader process watches the
 * replica while strict persists, deep persists and flush + drain rewrite
 * a 200 KiB region (more than one inline buffer) with alternating
 * patterns, over ranges that start and end at unaligned offsets too.
 * Only words wholly inside every range are checked.
 */
START_TEST(strict_persist_never_tears_an_aligned_word)
{
	static const struct {
		size_t head, tail;	/* bytes left out at each end */
	} cut[] = { { 0, 0 }, { 3, 0 }, { 0, 5 }, { 1, 7 }, { 7, 1 },
		{ 5, 3 } };
	const size_t ncut = sizeof(cut) / sizeof(cut[0]);
	/* longer than two 256 KiB inline buffers: pieces meet inside it */
	const size_t A = MIB, L = 600 * KIB;
	struct tset s;
	set_make(&s, "torn", 1, 8 * MIB, NULL);
	char *mem = pool_map(s.size);
	unsigned nlanes = 1;
	RPMEMpool *rpp = pool_create(&s, mem, &nlanes, 2);

	memset(mem + A, 0x11, L);
	ok(rpmem_persist(rpp, A, L, 0, 0), "initial persist");

	int stop = eventfd(0, EFD_CLOEXEC);
	int pfd[2];
	ck_assert_int_ge(stop, 0);
	ck_assert_int_eq(pipe2(pfd, O_CLOEXEC), 0);
	pid_t parent = getpid();
	pid_t child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0)
		torn_reader(s.part[0], A + 8, L - 16, stop, pfd[1], parent);
	close(pfd[1]);
	char ready;
	ck_assert_msg(read_full(pfd[0], &ready, 1, 10000) && ready == 'r',
		"the reader did not start");

	long long t0 = tu_now_ms();
	char msg[MSG_MAX];
	for (unsigned i = 0; i < env.torn_iters; i++) {
		unsigned k = 1 + i % NPAT;
		size_t c = i % ncut;
		size_t off = A + cut[c].head;
		size_t len = L - cut[c].head - cut[c].tail;
		size_t mid = A + (L / 2 & ~(size_t)7) + 8 * (i % 3);
		unsigned kind = (unsigned)(i / ncut) % 8;
		int r;
		memset(mem + off, (int)(0x11 * k), len);
		switch (kind) {
		case 5:
			r = rpmem_deep_persist(rpp, off, len, 0);
			break;
		case 6:
			r = rpmem_flush(rpp, off, len, 0, 0);
			if (!r)
				r = rpmem_drain(rpp, 0, 0);
			break;
		case 7:	/* two flushes meeting at an aligned offset */
			r = rpmem_flush(rpp, off, mid - off, 0, 0);
			if (!r)
				r = rpmem_flush(rpp, mid, off + len - mid, 0,
					0);
			if (!r)
				r = rpmem_drain(rpp, 0, 0);
			break;
		default:
			r = rpmem_persist(rpp, off, len, 0, 0);
			break;
		}
		say(msg, sizeof(msg), "iteration %u (kind %u, %zu bytes at "
			"%zu)", i, kind, len, off);
		ok(r, msg);
	}
	long long dt = tu_now_ms() - t0;
	uint64_t one = 1;
	ck_assert_int_eq(write(stop, &one, sizeof(one)), (int)sizeof(one));
	struct torn_report rep;
	bool got = read_full(pfd[0], &rep, sizeof(rep), 10000);
	int status;
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert_msg(got && WIFEXITED(status) && WEXITSTATUS(status) == 0,
		"the reader failed (status 0x%x)", status);
	close(pfd[0]);
	close(stop);

	unsigned nseen = (unsigned)__builtin_popcount(rep.seen);
	note("torn: %u strict writes of %zu KiB in %lld ms; reader: %"
		PRIu64 " passes, %u patterns seen, %" PRIu64 " torn words "
		"(%" PRIu64 " torn reads)", env.torn_iters, L / KIB, dt,
		rep.passes, nseen, rep.torn_words, rep.torn_reads);
	for (uint32_t j = 0; j < rep.nfirst; j++)
		note("torn word at pool offset %" PRIu64 " = region + %"
			PRIu64 ": 0x%016" PRIx64, rep.first[j].off,
			rep.first[j].off - A, rep.first[j].val);
	ck_assert_msg(rep.torn_words == 0, "%" PRIu64 " aligned words seen "
		"torn, the first at pool offset %" PRIu64 ": 0x%016" PRIx64,
		rep.torn_words, rep.first[0].off, rep.first[0].val);
	ck_assert_msg(nseen >= 2 && rep.passes >= 2, "the reader saw %u "
		"patterns in %" PRIu64 " passes: it proved nothing", nseen,
		rep.passes);

	ok(rpmem_close(rpp), "close");
	char *img = malloc(L);
	ck_assert_ptr_nonnull(img);
	replica_read(&s, img, A, L);
	same_bytes(img, mem + A, L, A, "region after the last persist");
	free(img);
	munmap(mem, s.size);
	set_unlink(&s);
}
END_TEST

/* ------------------------------------------------ 7. bad requests */

enum call { C_PERSIST, C_FLUSH, C_DRAIN, C_DEEP, C_READ, C_READ_NULL };
enum lane_kind { LN_OK, LN_N, LN_MAX };

/* a refused data call */
struct bad {
	const char *what;
	enum call call;
	size_t off, len;
	enum lane_kind lane;
	unsigned flags;
};

/* bad_call -- make the call; returns its result, errno preserved */
static int
bad_call(RPMEMpool *rpp, const struct bad *b, unsigned lane)
{
	char buf[16];
	switch (b->call) {
	case C_PERSIST:
		return rpmem_persist(rpp, b->off, b->len, lane, b->flags);
	case C_FLUSH:
		return rpmem_flush(rpp, b->off, b->len, lane, b->flags);
	case C_DRAIN:
		return rpmem_drain(rpp, lane, b->flags);
	case C_DEEP:
		return rpmem_deep_persist(rpp, b->off, b->len, lane);
	case C_READ:
		return rpmem_read(rpp, buf, b->off, b->len, lane);
	case C_READ_NULL:
		return rpmem_read(rpp, NULL, b->off, b->len, lane);
	}
	return 0;
}

/*
 * R6: header, lane, flag and range violations are EINVAL before anything
 * is stored, and the lane stays usable: after each refusal a persist on
 * the same lane succeeds and reads back, and a flush pending on a lane
 * survives a refused call there.  Bytes the refused calls named (poisoned
 * locally) never reach the replica.
 */
START_TEST(bad_requests_are_einval_and_leave_the_lane_usable)
{
	struct tset s;
	uint64_t rng = seed_for("bad");
	set_make(&s, "bad", 1, 8 * MIB, NULL);
	char *mem = pool_map(s.size);
	unsigned n = NLANES;
	RPMEMpool *rpp = pool_create(&s, mem, &n, 3);
	const size_t Z = s.size, M = SIZE_MAX;
	const struct bad c[] = {
		{ "persist in the header", C_PERSIST, 0, 8, LN_OK, 0 },
		{ "persist ending past the header", C_PERSIST, 4095, 2,
			LN_OK, 0 },
		{ "persist of the header's last byte", C_PERSIST, 4095, 1,
			LN_OK, 0 },
		{ "relaxed persist in the header", C_PERSIST, 512, 64,
			LN_OK, RPMEM_PERSIST_RELAXED },
		{ "flush of the header", C_FLUSH, 0, 4096, LN_OK, 0 },
		{ "relaxed flush in the header", C_FLUSH, 100, 1, LN_OK,
			RPMEM_FLUSH_RELAXED },
		{ "deep persist in the header", C_DEEP, 0, 64, LN_OK, 0 },
		{ "persist on lane nlanes", C_PERSIST, 8192, 8, LN_N, 0 },
		{ "persist on lane UINT_MAX", C_PERSIST, 8192, 8, LN_MAX, 0 },
		{ "flush on lane nlanes", C_FLUSH, 8192, 8, LN_N, 0 },
		{ "drain on lane nlanes", C_DRAIN, 0, 0, LN_N, 0 },
		{ "drain on lane UINT_MAX", C_DRAIN, 0, 0, LN_MAX, 0 },
		{ "deep persist on lane nlanes", C_DEEP, 8192, 8, LN_N, 0 },
		{ "read on lane nlanes", C_READ, 8192, 8, LN_N, 0 },
		{ "read on lane UINT_MAX", C_READ, 8192, 8, LN_MAX, 0 },
		{ "persist flags 2", C_PERSIST, 8192, 8, LN_OK, 2 },
		{ "persist flags 0x80000000", C_PERSIST, 8192, 8, LN_OK,
			0x80000000U },
		{ "persist flags RELAXED|2", C_PERSIST, 8192, 8, LN_OK, 3 },
		{ "flush flags 2", C_FLUSH, 8192, 8, LN_OK, 2 },
		{ "flush flags 0x80000000", C_FLUSH, 8192, 8, LN_OK,
			0x80000000U },
		{ "drain flags 1", C_DRAIN, 0, 0, LN_OK, 1 },
		{ "drain flags 0x80000000", C_DRAIN, 0, 0, LN_OK,
			0x80000000U },
		{ "persist past the end", C_PERSIST, Z - 10, 11, LN_OK, 0 },
		{ "relaxed persist past the end", C_PERSIST, Z - 8, 16, LN_OK,
			RPMEM_PERSIST_RELAXED },
		{ "persist at the end", C_PERSIST, Z, 1, LN_OK, 0 },
		{ "empty persist past the end", C_PERSIST, Z + 1, 0, LN_OK,
			0 },
		{ "persist of SIZE_MAX bytes", C_PERSIST, 8192, M, LN_OK, 0 },
		{ "persist at SIZE_MAX", C_PERSIST, M, 1, LN_OK, 0 },
		{ "persist wrapping 2^64", C_PERSIST, M - 4095, 8192, LN_OK,
			0 },
		{ "flush past the end", C_FLUSH, Z - 1, 2, LN_OK, 0 },
		{ "flush wrapping 2^64", C_FLUSH, 8192, M - 8191, LN_OK, 0 },
		{ "deep persist past the end", C_DEEP, Z - 1, 2, LN_OK, 0 },
		{ "deep persist wrapping 2^64", C_DEEP, M, 2, LN_OK, 0 },
		{ "read past the end", C_READ, Z - 1, 2, LN_OK, 0 },
		{ "read at the end", C_READ, Z, 1, LN_OK, 0 },
		{ "empty read past the end", C_READ, Z + 1, 0, LN_OK, 0 },
		{ "read of SIZE_MAX bytes", C_READ, 0, M, LN_OK, 0 },
		{ "read wrapping 2^64", C_READ, M, 2, LN_OK, 0 },
		{ "read into NULL", C_READ_NULL, 8192, 8, LN_OK, 0 },
	};
	const size_t nc = sizeof(c) / sizeof(c[0]);
	char what[MSG_MAX];

	/* what a refused call must not carry to the replica */
	memset(mem, 0xee, HDR);
	memset(mem + Z - 16, 0xee, 16);
	for (size_t i = 0; i < nc; i++) {
		unsigned lane = (unsigned)(i % n);
		unsigned use = c[i].lane == LN_OK ? lane :
			c[i].lane == LN_N ? n : UINT_MAX;
		errno = 0;
		int r = bad_call(rpp, &c[i], use);
		fmt(what, sizeof(what), "%s (lane %u)", c[i].what, use);
		failed(r, EINVAL, what);
		fmt(what, sizeof(what), "persist on lane %u after \"%s\"",
			lane, c[i].what);
		probe(rpp, mem, 16 * KIB + i * HDR + i % 8, 64, lane,
			i % 2 ? RPMEM_PERSIST_RELAXED : 0, &rng, what);
	}

	/* a pending flush survives a refused call on its lane */
	size_t off = 512 * KIB + 3;
	fill_random(mem + off, 100, &rng);
	ok(rpmem_flush(rpp, off, 100, 1 % n, 0), "flush before a refusal");
	failed(rpmem_flush(rpp, 0, 8, 1 % n, 0), EINVAL,
		"flush in the header with a flush pending");
	failed(rpmem_drain(rpp, 1 % n, 2), EINVAL,
		"drain flags 2 with a flush pending");
	ok(rpmem_drain(rpp, 1 % n, 0), "drain after the refusals");
	char back[100];
	ok(rpmem_read(rpp, back, off, sizeof(back), 1 % n), "read back");
	same_bytes(back, mem + off, sizeof(back), off, "flush + refusals");

	/* zero-length calls inside the pool are fine, even at its end */
	ok(rpmem_persist(rpp, Z, 0, 0, 0), "empty persist at the end");
	ok(rpmem_flush(rpp, Z, 0, 0, 0), "empty flush at the end");
	ok(rpmem_read(rpp, NULL, Z, 0, 0), "empty read at the end");
	ok(rpmem_close(rpp), "close");

	/* the replica: probes arrived, poison did not, header intact */
	char *img = replica_image(&s);
	for (size_t i = 0; i < nc; i++) {
		size_t p = 16 * KIB + i * HDR + i % 8;
		fmt(what, sizeof(what), "replica after \"%s\"", c[i].what);
		same_bytes(img + p, mem + p, 64, p, what);
	}
	same_bytes(img + off, mem + off, 100, off, "replica: pending flush");
	char zero[16] = { 0 };
	same_bytes(img + Z - 16, zero, 16, Z - 16,
		"pool tail named only by refused calls");
	ck_assert_msg(memcmp(img, "DATAPTH", 8) == 0,
		"the pool header was overwritten");
	free(img);

	/* the header still opens the pool; the last byte is writable */
	n = NLANES;
	RPMEMpool *again = pool_open(&s, mem, &n);
	probe(again, mem, Z - 1, 1, n - 1, 0, &rng, "persist of the last "
		"byte");
	ok(rpmem_close(again), "close after reopen");
	char last;
	replica_read(&s, &last, Z - 1, 1);
	ck_assert_int_eq(last, mem[Z - 1]);
	munmap(mem, s.size);
	set_unlink(&s);
}
END_TEST

/* ----------------------------------------------------- 8. nlanes */

/*
 * R10: *nlanes comes back in [1, requested] and within rpmemd's
 * max-lanes, even for UINT_MAX; every lane below it persists and reads;
 * the lane equal to it is EINVAL
 */
START_TEST(nlanes_is_clamped_and_every_lane_works)
{
	static const unsigned req[] = { 1, NLANES, UINT_MAX };
	struct tset s;
	uint64_t rng = seed_for("nlanes");
	set_make(&s, "nlanes", 1, 8 * MIB, NULL);
	char *mem = pool_map(s.size);
	char what[MSG_MAX], buf[8];

	for (size_t i = 0; i < sizeof(req) / sizeof(req[0]); i++) {
		unsigned n = req[i];
		RPMEMpool *rpp = i == 0 ? pool_create(&s, mem, &n, 4) :
			pool_open(&s, mem, &n);
		note("nlanes: %u requested, %u granted", req[i], n);
		ck_assert_msg(n >= 1 && n <= req[i] && n <= env.max_lanes,
			"%u lanes granted for %u requested (max-lanes %u)", n,
			req[i], env.max_lanes);
		if (req[i] <= env.max_lanes)
			ck_assert_msg(n == req[i], "%u lanes granted for %u "
				"requested", n, req[i]);
		for (unsigned l = 0; l < n; l++) {
			fmt(what, sizeof(what), "request %u, lane %u", req[i],
				l);
			probe(rpp, mem, 8 * KIB + (size_t)l * 4096 + i * 64,
				48, l, l % 2 ? RPMEM_PERSIST_RELAXED : 0, &rng,
				what);
		}
		failed(rpmem_persist(rpp, 8192, 8, n, 0), EINVAL,
			"persist on lane nlanes");
		failed(rpmem_read(rpp, buf, 8192, 8, n), EINVAL,
			"read on lane nlanes");
		failed(rpmem_drain(rpp, n, 0), EINVAL, "drain on lane nlanes");
		ok(rpmem_close(rpp), "close");
	}
	char *img = replica_image(&s);
	same_bytes(img + HDR, mem + HDR, s.size - HDR, HDR,
		"replica after probing every lane");
	free(img);
	munmap(mem, s.size);
	set_unlink(&s);
}
END_TEST

/* -------------------------------------------- streams for the faults */

#define BLK (100 * KIB)		/* one iteration's block */
#define FAULT_ACKS 30U		/* acks to wait for before a fault */

/* blk_word -- word w of the block written by iteration `it` */
static uint64_t
blk_word(unsigned it, size_t w)
{
	return ((uint64_t)(it + 1) << 32) | (uint64_t)w;
}

/* blk_off -- where iteration `it` writes: blocks cycle over the pool */
static size_t
blk_off(const struct tset *s, unsigned it)
{
	size_t nb = (s->size - HDR) / BLK;
	return HDR + (it % nb) * BLK;
}

/* blk_strict -- is iteration `it` 8-byte atomic (not relaxed)? */
static bool
blk_strict(unsigned it)
{
	return it % 3 != 1;
}

/*
 * blk_write -- iteration `it`: fill its block locally, then make it
 * durable by a strict persist, a relaxed persist, or two strict flushes
 * and a drain, in turn
 */
static int
blk_write(RPMEMpool *rpp, char *mem, const struct tset *s, unsigned it,
	unsigned lane)
{
	size_t off = blk_off(s, it);
	for (size_t w = 0; w < BLK / 8; w++) {
		uint64_t v = blk_word(it, w);
		memcpy(mem + off + 8 * w, &v, 8);
	}
	switch (it % 3) {
	case 0:
		return rpmem_persist(rpp, off, BLK, lane, 0);
	case 1:
		return rpmem_persist(rpp, off, BLK, lane,
			RPMEM_PERSIST_RELAXED);
	default:
		if (rpmem_flush(rpp, off, BLK / 2, lane, 0) ||
				rpmem_flush(rpp, off + BLK / 2, BLK / 2, lane,
					0))
			return -1;
		return rpmem_drain(rpp, lane, 0);
	}
}

/*
 * blk_check -- R1/R2 "nothing lost": in the replica image, every block
 * holds what the last acked iteration (< acked) wrote there, or zeros;
 * the block of iteration `acked`, which may have been in flight, holds
 * per 8-byte word the old or the new value when it was strict
 */
static void
blk_check(const struct tset *s, const char *img, unsigned acked)
{
	size_t nb = (s->size - HDR) / BLK;
	size_t inflight = (size_t)acked % nb;
	for (size_t b = 0; b < nb; b++) {
		size_t off = HDR + b * BLK;
		bool written = acked > b;
		unsigned last = 0;
		if (written)
			last = (unsigned)(b + (acked - 1 - b) / nb * nb);
		if (b == inflight && !blk_strict(acked))
			continue;
		for (size_t w = 0; w < BLK / 8; w++) {
			uint64_t got, old = written ? blk_word(last, w) : 0;
			memcpy(&got, img + off + 8 * w, 8);
			if (got == old)
				continue;
			ck_assert_msg(b == inflight && got ==
				blk_word(acked, w), "block %zu word %zu (pool "
				"offset %zu): 0x%016" PRIx64 ", expected "
				"0x%016" PRIx64 " (acked iterations: %u)%s", b,
				w, off + 8 * w, got, old, acked,
				b == inflight ? " or the in-flight value" : "");
		}
	}
}

/* a thread persisting blocks in a loop until a call fails */
struct streamer {
	RPMEMpool *rpp;
	char *mem;
	const struct tset *s;
	atomic_uint acked;
	int err;
	long long t_fail;
	pthread_t thread;
};

/* stream_run -- thread body: iterations on lane 0 until one fails */
static void *
stream_run(void *arg)
{
	struct streamer *st = arg;
	for (unsigned it = 0; it < 1000000; it++) {
		if (blk_write(st->rpp, st->mem, st->s, it, 0)) {
			st->err = errno;
			st->t_fail = tu_now_ms();
			return NULL;
		}
		atomic_store(&st->acked, it + 1);
	}
	return NULL;
}

/* wait_acks -- until the streamer has `n` acks; false after `ms` */
static bool
wait_acks(struct streamer *st, unsigned n, int ms)
{
	long long deadline = tu_now_ms() + ms;
	while (atomic_load(&st->acked) < n && !st->t_fail) {
		if (tu_now_ms() > deadline)
			return false;
		tu_nap(1);
	}
	return atomic_load(&st->acked) >= n;
}

/* join_by -- join a thread by an absolute tu_now_ms() deadline */
static bool
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

/* reopen_works -- no stale lock: open, persist on every lane, close */
static void
reopen_works(const struct tset *s, char *mem, const char *img,
	uint64_t *rng)
{
	unsigned n = NLANES;
	RPMEMpool *rpp = pool_open(s, mem, &n);
	char *back = malloc(s->size);
	ck_assert_ptr_nonnull(back);
	ok(rpmem_read(rpp, back, 0, s->size, 0), "read after reopen");
	same_bytes(back + HDR, img + HDR, s->size - HDR, HDR,
		"rpmem_read after reopen vs the part files");
	free(back);
	memcpy(mem, img, s->size);
	for (unsigned l = 0; l < n; l++)
		probe(rpp, mem, HDR + l * 64, 64, l, 0, rng,
			"persist after reopen");
	ok(rpmem_close(rpp), "close after reopen");
}

/* -------------------------------------------------- 3. rpmemd killed */

/*
 * R2: rpmemd SIGKILLed while a thread streams persists: the call in
 * flight and every later call fail with ECONNRESET within RPMEM_TIMEOUT
 * + 2 s, never a false ack; close returns and releases its descriptors
 * and threads; the pool reopens and holds every acked block
 */
START_TEST(rpmemd_killed_fails_econnreset_and_keeps_acked_data)
{
	struct tset s;
	uint64_t rng = seed_for("kill9");
	set_make(&s, "kill9", 1, 16 * MIB, NULL);
	char *mem = pool_map(s.size);
	const long long bound = env.timeout_ms + 2000;
	unsigned n = NLANES;

	/* a first session, so lazily made library state is in the baseline */
	ok(rpmem_close(pool_create(&s, mem, &n, 5)), "close after create");
	unsigned fds0 = count_dir("/proc/self/fd");
	unsigned threads0 = count_dir("/proc/self/task");

	struct logsnap *before = log_snapshot();
	n = NLANES;
	RPMEMpool *rpp = pool_open(&s, mem, &n);
	ck_assert_uint_ge(n, 3);
	char log[PATH_MAX];
	pid_t pid = session_find(before, log, sizeof(log), 5000);
	free(before);

	struct streamer st = { .rpp = rpp, .mem = mem, .s = &s };
	atomic_init(&st.acked, 0);
	ck_assert_int_eq(pthread_create(&st.thread, NULL, stream_run, &st),
		0);
	ck_assert_msg(wait_acks(&st, FAULT_ACKS, 30000), "only %u acks "
		"before the kill (err %s)", atomic_load(&st.acked),
		ename(st.err));
	long long t_kill = tu_now_ms();
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	ck_assert_msg(join_by(st.thread, t_kill + bound + 3000),
		"the persisting thread hung after rpmemd was killed");
	unsigned acked = atomic_load(&st.acked);
	note("kill9: %u acked, the next failed with %s after %lld ms",
		acked, ename(st.err), st.t_fail - t_kill);
	ck_assert_msg(st.t_fail != 0, "the stream ended without a failure");
	ck_assert_msg(st.err == ECONNRESET, "in-flight call: errno %s, "
		"expected ECONNRESET", ename(st.err));
	ck_assert_msg(st.t_fail - t_kill < bound, "in-flight call failed "
		"%lld ms after the kill, bound %lld", st.t_fail - t_kill,
		bound);

	/* every later call, on any lane */
	struct rpmem_pool_attr attr;
	attr_make(&attr, 7);
	char buf[64];
	for (int c = 0; c < 6; c++) {
		static const char *const what[] = { "persist", "flush",
			"drain", "read", "deep persist", "set_attr" };
		long long t0 = tu_now_ms();
		int r = c == 0 ? rpmem_persist(rpp, HDR, 8, 1, 0) :
			c == 1 ? rpmem_flush(rpp, HDR, 8, 2, 0) :
			c == 2 ? rpmem_drain(rpp, 2, 0) :
			c == 3 ? rpmem_read(rpp, buf, 0, sizeof(buf), 1) :
			c == 4 ? rpmem_deep_persist(rpp, HDR, 8, 0) :
			rpmem_set_attr(rpp, &attr);
		long long dt = tu_now_ms() - t0;
		char msg[MSG_MAX];
		fmt(msg, sizeof(msg), "%s after the kill", what[c]);
		failed(r, ECONNRESET, msg);
		ck_assert_msg(dt < bound, "%s took %lld ms", msg, dt);
	}
	long long t0 = tu_now_ms();
	int r = rpmem_close(rpp);
	int e = errno;
	long long dt = tu_now_ms() - t0;
	note("kill9: close returned %d (%s) in %lld ms", r,
		r ? ename(e) : "ok", dt);
	ck_assert_msg(dt < bound, "close took %lld ms", dt);
	ck_assert_msg(wait_gone(pid, 10000), "killed rpmemd %d still there",
		(int)pid);
	ck_assert_uint_eq(count_dir("/proc/self/fd"), fds0);
	ck_assert_uint_eq(count_dir("/proc/self/task"), threads0);

	char *img = replica_image(&s);
	blk_check(&s, img, acked);
	reopen_works(&s, mem, img, &rng);
	free(img);
	munmap(mem, s.size);
	set_unlink(&s);
}
END_TEST

/* ssh_child -- the one ssh process this test process has spawned */
static pid_t
ssh_child(void)
{
	char path[64], buf[256];
	fmt(path, sizeof(path), "/proc/%d/task/%d/children", (int)getpid(),
		(int)getpid());
	FILE *f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot read %s", path);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *end;
	long pid = strtol(buf, &end, 10);
	ck_assert_msg(pid > 0 && strtol(end, NULL, 10) == 0,
		"expected exactly one child (ssh), found '%s'", buf);
	return (pid_t)pid;
}

/*
 * R5: the ssh channel drops while the lanes are up (ssh SIGKILLed): the
 * client fails with ECONNRESET within the bound, rpmemd ends the session
 * (stops its lanes, closes the pool, exits) and the next open works with
 * every acked block in place
 */
START_TEST(ssh_dropped_ends_the_session_on_both_sides)
{
	struct tset s;
	uint64_t rng = seed_for("sshdrop");
	set_make(&s, "sshdrop", 1, 16 * MIB, NULL);
	char *mem = pool_map(s.size);
	const long long bound = env.timeout_ms + 2000;
	struct logsnap *before = log_snapshot();
	unsigned n = NLANES;
	RPMEMpool *rpp = pool_create(&s, mem, &n, 6);
	char log[PATH_MAX];
	pid_t pid = session_find(before, log, sizeof(log), 5000);
	free(before);
	pid_t ssh = ssh_child();

	struct streamer st = { .rpp = rpp, .mem = mem, .s = &s };
	atomic_init(&st.acked, 0);
	ck_assert_int_eq(pthread_create(&st.thread, NULL, stream_run, &st),
		0);
	ck_assert_msg(wait_acks(&st, FAULT_ACKS, 30000), "only %u acks "
		"before ssh was killed", atomic_load(&st.acked));
	long long t_kill = tu_now_ms();
	ck_assert_int_eq(kill(ssh, SIGKILL), 0);
	ck_assert_msg(join_by(st.thread, t_kill + bound + 3000),
		"the persisting thread hung after ssh was killed");
	unsigned acked = atomic_load(&st.acked);
	note("sshdrop: %u acked, the next failed with %s after %lld ms",
		acked, ename(st.err), st.t_fail - t_kill);
	ck_assert_msg(st.err == ECONNRESET, "in-flight call: errno %s, "
		"expected ECONNRESET", ename(st.err));
	ck_assert_msg(st.t_fail - t_kill < bound, "failed %lld ms after "
		"the kill, bound %lld", st.t_fail - t_kill, bound);
	ck_assert_msg(wait_gone(pid, 10000), "rpmemd %d kept its session "
		"10 s after ssh dropped", (int)pid);
	ck_assert_msg(log_count(log, "session ended") == 1, "rpmemd did not "
		"end its session cleanly (%s)", log);
	failed(rpmem_persist(rpp, HDR, 8, 1, 0), ECONNRESET, "persist after "
		"ssh dropped");
	(void) rpmem_close(rpp);

	char *img = replica_image(&s);
	blk_check(&s, img, acked);
	reopen_works(&s, mem, img, &rng);
	free(img);
	munmap(mem, s.size);
	set_unlink(&s);
}
END_TEST

/* -------------------------------------------------- 4. client killed */

/*
 * client_child -- the client to be killed: create the pool, stream
 * blocks on lane 0, tell out_fd each acked iteration; never returns
 */
static void __attribute__((noreturn))
client_child(const struct tset *s, int out_fd)
{
	char *mem = mmap(NULL, s->size, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (mem == MAP_FAILED)
		_exit(10);
	struct rpmem_pool_attr attr;
	attr_make(&attr, 8);
	unsigned n = NLANES;
	RPMEMpool *rpp = rpmem_create(env.target, s->desc, mem, s->size, &n,
		&attr);
	if (!rpp) {
		fprintf(stderr, "client child: create: %s\n", errmsg());
		_exit(11);
	}
	for (unsigned it = 0; it < 1000000; it++) {
		if (blk_write(rpp, mem, s, it, 0)) {
			fprintf(stderr, "client child: iteration %u: %s\n",
				it, errmsg());
			_exit(12);
		}
		if (write(out_fd, &it, sizeof(it)) != (ssize_t)sizeof(it))
			_exit(13);
	}
	_exit(14);
}

/*
 * R1: a client SIGKILLed while streaming persists: its rpmemd sees the
 * EOF and exits cleanly ("session ended", no error), every acked block
 * is in the replica, the in-flight one is old or new per 8-byte word,
 * and the next open works (no stale lock)
 */
START_TEST(client_killed_rpmemd_exits_and_acked_data_stays)
{
	struct tset s;
	uint64_t rng = seed_for("clientkill");
	set_make(&s, "clientkill", 1, 16 * MIB, NULL);
	int pfd[2];
	ck_assert_int_eq(pipe2(pfd, O_CLOEXEC), 0);
	struct logsnap *before = log_snapshot();
	pid_t child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		close(pfd[0]);
		client_child(&s, pfd[1]);
	}
	close(pfd[1]);

	unsigned acked = 0, it;
	while (acked < FAULT_ACKS) {
		if (!read_full(pfd[0], &it, sizeof(it), 30000)) {
			int st;
			kill(child, SIGKILL);
			waitpid(child, &st, 0);
			ck_abort_msg("the client child stopped after %u acks "
				"(status 0x%x)", acked, st);
		}
		acked = it + 1;
	}
	long long t_kill = tu_now_ms();
	ck_assert_int_eq(kill(child, SIGKILL), 0);
	int status;
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	while (read_full(pfd[0], &it, sizeof(it), 1000))
		acked = it + 1;
	close(pfd[0]);

	char log[PATH_MAX];
	pid_t pid = session_find(before, log, sizeof(log), 5000);
	free(before);
	ck_assert_msg(wait_gone(pid, 10000), "rpmemd %d still runs 10 s "
		"after its client was killed", (int)pid);
	note("clientkill: %u acked; rpmemd %d gone %lld ms after the kill",
		acked, (int)pid, tu_now_ms() - t_kill);
	ck_assert_msg(log_count(log, "session ended") == 1 &&
		log_count(log, "session ended with an error") == 0,
		"rpmemd did not end its session cleanly, see %s", log);

	char *img = replica_image(&s);
	blk_check(&s, img, acked);
	char *mem = pool_map(s.size);
	reopen_works(&s, mem, img, &rng);
	free(img);
	munmap(mem, s.size);
	set_unlink(&s);
}
END_TEST

/* ------------------------------------------------- 5. rpmemd stopped */

/* one call made while rpmemd is stopped */
struct stalled {
	RPMEMpool *rpp;
	char *mem;
	unsigned lane;
	int kind;		/* 0 persist, 1 relaxed, 2 flush + drain */
	size_t off, len;
	int ret, err;
	long long dt;
	pthread_t thread;
};

static const char *const Stall_names[] = { "strict persist",
	"relaxed persist", "flush + drain" };

/* stall_run -- thread body: write the marker, make the call, time it */
static void *
stall_run(void *arg)
{
	struct stalled *c = arg;
	memset(c->mem + c->off, 0xa0 + c->kind, c->len);
	long long t0 = tu_now_ms();
	switch (c->kind) {
	case 0:
		c->ret = rpmem_persist(c->rpp, c->off, c->len, c->lane, 0);
		break;
	case 1:
		c->ret = rpmem_persist(c->rpp, c->off, c->len, c->lane,
			RPMEM_PERSIST_RELAXED);
		break;
	default:
		c->ret = rpmem_flush(c->rpp, c->off, c->len, c->lane, 0);
		if (!c->ret)
			c->ret = rpmem_drain(c->rpp, c->lane, 0);
		break;
	}
	c->err = errno;
	c->dt = tu_now_ms() - t0;
	return NULL;
}

/* wait_cond -- poll `pred(pid)` until it is `want`; false after `ms` */
static bool
wait_cond(bool (*pred)(pid_t), pid_t pid, bool want, int ms)
{
	long long deadline = tu_now_ms() + ms;
	while (pred(pid) != want) {
		if (tu_now_ms() > deadline)
			return false;
		tu_nap(10);
	}
	return true;
}

/*
 * R3: rpmemd SIGSTOPped longer than RPMEM_TIMEOUT: a strict persist, a
 * relaxed persist and a flush + drain on three lanes all fail within
 * RPMEM_TIMEOUT + 2 s (ETIMEDOUT or ECONNRESET), later calls fail at
 * once with ECONNRESET, close returns; once the client has hung up, a resumed rpmemd
 * exits without applying any of the failed calls' bytes; reopen works
 */
START_TEST(rpmemd_stopped_fails_in_bound_and_drops_stale_writes)
{
	struct tset s;
	uint64_t rng = seed_for("stopped");
	set_make(&s, "stopped", 1, 16 * MIB, NULL);
	char *mem = pool_map(s.size);
	const long long bound = env.timeout_ms + 2000;
	struct logsnap *before = log_snapshot();
	unsigned n = NLANES;
	RPMEMpool *rpp = pool_create(&s, mem, &n, 9);
	ck_assert_uint_ge(n, 4);
	char log[PATH_MAX];
	pid_t pid = session_find(before, log, sizeof(log), 5000);
	free(before);
	for (unsigned l = 0; l < n; l++)
		probe(rpp, mem, HDR + l * 64, 64, l, 0, &rng, "warm-up");

	ck_assert_int_eq(kill(pid, SIGSTOP), 0);
	ck_assert_msg(wait_cond(tu_proc_stopped, pid, true, 5000),
		"rpmemd %d did not stop", (int)pid);
	struct stalled c[3];
	for (int k = 0; k < 3; k++) {
		c[k] = (struct stalled){ .rpp = rpp, .mem = mem,
			.lane = (unsigned)k, .kind = k,
			.off = MIB + (size_t)k * 512 * KIB, .len = 256 * KIB };
		ck_assert_int_eq(pthread_create(&c[k].thread, NULL, stall_run,
			&c[k]), 0);
	}
	long long t0 = tu_now_ms();
	for (int k = 0; k < 3; k++) {
		ck_assert_msg(join_by(c[k].thread, t0 + bound + 3000),
			"%s hangs with rpmemd stopped", Stall_names[k]);
		note("stopped: %s failed with %s after %lld ms",
			Stall_names[k], ename(c[k].err), c[k].dt);
		ck_assert_msg(c[k].ret == -1, "%s returned %d with rpmemd "
			"stopped", Stall_names[k], c[k].ret);
		ck_assert_msg(c[k].err == ETIMEDOUT || c[k].err == ECONNRESET,
			"%s: errno %s", Stall_names[k], ename(c[k].err));
		ck_assert_msg(c[k].dt < bound, "%s failed after %lld ms, "
			"bound %lld", Stall_names[k], c[k].dt, bound);
	}
	long long t1 = tu_now_ms();
	/* the call that waited out the peer says ETIMEDOUT; the link is
	 * dropped then, so later calls see ECONNRESET */
	failed(rpmem_persist(rpp, HDR, 8, 3, 0), ECONNRESET, "persist after "
		"the timeout");
	ck_assert_msg(tu_now_ms() - t1 < 1000, "a call on a dead handle "
		"waited %lld ms", tu_now_ms() - t1);
	t1 = tu_now_ms();
	(void) rpmem_close(rpp);
	note("stopped: close took %lld ms", tu_now_ms() - t1);
	ck_assert_msg(tu_now_ms() - t1 < bound, "close took %lld ms",
		tu_now_ms() - t1);

	/* the client has hung up: sshd closes rpmemd's stdin */
	ck_assert_msg(wait_cond(stdin_has_writer, pid, false, 10000),
		"rpmemd's stdin still open 10 s after the client left");
	ck_assert_int_eq(kill(pid, SIGCONT), 0);
	ck_assert_msg(wait_gone(pid, 10000), "resumed rpmemd %d did not "
		"exit", (int)pid);
	note("stopped: resumed rpmemd dropped %u lane messages",
		log_count(log, "dropped"));

	char *img = replica_image(&s);
	char bad[MSG_MAX] = "";
	for (int k = 0; k < 3; k++) {
		size_t stale = 0;
		for (size_t i = 0; i < c[k].len; i++)
			stale += img[c[k].off + i] != 0;
		note("stopped: %zu of %zu bytes of the failed %s are in the "
			"replica", stale, c[k].len, Stall_names[k]);
		if (stale && !bad[0])
			say(bad, sizeof(bad), "%zu of %zu bytes of the failed "
				"%s reached the replica after rpmemd resumed",
				stale, c[k].len, Stall_names[k]);
	}
	ck_assert_msg(bad[0] == '\0', "%s", bad);
	reopen_works(&s, mem, img, &rng);
	free(img);
	munmap(mem, s.size);
	set_unlink(&s);
}
END_TEST

/* ------------------------------------------------ 6. stray connections */

/* a create made in a thread, while the test plays the stranger */
struct creator {
	const struct tset *s;
	char *mem;
	unsigned nlanes;
	RPMEMpool *rpp;
	int err;
	char msg[MSG_MAX];
	pthread_t thread;
};

/* create_run -- thread body: rpmem_create, keeping errno and message */
static void *
create_run(void *arg)
{
	struct creator *c = arg;
	struct rpmem_pool_attr attr;
	attr_make(&attr, 10);
	c->rpp = rpmem_create(env.target, c->s->desc, c->mem, c->s->size,
		&c->nlanes, &attr);
	c->err = errno;
	say(c->msg, sizeof(c->msg), "%s", errmsg());
	return NULL;
}

/*
 * S2: while rpmemd admits lanes (the test holds the create's response
 * back with the ssh gate, so the listener is up and the client has not
 * connected yet), plain TCP connections and libfabric connection
 * requests without the lane token are refused without taking a lane
 * slot: the real client then gets all its lanes, lane 0 and the last
 * included, and they work; after admission the port is closed.
 */
START_TEST(stray_connections_are_refused_without_taking_a_lane)
{
	struct tset s;
	uint64_t rng = seed_for("stray");
	set_make(&s, "stray", 1, 8 * MIB, NULL);
	int gate = open(env.gate, O_RDWR | O_CLOEXEC);
	ck_assert_msg(gate >= 0, "%s: %s", env.gate, strerror(errno));
	struct logsnap *before = log_snapshot();
	struct creator cr = { .s = &s, .mem = pool_map(s.size),
		.nlanes = NLANES };
	ck_assert_int_eq(pthread_create(&cr.thread, NULL, create_run, &cr),
		0);

	char log[PATH_MAX], prov[64];
	pid_t pid = session_find(before, log, sizeof(log), 15000);
	free(before);
	ck_assert_msg(log_wait(log, "listening on ", 1, 15000),
		"rpmemd %d never listened, see %s", (int)pid, log);
	char *text = slurp(log);
	unsigned port = 0;
	const char *l = strstr(text, "listening on 127.0.0.1 port ");
	ck_assert_msg(l && sscanf(l, "listening on 127.0.0.1 port %u "
		"(%63[^)])", &port, prov) == 2, "no port in %s", log);
	free(text);
	note("stray: rpmemd %d listens on port %u (%s)", (int)pid,
		port, prov);

	/* plain TCP: garbage, then a connection that stays silent */
	int fd = tu_tcp_stranger("127.0.0.1", port);
	ck_assert_msg(fd >= 0, "connect to the listener: %s", ename(-fd));
	char junk[64];
	memset(junk, 0xff, sizeof(junk));
	ck_assert_int_eq(write(fd, junk, sizeof(junk)), (int)sizeof(junk));
	close(fd);
	int silent = tu_tcp_stranger("127.0.0.1", port);
	ck_assert_msg(silent >= 0, "connect: %s", ename(-silent));

	/* libfabric: no data, short data, bad magic, wrong tokens */
	struct lane_conn bad;
	memset(&bad, 0, sizeof(bad));
	bad.magic = LANE_CONN_MAGIC;
	fill_random((char *)bad.token, sizeof(bad.token), &rng);
	struct lane_conn nomagic = bad;
	nomagic.magic = ~LANE_CONN_MAGIC;
	struct lane_conn last = bad;
	last.lane = NLANES - 1;
	char why_last[64];
	fmt(why_last, sizeof(why_last), "wrong session token (lane %u)",
		NLANES - 1);
	const struct {
		const char *what;
		const void *data;
		size_t len;
		const char *why;	/* rpmemd's reason */
	} st[] = {
		{ "no connection data", NULL, 0, "no connection data" },
		{ "4 bytes of connection data", &bad, 4,
			"no connection data" },
		{ "a wrong magic", &nomagic, sizeof(nomagic),
			"wrong session token" },
		{ "a wrong token for lane 0", &bad, sizeof(bad),
			"wrong session token (lane 0)" },
		{ "a wrong token for the last lane", &last, sizeof(last),
			why_last },
	};
	const unsigned nst = sizeof(st) / sizeof(st[0]);
	for (unsigned i = 0; i < nst; i++) {
		char why[128];
		fmt(why, sizeof(why), "refused a lane connection: %s",
			st[i].why);
		unsigned had = log_count(log, why);
		int r = tu_fabric_stranger(prov, "127.0.0.1", port,
			st[i].data, st[i].len, 5000);
		ck_assert_msg(r == 0, "stray libfabric client with %s: %s",
			st[i].what, r == 1 ? "ACCEPTED" : fi_strerror(-r));
		ck_assert_msg(log_wait(log, why, had + 1, 5000), "stray "
			"with %s: rpmemd did not log \"%s\"", st[i].what,
			why);
	}
	ck_assert_uint_eq(log_count(log, "refused a lane connection"), nst);

	/* now let the real client hear its response and connect */
	ck_assert_int_eq(write(gate, "go\n", 3), 3);
	ck_assert_msg(join_by(cr.thread, tu_now_ms() + 2 * env.timeout_ms +
		5000), "create hangs after the strays");
	ck_assert_msg(cr.rpp != NULL, "create after the strays: %s: %s",
		ename(cr.err), cr.msg);
	ck_assert_uint_eq(cr.nlanes, NLANES);
	for (unsigned i = 0; i < cr.nlanes; i++)
		probe(cr.rpp, cr.mem, HDR + i * 64, 64, i, 0, &rng,
			"persist after the strays");
	ck_assert_msg(log_wait(log, "lanes connected; listener closed", 1,
		5000), "rpmemd did not close its listener");
	int late = tu_tcp_stranger("127.0.0.1", port);
	ck_assert_msg(late == -ECONNREFUSED, "connect after admission: %s",
		late >= 0 ? "accepted" : ename(-late));

	/* the silent stranger must not keep a connection into rpmemd */
	struct pollfd p = { .fd = silent, .events = POLLIN };
	int pr = poll(&p, 1, 2000);
	char c1;
	ssize_t got = pr > 0 ? recv(silent, &c1, 1, MSG_DONTWAIT) : -2;
	note("stray: silent connection after admission: %s",
		pr == 0 ? "still open" : got == 0 ? "closed by rpmemd" :
		"reset");
	close(silent);

	ok(rpmem_close(cr.rpp), "close");
	ck_assert_msg(wait_gone(pid, 10000), "rpmemd %d did not exit",
		(int)pid);
	close(gate);
	munmap(cr.mem, s.size);
	set_unlink(&s);
}
END_TEST

/* ---------------------------------------------------------------- main */

/* tcase -- a new test case `name` with a timeout, added to suite `s` */
static TCase *
tcase(Suite *s, const char *name, double timeout)
{
	TCase *tc = tcase_create(name);
	tcase_set_timeout(tc, timeout);
	suite_add_tcase(s, tc);
	return tc;
}

/* suite_data -- data movement without faults */
static Suite *
suite_data(void)
{
	Suite *s = suite_create("datapath-data");
	TCase *tc = tcase(s, "mix", 120);
	tcase_add_test(tc, random_mix_reaches_replica_with_headers);
	tcase_add_test(tc, random_mix_reaches_replica_nohdrs);
	tcase_add_test(tc, random_mix_reaches_replica_two_parts);
	tcase_add_test(tc, random_mix_reaches_replica_two_parts_nohdrs);
	tc = tcase(s, "torn", 120);
	tcase_add_test(tc, strict_persist_never_tears_an_aligned_word);
	tc = tcase(s, "requests", 60);
	tcase_add_test(tc, bad_requests_are_einval_and_leave_the_lane_usable);
	tcase_add_test(tc, nlanes_is_clamped_and_every_lane_works);
	return s;
}

/* suite_fault -- rpmemd or the client dies or stops mid-stream */
static Suite *
suite_fault(void)
{
	Suite *s = suite_create("datapath-fault");
	TCase *tc = tcase(s, "faults", 60);
	tcase_add_test(tc,
		rpmemd_killed_fails_econnreset_and_keeps_acked_data);
	tcase_add_test(tc, client_killed_rpmemd_exits_and_acked_data_stays);
	tcase_add_test(tc, ssh_dropped_ends_the_session_on_both_sides);
	tcase_add_test(tc,
		rpmemd_stopped_fails_in_bound_and_drops_stale_writes);
	return s;
}

/* suite_stray -- strangers at the fabric port */
static Suite *
suite_stray(void)
{
	Suite *s = suite_create("datapath-stray");
	TCase *tc = tcase(s, "stray", 60);
	tcase_add_test(tc,
		stray_connections_are_refused_without_taking_a_lane);
	return s;
}

/* need -- the value of a required environment variable, or NULL */
static const char *
need(const char *name, bool *missing)
{
	const char *v = getenv(name);
	if (v == NULL || v[0] == '\0') {
		fprintf(stderr, "datapath: %s is not set (run datapath.sh)\n",
			name);
		*missing = true;
		return NULL;
	}
	return v;
}

/* env_num -- a decimal environment variable, or `def` */
static unsigned long long
env_num(const char *name, unsigned long long def, bool *bad)
{
	const char *v = getenv(name);
	if (v == NULL || v[0] == '\0')
		return def;
	char *end;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	if (errno || *end || v[0] == '-') {
		fprintf(stderr, "datapath: bad %s=%s\n", name, v);
		*bad = true;
	}
	return n;
}

/* env_load -- read what datapath.sh set for `group` */
static int
env_load(const char *group)
{
	bool missing = false;
	env.target = need("RPMEM_TEST_TARGET", &missing);
	env.poolset_dir = need("RPMEM_TEST_POOLSET_DIR", &missing);
	env.part_dir = need("RPMEM_TEST_PART_DIR", &missing);
	env.log_dir = need("RPMEM_TEST_LOG_DIR", &missing);
	(void) need("RPMEM_TIMEOUT", &missing);
	if (strcmp(group, "stray") == 0)
		env.gate = need("RPMEM_TEST_GATE", &missing);
	env.seed = env_num("DATAPATH_SEED", (unsigned long long)time(NULL),
		&missing);
	env.ops = (unsigned)env_num("DATAPATH_OPS", 400, &missing);
	env.torn_iters = (unsigned)env_num("DATAPATH_TORN_ITERS", 2000,
		&missing);
	env.max_lanes = (unsigned)env_num("RPMEM_TEST_MAX_LANES", 64,
		&missing);
	env.timeout_ms = (int)env_num("RPMEM_TIMEOUT", 60, &missing) * 1000;
	if (missing)
		return -1;
	printf("datapath %s: DATAPATH_SEED=%llu DATAPATH_OPS=%u "
		"RPMEM_TIMEOUT=%d\n", group, (unsigned long long)env.seed,
		env.ops, env.timeout_ms / 1000);
	fflush(stdout);
	return 0;
}

/* main -- run the group named by argv[1] (default "data") */
int
main(int argc, char *argv[])
{
	static const struct itest_group groups[] = {
		{ "data", suite_data },
		{ "fault", suite_fault },
		{ "stray", suite_stray },
	};
	return itest_main(argc, argv, groups,
		sizeof(groups) / sizeof(groups[0]), env_load);
}
