/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_status.c -- rpmem status: the replication state of this host's open
 * pools, of its replicas left out of sync, and of local pool set files,
 * as text, JSON or Prometheus' text exposition format
 *
 * The facts are gathered once (status_load.c, status_set.c) and then
 * rendered; the rendering goes to standard output, or with --output to
 * a file replaced whole (a temporary file beside it renamed over it), so
 * that a reader such as node-exporter's textfile collector never sees
 * half of one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "file.h"
#include "replica.h"
#include "rstate.h"
#include "status.h"
#include "tools.h"

static int run_status(const struct cli_args *a);

static const struct cli_opt Status_opts[] = {
	CLI_OPT_JSON,
	{ "prometheus", 0, NULL, "print Prometheus' text exposition format "
		"instead of text" },
	{ "output", 'o', "FILE", "replace FILE whole (atomically) with what "
		"would be printed" },
	CLI_OPT_END,
};

const struct cli_cmd cmd_status = {
	.name = "status", .operands = "[SET...]", .nmin = 0,
	.nmax = CLI_OPERANDS_MAX,
	.summary = "show the replication state of open pools and replicas",
	.opts = Status_opts,
	.run = run_status,
};

/* rows of a handle's block besides pid, policy and state */
#define ROW_SINCE 0x1U
#define ROW_OOS 0x2U		/* out-of-sync bytes, reconnects */
#define ROW_RESYNC 0x4U		/* done/total, percent, rate, ETA */
#define ROW_ERROR 0x8U		/* last error */

/* what each state shows */
static const unsigned Rows[RSTATE_MAX] = {
	[RSTATE_CONNECTED] = 0,
	[RSTATE_DEGRADED] = ROW_SINCE | ROW_OOS | ROW_ERROR,
	[RSTATE_RESYNCING] = ROW_SINCE | ROW_RESYNC,
	[RSTATE_FROZEN] = ROW_SINCE | ROW_ERROR,
	[RSTATE_SPLIT_BRAIN] = ROW_SINCE | ROW_ERROR,
	[RSTATE_BROKEN] = ROW_SINCE | ROW_ERROR,
	[RSTATE_REFUSED] = ROW_SINCE | ROW_ERROR,
};

/* the renderings */
enum format { FMT_TEXT, FMT_JSON, FMT_PROM };

/* ---------------------------------------------------------------- text */

/* human -- "12582912 bytes (12.0 MiB)" */
static const char *
human(uint64_t n, char *buf, size_t len)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB" };
	double v = (double)n;
	int u = -1;
	while (v >= 1024 && u < 3) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%llu bytes", (unsigned long long)n);
	else
		snprintf(buf, len, "%llu bytes (%.1f %s)",
			(unsigned long long)n, v, unit[u]);
	return buf;
}

/* eta -- seconds a resync has left at its rate, or -1 */
static int64_t
eta(const struct rstate_status *s)
{
	if (!s->resync_rate || s->resync_done > s->resync_total)
		return -1;
	return (int64_t)((s->resync_total - s->resync_done +
		s->resync_rate - 1) / s->resync_rate);
}

/* percent -- of a resync, or -1 when it has nothing to copy */
static double
percent(const struct rstate_status *s)
{
	return s->resync_total ? 100.0 * (double)s->resync_done /
		(double)s->resync_total : -1;
}

/* text_handle -- one block of a live handle */
static void
text_handle(FILE *o, const struct status_found *f,
		const struct rstate_status *s)
{
	char a[1024], b[1024], c[64];
	unsigned rows = Rows[s->state];
	fprintf(o, "%s on %s\n", status_safe(s->pool_set, a, sizeof(a)),
		status_safe(s->target, b, sizeof(b)));
	status_row(o, "state:", "%s", rstate_name(s->state));
	status_row(o, "pid:", "%d (handle %u)", (int)s->pid, s->seq);
	status_row(o, "policy:", "%s", s->policy[0] ? status_safe(s->policy,
		a, sizeof(a)) : "unknown");
	bool async = strcmp(s->mode, "async") == 0;
	status_row(o, "mode:", "%s", async ? "async" : "sync");
	if (async)
		status_row(o, "lag:", "%s, the oldest %llu ms (the replica is "
			"behind by this)", human(s->lag_bytes, a, sizeof(a)),
			(unsigned long long)s->lag_ms);
	if (rows & ROW_SINCE)
		status_row(o, "since:", "%s", status_when(f->now, s->since, a,
			sizeof(a)));
	if (rows & ROW_OOS) {
		status_row(o, "out of sync:", "%s", human(s->out_of_sync, a,
			sizeof(a)));
		status_row(o, "reconnects:", "%llu",
			(unsigned long long)s->reconnects);
	}
	if (rows & ROW_RESYNC) {
		double p = percent(s);
		int64_t e = eta(s);
		if (p >= 0)
			snprintf(c, sizeof(c), " (%.1f%%)", p);
		else
			c[0] = '\0';
		status_row(o, "resynced:", "%llu of %llu bytes%s",
			(unsigned long long)s->resync_done,
			(unsigned long long)s->resync_total, c);
		status_row(o, "rate:", "%.1f MiB/s",
			(double)s->resync_rate / 1048576);
		if (e < 0)
			status_row(o, "eta:", "unknown");
		else
			status_row(o, "eta:", "%lld:%02lld:%02lld",
				(long long)(e / 3600),
				(long long)(e % 3600 / 60),
				(long long)(e % 60));
	}
	if (rows & ROW_ERROR)
		status_row(o, "last error:", "%s", s->last_error[0] ?
			status_safe(s->last_error, a, sizeof(a)) : "none");
	if (s->generation[0])
		status_row(o, "generation:", "%s (the replica's: %s)",
			status_safe(s->generation, a, sizeof(a)),
			status_safe(s->replica_generation, b, sizeof(b)));
	if (s->refusal[0])
		status_row(o, "refused:", "%s", status_safe(s->refusal, a,
			sizeof(a)));
}

/* text_record -- one block of a replica out of sync, its pool closed */
static void
text_record(FILE *o, const struct status_found *f,
		const struct status_closed *c)
{
	const struct rstate_record *r = &c->r;
	char a[1024], b[1024];
	fprintf(o, "%s on %s\n", status_safe(r->pool_set, a, sizeof(a)),
		status_safe(r->target, b, sizeof(b)));
	status_row(o, "state:", "out of sync (closed)");
	status_row(o, "since:", "%s", status_when(f->now, r->since, a,
		sizeof(a)));
	status_row(o, "reason:", "%s", r->reason[0] ? status_safe(r->reason,
		a, sizeof(a)) : "unknown");
	if (r->ranges_known)
		status_row(o, "out of sync:", "%zu range(s), %s", c->nranges,
			human(c->bytes, a, sizeof(a)));
	else
		status_row(o, "out of sync:",
			"unknown (hashes will be compared)");
}

/* ---------------------------------------------------------------- json */

/* json_handle -- one live handle as a JSON object */
static void
json_handle(FILE *o, const struct rstate_status *s)
{
	fprintf(o, "{\"pool_set\": ");
	json_str(o, s->pool_set);
	fprintf(o, ", \"target\": ");
	json_str(o, s->target);
	fprintf(o, ", \"pid\": %d, \"handle\": %u, \"policy\": ", (int)s->pid,
		s->seq);
	json_str(o, s->policy[0] ? s->policy : NULL);
	fprintf(o, ", \"state\": \"%s\", \"since\": %lld, \"pool_size\": %llu, "
		"\"out_of_sync\": %llu, \"reconnects\": %llu, "
		"\"resync_done\": %llu, \"resync_total\": %llu, "
		"\"resync_rate\": %llu, \"resync_percent\": ",
		rstate_name(s->state), (long long)s->since,
		(unsigned long long)s->pool_size,
		(unsigned long long)s->out_of_sync,
		(unsigned long long)s->reconnects,
		(unsigned long long)s->resync_done,
		(unsigned long long)s->resync_total,
		(unsigned long long)s->resync_rate);
	double p = percent(s);
	int64_t e = eta(s);
	if (s->state == RSTATE_RESYNCING && p >= 0)
		fprintf(o, "%.1f", p);
	else
		fprintf(o, "null");
	fprintf(o, ", \"eta_seconds\": ");
	if (s->state == RSTATE_RESYNCING && e >= 0)
		fprintf(o, "%lld", (long long)e);
	else
		fprintf(o, "null");
	fprintf(o, ", \"last_error\": ");
	json_str(o, s->last_error[0] ? s->last_error : NULL);
	fprintf(o, ", \"generation\": ");
	json_str(o, s->generation[0] ? s->generation : NULL);
	fprintf(o, ", \"replica_generation\": ");
	json_str(o, s->replica_generation[0] ? s->replica_generation : NULL);
	fprintf(o, ", \"refusal\": ");
	json_str(o, s->refusal[0] ? s->refusal : NULL);
	fprintf(o, ", \"mode\": \"%s\", \"lag_bytes\": %llu, \"lag_ms\": %llu",
		strcmp(s->mode, "async") ? "sync" : "async",
		(unsigned long long)s->lag_bytes,
		(unsigned long long)s->lag_ms);
	fprintf(o, ", \"updated_ms\": %lld}", (long long)s->updated_ms);
}

/* json_record -- one replica out of sync as a JSON object */
static void
json_record(FILE *o, const struct status_closed *c)
{
	const struct rstate_record *r = &c->r;
	fprintf(o, "{\"pool_set\": ");
	json_str(o, r->pool_set);
	fprintf(o, ", \"target\": ");
	json_str(o, r->target);
	fprintf(o, ", \"pool_size\": %llu, \"in_sync\": false, "
		"\"open\": false, \"since\": %lld, \"reason\": ",
		(unsigned long long)r->pool_size, (long long)r->since);
	json_str(o, r->reason[0] ? r->reason : NULL);
	fprintf(o, ", \"ranges_known\": %s, ", r->ranges_known ? "true" :
		"false");
	if (r->ranges_known)
		fprintf(o, "\"ranges\": %zu, \"out_of_sync\": %llu}",
			c->nranges, (unsigned long long)c->bytes);
	else
		fprintf(o, "\"ranges\": null, \"out_of_sync\": null}");
}

/* ----------------------------------------------------------------- run */

/* show -- what was found, as text or one JSON object */
static void
show(FILE *o, const struct status_found *f, bool json)
{
	if (json) {
		fprintf(o, "{\"state_dir\": ");
		json_str(o, f->sets_only ? NULL : f->dir);
		fprintf(o, ", \"handles\": [");
	}
	for (size_t i = 0; i < f->nh; i++) {
		fprintf(o, "%s", !i ? "" : json ? ", " : "\n");
		if (json)
			json_handle(o, &f->h[i]);
		else
			text_handle(o, f, &f->h[i]);
	}
	if (json)
		fprintf(o, "], \"records\": [");
	for (size_t i = 0; i < f->nr; i++) {
		fprintf(o, "%s", json ? (i ? ", " : "") : i || f->nh ? "\n" :
			"");
		if (json)
			json_record(o, &f->r[i]);
		else
			text_record(o, f, &f->r[i]);
	}
	if (json)
		fprintf(o, "], \"sets\": [");
	for (size_t i = 0; i < f->ns; i++)
		status_set_show(o, &f->s[i], f->now, json, i == 0);
	if (json)
		fprintf(o, "]}\n");
	else if (!f->sets_only && !f->nh && !f->nr)
		fprintf(o, "no pool open through librpmem and no replica out "
			"of sync (%s)\n", f->dir);
}

/* format_of -- the rendering the options ask for; -1 after the error */
static int
format_of(const struct cli_args *a)
{
	bool json = cli_flag(a, "json"), prom = cli_flag(a, "prometheus");
	const char *out = cli_value(a, "output");
	if (json && prom)
		return -cli_error(a->cmd, "--json and --prometheus are two "
			"renderings of the same facts: give one");
	if (out && !out[0])
		return -cli_error(a->cmd, "--output wants a file name, not an "
			"empty one");
	return json ? FMT_JSON : prom ? FMT_PROM : FMT_TEXT;
}

/*
 * emit -- the rendering, on stdout or replacing the --output file; 0,
 * or SEV_NO_OUTPUT after saying why
 */
static int
emit(const struct cli_args *a, const char *buf, size_t len)
{
	const char *path = cli_value(a, "output");
	if (!path) {
		fwrite(buf, 1, len, stdout);
		return fflush(stdout) ? SEV_NO_OUTPUT : 0;
	}
	int e = file_replace(path, buf, len);
	if (!e)
		return 0;
	fprintf(stderr, "rpmem status: --output %s: %s (the file is left as "
		"it was)\n", path, strerror(-e));
	return SEV_NO_OUTPUT;
}

/* run_status -- gather once, render as asked, say how bad it is */
static int
run_status(const struct cli_args *a)
{
	int fmt = format_of(a);
	if (fmt < 0)
		return -fmt;
	struct status_found f;
	memset(&f, 0, sizeof(f));
	f.now = time(NULL);
	f.sets_only = a->noperands > 0;
	int ret = 0;
	if (!f.sets_only && (ret = status_load(&f)) != 0)
		goto out;
	if (f.sets_only && !(f.s = calloc(a->noperands, sizeof(*f.s)))) {
		fprintf(stderr, "rpmem status: %s\n", strerror(ENOMEM));
		ret = 1;
		goto out;
	}
	for (; f.ns < a->noperands; f.ns++)
		status_set_load(&f.s[f.ns], a->operand[f.ns], &f.worst);
	char *buf = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&buf, &len);
	if (!o) {
		fprintf(stderr, "rpmem status: %s\n", strerror(errno));
		ret = 1;
		goto out;
	}
	if (fmt == FMT_PROM)
		status_prom(o, &f);
	else
		show(o, &f, fmt == FMT_JSON);
	if (fclose(o) || !buf) {
		fprintf(stderr, "rpmem status: %s\n", strerror(ENOMEM));
		ret = 1;
	} else {
		ret = emit(a, buf, len);
	}
	free(buf);
	if (!ret)
		ret = f.worst;
out:
	status_free(&f);
	return ret;
}
