/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto_ext.c -- bodies of our extension requests: OUTDATE (minor 4)
 * and BEAT (minor 6)
 *
 * OUTDATE, after the 12-byte request header:
 *
 *	12  u32 mark		1: mark the replica outdated, 0: clear it
 *	16  u32 reserved	zero
 *	20  u64 time		since when, seconds since the epoch (UTC)
 *	28  char host[64]	the master's host name, NUL-padded
 *
 * Its answer is the bare response header.
 *
 * BEAT, after the 12-byte request header:
 *
 *	12  u32 interval	milliseconds between beats, PROTO_BEAT_MIN_MS
 *				to PROTO_BEAT_MAX_MS
 *
 * Its answer, and every beat after it, is the bare response header.
 */
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "proto_int.h"

#define OUTDATE_MARK PROTO_HDR_SIZE
#define OUTDATE_RSVD (OUTDATE_MARK + 4)
#define OUTDATE_TIME (OUTDATE_RSVD + 4)
#define OUTDATE_HOST (OUTDATE_TIME + 8)
#define BEAT_INTERVAL PROTO_HDR_SIZE

/* host_ok -- a NUL inside, zeros after it, printable without blanks */
static bool
host_ok(const char *h, bool mark)
{
	size_t n = strnlen(h, PROTO_HOST_MAX);
	if (n == PROTO_HOST_MAX || (mark && n == 0))
		return false;
	for (size_t i = 0; i < n; i++) {
		if (h[i] <= ' ' || h[i] > '~')
			return false;
	}
	for (size_t i = n; i < PROTO_HOST_MAX; i++) {
		if (h[i])
			return false;
	}
	return true;
}

/* proto_outdate_get -- decode and validate an OUTDATE body */
int
proto_outdate_get(const unsigned char *p, struct proto_req *req)
{
	uint32_t mark, rsvd;
	uint64_t t;

	memcpy(&mark, p + OUTDATE_MARK, sizeof(mark));
	memcpy(&rsvd, p + OUTDATE_RSVD, sizeof(rsvd));
	memcpy(&t, p + OUTDATE_TIME, sizeof(t));
	mark = be32toh(mark);
	t = be64toh(t);
	memcpy(req->outdate_host, p + OUTDATE_HOST, PROTO_HOST_MAX);
	if (mark > 1 || rsvd != 0 || t > INT64_MAX ||
			!host_ok(req->outdate_host, mark))
		return -EPROTO;
	req->outdate_mark = mark;
	req->outdate_time = (int64_t)t;
	return 0;
}

/* proto_outdate_put -- encode an OUTDATE body; reserved bytes stay 0 */
int
proto_outdate_put(unsigned char *p, const struct proto_req *req)
{
	if (req->outdate_mark > 1 || req->outdate_time < 0 ||
			!host_ok(req->outdate_host, req->outdate_mark))
		return -EINVAL;
	uint32_t mark = htobe32(req->outdate_mark);
	uint64_t t = htobe64((uint64_t)req->outdate_time);
	memcpy(p + OUTDATE_MARK, &mark, sizeof(mark));
	memcpy(p + OUTDATE_TIME, &t, sizeof(t));
	memcpy(p + OUTDATE_HOST, req->outdate_host, PROTO_HOST_MAX);
	return 0;
}

/* beat_ok -- an interval rpmemd can keep and a client can watch */
static bool
beat_ok(uint32_t ms)
{
	return ms >= PROTO_BEAT_MIN_MS && ms <= PROTO_BEAT_MAX_MS;
}

/* proto_beat_get -- decode and validate a BEAT body */
int
proto_beat_get(const unsigned char *p, struct proto_req *req)
{
	uint32_t ms;
	memcpy(&ms, p + BEAT_INTERVAL, sizeof(ms));
	ms = be32toh(ms);
	if (!beat_ok(ms))
		return -EPROTO;
	req->beat_ms = ms;
	return 0;
}

/* proto_beat_put -- encode a BEAT body */
int
proto_beat_put(unsigned char *p, const struct proto_req *req)
{
	if (!beat_ok(req->beat_ms))
		return -EINVAL;
	uint32_t ms = htobe32(req->beat_ms);
	memcpy(p + BEAT_INTERVAL, &ms, sizeof(ms));
	return 0;
}
