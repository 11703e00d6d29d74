/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * promoted.c -- the "SET.promoted" marker of a promoted replica
 *
 * Text, one "key value" per line after a version line, so that a person
 * can read it and a later version can add keys:
 *
 *	PMEMPROMOTED 1
 *	time 1795939200
 *	master 2b1c...		(part-0 uuid of what it was a replica of)
 *	poolset 9f3e...
 *	client 198.18.0.1	(the session --force ended; optional)
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "promoted.h"

#define PROMOTED_MAGIC "PMEMPROMOTED 1\n"

/*
 * promoted_uuid_str -- the text form pmempool prints: PMDK stores the
 * first three RFC 4122 fields little-endian (see pool_hdr_uuid_generate)
 */
void
promoted_uuid_str(const uint8_t *u, char out[PROMOTED_UUID_STR])
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

/* promoted_format -- the marker's text */
int
promoted_format(const struct promoted *p, char *buf, size_t len)
{
	int n = snprintf(buf, len, PROMOTED_MAGIC "time %" PRId64 "\n"
		"master %s\npoolset %s\n%s%s%s", p->time, p->master,
		p->poolset, p->client[0] ? "client " : "", p->client,
		p->client[0] ? "\n" : "");
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	return n;
}

/* value_ok -- printable, no blank, fits */
static bool
value_ok(const char *v, size_t n, size_t max)
{
	if (n == 0 || n >= max)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (v[i] <= ' ' || v[i] > '~')
			return false;
	}
	return true;
}

/* parse_line -- one "key value" line into p; unknown keys are ignored */
static int
parse_line(const char *line, size_t n, struct promoted *p, bool *has_time)
{
	const char *sp = memchr(line, ' ', n);
	if (sp == NULL)
		return -EINVAL;
	size_t klen = (size_t)(sp - line);
	const char *v = sp + 1;
	size_t vlen = n - klen - 1;
	char *dst = NULL;
	size_t max = 0;

	if (klen == 4 && memcmp(line, "time", 4) == 0) {
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
		p->time = t;
		*has_time = true;
		return 0;
	}
	if (klen == 6 && memcmp(line, "master", 6) == 0) {
		dst = p->master;
		max = sizeof(p->master);
	} else if (klen == 7 && memcmp(line, "poolset", 7) == 0) {
		dst = p->poolset;
		max = sizeof(p->poolset);
	} else if (klen == 6 && memcmp(line, "client", 6) == 0) {
		dst = p->client;
		max = sizeof(p->client);
	} else {
		return 0;
	}
	if (!value_ok(v, vlen, max))
		return -EINVAL;
	memcpy(dst, v, vlen);
	dst[vlen] = '\0';
	return 0;
}

/* promoted_parse -- read a marker's text */
int
promoted_parse(const char *buf, size_t len, struct promoted *p)
{
	size_t mlen = strlen(PROMOTED_MAGIC);

	memset(p, 0, sizeof(*p));
	if (len < mlen || memcmp(buf, PROMOTED_MAGIC, mlen) != 0)
		return -EINVAL;
	bool has_time = false;
	for (size_t pos = mlen; pos < len; ) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		if (nl == NULL)
			return -EINVAL;	/* a torn last line */
		size_t n = (size_t)(nl - (buf + pos));
		int ret = parse_line(buf + pos, n, p, &has_time);
		if (ret)
			return ret;
		pos += n + 1;
	}
	return has_time && p->master[0] ? 0 : -EINVAL;
}

/* promoted_read_fd -- read and parse an open marker file */
int
promoted_read_fd(int fd, struct promoted *p)
{
	char buf[PROMOTED_MAX];
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
	return promoted_parse(buf, len, p);
}

/* marker_path -- SET.promoted, or with `tmp` SET.promoted.tmp */
static char *
marker_path(const char *set, bool tmp)
{
	size_t n = strlen(set) + sizeof(PROMOTED_SUFFIX ".tmp");
	char *path = malloc(n);
	if (path)
		snprintf(path, n, "%s" PROMOTED_SUFFIX "%s", set,
			tmp ? ".tmp" : "");
	return path;
}

/* promoted_read -- the marker of pool set file `set` */
int
promoted_read(const char *set, struct promoted *p)
{
	char *path = marker_path(set, false);
	if (path == NULL)
		return -ENOMEM;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	free(path);
	if (fd < 0)
		return -errno;
	int ret = promoted_read_fd(fd, p);
	close(fd);
	return ret;
}

/* dir_sync -- make a rename in the directory of `path` durable */
static int
dir_sync(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, (size_t)(slash - path) + 1) :
		strdup(".");
	if (dir == NULL)
		return -ENOMEM;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (fd < 0)
		return -errno;
	int ret = fsync(fd) ? -errno : 0;
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
 * promoted_write -- SET.promoted.tmp written and synced, renamed over
 * SET.promoted, the directory synced: a crash leaves the old state or
 * the whole marker, never a part of one
 */
int
promoted_write(const char *set, const struct promoted *p)
{
	char buf[PROMOTED_MAX];
	int len = promoted_format(p, buf, sizeof(buf));
	if (len < 0)
		return len;

	int ret = -ENOMEM;
	char *tmp = marker_path(set, true);
	char *path = marker_path(set, false);
	if (tmp == NULL || path == NULL)
		goto out;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	ret = write_all(fd, buf, (size_t)len);
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		(void) unlink(tmp);
	else
		ret = dir_sync(path);
out:
	free(tmp);
	free(path);
	return ret;
}

/* promoted_remove -- unlink the marker of `set` durably; -ENOENT: none */
int
promoted_remove(const char *set)
{
	char *path = marker_path(set, false);
	if (path == NULL)
		return -ENOMEM;
	int ret = unlink(path) ? -errno : dir_sync(path);
	free(path);
	return ret;
}

/* promoted_date -- the time as 2026-01-31T12:00:00Z */
void
promoted_date(const struct promoted *p, char *buf, size_t len)
{
	time_t t = (time_t)p->time;
	struct tm tm;

	if (gmtime_r(&t, &tm) == NULL ||
			strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, len, "@%" PRId64, p->time);
}

/* promoted_describe -- one line for messages */
void
promoted_describe(const struct promoted *p, char *buf, size_t len)
{
	char date[32];
	promoted_date(p, date, sizeof(date));
	snprintf(buf, len, "promoted to a master on %s (it was a replica of "
		"master %s%s%s)", date, p->master,
		p->client[0] ? ", fenced client " : "", p->client);
}
