/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_discard.c -- rpmem discard: the operator resolves a split brain by
 * naming the copy whose own writes go (as DRBD's --discard-my-data)
 *
 * Run on the host of that copy, against a pool set file naming its parts
 * (the replica's set in rpmemd's poolset-dir, or a master set: its local
 * replica), while nothing holds them: the copy's generations say
 * "discarded".  The next master that starts a session with it (its
 * worker's reconnect, an open, rpmem sync) compares the copy whole by
 * hashes and copies in what differs, and the copy takes that master's
 * generation; a discarded copy never serves as a master, and rpmem
 * promote refuses it unless forced.  Nothing else is written: the data
 * stays until the master overwrites it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_gen.h"
#include "db_pool.h"
#include "replica.h"
#include "tools.h"

#define EXIT_REFUSED 3		/* a process holds the copy */

static int run_discard(const struct cli_args *a);

const struct cli_cmd cmd_discard = {
	.name = "discard", .operands = "POOLSET", .nmin = 1, .nmax = 1,
	.summary = "resolve a split brain: this copy's own writes go",
	.run = run_discard,
};

/* run_discard -- mark the copy's generations discarded, parts locked */
static int
run_discard(const struct cli_args *a)
{
	const char *path = a->operand[0];
	struct poolset *set = replica_load(path);
	if (set == NULL)
		return 1;
	struct db_pool *pool;
	int e = db_parts_open(set, false, &pool);
	if (e) {
		fprintf(stderr, "rpmem discard: %s: %s\n", path, e == -EBUSY ?
			"a process holds the copy (end it first: rpmem "
			"status says which)" : strerror(-e));
		return e == -EBUSY ? EXIT_REFUSED : 1;
	}
	const struct poolset_replica *rep =
		&((struct db_priv *)pool->priv)->set->replicas[0];
	struct gen_file f;
	e = db_gen_read(rep, &f, NULL);
	if (e == -ENOENT || e == -EINVAL) {
		if (e == -EINVAL)
			fprintf(stderr, "rpmem discard: %s: its generations "
				"were unreadable: new ones\n", path);
		memset(&f, 0, sizeof(f));
		e = gen_new(&f.g, 0);
		f.g.current = 0;
	}
	char was[512] = "";
	if (!e) {
		gen_describe(&f.g, was, sizeof(was));
		f.g.discarded = true;
		e = db_gen_write(rep, &f);
	}
	int c = db_parts_close(pool, false, false);
	if (e || c) {
		fprintf(stderr, "rpmem discard: %s: %s\n", path,
			strerror(-(e ? e : c)));
		return 1;
	}
	printf("%s: discarded (it was: %s); the next master's session "
		"copies in what differs\n", path, was);
	return 0;
}
