/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sendlog.c -- an async replica's send log (sendlog.h)
 *
 * A record in the ring: a header, then its bytes padded to 8 with zeros
 * (so a record sent from where it lies is a lane_rec's body).  A record
 * never wraps: where the rest of the ring is too short for the next one,
 * a pad record fills it (or, shorter than a header, the rest is skipped
 * by the same rule on both sides).  A record of ALIGN_MIN bytes or more
 * starts its bytes on a cache line, behind a gap record where needed:
 * the kernel copies them from there into the socket, and a copy whose
 * source is not so aligned runs several times slower on some CPUs
 * (AMD EPYC here: rep movsb at 2.5 GB/s against 30 for some pairs of
 * source and destination offsets).
 *
 * A record of FILL_MIN bytes or more is reserved under the lock (its
 * header written, its place in the order taken) and its bytes copied
 * after the lock is let go, so that other writers and the sender do not
 * wait for the copy; the sender takes nothing from a record still
 * being filled on, which keeps the order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "fab.h"
#include "sendlog.h"

#define REC_END 0x1U	/* its call ended an epoch */
#define REC_PAD 0x2U	/* fills the rest of the ring */
#define REC_GAP 0x4U	/* its bytes are nothing: the next one's data
			 * starts on a cache line */
#define REC_FILL 0x8U	/* its bytes are being copied (not to be taken) */
#define CAP_MIN (64 * 1024)
#define LINE 64
#define ALIGN_MIN 4096	/* records this large start their data on a line */
#define FILL_MIN 4096	/* records this large are copied outside the lock */
#define FILL_WAIT_NS 1000000000ULL	/* the sender waits for one that long */

struct rec {
	uint64_t off;		/* pool offset */
	uint32_t len;		/* data bytes */
	uint32_t flags;
	uint64_t t_ns;		/* appended at, CLOCK_MONOTONIC */
	uint8_t data[];
};

/* rec_size -- ring bytes of a record of `len` data bytes */
static size_t
rec_size(size_t len)
{
	return sizeof(struct rec) + ((len + 7) & ~(size_t)7);
}

/* rest -- ring bytes from position `pos` to the ring's end */
static size_t
rest(const struct sendlog *l, uint64_t pos)
{
	return l->cap - (size_t)(pos % l->cap);
}

/* at -- the record at position `pos` */
static struct rec *
at(const struct sendlog *l, uint64_t pos)
{
	return (struct rec *)(void *)(l->buf + pos % l->cap);
}

/*
 * skip_pad -- the first record from `pos` on that is not a pad (or a
 * rest too short for a header: the ring's next start) or a gap; `head`
 * when there is none
 */
static uint64_t
skip_pad(const struct sendlog *l, uint64_t pos, uint64_t head)
{
	while (pos != head) {
		size_t r = rest(l, pos);
		if (r < sizeof(struct rec) || (at(l, pos)->flags & REC_PAD))
			pos += r;
		else if (at(l, pos)->flags & REC_GAP)
			pos += rec_size(at(l, pos)->len);
		else
			break;
	}
	return pos;
}

/*
 * gap -- ring bytes of the gap record a record of `len` bytes at `pos`
 * needs before it (0: none), so that its data starts on a line
 */
static size_t
gap(const struct sendlog *l, uint64_t pos, size_t len)
{
	if (len < ALIGN_MIN)
		return 0;
	uintptr_t d = (uintptr_t)at(l, pos)->data;
	size_t g = (LINE - d % LINE) % LINE;
	return g && g < sizeof(struct rec) ? g + LINE : g;
}

/* sendlog_init -- an empty log */
int
sendlog_init(struct sendlog *l, size_t cap, size_t piece_max,
		uint64_t max_age_ns)
{
	memset(l, 0, sizeof(*l));
	if (cap < CAP_MIN || cap % 8 || piece_max == 0 ||
			rec_size(piece_max) > cap / 4)
		return -EINVAL;
	if (posix_memalign((void **)&l->buf, LINE, cap))
		return -ENOMEM;
	l->cap = cap;
	l->piece_max = piece_max;
	l->max_age_ns = max_age_ns;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->room, &ca);
	pthread_cond_init(&l->done, &ca);
	pthread_cond_init(&l->work, &ca);
	pthread_condattr_destroy(&ca);
	return 0;
}

/* sendlog_reset -- empty and open again */
void
sendlog_reset(struct sendlog *l)
{
	pthread_mutex_lock(&l->lock);
	l->head = l->sent = l->tail = 0;
	l->seq = l->sent_seq = l->done_seq = 0;
	l->closed = false;
	pthread_mutex_unlock(&l->lock);
}

/* sendlog_pieces -- the largest record from now on */
void
sendlog_pieces(struct sendlog *l, size_t piece_max)
{
	size_t most = l->cap / 4 - sizeof(struct rec);
	/* whole words: a piece's end never splits one */
	piece_max = (piece_max < most ? piece_max : most) & ~(size_t)7;
	pthread_mutex_lock(&l->lock);
	if (piece_max)
		l->piece_max = piece_max;
	pthread_mutex_unlock(&l->lock);
}

/* too_old -- the oldest record not released is past the age bound */
static bool
too_old(const struct sendlog *l)
{
	uint64_t pos = skip_pad(l, l->tail, l->head);
	return l->max_age_ns && pos != l->head &&
		clock_ns() - at(l, pos)->t_ns > l->max_age_ns;
}

/* sendlog_fini -- free it */
void
sendlog_fini(struct sendlog *l)
{
	if (!l->buf)
		return;
	pthread_cond_destroy(&l->work);
	pthread_cond_destroy(&l->done);
	pthread_cond_destroy(&l->room);
	pthread_mutex_destroy(&l->lock);
	free(l->buf);
	l->buf = NULL;
}

/*
 * wait_until -- wait on `cv` (the lock held) until woken or the
 * deadline (0: return at once); false when the deadline passed
 */
static bool
wait_until(struct sendlog *l, pthread_cond_t *cv, uint64_t deadline_ns)
{
	if (!deadline_ns || clock_ns() >= deadline_ns)
		return false;
	struct timespec ts = {
		.tv_sec = (time_t)(deadline_ns / 1000000000ULL),
		.tv_nsec = (long)(deadline_ns % 1000000000ULL),
	};
	(void) pthread_cond_timedwait(cv, &l->lock, &ts);
	return true;
}

/*
 * reserve -- the place of one record of at most piece_max bytes, its
 * header written, waiting for room; the lock held
 */
static int
reserve(struct sendlog *l, size_t off, size_t len, uint32_t flags,
		uint64_t deadline_ns, struct rec **out)
{
	size_t need = rec_size(len);
	for (;;) {
		if (l->closed)
			return -EPIPE;
		size_t r = rest(l, l->head);
		size_t fill = gap(l, l->head, len), pad = 0;
		if (r < fill + need) {
			pad = r;
			fill = gap(l, l->head + pad, len);
		}
		if (l->head + pad + fill + need - l->tail <= l->cap &&
				!too_old(l)) {
			if (pad >= sizeof(struct rec))
				*at(l, l->head) = (struct rec){ .flags =
					REC_PAD };
			l->head += pad;
			if (fill)
				*at(l, l->head) = (struct rec){ .len =
					(uint32_t)(fill - sizeof(struct rec)),
					.flags = REC_GAP, .t_ns = clock_ns() };
			l->head += fill;
			break;
		}
		if (!wait_until(l, &l->room, deadline_ns))
			return -ETIMEDOUT;
	}
	struct rec *rec = at(l, l->head);
	*rec = (struct rec){ .off = off, .len = (uint32_t)len,
		.flags = flags, .t_ns = clock_ns() };
	l->head += need;
	l->seq++;
	*out = rec;
	return 0;
}

/* fill -- a record's bytes, padded to 8 with zeros */
static void
fill(struct rec *rec, const void *src)
{
	if (rec->len)
		memcpy(rec->data, src, rec->len);
	memset(rec->data + rec->len, 0, rec_size(rec->len) -
		sizeof(*rec) - rec->len);
}

/*
 * sendlog_append -- the range's bytes as records, in pieces; a large
 * piece is copied with the lock let go, then handed to the sender
 */
int
sendlog_append(struct sendlog *l, size_t off, const void *src, size_t len,
		bool end, uint64_t deadline_ns, uint64_t *seq)
{
	int ret = 0;
	pthread_mutex_lock(&l->lock);
	*seq = l->seq;
	do {
		size_t n = len < l->piece_max ? len : l->piece_max;
		bool last = n == len, out = n >= FILL_MIN;
		struct rec *rec;
		ret = reserve(l, off, n, (last && end ? REC_END : 0) |
			(out ? REC_FILL : 0), deadline_ns, &rec);
		if (ret)
			break;
		*seq = l->seq;	/* not l->seq at the end: others append */
		if (out) {
			pthread_mutex_unlock(&l->lock);
			fill(rec, src);
			pthread_mutex_lock(&l->lock);
			rec->flags &= ~REC_FILL;
			if (!last) {	/* the sender may wait for this one */
				pthread_mutex_unlock(&l->lock);
				pthread_cond_signal(&l->work);
				pthread_mutex_lock(&l->lock);
			}
		} else {
			fill(rec, src);
		}
		off += n;
		src = (const char *)src + n;
		len -= n;
	} while (len);
	pthread_mutex_unlock(&l->lock);
	/* after the unlock: a woken sender does not wait on the lock */
	pthread_cond_signal(&l->work);
	return ret;
}

/*
 * merge -- the record joins the last lane_rec of the message (which
 * ends at `used`): it starts inside or right after it, no epoch ended
 * between, and the grown record fits; true when merged
 */
static bool
merge(struct lane_rec *last, size_t *used, size_t cap, uint64_t raddr,
		const struct rec *rec)
{
	uint64_t lo = last->addr - raddr;
	uint64_t len = last->len & ~LANE_REC_END;
	if ((last->len & LANE_REC_END) || rec->off < lo ||
			rec->off > lo + len)
		return false;
	uint64_t hi = rec->off + rec->len > lo + len ?
		rec->off + rec->len : lo + len;
	size_t grown = lane_rec_size((size_t)(hi - lo));
	size_t now = lane_rec_size((size_t)len);
	if (*used - now + grown > cap)
		return false;
	memcpy(last->data + (rec->off - lo), rec->data, rec->len);
	memset(last->data + (hi - lo), 0, grown - sizeof(*last) - (hi - lo));
	last->len = (hi - lo) | (rec->flags & REC_END ? LANE_REC_END : 0);
	*used = *used - now + grown;
	return true;
}

/* sendlog_take -- the unsent records as a LANE_OP_EPOCHS body */
size_t
sendlog_take(struct sendlog *l, void *msg, size_t cap, uint64_t raddr,
		size_t direct_min, struct sendlog_ticket *t)
{
	size_t used = 0, last_at = 0;
	t->data = NULL;
	t->dlen = 0;
	pthread_mutex_lock(&l->lock);
	for (;;) {
		uint64_t pos = skip_pad(l, l->sent, l->head);
		if (pos == l->head) {
			l->sent = pos;
			break;
		}
		const struct rec *rec = at(l, pos);
		if (rec->flags & REC_FILL) {	/* its bytes still coming */
			l->sent = pos;
			break;
		}
		struct lane_rec *last = (void *)((char *)msg + last_at);
		bool direct = direct_min && rec->len >= direct_min;
		if (rec->len == 0) {
			/* a drain: the epoch ends with the record before */
			if (used && (rec->flags & REC_END))
				last->len |= LANE_REC_END;
		} else if (t->dlen || (direct && used)) {
			break;	/* a record sent from the ring goes alone */
		} else if (direct) {
			*last = (struct lane_rec){ .addr = raddr + rec->off,
				.len = rec->len | (rec->flags & REC_END ?
				LANE_REC_END : 0) };
			used = sizeof(*last);
			t->data = rec->data;
			t->dlen = lane_rec_size(rec->len) - sizeof(*last);
		} else if (!(used && merge(last, &used, cap, raddr, rec))) {
			size_t need = lane_rec_size(rec->len);
			if (used + need > cap)
				break;
			struct lane_rec *lr = (void *)((char *)msg + used);
			lr->addr = raddr + rec->off;
			lr->len = rec->len |
				(rec->flags & REC_END ? LANE_REC_END : 0);
			memcpy(lr->data, rec->data, rec->len);
			memset(lr->data + rec->len, 0, need - sizeof(*lr) -
				rec->len);
			last_at = used;
			used += need;
		}
		l->sent = pos + rec_size(rec->len);
		l->sent_seq++;
	}
	t->upto = l->sent;
	t->seq = l->sent_seq;
	pthread_mutex_unlock(&l->lock);
	return used;
}

/* sendlog_last -- records appended so far */
uint64_t
sendlog_last(struct sendlog *l)
{
	pthread_mutex_lock(&l->lock);
	uint64_t seq = l->seq;
	pthread_mutex_unlock(&l->lock);
	return seq;
}

/* sendlog_release -- the message of `t` is answered */
void
sendlog_release(struct sendlog *l, const struct sendlog_ticket *t)
{
	pthread_mutex_lock(&l->lock);
	if (t->upto > l->tail) {
		l->tail = t->upto;
		l->done_seq = t->seq;
	}
	/*
	 * writers waiting for room wake once a quarter of the ring is
	 * free (a record is at most that, gaps aside), so that on a
	 * shared core they copy records in a run rather than one a
	 * message, as the kernel wakes a socket's writers
	 */
	bool room = l->cap - (l->head - l->tail) >= l->cap / 4;
	pthread_mutex_unlock(&l->lock);
	/* after the unlock: a woken thread does not wait on the lock */
	pthread_cond_broadcast(&l->done);
	if (room)
		pthread_cond_broadcast(&l->room);
}

/*
 * next_flags -- the flags of the next record to take, or -1 when there
 * is none (the lock held)
 */
static long
next_flags(const struct sendlog *l)
{
	uint64_t pos = skip_pad(l, l->sent, l->head);
	return pos == l->head ? -1 : (long)at(l, pos)->flags;
}

/*
 * sendlog_wait_work -- until something is to be taken; a record being
 * filled is waited for even past the deadline (its copy is short, and
 * nothing after it may go first: a sender that went on to wait for its
 * answers instead would empty its window meanwhile)
 */
bool
sendlog_wait_work(struct sendlog *l, uint64_t deadline_ns)
{
	pthread_mutex_lock(&l->lock);
	long f;
	while ((f = next_flags(l)) < 0 || (f & REC_FILL)) {
		uint64_t d = deadline_ns;
		if (f >= 0 && d < clock_ns() + FILL_WAIT_NS)
			d = clock_ns() + FILL_WAIT_NS;
		if (l->closed || !wait_until(l, &l->work, d))
			break;
	}
	pthread_mutex_unlock(&l->lock);
	return f >= 0 && !(f & REC_FILL);
}

/* sendlog_wait_done -- until record `seq` is released, or a stall */
int
sendlog_wait_done(struct sendlog *l, uint64_t seq, uint64_t stall_ns)
{
	int ret = 0;
	pthread_mutex_lock(&l->lock);
	uint64_t seen = l->done_seq, deadline = clock_ns() + stall_ns;
	while (l->done_seq < seq) {
		if (l->closed) {
			ret = -EPIPE;
			break;
		}
		if (l->done_seq != seen) {	/* progress: the clock again */
			seen = l->done_seq;
			deadline = clock_ns() + stall_ns;
		}
		if (!wait_until(l, &l->done, stall_ns ? deadline : 0)) {
			ret = -ETIMEDOUT;
			break;
		}
	}
	pthread_mutex_unlock(&l->lock);
	return ret;
}

/* sendlog_lag -- bytes not released, and how old the oldest is */
void
sendlog_lag(struct sendlog *l, uint64_t *bytes, uint64_t *age_ns)
{
	pthread_mutex_lock(&l->lock);
	uint64_t pos = skip_pad(l, l->tail, l->head);
	*bytes = l->head - l->tail;
	*age_ns = pos == l->head ? 0 : clock_ns() - at(l, pos)->t_ns;
	pthread_mutex_unlock(&l->lock);
}

/* sendlog_unreleased -- the range of every record not released */
void
sendlog_unreleased(struct sendlog *l,
		void (*fn)(void *arg, size_t off, size_t len), void *arg)
{
	pthread_mutex_lock(&l->lock);
	for (uint64_t pos = skip_pad(l, l->tail, l->head); pos != l->head;
			pos = skip_pad(l, pos, l->head)) {
		const struct rec *rec = at(l, pos);
		if (rec->len)
			fn(arg, (size_t)rec->off, rec->len);
		pos += rec_size(rec->len);
	}
	pthread_mutex_unlock(&l->lock);
}

/* sendlog_close -- wake every waiter */
void
sendlog_close(struct sendlog *l)
{
	pthread_mutex_lock(&l->lock);
	l->closed = true;
	pthread_cond_broadcast(&l->room);
	pthread_cond_broadcast(&l->done);
	pthread_cond_broadcast(&l->work);
	pthread_mutex_unlock(&l->lock);
}
