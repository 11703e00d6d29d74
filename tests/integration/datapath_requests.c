/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * datapath_requests.c -- requests librpmem refuses (group data):
 * scenarios R6, a range unaligned, past the pool's end or wrapping, a
 * bad lane or flag is EINVAL before any store and the lane stays usable;
 * R10, nlanes is clamped to what rpmemd allows and every lane works
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dpath.h"

/* ------------------------------------------------ 7. bad requests */

enum call { C_PERSIST, C_FLUSH, C_DRAIN, C_DEEP, C_READ, C_READ_NULL };
enum lane_kind { LN_OK, LN_N, LN_MAX };

/* a refused data call */
struct bad {
	const char *what;
	enum call call;
	size_t off, len;
	enum lane_kind lane;
	unsigned flags;
};

/* bad_call -- make the call; returns its result, errno preserved */
static int
bad_call(RPMEMpool *rpp, const struct bad *b, unsigned lane)
{
	char buf[16];
	switch (b->call) {
	case C_PERSIST:
		return rpmem_persist(rpp, b->off, b->len, lane, b->flags);
	case C_FLUSH:
		return rpmem_flush(rpp, b->off, b->len, lane, b->flags);
	case C_DRAIN:
		return rpmem_drain(rpp, lane, b->flags);
	case C_DEEP:
		return rpmem_deep_persist(rpp, b->off, b->len, lane);
	case C_READ:
		return rpmem_read(rpp, buf, b->off, b->len, lane);
	case C_READ_NULL:
		return rpmem_read(rpp, NULL, b->off, b->len, lane);
	}
	return 0;
}

/*
 * R6: header, lane, flag and range violations are EINVAL before anything
 * is stored, and the lane stays usable: after each refusal a persist on
 * the same lane succeeds and reads back, and a flush pending on a lane
 * survives a refused call there.  Bytes the refused calls named (poisoned
 * locally) never reach the replica.
 */
START_TEST(bad_requests_are_einval_and_leave_the_lane_usable)
{
	struct tset s;
	uint64_t rng = seed_for("bad");
	set_make(&s, "bad", 1, 8 * MIB, NULL);
	char *mem = tu_pool_map(s.size);
	unsigned n = NLANES;
	RPMEMpool *rpp = pool_create(&s, mem, &n, 3);
	const size_t Z = s.size, M = SIZE_MAX;
	const struct bad c[] = {
		{ "persist in the header", C_PERSIST, 0, 8, LN_OK, 0 },
		{ "persist ending past the header", C_PERSIST, 4095, 2,
			LN_OK, 0 },
		{ "persist of the header's last byte", C_PERSIST, 4095, 1,
			LN_OK, 0 },
		{ "relaxed persist in the header", C_PERSIST, 512, 64,
			LN_OK, RPMEM_PERSIST_RELAXED },
		{ "flush of the header", C_FLUSH, 0, 4096, LN_OK, 0 },
		{ "relaxed flush in the header", C_FLUSH, 100, 1, LN_OK,
			RPMEM_FLUSH_RELAXED },
		{ "deep persist in the header", C_DEEP, 0, 64, LN_OK, 0 },
		{ "persist on lane nlanes", C_PERSIST, 8192, 8, LN_N, 0 },
		{ "persist on lane UINT_MAX", C_PERSIST, 8192, 8, LN_MAX, 0 },
		{ "flush on lane nlanes", C_FLUSH, 8192, 8, LN_N, 0 },
		{ "drain on lane nlanes", C_DRAIN, 0, 0, LN_N, 0 },
		{ "drain on lane UINT_MAX", C_DRAIN, 0, 0, LN_MAX, 0 },
		{ "deep persist on lane nlanes", C_DEEP, 8192, 8, LN_N, 0 },
		{ "read on lane nlanes", C_READ, 8192, 8, LN_N, 0 },
		{ "read on lane UINT_MAX", C_READ, 8192, 8, LN_MAX, 0 },
		{ "persist flags 2", C_PERSIST, 8192, 8, LN_OK, 2 },
		{ "persist flags 0x80000000", C_PERSIST, 8192, 8, LN_OK,
			0x80000000U },
		{ "persist flags RELAXED|2", C_PERSIST, 8192, 8, LN_OK, 3 },
		{ "flush flags 2", C_FLUSH, 8192, 8, LN_OK, 2 },
		{ "flush flags 0x80000000", C_FLUSH, 8192, 8, LN_OK,
			0x80000000U },
		{ "drain flags 1", C_DRAIN, 0, 0, LN_OK, 1 },
		{ "drain flags 0x80000000", C_DRAIN, 0, 0, LN_OK,
			0x80000000U },
		{ "persist past the end", C_PERSIST, Z - 10, 11, LN_OK, 0 },
		{ "relaxed persist past the end", C_PERSIST, Z - 8, 16, LN_OK,
			RPMEM_PERSIST_RELAXED },
		{ "persist at the end", C_PERSIST, Z, 1, LN_OK, 0 },
		{ "empty persist past the end", C_PERSIST, Z + 1, 0, LN_OK,
			0 },
		{ "persist of SIZE_MAX bytes", C_PERSIST, 8192, M, LN_OK, 0 },
		{ "persist at SIZE_MAX", C_PERSIST, M, 1, LN_OK, 0 },
		{ "persist wrapping 2^64", C_PERSIST, M - 4095, 8192, LN_OK,
			0 },
		{ "flush past the end", C_FLUSH, Z - 1, 2, LN_OK, 0 },
		{ "flush wrapping 2^64", C_FLUSH, 8192, M - 8191, LN_OK, 0 },
		{ "deep persist past the end", C_DEEP, Z - 1, 2, LN_OK, 0 },
		{ "deep persist wrapping 2^64", C_DEEP, M, 2, LN_OK, 0 },
		{ "read past the end", C_READ, Z - 1, 2, LN_OK, 0 },
		{ "read at the end", C_READ, Z, 1, LN_OK, 0 },
		{ "empty read past the end", C_READ, Z + 1, 0, LN_OK, 0 },
		{ "read of SIZE_MAX bytes", C_READ, 0, M, LN_OK, 0 },
		{ "read wrapping 2^64", C_READ, M, 2, LN_OK, 0 },
		{ "read into NULL", C_READ_NULL, 8192, 8, LN_OK, 0 },
	};
	const size_t nc = TU_NELEMS(c);
	char what[MSG_MAX];

	/* what a refused call must not carry to the replica */
	memset(mem, 0xee, HDR);
	memset(mem + Z - 16, 0xee, 16);
	for (size_t i = 0; i < nc; i++) {
		unsigned lane = (unsigned)(i % n);
		unsigned use = c[i].lane == LN_OK ? lane :
			c[i].lane == LN_N ? n : UINT_MAX;
		errno = 0;
		int r = bad_call(rpp, &c[i], use);
		fmt(what, sizeof(what), "%s (lane %u)", c[i].what, use);
		failed(r, EINVAL, what);
		fmt(what, sizeof(what), "persist on lane %u after \"%s\"",
			lane, c[i].what);
		probe(rpp, mem, 16 * KIB + i * HDR + i % 8, 64, lane,
			i % 2 ? RPMEM_PERSIST_RELAXED : 0, &rng, what);
	}

	/* a pending flush survives a refused call on its lane */
	size_t off = 512 * KIB + 3;
	fill_random(mem + off, 100, &rng);
	tu_ok(rpmem_flush(rpp, off, 100, 1 % n, 0), "flush before a refusal");
	failed(rpmem_flush(rpp, 0, 8, 1 % n, 0), EINVAL,
		"flush in the header with a flush pending");
	failed(rpmem_drain(rpp, 1 % n, 2), EINVAL,
		"drain flags 2 with a flush pending");
	tu_ok(rpmem_drain(rpp, 1 % n, 0), "drain after the refusals");
	char back[100];
	tu_ok(rpmem_read(rpp, back, off, sizeof(back), 1 % n), "read back");
	same_bytes(back, mem + off, sizeof(back), off, "flush + refusals");

	/* zero-length calls inside the pool are fine, even at its end */
	tu_ok(rpmem_persist(rpp, Z, 0, 0, 0), "empty persist at the end");
	tu_ok(rpmem_flush(rpp, Z, 0, 0, 0), "empty flush at the end");
	tu_ok(rpmem_read(rpp, NULL, Z, 0, 0), "empty read at the end");
	tu_ok(rpmem_close(rpp), "close");

	/* the replica: probes arrived, poison did not, header intact */
	char *img = replica_image(&s);
	for (size_t i = 0; i < nc; i++) {
		size_t p = 16 * KIB + i * HDR + i % 8;
		fmt(what, sizeof(what), "replica after \"%s\"", c[i].what);
		same_bytes(img + p, mem + p, 64, p, what);
	}
	same_bytes(img + off, mem + off, 100, off, "replica: pending flush");
	char zero[16] = { 0 };
	same_bytes(img + Z - 16, zero, 16, Z - 16,
		"pool tail named only by refused calls");
	ck_assert_msg(memcmp(img, "DATAPTH", 8) == 0,
		"the pool header was overwritten");
	free(img);

	/* the header still opens the pool; the last byte is writable */
	n = NLANES;
	RPMEMpool *again = pool_open(&s, mem, &n);
	probe(again, mem, Z - 1, 1, n - 1, 0, &rng, "persist of the last "
		"byte");
	tu_ok(rpmem_close(again), "close after reopen");
	char last;
	replica_read(&s, &last, Z - 1, 1);
	ck_assert_int_eq(last, mem[Z - 1]);
	munmap(mem, s.size);
	set_unlink(&s);
}
END_TEST

/* ----------------------------------------------------- 8. nlanes */

/*
 * R10: *nlanes comes back in [1, requested] and within rpmemd's
 * max-lanes, even for UINT_MAX; every lane below it persists and reads;
 * the lane equal to it is EINVAL
 */
START_TEST(nlanes_is_clamped_and_every_lane_works)
{
	static const unsigned req[] = { 1, NLANES, UINT_MAX };
	struct tset s;
	uint64_t rng = seed_for("nlanes");
	set_make(&s, "nlanes", 1, 8 * MIB, NULL);
	char *mem = tu_pool_map(s.size);
	char what[MSG_MAX], buf[8];

	for (size_t i = 0; i < TU_NELEMS(req); i++) {
		unsigned n = req[i];
		RPMEMpool *rpp = i == 0 ? pool_create(&s, mem, &n, 4) :
			pool_open(&s, mem, &n);
		note("nlanes: %u requested, %u granted", req[i], n);
		ck_assert_msg(n >= 1 && n <= req[i] && n <= env.max_lanes,
			"%u lanes granted for %u requested (max-lanes %u)", n,
			req[i], env.max_lanes);
		if (req[i] <= env.max_lanes)
			ck_assert_msg(n == req[i], "%u lanes granted for %u "
				"requested", n, req[i]);
		for (unsigned l = 0; l < n; l++) {
			fmt(what, sizeof(what), "request %u, lane %u", req[i],
				l);
			probe(rpp, mem, 8 * KIB + (size_t)l * 4096 + i * 64,
				48, l, l % 2 ? RPMEM_PERSIST_RELAXED : 0, &rng,
				what);
		}
		failed(rpmem_persist(rpp, 8192, 8, n, 0), EINVAL,
			"persist on lane nlanes");
		failed(rpmem_read(rpp, buf, 8192, 8, n), EINVAL,
			"read on lane nlanes");
		failed(rpmem_drain(rpp, n, 0), EINVAL, "drain on lane nlanes");
		tu_ok(rpmem_close(rpp), "close");
	}
	char *img = replica_image(&s);
	same_bytes(img + HDR, mem + HDR, s.size - HDR, HDR,
		"replica after probing every lane");
	free(img);
	munmap(mem, s.size);
	set_unlink(&s);
}
END_TEST

/* dpath_add_requests -- the bad requests and nlanes */
void
dpath_add_requests(TCase *tc)
{
	tcase_add_test(tc, bad_requests_are_einval_and_leave_the_lane_usable);
	tcase_add_test(tc, nlanes_is_clamped_and_every_lane_works);
}
