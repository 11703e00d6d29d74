/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * async.c -- an async replica: the data calls into the send log, the
 * sender thread, and the log's ends (async.h, doc/async.md)
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "async.h"
#include "clock.h"
#include "fab.h"
#include "log.h"
#include "obc.h"
#include "replconf.h"
#include "repl_int.h"
#include "sendlog.h"

#define PIECE_MAX (32 * 1024)	/* a record's bytes before a session */
#define DIRECT_MIN (64 * 1024)	/* a record sent from the ring, uncopied */
#define IDLE_NS 50000000ULL	/* the sender looks for a stop this often */
#define STATUS_NS 1000000000ULL	/* and rewrites the handle's status */
#define WAIT_NS (24ULL * 3600 * 1000000000)	/* "until the link says" */

struct async {
	RPMEMpool *rpp;
	struct replconf conf;
	struct sendlog log;
	pthread_t thread;
	bool running;
	_Atomic bool stop;	/* the sender takes nothing more and ends
				 * once what it sent is answered */
	unsigned lane;		/* the session lane it sends on */
	struct fabric *fab;	/* the session it sends on */
	uint64_t raddr;		/* rpmemd's address of pool offset 0 */
	size_t direct_min;	/* records this large go from the ring */
};

/* async_on -- the replica is async */
bool
async_on(const RPMEMpool *rpp)
{
	return rpp->async != NULL;
}

/* async_init -- the settings; the log for an async replica */
int
async_init(RPMEMpool *rpp)
{
	struct replconf c;
	char err[ERRMSG_MAX];
	int r = replconf_get(rpp->target_str, rpp->desc, &c, err,
		sizeof(err));
	if (r)
		return fail(-r, "replication settings of '%s' on %s: %s",
			rpp->desc, rpp->target_str, err);
	if (c.mode == REPLCONF_SYNC || rpp->repl->tool)
		return 0;
	struct async *a = calloc(1, sizeof(*a));
	if (!a)
		return fail(ENOMEM, "!allocating an async replica");
	a->conf = c;
	a->rpp = rpp;
	r = sendlog_init(&a->log, (size_t)c.lag_bytes, PIECE_MAX,
		c.lag_ms * 1000000ULL);
	if (r) {
		free(a);
		return fail(-r, "!a send log of %llu bytes for '%s' on %s",
			(unsigned long long)c.lag_bytes, rpp->desc,
			rpp->target_str);
	}
	rpp->async = a;
	rpp->extra_lanes = 1;
	log_notice("'%s' on %s: async replica (mode from %s), lag at most "
		"%llu bytes and %u ms, on congestion %s", rpp->desc,
		rpp->target_str, c.from, (unsigned long long)c.lag_bytes,
		c.lag_ms, replconf_congestion_name(c.congestion));
	return 0;
}

/* async_session -- refuse a peer or a session that cannot serve it */
int
async_session(RPMEMpool *rpp, bool pmdk, unsigned minor, unsigned n)
{
	if (!rpp->extra_lanes)
		return 0;
	if (pmdk || minor < PROTO_MINOR_EPOCHS)
		return fail(EPROTONOSUPPORT, "replica '%s' on %s is async, "
			"but its rpmemd %s serves only synchronous replicas: "
			"make it sync (RPMEM_REPLICATION, librpmem.conf), or "
			"run this project's rpmemd of protocol 0.%d on there",
			rpp->desc, rpp->target.node, pmdk ?
			"(PMDK's, protocol 0.1)" : "(of an older protocol)",
			PROTO_MINOR_EPOCHS);
	if (n < 2)
		return fail(ENOSPC, "replica '%s' on %s is async: its sender "
			"needs a lane besides the application's, rpmemd "
			"granted %u", rpp->desc, rpp->target.node, n);
	return 0;
}

/* async_lag -- the log's bytes and its oldest's age */
void
async_lag(RPMEMpool *rpp, uint64_t *bytes, uint64_t *ms)
{
	*bytes = *ms = 0;
	if (!rpp->async)
		return;
	uint64_t age;
	sendlog_lag(&rpp->async->log, bytes, &age);
	*ms = age / 1000000;
}

/*
 * show_lag -- the handle's status anew, about once a second, when the
 * state machine's lock is free (it may be waiting for this thread)
 */
static void
show_lag(struct async *a, uint64_t *next)
{
	uint64_t now = clock_ns();
	if (now < *next)
		return;
	*next = now + STATUS_NS;
	struct repl *rp = a->rpp->repl;
	if (pthread_mutex_trylock(&rp->mu))
		return;
	repl_status(a->rpp);
	pthread_mutex_unlock(&rp->mu);
}

#define W FABRIC_EPOCHS_WINDOW

/*
 * sender -- ship the log: take what is not sent into the lane's next
 * free buffer, send it (W in flight, up to rpmemd's buffer each),
 * release what is answered, oldest first; on an error the connection
 * is broken and the log closed, so callers waiting in it return and
 * find the session lost
 */
static void *
sender(void *arg)
{
	struct async *a = arg;
	struct sendlog_ticket t[W];	/* in flight: t[h], ... t[h + n - 1] */
	unsigned h = 0, n = 0;
	uint64_t next = 0, upto = 0;	/* where the last take ended */
	int r = 0;
	while (!r) {
		show_lag(a, &next);
		if (n == W) {
			if ((r = fabric_answers(a->fab, a->lane, W - 1)))
				break;
			sendlog_release(&a->log, &t[h]);
			h = (h + 1) % W;
			n--;
		}
		bool any = !atomic_load(&a->stop) && sendlog_wait_work(
			&a->log, n ? 0 : clock_ns() + IDLE_NS);
		if (any) {
			void *body;
			size_t cap;
			if ((r = fabric_epochs_buf(a->fab, a->lane, &body,
					&cap)))
				break;
			struct sendlog_ticket tk;
			size_t used = sendlog_take(&a->log, body, cap,
				a->raddr, a->direct_min, &tk);
			bool moved = tk.upto != upto;
			upto = tk.upto;
			if (!used && !moved) {
				/* a record larger than the lane's message */
				r = -EMSGSIZE;
				break;
			}
			if (!used) {
				/* only drains: done with what is before them */
				if (n)
					t[(h + n - 1) % W] = tk;
				else
					sendlog_release(&a->log, &tk);
				continue;
			}
			if ((r = fabric_epochs_send(a->fab, a->lane, used,
					tk.data, tk.dlen)))
				break;
			t[(h + n++) % W] = tk;
			continue;
		}
		if (n) {
			if ((r = fabric_answers(a->fab, a->lane, 0)))
				break;
			/* the newest ticket covers every older one */
			sendlog_release(&a->log, &t[(h + n - 1) % W]);
			h = n = 0;
			continue;
		}
		if (atomic_load(&a->stop))
			break;
	}
	if (r) {
		log_err("async sender on lane %u: %s", a->lane, strerror(-r));
		fabric_break(a->fab, -r);
	}
	/* fabric_break told the worker (repl_on_break) */
	sendlog_close(&a->log);
	return NULL;
}

/*
 * say_async -- rpmemd's copy says durably that this master writes on
 * asynchronously (its generations' async_master: the Pacemaker agent
 * prefers a synchronous copy); a peer before protocol 0.9, or a master
 * copy without generations (memory that maps no file: nothing to name
 * it by), says nothing.  0 or -errno of the channel.
 */
static int
say_async(RPMEMpool *rpp)
{
	if (!rpp->has_gen || !rpp->mgen.id ||
			rpp->resp.ext.minor < PROTO_MINOR_ASYNC)
		return 0;
	struct proto_resp resp;
	int r = gen_call(rpp, PROTO_GEN_ASYNC, &rpp->mgen, &resp);
	if (r)
		log_err("'%s' on %s: marking the replica async: %s",
			rpp->desc, rpp->target.node, strerror(-r));
	return r;
}

/* async_ready -- READY with a session: roll, then the sender starts */
int
async_ready(RPMEMpool *rpp)
{
	struct async *a = rpp->async;
	if (!a || a->running || !rpp->fab)
		return 0;
	int r = mgen_ahead(rpp, rpp->repl->peer);
	if (r && r != -ENOENT)
		return r;
	/*
	 * and its record says so before the first acknowledgement: a
	 * master that dies or breaks (on-replica-loss fail) from here on
	 * has acknowledged what the replica may lack
	 */
	r = repl_record(rpp, false, "an async replica: behind the master "
		"until a close drains its log", false);
	if (r && r != -ENOENT)
		return r;
	if ((r = say_async(rpp)))
		return r;
	a->fab = rpp->fab;
	a->lane = atomic_load(&rpp->fab_nlanes);
	a->raddr = rpp->resp.ibc.raddr;
	/* records as large as a message: those of DIRECT_MIN or more
	 * go uncopied where the provider takes unregistered memory */
	bool direct;
	size_t room = fabric_epochs_room(a->fab, &direct);
	sendlog_pieces(&a->log, room - sizeof(struct lane_rec));
	a->direct_min = direct ? DIRECT_MIN : 0;
	atomic_store(&a->stop, false);
	r = pthread_create(&a->thread, NULL, sender, a);
	if (r)
		return -r;
	a->running = true;
	return 0;
}

/* mark -- a record not answered is out of sync */
static void
mark(void *arg, size_t off, size_t len)
{
	oos_mark(arg, off, len);
}

/* halt -- the sender stopped and joined, the log closed */
static void
halt(struct async *a)
{
	atomic_store(&a->stop, true);
	if (a->running) {
		(void) pthread_join(a->thread, NULL);
		a->running = false;
	}
	sendlog_close(&a->log);
}

/* unanswered -- what rpmemd did not answer goes to the bitmap */
static void
unanswered(RPMEMpool *rpp)
{
	struct async *a = rpp->async;
	uint64_t bytes, age;
	sendlog_lag(&a->log, &bytes, &age);
	sendlog_unreleased(&a->log, mark, &rpp->repl->oos);
	if (bytes)
		log_warn("'%s' on %s: %llu bytes of the async log were not "
			"answered (the oldest %llu ms): recorded out of sync",
			rpp->desc, rpp->target.node,
			(unsigned long long)bytes,
			(unsigned long long)(age / 1000000));
}

/* async_halt -- the session is lost: the sender stops, the log closes */
void
async_halt(RPMEMpool *rpp)
{
	if (rpp->async)
		halt(rpp->async);
}

/* async_stop -- the sender ends on its own once answered (async.h) */
void
async_stop(RPMEMpool *rpp)
{
	if (rpp->async)
		atomic_store(&rpp->async->stop, true);
}

/* async_lost -- the session goes: stop, record what was not answered */
void
async_lost(RPMEMpool *rpp)
{
	struct async *a = rpp->async;
	if (!a)
		return;
	halt(a);
	unanswered(rpp);
	sendlog_reset(&a->log);
}

/* async_close -- drain within the timeout, stop, record what is left */
bool
async_close(RPMEMpool *rpp, int timeout_ms)
{
	struct async *a = rpp->async;
	if (!a || !a->running)
		return true;
	uint64_t seq = sendlog_last(&a->log);
	int r = sendlog_wait_done(&a->log, seq,
		(uint64_t)timeout_ms * 1000000ULL);
	halt(a);
	unanswered(rpp);
	return r == 0;
}

/* async_fini -- stop and free */
void
async_fini(RPMEMpool *rpp)
{
	struct async *a = rpp->async;
	if (!a)
		return;
	halt(a);
	sendlog_fini(&a->log);
	free(a);
	rpp->async = NULL;
}

/*
 * async_op -- a data call into the log (reads wait for it to drain);
 * under pull-ahead an append that finds no room waits for none
 */
int
async_op(RPMEMpool *rpp, unsigned i, enum repl_op op, size_t off,
		size_t len, void *buf)
{
	struct sendlog *l = &rpp->async->log;
	const char *src = (const char *)rpp->pool_addr + off;
	bool pull = rpp->async->conf.congestion == REPLCONF_PULL_AHEAD;
	/* the sender breaks a session that answers nothing in time */
	uint64_t seq, deadline = pull ? 0 : clock_ns() + WAIT_NS;
	uint64_t stall = (uint64_t)Env.timeout_ms * 1000000ULL;
	int r = 0;
	switch (op) {
	case REPL_FLUSH:
	case REPL_DRAIN:
	case REPL_PERSIST:
	case REPL_DEEP_PERSIST:
		r = sendlog_append(l, off, op == REPL_DRAIN ? NULL : src, len,
			op != REPL_FLUSH, deadline, &seq);
		/* congested: the handle pulls ahead (repl_pull_ahead) */
		if (r == -ETIMEDOUT && pull)
			return -EAGAIN;
		if (!r && op == REPL_DEEP_PERSIST)
			r = sendlog_wait_done(l, seq, stall);
		break;
	case REPL_READ:
		r = sendlog_wait_done(l, sendlog_last(l), stall);
		if (!r)
			r = fabric_read(rpp->fab, i, buf, off, len);
		break;
	default:
		return -EINVAL;
	}
	/* nothing answered for RPMEM_TIMEOUT: the session is lost */
	if (r == -ETIMEDOUT)
		fabric_break(rpp->fab, ETIMEDOUT);
	return r;
}
