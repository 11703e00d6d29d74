/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dpath.h -- what the data-path test files share (dpath.c, dpath_proc.c):
 * the environment datapath.sh set, pool sets read back from their part
 * files, and the rpmemd processes found through their logs
 */
#ifndef RPMEM_DPATH_H
#define RPMEM_DPATH_H 1

#include <check.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "itest.h"
#include "librpmem.h"
#include "tu.h"
#include "tu_check.h"

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

/* what datapath.sh set (datapath.c reads it) */
struct dpath_env {
	struct tu_target t;	/* RPMEM_TEST_TARGET, _POOLSET_DIR, _PART_DIR */
	const char *log_dir;
	const char *gate;
	uint64_t seed;
	unsigned ops;
	unsigned torn_iters;
	unsigned max_lanes;
	int timeout_ms;		/* RPMEM_TIMEOUT */
};
extern struct dpath_env env;

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


/* a listing of the log directory */
struct logsnap {
	unsigned n;
	char name[MAX_LOGS][LOG_NAME_MAX];
};

/* say -- snprintf into a fixed message buffer, truncating silently */
void say(char *buf, size_t len, const char *f, ...)
	__attribute__((format(printf, 3, 4)));

/* note -- progress for the log, flushed: a failing test exits at once */
void note(const char *f, ...) __attribute__((format(printf, 1, 2)));

/* seed_for -- a per-test seed derived from DATAPATH_SEED and a name */
uint64_t seed_for(const char *name);

/* fill_random -- random bytes into p */
void fill_random(char *p, size_t len, uint64_t *rng);

/* first_diff -- offset of the first differing byte, or SIZE_MAX */
size_t first_diff(const char *a, const char *b, size_t len);

/* count_diff -- how many bytes differ */
size_t count_diff(const char *a, const char *b, size_t len);

/* same_bytes -- a[0..len) equals b; names the first difference */
void same_bytes(const char *got, const char *want, size_t len, size_t base,
	const char *what);

/* failed -- the call gave -1 with errno `err` and said why */
void failed(int ret, int err, const char *what);

/* attr_make -- pool attributes that mark a pool with headers */
void attr_make(struct rpmem_pool_attr *a, unsigned char seed);

/* set_make -- write poolset-dir/name.set: nparts parts in the part dir */
void set_make(struct tset *s, const char *name, unsigned nparts,
	size_t part_size, const char *option);

/* set_unlink -- remove the set file and its parts */
void set_unlink(const struct tset *s);

/* set_locate -- the part and file offset holding pool offset `off` */
void set_locate(const struct tset *s, size_t off, unsigned *part,
	size_t *foff, size_t *left);

/* replica_read -- pool bytes [off, off + len) from the part files */
void replica_read(const struct tset *s, char *buf, size_t off, size_t len);

/* replica_image -- the whole pool as the part files hold it */
char *replica_image(const struct tset *s);

/* pool_create -- create the set's pool, asking for `*nlanes` lanes */
RPMEMpool *pool_create(const struct tset *s, void *mem, unsigned *nlanes,
	unsigned char seed);

/* pool_open -- open the set's pool, asking for `*nlanes` lanes */
RPMEMpool *pool_open(const struct tset *s, void *mem, unsigned *nlanes);

/* probe -- write `len` fresh bytes at off, persist on lane, read back */
void probe(RPMEMpool *rpp, char *mem, size_t off, size_t len, unsigned lane,
	unsigned flags, uint64_t *rng, const char *what);

/* log_snapshot -- the rpmemd logs that exist now */
struct logsnap *log_snapshot(void);

/* log_known -- was `name` in the snapshot? */
bool log_known(const struct logsnap *ls, const char *name);

/* slurp -- a file's contents, NUL-terminated; NULL when unreadable */
char *slurp(const char *path);

/* log_count -- occurrences of `needle` in a log */
unsigned log_count(const char *path, const char *needle);

/* log_wait -- until `needle` is in the log `count` times, or timeout */
bool log_wait(const char *path, const char *needle, unsigned count, int ms);

/*
 * session_find -- the pid of the one rpmemd started since `before`, once
 * its log says "session: pid N"; its log path into `path`
 */
pid_t session_find(const struct logsnap *before, char *path, size_t len,
	int ms);

/*
 * rpmemd_running -- is pid a live (not zombie) rpmemd of this test?  Its
 * argv must name our poolset dir, so a recycled pid does not count.
 */
bool rpmemd_running(pid_t pid);

/*
 * pool_served -- create (seed > 0, attributes by it) or open (seed 0)
 * the set's pool on *nlanes lanes, and find the rpmemd serving it: its
 * pid, its log's path into log
 */
RPMEMpool *pool_served(const struct tset *s, char *mem, unsigned *nlanes,
	unsigned char seed, pid_t *pid, char *log, size_t loglen);

/* wait_gone -- until rpmemd `pid` has exited; false after `ms` */
bool wait_gone(pid_t pid, int ms);

/*
 * stdin_has_writer -- does any process but pid hold the pipe that is
 * pid's stdin?  (sshd holds the write end until the client's EOF.)
 */
bool stdin_has_writer(pid_t pid);

/* count_dir -- entries of a /proc/self directory (fds, threads) */
unsigned count_dir(const char *path);

/* read_full -- read exactly len bytes from fd within ms; false if not */
bool read_full(int fd, void *buf, size_t len, int ms);

/* join_by -- join a thread by an absolute tu_now_ms() deadline */
bool join_by(pthread_t t, long long deadline);

/* the test cases of each file, added to a test case of datapath.c */
void dpath_add_mix(TCase *tc);		/* datapath_mix.c */
void dpath_add_torn(TCase *tc);		/* datapath_mix.c */
void dpath_add_requests(TCase *tc);	/* datapath_requests.c */
void dpath_add_faults(TCase *tc);	/* datapath_faults.c */
void dpath_add_stray(TCase *tc);	/* datapath_stray.c */

#endif /* RPMEM_DPATH_H */
