/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conffile.c -- a configuration file checked line by line before
 * iniparser reads it (conffile.h)
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "conffile.h"

/* trim -- strip blanks at both ends, in place */
static char *
trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

/* conffile_trusted -- a file nobody else could have rewritten */
int
conffile_trusted(const char *path, int fd, char *err, size_t errlen)
{
	struct stat st;
	char why[64] = "";
	int ret = -EINVAL;
	if (fstat(fd, &st)) {
		ret = -errno;
		snprintf(why, sizeof(why), "%s", strerror(-ret));
	} else if (!S_ISREG(st.st_mode)) {
		snprintf(why, sizeof(why), "not a regular file");
	} else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, sizeof(why), "writable by group or others");
	} else if (st.st_uid != getuid() && st.st_uid != 0) {
		snprintf(why, sizeof(why), "owned by uid %u, not by you or "
			"root", (unsigned)st.st_uid);
	} else if (st.st_size > CONFFILE_MAX) {
		/* bounds what getline may allocate for one line */
		snprintf(why, sizeof(why), "larger than %d bytes",
			CONFFILE_MAX);
	} else {
		return 0;
	}
	if (err && errlen)
		snprintf(err, errlen, "%s: %s", path, why);
	return ret;
}

/* conffile_value_ok -- iniparser reads the value as it is written */
bool
conffile_value_ok(const char *value)
{
	return !strchr(value, ';') && value[0] != '"' && value[0] != '\'';
}

/*
 * split -- the `n` bytes of `raw` (a line without its newline) into
 * `buf` (CONFFILE_LINE_MAX + 1 bytes) and `out`: blank, [section] or
 * key = value, as iniparser reads them; -EINVAL with *why otherwise
 */
static int
split(const char *raw, size_t n, char *buf,
		struct conffile_line *out, const char **why)
{
	*why = NULL;
	if (memchr(raw, '\0', n))
		*why = "NUL byte";
	else if (n > CONFFILE_LINE_MAX)
		*why = "line longer than 1022 bytes";
	if (*why)
		return -EINVAL;
	memcpy(buf, raw, n);
	buf[n] = '\0';

	char *line = trim(buf);
	size_t len = strlen(line);
	if (len > 0 && line[len - 1] == '\\') {
		*why = "line continuation with '\\' not supported";
		return -EINVAL;
	}
	char *hash = strchr(line, '#');
	if (hash)
		*hash = '\0';
	line = trim(line);
	out->kind = CONFFILE_BLANK;
	out->name = out->value = NULL;
	if (line[0] == '\0')
		return 0;
	len = strlen(line);
	if (line[0] == '[') {
		if (line[len - 1] != ']' || len < 3 ||
				strpbrk(line + 1, "[;") ||
				strchr(line + 1, ']') != line + len - 1) {
			*why = "invalid section line";
			return -EINVAL;
		}
		line[len - 1] = '\0';
		out->kind = CONFFILE_SECTION;
		out->name = trim(line + 1);
		return 0;
	}
	char *eq = strchr(line, '=');
	if (eq == NULL) {
		*why = "invalid line";
		return -EINVAL;
	}
	*eq = '\0';
	char *key = trim(line);
	char *val = trim(eq + 1);
	if (key[0] == '\0' || val[0] == '\0') {
		*why = "invalid line";
		return -EINVAL;
	}
	out->kind = CONFFILE_KEY;
	out->name = key;
	out->value = val;
	return 0;
}

/* conffile_each -- every line of the file that says something, split */
int
conffile_each(FILE *f, const char *path,
		int (*fn)(void *arg, unsigned lno,
		const struct conffile_line *l), void *arg, char *err,
		size_t errlen)
{
	char *line = NULL, buf[CONFFILE_LINE_MAX + 1];
	size_t cap = 0;
	unsigned lno = 0;
	ssize_t n;
	int ret = 0;

	while (ret == 0 && (n = getline(&line, &cap, f)) > 0) {
		size_t len = (size_t)n;
		if (line[len - 1] == '\n')
			len--;
		struct conffile_line l;
		const char *why;
		lno++;
		if (split(line, len, buf, &l, &why)) {
			if (err && errlen)
				snprintf(err, errlen, "%s:%u: %s", path, lno,
					why);
			ret = -EINVAL;
		} else if (l.kind != CONFFILE_BLANK) {
			ret = fn(arg, lno, &l);
		}
	}
	if (ret == 0 && ferror(f)) {
		if (err && errlen)
			snprintf(err, errlen, "%s: read error", path);
		ret = -EIO;
	}
	free(line);
	return ret;
}
