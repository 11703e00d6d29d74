/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tu.h -- what the C test programs share: time, /proc, strangers at a
 * lane port (tests/common/libtu.la; tests/README.md)
 */
#ifndef RPMEM_TU_H
#define RPMEM_TU_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* TU_NELEMS -- how many rows the array `a` has */
#define TU_NELEMS(a) (sizeof(a) / sizeof((a)[0]))

/*
 * TU_POBJ_LAYOUT -- libpmemobj's layout `name` (libpmemobj.h first): a
 * root of struct `root`, objects of struct `obj`
 */
#define TU_POBJ_LAYOUT(name, root, obj) \
	POBJ_LAYOUT_BEGIN(name); \
	POBJ_LAYOUT_ROOT(name, struct root); \
	POBJ_LAYOUT_TOID(name, struct obj); \
	POBJ_LAYOUT_END(name)

/* ---------------------------------------------------------- tu_time.c */

/* tu_now_ms -- CLOCK_MONOTONIC in ms, comparable across processes */
long long tu_now_ms(void);

/* tu_now_us -- CLOCK_MONOTONIC in microseconds */
long long tu_now_us(void);

/* tu_nap -- sleep `ms` milliseconds between two polls of a condition */
void tu_nap(long ms);

/* ---------------------------------------------------------- tu_rand.c */

/* tu_mix -- splitmix64's output for state x: a well-spread value */
uint64_t tu_mix(uint64_t x);

/* tu_rnd -- splitmix64 step: the next number of the sequence in *s */
uint64_t tu_rnd(uint64_t *s);

/* --------------------------------------------------------- tu_bytes.c */

/* tu_be_at -- the `n`-byte big-endian number at `b` + `off` */
uint64_t tu_be_at(const unsigned char *b, size_t off, size_t n);

/* tu_be_set -- write `v` as an `n`-byte big-endian number at b + off */
void tu_be_set(unsigned char *b, size_t off, size_t n, uint64_t v);

/* tu_host32_at -- the host-order u32 at `b` + `off` */
uint32_t tu_host32_at(const unsigned char *b, size_t off);

/* tu_host32_set -- write `v` in host order at `b` + `off` */
void tu_host32_set(unsigned char *b, size_t off, uint32_t v);

/* ----------------------------------------------------------- tu_env.c */

/* failed expectations so far (TU_EXPECT) */
extern int tu_failures;

/* TU_EXPECT -- count and report a failed expectation, then go on */
#define TU_EXPECT(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
		fprintf(stderr, __VA_ARGS__); \
		fprintf(stderr, "\n"); \
		tu_failures++; \
	} \
} while (0)

/*
 * tu_need -- the value of variable `name` that prog.sh sets, or NULL
 * with *missing set and a message naming it
 */
const char *tu_need(const char *prog, const char *name, bool *missing);

/* tu_need_or_exit -- the same; exit 2 when it is not set */
const char *tu_need_or_exit(const char *prog, const char *name);

/*
 * tu_usage -- `ok` (the arguments fit); when not, also "usage: USAGE"
 * on stderr
 */
bool tu_usage(bool ok, const char *usage);

/*
 * tu_die -- "PROG: WHAT: message" on stderr, then exit 1: a program's
 * fatal error about the object (a pool set, say) it works on
 */
__attribute__((format(printf, 3, 4), noreturn))
void tu_die(const char *prog, const char *what, const char *fmt, ...);

/* where a C test of an sshd target works (harness_test_env sets it) */
struct tu_target {
	const char *target;		/* [user@]host[:port] */
	const char *poolset_dir;	/* rpmemd's poolset-dir */
	const char *part_dir;		/* where the sets' parts go */
};

/*
 * tu_target_load -- t from <prefix>_TARGET, <prefix>_POOLSET_DIR and
 * <prefix>_PART_DIR, each as tu_need reads it
 */
void tu_target_load(const char *prog, const char *prefix,
	struct tu_target *t, bool *missing);

/* ------------------------------------------------------------ tu_fs.c */

/* tu_rmtree -- remove `path` and all beneath it, links not followed */
int tu_rmtree(const char *path);

/* ---------------------------------------------------------- tu_proc.c */

/* tu_slurp -- up to len - 1 bytes of a small file, NUL-terminated; or -1 */
ssize_t tu_slurp(const char *path, char *buf, size_t len);

/* tu_proc_state -- state letter of a process (0: gone), its parent */
char tu_proc_state(pid_t pid, pid_t *ppid);

/* tu_proc_live -- pid exists and is no zombie */
bool tu_proc_live(pid_t pid);

/* tu_proc_argv_has -- the argv of pid, joined by spaces, has `needle` */
bool tu_proc_argv_has(pid_t pid, const char *needle);

/* tu_proc_stopped -- every thread of pid is stopped (false: none, gone) */
bool tu_proc_stopped(pid_t pid);

/* tu_dir_entries -- entries but . and .. of a directory (-1: none) */
int tu_dir_entries(const char *path);

/*
 * tu_dir_each -- fn(DIR/NAME, arg) for each entry of dir whose name does
 * not begin with '.', until fn returns true: 1 then, 0 after the last,
 * -1 when dir cannot be opened
 */
int tu_dir_each(const char *dir, bool (*fn)(const char *path, void *arg),
	void *arg);

/* tu_proc_fds -- open descriptors of a process (-1: gone) */
int tu_proc_fds(pid_t pid);

/* tu_pidfd_wait -- wait for any process to exit; false after `ms` */
bool tu_pidfd_wait(pid_t pid, int ms);

/* ------------------------------------------------------ tu_stranger.c */

/*
 * tu_fabric_stranger -- one libfabric FI_EP_MSG connection request to
 * addr:port of provider `prov` carrying `len` bytes of connection data:
 * 1 accepted, 0 refused, else a negative libfabric code (-FI_ETIMEDOUT:
 * no answer in `ms`)
 */
int tu_fabric_stranger(const char *prov, const char *addr, unsigned port,
	const void *data, size_t len, int ms);

/* tu_tcp_stranger -- a plain TCP connection to addr:port; fd or -errno */
int tu_tcp_stranger(const char *addr, unsigned port);

#endif /* RPMEM_TU_H */
