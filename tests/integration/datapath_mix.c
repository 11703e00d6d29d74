/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * datapath_mix.c -- data reaching the replica (group data):
 *
 *   mix   threads on every lane write random ranges with every kind of
 *         persist, flush, drain and read while readers check the bytes;
 *         the replica's part files then hold exactly the local pool, with
 *         headers, without (NOHDRS), over one part and over two
 *   torn  scenario R1's word rule seen from outside: a strict persist
 *         never shows a reader of the part file a torn aligned 8-byte word
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
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dpath.h"

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
	char *mem = tu_pool_map(s->size);
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
	tu_ok(rpmem_close(rpp), "close after read-back");
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
	char *mem = tu_pool_map(s.size);
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
			tu_ok(k == 0 ? rpmem_persist(rpp, off, len, k, 0) :
				k == 1 ? rpmem_persist(rpp, off, len, k,
					RPMEM_PERSIST_RELAXED) :
				k == 2 ? rpmem_deep_persist(rpp, off, len, k) :
				rpmem_flush(rpp, off, len, k, 0) ||
				rpmem_drain(rpp, k, 0), msg);
		}
	}
	/*
	 * a drain on its own once everything was answered (an async log's
	 * record that no message carries), then a read, which waits for
	 * the log: it must not wait for an answer that never comes
	 */
	tu_ok(rpmem_deep_persist(rpp, lo, 8, 0), "the deep persist before");
	tu_ok(rpmem_drain(rpp, 0, 0), "a drain on its own");
	char word8[8];
	long long t1 = tu_now_ms();
	tu_ok(rpmem_read(rpp, word8, lo, 8, 0), "a read after it");
	ck_assert_msg(tu_now_ms() - t1 < 5000, "%s: the read after a lone "
		"drain took %lld ms", name, tu_now_ms() - t1);
	tu_ok(rpmem_close(rpp), "close after the mix");

	char *img = replica_image(&s);
	same_bytes(img + lo, mem + lo, s.size - lo, lo,
		"part files vs local pool");
	read_back(&s, img, &rng);
	free(img);
	munmap(mem, s.size);
	set_unlink(&s);
}

/* R2 "nothing lost" without faults, over pools of each layout */
static const struct mix {
	const char *name;
	unsigned nparts;
	size_t part_size;
	const char *option;
} Mixes[] = {
	/* one part with headers */
	{ "mix-hdrs", 1, 16 * MIB, NULL },
	/* the whole pool is writable from offset 0 */
	{ "mix-nohdrs", 1, 16 * MIB, "NOHDRS" },
	/* pool offsets cross into part 1, whose header is not pool space */
	{ "mix-2parts", 2, 8 * MIB, NULL },
	/* two parts without headers: part 1 is mapped whole */
	{ "mix-2parts-nohdrs", 2, 8 * MIB, "NOHDRS" },
};

START_TEST(random_mix_reaches_replica)
{
	mix_case(Mixes[_i].name, Mixes[_i].nparts, Mixes[_i].part_size,
		Mixes[_i].option);
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

/*
 * architecture decision 3, scenarios.md "no aligned 8-byte word written by a
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
	const size_t ncut = TU_NELEMS(cut);
	/* longer than any inline buffer (fab.h): pieces meet inside it */
	const size_t A = MIB, L = 600 * KIB;
	struct tset s;
	set_make(&s, "torn", 1, 8 * MIB, NULL);
	char *mem = tu_pool_map(s.size);
	unsigned nlanes = 1;
	RPMEMpool *rpp = pool_create(&s, mem, &nlanes, 2);

	memset(mem + A, 0x11, L);
	tu_ok(rpmem_persist(rpp, A, L, 0, 0), "initial persist");

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
		tu_ok(r, msg);
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

	tu_ok(rpmem_close(rpp), "close");
	char *img = malloc(L);
	ck_assert_ptr_nonnull(img);
	replica_read(&s, img, A, L);
	same_bytes(img, mem + A, L, A, "region after the last persist");
	free(img);
	munmap(mem, s.size);
	set_unlink(&s);
}
END_TEST

/* dpath_add_mix -- the random mixes */
void
dpath_add_mix(TCase *tc)
{
	TU_LOOP(tc, random_mix_reaches_replica, Mixes);
}

/* dpath_add_torn -- the torn-word test */
void
dpath_add_torn(TCase *tc)
{
	tcase_add_test(tc, strict_persist_never_tears_an_aligned_word);
}
