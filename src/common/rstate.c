/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rstate.c -- the text of the replica records and handle statuses of
 * rstate.h, and how a file of either is replaced (rstate_path.c: where
 * they live)
 *
 * One table per kind of file names each key, its type and its field, so
 * that writing and reading cannot drift apart.  A file is read whole
 * (bounded) and parsed line by line within the buffer; a value is at
 * most 3 * RSTATE_DESC_MAX bytes once escaped.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "array.h"
#include "file.h"
#include "names.h"
#include "rstate.h"

#define RECORD_HEAD "rpmem-replica-state 1"
#define STATUS_HEAD "rpmem-handle-status 1"
#define LINE_MAX_ (3 * RSTATE_DESC_MAX + 64)
#define RANGE_LINE_MAX 48	/* "range " 20 digits ' ' 20 digits '\n' */
#define RECORD_FILE_MAX (((size_t)1 << 20) + RSTATE_RANGES_MAX * \
	RANGE_LINE_MAX)
#define STATUS_FILE_MAX ((size_t)1 << 16)
#define WBUF_SIZE 65536

static const char *const Names[RSTATE_MAX] = {
	[RSTATE_CONNECTED] = "connected",
	[RSTATE_DEGRADED] = "degraded",
	[RSTATE_RESYNCING] = "resyncing",
	[RSTATE_FROZEN] = "frozen",
	[RSTATE_SPLIT_BRAIN] = "split-brain",
	[RSTATE_BROKEN] = "broken",
	[RSTATE_REFUSED] = "refused",
};

/* rstate_name -- "connected", "degraded", ...; "unknown" past the end */
const char *
rstate_name(enum rstate_state s)
{
	return (unsigned)s < RSTATE_MAX ? Names[s] : "unknown";
}

/* rstate_parse -- the state named `s`; 0 or -EINVAL */
int
rstate_parse(const char *s, enum rstate_state *out)
{
	int i = names_find(Names, 0, RSTATE_MAX, s);
	if (i >= 0)
		*out = (enum rstate_state)i;
	return i < 0 ? i : 0;
}

/* the type of a key's value */
enum ftype { F_STR, F_U64, F_I64, F_BOOL, F_UINT, F_PID, F_STATE };

/* one key of a file and the field it fills */
struct field {
	const char *key;
	enum ftype type;
	size_t off;		/* in the struct */
	size_t size;		/* of a string field */
	bool required;
};

#define FR(k, t, req) { #k, t, offsetof(struct rstate_record, k), \
	sizeof(((struct rstate_record *)0)->k), req }
#define FS(k, t, req) { #k, t, offsetof(struct rstate_status, k), \
	sizeof(((struct rstate_status *)0)->k), req }

/* a record's keys but attr and range, which are written apart */
static const struct field Record_fields[] = {
	FR(target, F_STR, true), FR(pool_set, F_STR, true),
	FR(pool_size, F_U64, true), FR(in_sync, F_BOOL, true),
	FR(since, F_I64, false), FR(reason, F_STR, false),
	FR(ranges_known, F_BOOL, false), FR(replica_id, F_U64, false),
	FR(bitmap_gen, F_U64, false),
};

static const struct field Status_fields[] = {
	FS(pid, F_PID, true), FS(seq, F_UINT, true),
	FS(target, F_STR, true), FS(pool_set, F_STR, true),
	FS(policy, F_STR, false), FS(state, F_STATE, true),
	FS(since, F_I64, false), FS(pool_size, F_U64, false),
	FS(out_of_sync, F_U64, false), FS(resync_done, F_U64, false),
	FS(resync_total, F_U64, false), FS(resync_rate, F_U64, false),
	FS(reconnects, F_U64, false), FS(last_error, F_STR, false),
	FS(updated_ms, F_I64, false), FS(generation, F_STR, false),
	FS(replica_generation, F_STR, false), FS(refusal, F_STR, false),
	FS(mode, F_STR, false), FS(lag_bytes, F_U64, false),
	FS(lag_ms, F_U64, false),
};

#define NFIELDS(t) (sizeof(t) / sizeof((t)[0]))

/* struct parse keeps which keys it saw in 32 bits */
_Static_assert(NFIELDS(Status_fields) <= 32 && NFIELDS(Record_fields) <= 32,
	"too many keys for struct parse's seen");

/* ------------------------------------------------------------ writing */

/* a file being written through a buffer; err keeps the first error */
struct wbuf {
	int fd;
	int err;
	size_t n;
	char buf[WBUF_SIZE];
};

/* wb_flush -- write out what the buffer holds */
static void
wb_flush(struct wbuf *w)
{
	size_t done = 0;
	while (!w->err && done < w->n) {
		ssize_t r = write(w->fd, w->buf + done, w->n - done);
		if (r < 0 && errno != EINTR)
			w->err = -errno;
		else if (r > 0)
			done += (size_t)r;
	}
	w->n = 0;
}

/* wb_put -- append `len` bytes */
static void
wb_put(struct wbuf *w, const char *s, size_t len)
{
	while (len) {
		if (w->n == sizeof(w->buf))
			wb_flush(w);
		size_t k = sizeof(w->buf) - w->n;
		if (k > len)
			k = len;
		memcpy(w->buf + w->n, s, k);
		w->n += k;
		s += k;
		len -= k;
	}
}

/* wb_printf -- append a formatted piece (short: numbers, keys) */
__attribute__((format(printf, 2, 3)))
static void
wb_printf(struct wbuf *w, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		wb_put(w, tmp, (size_t)n < sizeof(tmp) ? (size_t)n :
			sizeof(tmp) - 1);
}

/* must_escape -- byte i of the len-byte value s goes out as %XX */
static bool
must_escape(const unsigned char *s, size_t i, size_t len)
{
	unsigned char c = s[i];
	if (c == '%' || c < 0x20 || c >= 0x7f)
		return true;
	return c == ' ' && (i == 0 || i == len - 1);
}

/* wb_value -- append `s` escaped */
static void
wb_value(struct wbuf *w, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t len = strlen(s), start = 0;
	for (size_t i = 0; i < len; i++) {
		if (!must_escape(u, i, len))
			continue;
		char e[4];
		snprintf(e, sizeof(e), "%%%02X", u[i]);
		wb_put(w, s + start, i - start);
		wb_put(w, e, 3);
		start = i + 1;
	}
	wb_put(w, s + start, len - start);
}

/* wb_fields -- "key value" for each field of table `t` */
static void
wb_fields(struct wbuf *w, const struct field *t, size_t n, const void *base)
{
	for (size_t i = 0; i < n; i++) {
		const char *p = (const char *)base + t[i].off;
		wb_printf(w, "%s ", t[i].key);
		switch (t[i].type) {
		case F_STR:
			wb_value(w, p);
			break;
		case F_U64:
			wb_printf(w, "%llu", (unsigned long long)
				*(const uint64_t *)(const void *)p);
			break;
		case F_I64:
			wb_printf(w, "%lld", (long long)
				*(const int64_t *)(const void *)p);
			break;
		case F_BOOL:
			wb_printf(w, "%d", *(const bool *)p ? 1 : 0);
			break;
		case F_UINT:
			wb_printf(w, "%u", *(const unsigned *)(const void *)p);
			break;
		case F_PID:
			wb_printf(w, "%d", (int)
				*(const pid_t *)(const void *)p);
			break;
		case F_STATE:
			wb_value(w, rstate_name(*(const enum rstate_state *)
				(const void *)p));
			break;
		}
		wb_put(w, "\n", 1);
	}
}

/* strings_fit -- each string field of `t` ends within its array */
static bool
strings_fit(const struct field *t, size_t n, const void *base)
{
	for (size_t i = 0; i < n; i++) {
		const char *p = (const char *)base + t[i].off;
		if (t[i].type == F_STR && !memchr(p, '\0', t[i].size))
			return false;
		if (t[i].type == F_STR && t[i].required && !p[0])
			return false;
	}
	return true;
}

/*
 * replace -- write `path` through a temporary file beside it (mode 0600:
 * records name pools and hosts) renamed over it; with `durable`, fsync
 * the file before and the directory after
 */
static int
replace(const char *path, bool durable,
		void (*fill)(struct wbuf *w, const void *arg), const void *arg)
{
	char tmp[PATH_MAX];
	struct wbuf *w = malloc(sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->err = 0;
	w->n = 0;
	w->fd = file_tmp(path, 0600, tmp);
	int ret = w->fd < 0 ? w->fd : 0;
	if (!ret) {
		fill(w, arg);
		wb_flush(w);
		ret = w->err;
		if (ret)
			file_drop(w->fd, tmp);
		else
			ret = file_commit(w->fd, tmp, path, durable);
	}
	free(w);
	return ret;
}

/* fill_record -- the text of a record */
static void
fill_record(struct wbuf *w, const void *arg)
{
	const struct rstate_record *r = arg;
	wb_put(w, RECORD_HEAD "\n", sizeof(RECORD_HEAD));
	wb_fields(w, Record_fields, NFIELDS(Record_fields), r);
	if (r->has_attr) {
		const unsigned char *a = (const unsigned char *)&r->attr;
		wb_put(w, "attr ", 5);
		for (size_t i = 0; i < sizeof(r->attr); i++)
			wb_printf(w, "%02x", a[i]);
		wb_put(w, "\n", 1);
	}
	for (size_t i = 0; i < r->nranges; i++)
		wb_printf(w, "range %llu %llu\n",
			(unsigned long long)r->ranges[i].off,
			(unsigned long long)r->ranges[i].len);
}

/* fill_status -- the text of a status */
static void
fill_status(struct wbuf *w, const void *arg)
{
	wb_put(w, STATUS_HEAD "\n", sizeof(STATUS_HEAD));
	wb_fields(w, Status_fields, NFIELDS(Status_fields), arg);
}

/* rstate_record_write -- write `r` to `path` crash-safely; 0 or -errno */
int
rstate_record_write(const char *path, const struct rstate_record *r)
{
	if (!strings_fit(Record_fields, NFIELDS(Record_fields), r) ||
			r->nranges > RSTATE_RANGES_MAX ||
			(r->nranges && !r->ranges))
		return -EINVAL;
	return replace(path, true, fill_record, r);
}

/* rstate_status_write -- replace `path` atomically (no fsync); -errno */
int
rstate_status_write(const char *path, const struct rstate_status *s)
{
	if (!strings_fit(Status_fields, NFIELDS(Status_fields), s) ||
			(unsigned)s->state >= RSTATE_MAX || s->pid <= 0)
		return -EINVAL;
	return replace(path, false, fill_status, s);
}

/* ------------------------------------------------------------ reading */

/* slurp -- the whole file, at most `max` bytes; -EINVAL when larger */
static int
slurp(const char *path, size_t max, char **buf, size_t *len)
{
	int ret = file_slurp(path, max, buf, len);
	return ret == -EFBIG ? -EINVAL : ret;
}

/* hexval -- a hex digit's value, or -1 */
static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* unescape -- the len-byte value v into out[size]; 0 or -EINVAL */
static int
unescape(const char *v, size_t len, char *out, size_t size)
{
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)v[i];
		if (c < 0x20 || c >= 0x7f)
			return -EINVAL;	/* the writer escapes those */
		if (c == '%') {
			if (len - i < 3 || hexval(v[i + 1]) < 0 ||
					hexval(v[i + 2]) < 0)
				return -EINVAL;
			c = (unsigned char)(hexval(v[i + 1]) * 16 +
				hexval(v[i + 2]));
			if (c == 0)
				return -EINVAL;
			i += 2;
		} else if (c == ' ' && (i == 0 || i == len - 1)) {
			return -EINVAL;
		}
		if (o + 1 >= size)
			return -EINVAL;
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return 0;
}

/* parse_u64 -- decimal digits only, no overflow; 0 or -EINVAL */
static int
parse_u64(const char *v, size_t len, uint64_t *out)
{
	uint64_t x = 0;
	if (len == 0 || len > 20)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -EINVAL;
		unsigned d = (unsigned)(v[i] - '0');
		if (x > (UINT64_MAX - d) / 10)
			return -EINVAL;
		x = x * 10 + d;
	}
	*out = x;
	return 0;
}

/* parse_i64 -- an optional '-', then parse_u64 within int64_t */
static int
parse_i64(const char *v, size_t len, int64_t *out)
{
	bool neg = len && v[0] == '-';
	uint64_t x;
	if (parse_u64(v + neg, len - neg, &x))
		return -EINVAL;
	if (x > (uint64_t)INT64_MAX + neg)
		return -EINVAL;
	*out = neg ? (x == (uint64_t)INT64_MAX + 1 ? INT64_MIN :
		-(int64_t)x) : (int64_t)x;
	return 0;
}

/* set_field -- field f of base from the len-byte value v */
static int
set_field(const struct field *f, void *base, const char *v, size_t len)
{
	void *p = (char *)base + f->off;
	uint64_t u;
	char name[16];
	switch (f->type) {
	case F_STR:
		return unescape(v, len, p, f->size);
	case F_U64:
		return parse_u64(v, len, p);
	case F_I64:
		return parse_i64(v, len, p);
	case F_BOOL:
		if (len != 1 || (v[0] != '0' && v[0] != '1'))
			return -EINVAL;
		*(bool *)p = v[0] == '1';
		return 0;
	case F_UINT:
	case F_PID:
		if (parse_u64(v, len, &u) || u > (f->type == F_PID ?
				(uint64_t)INT_MAX : (uint64_t)UINT_MAX))
			return -EINVAL;
		if (f->type == F_UINT)
			*(unsigned *)p = (unsigned)u;
		else if (u == 0)
			return -EINVAL;
		else
			*(pid_t *)p = (pid_t)u;
		return 0;
	case F_STATE:
		if (unescape(v, len, name, sizeof(name)))
			return -EINVAL;
		return rstate_parse(name, p);
	}
	return -EINVAL;
}

/* what a parse of one file keeps between lines */
struct parse {
	const struct field *fields;
	size_t nfields;
	void *base;
	uint32_t seen;		/* bit i: fields[i] was read */
	struct rstate_record *rec;	/* NULL: a status */
	size_t cap;		/* of rec->ranges */
	bool has_range;
};

/* add_range -- one "range OFF LEN" line of a record */
static int
add_range(struct parse *ps, const char *v, size_t len)
{
	struct rstate_record *r = ps->rec;
	const char *sp = memchr(v, ' ', len);
	struct rstate_range g;
	if (!sp || parse_u64(v, (size_t)(sp - v), &g.off) ||
			parse_u64(sp + 1, len - (size_t)(sp - v) - 1, &g.len))
		return -EINVAL;
	if (r->nranges == RSTATE_RANGES_MAX)
		return -EINVAL;
	if (array_grow(&r->ranges, r->nranges, &ps->cap, sizeof(*r->ranges),
			64))
		return -ENOMEM;
	r->ranges[r->nranges++] = g;
	ps->has_range = true;
	return 0;
}

/* add_attr -- the hex of struct rpmem_pool_attr, every byte */
static int
add_attr(struct rstate_record *r, const char *v, size_t len)
{
	unsigned char *a = (unsigned char *)&r->attr;
	if (r->has_attr || len != 2 * sizeof(r->attr))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(r->attr); i++) {
		int hi = hexval(v[2 * i]), lo = hexval(v[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -EINVAL;
		a[i] = (unsigned char)(hi * 16 + lo);
	}
	r->has_attr = true;
	return 0;
}

/* parse_line -- one "key value" line (no newline) */
static int
parse_line(struct parse *ps, const char *l, size_t len)
{
	const char *sp = memchr(l, ' ', len);
	if (!sp || sp == l)
		return -EINVAL;
	size_t klen = (size_t)(sp - l), vlen = len - klen - 1;
	const char *v = sp + 1;
	if (ps->rec && klen == 5 && memcmp(l, "range", 5) == 0)
		return add_range(ps, v, vlen);
	if (ps->rec && klen == 4 && memcmp(l, "attr", 4) == 0)
		return add_attr(ps->rec, v, vlen);
	for (size_t i = 0; i < ps->nfields; i++) {
		const struct field *f = &ps->fields[i];
		if (strlen(f->key) != klen || memcmp(f->key, l, klen))
			continue;
		if (ps->seen & (1U << i))
			return -EINVAL;		/* given twice */
		ps->seen |= 1U << i;
		return set_field(f, ps->base, v, vlen);
	}
	return 0;	/* a newer writer's key */
}

/* parse -- the head line, then every line; the required keys present */
static int
parse(struct parse *ps, const char *head, const char *b, size_t n)
{
	size_t hlen = strlen(head);
	if (n <= hlen || memcmp(b, head, hlen) || b[hlen] != '\n')
		return -EINVAL;
	for (size_t pos = hlen + 1; pos < n; ) {
		const char *nl = memchr(b + pos, '\n', n - pos);
		if (!nl || (size_t)(nl - (b + pos)) > LINE_MAX_)
			return -EINVAL;		/* torn or too long */
		int e = parse_line(ps, b + pos, (size_t)(nl - (b + pos)));
		if (e)
			return e;
		pos = (size_t)(nl - b) + 1;
	}
	for (size_t i = 0; i < ps->nfields; i++)
		if (ps->fields[i].required && !(ps->seen & (1U << i)))
			return -EINVAL;
	return 0;
}

/* parse_file -- parse() over the file at `path`, at most `max` bytes */
static int
parse_file(struct parse *ps, const char *head, const char *path, size_t max)
{
	char *b;
	size_t n;
	int ret = slurp(path, max, &b, &n);
	if (ret)
		return ret;
	ret = parse(ps, head, b, n);
	free(b);
	return ret;
}

/* ranges_valid -- in offset order, apart, non-empty, within the pool */
static bool
ranges_valid(const struct rstate_record *r)
{
	uint64_t end = 0;
	if (r->nranges && (r->in_sync || !r->ranges_known))
		return false;
	for (size_t i = 0; i < r->nranges; i++) {
		const struct rstate_range *g = &r->ranges[i];
		if (g->len == 0 || g->off < end || g->len > r->pool_size ||
				g->off > r->pool_size - g->len)
			return false;
		end = g->off + g->len;
	}
	return true;
}

/* rstate_record_read -- read `path` into `r` (ranges allocated) */
int
rstate_record_read(const char *path, struct rstate_record *r)
{
	memset(r, 0, sizeof(*r));
	struct parse ps = { Record_fields, NFIELDS(Record_fields), r, 0, r,
		0, false };
	int ret = parse_file(&ps, RECORD_HEAD, path, RECORD_FILE_MAX);
	if (!ret && !ranges_valid(r))
		ret = -EINVAL;
	if (ret)
		rstate_record_free(r);
	return ret;
}

/* rstate_record_free -- free what rstate_record_read allocated */
void
rstate_record_free(struct rstate_record *r)
{
	free(r->ranges);
	r->ranges = NULL;
	r->nranges = 0;
}

/* rstate_status_read -- 0, -ENOENT, -EINVAL when malformed, -errno */
int
rstate_status_read(const char *path, struct rstate_status *s)
{
	memset(s, 0, sizeof(*s));
	struct parse ps = { Status_fields, NFIELDS(Status_fields), s, 0,
		NULL, 0, false };
	int ret = parse_file(&ps, STATUS_HEAD, path, STATUS_FILE_MAX);
	if (ret)
		memset(s, 0, sizeof(*s));
	return ret;
}
