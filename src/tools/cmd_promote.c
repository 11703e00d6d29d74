/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_promote.c -- rpmem promote: a replica becomes a master, standalone
 * or, with --master-set, one copy of a pair (promote_pair.c)
 *
 * Run on the backup host against the pool set file in rpmemd's
 * poolset-dir that the lost primary's REPLICA line names.  The writes,
 * in order, each durable before the next (scenario F2):
 *   1. SET.promoted (marker.c): from here rpmemd refuses the set as a
 *      replica (F3), so nothing of the old primary lands after it;
 *   2. each header, the last part first and part 0 last: replica links
 *      to itself (a pair's: kept), shutdown state cleared (db_promote.c);
 *   3. a pair's only: SET.promoted again, naming the other copy: the
 *      headers are done;
 *   4. a pair's only: this host's record of the other copy, not in sync.
 * libpmemobj trusts part 0's links, so until write 2 of part 0 it sees
 * the replica and refuses it ("wrong replica UUID"); after it, the pool.
 * The copy's state is checked with its parts locked, after the sessions
 * holding it ended: a copy mid-resync (inconsistent), discarded, or
 * outdated is promoted only with --force.
 * A rerun finds the marker and rewrites the headers again (one torn by
 * a power loss within its write too: repair_torn); a pool whose part 0
 * already names itself, or a pair's whose marker names the other copy,
 * is left alone (F5), but for a pair's record, written again.
 * RPMEM_PROMOTE_STOP_AFTER=N (tests) kills the command after write N.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db_gen.h"
#include "db_pool.h"
#include "session_fence.h"
#include "marker.h"
#include "promote_pair.h"
#include "replica.h"
#include "tools.h"

#define EXIT_REFUSED 3		/* a session holds the pool, or outdated */

static int run_promote(const struct cli_args *a);
static int run_demote(const struct cli_args *a);

static const struct cli_opt Promote_opts[] = {
	{ "master-set", 'm', "FILE", "promote one copy of a pair, FILE its "
		"master set" },
	{ "end-sessions", 'e', NULL, "end the rpmemd sessions holding the "
		"pool first" },
	{ "force", 'f', NULL, "end the sessions and promote an outdated "
		"replica too" },
	CLI_OPT_JSON,
	CLI_OPT_END,
};

const struct cli_cmd cmd_promote = {
	.name = "promote", .operands = "POOLSET", .nmin = 1, .nmax = 1,
	.summary = "make the replica POOLSET describes a standalone pool",
	.opts = Promote_opts,
	.run = run_promote,
};

const struct cli_cmd cmd_demote = {
	.name = "demote", .operands = "POOLSET", .nmin = 1, .nmax = 1,
	.summary = "let rpmemd serve a promoted POOLSET as a replica again",
	.run = run_demote,
};

/* what a promote found and did */
struct promote {
	const char *cmd;	/* promote or demote, for messages */
	const char *path;
	bool json;
	const char *outcome;	/* promoted, completed, already-... */
	struct pair *pair;	/* --master-set, or NULL */
	struct pool_hdr hdr0;	/* part 0's, as read before the writes */
	struct marker mark;
	bool has_mark;
	struct session_holder held[SESSION_HOLDERS_MAX];
	unsigned nheld;
	bool fenced;		/* the holders were ended */
	unsigned nhdrs;
	unsigned writes;	/* durable writes made */
	unsigned stop_after;	/* RPMEM_PROMOTE_STOP_AFTER, 0: never */
	struct timespec t0;
};

/* wrote -- one more durable write; the test hook may end us here */
static void
wrote(struct promote *p)
{
	if (++p->writes == p->stop_after)
		(void) kill(getpid(), SIGKILL);
}

/* seconds -- since the promote began */
static double
seconds(const struct promote *p)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - p->t0.tv_sec) +
		(double)(t.tv_nsec - p->t0.tv_nsec) / 1e9;
}

/* load -- POOLSET must be one local replica with headers */
static struct poolset *
load(const char *cmd, const char *path)
{
	struct poolset *set = replica_load(path);
	if (set == NULL)
		return NULL;
	const char *why = NULL;
	if (set->nreplicas != 1)
		why = "it has REPLICA lines; name the replica's own pool set "
			"file (the one in rpmemd's poolset-dir)";
	else if (set->options & POOLSET_OPT_NOHDRS)
		why = "OPTION NOHDRS: a pool without headers has no master "
			"to be detached from";
	if (why) {
		fprintf(stderr, "rpmem %s: %s: %s\n", cmd, path, why);
		poolset_free(set);
		return NULL;
	}
	return set;
}

/* fence_sessions -- refuse, or with `end` end, the sessions holding it */
static int
fence_sessions(struct promote *p, const struct poolset *set, bool end)
{
	int e = session_fence_find(&set->replicas[0], p->held, &p->nheld);
	if (e) {
		fprintf(stderr, "rpmem %s: /proc/locks: %s\n", p->cmd,
			strerror(-e));
		return 1;
	}
	for (unsigned i = 0; i < p->nheld; i++) {
		char who[256];
		session_fence_describe(&p->held[i], who, sizeof(who));
		if (!end) {
			fprintf(stderr, "rpmem %s: %s: held by %s; the "
				"primary may still be writing (end it%s)\n",
				p->cmd, p->path, who, strcmp(p->cmd,
				"promote") ? "" : ", or --end-sessions");
			continue;
		}
		e = session_fence_end(&p->held[i]);
		if (e) {
			fprintf(stderr, "rpmem promote: %s: cannot end %s: "
				"%s\n", p->path, who, e == -EPERM ?
				"not an rpmemd" : strerror(-e));
			return EXIT_REFUSED;
		}
		fprintf(stderr, "rpmem promote: ended %s\n", who);
		if (!p->mark.client[0] && p->held[i].client[0])
			snprintf(p->mark.client, sizeof(p->mark.client),
				"%.*s", (int)strcspn(p->held[i].client, " "),
				p->held[i].client);
	}
	p->fenced = end && p->nheld;
	return p->nheld && !end ? EXIT_REFUSED : 0;
}

/* mark -- write the promoted marker as p->mark says */
static int
mark(struct promote *p)
{
	int e = marker_write(p->path, &p->mark);
	if (e) {
		fprintf(stderr, "rpmem promote: %s%s: %s\n", p->path,
			MARKER_PROMOTED_SUFFIX, strerror(-e));
		return 1;
	}
	wrote(p);
	return 0;
}

/* begin -- the marker, unless an earlier run left it */
static int
begin(struct promote *p, const struct pool_hdr *hdr0)
{
	if (p->has_mark) {
		p->outcome = "completed";
		return 0;
	}
	p->mark.time = (int64_t)time(NULL);
	marker_uuid_str(hdr0->prev_repl_uuid, p->mark.master);
	marker_uuid_str(hdr0->poolset_uuid, p->mark.poolset);
	if (mark(p))
		return 1;
	p->has_mark = true;
	p->outcome = "promoted";
	return 0;
}

/*
 * link_of -- what every header's replica links are to name: part 0
 * itself, or a pair's other copy (NULL: part 0 names no one other copy)
 */
static const uint8_t *
link_of(const struct promote *p, const struct pool_hdr *hdr0)
{
	return p->pair ? db_pool_peer(hdr0) : hdr0->uuid;
}

/*
 * roll -- write 0: the copy's generations say it writes on its own from
 * now (a new current; its last master's bitmap keeps the old one); a
 * copy mid-resync or discarded, or whose generations cannot be read, is
 * refused unless forced.  A rerun that finds the marker rolls nothing:
 * its first run did.  0, EXIT_REFUSED or 1.
 */
static int
roll(struct promote *p, const struct poolset_replica *rep, bool force)
{
	struct gen_file f;
	int e = db_gen_read(rep, &f, NULL);
	char what[512] = "";
	if (e == 0 && (f.g.target || f.g.discarded)) {
		gen_describe(&f.g, what, sizeof(what));
		fprintf(stderr, "rpmem promote: %s: the copy is %s (%s)%s\n",
			p->path, f.g.target ? "mid-resync, inconsistent" :
			"discarded", what, force ? "; promoting it anyway "
			"(--force)" : "; it lacks what its master holds "
			"(promote it with --force, or resync it first)");
		if (!force)
			return EXIT_REFUSED;
	} else if (e && e != -ENOENT) {
		fprintf(stderr, "rpmem promote: %s: its generations: %s%s\n",
			p->path, strerror(-e), force ? "; new ones (--force)" :
			" (promote it with --force)");
		if (!force || e != -EINVAL)
			return force ? 1 : EXIT_REFUSED;
	}
	if (p->has_mark)
		return 0;
	if (e && gen_new(&f.g, 0)) {
		fprintf(stderr, "rpmem promote: %s: no random bytes\n", p->path);
		return 1;
	}
	for (unsigned i = 0; i < f.g.npeers; i++)
		f.g.peers[i].open = false;
	f.g.target = 0;
	f.g.discarded = false;
	if ((e = gen_roll(&f.g, f.g.master)) == 0)
		e = db_gen_write(rep, &f);
	if (e) {
		fprintf(stderr, "rpmem promote: %s: writing its generations: "
			"%s\n", p->path, strerror(-e));
		return 1;
	}
	wrote(p);
	return 0;
}

/*
 * promote -- the generations, the marker, the headers, part 0 last; a
 * pair's marker then names the other copy.  Done already: a standalone
 * pool whose part 0 names itself, a pair whose marker names the other
 * copy.
 */
static int
promote(struct promote *p, struct db_pool *pool,
		const struct poolset_replica *rep, bool force)
{
	struct pool_hdr *hdr0 = &p->hdr0;
	if (db_hdr_read(pool, 0, hdr0))
		return 1;
	const uint8_t *link = p->pair ? pair_peer(p->pair, p->path, hdr0) :
		hdr0->uuid;
	if (!link)
		return 1;
	if (p->pair ? p->has_mark && p->mark.pair[0] :
			db_pool_is_master(hdr0)) {
		p->outcome = p->writes ? "completed" : p->has_mark ?
			"already-promoted" : "already-master";
		return 0;
	}
	int ret = roll(p, rep, force);
	if (!ret)
		ret = begin(p, hdr0);
	for (unsigned i = p->nhdrs; !ret && i-- > 0; ) {
		if (db_hdr_promote(pool, i, link))
			ret = 1;
		else
			wrote(p);
	}
	if (!ret && p->pair) {
		marker_uuid_str(link, p->mark.pair);
		ret = mark(p);
	}
	return ret;
}

/*
 * repair_torn -- a power loss in the middle of a header write leaves it
 * part old, part new: its checksum fails.  Only the replica links, the
 * shutdown state and the checksum differ between the two, so with the
 * marker present (a promote was under way) a header whose poolset uuid
 * is the marker's is finished as promote would have written it; any
 * other invalid header is left for db_hdrs_verify to refuse (and all of
 * them to promote's refusal when a pair's part 0 names no other copy).
 */
static int
repair_torn(struct promote *p, struct db_pool *pool)
{
	struct pool_hdr hdr0, hdr;
	if (db_hdr_read(pool, 0, &hdr0))
		return 1;
	const uint8_t *link = link_of(p, &hdr0);
	for (unsigned i = 0; link && i < p->nhdrs; i++) {
		char ps[MARKER_UUID_STR];
		if (db_hdr_read(pool, i, &hdr))
			return 1;
		marker_uuid_str(hdr.poolset_uuid, ps);
		if (pool_hdr_valid(&hdr) || strcmp(ps, p->mark.poolset))
			continue;
		if (db_hdr_promote(pool, i, link))
			return 1;
		wrote(p);
		fprintf(stderr, "rpmem promote: %s: header of part %u torn by "
			"an interrupted promote; finished\n", p->path, i);
	}
	return 0;
}

/* report_text -- one line of what happened */
static void
report_text(const struct promote *p, double secs)
{
	char what[384];
	if (p->has_mark)
		marker_describe(&p->mark, what, sizeof(what));
	if (strcmp(p->outcome, "already-master") == 0)
		printf("%s: already a master (it was never promoted); "
			"nothing to do\n", p->path);
	else if (strcmp(p->outcome, "already-promoted") == 0)
		printf("%s: already %s; %s\n", p->path, what, p->pair ?
			"the headers are left as they are" : "nothing to do");
	else
		printf("%s: %s%s; %u header(s) rewritten in %.3f s\n",
			p->path, strcmp(p->outcome, "completed") ? "" :
			"the interrupted promotion finished: ", what,
			p->nhdrs, secs);
	if (p->pair)
		pair_text(p->pair);
}

/* report_json -- the same for scripts */
static void
report_json(const struct promote *p, double secs)
{
	char date[32] = "";
	if (p->has_mark)
		marker_date(&p->mark, date, sizeof(date));
	printf("{\"poolset\": ");
	json_str(stdout, p->path);
	printf(", \"outcome\": \"%s\", \"promoted\": ", p->outcome);
	json_str(stdout, p->has_mark ? date : NULL);
	printf(", \"master_uuid\": ");
	json_str(stdout, p->has_mark ? p->mark.master : NULL);
	printf(", \"poolset_uuid\": ");
	json_str(stdout, p->has_mark ? p->mark.poolset : NULL);
	printf(", \"fenced\": [");
	for (unsigned i = 0; p->fenced && i < p->nheld; i++) {
		printf("%s{\"pid\": %d, \"client\": ", i ? ", " : "",
			(int)p->held[i].pid);
		json_str(stdout, p->held[i].client[0] ? p->held[i].client :
			NULL);
		printf("}");
	}
	printf("]");
	pair_json(p->pair);
	printf(", \"headers_written\": %u, \"writes\": %u, "
		"\"seconds\": %.6f}\n", strncmp(p->outcome, "already", 7) ?
		p->nhdrs : 0, p->writes, secs);
}

/* report_refused -- for scripts: who holds the pool */
static void
report_refused(const struct promote *p)
{
	printf("{\"poolset\": ");
	json_str(stdout, p->path);
	printf(", \"outcome\": \"refused\", \"held_by\": [");
	for (unsigned i = 0; i < p->nheld; i++) {
		const struct session_holder *h = &p->held[i];
		char since[32] = "";
		time_t t = (time_t)h->since;
		struct tm tm;
		if (h->since && gmtime_r(&t, &tm))
			strftime(since, sizeof(since), "%Y-%m-%dT%H:%M:%SZ",
				&tm);
		printf("%s{\"pid\": %d, \"program\": ", i ? ", " : "",
			(int)h->pid);
		json_str(stdout, h->exe);
		printf(", \"client\": ");
		json_str(stdout, h->client[0] ? h->client : NULL);
		printf(", \"since\": ");
		json_str(stdout, since[0] ? since : NULL);
		printf("}");
	}
	printf("]}\n");
}

/*
 * outdated -- scenario D5: a replica its master went on without
 * lags behind it; promoting it loses what the master wrote since, so
 * only --force does it (and the mark goes once it is a master).
 * 0 to go on, EXIT_REFUSED or 1 otherwise; *marked when there is a mark.
 */
static int
outdated(const struct promote *p, bool force, bool *marked)
{
	struct marker m;
	int e = marker_read(MARKER_OUTDATED, p->path, &m);
	*marked = e != -ENOENT;
	if (e == -ENOENT)
		return 0;
	char what[384];
	if (e)
		snprintf(what, sizeof(what), "outdated (its marker %s%s is "
			"unreadable: %s)", p->path, MARKER_OUTDATED_SUFFIX,
			strerror(-e));
	else
		marker_describe(&m, what, sizeof(what));
	if (force) {
		fprintf(stderr, "rpmem promote: %s: %s; promoting it anyway "
			"(--force)\n", p->path, what);
		return 0;
	}
	fprintf(stderr, "rpmem promote: %s: the replica is %s; it lacks "
		"what that master wrote since (promote it with --force, or "
		"sync it first)\n", p->path, what);
	return EXIT_REFUSED;
}

/*
 * rewrite -- open the pool (taking `set` over), check it again now that
 * it is locked, finish a torn header, verify, roll its generations,
 * promote, close; then the outdated mark goes
 */
static int
rewrite(struct promote *p, struct poolset *set, bool force)
{
	struct db_pool *pool;
	const struct poolset_replica *rep = &set->replicas[0];
	int e = db_parts_open(set, false, &pool);
	if (e) {
		fprintf(stderr, "rpmem promote: %s: %s\n", p->path,
			e == -EBUSY ? "a session took the pool meanwhile; "
			"run promote again" : strerror(-e));
		return e == -EBUSY ? EXIT_REFUSED : 1;
	}
	int ret = 0;
	bool marked = false;
	p->nhdrs = ((struct db_priv *)pool->priv)->nhdrs;
	e = marker_read(MARKER_PROMOTED, p->path, &p->mark);
	if (e && e != -ENOENT) {
		fprintf(stderr, "rpmem promote: %s%s: %s\n", p->path,
			MARKER_PROMOTED_SUFFIX, strerror(-e));
		ret = 1;
		goto out;
	}
	p->has_mark = e == 0;
	/* locked and its sessions ended: what marked it meanwhile is seen */
	if ((ret = outdated(p, force, &marked)) != 0)
		goto out;
	if (p->has_mark && (ret = repair_torn(p, pool)) != 0)
		goto out;
	e = db_hdrs_verify(pool);
	if (e) {
		fprintf(stderr, "rpmem promote: %s: the headers do not "
			"verify (%s); nothing changed\n", p->path,
			strerror(-e));
		ret = 1;
		goto out;
	}
	ret = promote(p, pool, rep, force);
out:
	if (db_parts_close(pool, false, false) && !ret)
		ret = 1;
	if (ret)
		return ret;
	e = marked ? marker_remove(MARKER_OUTDATED, p->path) : 0;
	if (e && e != -ENOENT) {
		fprintf(stderr, "rpmem promote: %s: promoted, but removing "
			"%s%s failed: %s\n", p->path, p->path,
			MARKER_OUTDATED_SUFFIX, strerror(-e));
		return 1;
	}
	return 0;
}

/* run_promote -- check, fence, mark, rewrite, record, report */
static int
run_promote(const struct cli_args *a)
{
	struct promote p;
	struct pair pair;
	memset(&p, 0, sizeof(p));
	memset(&pair, 0, sizeof(pair));
	clock_gettime(CLOCK_MONOTONIC, &p.t0);
	p.cmd = "promote";
	p.path = a->operand[0];
	p.json = cli_flag(a, "json");
	const char *stop = getenv("RPMEM_PROMOTE_STOP_AFTER");
	if (stop)
		p.stop_after = (unsigned)strtoul(stop, NULL, 10);
	bool force = cli_flag(a, "force");
	const char *mset = cli_value(a, "master-set");

	bool marked;
	int ret = outdated(&p, force, &marked);
	if (ret)
		return ret;
	struct poolset *set = load(p.cmd, p.path);
	if (set == NULL)
		return 1;
	if (mset) {
		p.pair = &pair;
		ret = pair_load(&pair, mset, p.path, set);
	}
	if (!ret)
		ret = fence_sessions(&p, set,
			force || cli_flag(a, "end-sessions"));
	if (ret) {
		if (ret == EXIT_REFUSED && p.json)
			report_refused(&p);
		poolset_free(set);
	} else {
		ret = rewrite(&p, set, force);
	}
	if (!ret && p.pair && (ret = pair_record(p.pair, &p.hdr0)) == 0)
		wrote(&p);
	if (!ret) {
		double secs = seconds(&p);
		if (p.json)
			report_json(&p, secs);
		else
			report_text(&p, secs);
	}
	pair_free(&pair);
	return ret;
}

/* run_demote -- the marker goes, nothing else changes */
static int
run_demote(const struct cli_args *a)
{
	struct promote p;
	memset(&p, 0, sizeof(p));
	p.cmd = "demote";
	p.path = a->operand[0];
	struct poolset *set = load(p.cmd, p.path);
	if (set == NULL)
		return 1;
	int ret = fence_sessions(&p, set, false);
	poolset_free(set);
	if (ret)
		return ret;
	int e = marker_read(MARKER_PROMOTED, p.path, &p.mark);
	if (e == -ENOENT) {
		printf("%s: not promoted; nothing to do\n", p.path);
		return 0;
	}
	e = e ? e : marker_remove(MARKER_PROMOTED, p.path);
	if (e) {
		fprintf(stderr, "rpmem demote: %s%s: %s\n", p.path,
			MARKER_PROMOTED_SUFFIX, strerror(-e));
		return 1;
	}
	char what[384];
	marker_describe(&p.mark, what, sizeof(what));
	printf("%s: no longer marked as %s; rpmemd serves it as a replica "
		"again\n", p.path, what);
	return 0;
}
