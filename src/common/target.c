/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * target.c -- parser of `[user@]host[:port]` replica targets
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "target.h"

#define PORT_MAX 65535U

/*
 * char_allowed -- whether `c` may appear anywhere in a target
 *
 * The target ends up in ssh's argv and in log lines, so anything that is
 * not printable ASCII, and every character a shell or ssh's own config
 * syntax treats specially, is refused outright even though execvp would
 * not interpret it: no legitimate host or login name needs them.
 */
static bool
char_allowed(unsigned char c)
{
	if (c <= 0x20 || c >= 0x7f)
		return false;

	return strchr("'\"`;|&$\\<>()*?", c) == NULL;
}

/*
 * copy_field -- store `len` bytes of `src` into `dst` of capacity `cap`
 * (including the NUL)
 */
static int
copy_field(char *dst, size_t cap, const char *src, size_t len)
{
	if (len == 0 || len >= cap)
		return -EINVAL;
	memcpy(dst, src, len);
	dst[len] = '\0';
	return 0;
}

/*
 * parse_port -- check that the `len` bytes at `s` are a decimal 1..65535
 * and store the canonical spelling (leading zeros dropped) in `t`
 */
static int
parse_port(const char *s, size_t len, struct target *t)
{
	unsigned value = 0;

	if (len == 0)
		return -EINVAL;

	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		value = value * 10U + (unsigned)(s[i] - '0');
		/* checked every digit, so the product can never wrap */
		if (value > PORT_MAX)
			return -EINVAL;
	}

	if (value == 0)
		return -EINVAL;

	snprintf(t->service, sizeof(t->service), "%u", value);
	return 0;
}

/* parse_user -- store the login name, text before the one '@' */
static int
parse_user(const char *s, size_t len, struct target *t)
{
	if (len == 0 || s[0] == '-')
		return -EINVAL;

	/* these would make `user@host` mean something else to ssh */
	for (size_t i = 0; i < len; i++) {
		if (s[i] == ':' || s[i] == '[' || s[i] == ']')
			return -EINVAL;
	}

	return copy_field(t->user, sizeof(t->user), s, len);
}

/* parse_bracketed -- `[node]` optionally followed by `:port` */
static int
parse_bracketed(const char *s, struct target *t)
{
	const char *node = s + 1;
	const char *close = strchr(node, ']');

	if (close == NULL)
		return -EINVAL;

	size_t nlen = (size_t)(close - node);
	if (memchr(node, '[', nlen) != NULL)
		return -EINVAL;

	int ret = copy_field(t->node, sizeof(t->node), node, nlen);
	if (ret)
		return ret;

	const char *rest = close + 1;
	if (*rest == '\0')
		return 0;
	if (*rest != ':')
		return -EINVAL;

	return parse_port(rest + 1, strlen(rest + 1), t);
}

/* parse_plain -- `node`, `node:port`, or a bare IPv6 address */
static int
parse_plain(const char *s, struct target *t)
{
	if (strpbrk(s, "[]") != NULL)
		return -EINVAL;

	const char *colon = strchr(s, ':');
	if (colon == NULL || strchr(colon + 1, ':') != NULL) {
		/* no colon, or two or more: all of it names the host */
		return copy_field(t->node, sizeof(t->node), s, strlen(s));
	}

	int ret = copy_field(t->node, sizeof(t->node), s,
			(size_t)(colon - s));
	if (ret)
		return ret;

	return parse_port(colon + 1, strlen(colon + 1), t);
}

/* split -- fill `t` from `str`; `t` starts zeroed */
static int
split(const char *str, struct target *t)
{
	if (*str == '\0')
		return -EINVAL;

	for (const char *p = str; *p != '\0'; p++) {
		if (!char_allowed((unsigned char)*p))
			return -EINVAL;
	}

	const char *host = str;
	const char *at = strchr(str, '@');
	int ret;

	if (at != NULL) {
		if (strchr(at + 1, '@') != NULL)
			return -EINVAL;
		ret = parse_user(str, (size_t)(at - str), t);
		if (ret)
			return ret;
		host = at + 1;
	}

	if (*host == '[')
		ret = parse_bracketed(host, t);
	else
		ret = parse_plain(host, t);
	if (ret)
		return ret;

	/* ssh would take a node starting with '-' for an option */
	return t->node[0] == '-' ? -EINVAL : 0;
}

/* target_parse -- split `str` into user, node and ssh port */
int
target_parse(const char *str, struct target *t)
{
	if (str == NULL || t == NULL)
		return -EINVAL;

	memset(t, 0, sizeof(*t));

	int ret = split(str, t);
	if (ret) {
		/* never leave a half-parsed target behind */
		memset(t, 0, sizeof(*t));
	}
	return ret;
}
