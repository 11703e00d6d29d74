/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replconf.c -- a replica's replication settings from the environment
 * and the client configuration file (replconf.h, doc/async.md)
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <iniparser.h>

#include "conffile.h"
#include "replconf.h"

#define SECTIONS_MAX 64		/* sections of one file */
#define SECTION_NAME_MAX 64
#define DEFAULT_SECTION "default"
#define CONF_NAME "rpmem/librpmem.conf"
#define CONF_SYSTEM "/etc/" CONF_NAME

static const char *const Mode_names[] = { "sync", "async" };
static const char *const Congestion_names[] = { "block", "pull-ahead" };

/* settings one source gives: only those it names */
struct settings {
	unsigned set;		/* 1 << enum key_id of each value given */
	struct replconf c;
};

enum key_id { K_MODE, K_LAG_BYTES, K_LAG_MS, K_CONGESTION, K_TARGET,
	K_POOLSET, K_MAX };

/* name_index -- the index of `s` in `names`, or -1 */
static int
name_index(const char *const *names, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], s) == 0)
			return i;
	return -1;
}

/*
 * parse_num -- a decimal within [min, max]; with `units`, an optional K, M
 * or G after it (powers of 1024)
 */
static int
parse_num(const char *s, bool units, uint64_t min, uint64_t max,
	uint64_t *out)
{
	if (!isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	unsigned shift = 0;
	if (units && *end && strchr("KMG", *end)) {
		shift = *end == 'K' ? 10 : *end == 'M' ? 20 : 30;
		end++;
	}
	if (errno || *end || v > (max >> shift))
		return -EINVAL;
	v <<= shift;
	if (v < min)
		return -EINVAL;
	*out = v;
	return 0;
}

/* key_set -- one value into `st` (NULL: only check it); -EINVAL */
static int
key_set(struct settings *st, enum key_id k, const char *v)
{
	struct settings tmp;
	struct replconf *c = st ? &st->c : &tmp.c;
	uint64_t n;
	int i;
	switch (k) {
	case K_MODE:
		if ((i = name_index(Mode_names, 2, v)) < 0)
			return -EINVAL;
		c->mode = (enum replconf_mode)i;
		break;
	case K_LAG_BYTES:
		if (parse_num(v, true, REPLCONF_LAG_BYTES_MIN,
				REPLCONF_LAG_BYTES_MAX, &c->lag_bytes))
			return -EINVAL;
		break;
	case K_LAG_MS:
		if (parse_num(v, false, REPLCONF_LAG_MS_MIN,
				REPLCONF_LAG_MS_MAX, &n))
			return -EINVAL;
		c->lag_ms = (unsigned)n;
		break;
	case K_CONGESTION:
		if ((i = name_index(Congestion_names, 2, v)) < 0)
			return -EINVAL;
		c->congestion = (enum replconf_congestion)i;
		break;
	default:	/* target, poolset: any text names a replica */
		return 0;
	}
	if (st)
		st->set |= 1U << k;
	return 0;
}

static const struct key {
	const char *name;
	const char *expect;
	bool replica_only;	/* not in [default] */
} Keys[K_MAX] = {
	[K_MODE] = { "mode", "sync or async", false },
	[K_LAG_BYTES] = { "lag-bytes", "1M to 16G, a number with K, M or G "
		"(powers of 1024) or bytes", false },
	[K_LAG_MS] = { "lag-ms", "10 to 3600000", false },
	[K_CONGESTION] = { "on-congestion", "block or pull-ahead", false },
	[K_TARGET] = { "target", "the target of a REPLICA line", true },
	[K_POOLSET] = { "poolset", "the pool set of a REPLICA line", true },
};

/* key_find -- the id of a key name, or K_MAX */
static enum key_id
key_find(const char *name)
{
	int k = 0;
	while (k < K_MAX && strcmp(Keys[k].name, name) != 0)
		k++;
	return (enum key_id)k;
}

/* the walk over the file's lines */
struct scan {
	const char *path;
	char *err;
	size_t errlen;
	char names[SECTIONS_MAX][SECTION_NAME_MAX];	/* lower case */
	unsigned nsections;
	unsigned keys;		/* of the current section, by key id */
	unsigned line;		/* where the current section began */
};

/* fail -- the message in the caller's buffer; returns -EINVAL */
static int __attribute__((format(printf, 2, 3)))
fail(struct scan *sc, const char *fmt, ...)
{
	if (sc->err && sc->errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(sc->err, sc->errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* section_end -- a replica's section names both its target and pool set */
static int
section_end(struct scan *sc)
{
	unsigned both = 1U << K_TARGET | 1U << K_POOLSET;
	if (sc->nsections == 0 || strcmp(sc->names[sc->nsections - 1],
			DEFAULT_SECTION) == 0 || (sc->keys & both) == both)
		return 0;
	return fail(sc, "%s:%u: section [%s] names no %s", sc->path,
		sc->line, sc->names[sc->nsections - 1],
		sc->keys & 1U << K_TARGET ? "poolset" : "target");
}

/* section_begin -- a new section: a new name, not too many */
static int
section_begin(struct scan *sc, unsigned lno, const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n >= SECTION_NAME_MAX || strpbrk(name, ":%"))
		return fail(sc, "%s:%u: invalid section name '%s' (1 to %d "
			"characters, no ':' or '%%')", sc->path, lno, name,
			SECTION_NAME_MAX - 1);
	if (sc->nsections == SECTIONS_MAX)
		return fail(sc, "%s:%u: more than %d sections", sc->path, lno,
			SECTIONS_MAX);
	char *dst = sc->names[sc->nsections];
	for (size_t i = 0; i <= n; i++)
		dst[i] = (char)tolower((unsigned char)name[i]);
	for (unsigned i = 0; i < sc->nsections; i++)
		if (strcmp(sc->names[i], dst) == 0)
			return fail(sc, "%s:%u: section [%s] again", sc->path,
				lno, dst);
	sc->nsections++;
	sc->keys = 0;
	sc->line = lno;
	return 0;
}

/* line_check -- a split line: a section, or a known key once, valid */
static int
line_check(void *arg, unsigned lno, const struct conffile_line *l)
{
	struct scan *sc = arg;
	if (l->kind == CONFFILE_SECTION) {
		int r = section_end(sc);
		return r ? r : section_begin(sc, lno, l->name);
	}
	if (sc->nsections == 0)
		return fail(sc, "%s:%u: key '%s' outside a section", sc->path,
			lno, l->name);
	enum key_id k = key_find(l->name);
	bool dflt = strcmp(sc->names[sc->nsections - 1], DEFAULT_SECTION) ==
		0;
	if (k == K_MAX || (dflt && Keys[k].replica_only))
		return fail(sc, "%s:%u: unknown key '%s'%s", sc->path, lno,
			l->name, k == K_MAX ? "" : " in [default]");
	if (sc->keys & 1U << k)
		return fail(sc, "%s:%u: key '%s' again", sc->path, lno,
			l->name);
	sc->keys |= 1U << k;
	if (!conffile_value_ok(l->value) || key_set(NULL, k, l->value))
		return fail(sc, "%s:%u: invalid value '%s' for key '%s' "
			"(expected %s)", sc->path, lno, l->value, l->name,
			Keys[k].expect);
	return 0;
}

/* ini_get -- the value of `key` in section `sec`, or NULL */
static const char *
ini_get(dictionary *d, const char *sec, const char *key)
{
	char name[SECTION_NAME_MAX + 32];
	snprintf(name, sizeof(name), "%s:%s", sec, key);
	return iniparser_getstring(d, name, NULL);
}

/* section_read -- every value of section `sec` into `st` */
static void
section_read(dictionary *d, const char *sec, struct settings *st)
{
	for (int k = 0; k < K_MAX; k++) {
		const char *v = ini_get(d, sec, Keys[k].name);
		if (v)
			(void) key_set(st, (enum key_id)k, v);
	}
}

/* names_replica -- section `sec` is the one of target/poolset */
static bool
names_replica(dictionary *d, const char *sec, const char *target,
		const char *poolset)
{
	const char *t = ini_get(d, sec, "target");
	const char *p = ini_get(d, sec, "poolset");
	return t && p && strcmp(t, target) == 0 && strcmp(p, poolset) == 0;
}

/* ini_quiet -- iniparser's error sink: the line walk named the line */
static int
ini_quiet(const char *fmt, ...)
{
	(void) fmt;
	return 0;
}

/*
 * file_read -- the [default] section into `dflt` and the replica's own
 * into `own` (its name into `own_name`); two sections naming one replica
 * are refused
 */
static int
file_read(struct scan *sc, int fd, const char *target, const char *poolset,
		struct settings *dflt, struct settings *own, char *own_name)
{
	char name[64];
	/* the very file that was checked, even if the path was swapped */
	snprintf(name, sizeof(name), "/proc/self/fd/%d", fd);
	iniparser_set_error_callback(ini_quiet);
	dictionary *d = iniparser_load(name);
	if (d == NULL)
		return fail(sc, "%s: cannot be parsed", sc->path);
	int ret = 0, n = iniparser_getnsec(d);
	for (int i = 0; i < n && !ret; i++) {
		const char *sec = iniparser_getsecname(d, i);
		if (strcmp(sec, DEFAULT_SECTION) == 0) {
			section_read(d, sec, dflt);
			continue;
		}
		const char *t = ini_get(d, sec, "target");
		const char *p = ini_get(d, sec, "poolset");
		for (int j = 0; j < i && !ret; j++) {
			const char *o = iniparser_getsecname(d, j);
			if (t && p && names_replica(d, o, t, p))
				ret = fail(sc, "%s: sections [%s] and [%s] "
					"both name %s on %s", sc->path, o, sec,
					p, t);
		}
		if (!ret && names_replica(d, sec, target, poolset)) {
			section_read(d, sec, own);
			snprintf(own_name, SECTION_NAME_MAX, "%s", sec);
		}
	}
	iniparser_freedict(d);
	return ret;
}

/* apply -- what `st` gives over `c`; the mode's source into c->from */
static void
apply(struct replconf *c, const struct settings *st, const char *from)
{
	if (st->set & 1U << K_MODE) {
		c->mode = st->c.mode;
		snprintf(c->from, sizeof(c->from), "%s", from);
	}
	if (st->set & 1U << K_LAG_BYTES)
		c->lag_bytes = st->c.lag_bytes;
	if (st->set & 1U << K_LAG_MS)
		c->lag_ms = st->c.lag_ms;
	if (st->set & 1U << K_CONGESTION)
		c->congestion = st->c.congestion;
}

/* replconf_load -- from a named file and RPMEM_REPLICATION's value */
int
replconf_load(const char *path, bool required, const char *env,
		const char *target, const char *poolset, struct replconf *c,
		char *err, size_t errlen)
{
	struct scan sc = { .path = path, .err = err, .errlen = errlen };
	struct settings dflt = { 0 }, own = { 0 }, envs = { 0 };
	char own_name[SECTION_NAME_MAX] = "";
	if (env && *env && key_set(&envs, K_MODE, env))
		return fail(&sc, "RPMEM_REPLICATION=%s: expected sync or "
			"async", env);
	FILE *f = path ? fopen(path, "re") : NULL;
	if (path && !f && (errno != ENOENT || required)) {
		int e = errno;
		fail(&sc, "%s: %s", path, strerror(e));
		return -e;
	}
	if (f) {
		int fd = fileno(f);
		int r = conffile_trusted(path, fd, err, errlen);
		if (!r)
			r = conffile_each(f, path, line_check, &sc, err,
				errlen);
		if (!r)
			r = section_end(&sc);
		if (!r)
			r = file_read(&sc, fd, target, poolset, &dflt, &own,
				own_name);
		fclose(f);
		if (r)
			return r;
	}
	*c = (struct replconf){
		.mode = REPLCONF_SYNC,
		.lag_bytes = REPLCONF_LAG_BYTES_DEFAULT,
		.lag_ms = REPLCONF_LAG_MS_DEFAULT,
		.congestion = REPLCONF_BLOCK,
		.from = "the built-in default",
	};
	char from[REPLCONF_FROM_MAX];
	snprintf(from, sizeof(from), "%s [default]", path ? path : "");
	apply(c, &dflt, from);
	apply(c, &envs, "RPMEM_REPLICATION");
	snprintf(from, sizeof(from), "%s [%s]", path ? path : "", own_name);
	apply(c, &own, from);
	return 0;
}

/* conf_path -- the file to read: RPMEM_CONF, the user's, the system's */
static const char *
conf_path(char *buf, size_t len, bool *required)
{
	const char *p = getenv("RPMEM_CONF");
	*required = p && *p;
	if (*required)
		return p;
	const char *xdg = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");
	if (xdg && *xdg)
		snprintf(buf, len, "%s/%s", xdg, CONF_NAME);
	else if (home && *home)
		snprintf(buf, len, "%s/.config/%s", home, CONF_NAME);
	else
		buf[0] = '\0';
	return buf[0] && access(buf, F_OK) == 0 ? buf : CONF_SYSTEM;
}

/* replconf_get -- the settings of a replica, from where they are kept */
int
replconf_get(const char *target, const char *poolset, struct replconf *c,
		char *err, size_t errlen)
{
	char buf[4096];
	bool required;
	const char *path = conf_path(buf, sizeof(buf), &required);
	return replconf_load(path, required, getenv("RPMEM_REPLICATION"),
		target, poolset, c, err, errlen);
}

/* replconf_mode_name -- "sync", "async" */
const char *
replconf_mode_name(enum replconf_mode mode)
{
	return (unsigned)mode < 2 ? Mode_names[mode] : "?";
}

/* replconf_congestion_name -- "block", "pull-ahead" */
const char *
replconf_congestion_name(enum replconf_congestion c)
{
	return (unsigned)c < 2 ? Congestion_names[c] : "?";
}
