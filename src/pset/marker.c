/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * marker.c -- the markers beside a pool set file: SET.promoted, SET.outdated
 *
 * Text, one "key value" per line after a version line naming the kind,
 * so that a person can read it and a later version can add keys:
 *
 *	PMEMPROMOTED 1			PMEMOUTDATED 1
 *	time 1795939200			time 1795939200
 *	master 2b1c...			host primary-a
 *	poolset 9f3e...			master 2b1c...	(optional)
 *	client 198.18.0.1 (optional)	poolset 9f3e...	(optional)
 *	pair 2b1c... (optional)
 *
 * In a promoted marker `master` is the part-0 uuid of what the replica
 * was a replica of, and `pair` that of the other copy once the headers of
 * a pair's promote are written; in an outdated one `master` is that of
 * the master which went on without it, on `host`.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "marker.h"
#include "pool_hdr.h"

/* per kind: the first line, the file suffix, and what it is called */
static const struct {
	const char *magic;
	const char *suffix;
} Kinds[MARKER_KINDS] = {
	[MARKER_PROMOTED] = { "PMEMPROMOTED 1\n", MARKER_PROMOTED_SUFFIX },
	[MARKER_OUTDATED] = { "PMEMOUTDATED 1\n", MARKER_OUTDATED_SUFFIX },
};

/* marker_suffix -- ".promoted" or ".outdated" */
const char *
marker_suffix(enum marker_kind kind)
{
	return kind < MARKER_KINDS ? Kinds[kind].suffix : ".marker";
}

/*
 * marker_uuid_str -- the text form pmempool prints: PMDK stores the
 * first three RFC 4122 fields little-endian (see pool_hdr_uuid_generate)
 */
void
marker_uuid_str(const uint8_t *u, char out[MARKER_UUID_STR])
{
	static const int order[16] = {
		3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15,
	};
	char *p = out;
	for (int i = 0; i < 16; i++) {
		p += sprintf(p, "%02x", u[order[i]]);
		if (i == 3 || i == 5 || i == 7 || i == 9)
			*p++ = '-';
	}
	*p = '\0';
}

/* key_line -- "key value\n" when value is set, "" otherwise */
static int
key_line(char *buf, size_t len, const char *key, const char *value)
{
	if (!value[0]) {
		if (len)
			buf[0] = '\0';
		return 0;
	}
	return snprintf(buf, len, "%s %s\n", key, value);
}

/* the text keys of a marker, in the order they are written */
#define KEY(k) { #k, offsetof(struct marker, k), \
	sizeof(((struct marker *)0)->k) }
static const struct {
	const char *name;
	size_t off;		/* of its field in struct marker */
	size_t size;
} Keys[] = {
	/* the promoted marker's keys stay in the order they always had */
	KEY(host), KEY(master), KEY(poolset), KEY(client), KEY(pair),
};
#define NKEYS (sizeof(Keys) / sizeof(Keys[0]))

/* marker_format -- the marker's text */
int
marker_format(const struct marker *m, char *buf, size_t len)
{
	if (m->kind >= MARKER_KINDS)
		return -EINVAL;
	int n = snprintf(buf, len, "%stime %" PRId64 "\n",
		Kinds[m->kind].magic, m->time);
	for (size_t i = 0; n >= 0 && i < NKEYS; i++) {
		size_t off = (size_t)n < len ? (size_t)n : len;
		int k = key_line(buf + off, len - off, Keys[i].name,
			(const char *)m + Keys[i].off);
		n = k < 0 ? k : n + k;
	}
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	return n;
}

/* marker_value_ok -- printable, no blank, fits */
bool
marker_value_ok(const char *v, size_t n, size_t max)
{
	if (n == 0 || n >= max)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (v[i] <= ' ' || v[i] > '~')
			return false;
	}
	return true;
}

/* parse_time -- the value of "time": seconds, not negative */
static int
parse_time(const char *v, size_t vlen, struct marker *m)
{
	char num[24];
	if (vlen == 0 || vlen >= sizeof(num))
		return -EINVAL;
	memcpy(num, v, vlen);
	num[vlen] = '\0';
	char *end;
	errno = 0;
	long long t = strtoll(num, &end, 10);
	if (errno || *end || t < 0)
		return -EINVAL;
	m->time = t;
	return 0;
}

/* parse_line -- one "key value" line into m; unknown keys are ignored */
static int
parse_line(const char *line, size_t n, struct marker *m, bool *has_time)
{
	const char *sp = memchr(line, ' ', n);
	if (sp == NULL)
		return -EINVAL;
	size_t klen = (size_t)(sp - line);
	const char *v = sp + 1;
	size_t vlen = n - klen - 1;

	if (klen == 4 && memcmp(line, "time", 4) == 0) {
		int ret = parse_time(v, vlen, m);
		*has_time = ret == 0;
		return ret;
	}
	size_t i = 0;
	while (i < NKEYS && (strlen(Keys[i].name) != klen ||
			memcmp(line, Keys[i].name, klen)))
		i++;
	if (i == NKEYS)
		return 0;
	char *dst = (char *)m + Keys[i].off;
	size_t max = Keys[i].size;
	if (!marker_value_ok(v, vlen, max))
		return -EINVAL;
	memcpy(dst, v, vlen);
	dst[vlen] = '\0';
	return 0;
}

/* marker_parse -- read a marker's text */
int
marker_parse(enum marker_kind kind, const char *buf, size_t len,
		struct marker *m)
{
	memset(m, 0, sizeof(*m));
	if (kind >= MARKER_KINDS)
		return -EINVAL;
	m->kind = kind;
	const char *magic = Kinds[kind].magic;
	size_t mlen = strlen(magic);
	if (len < mlen || memcmp(buf, magic, mlen) != 0)
		return -EINVAL;
	bool has_time = false;
	for (size_t pos = mlen; pos < len; ) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		if (nl == NULL)
			return -EINVAL;	/* a torn last line */
		size_t n = (size_t)(nl - (buf + pos));
		int ret = parse_line(buf + pos, n, m, &has_time);
		if (ret)
			return ret;
		pos += n + 1;
	}
	const char *must = kind == MARKER_PROMOTED ? m->master : m->host;
	return has_time && must[0] ? 0 : -EINVAL;
}

/* marker_read_fd -- read and parse an open marker file */
int
marker_read_fd(enum marker_kind kind, int fd, struct marker *m)
{
	char buf[MARKER_MAX];
	size_t len = 0;

	while (len < sizeof(buf)) {
		ssize_t n = read(fd, buf + len, sizeof(buf) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len == sizeof(buf))
		return -EFBIG;
	return marker_parse(kind, buf, len, m);
}

/* marker_name -- BASE.kind, or with `tmp` BASE.kind.tmp */
static char *
marker_name(const char *base, enum marker_kind kind, bool tmp)
{
	const char *suffix = marker_suffix(kind);
	size_t n = strlen(base) + strlen(suffix) + sizeof(".tmp");
	char *path = malloc(n);
	if (path)
		snprintf(path, n, "%s%s%s", base, suffix, tmp ? ".tmp" : "");
	return path;
}

/* marker_read -- the marker of pool set file `set` */
int
marker_read(enum marker_kind kind, const char *set, struct marker *m)
{
	char *path = marker_name(set, kind, false);
	if (path == NULL)
		return -ENOMEM;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	free(path);
	if (fd < 0)
		return -errno;
	int ret = marker_read_fd(kind, fd, m);
	close(fd);
	return ret;
}

/* write_all -- the whole buffer, then fsync */
static int
write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return fsync(fd) ? -errno : 0;
}

/*
 * marker_write_at -- BASE.kind.tmp written and synced, renamed over
 * BASE.kind, the directory synced: a crash leaves the old state or the
 * whole marker, never a part of one
 */
int
marker_write_at(int dirfd, const char *base, const struct marker *m)
{
	char buf[MARKER_MAX];
	int len = marker_format(m, buf, sizeof(buf));
	if (len < 0)
		return len;

	int ret = -ENOMEM;
	char *tmp = marker_name(base, m->kind, true);
	char *name = marker_name(base, m->kind, false);
	if (tmp == NULL || name == NULL)
		goto out;
	int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
		O_NOFOLLOW, 0644);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	ret = write_all(fd, buf, (size_t)len);
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && renameat(dirfd, tmp, dirfd, name))
		ret = -errno;
	if (ret)
		(void) unlinkat(dirfd, tmp, 0);
	else if (fsync(dirfd))
		ret = -errno;
out:
	free(tmp);
	free(name);
	return ret;
}

/* marker_remove_at -- unlink BASE.kind in `dirfd` durably */
int
marker_remove_at(int dirfd, const char *base, enum marker_kind kind)
{
	char *name = marker_name(base, kind, false);
	if (name == NULL)
		return -ENOMEM;
	int ret = unlinkat(dirfd, name, 0) ? -errno :
		fsync(dirfd) ? -errno : 0;
	free(name);
	return ret;
}

/* dir_open -- the directory holding `path`, and the name within it */
static int
dir_open(const char *path, const char **base)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, (size_t)(slash - path) + 1) :
		strdup(".");
	if (dir == NULL)
		return -ENOMEM;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	*base = slash ? slash + 1 : path;
	return fd < 0 ? -errno : fd;
}

/*
 * in_dir -- in the directory of pool set file `set`: write `m`, or with
 * m NULL remove the marker of `kind`
 */
static int
in_dir(const char *set, enum marker_kind kind, const struct marker *m)
{
	const char *base;
	int dirfd = dir_open(set, &base);
	if (dirfd < 0)
		return dirfd;
	int ret = m ? marker_write_at(dirfd, base, m) :
		marker_remove_at(dirfd, base, kind);
	close(dirfd);
	return ret;
}

/* marker_write -- write the marker of `set` crash-safely */
int
marker_write(const char *set, const struct marker *m)
{
	return in_dir(set, m->kind, m);
}

/* marker_remove -- unlink the marker of `set` durably; -ENOENT: none */
int
marker_remove(enum marker_kind kind, const char *set)
{
	return in_dir(set, kind, NULL);
}

/* marker_date -- the time as 2026-01-31T12:00:00Z */
void
marker_date(const struct marker *m, char *buf, size_t len)
{
	time_t t = (time_t)m->time;
	struct tm tm;

	if (gmtime_r(&t, &tm) == NULL ||
			strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, len, "@%" PRId64, m->time);
}

/* marker_describe -- one line for messages */
void
marker_describe(const struct marker *m, char *buf, size_t len)
{
	char date[32];
	marker_date(m, date, sizeof(date));
	if (m->kind == MARKER_OUTDATED) {
		snprintf(buf, len, "outdated since %s: master %s%s%s%s went "
			"on without it", date, m->host,
			m->master[0] ? " (pool uuid " : "", m->master,
			m->master[0] ? ")" : "");
		return;
	}
	snprintf(buf, len, "promoted to a master on %s (it was a replica of "
		"master %s%s%s)", date, m->master,
		m->client[0] ? ", fenced client " : "", m->client);
}

/* marker_uuids_from_part -- the master's and pool set's uuids of part 0 */
void
marker_uuids_from_part(const char *part0, struct marker *m)
{
	int fd = open(part0, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return;
	static __thread struct pool_hdr hdr;
	ssize_t n = pread(fd, &hdr, sizeof(hdr), 0);
	close(fd);
	if (n != (ssize_t)sizeof(hdr) || !pool_hdr_valid(&hdr))
		return;
	/* a replica's previous replica is its master's part 0 */
	marker_uuid_str(hdr.prev_repl_uuid, m->master);
	marker_uuid_str(hdr.poolset_uuid, m->poolset);
}
