/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fabric.c -- librpmem's lanes at work: flush, drain, read, completions,
 * sealing messages and opening answers when the session asks for it
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "clock.h"
#include "fabric_int.h"
#include "log.h"

static atomic_uint_fast64_t Read_key = MR_KEY_READ;

/* fabric_break -- make `err` sticky and wake every waiting lane */
void
fabric_break(struct fabric *f, int err)
{
	int expected = 0;
	if (!atomic_compare_exchange_strong(&f->error, &expected, err))
		return;
	log_err("connection lost: %s", strerror(err));
	for (unsigned i = 0; i < f->nlanes; i++)
		if (f->lanes[i].cq)
			(void) fi_cq_signal(f->lanes[i].cq);
	if (f->on_break)
		f->on_break(f->break_arg);
}

/* fabric_error -- the sticky errno, or 0 */
int
fabric_error(const struct fabric *f)
{
	return atomic_load(&f->error);
}

/* fabric_post_recv -- give an answer slot back to the lane */
int
fabric_post_recv(struct fabric *f, struct lane *l, struct op *op)
{
	/* unsealed answers land after the tag's room: headers line up */
	size_t off = f->policy == LANESEC_NONE ? LANE_HDR_OFF : 0;
	ssize_t r;
	do {
		r = fi_recv(l->ep, (char *)op->buf + off, f->rslot_size - off,
			f->buf_desc, 0, &op->ctx);
	} while (r == -FI_EAGAIN);
	return (int)r;
}

/*
 * open_answer -- check a sealed answer of `len` bytes against what its
 * message expects and open it: a READ's bytes are decrypted (or, only
 * authenticated, copied) straight into the caller's buffer
 */
static int
open_answer(struct fabric *f, struct lane *l, struct op *op, size_t len,
		const struct expect *e)
{
	char *body = (char *)op->buf + LANE_HDR_OFF;
	size_t hdr = sizeof(struct lane_resp);
	bool encrypted = f->policy == LANESEC_ENCRYPT;
	int r = -EBADMSG;
	if (len == LANESEC_TAG_LEN + hdr + e->len) {
		struct lanesec_piece p[2] = {
			{ body, body, hdr },
			{ body + hdr, encrypted ? e->dst : NULL, e->len },
		};
		r = lanesec_open(&l->rx, p, 2, op->buf);
	}
	if (r) {
		log_err("lane %u: answer %llu from rpmemd failed "
			"authentication (altered, forged, replayed, reordered, "
			"or one before it dropped): connection dropped",
			(unsigned)(l - f->lanes), (unsigned long long)l->rx.seq);
		return -EBADMSG;
	}
	if (!encrypted && e->len)
		memcpy(e->dst, body + hdr, e->len);
	return 0;
}

/*
 * answered -- an answer of `len` bytes to the lane's oldest message:
 * its status counts toward the next drain, or toward the read it ends
 */
static int
answered(struct fabric *f, struct lane *l, struct op *op, size_t len)
{
	struct expect *e = &l->expect[l->ehead];
	if (f->policy != LANESEC_NONE) {
		int r = open_answer(f, l, op, len, e);
		if (r)
			return r;
	} else if (len < sizeof(struct lane_resp)) {
		return -EPROTO;
	}
	const struct lane_resp *resp =
		(void *)((char *)op->buf + LANE_HDR_OFF);
	/*
	 * PMDK's rpmemd answers {flags, lane}, its flags never set (whatever
	 * its buffer held): an answer there is a success, not a status
	 */
	if (f->pmdk && resp->lane != (uint32_t)(l - f->lanes)) {
		log_err("lane %u: PMDK's rpmemd answered for lane %u",
			(unsigned)(l - f->lanes), resp->lane);
		return -EPROTO;
	}
	int *status = e->dst ? &l->rstatus : &l->status;
	if (!f->pmdk && resp->status && !*status)
		*status = (int)resp->status;
	if (e->dst)
		l->reads--;
	l->ehead = (l->ehead + 1) % LANE_SLOTS;
	l->inflight--;
	return fabric_post_recv(f, l, op) ? -ECONNRESET : 0;
}

/* complete -- account one completion of this lane */
static int
complete(struct fabric *f, struct lane *l, struct op *op, size_t len)
{
	switch (op->kind) {
	case OP_SEND:
		op->busy = false;
		return 0;
	case OP_READ:
		l->reads--;
		return 0;
	case OP_RECV:
		return answered(f, l, op, len);
	}
	return -EPROTO;
}

/*
 * progress -- reap this lane's completions: those already there, else
 * spinning a while if replies come quickly, then sleeping in slices so
 * a broken connection is noticed.
 */
static int
progress(struct fabric *f, struct lane *l, long long deadline)
{
	struct fi_cq_msg_entry ent[CQ_BATCH];
	struct spin_wait w;
	ssize_t n = spin_cq_try(&l->spin, l->cq, ent, CQ_BATCH, &w);
	while (n == -FI_EAGAIN) {
		int err = fabric_error(f);
		if (err)
			return -err;
		long long left = deadline - clock_ms();
		if (left <= 0) {
			/* the call says why; later ones see a dropped link */
			fabric_break(f, ECONNRESET);
			return -ETIMEDOUT;
		}
		n = fi_cq_sread(l->cq, ent, CQ_BATCH, NULL,
			left < SLICE_MS ? (int)left : SLICE_MS);
		if (n == -FI_ECANCELED)
			n = -FI_EAGAIN;
	}
	spin_wait_end(&l->spin, &w);
	if (n == -FI_EAVAIL) {
		struct fi_cq_err_entry e;
		memset(&e, 0, sizeof(e));
		(void) fi_cq_readerr(l->cq, &e, 0);
		log_err("lane operation failed: %s", fablib_strerror(e.err));
		fabric_break(f, ECONNRESET);
		return -ECONNRESET;
	}
	if (n < 0) {
		fabric_break(f, ECONNRESET);
		return -ECONNRESET;
	}
	for (ssize_t i = 0; i < n; i++) {
		int r = complete(f, l, ent[i].op_context, ent[i].len);
		if (r) {
			fabric_break(f, -r);
			return r;
		}
	}
	return -fabric_error(f);
}

/* wait_slot -- until `op` is free and the peer has room for a message */
static int
wait_slot(struct fabric *f, struct lane *l, struct op *op)
{
	long long deadline = clock_ms() + f->timeout_ms;
	while (l->inflight >= f->window || op->busy) {
		int r = progress(f, l, deadline);
		if (r)
			return r;
	}
	return 0;
}

/* retry -- repeat a post that found the queue full, making progress */
#define RETRY(f, l, call) ({ \
	ssize_t _r; \
	long long _dl = clock_ms() + (f)->timeout_ms; \
	while ((_r = (call)) == -FI_EAGAIN) { \
		int _e = progress((f), (l), _dl); \
		if (_e) { \
			_r = _e; \
			break; \
		} \
	} \
	_r; })

/*
 * post_send -- send the message in `op`: its header (and any batch
 * records), `hlen` bytes at buf + LANE_HDR_OFF, then `dlen` bytes of the
 * pool at `data`.  Sealed, it goes tag first; encrypted, the pool bytes
 * are encrypted into the slot on the way (one pass, the only copy).  The
 * answer is expected into `dst` (`dst_len` bytes) for a READ.
 */
static int
post_send(struct fabric *f, struct lane *l, struct op *op, size_t hlen,
		const void *data, size_t dlen, char *dst, size_t dst_len)
{
	char *hdr = (char *)op->buf + LANE_HDR_OFF;
	struct iovec iov[2] = {
		{ .iov_base = hdr, .iov_len = hlen },
		{ .iov_base = (void *)data, .iov_len = dlen },
	};
	if (f->policy != LANESEC_NONE) {
		bool encrypt = f->policy == LANESEC_ENCRYPT;
		struct lanesec_piece p[2] = {
			{ hdr, hdr, hlen },
			{ data, hdr + hlen, dlen },
		};
		int r = lanesec_seal(&l->tx, p, 2, op->buf);
		if (r) {
			log_err("lane %u: sealing a message: %s",
				(unsigned)(l - f->lanes), strerror(-r));
			fabric_break(f, EIO);
			return -EIO;
		}
		iov[0].iov_base = op->buf;
		iov[0].iov_len = LANESEC_TAG_LEN + hlen + (encrypt ? dlen : 0);
		if (encrypt)
			dlen = 0;
	}
	void *desc[2] = { f->buf_desc, f->pool_desc };
	struct fi_msg msg = {
		.msg_iov = iov, .desc = desc, .iov_count = dlen ? 2 : 1,
		.context = &op->ctx,
	};
	ssize_t s = RETRY(f, l, fi_sendmsg(l->ep, &msg, FI_COMPLETION));
	if (s) {
		fabric_break(f, ECONNRESET);
		return -ECONNRESET;
	}
	op->busy = true;
	l->expect[(l->ehead + l->inflight) % LANE_SLOTS] =
		(struct expect){ .dst = dst, .len = dst_len };
	l->inflight++;
	return 0;
}

/* PMDK 1.12's persist message flags (pmdk-interop 4.6) */
#define PMDK_MODE_WRITE 0U
#define PMDK_MODE_DEEP 1U
#define PMDK_MODE_SEND 2U

/* pmdk_flags -- PMDK's flags for one of our (single-piece) ops */
static uint32_t
pmdk_flags(uint32_t code)
{
	if ((code & LANE_OP_MASK) == LANE_OP_INLINE)
		return PMDK_MODE_SEND;
	return code & LANE_F_DEEP ? PMDK_MODE_DEEP : PMDK_MODE_WRITE;
}

/* msg_init -- fill the lane message header of `op`'s buffer */
static void
msg_init(struct fabric *f, struct lane *l, struct op *op, uint32_t code,
		uint64_t addr, uint64_t size)
{
	struct lane_msg *m = (void *)((char *)op->buf + LANE_HDR_OFF);
	m->op = f->pmdk ? pmdk_flags(code) : code;
	m->lane = (uint32_t)(l - f->lanes);
	m->addr = addr;
	m->size = size;
}

/*
 * send_msg -- post a lane message that takes the next slot: inline
 * bytes go straight from the pool (no copy) unless they are encrypted
 */
static int
send_msg(struct fabric *f, struct lane *l, uint32_t code, size_t off,
		size_t size, const void *data, size_t dlen, char *dst)
{
	struct op *op = &l->send[l->next % LANE_SLOTS];
	int r = wait_slot(f, l, op);
	if (r)
		return r;
	l->next++;
	msg_init(f, l, op, code, f->raddr + off, size);
	return post_send(f, l, op, sizeof(struct lane_msg), data, dlen, dst,
		dst ? size : 0);
}

/* batch_send -- send the lane's open batch of small flushes, if any */
static int
batch_send(struct fabric *f, struct lane *l)
{
	if (!l->bused)
		return 0;
	struct op *op = &l->batch[l->bcur];
	int r = wait_slot(f, l, op);
	if (r)
		return r;
	msg_init(f, l, op, LANE_OP_BATCH, 0, l->bused);
	r = post_send(f, l, op, sizeof(struct lane_msg) + l->bused, NULL, 0,
		NULL, 0);
	l->bcur = (l->bcur + 1) % l->nbatch;
	l->bused = 0;
	return r;
}

/*
 * batch_add -- copy a small flush into the lane's open batch: the bytes
 * are taken now, as a flush promises, and travel with the others at
 * the next drain (or when the batch is full)
 */
static int
batch_add(struct fabric *f, struct lane *l, size_t off, size_t len)
{
	size_t need = lane_rec_size(len);
	if (l->bused + need > f->batch_cap) {
		int r = batch_send(f, l);
		if (r)
			return r;
	}
	struct op *op = &l->batch[l->bcur];
	long long deadline = clock_ms() + f->timeout_ms;
	while (op->busy) {
		int r = progress(f, l, deadline);
		if (r)
			return r;
	}
	struct lane_msg *m = (void *)((char *)op->buf + LANE_HDR_OFF);
	struct lane_rec *rec = (void *)(m->data + l->bused);
	rec->addr = f->raddr + off;
	rec->len = len;
	memcpy(rec->data, f->pool_addr + off, len);
	/* the padding goes on the wire too: no stale bytes in it */
	memset(rec->data + len, 0, need - sizeof(*rec) - len);
	l->bused += need;
	return 0;
}

/* rma -- post an RMA write (no completion) or read (with one) */
static int
rma(struct fabric *f, struct lane *l, bool write, void *buf, void *desc,
		size_t off, size_t len, struct op *op)
{
	while (len) {
		size_t chunk = len < f->max_msg ? len : f->max_msg;
		struct iovec iov = { .iov_base = buf, .iov_len = chunk };
		struct fi_rma_iov riov = {
			.addr = f->raddr + off, .len = chunk, .key = f->rkey,
		};
		struct fi_msg_rma msg = {
			.msg_iov = &iov, .desc = &desc, .iov_count = 1,
			.rma_iov = &riov, .rma_iov_count = 1,
			.context = op ? &op->ctx : NULL,
		};
		ssize_t r = write ?
			RETRY(f, l, fi_writemsg(l->ep, &msg, 0)) :
			RETRY(f, l, fi_readmsg(l->ep, &msg, FI_COMPLETION));
		if (r) {
			fabric_break(f, ECONNRESET);
			return -ECONNRESET;
		}
		if (!write)
			l->reads++;
		buf = (char *)buf + chunk;
		off += chunk;
		len -= chunk;
	}
	return 0;
}

#define TAPER 4		/* first and last pieces of a flush: 1/4 */

/*
 * piece_len -- the next piece of a flush with `len` bytes left.  Each
 * end of the pipeline waits for the other to send (and seal) or apply
 * (and open) a whole piece, once at the start of a flush and once at
 * its end, while the link idles: a quarter piece first and last
 * shortens both waits; the rest go whole.  PMDK's rpmemd, one message
 * at a time, gets whole pieces.
 */
static size_t
piece_len(const struct fabric *f, bool first, size_t len)
{
	size_t small = f->buff_size / TAPER;
	if (f->pmdk)
		return len < f->buff_size ? len : f->buff_size;
	if (first)
		return len > f->buff_size ? small : len;
	if (len > f->buff_size + small)
		return f->buff_size;
	/* what is left after this piece is never under a quarter */
	return len > 2 * small ? len - small : len;
}

/* fabric_flush -- start making a range durable (see fabric.h) */
int
fabric_flush(struct fabric *f, unsigned lane, size_t off, size_t len,
		bool relaxed, bool deep)
{
	struct lane *l = &f->lanes[lane];
	int r = fabric_error(f);
	if (r)
		return -r;
	/*
	 * With PMDK's rpmemd a deep persist, and over sockets a strict one
	 * over its inline buffer, is an RMA write and a persist of what it
	 * wrote (pmdk-interop 4.7), as its own client does: its inline path has
	 * no deep mode and takes one piece per round trip.  Those bytes get
	 * no 8-byte atomicity there (rpmem.h's PMDK_PEER_LIMITS).
	 */
	if ((relaxed || (f->pmdk && deep) ||
			(f->strict_rma && len > f->buff_size)) && f->rma_write) {
		/* batched flushes first: the replica applies them in order */
		r = batch_send(f, l);
		if (!r)
			r = rma(f, l, true, f->pool_addr + off, f->pool_desc,
				off, len, NULL);
		if (r)
			return r;
		if (f->pm == PROTO_PM_APM && !deep) {
			l->written = true;
			return 0;
		}
		return send_msg(f, l, LANE_OP_WRITTEN |
			(deep ? LANE_F_DEEP : 0), off, len, NULL, 0, NULL);
	}
	/* PMDK's rpmemd knows no batches: each flush is its own message */
	if (!deep && !f->pmdk && len <= BATCH_ITEM_MAX &&
			lane_rec_size(len) <= f->batch_cap)
		return batch_add(f, l, off, len);
	/* what was flushed before goes first */
	r = batch_send(f, l);
	if (r)
		return r;
	uint32_t code = LANE_OP_INLINE | (deep ? LANE_F_DEEP : 0);
	for (bool first = true; len; first = false) {
		uint32_t more = 0;
		/*
		 * Pieces end on 8-byte boundaries of the pool, so no aligned
		 * word is split between two messages (architecture decision 3).
		 */
		size_t chunk = piece_len(f, first, len);
		if (chunk < len) {
			chunk = ((off + chunk) & ~(size_t)7) - off;
			/* pmdk_flags drops it: PMDK's rpmemd persists each */
			more = LANE_F_MORE;
		}
		r = send_msg(f, l, code | more, off, chunk, f->pool_addr + off,
			chunk, NULL);
		if (r)
			return r;
		off += chunk;
		len -= chunk;
	}
	return 0;
}

/* fabric_drain -- wait for everything flushed on the lane */
int
fabric_drain(struct fabric *f, unsigned lane)
{
	struct lane *l = &f->lanes[lane];
	int r = batch_send(f, l);
	if (r)
		return r;
	if (l->written) {
		/* APM: a read after the writes makes them durable */
		r = rma(f, l, false, l->read.buf, f->buf_desc, 0,
			sizeof(uint64_t), &l->read);
		if (r)
			return r;
		l->written = false;
	}
	long long deadline = clock_ms() + f->timeout_ms;
	while (l->inflight || l->reads) {
		r = progress(f, l, deadline);
		if (r)
			return r;
	}
	r = l->status;
	l->status = 0;
	return -r;
}

/* fabric_epochs_buf -- the lane's next batch buffer, once it is free */
int
fabric_epochs_buf(struct fabric *f, unsigned lane, void **body, size_t *cap)
{
	struct lane *l = &f->lanes[lane];
	int r = wait_slot(f, l, &l->batch[l->bcur]);
	if (r)
		return r;
	*body = (char *)l->batch[l->bcur].buf + LANE_HDR_OFF +
		sizeof(struct lane_msg);
	*cap = lane == f->epochs_lane ? f->epochs_cap : f->batch_cap;
	return 0;
}

/*
 * fabric_epochs_send -- send the records built in that buffer (which
 * fabric_epochs_buf found free, a slot of the window with it: the lane
 * is the sender's alone, so nothing took either since)
 */
int
fabric_epochs_send(struct fabric *f, unsigned lane, size_t len,
		const void *data, size_t dlen)
{
	struct lane *l = &f->lanes[lane];
	struct op *op = &l->batch[l->bcur];
	msg_init(f, l, op, LANE_OP_EPOCHS, 0, len + dlen);
	int r = post_send(f, l, op, sizeof(struct lane_msg) + len, data,
		dlen, NULL, 0);
	l->bcur = (l->bcur + 1) % l->nbatch;
	return r;
}

/* fabric_epochs_room -- a body's most bytes; unregistered data allowed */
size_t
fabric_epochs_room(const struct fabric *f, bool *direct)
{
	*direct = !f->local_mr;
	return f->epochs_cap;
}

/* fabric_answers -- until at most `left` messages wait for an answer */
int
fabric_answers(struct fabric *f, unsigned lane, unsigned left)
{
	struct lane *l = &f->lanes[lane];
	long long deadline = clock_ms() + f->timeout_ms;
	while (l->inflight > left) {
		int r = progress(f, l, deadline);
		if (r)
			return r;
	}
	int r = l->status;
	l->status = 0;
	return -r;
}

/*
 * read_sealed -- a read as READ messages of at most one buffer each, up
 * to LANE_SLOTS in flight; each answer is opened straight into `buf`
 */
static int
read_sealed(struct fabric *f, struct lane *l, char *buf, size_t off,
		size_t len)
{
	int r = 0;
	while (!r && len) {
		size_t chunk = len < f->buff_size ? len : f->buff_size;
		r = send_msg(f, l, LANE_OP_READ, off, chunk, NULL, 0, buf);
		if (!r)
			l->reads++;
		buf += chunk;
		off += chunk;
		len -= chunk;
	}
	return r;
}

/* read_rma -- RMA reads into the caller's buffer, registered if needed */
static int
read_rma(struct fabric *f, struct lane *l, void *buf, size_t off,
		size_t len, struct fid_mr **mr)
{
	void *desc = NULL;
	if (f->local_mr) {
		int r = fi_mr_reg(f->domain, buf, len, FI_READ, 0,
			atomic_fetch_add(&Read_key, 1), 0, mr, NULL);
		if (r)
			return -fab_errno(r);
		desc = fi_mr_desc(*mr);
	}
	return rma(f, l, false, buf, desc, off, len, &l->read);
}

/* fabric_read -- remote bytes into the caller's buffer */
int
fabric_read(struct fabric *f, unsigned lane, void *buf, size_t off,
		size_t len)
{
	struct lane *l = &f->lanes[lane];
	int r = fabric_error(f);
	if (r)
		return -r;
	struct fid_mr *mr = NULL;
	l->rstatus = 0;
	r = f->policy != LANESEC_NONE ? read_sealed(f, l, buf, off, len) :
		read_rma(f, l, buf, off, len, &mr);
	long long deadline = clock_ms() + f->timeout_ms;
	while (!r && l->reads)
		r = progress(f, l, deadline);
	if (mr)
		fi_close(&mr->fid);
	return r ? r : -l->rstatus;
}
