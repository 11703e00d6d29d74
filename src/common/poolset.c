/* SPDX-License-Identifier: BSD-3-Clause */
/* poolset.c -- parser of poolset files, local and remote replicas */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "array.h"
#include "poolset.h"
#include "target.h"

#define POOLSET_HEADER "PMEMPOOLSET"
#define POOLSET_FILE_MAX ((size_t)1 << 20)
#define POOLSET_HDR_SIZE ((size_t)4096)

/* longest token quoted in an error message, so the reason stays readable */
#define TOKEN_QUOTE_MAX 128

struct token {
	const char *s;
	size_t len;
};

struct parser {
	const char *name;
	unsigned line;
	char *err;
	size_t errlen;
	struct poolset *set;
	size_t rep_cap;		/* allocated entries in set->replicas */
	size_t part_cap;	/* allocated parts of the last replica */
};

/* perr -- format "name:line: reason" into the caller's buffer */
static int __attribute__((format(printf, 3, 4)))
perr(struct parser *p, int ret, const char *fmt, ...)
{
	if (p->err == NULL || p->errlen == 0)
		return ret;

	int n = snprintf(p->err, p->errlen, "%s:%u: ", p->name, p->line);
	if (n < 0 || (size_t)n >= p->errlen)
		return ret;

	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return ret;
}

/* qlen -- precision for quoting a token with "%.*s" */
static int
qlen(const struct token *t)
{
	return t->len > TOKEN_QUOTE_MAX ? TOKEN_QUOTE_MAX : (int)t->len;
}

/* tok_is -- whether a token equals the keyword exactly */
static int
tok_is(const struct token *t, const char *kw)
{
	size_t n = strlen(kw);
	return t->len == n && memcmp(t->s, kw, n) == 0;
}

/* next_token -- take the next blank-separated token of [*cur, end) */
static int
next_token(const char **cur, const char *end, struct token *t)
{
	const char *s = *cur;

	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if (s == end) {
		*cur = s;
		return 0;
	}

	const char *e = s;
	while (e < end && *e != ' ' && *e != '\t')
		e++;

	t->s = s;
	t->len = (size_t)(e - s);
	*cur = e;
	return 1;
}

/* tok_is_nocase -- whether a token equals `lower`, ignoring ASCII case */
static int
tok_is_nocase(const char *s, size_t n, const char *lower)
{
	if (n != strlen(lower))
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c != lower[i])
			return 0;
	}
	return 1;
}

/* suffix_shift -- binary shift of a size suffix; -EINVAL if unknown */
static int
suffix_shift(const char *s, size_t n, unsigned *shift)
{
	static const char units[] = "kmgt";

	*shift = 0;
	if (n == 0)
		return 0;

	/* only 'K' and 'k' give 'k' when the ASCII case bit is set */
	const char *u = memchr(units, s[0] | 0x20, sizeof(units) - 1);
	if (u == NULL)
		return -EINVAL;
	*shift = 10 * (unsigned)(u - units + 1);

	/* K, KB and KiB all mean 1024: set files in the wild mix them */
	if (n == 1 || tok_is_nocase(s + 1, n - 1, "b") ||
			tok_is_nocase(s + 1, n - 1, "ib"))
		return 0;
	return -EINVAL;
}

/* parse_size_n -- poolset_parse_size on a string that is not terminated */
static int
parse_size_n(const char *s, size_t n, size_t *size)
{
	size_t ndig = 0;
	while (ndig < n && s[ndig] >= '0' && s[ndig] <= '9')
		ndig++;
	if (ndig == 0)
		return -EINVAL;

	/* the whole token must be valid before the value can be too large */
	unsigned shift;
	if (suffix_shift(s + ndig, n - ndig, &shift))
		return -EINVAL;

	size_t val = 0;
	for (size_t i = 0; i < ndig; i++) {
		size_t d = (size_t)(s[i] - '0');
		if (val > (SIZE_MAX - d) / 10)
			return -ERANGE;
		val = val * 10 + d;
	}

	if (shift && val > (SIZE_MAX >> shift))
		return -ERANGE;

	*size = val << shift;
	return 0;
}

/* poolset_parse_size -- convert "4096", "2M", "1GiB" into bytes */
int
poolset_parse_size(const char *str, size_t *size)
{
	if (str == NULL || size == NULL)
		return -EINVAL;
	return parse_size_n(str, strlen(str), size);
}

/* dup_token -- NUL-terminated heap copy of a token */
static char *
dup_token(const struct token *t)
{
	char *s = malloc(t->len + 1);
	if (s == NULL)
		return NULL;
	memcpy(s, t->s, t->len);
	s[t->len] = '\0';
	return s;
}

/* last_replica -- the replica that part lines are added to */
static struct poolset_replica *
last_replica(struct parser *p)
{
	return &p->set->replicas[p->set->nreplicas - 1];
}

/* add_replica -- append an empty replica declared on the current line */
static int
add_replica(struct parser *p)
{
	struct poolset *set = p->set;

	if (set->nreplicas == p->rep_cap && p->rep_cap > UINT_MAX / 2)
		return perr(p, -EINVAL, "too many replicas");
	if (array_grow(&set->replicas, set->nreplicas, &p->rep_cap,
			sizeof(*set->replicas), 2))
		return perr(p, -ENOMEM, "out of memory");

	struct poolset_replica *rep = &set->replicas[set->nreplicas++];
	memset(rep, 0, sizeof(*rep));
	rep->line = p->line;
	p->part_cap = 0;
	return 0;
}

/* add_part -- append a part to the last replica, taking a copy of path */
static int
add_part(struct parser *p, size_t size, const struct token *path)
{
	struct poolset_replica *rep = last_replica(p);
	if (rep->nparts == p->part_cap && p->part_cap > UINT_MAX / 2)
		return perr(p, -EINVAL, "too many parts");
	if (array_grow(&rep->parts, rep->nparts, &p->part_cap,
			sizeof(*rep->parts), 4))
		return perr(p, -ENOMEM, "out of memory");

	char *s = dup_token(path);
	if (s == NULL)
		return perr(p, -ENOMEM, "out of memory");

	struct poolset_part *part = &rep->parts[rep->nparts++];
	part->path = s;
	part->size = size;
	part->line = p->line;
	return 0;
}

/* close_replica -- refuse a local (not master) replica with no parts */
static int
close_replica(struct parser *p)
{
	struct poolset_replica *rep = last_replica(p);

	if (rep->remote || rep->nparts > 0)
		return 0;

	/* point at the REPLICA line, not where the omission was noticed */
	unsigned here = p->line;
	p->line = rep->line;
	int ret = perr(p, -EINVAL, "local replica has no parts");
	p->line = here;
	return ret;
}

/* parse_option -- OPTION line: one or more of SINGLEHDR, NOHDRS */
static int
parse_option(struct parser *p, const char *cur, const char *end)
{
	struct token t;
	int any = 0;

	while (next_token(&cur, end, &t)) {
		any = 1;
		if (tok_is(&t, "SINGLEHDR"))
			p->set->options |= POOLSET_OPT_SINGLEHDR;
		else if (tok_is(&t, "NOHDRS"))
			p->set->options |= POOLSET_OPT_NOHDRS;
		else
			return perr(p, -EINVAL, "unknown option '%.*s'",
					qlen(&t), t.s);
	}

	if (!any)
		return perr(p, -EINVAL, "OPTION without an option name");

	const unsigned both = POOLSET_OPT_SINGLEHDR | POOLSET_OPT_NOHDRS;
	if ((p->set->options & both) == both)
		return perr(p, -EINVAL, "options SINGLEHDR and NOHDRS "
				"exclude each other");
	return 0;
}

/* check_remote -- validate the target and descriptor of a remote replica */
static int
check_remote(struct parser *p, const struct token *tgt,
		const struct token *desc)
{
	char *s = dup_token(tgt);
	if (s == NULL)
		return perr(p, -ENOMEM, "out of memory");

	struct target t;
	int ret = target_parse(s, &t);
	free(s);
	if (ret == -ENOMEM)
		return perr(p, ret, "out of memory");
	if (ret)
		return perr(p, -EINVAL, "invalid remote target '%.*s'",
				qlen(tgt), tgt->s);

	/* rpmemd resolves it under its poolset-dir, so it must be relative */
	if (desc->s[0] == '/')
		return perr(p, -EINVAL, "remote descriptor '%.*s' must be "
				"a relative path", qlen(desc), desc->s);
	return 0;
}

/* parse_replica -- REPLICA line, local (no tokens) or remote (two) */
static int
parse_replica(struct parser *p, const char *cur, const char *end)
{
	struct token tgt, desc, extra;
	int remote = next_token(&cur, end, &tgt);

	if (remote && !next_token(&cur, end, &desc))
		return perr(p, -EINVAL, "remote replica '%.*s': missing "
				"descriptor", qlen(&tgt), tgt.s);
	if (remote && next_token(&cur, end, &extra))
		return perr(p, -EINVAL, "unexpected token '%.*s' after "
				"remote descriptor", qlen(&extra), extra.s);

	if (p->set->nreplicas == 1 && last_replica(p)->nparts == 0)
		return perr(p, -EINVAL, remote ?
				"master replica must be local: parts must "
				"come before a remote REPLICA" :
				"master replica has no parts");

	int ret = close_replica(p);
	if (ret)
		return ret;

	if (remote) {
		ret = check_remote(p, &tgt, &desc);
		if (ret)
			return ret;
	}

	ret = add_replica(p);
	if (ret || !remote)
		return ret;

	struct poolset_replica *rep = last_replica(p);
	rep->remote = true;
	rep->target = dup_token(&tgt);
	rep->desc = dup_token(&desc);
	if (rep->target == NULL || rep->desc == NULL)
		return perr(p, -ENOMEM, "out of memory");
	return 0;
}

/* parse_part -- "<size> <absolute path>" */
static int
parse_part(struct parser *p, const struct token *sz, const char *cur,
		const char *end)
{
	if (last_replica(p)->remote)
		return perr(p, -EINVAL, "unexpected parts for remote replica");

	if (tok_is_nocase(sz->s, sz->len, "auto"))
		return perr(p, -EINVAL, "AUTO sizes are not supported");

	size_t size;
	int ret = parse_size_n(sz->s, sz->len, &size);
	if (ret == -ERANGE)
		return perr(p, -EINVAL, "size '%.*s' is too large",
				qlen(sz), sz->s);
	if (ret)
		return perr(p, -EINVAL, "invalid size '%.*s'",
				qlen(sz), sz->s);
	if (size == 0)
		return perr(p, -EINVAL, "zero size '%.*s'", qlen(sz), sz->s);

	struct token path, extra;
	if (!next_token(&cur, end, &path))
		return perr(p, -EINVAL, "missing path after size '%.*s'",
				qlen(sz), sz->s);
	if (path.s[0] != '/')
		return perr(p, -EINVAL, "part path '%.*s' is not absolute",
				qlen(&path), path.s);
	if (path.len >= PATH_MAX)
		return perr(p, -EINVAL, "part path longer than %d bytes",
				PATH_MAX - 1);
	if (next_token(&cur, end, &extra))
		return perr(p, -EINVAL, "unexpected token '%.*s' after "
				"part path", qlen(&extra), extra.s);

	return add_part(p, size, &path);
}

/* parse_line -- one line after the header, comment already cut off */
static int
parse_line(struct parser *p, const char *s, const char *end)
{
	for (const char *c = s; c < end; c++) {
		unsigned char u = (unsigned char)*c;
		if ((u < 0x20 && u != '\t') || u == 0x7f)
			return perr(p, -EINVAL, "control character 0x%02x",
					u);
	}

	struct token first;
	if (!next_token(&s, end, &first))
		return 0;

	if (tok_is(&first, "OPTION"))
		return parse_option(p, s, end);
	if (tok_is(&first, "REPLICA"))
		return parse_replica(p, s, end);
	return parse_part(p, &first, s, end);
}

/* parse_lines -- walk the buffer line by line into p->set */
static int
parse_lines(struct parser *p, const char *buf, size_t len)
{
	const char *cur = buf;
	const char *end = buf + len;

	do {
		const char *nl = memchr(cur, '\n', (size_t)(end - cur));
		const char *le = nl ? nl : end;

		if (p->line == UINT_MAX)
			return perr(p, -EINVAL, "too many lines");
		p->line++;

		if (memchr(cur, '\0', (size_t)(le - cur)) != NULL)
			return perr(p, -EINVAL, "NUL byte in line");

		/* CRLF files come from editors on other systems */
		if (le > cur && le[-1] == '\r')
			le--;

		if (p->line == 1) {
			size_t n = (size_t)(le - cur);
			if (n != strlen(POOLSET_HEADER) ||
					memcmp(cur, POOLSET_HEADER, n) != 0)
				return perr(p, -EINVAL, "missing "
						POOLSET_HEADER " header");
		} else {
			const char *hash = memchr(cur, '#', (size_t)(le - cur));
			int ret = parse_line(p, cur, hash ? hash : le);
			if (ret)
				return ret;
		}

		cur = nl ? nl + 1 : end;
	} while (cur < end);

	if (last_replica(p)->nparts == 0 && p->set->nreplicas == 1) {
		p->line = 1;
		return perr(p, -EINVAL, "pool set has no parts");
	}
	return close_replica(p);
}

/* poolset_parse_buf -- parse a whole poolset file held in memory */
int
poolset_parse_buf(const char *name, const char *buf, size_t len,
		struct poolset **set, char *err, size_t errlen)
{
	struct parser p = {
		.name = name ? name : "poolset",
		.line = 0,
		.err = err,
		.errlen = errlen,
	};

	if (err && errlen)
		err[0] = '\0';
	if (set == NULL || (buf == NULL && len > 0))
		return perr(&p, -EINVAL, "invalid arguments");
	if (len == 0)
		buf = "";

	p.set = calloc(1, sizeof(*p.set));
	if (p.set == NULL)
		return perr(&p, -ENOMEM, "out of memory");

	/* the master replica is implicit: it is declared by the header */
	p.line = 1;
	int ret = add_replica(&p);
	if (ret)
		goto err_free;
	p.line = 0;

	ret = parse_lines(&p, buf, len);
	if (ret)
		goto err_free;

	*set = p.set;
	return 0;

err_free:
	poolset_free(p.set);
	return ret;
}

/* read_all -- read at most POOLSET_FILE_MAX bytes; -EFBIG beyond */
static int
read_all(int fd, char **out, size_t *outlen)
{
	/* one byte past the cap tells "too large" from "exactly full" */
	const size_t cap = POOLSET_FILE_MAX + 1;
	char *buf = malloc(cap);
	size_t len = 0;

	if (buf == NULL)
		return -ENOMEM;

	while (len < cap) {
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int ret = -errno;
			free(buf);
			return ret;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}

	if (len > POOLSET_FILE_MAX) {
		free(buf);
		return -EFBIG;
	}
	*out = buf;
	*outlen = len;
	return 0;
}

/* poolset_parse_fd -- read and parse an open pool set file */
int
poolset_parse_fd(int fd, const char *name, struct poolset **set, char *err,
		size_t errlen)
{
	char dummy[1];
	int ret;

	/* snprintf below needs a real buffer even when the caller has none */
	if (err == NULL || errlen == 0) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	err[0] = '\0';

	if (name == NULL || set == NULL) {
		snprintf(err, errlen, "poolset: invalid arguments");
		return -EINVAL;
	}

	struct stat st;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: cannot stat: %s", name,
				strerror(errno));
		return ret;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", name);
		return -EINVAL;
	}

	char *buf = NULL;
	size_t len = 0;
	ret = read_all(fd, &buf, &len);
	if (ret == -EFBIG)
		snprintf(err, errlen, "%s: pool set file larger than 1 MiB",
				name);
	else if (ret)
		snprintf(err, errlen, "%s: cannot read: %s", name,
				strerror(-ret));
	if (ret)
		return ret;

	ret = poolset_parse_buf(name, buf, len, set, err, errlen);
	free(buf);
	return ret;
}

/* poolset_parse_file -- read and parse the file at `path` */
int
poolset_parse_file(const char *path, struct poolset **set, char *err,
		size_t errlen)
{
	if (path == NULL)
		return poolset_parse_fd(-1, NULL, set, err, errlen);

	/* O_NONBLOCK so that a FIFO planted as a set file cannot hang us */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		int ret = -errno;
		if (err && errlen)
			snprintf(err, errlen, "%s: cannot open: %s", path,
					strerror(errno));
		return ret;
	}
	int ret = poolset_parse_fd(fd, path, set, err, errlen);
	close(fd);
	return ret;
}

/* poolset_free -- release a set and everything it owns */
void
poolset_free(struct poolset *set)
{
	if (set == NULL)
		return;

	for (unsigned r = 0; r < set->nreplicas; r++) {
		struct poolset_replica *rep = &set->replicas[r];
		for (unsigned i = 0; i < rep->nparts; i++)
			free(rep->parts[i].path);
		free(rep->parts);
		free(rep->target);
		free(rep->desc);
	}
	free(set->replicas);
	free(set);
}

/* poolset_replica_size -- usable bytes of local replica `rep` */
size_t
poolset_replica_size(const struct poolset *set, unsigned rep)
{
	if (set == NULL || rep >= set->nreplicas)
		return 0;

	const struct poolset_replica *r = &set->replicas[rep];
	if (r->remote)
		return 0;

	/* only the legacy layout spends a header on every later part */
	int hdr_per_part = !(set->options &
			(POOLSET_OPT_SINGLEHDR | POOLSET_OPT_NOHDRS));
	size_t total = 0;

	for (unsigned i = 0; i < r->nparts; i++) {
		size_t s = r->parts[i].size & ~(POOLSET_HDR_SIZE - 1);
		if (hdr_per_part && i > 0)
			s = s > POOLSET_HDR_SIZE ? s - POOLSET_HDR_SIZE : 0;
		/* saturate: callers compare it against a requested size */
		if (s > SIZE_MAX - total)
			return SIZE_MAX;
		total += s;
	}
	return total;
}

/* poolset_has_remote -- true when any replica lives on another node */
bool
poolset_has_remote(const struct poolset *set)
{
	if (set == NULL)
		return false;
	for (unsigned r = 0; r < set->nreplicas; r++)
		if (set->replicas[r].remote)
			return true;
	return false;
}
