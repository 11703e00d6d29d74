/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_obj.c -- rpmem bench: libpmemobj transactions on the replica
 *
 * What an application sees: 64 B and 4 KiB undo-logged updates through
 * Debian's libpmemobj on a pool replicated to the bench's target, each
 * timed, next to the remote round trips librpmem counted for them.
 *
 * libpmemobj is loaded at run time, so that the tool does not depend on
 * it; it loads librpmem.so.1 itself, a copy apart from this program's,
 * whose only report is its log: at level info every session that ends
 * logs its calls (RPMEM_CALLS_LOG).  The calls of a session of N
 * transactions less those of a session of none, over N, are the calls
 * of one transaction; its round trips are the persists and drains.
 *
 * The pool's master is a temporary file beside the bench's master; the
 * replica is the bench's own, removed for this, and left a libpmemobj
 * pool: bench_first_pass creates it again as the bench's.
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpmemobj.h>

#include "bench.h"
#include "gen_file.h"
#include "poolset.h"
#include "rpmem_tool.h"

#define OBJ_LIB "libpmemobj.so.1"
#define OBJ_LAYOUT "rpmem-bench"
#define OBJ_ROOT ((size_t)1 << 20)	/* the objects updated */
#define OBJ_TXS 2000			/* per size; --quick: OBJ_TXS_QUICK */
#define OBJ_TXS_QUICK 300
#define OBJ_WARM 50

const size_t Bench_obj_sizes[NOBJ] = { 64, 4096 };

/* the libpmemobj functions used, found with dlsym */
struct obj_lib {
	void *dl;
	__typeof__(pmemobj_create) *create;
	__typeof__(pmemobj_open) *open;
	__typeof__(pmemobj_close) *close;
	__typeof__(pmemobj_root) *root;
	void *(*direct)(PMEMoid oid);	/* a macro in the header */
	__typeof__(pmemobj_tx_begin) *tx_begin;
	__typeof__(pmemobj_tx_add_range) *tx_add_range;
	__typeof__(pmemobj_tx_commit) *tx_commit;
	__typeof__(pmemobj_tx_end) *tx_end;
	__typeof__(pmemobj_errormsg) *errormsg;
};

/* the calls of one session, as librpmem.so.1 logged them */
struct calls {
	uint64_t persist, deep, flush, drain, read;
};

/* paths of the run's temporary files */
struct obj_paths {
	char dir[4096];
	char set[4200], part[4200], log[4200];
};

/* obj_load -- dlopen libpmemobj and find its functions; -1: why is set */
static int
obj_load(struct obj_lib *o, char *why, size_t len)
{
	o->dl = dlopen(OBJ_LIB, RTLD_NOW | RTLD_LOCAL);
	if (!o->dl) {
		snprintf(why, len, "%s", dlerror());
		return -1;
	}
	static const struct {
		const char *name;
		size_t off;
	} Syms[] = {
#define SYM(f, n) { n, offsetof(struct obj_lib, f) }
		SYM(create, "pmemobj_create"), SYM(open, "pmemobj_open"),
		SYM(close, "pmemobj_close"), SYM(root, "pmemobj_root"),
		SYM(direct, "pmemobj_direct"),
		SYM(tx_begin, "pmemobj_tx_begin"),
		SYM(tx_add_range, "pmemobj_tx_add_range"),
		SYM(tx_commit, "pmemobj_tx_commit"),
		SYM(tx_end, "pmemobj_tx_end"),
		SYM(errormsg, "pmemobj_errormsg"),
#undef SYM
	};
	for (size_t i = 0; i < sizeof(Syms) / sizeof(Syms[0]); i++) {
		void *p = dlsym(o->dl, Syms[i].name);
		if (!p) {
			snprintf(why, len, "%s has no %s", OBJ_LIB,
				Syms[i].name);
			return -1;
		}
		memcpy((char *)o + Syms[i].off, &p, sizeof(p));
	}
	return 0;
}

/*
 * obj_files -- a directory beside the bench's master for the pool's
 * master part, its pool set (replica: the bench's) and librpmem's log
 */
static int
obj_files(const struct bench *b, struct obj_paths *p)
{
	char first[4096];
	p->set[0] = p->part[0] = p->log[0] = '\0';
	snprintf(first, sizeof(first), "%s", b->set->replicas[0].parts[0].path);
	snprintf(p->dir, sizeof(p->dir), "%s/.rpmem-bench-obj.XXXXXX",
		dirname(first));
	if (!mkdtemp(p->dir)) {
		fprintf(stderr, "rpmem bench: %s: %s\n", p->dir,
			strerror(errno));
		return -1;
	}
	snprintf(p->set, sizeof(p->set), "%s/obj.set", p->dir);
	snprintf(p->part, sizeof(p->part), "%s/obj.part", p->dir);
	snprintf(p->log, sizeof(p->log), "%s/librpmem.log", p->dir);
	FILE *f = fopen(p->set, "w");
	if (!f) {
		fprintf(stderr, "rpmem bench: %s: %s\n", p->set,
			strerror(errno));
		return -1;
	}
	fprintf(f, "PMEMPOOLSET\n%zu %s\nREPLICA %s %s\n", b->size, p->part,
		b->rep->target, b->rep->desc);
	if (fclose(f)) {
		fprintf(stderr, "rpmem bench: %s: %s\n", p->set,
			strerror(errno));
		return -1;
	}
	return 0;
}

/* obj_files_remove -- what obj_files made */
static void
obj_files_remove(const struct obj_paths *p)
{
	const char *const f[] = { p->set, p->part, p->log };
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (*f[i])
			(void) unlink(f[i]);
	/* the master copy's generations, beside its part (librpmem) */
	char gen[sizeof(p->part) + sizeof(GEN_FILE_SUFFIX)];
	if (*p->part && !gen_file_path(p->part, gen, sizeof(gen)))
		(void) unlink(gen);
	(void) rmdir(p->dir);
}

/* last_calls -- the calls of the last session in librpmem's log */
static int
last_calls(const char *log, struct calls *c)
{
	FILE *f = fopen(log, "r");
	if (!f)
		return -1;
	char line[1024];
	bool found = false;
	while (fgets(line, sizeof(line), f)) {
		const char *s = strstr(line, RPMEM_CALLS_LOG " '");
		s = s ? strstr(s, ": persist ") : NULL;
		if (s && sscanf(s, ": persist %" SCNu64 ", deep persist %"
				SCNu64 ", flush %" SCNu64 ", drain %" SCNu64
				", read %" SCNu64, &c->persist, &c->deep,
				&c->flush, &c->drain, &c->read) == 5)
			found = true;
	}
	fclose(f);
	return found ? 0 : -1;
}

/* obj_fail -- report a failed libpmemobj call; returns -1 */
static int
obj_fail(const struct obj_lib *o, const char *what)
{
	fprintf(stderr, "rpmem bench: libpmemobj: %s: %s\n", what,
		o->errormsg());
	return -1;
}

/* update -- one transaction: snapshot `size` bytes of the root, write */
static int
update(const struct obj_lib *o, PMEMobjpool *pop, PMEMoid root,
		char *base, size_t size, unsigned i)
{
	size_t off = (size_t)i * size % (OBJ_ROOT - size + 1) & ~(size_t)63;
	if (o->tx_begin(pop, NULL, TX_PARAM_NONE))
		return -1;
	int r = o->tx_add_range(root, off, size);
	if (!r)
		memset(base + off, (int)(i & 0xff), size);
	if (!r)
		o->tx_commit();
	int e = o->tx_end();
	return r ? r : e;
}

/*
 * session -- open the pool, run n timed transactions of `size` (after
 * OBJ_WARM untimed ones; none at all when n == 0), close it; the calls
 * librpmem logged for the session in *c
 */
static int
session(struct bench *b, const struct obj_lib *o, const struct obj_paths *p,
		size_t size, unsigned n, struct lat *l, struct calls *c)
{
	PMEMobjpool *pop = o->open(p->set, OBJ_LAYOUT);
	if (!pop)
		return obj_fail(o, "opening the pool");
	PMEMoid root = o->root(pop, OBJ_ROOT);
	char *base = o->direct(root);
	int r = base ? 0 : obj_fail(o, "the root object");
	unsigned warm = n ? OBJ_WARM : 0;
	for (unsigned i = 0; !r && i < warm + n; i++) {
		uint64_t t0 = rawfab_now_ns();
		r = update(o, pop, root, base, size, i);
		if (r)
			obj_fail(o, "a transaction");
		else if (i >= warm)
			b->samples[i - warm] = (double)(rawfab_now_ns() -
				t0) / 1e3;
	}
	o->close(pop);
	if (!r && n)
		bench_stats(b->samples, n, l);
	if (!r && last_calls(p->log, c)) {
		fprintf(stderr, "rpmem bench: %s: no calls logged by "
			"librpmem.so.1 (is it this project's?)\n", p->log);
		r = -1;
	}
	return r;
}

/* per_tx -- round trips of one transaction, from two sessions' calls */
static double
per_tx(const struct calls *c, const struct calls *c0, unsigned n)
{
	double rt = (double)(c->persist + c->deep + c->drain);
	double rt0 = (double)(c0->persist + c0->deep + c0->drain);
	return (rt - rt0) / n;
}

/* measure -- create the pool, then an empty session and one per size */
static int
measure(struct bench *b, const struct obj_lib *o, const struct obj_paths *p)
{
	unsigned n = b->quick ? OBJ_TXS_QUICK : OBJ_TXS;
	if (rpmem_remove(b->rep->target, b->rep->desc, 0))
		return bench_fail("removing the remote replica");
	PMEMobjpool *pop = o->create(p->set, OBJ_LAYOUT, 0, 0600);
	if (!pop)
		return obj_fail(o, "creating a pool with the replica");
	PMEMoid root = o->root(pop, OBJ_ROOT);
	o->close(pop);
	if (OID_IS_NULL(root))
		return obj_fail(o, "allocating the root object");
	struct calls c0, c;
	if (session(b, o, p, 0, 0, NULL, &c0))
		return -1;
	for (int i = 0; i < NOBJ; i++) {
		struct obj_tx *t = &b->obj.tx[i];
		if (session(b, o, p, Bench_obj_sizes[i], n, &t->lat, &c))
			return -1;
		/* the warm-up ran in the same session */
		t->round_trips = per_tx(&c, &c0, n + OBJ_WARM);
		t->flushes = (double)(c.flush - c0.flush) / (n + OBJ_WARM);
	}
	return 0;
}

/* the environment librpmem.so.1 reads when libpmemobj loads it */
static const char *const Obj_env[] = {
	"RPMEM_LANE_SECURITY", "RPMEM_LOG_LEVEL", "RPMEM_LOG_FILE",
};
#define NENV (sizeof(Obj_env) / sizeof(Obj_env[0]))

/* bench_obj -- the libpmemobj scenario (bench.h) */
void
bench_obj(struct bench *b)
{
	struct obj_lib o = { 0 };
	if (obj_load(&o, b->obj.why, sizeof(b->obj.why))) {
		fprintf(stderr, "rpmem bench: libpmemobj transactions not "
			"measured: %s\n", b->obj.why);
		if (o.dl)
			dlclose(o.dl);
		return;
	}
	struct obj_paths p;
	if (obj_files(b, &p)) {
		snprintf(b->obj.why, sizeof(b->obj.why), "no temporary files");
		obj_files_remove(&p);
		dlclose(o.dl);
		return;
	}
	fprintf(stderr, "rpmem bench: warning: replica %u (%s %s) becomes "
		"a libpmemobj pool for the transaction figures\n", b->rep_idx,
		b->rep->target, b->rep->desc);
	char *saved[NENV];
	const char *set[NENV] = { "none", "info", p.log };
	for (size_t i = 0; i < NENV; i++) {
		const char *v = getenv(Obj_env[i]);
		saved[i] = v ? strdup(v) : NULL;
		setenv(Obj_env[i], set[i], 1);
	}
	b->obj.measured = measure(b, &o, &p) == 0;
	if (!b->obj.measured)
		snprintf(b->obj.why, sizeof(b->obj.why), "failed, see above");
	for (size_t i = 0; i < NENV; i++) {
		if (saved[i])
			setenv(Obj_env[i], saved[i], 1);
		else
			unsetenv(Obj_env[i]);
		free(saved[i]);
	}
	obj_files_remove(&p);
	dlclose(o.dl);
}

/* rtt64 -- the raw 64 B round trip p50 of the none run, 0 if none */
static double
rtt64(const struct bench *b)
{
	for (int i = 0; i < NSIZES; i++)
		if (Bench_sizes[i] == 64 && b->runs[0].measured)
			return b->runs[0].raw_rtt[i].p50;
	return 0;
}

/* tx_ratio -- p50 over the round trips at the raw round trip's cost */
static double
tx_ratio(const struct obj_tx *t, double rtt)
{
	double base = t->round_trips * rtt;
	return base > 0 ? t->lat.p50 / base : 0;
}

/* bench_obj_print_text -- section h (bench.h) */
void
bench_obj_print_text(const struct bench *b, FILE *f)
{
	fprintf(f, "\nh) libpmemobj transactions (%s, lane security none), "
		"us; round trips = rpmem persists + drains per transaction, "
		"counted by librpmem.so.1;\n   ratio = p50 / (round trips x "
		"raw 64 B round trip p50)\n", OBJ_LIB);
	if (!b->obj.measured) {
		fprintf(f, "   not measured: %s\n", b->obj.why);
		return;
	}
	double rtt = rtt64(b);
	fprintf(f, "   update        n      p50      p99     mean  round "
		"trips  flushes  raw p50   ratio\n");
	for (int i = 0; i < NOBJ; i++) {
		const struct obj_tx *t = &b->obj.tx[i];
		fprintf(f, "   %5zu B  %6u %8.2f %8.2f %8.2f %12.2f %8.2f "
			"%8.2f %6.2fx\n", Bench_obj_sizes[i], t->lat.n,
			t->lat.p50, t->lat.p99, t->lat.mean, t->round_trips,
			t->flushes, rtt, tx_ratio(t, rtt));
	}
}

/* bench_obj_print_json -- member "pmemobj" (bench.h) */
void
bench_obj_print_json(const struct bench *b, FILE *f)
{
	fprintf(f, ",\"pmemobj\":{\"measured\":%s",
		b->obj.measured ? "true" : "false");
	if (!b->obj.measured) {
		fprintf(f, "}");
		return;
	}
	double rtt = rtt64(b);
	fprintf(f, ",\"tx\":[");
	for (int i = 0; i < NOBJ; i++) {
		const struct obj_tx *t = &b->obj.tx[i];
		fprintf(f, "%s{\"size\":%zu,\"n\":%u,\"p50_us\":%.3f,"
			"\"p99_us\":%.3f,\"mean_us\":%.3f,"
			"\"round_trips\":%.3f,\"flushes\":%.3f,"
			"\"raw_rtt_p50_us\":%.3f,\"ratio\":%.3f}",
			i ? "," : "", Bench_obj_sizes[i], t->lat.n,
			t->lat.p50, t->lat.p99, t->lat.mean, t->round_trips,
			t->flushes, rtt, tx_ratio(t, rtt));
	}
	fprintf(f, "]}");
}
