/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sendlog.h -- an async replica's send log: the bytes of each flush and
 * persist, copied at the call, in the order the calls were made, kept
 * until rpmemd answers that it holds them durably (doc/async.md)
 *
 * A ring of `cap` bytes.  Application threads append records; one
 * sender takes the records not yet sent as the body of a LANE_OP_EPOCHS
 * message (merging a record into the one before it when it starts
 * inside or right after it and no epoch ended between), or sends a
 * large record where it lies in the ring (no copy: the message holds
 * its header, the lane sends its bytes from the ring), and releases
 * them when rpmemd's answer comes.  The lag is what is appended and not
 * released: its bytes, and the age of its oldest record.  Positions
 * count bytes ever appended, so a position tells which records a
 * message held after the ring has wrapped.
 */
#ifndef RPMEM_SENDLOG_H
#define RPMEM_SENDLOG_H 1

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sendlog {
	pthread_mutex_t lock;
	pthread_cond_t room;	/* a quarter of the ring free after a
				 * release, or the log closed */
	pthread_cond_t done;	/* records released, or the log closed */
	pthread_cond_t work;	/* records appended, or the log closed */
	char *buf;
	size_t cap;
	uint64_t head;		/* position after the newest record */
	uint64_t sent;		/* position of the first record not taken */
	uint64_t tail;		/* position of the oldest not released */
	uint64_t seq;		/* records appended so far */
	uint64_t sent_seq;	/* records taken so far */
	uint64_t done_seq;	/* records released so far */
	size_t piece_max;	/* the most data bytes of one record */
	uint64_t max_age_ns;	/* appends wait while the oldest record is
				 * older (0: no bound) */
	bool closed;		/* nothing more is appended or sent */
};

/* what a taken message holds: to release once it is answered */
struct sendlog_ticket {
	uint64_t upto;		/* position after its last record */
	uint64_t seq;		/* the number of records up to its last */
	const void *data;	/* the bytes the message sends from the ring, */
	size_t dlen;		/* after what the buffer holds (0: none) */
};

/*
 * sendlog_init -- an empty log of `cap` bytes (a multiple of 8, at least
 * 64 KiB) whose records carry at most `piece_max` bytes each (a lane
 * message's room, lane_rec included, at most a quarter of `cap`); its
 * appends also wait while the oldest record not released is older than
 * `max_age_ns` (0: no such bound).  0, -EINVAL or -ENOMEM.
 */
int sendlog_init(struct sendlog *l, size_t cap, size_t piece_max,
		uint64_t max_age_ns);

/*
 * sendlog_reset -- empty it and open it again for the next session
 * (nobody uses it meanwhile: the sender stopped, every lane held)
 */
void sendlog_reset(struct sendlog *l);

/*
 * sendlog_pieces -- records of at most `piece_max` bytes from now on
 * (the session's message room), in whole words, a record at most a
 * quarter of the ring as at sendlog_init; records already in keep
 * their size
 */
void sendlog_pieces(struct sendlog *l, size_t piece_max);

/* sendlog_fini -- free it (nobody may use it any more) */
void sendlog_fini(struct sendlog *l);

/*
 * sendlog_append -- copy `len` bytes of `src`, pool offset `off`, into
 * the log as one or more records, the last one ending an epoch when
 * `end` (`len` 0 with `end`: the records before it end one); waits for
 * room (and for the oldest record to be young enough) until
 * `deadline_ns` (CLOCK_MONOTONIC; 0: not at all).  Threads may append
 * at once: a record of a page or more takes its place in the order
 * under the lock and is copied after it is let go.  0 with *seq the
 * number of its last record, -ETIMEDOUT (some records of a long range
 * may be in), -EPIPE when the log is closed.
 */
int sendlog_append(struct sendlog *l, size_t off, const void *src,
		size_t len, bool end, uint64_t deadline_ns, uint64_t *seq);

/*
 * sendlog_take -- the records not yet sent, up to the first one whose
 * bytes are still being copied in, as lane_rec records of a
 * LANE_OP_EPOCHS body (addresses raddr + offset) into `msg`, at most
 * `cap` bytes; the bytes written (0: nothing to send) and the ticket.
 * A first record of `direct_min` bytes or more (0: none) goes alone and
 * is not copied: `msg` gets its lane_rec header, t->data and t->dlen
 * its bytes (padded to 8) where they lie in the ring, valid until the
 * ticket is released.
 */
size_t sendlog_take(struct sendlog *l, void *msg, size_t cap,
		uint64_t raddr, size_t direct_min, struct sendlog_ticket *t);

/* sendlog_last -- the number of records appended so far */
uint64_t sendlog_last(struct sendlog *l);

/* sendlog_release -- rpmemd answered the message of ticket `t` */
void sendlog_release(struct sendlog *l, const struct sendlog_ticket *t);

/*
 * sendlog_wait_work -- until there is something to take, the log is
 * closed, or `deadline_ns` passes (a record being copied in is waited
 * for past it); true when there is something
 */
bool sendlog_wait_work(struct sendlog *l, uint64_t deadline_ns);

/*
 * sendlog_wait_done -- until record `seq` is released: 0; -EPIPE when
 * the log is closed, -ETIMEDOUT when nothing was released for
 * `stall_ns` (0: do not wait)
 */
int sendlog_wait_done(struct sendlog *l, uint64_t seq, uint64_t stall_ns);

/* sendlog_lag -- bytes appended and not released; the oldest's age */
void sendlog_lag(struct sendlog *l, uint64_t *bytes, uint64_t *age_ns);

/*
 * sendlog_unreleased -- call `fn` with the range of every record not
 * released yet, oldest first (the sender's connection is lost: they go
 * to the out-of-sync bitmap)
 */
void sendlog_unreleased(struct sendlog *l,
		void (*fn)(void *arg, size_t off, size_t len), void *arg);

/* sendlog_close -- wake every waiter; nothing more is appended */
void sendlog_close(struct sendlog *l);

#endif /* RPMEM_SENDLOG_H */
