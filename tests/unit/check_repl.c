/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_repl.c -- unit tests of a replica that comes and goes, without
 * a replica: the out-of-sync bitmap (oos.c: marks, takes, counts and
 * ranges at 0, one chunk, word and pool edges) and on-replica-loss's
 * knobs (repl_setup.c: every invalid value refused by rpmem_open with
 * EINVAL and its name, before any ssh is started), and the arguments of
 * the outdated mark's calls (rpmem_outdate, rpmem_outdate_remote), and
 * rpmem_record_in_sync (what rpmem sync tells this host's record)
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "librpmem.h"
#include "oos.h"
#include "rpmem_tool.h"
#include "repl.h"
#include "rstate.h"
#include "tu_check.h"

#define CH OOS_CHUNK
#define POOL (200 * CH + 100)	/* the last chunk is short */

/* one oos case: marks made, then what take, bytes and ranges give */
static const struct {
	const char *name;
	size_t mark[3][2];		/* off, len; len 0 ends */
	size_t bytes;			/* oos_bytes */
	size_t nranges;			/* oos_ranges */
	size_t first[2];		/* the first range */
} Marks[] = {
	{ "nothing", {{0}}, 0, 0, {0, 0} },
	{ "one byte", {{5 * CH + 1, 1}}, CH, 1, {5 * CH, CH} },
	{ "a chunk's edge", {{CH - 1, 2}}, 2 * CH, 1, {0, 2 * CH} },
	{ "a whole word of chunks", {{64 * CH, 64 * CH}}, 64 * CH, 1,
		{64 * CH, 64 * CH} },
	{ "across words", {{60 * CH, 10 * CH}}, 10 * CH, 1,
		{60 * CH, 10 * CH} },
	{ "the short last chunk", {{POOL - 1, 1}}, 100, 1,
		{200 * CH, 100} },
	{ "past the end clipped", {{199 * CH, 10 * CH}}, CH + 100, 1,
		{199 * CH, CH + 100} },
	{ "two apart, one again", {{0, 1}, {10 * CH, CH}, {0, CH}}, 2 * CH,
		2, {0, CH} },
	{ "neighbours merge", {{3 * CH, CH}, {4 * CH, CH}}, 2 * CH, 1,
		{3 * CH, 2 * CH} },
	{ "zero length", {{7 * CH, 0}}, 0, 0, {0, 0} },
};

/* marks made, then bytes, ranges, and takes of at most two chunks */
START_TEST(test_marks_count_range_and_take)
{
	struct oos o;
	ck_assert_int_eq(oos_init(&o, POOL), 0);
	for (int k = 0; k < 3 && Marks[_i].mark[k][1]; k++)
		oos_mark(&o, Marks[_i].mark[k][0], Marks[_i].mark[k][1]);
	ck_assert_msg(oos_bytes(&o) == Marks[_i].bytes, "%s: %zu bytes",
		Marks[_i].name, oos_bytes(&o));
	struct rstate_range *r;
	size_t n;
	ck_assert_int_eq(oos_ranges(&o, &r, &n), 0);
	ck_assert_msg(n == Marks[_i].nranges, "%s: %zu ranges",
		Marks[_i].name, n);
	if (n) {
		ck_assert_uint_eq(r[0].off, Marks[_i].first[0]);
		ck_assert_uint_eq(r[0].len, Marks[_i].first[1]);
	}
	/* taking gives every marked byte once, and leaves nothing */
	size_t pos = 0, off, len, taken = 0;
	while (oos_take(&o, &pos, 2 * CH, &off, &len)) {
		ck_assert_uint_le(len, 2 * CH);
		ck_assert_uint_eq(off % CH, 0);
		taken += len;
	}
	ck_assert_uint_eq(taken, Marks[_i].bytes);
	ck_assert_uint_eq(oos_bytes(&o), 0);
	ck_assert_uint_eq(pos, POOL);
	free(r);
	oos_fini(&o);
}
END_TEST

/* a take from the middle leaves what is before it */
START_TEST(test_take_starts_where_asked_and_mark_all_covers_the_rest)
{
	struct oos o;
	ck_assert_int_eq(oos_init(&o, POOL), 0);
	oos_mark_all(&o, CH);
	ck_assert_uint_eq(oos_bytes(&o), POOL - CH);
	size_t pos = 100 * CH, off, len;
	ck_assert(oos_take(&o, &pos, 1 << 20, &off, &len));
	ck_assert_uint_eq(off, 100 * CH);
	ck_assert_uint_eq(len, POOL - 100 * CH);
	ck_assert(!oos_take(&o, &pos, 1 << 20, &off, &len));
	ck_assert_uint_eq(oos_bytes(&o), 99 * CH);
	oos_mark_all(&o, POOL);	/* nothing past the end */
	ck_assert_uint_eq(oos_bytes(&o), 99 * CH);
	oos_fini(&o);
}
END_TEST

/* one invalid setting: variables, and what the message must name */
static const struct {
	const char *env[2][2];
	const char *says;
} Knobs[] = {
	{ {{ "RPMEM_ON_REPLICA_LOSS", "maybe" }},
		"invalid RPMEM_ON_REPLICA_LOSS=maybe" },
	{ {{ "RPMEM_ON_REPLICA_LOSS", "fence" }},
		"needs a fence-peer handler" },
	{ {{ "RPMEM_FREEZE_TIMEOUT", "ten" }},
		"invalid RPMEM_FREEZE_TIMEOUT=ten" },
	{ {{ "RPMEM_FREEZE_TIMEOUT", "-1" }},
		"invalid RPMEM_FREEZE_TIMEOUT=-1" },
	{ {{ "RPMEM_RECONNECT_MIN_MS", "3600001" }},
		"invalid RPMEM_RECONNECT_MIN_MS=3600001" },
	{ {{ "RPMEM_RECONNECT_MAX_MS", "" }, { "RPMEM_CLOSE_TIMEOUT", "1x" }},
		"invalid RPMEM_CLOSE_TIMEOUT=1x" },
	{ {{ "RPMEM_RESYNC_RATE", "12Q" }}, "invalid RPMEM_RESYNC_RATE=12Q" },
	{ {{ "RPMEM_RESYNC_RATE", "9999999999999G" }},
		"invalid RPMEM_RESYNC_RATE=9999999999999G" },
	{ {{ "RPMEM_RESYNC_RATE", "M" }}, "invalid RPMEM_RESYNC_RATE=M" },
};

/* rpmem_open refuses each before it starts anything */
START_TEST(test_invalid_knobs_are_refused_by_name)
{
	static const char *const all[] = { "RPMEM_ON_REPLICA_LOSS",
		"RPMEM_FENCE_PEER_CMD", "RPMEM_FREEZE_TIMEOUT",
		"RPMEM_RECONNECT_MIN_MS", "RPMEM_RECONNECT_MAX_MS",
		"RPMEM_CLOSE_TIMEOUT", "RPMEM_RESYNC_RATE" };
	for (size_t k = 0; k < TU_NELEMS(all); k++)
		unsetenv(all[k]);
	for (int k = 0; k < 2 && Knobs[_i].env[k][0]; k++)
		setenv(Knobs[_i].env[k][0], Knobs[_i].env[k][1], 1);
	/* a target nothing listens on: reaching ssh would fail otherwise */
	setenv("RPMEM_SSH", "/bin/false", 1);
	size_t size = 1 << 20;
	void *pool = tu_pool_map(size);
	unsigned nlanes = 1;
	errno = 0;
	RPMEMpool *rpp = rpmem_open("127.0.0.1", "x.set", pool, size,
		&nlanes, NULL);
	ck_assert_ptr_null(rpp);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(rpmem_errormsg(), Knobs[_i].says),
		"'%s' does not say '%s'", rpmem_errormsg(), Knobs[_i].says);
}
END_TEST

/* one invalid call of rpmem_outdate_remote, and what it must name */
static const struct {
	const char *target, *set, *host, *says;
} Outdate[] = {
	{ NULL, "a.set", "h", "invalid target: NULL" },
	{ "b", NULL, "h", "invalid pool set name" },
	{ "b", "", "h", "invalid pool set name" },
	{ "b", "a.set", NULL, "invalid master host name" },
	{ "b", "a.set", "", "invalid master host name" },
	{ "-oProxyCommand=x", "a.set", "h", "invalid target" },
	{ "b", "a.set", "a-host-name-longer-than-a-host-name-may-be-to-"
		"fit-the-wire-field-of-64", "invalid master host name" },
};

/* each is refused with EINVAL before ssh starts */
START_TEST(test_outdate_remote_refuses_bad_arguments)
{
	setenv("RPMEM_SSH", "/bin/false", 1);
	errno = 0;
	ck_assert_int_eq(rpmem_outdate_remote(Outdate[_i].target,
		Outdate[_i].set, Outdate[_i].host), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(rpmem_errormsg(), Outdate[_i].says),
		"'%s' does not say '%s'", rpmem_errormsg(), Outdate[_i].says);
}
END_TEST

/* rpmem_outdate needs a handle */
START_TEST(test_outdate_needs_a_handle)
{
	errno = 0;
	ck_assert_int_eq(rpmem_outdate(NULL, 1, "h"), -1);
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

/* a record out of sync becomes in sync; none stays none */
START_TEST(test_record_in_sync_after_a_sync)
{
	char dir[] = "/tmp/check_repl.XXXXXX", path[4096];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	setenv("RPMEM_STATE_DIR", dir, 1);
	ck_assert_int_eq(rpmem_record_in_sync("a@b", "none.set"), 0);
	ck_assert_int_eq(rstate_record_path(dir, "a@b", "p.set", path,
		sizeof(path)), 0);
	struct rstate_range r[] = { { 8192, 4096 }, { 65536, 8192 } };
	struct rstate_record rec = {
		.pool_size = 1 << 20, .in_sync = false, .since = 1000,
		.ranges_known = true, .nranges = 2, .ranges = r,
	};
	snprintf(rec.target, sizeof(rec.target), "a@b");
	snprintf(rec.pool_set, sizeof(rec.pool_set), "p.set");
	snprintf(rec.reason, sizeof(rec.reason), "lost");
	ck_assert_int_eq(rstate_record_write(path, &rec), 0);
	ck_assert_int_eq(rpmem_record_in_sync("a@b", "p.set"), 0);
	struct rstate_record back;
	memset(&back, 0, sizeof(back));
	ck_assert_int_eq(rstate_record_read(path, &back), 0);
	ck_assert(back.in_sync);
	ck_assert_uint_eq(back.nranges, 0);
	ck_assert_uint_eq(back.pool_size, 1 << 20);
	rstate_record_free(&back);
	ck_assert_int_eq(unlink(path), 0);
	char run[4200];
	snprintf(run, sizeof(run), "%s/run", dir);
	(void) rmdir(run);
	ck_assert_int_eq(rmdir(dir), 0);
	unsetenv("RPMEM_STATE_DIR");
}
END_TEST

/* an open that cannot reach its replica, and what it must say */
static const struct {
	const char *policy;
	mode_t dir_mode;		/* of RPMEM_STATE_DIR */
	const char *says;		/* "" : nothing of a record */
} Away[] = {
	{ "fail", 0700, "" },
	{ "continue", 0700, "no record of the replica on this host" },
	{ "continue", 0777, "(no state directory)" },
};

/* without a record (or a state directory) no open goes on without it */
START_TEST(test_open_without_a_record_fails_and_says_why)
{
	char dir[] = "/tmp/check_repl.XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(chmod(dir, Away[_i].dir_mode), 0);
	setenv("RPMEM_STATE_DIR", dir, 1);
	setenv("RPMEM_ON_REPLICA_LOSS", Away[_i].policy, 1);
	setenv("RPMEM_SSH", "/bin/false", 1);	/* the replica: unreachable */
	size_t size = 1 << 20;
	void *pool = tu_pool_map(size);
	unsigned nlanes = 1;
	RPMEMpool *rpp = rpmem_open("127.0.0.1", "x.set", pool, size,
		&nlanes, NULL);
	ck_assert_ptr_null(rpp);
	const char *msg = rpmem_errormsg();
	if (*Away[_i].says)
		ck_assert_msg(strstr(msg, Away[_i].says), "'%s' does not say "
			"'%s'", msg, Away[_i].says);
	else
		ck_assert_msg(!strstr(msg, "record"), "'%s'", msg);
	unsetenv("RPMEM_ON_REPLICA_LOSS");
	unsetenv("RPMEM_STATE_DIR");
	ck_assert_int_eq(tu_rmtree(dir), 0);
}
END_TEST

/* an open whose record says the replica is behind, by policy */
static const struct {
	const char *policy;
	const char *handler;		/* RPMEM_FENCE_PEER_CMD, or none */
	bool opens;
	const char *says;		/* when it does not */
} Behind[] = {
	{ "continue", NULL, true, NULL },
	{ "fence", "exit 0", true, NULL },
	{ "fence", "exit 1", false, "fence-peer handler refused" },
	{ "fail", NULL, false, "ssh" },
};

/*
 * under continue or fence a replica recorded as behind is not waited
 * for: the open goes degraded at once and the record keeps why it went
 * out of sync; a handler that refuses, or fail, has the open try it
 */
START_TEST(test_open_behind_goes_on_without_waiting)
{
	char dir[] = "/tmp/check_repl.XXXXXX", path[4096];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	setenv("RPMEM_STATE_DIR", dir, 1);
	setenv("RPMEM_ON_REPLICA_LOSS", Behind[_i].policy, 1);
	if (Behind[_i].handler)
		setenv("RPMEM_FENCE_PEER_CMD", Behind[_i].handler, 1);
	setenv("RPMEM_SSH", "/bin/false", 1);	/* the replica: unreachable */
	size_t size = 1 << 20;
	ck_assert_int_eq(rstate_record_path(dir, "127.0.0.1", "b.set", path,
		sizeof(path)), 0);
	struct rstate_record rec = {
		.pool_size = size, .in_sync = false, .since = 1000,
	};
	snprintf(rec.target, sizeof(rec.target), "127.0.0.1");
	snprintf(rec.pool_set, sizeof(rec.pool_set), "b.set");
	snprintf(rec.reason, sizeof(rec.reason), "promoted elsewhere");
	ck_assert_int_eq(rstate_record_write(path, &rec), 0);

	void *pool = tu_pool_map(size);
	unsigned nlanes = 1;
	RPMEMpool *rpp = rpmem_open("127.0.0.1", "b.set", pool, size,
		&nlanes, NULL);
	if (Behind[_i].opens) {
		ck_assert_msg(rpp != NULL, "%s", rpmem_errormsg());
		ck_assert_int_eq(rpmem_close(rpp), 0);
		struct rstate_record back;
		memset(&back, 0, sizeof(back));
		ck_assert_int_eq(rstate_record_read(path, &back), 0);
		ck_assert(!back.in_sync);
		ck_assert_str_eq(back.reason, "promoted elsewhere");
		rstate_record_free(&back);
	} else {
		ck_assert_ptr_null(rpp);
		ck_assert_msg(strstr(rpmem_errormsg(), Behind[_i].says),
			"'%s' does not say '%s'", rpmem_errormsg(),
			Behind[_i].says);
	}
	unsetenv("RPMEM_FENCE_PEER_CMD");
	unsetenv("RPMEM_ON_REPLICA_LOSS");
	unsetenv("RPMEM_STATE_DIR");
	ck_assert_int_eq(tu_rmtree(dir), 0);
}
END_TEST

/*
 * the moves repl.h draws, from (row) to (column), in the order of
 * rpmem.h's enum rpmem_state: OPENING, READY, DEGRADED, FROZEN,
 * RESYNCING, BROKEN; every other one is refused
 */
static const char *const Moves[] = {
	/* O R D F S B */
	  "-xxxxx",	/* OPENING */
	  "--xxxx",	/* READY (to RESYNCING: pulled ahead) */
	  "--x-xx",	/* DEGRADED */
	  "-xxxxx",	/* FROZEN */
	  "-xxxxx",	/* RESYNCING */
	  "-----x",	/* BROKEN */
};

/* the state machine's table is the diagram, move for move */
START_TEST(test_transition_table_is_the_diagram)
{
	const int n = (int)TU_NELEMS(Moves);
	for (int from = 0; from < n; from++)
		for (int to = 0; to < n; to++)
			ck_assert_msg(repl_legal(from, to) ==
				(Moves[from][to] == 'x'), "%d -> %d", from,
				to);
	ck_assert(!repl_legal(-1, 0) && !repl_legal(0, n) && !repl_legal(n, 0));
}
END_TEST

/* main -- every case above (tu_check.h) */
TU_CHECK_MAIN("repl", "core", NULL, NULL,
	TU_EACH(test_marks_count_range_and_take, Marks),
	TU_ONE(test_take_starts_where_asked_and_mark_all_covers_the_rest),
	TU_EACH(test_invalid_knobs_are_refused_by_name, Knobs),
	TU_EACH(test_outdate_remote_refuses_bad_arguments, Outdate),
	TU_ONE(test_outdate_needs_a_handle),
	TU_ONE(test_record_in_sync_after_a_sync),
	TU_EACH(test_open_without_a_record_fails_and_says_why, Away),
	TU_EACH(test_open_behind_goes_on_without_waiting, Behind),
	TU_ONE(test_transition_table_is_the_diagram))
