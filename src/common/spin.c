/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spin.c -- bounded, adaptive spinning before a blocking wait (spin.h)
 */
#include <sched.h>
#include <stdlib.h>

#include <rdma/fabric.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "spin.h"

#define EST_CAP 4		/* waits count for at most 4 caps */
#define PROBE_MAX 64		/* blocking waits between probes, at most */
#define YIELD_EVERY 4		/* polls between two sched_yield */
#define YIELD_LOST_NS 20000	/* a yield this long ran another thread */

/* spin_conf_env -- RPMEM_SPIN_US fixed, else the default, growing */
struct spin_conf
spin_conf_env(unsigned grow_us)
{
	const char *s = getenv("RPMEM_SPIN_US");
	if (s && *s) {
		char *end;
		unsigned long us = strtoul(s, &end, 10);
		if (!*end && us <= SPIN_MAX_US)
			return (struct spin_conf){ us * 1000, us * 1000 };
	}
	uint64_t cap = grow_us > SPIN_DEFAULT_US ? grow_us : SPIN_DEFAULT_US;
	return (struct spin_conf){ SPIN_DEFAULT_US * 1000ULL, cap * 1000 };
}

/* spin_init -- a waiter that spins as `conf` says */
void
spin_init(struct spin *s, struct spin_conf conf)
{
	s->conf = conf;
	s->bound_ns = conf.bound_ns;
	s->est_ns = 0;
	s->skip = 0;
	s->backoff = 1;
	s->spun = false;
}

/*
 * spin_budget -- the bound while recent waits ended within it; else
 * nothing, but for a probe every `backoff` waits
 */
uint64_t
spin_budget(struct spin *s)
{
	s->spun = false;
	if (!s->bound_ns)
		return 0;
	if (s->est_ns > s->bound_ns && s->skip) {
		s->skip--;
		return 0;
	}
	s->spun = true;
	return s->bound_ns;
}

/*
 * spin_relax -- between two polls: pause, and every few polls offer the
 * CPU to any other runnable thread (on 2 cores the peer this waiter
 * waits for may need this one).  False when another thread took it for
 * a while: the CPU is contended, and a waiter that sleeps is woken
 * sooner than one that spins behind others.
 */
static bool
spin_relax(unsigned polls)
{
#if defined(__x86_64__) || defined(__i386__)
	_mm_pause();
#endif
	if (polls % YIELD_EVERY != YIELD_EVERY - 1)
		return true;
	uint64_t t = spin_now_ns();
	(void) sched_yield();
	return spin_now_ns() - t < YIELD_LOST_NS;
}

/* spin_cq_try -- fi_cq_read, else poll within the budget */
ssize_t
spin_cq_try(struct spin *s, struct fid_cq *cq, void *buf, size_t count,
		struct spin_wait *w)
{
	w->t0 = 0;
	w->hit = false;
	ssize_t n = fi_cq_read(cq, buf, count);
	if (n != -FI_EAGAIN)
		return n;
	w->t0 = spin_now_ns();
	uint64_t budget = spin_budget(s);
	for (unsigned i = 0; n == -FI_EAGAIN && budget; i++) {
		if (spin_now_ns() - w->t0 >= budget || !spin_relax(i))
			break;
		n = fi_cq_read(cq, buf, count);
	}
	w->hit = n != -FI_EAGAIN;
	return n;
}

/* spin_wait_end -- account a wait that had to wait */
void
spin_wait_end(struct spin *s, const struct spin_wait *w)
{
	if (w->t0)
		spin_account(s, spin_now_ns() - w->t0, w->hit);
}

/*
 * follow -- the bound a quarter above the waits' estimate, within the
 * conf's range: a fixed bound stays, a growing one covers waits up to
 * its cap
 */
static void
follow(struct spin *s)
{
	uint64_t b = s->est_ns + s->est_ns / 4;
	s->bound_ns = b < s->conf.bound_ns ? s->conf.bound_ns :
		b > s->conf.cap_ns ? s->conf.cap_ns : b;
}

/*
 * spin_account -- fold a wait into the estimate: a wait that ended while
 * spinning weighs half, one that blocked a quarter (it includes the
 * wake-up); the bound follows (follow); a spin that found nothing
 * while waits run longer than the bound puts off the next one, twice
 * as long as the last time
 */
void
spin_account(struct spin *s, uint64_t waited_ns, bool hit)
{
	uint64_t cap = EST_CAP * s->conf.cap_ns;
	uint64_t w = waited_ns < cap ? waited_ns : cap;
	if (hit) {
		s->est_ns = (s->est_ns + w) / 2;
		s->backoff = 1;
		s->skip = 0;
		follow(s);
		return;
	}
	s->est_ns = s->est_ns - s->est_ns / 4 + w / 4;
	follow(s);
	if (s->est_ns > s->bound_ns && s->spun) {
		s->skip = s->backoff;
		if (s->backoff < PROBE_MAX)
			s->backoff *= 2;
	}
}
