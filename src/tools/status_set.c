/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * status_set.c -- rpmem status of pool set files of this host: the
 * markers beside each (promoted, outdated) and the data-generation
 * identifiers of its local copy (doc/generations.md), found and shown
 * as text or JSON; and the text helpers rpmem status shares (status.h)
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

/* mark_read -- the marker of `kind` beside `set`; 0, -ENOENT, -errno */
static int
mark_read(enum marker_kind kind, const char *set, struct status_mark *m)
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

_Static_assert(sizeof(Markers) / sizeof(Markers[0]) == STATUS_MARKS,
	"struct status_set keeps one status_mark per row of Markers");

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
status_row(FILE *o, const char *label, const char *fmt, ...)
{
	va_list ap;
	fprintf(o, "  %-13s ", label);
	va_start(ap, fmt);
	vfprintf(o, fmt, ap);
	va_end(ap);
	fputc('\n', o);
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
gen_text(FILE *o, const struct gen_file *f, time_t now)
{
	const struct gen *g = &f->g;
	char a[GEN_STR], b[GEN_STR], w[128];
	gen_str(g->id, a);
	gen_str(g->current, b);
	status_row(o, "copy:", "%s", a);
	status_row(o, "generation:", "%s", b);
	for (unsigned i = 0; i < GEN_HISTORY && g->history[i]; i++) {
		gen_str(g->history[i], a);
		status_row(o, i ? "" : "before:", "%s", a);
	}
	for (unsigned i = 0; i < g->npeers; i++) {
		gen_str(g->peers[i].id, a);
		gen_str(g->peers[i].bitmap, b);
		if (g->peers[i].bitmap)
			status_row(o, "wrote alone:", "without %s since %s", a,
				b);
		if (g->peers[i].open)
			status_row(o, "session:", "with %s not closed", a);
	}
	if (g->target) {
		gen_str(g->target, a);
		status_row(o, "resync:", "from %s, unfinished: inconsistent",
			a);
	}
	if (g->discarded)
		status_row(o, "discarded:", "yes: the next master overwrites "
			"what differs");
	if (f->async_master) {
		gen_str(f->async_master, a);
		status_row(o, "async:", "written asynchronously by %s: up to "
			"its lag behind it", a);
	}
	if (f->refused[0]) {
		gen_str(f->refused_peer, a);
		status_row(o, "refused:", "%s of %s, %s", f->refused, a,
			status_when(now, f->refused_time, w, sizeof(w)));
	}
}

/* gen_json -- the same as a JSON object, with the last refusal */
static void
gen_json(FILE *o, const struct gen_file *f)
{
	fprintf(o, "{\"identifiers\": ");
	json_gen(o, &f->g);
	if (f->async_master)
		fprintf(o, ", \"async_master\": \"%016" PRIx64 "\"",
			f->async_master);
	else
		fprintf(o, ", \"async_master\": null");
	fprintf(o, ", \"refused\": ");
	if (f->refused[0])
		fprintf(o, "{\"verdict\": \"%s\", \"copy\": \"%016" PRIx64
			"\", \"time\": %lld}", f->refused, f->refused_peer,
			(long long)f->refused_time);
	else
		fprintf(o, "null");
	fprintf(o, "}");
}

/*
 * gens_load -- the generations of the set's local copy; a copy
 * mid-resync, discarded or that refused a session asks for attention,
 * one that cannot be read is broken
 */
static void
gens_load(struct status_set *s, int *worst)
{
	struct poolset *ps = replica_load(s->path);
	int e = ps ? db_gen_read(&ps->replicas[0], &s->gen, NULL) : -EINVAL;
	poolset_free(ps);
	s->gen_err = e;
	if (e)
		memset(&s->gen, 0, sizeof(s->gen));
	if (e && e != -ENOENT) {
		fprintf(stderr, "rpmem status: %s: its generations: %s\n",
			s->path, e == -EINVAL ? "malformed, or the set cannot "
			"be read" : strerror(-e));
		status_worse(worst, SEV_BROKEN);
	} else if (!e && (s->gen.g.target || s->gen.g.discarded ||
			s->gen.refused[0])) {
		status_worse(worst, SEV_ATTENTION);
	}
}

/* status_set_load -- a pool set file, its markers and generations */
void
status_set_load(struct status_set *s, const char *path, int *worst)
{
	struct stat st;
	s->path = path;
	if (stat(path, &st)) {
		snprintf(s->error, sizeof(s->error), "%s", strerror(errno));
		fprintf(stderr, "rpmem status: %s: %s\n", path, s->error);
		status_worse(worst, SEV_BROKEN);
	} else {
		gens_load(s, worst);
	}
	for (size_t i = 0; i < STATUS_MARKS; i++) {
		struct status_mark *m = &s->marks[i];
		m->name = Markers[i].name;
		m->err = s->error[0] ? -ENOENT : mark_read(Markers[i].kind,
			path, m);
		if (m->err && m->err != -ENOENT) {
			fprintf(stderr, "rpmem status: %s: %s marker: %s\n",
				path, m->name, m->err == -EINVAL ?
				"malformed" : strerror(-m->err));
			status_worse(worst, SEV_BROKEN);
		} else if (!m->err) {
			status_worse(worst, Markers[i].severity);
		}
	}
}

/* gens_show -- the generations as text rows or a JSON member */
static void
gens_show(FILE *o, const struct status_set *s, time_t now, bool json)
{
	int e = s->gen_err;
	if (json) {
		fprintf(o, ", \"generations\": ");
		if (e)
			fprintf(o, "null");
		else
			gen_json(o, &s->gen);
	} else if (e) {
		status_row(o, "generation:", "%s", e == -ENOENT ? "none" :
			"unreadable");
	} else {
		gen_text(o, &s->gen, now);
	}
}

/* mark_show -- one marker as a text row or a JSON member */
static void
mark_show(FILE *o, const struct status_mark *m, bool json)
{
	char a[1024];
	if (json && m->err) {
		fprintf(o, ", \"%s\": null", m->name);
	} else if (json) {
		fprintf(o, ", \"%s\": {\"time\": %lld, \"date\": \"%s\", "
			"\"text\": ", m->name, (long long)m->time, m->date);
		json_str(o, m->text);
		fprintf(o, "}");
	} else {
		char label[32];
		snprintf(label, sizeof(label), "%s:", m->name);
		status_row(o, label, "%s", m->err == -ENOENT ? "no" : m->err ?
			"unreadable" : status_safe(m->text, a, sizeof(a)));
	}
}

/* status_set_show -- a pool set file as found, text or JSON */
void
status_set_show(FILE *o, const struct status_set *s, time_t now, bool json,
		bool first)
{
	char a[1024];
	if (json) {
		fprintf(o, "%s{\"set\": ", first ? "" : ", ");
		json_str(o, s->path);
		fprintf(o, ", \"error\": ");
		json_str(o, s->error[0] ? s->error : NULL);
	} else {
		fprintf(o, "%s%s\n", first ? "" : "\n", status_safe(s->path, a,
			sizeof(a)));
		if (s->error[0])
			status_row(o, "error:", "%s", s->error);
	}
	if (!s->error[0]) {
		gens_show(o, s, now, json);
		for (size_t i = 0; i < STATUS_MARKS; i++)
			mark_show(o, &s->marks[i], json);
	}
	if (json)
		fprintf(o, "}");
}
