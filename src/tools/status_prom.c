/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * status_prom.c -- rpmem status --prometheus: what status_load and
 * status_set_load found, in Prometheus' text exposition format (0.0.4),
 * for node-exporter's textfile collector
 *
 * Names follow Prometheus' conventions: rpmem_, then what, the unit last
 * (_bytes, _timestamp_seconds), _total for the one counter.  A handle's
 * series carry pool_set, target, pid and handle (two handles of one pool
 * set are two series), a record's pool_set and target, a set's its path.
 * A state is one gauge per state, 1 for the one the handle is in and 0
 * for the others, as node-exporter's systemd collector shows a unit's:
 * every series lives as long as the handle, so a change of state is a
 * change of value that changes() and an alert's `for` see, never one
 * series that vanishes while another appears.  The verdicts that refuse
 * a session are shown the same way.  Each family's samples follow its
 * HELP and TYPE lines together; a family without samples is left out;
 * no sample has a timestamp (node-exporter refuses such a file).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "prom.h"
#include "status.h"

/*
 * refused -- 1 for the verdict `refusal` names, 0 for each other verdict
 * that refuses a session; one a newer writer named that we do not know,
 * as one series more
 */
static void
refused(struct prom_fam *f, const void *of, const char *refusal)
{
	bool known = !refusal[0];
	for (int v = 0; v < GEN_VERDICTS; v++) {
		if (!gen_refused((enum gen_verdict)v))
			continue;
		const char *name = gen_verdict_name((enum gen_verdict)v);
		bool is = strcmp(name, refusal) == 0;
		known |= is;
		prom_sample(f, of, (const char *[]){ "reason", name, NULL },
			is ? "1" : "0");
	}
	if (!known)
		prom_sample(f, of, (const char *[]){ "reason", refusal, NULL },
			"1");
}

/* ------------------------------------------------------------- handles */

/* handle_labels -- pool_set, target, pid and handle */
static void
handle_labels(FILE *o, const void *of)
{
	const struct rstate_status *s = of;
	fputs("pool_set=\"", o);
	prom_label(o, s->pool_set);
	fputs("\",target=\"", o);
	prom_label(o, s->target);
	fprintf(o, "\",pid=\"%d\",handle=\"%u\"", (int)s->pid, s->seq);
}

#define HS(field) offsetof(struct rstate_status, field)

/* the numbers of a handle's status */
static const struct prom_col Handle_cols[] = {
	{ "rpmem_handle_state_since_timestamp_seconds", "gauge",
		"When the handle entered its state, seconds since the epoch "
		"(0: unknown).", HS(since), PROM_I64, NULL },
	{ "rpmem_handle_updated_timestamp_seconds", "gauge",
		"When librpmem last wrote the handle's status (at each "
		"transition, about once a second while resyncing), seconds "
		"since the epoch.", HS(updated_ms), PROM_MS, NULL },
	{ "rpmem_handle_pool_size_bytes", "gauge",
		"Size of the pool the handle replicates.", HS(pool_size),
		PROM_U64, NULL },
	{ "rpmem_handle_out_of_sync_bytes", "gauge",
		"Bytes the handle recorded as missing on the replica.",
		HS(out_of_sync), PROM_U64, NULL },
	{ "rpmem_handle_resync_done_bytes", "gauge",
		"Bytes the resync under way, or the last one, has copied.",
		HS(resync_done), PROM_U64, NULL },
	{ "rpmem_handle_resync_total_bytes", "gauge",
		"Bytes the resync under way, or the last one, has to copy.",
		HS(resync_total), PROM_U64, NULL },
	{ "rpmem_handle_resync_rate_bytes_per_second", "gauge",
		"Copy rate of the resync as last measured.", HS(resync_rate),
		PROM_U64, NULL },
	{ "rpmem_handle_reconnects_total", "counter",
		"Reconnections to the replica the handle has attempted.",
		HS(reconnects), PROM_U64, NULL },
	{ "rpmem_handle_async_lag_bytes", "gauge",
		"An async replica's lag: bytes in the send log not yet durable "
		"on it (0 for a sync replica).", HS(lag_bytes), PROM_U64,
		NULL },
	{ "rpmem_handle_async_lag_seconds", "gauge",
		"An async replica's lag: the age of the oldest record of the "
		"send log not yet durable on it (0 for a sync replica).",
		HS(lag_ms), PROM_MS, NULL },
};

/* handles -- every family of the live handles */
static void
handles(FILE *o, const struct status_found *f)
{
	struct prom_fam st = { o, "rpmem_handle_state", "gauge", "The handle's "
		"replication state: 1 for the state it is in, 0 for the "
		"others.", handle_labels, false };
	for (size_t i = 0; i < f->nh; i++)
		for (int k = 0; k < RSTATE_MAX; k++)
			prom_sample(&st, &f->h[i], (const char *[]){ "state",
				rstate_name((enum rstate_state)k), NULL },
				(int)f->h[i].state == k ? "1" : "0");
	struct prom_fam info = { o, "rpmem_handle_info", "gauge", "The "
		"handle's on-replica-loss policy and the master's and the "
		"replica's data generations; always 1.", handle_labels,
		false };
	struct prom_fam mis = { o, "rpmem_handle_generation_mismatch", "gauge",
		"1 when the master's data generation differs from the "
		"replica's (the master wrote without it), 0 when they are "
		"equal or unknown.", handle_labels, false };
	struct prom_fam ref = { o, "rpmem_handle_refused", "gauge", "1 for the "
		"reason the replica's generations refused the last session "
		"start (split brain...), 0 for the other reasons.",
		handle_labels, false };
	for (size_t i = 0; i < f->nh; i++) {
		const struct rstate_status *s = &f->h[i];
		prom_sample(&info, s, (const char *[]){ "policy", s->policy,
			"generation", s->generation, "replica_generation",
			s->replica_generation, NULL }, "1");
	}
	for (size_t i = 0; i < f->nh; i++) {
		const struct rstate_status *s = &f->h[i];
		prom_sample(&mis, s, NULL, s->generation[0] &&
			s->replica_generation[0] && strcmp(s->generation,
			s->replica_generation) ? "1" : "0");
	}
	for (size_t i = 0; i < f->nh; i++)
		refused(&ref, &f->h[i], f->h[i].refusal);
	prom_cols(o, Handle_cols, PROM_ROWS(Handle_cols), handle_labels,
		f->h, f->nh, sizeof(*f->h));
}

/* ------------------------------------------------------------- records */

/* record_labels -- pool_set and target */
static void
record_labels(FILE *o, const void *of)
{
	const struct status_closed *c = of;
	fputs("pool_set=\"", o);
	prom_label(o, c->r.pool_set);
	fputs("\",target=\"", o);
	prom_label(o, c->r.target);
	fputc('"', o);
}

/* ranges_known -- the record lists the ranges its replica lacks */
static bool
ranges_known(const void *of)
{
	return ((const struct status_closed *)of)->r.ranges_known;
}

#define RC(field) offsetof(struct status_closed, field)

/* the numbers of a record */
static const struct prom_col Record_cols[] = {
	{ "rpmem_replica_out_of_sync_since_timestamp_seconds", "gauge",
		"Since when the replica is out of sync, seconds since the "
		"epoch.", RC(r.since), PROM_I64, NULL },
	{ "rpmem_replica_ranges_known", "gauge", "1 when the record lists "
		"the ranges the replica lacks, 0 when hashes will be "
		"compared.", RC(r.ranges_known), PROM_BOOL, NULL },
	{ "rpmem_replica_out_of_sync_bytes", "gauge", "Bytes in the ranges "
		"the replica lacks, when known.", RC(bytes), PROM_U64,
		ranges_known },
};

/* records -- every family of the replicas out of sync, pool closed */
static void
records(FILE *o, const struct status_found *f)
{
	struct prom_fam oos = { o, "rpmem_replica_out_of_sync", "gauge", "A "
		"replica this host's record says is out of sync, its pool "
		"closed; always 1, why as a label.", record_labels, false };
	for (size_t i = 0; i < f->nr; i++)
		prom_sample(&oos, &f->r[i], (const char *[]){ "reason",
			f->r[i].r.reason, NULL }, "1");
	prom_cols(o, Record_cols, PROM_ROWS(Record_cols), record_labels,
		f->r, f->nr, sizeof(*f->r));
}

/* ---------------------------------------------------------------- sets */

/* set_labels -- the set's path */
static void
set_labels(FILE *o, const void *of)
{
	fputs("set=\"", o);
	prom_label(o, ((const struct status_set *)of)->path);
	fputc('"', o);
}

/* gens_read -- the set's generations were read, or it has none */
static bool
gens_read(const void *of)
{
	const struct status_set *s = of;
	return !s->error[0] && (!s->gen_err || s->gen_err == -ENOENT);
}

/* gens_refused -- the set's copy refused a session */
static bool
gens_refused(const void *of)
{
	return gens_read(of) && ((const struct status_set *)of)->gen.refused[0];
}

#define SS(field) offsetof(struct status_set, field)

/* the numbers of a set's generations */
static const struct prom_col Set_cols[] = {
	{ "rpmem_set_resync_target", "gauge", "1 while the set's copy is "
		"mid-resync from another copy (inconsistent: never promoted, "
		"never a source).", SS(gen.g.target), PROM_NONZERO, gens_read },
	{ "rpmem_set_discarded", "gauge", "1 when an operator discarded the "
		"copy's own writes (rpmem discard).", SS(gen.g.discarded),
		PROM_BOOL, gens_read },
	{ "rpmem_set_refused_timestamp_seconds", "gauge", "When the copy "
		"refused its last refused session, seconds since the epoch.",
		SS(gen.refused_time), PROM_I64, gens_refused },
};

/* set_marks -- per marker kind, whether one is there and since when */
static void
set_marks(FILE *o, const struct status_found *f, size_t m)
{
	const char *kind = f->s[0].marks[m].name;
	char name[64], tname[96], help[96], thelp[96];
	snprintf(name, sizeof(name), "rpmem_set_%s", kind);
	snprintf(tname, sizeof(tname), "%s_timestamp_seconds", name);
	snprintf(help, sizeof(help), "1 when the pool set file has a %s "
		"marker beside it, 0 when not.", kind);
	snprintf(thelp, sizeof(thelp), "When the %s marker was written, "
		"seconds since the epoch.", kind);
	struct prom_fam has = { o, name, "gauge", help, set_labels, false };
	struct prom_fam when = { o, tname, "gauge", thelp, set_labels, false };
	for (size_t i = 0; i < f->ns; i++) {
		int e = f->s[i].marks[m].err;
		if (!f->s[i].error[0] && (!e || e == -ENOENT))
			prom_sample(&has, &f->s[i], NULL, e ? "0" : "1");
	}
	for (size_t i = 0; i < f->ns; i++) {
		char b[24];
		snprintf(b, sizeof(b), "%lld",
			(long long)f->s[i].marks[m].time);
		if (!f->s[i].error[0] && !f->s[i].marks[m].err)
			prom_sample(&when, &f->s[i], NULL, b);
	}
}

/* sets -- every family of the pool set files named */
static void
sets(FILE *o, const struct status_found *f)
{
	struct prom_fam rd = { o, "rpmem_set_readable", "gauge", "1 when the "
		"pool set file, its copy's generations and its markers could "
		"be read.", set_labels, false };
	for (size_t i = 0; i < f->ns; i++) {
		bool ok = gens_read(&f->s[i]);
		for (size_t m = 0; m < STATUS_MARKS; m++)
			ok &= !f->s[i].marks[m].err ||
				f->s[i].marks[m].err == -ENOENT;
		prom_sample(&rd, &f->s[i], NULL, ok ? "1" : "0");
	}
	for (size_t m = 0; f->ns && m < STATUS_MARKS; m++)
		set_marks(o, f, m);
	struct prom_fam gi = { o, "rpmem_set_generation_info", "gauge", "The "
		"copy's id and current data generation; always 1.",
		set_labels, false };
	struct prom_fam rf = { o, "rpmem_set_refused", "gauge", "1 for the "
		"reason of the last session the copy refused, 0 for the other "
		"reasons.", set_labels, false };
	for (size_t i = 0; i < f->ns; i++) {
		char c[GEN_STR], g[GEN_STR];
		if (f->s[i].error[0] || f->s[i].gen_err)
			continue;
		gen_str(f->s[i].gen.g.id, c);
		gen_str(f->s[i].gen.g.current, g);
		prom_sample(&gi, &f->s[i], (const char *[]){ "copy", c,
			"generation", g, NULL }, "1");
	}
	for (size_t i = 0; i < f->ns; i++)
		if (gens_read(&f->s[i]))
			refused(&rf, &f->s[i], f->s[i].gen.refused);
	prom_cols(o, Set_cols, PROM_ROWS(Set_cols), set_labels, f->s, f->ns,
		sizeof(*f->s));
}

/* status_prom -- the verdict, then handles, records and sets */
void
status_prom(FILE *o, const struct status_found *f)
{
	char b[16];
	struct prom_fam sev = { o, "rpmem_status_severity", "gauge", "What "
		"rpmem status exits with: 0 all connected and in sync, 1 "
		"something needs attention, 3 split brain, refused, broken or "
		"unreadable.", NULL, false };
	snprintf(b, sizeof(b), "%d", f->worst);
	prom_sample(&sev, NULL, NULL, b);
	handles(o, f);
	records(o, f);
	sets(o, f);
}
