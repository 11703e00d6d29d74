/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spin.h -- bounded, adaptive spinning before a blocking wait
 *
 * A waiter that is woken out of the kernel pays a wake-up (tens of
 * microseconds on a loaded or virtual machine) on top of what it waits
 * for.  Both ends of a lane therefore poll their completion queue for a
 * while before they block, but only while it pays: a waiter spins (at
 * most its bound, yielding the CPU as it goes) only while its recent
 * waits ended within that bound, and otherwise blocks at once, probing
 * now and then, less often the longer the waits stay long.  An idle
 * lane thus burns nothing but one bound after its last message.
 *
 * Where the waits are the peer's I/O rather than its CPU (a replica on a
 * file system, whose every strict persist waits for an msync), the bound
 * may follow them up to a cap, so that replies that steadily take a
 * little longer than the starting bound are still polled for rather
 * than each paying a wake-up on top.  Only there: a poller that follows
 * waits which need this host's CPU (sealing a large persist, the
 * kernel's TCP send path) takes it from the work it waits for.
 */
#ifndef RPMEM_SPIN_H
#define RPMEM_SPIN_H 1

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

struct fid_cq;

#define SPIN_DEFAULT_US 50	/* the bound, unless RPMEM_SPIN_US says */
#define SPIN_GROW_US 250	/* the most it grows to where waits are I/O */
#define SPIN_MAX_US 10000	/* the most RPMEM_SPIN_US may ask for */

/* how a waiter spins: the bound it starts from and the most it grows to */
struct spin_conf {
	uint64_t bound_ns;	/* 0: never spin */
	uint64_t cap_ns;	/* >= bound_ns; equal: a fixed bound */
};

/* one waiter: one thread at a time */
struct spin {
	struct spin_conf conf;
	uint64_t bound_ns;	/* never spin longer; 0: never spin */
	uint64_t est_ns;	/* recent waits, averaged, capped */
	unsigned skip;		/* blocking waits before the next probe */
	unsigned backoff;	/* waits between probes while waits are long */
	bool spun;		/* this wait was given a budget */
};

/* spin_now_ns -- CLOCK_MONOTONIC in nanoseconds */
static inline uint64_t
spin_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * spin_conf_env -- a fixed bound from RPMEM_SPIN_US (microseconds, 0 to
 * SPIN_MAX_US; 0 never spins), else SPIN_DEFAULT_US, growing to
 * `grow_us` when that is more (SPIN_GROW_US where the waits are I/O)
 */
struct spin_conf spin_conf_env(unsigned grow_us);

/* spin_init -- a waiter that spins as `conf` says */
void spin_init(struct spin *s, struct spin_conf conf);

/*
 * spin_budget -- how long this wait may spin: the bound while recent
 * waits ended within it, else 0 but for a probe now and then
 */
uint64_t spin_budget(struct spin *s);

/* one wait for completions, from its first poll to its end */
struct spin_wait {
	uint64_t t0;		/* when the first poll found nothing; 0: it
				 * found something, nothing to account */
	bool hit;		/* the spin found something */
};

/*
 * spin_cq_try -- fi_cq_read `cq`; when that finds nothing, poll it again
 * until it gives something or this wait's budget (spin_budget) is
 * spent: -FI_EAGAIN then, and the caller blocks in the kernel.  Between
 * polls it pauses, and yields the CPU every few; it stops early when a
 * yield let another thread run for a while (a contended CPU wakes a
 * sleeper sooner than it serves a spinner).  `w` records the wait for
 * spin_wait_end, which the caller calls once the wait is over.
 */
ssize_t spin_cq_try(struct spin *s, struct fid_cq *cq, void *buf,
		size_t count, struct spin_wait *w);

/* spin_wait_end -- the wait `w` is over: account it (spin_account) */
void spin_wait_end(struct spin *s, const struct spin_wait *w);

/*
 * spin_account -- a wait that had to wait (its first poll found
 * nothing) took `waited_ns`; `hit` when it ended while spinning
 */
void spin_account(struct spin *s, uint64_t waited_ns, bool hit);

#endif /* RPMEM_SPIN_H */
