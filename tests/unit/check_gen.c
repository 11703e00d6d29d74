/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_gen.c -- unit tests of the data-generation identifiers (gen.c,
 * gen_file.c): the decision table of a session start (scenarios D5,
 * D7-D11: every pair of identifiers a fault can leave, and what it
 * decides), how a copy's identifiers roll and adopt, and their file
 * read back, refused when malformed, taken for absent when stale
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file.h"
#include "gen.h"
#include "gen_file.h"
#include "tu_check.h"

/* the copies: the master, the replica, a third one */
#define M 0xa1
#define R 0xb2
#define X 0xc3
/* generations */
#define G1 0x1001
#define G2 0x1002
#define G3 0x1003
#define G9 0x1009

#define PEER(i, b, o) { .id = (i), .bitmap = (b), .open = (o) }

/* one row: both sides' identifiers, what they decide */
static const struct {
	const char *name;
	struct gen m, r;
	bool ranges;		/* the master holds its out-of-sync ranges */
	enum gen_verdict want;
	uint64_t common;
} Cases[] = {
	{ "equal currents, both closed cleanly",
		{ .id = M, .current = G1 }, { .id = R, .current = G1 },
		false, GEN_SAME, G1 },
	{ "equal, the session dropped, a live master recorded it (frozen)",
		{ .id = M, .current = G1, .npeers = 1,
			.peers = { PEER(R, 0, true) } },
		{ .id = R, .current = G1, .npeers = 1,
			.peers = { PEER(M, 0, true) } },
		true, GEN_BITMAP, G1 },
	{ "equal, the master lost mid-session (D11)",
		{ .id = M, .current = G1, .npeers = 1,
			.peers = { PEER(R, 0, true) } },
		{ .id = R, .current = G1, .npeers = 1,
			.peers = { PEER(M, 0, true) } },
		false, GEN_COMPARE, G1 },
	{ "equal, the replica's session with its master not closed",
		{ .id = M, .current = G1 },
		{ .id = R, .current = G1, .npeers = 1,
			.peers = { PEER(M, 0, true) } },
		false, GEN_COMPARE, G1 },
	{ "equal, the replica's session with a third copy not closed",
		{ .id = M, .current = G1 },
		{ .id = R, .current = G1, .npeers = 1,
			.peers = { PEER(X, 0, true) } },
		true, GEN_COMPARE, G1 },
	{ "equal, a stale bitmap of the master (adopted, then lost)",
		{ .id = M, .current = G2, .history = { G1 }, .npeers = 1,
			.peers = { PEER(R, G1, false) } },
		{ .id = R, .current = G2 }, true, GEN_SAME, G2 },
	{ "the master went on without the replica, ranges held (D2)",
		{ .id = M, .current = G2, .history = { G1 }, .npeers = 1,
			.peers = { PEER(R, G1, false) } },
		{ .id = R, .current = G1, .npeers = 1,
			.peers = { PEER(M, 0, true) } },
		true, GEN_BITMAP, G1 },
	{ "the same, the ranges lost (a crash while degraded, D4, D8)",
		{ .id = M, .current = G2, .history = { G1 }, .npeers = 1,
			.peers = { PEER(R, G1, false) } },
		{ .id = R, .current = G1 }, false, GEN_COMPARE, G1 },
	{ "the same, the replica had a session with a third copy",
		{ .id = M, .current = G2, .history = { G1 }, .npeers = 1,
			.peers = { PEER(R, G1, false) } },
		{ .id = R, .current = G1, .npeers = 1,
			.peers = { PEER(X, 0, true) } },
		true, GEN_COMPARE, G1 },
	{ "an async session lost, the live master recorded what was not "
		"answered (its bitmap for the replica open)",
		{ .id = M, .current = G2, .history = { G1 }, .npeers = 1,
			.peers = { PEER(R, G1, true) } },
		{ .id = R, .current = G1, .npeers = 1,
			.peers = { PEER(M, 0, true) } },
		true, GEN_BITMAP, G1 },
	{ "the same after the master's crash (the ranges not known)",
		{ .id = M, .current = G2, .history = { G1 }, .npeers = 1,
			.peers = { PEER(R, G1, true) } },
		{ .id = R, .current = G1, .npeers = 1,
			.peers = { PEER(M, 0, true) } },
		false, GEN_COMPARE, G1 },
	{ "the master newer by its history, no bitmap for this replica",
		{ .id = M, .current = G3, .history = { G2, G1 } },
		{ .id = R, .current = G1 }, true, GEN_COMPARE, G1 },
	{ "the replica promoted, the master wrote nothing since (F3)",
		{ .id = M, .current = G1, .npeers = 1,
			.peers = { PEER(R, 0, true) } },
		{ .id = R, .current = G2, .history = { G1 }, .npeers = 1,
			.peers = { PEER(M, G1, false) } },
		true, GEN_NEWER, G1 },
	{ "split brain: both wrote since G1 (D5; and after a demote, D10)",
		{ .id = M, .current = G2, .history = { G1 }, .npeers = 1,
			.peers = { PEER(R, G1, false) } },
		{ .id = R, .current = G3, .history = { G1 }, .npeers = 1,
			.peers = { PEER(M, G1, false) } },
		true, GEN_SPLIT, G1 },
	{ "failback: the promoted copy as master, the old one lost "
		"mid-session",
		{ .id = R, .current = G2, .history = { G1 }, .npeers = 1,
			.peers = { PEER(M, G1, false) } },
		{ .id = M, .current = G1, .npeers = 1,
			.peers = { PEER(R, 0, true) } },
		false, GEN_COMPARE, G1 },
	{ "no common generation",
		{ .id = M, .current = G1 }, { .id = R, .current = G2 },
		true, GEN_UNRELATED, 0 },
	{ "the replica's generation fell out of the master's history",
		{ .id = M, .current = G9 + 8, .history = { G9 + 7, G9 + 6,
			G9 + 5, G9 + 4, G9 + 3, G9 + 2, G9 + 1, G9 } },
		{ .id = R, .current = G1 }, true, GEN_UNRELATED, 0 },
	{ "a replica without generations (a new rpmemd, an upgrade)",
		{ .id = M, .current = G1 }, { .id = 0 }, true, GEN_COMPARE, 0 },
	{ "a replica whose current a master without them wiped",
		{ .id = M, .current = G1 }, { .id = R, .current = 0 }, true,
		GEN_COMPARE, 0 },
	{ "the same, but the replica had written on its own",
		{ .id = M, .current = G1 },
		{ .id = R, .current = 0, .npeers = 1,
			.peers = { PEER(X, G9, false) } },
		true, GEN_UNRELATED, 0 },
	{ "the replica discarded (rpmem discard)",
		{ .id = M, .current = G2, .history = { G1 } },
		{ .id = R, .current = G3, .history = { G1 }, .discarded = true,
			.npeers = 1, .peers = { PEER(M, G1, false) } },
		true, GEN_COMPARE, 0 },
	{ "the master discarded",
		{ .id = M, .current = G1, .discarded = true },
		{ .id = R, .current = G1 }, true, GEN_MASTER_UNUSABLE, 0 },
	{ "the master mid-resync from another copy",
		{ .id = M, .current = G1, .target = X },
		{ .id = R, .current = G1 }, true, GEN_MASTER_UNUSABLE, 0 },
	{ "the replica mid-resync from this master, ranges held",
		{ .id = M, .current = G2, .history = { G1 }, .npeers = 1,
			.peers = { PEER(R, G1, false) } },
		{ .id = R, .current = G1, .target = M, .npeers = 1,
			.peers = { PEER(M, 0, true) } },
		true, GEN_BITMAP, G1 },
	{ "the replica mid-resync from this master, ranges lost",
		{ .id = M, .current = G2, .history = { G1 }, .npeers = 1,
			.peers = { PEER(R, G1, false) } },
		{ .id = R, .current = G1, .target = M }, false, GEN_COMPARE,
		G1 },
	{ "the replica created by a master that went away (a target)",
		{ .id = M, .current = G1, .npeers = 1,
			.peers = { PEER(R, 0, true) } },
		{ .id = R, .current = G1, .target = M, .npeers = 1,
			.peers = { PEER(M, 0, true) } },
		true, GEN_COMPARE, G1 },
	{ "the replica mid-resync from another copy",
		{ .id = M, .current = G1 },
		{ .id = R, .current = G1, .target = X }, true,
		GEN_OTHER_TARGET, 0 },
};

START_TEST(test_decision_table)
{
	struct gen_decision d;
	gen_decide(&Cases[_i].m, &Cases[_i].r, Cases[_i].ranges, &d);
	ck_assert_msg(d.verdict == Cases[_i].want, "%s: %s, not %s (%s)",
		Cases[_i].name, gen_verdict_name(d.verdict),
		gen_verdict_name(Cases[_i].want), d.why);
	ck_assert_msg(d.common == Cases[_i].common, "%s: common %llx",
		Cases[_i].name, (unsigned long long)d.common);
	ck_assert(d.why && *d.why);
	ck_assert(gen_refused(d.verdict) == (d.verdict != GEN_SAME &&
		d.verdict != GEN_BITMAP && d.verdict != GEN_COMPARE));
}
END_TEST

/*
 * a master's roll, the replica promoted (a roll of its own), and the
 * decision each side's later state makes, as the faults happen
 */
START_TEST(test_rolls_and_adoption_decide_as_the_faults_went)
{
	struct gen m, r;
	struct gen_decision d;
	ck_assert_int_eq(gen_new(&m, 0), 0);
	ck_assert_int_eq(gen_new(&r, m.current), 0);
	ck_assert(m.id && r.id && m.id != r.id);
	uint64_t g1 = m.current;
	gen_decide(&m, &r, false, &d);
	ck_assert_int_eq(d.verdict, GEN_SAME);

	/* the master loses the replica: a new current, a bitmap */
	ck_assert_int_eq(gen_roll(&m, r.id), 0);
	ck_assert(m.current != g1 && m.history[0] == g1);
	ck_assert(gen_peer_find(&m, r.id)->bitmap == g1);
	uint64_t g2 = m.current;
	/* lost again before it was back: nothing new */
	ck_assert_int_eq(gen_roll(&m, r.id), 0);
	ck_assert(m.current == g2 && m.history[1] == 0);
	gen_decide(&m, &r, true, &d);
	ck_assert_int_eq(d.verdict, GEN_BITMAP);

	/* the replica promoted meanwhile: split brain */
	struct gen p = r;
	ck_assert_int_eq(gen_roll(&p, m.id), 0);
	gen_decide(&m, &p, true, &d);
	ck_assert_int_eq(d.verdict, GEN_SPLIT);
	ck_assert(d.common == g1);

	/* the replica resynced instead: it adopts, the master forgets */
	gen_adopt(&r, m.id, m.current);
	ck_assert(r.current == g2 && r.history[0] == g1 && r.master == m.id);
	gen_decide(&m, &r, false, &d);
	ck_assert_int_eq(d.verdict, GEN_SAME);

	/* a copy discarded adopts too, and is no longer discarded */
	p.discarded = true;
	gen_decide(&m, &p, false, &d);
	ck_assert_int_eq(d.verdict, GEN_COMPARE);
	gen_adopt(&p, m.id, m.current);
	ck_assert(!p.discarded && !gen_peer_find(&p, m.id));
}
END_TEST

START_TEST(test_peer_table_full_refuses_a_new_peer)
{
	struct gen g;
	ck_assert_int_eq(gen_new(&g, 0), 0);
	for (uint64_t i = 1; i <= GEN_PEERS; i++)
		ck_assert_int_eq(gen_roll(&g, i), 0);
	ck_assert_int_eq(gen_roll(&g, GEN_PEERS + 1), -ENOSPC);
	/* an entry without bitmap or session gives way */
	g.peers[3].bitmap = 0;
	ck_assert_int_eq(gen_roll(&g, GEN_PEERS + 1), 0);
	ck_assert(gen_peer_find(&g, GEN_PEERS + 1) != NULL);
}
END_TEST

/* sample -- a file with every field */
static struct gen_file
sample(void)
{
	struct gen_file f;
	memset(&f, 0, sizeof(f));
	f.g = (struct gen){ .id = M, .current = G3, .history = { G2, G1 },
		.target = X, .master = X, .discarded = true, .npeers = 2,
		.peers = { PEER(R, G1, false), PEER(X, 0, true) } };
	f.part = (struct gen_part){ 259, 3, 1835011, 64 << 20 };
	f.refused_peer = R;
	snprintf(f.refused, sizeof(f.refused), "split-brain");
	f.refused_time = 1795667870;
	f.updated = 1795667871;
	f.async_master = X;
	return f;
}

START_TEST(test_file_text_reads_back)
{
	struct gen_file f = sample(), q;
	char buf[GEN_FILE_MAX];
	int n = gen_file_format(&f, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(gen_file_parse(buf, (size_t)n, &q), 0);
	ck_assert(gen_same(&f.g, &q.g));
	ck_assert(memcmp(&f.part, &q.part, sizeof(f.part)) == 0);
	ck_assert_str_eq(q.refused, "split-brain");
	ck_assert(q.refused_peer == R && q.refused_time == f.refused_time);
	ck_assert(q.async_master == X);
	/* a key of a newer writer is passed over */
	char more[GEN_FILE_MAX + 64];
	snprintf(more, sizeof(more), "%.*sfuture 1 2 3\n", n, buf);
	ck_assert_int_eq(gen_file_parse(more, strlen(more), &q), 0);
	ck_assert(q.g.current == G3);
	ck_assert_int_eq(gen_file_format(&f, buf, 40), -ENOSPC);
}
END_TEST

/* texts refused: each a whole file after the head line */
static const char *const Bad[] = {
	"",					/* no copy, current, part */
	"copy 00000000000000a1\npart 1:2 3 4\n",	/* no current */
	"current 1\npart 1:2 3 4\n",		/* no copy */
	"copy 00000000000000a1\ncurrent 1\n",	/* no part */
	"copy 0\ncurrent 1\npart 1:2 3 4\n",	/* a copy id of 0 */
	"copy xyz\ncurrent 1\npart 1:2 3 4\n",
	"copy 11112222333344445\ncurrent 1\npart 1:2 3 4\n",	/* 17 digits */
	"copy a1\ncurrent -1\npart 1:2 3 4\n",
	"copy a1\ncurrent 1\npart 1-2 3 4\n",
	"copy a1\ncurrent 1\npart 1:2 3 4\npeer b2 0 2\n",
	"copy a1\ncurrent 1\npart 1:2 3 4\npeer b2 0\n",
	"copy a1\ncurrent 1\npart 1:2 3 4\nhistory 5 0\n",
	"copy a1\ncurrent 1\npart 1:2 3 4\ndiscarded yes\n",
	"copy a1\ncurrent 1\npart 1:2 3 4\ncurrent",	/* torn */
	"copy a1\ncurrent 1 2\npart 1:2 3 4\n",
	"copy a1\ncurrent 1\npart 1:2 3 4\nasync yes\n",
};

START_TEST(test_malformed_text_is_refused)
{
	char buf[GEN_FILE_MAX];
	int n = snprintf(buf, sizeof(buf), "rpmem-generations 1\n%s", Bad[_i]);
	struct gen_file f;
	ck_assert_msg(gen_file_parse(buf, (size_t)n, &f) == -EINVAL,
		"accepted: %s", Bad[_i]);
	ck_assert(f.g.id == 0);
	/* nine peers: one too many */
	char *p = buf + snprintf(buf, sizeof(buf), "rpmem-generations 1\n"
		"copy a1\ncurrent 1\npart 1:2 3 4\n");
	for (int i = 0; i <= GEN_PEERS; i++)
		p += sprintf(p, "peer %x 1 0\n", i + 1);
	ck_assert_int_eq(gen_file_parse(buf, strlen(buf), &f), -EINVAL);
	ck_assert_int_eq(gen_file_parse("rpmem-generations 2\ncopy a1\n", 27,
		&f), -EINVAL);
}
END_TEST

START_TEST(test_file_written_read_and_stale_when_the_part_changed)
{
	char dir[] = "/tmp/check_gen.XXXXXX", path[PATH_MAX];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/p0.gen", dir);
	struct gen_file f = sample(), q;
	bool stale;
	ck_assert_int_eq(gen_file_read(path, NULL, &q, &stale), -ENOENT);
	ck_assert(!stale);
	ck_assert_int_eq(gen_file_write(path, &f), 0);
	ck_assert_int_eq(gen_file_read(path, &f.part, &q, &stale), 0);
	ck_assert(q.g.current == G3 && !stale && q.updated > 0);
	struct gen_part other = f.part;
	other.ino++;
	ck_assert_int_eq(gen_file_read(path, &other, &q, &stale), -ENOENT);
	ck_assert(stale && q.g.id == 0);
	/* no temporary file is left beside it */
	ck_assert_int_eq(tu_dir_entries(dir), 1);
	ck_assert_int_eq(file_remove(path), 0);
	ck_assert_int_eq(file_remove(path), 0);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* main -- the decisions, then the file (tu_check.h) */
TU_CHECK_MAIN("gen", "decide", NULL, NULL,
	TU_EACH(test_decision_table, Cases),
	TU_ONE(test_rolls_and_adoption_decide_as_the_faults_went),
	TU_ONE(test_peer_table_full_refuses_a_new_peer),
	TU_CASE("file"),
	TU_ONE(test_file_text_reads_back),
	TU_EACH(test_malformed_text_is_refused, Bad),
	TU_ONE(test_file_written_read_and_stale_when_the_part_changed))
