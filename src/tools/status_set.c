/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * status_set.c -- rpmem status of pool set files of this host: the
 * markers beside each (promoted, outdated) and the data-generation
 * identifiers of its local copy (doc/generations.md); and the text
 * helpers rpmem status shares (status.h)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "db_gen.h"
#include "marker.h"
#include "replica.h"
#include "status.h"

/* status_worse -- raise *worst to `sev` */
void
status_worse(int *worst, int sev)
{
	if (sev > *worst)
		*worst = sev;
}

/* a marker found beside a pool set file */
struct mark {
	int64_t time;		/* seconds since the epoch */
	char date[32];		/* the same as 2026-01-31T12:00:00Z */
	char text[512];		/* one line of what it says */
};

/* mark_read -- the marker of `kind` beside `set`; 0, -ENOENT, -errno */
static int
mark_read(enum marker_kind kind, const char *set, struct mark *m)
{
	struct marker p;
	int e = marker_read(kind, set, &p);
	if (e)
		return e;
	m->time = p.time;
	marker_date(&p, m->date, sizeof(m->date));
	marker_describe(&p, m->text, sizeof(m->text));
	return 0;
}

/* the markers a pool set file may have beside it, one row per kind */
static const struct {
	const char *name;	/* text label and JSON key */
	int severity;		/* when present */
	enum marker_kind kind;
} Markers[] = {
	{ "promoted", SEV_ATTENTION, MARKER_PROMOTED },
	{ "outdated", SEV_ATTENTION, MARKER_OUTDATED },
};

#define NMARKERS (sizeof(Markers) / sizeof(Markers[0]))

/* status_safe -- `s` for a terminal: other than printable ASCII as \xNN */
const char *
status_safe(const char *s, char *buf, size_t len)
{
	size_t o = 0;
	for (const unsigned char *p = (const unsigned char *)s;
			*p && o + 5 < len; p++) {
		if (*p >= 0x20 && *p < 0x7f && *p != '\\')
			buf[o++] = (char)*p;
		else
			o += (size_t)snprintf(buf + o, len - o, "\\x%02x", *p);
	}
	buf[o] = '\0';
	return buf;
}

/* status_row -- one aligned "label: value" line of a block */
void
status_row(const char *label, const char *fmt, ...)
{
	va_list ap;
	printf("  %-13s ", label);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/* status_when -- "2026-01-31T12:00:00Z (3h 12m ago)", or "unknown" */
const char *
status_when(time_t now, int64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;
	char date[32];
	if (t <= 0 || !gmtime_r(&tt, &tm))
		return "unknown";
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	int64_t ago = (int64_t)now - t;
	if (ago < 0)
		ago = 0;
	if (ago >= 86400)
		snprintf(buf, len, "%s (%lldd %lldh ago)", date,
			(long long)(ago / 86400),
			(long long)(ago % 86400 / 3600));
	else if (ago >= 3600)
		snprintf(buf, len, "%s (%lldh %lldm ago)", date,
			(long long)(ago / 3600), (long long)(ago % 3600 / 60));
	else
		snprintf(buf, len, "%s (%lldm %llds ago)", date,
			(long long)(ago / 60), (long long)(ago % 60));
	return buf;
}

/* gen_text -- the copy's generations as rows */
static void
gen_text(const struct gen_file *f, time_t now)
{
	const struct gen *g = &f->g;
	char a[GEN_STR], b[GEN_STR], w[128];
	gen_str(g->id, a);
	gen_str(g->current, b);
	status_row("copy:", "%s", a);
	status_row("generation:", "%s", b);
	for (unsigned i = 0; i < GEN_HISTORY && g->history[i]; i++) {
		gen_str(g->history[i], a);
		status_row(i ? "" : "before:", "%s", a);
	}
	for (unsigned i = 0; i < g->npeers; i++) {
		gen_str(g->peers[i].id, a);
		gen_str(g->peers[i].bitmap, b);
		if (g->peers[i].bitmap)
			status_row("wrote alone:", "without %s since %s", a, b);
		if (g->peers[i].open)
			status_row("session:", "with %s not closed", a);
	}
	if (g->target) {
		gen_str(g->target, a);
		status_row("resync:", "from %s, unfinished: inconsistent", a);
	}
	if (g->discarded)
		status_row("discarded:", "yes: the next master overwrites "
			"what differs");
	if (f->refused[0]) {
		gen_str(f->refused_peer, a);
		status_row("refused:", "%s of %s, %s", f->refused, a,
			status_when(now, f->refused_time, w, sizeof(w)));
	}
}

/* gen_json -- the same as a JSON object, with the last refusal */
static void
gen_json(const struct gen_file *f)
{
	printf("{\"identifiers\": ");
	json_gen(stdout, &f->g);
	printf(", \"refused\": ");
	if (f->refused[0])
		printf("{\"verdict\": \"%s\", \"copy\": \"%016" PRIx64
			"\", \"time\": %lld}", f->refused, f->refused_peer,
			(long long)f->refused_time);
	else
		printf("null");
	printf("}");
}

/*
 * gens -- the generations of the set's local copy, as text rows or a
 * JSON member; a copy mid-resync, discarded or that refused a session
 * asks for attention, one that cannot be read is broken
 */
static void
gens(int *worst, time_t now, const char *set, bool json)
{
	struct poolset *ps = replica_load(set);
	struct gen_file f;
	int e = ps ? db_gen_read(&ps->replicas[0], &f, NULL) : -EINVAL;
	poolset_free(ps);
	if (e && e != -ENOENT) {
		fprintf(stderr, "rpmem status: %s: its generations: %s\n", set,
			e == -EINVAL ? "malformed, or the set cannot be read" :
			strerror(-e));
		status_worse(worst, SEV_BROKEN);
	} else if (!e && (f.g.target || f.g.discarded || f.refused[0])) {
		status_worse(worst, SEV_ATTENTION);
	}
	if (json) {
		printf(", \"generations\": ");
		if (e)
			printf("null");
		else
			gen_json(&f);
	} else if (e) {
		status_row("generation:", "%s", e == -ENOENT ? "none" :
			"unreadable");
	} else {
		gen_text(&f, now);
	}
}

/* status_set -- a pool set file, its markers and generations */
void
status_set(int *worst, time_t now, const char *set, bool json, bool first)
{
	char a[1024], err[256] = "";
	struct stat st;
	if (stat(set, &st))
		snprintf(err, sizeof(err), "%s", strerror(errno));
	if (err[0]) {
		fprintf(stderr, "rpmem status: %s: %s\n", set, err);
		status_worse(worst, SEV_BROKEN);
	}
	if (json) {
		printf("%s{\"set\": ", first ? "" : ", ");
		json_str(stdout, set);
		printf(", \"error\": ");
		json_str(stdout, err[0] ? err : NULL);
	} else {
		printf("%s%s\n", first ? "" : "\n", status_safe(set, a,
			sizeof(a)));
		if (err[0])
			status_row("error:", "%s", err);
	}
	if (!err[0])
		gens(worst, now, set, json);
	for (size_t i = 0; !err[0] && i < NMARKERS; i++) {
		struct mark m;
		int e = mark_read(Markers[i].kind, set, &m);
		if (e && e != -ENOENT) {
			fprintf(stderr, "rpmem status: %s: %s marker: %s\n",
				set, Markers[i].name, e == -EINVAL ?
				"malformed" : strerror(-e));
			status_worse(worst, SEV_BROKEN);
		} else if (!e) {
			status_worse(worst, Markers[i].severity);
		}
		if (json) {
			printf(", \"%s\": ", Markers[i].name);
			if (e) {
				printf("null");
				continue;
			}
			printf("{\"time\": %lld, \"date\": \"%s\", "
				"\"text\": ", (long long)m.time, m.date);
			json_str(stdout, m.text);
			printf("}");
		} else {
			char label[32];
			snprintf(label, sizeof(label), "%s:", Markers[i].name);
			status_row(label, "%s", e == -ENOENT ? "no" : e ?
				"unreadable" : status_safe(m.text, a,
				sizeof(a)));
		}
	}
	if (json)
		printf("}");
}

