/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gen_file.c -- a copy's generations on disk (gen_file.h)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "file.h"
#include "gen_file.h"

#define HEAD "rpmem-generations 1\n"
#define WORDS_MAX (2 + GEN_HISTORY)	/* key and values of one line */

/* gen_file_path -- PART0.gen */
int
gen_file_path(const char *part0, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s" GEN_FILE_SUFFIX, part0);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* gen_part_of_path -- the identity of part 0 at `path` */
int
gen_part_of_path(const char *path, uint64_t size, struct gen_part *p)
{
	struct stat st;
	if (stat(path, &st))
		return -errno;
	p->dev_major = major(st.st_dev);
	p->dev_minor = minor(st.st_dev);
	p->ino = (uint64_t)st.st_ino;
	p->size = size;
	return 0;
}

/* gen_file_format -- the text of `f` */
int
gen_file_format(const struct gen_file *f, char *buf, size_t len)
{
	const struct gen *g = &f->g;
	size_t n = 0;
	bool over = false;
#define PUTF(...) do { \
	int k_ = snprintf(buf + n, n < len ? len - n : 0, __VA_ARGS__); \
	if (k_ < 0 || (size_t)k_ >= (n < len ? len - n : 0)) \
		over = true; \
	else \
		n += (size_t)k_; \
} while (0)
	PUTF(HEAD);
	PUTF("copy %016" PRIx64 "\n", g->id);
	PUTF("part %u:%u %" PRIu64 " %" PRIu64 "\n", f->part.dev_major,
		f->part.dev_minor, f->part.ino, f->part.size);
	PUTF("current %016" PRIx64 "\n", g->current);
	if (g->history[0]) {
		PUTF("history");
		for (unsigned i = 0; i < GEN_HISTORY && g->history[i]; i++)
			PUTF(" %016" PRIx64, g->history[i]);
		PUTF("\n");
	}
	if (g->target)
		PUTF("target %016" PRIx64 "\n", g->target);
	if (g->master)
		PUTF("master %016" PRIx64 "\n", g->master);
	if (g->discarded)
		PUTF("discarded 1\n");
	for (unsigned i = 0; i < g->npeers && i < GEN_PEERS; i++)
		PUTF("peer %016" PRIx64 " %016" PRIx64 " %d\n", g->peers[i].id,
			g->peers[i].bitmap, g->peers[i].open ? 1 : 0);
	if (f->async_master)
		PUTF("async %016" PRIx64 "\n", f->async_master);
	if (f->refused[0])
		PUTF("refused %016" PRIx64 " %s %" PRId64 "\n",
			f->refused_peer, f->refused, f->refused_time);
	PUTF("updated %" PRId64 "\n", f->updated);
#undef PUTF
	return over ? -ENOSPC : (int)n;
}

/* hex -- a 64-bit value in hex digits; 0 or -EINVAL */
static int
hex(const char *s, uint64_t *out)
{
	if (!*s || strlen(s) > 16)
		return -EINVAL;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 16);
	if (errno || *end || s[0] == '-' || s[0] == '+')
		return -EINVAL;
	*out = v;
	return 0;
}

/* dec -- a decimal, not negative; 0 or -EINVAL */
static int
dec(const char *s, uint64_t *out)
{
	if (*s < '0' || *s > '9')
		return -EINVAL;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

/* part_parse -- "MAJ:MIN INO SIZE" */
static int
part_parse(char **w, unsigned n, struct gen_part *p)
{
	unsigned maj, min;
	char c;
	uint64_t ino, size;
	if (n != 4 || sscanf(w[1], "%u:%u%c", &maj, &min, &c) != 2 ||
			dec(w[2], &ino) || dec(w[3], &size))
		return -EINVAL;
	p->dev_major = maj;
	p->dev_minor = min;
	p->ino = ino;
	p->size = size;
	return 0;
}

/* line -- one line's words into f; 0 or -EINVAL (unknown keys: 0) */
static int
line(char **w, unsigned n, struct gen_file *f, bool *seen)
{
	struct gen *g = &f->g;
	uint64_t v, b, o;
	const char *k = w[0];
	if (!strcmp(k, "copy") || !strcmp(k, "current") ||
			!strcmp(k, "target") || !strcmp(k, "master") ||
			!strcmp(k, "async")) {
		if (n != 2 || hex(w[1], &v))
			return -EINVAL;
		uint64_t *dst = !strcmp(k, "copy") ? &g->id :
			!strcmp(k, "current") ? &g->current :
			!strcmp(k, "target") ? &g->target :
			!strcmp(k, "async") ? &f->async_master : &g->master;
		*dst = v;
		seen[0] |= !strcmp(k, "copy");
		seen[1] |= !strcmp(k, "current");
		return 0;
	}
	if (!strcmp(k, "part")) {
		seen[2] = true;
		return part_parse(w, n, &f->part);
	}
	if (!strcmp(k, "history")) {
		if (n < 2 || n > GEN_HISTORY + 1)
			return -EINVAL;
		for (unsigned i = 1; i < n; i++)
			if (hex(w[i], &g->history[i - 1]) ||
					!g->history[i - 1])
				return -EINVAL;
		return 0;
	}
	if (!strcmp(k, "peer")) {
		if (n != 4 || g->npeers == GEN_PEERS || hex(w[1], &v) ||
				hex(w[2], &b) || dec(w[3], &o) || o > 1)
			return -EINVAL;
		g->peers[g->npeers++] = (struct gen_peer){ v, b, o == 1 };
		return 0;
	}
	if (!strcmp(k, "discarded")) {
		if (n != 2 || dec(w[1], &o) || o > 1)
			return -EINVAL;
		g->discarded = o == 1;
		return 0;
	}
	if (!strcmp(k, "refused")) {
		if (n != 4 || hex(w[1], &v) || strlen(w[2]) >= GEN_VERDICT_MAX ||
				dec(w[3], &o) || o > INT64_MAX)
			return -EINVAL;
		f->refused_peer = v;
		snprintf(f->refused, sizeof(f->refused), "%s", w[2]);
		f->refused_time = (int64_t)o;
		return 0;
	}
	if (!strcmp(k, "updated")) {
		if (n != 2 || dec(w[1], &o) || o > INT64_MAX)
			return -EINVAL;
		f->updated = (int64_t)o;
		return 0;
	}
	return 0;
}

/* gen_file_parse -- read the text */
int
gen_file_parse(const char *buf, size_t len, struct gen_file *f)
{
	memset(f, 0, sizeof(*f));
	size_t hl = sizeof(HEAD) - 1;
	if (len < hl || memcmp(buf, HEAD, hl))
		return -EINVAL;
	char text[GEN_FILE_MAX + 1];
	if (len - hl > GEN_FILE_MAX)
		return -EINVAL;
	memcpy(text, buf + hl, len - hl);
	text[len - hl] = '\0';
	if (memchr(text, '\0', len - hl) ||
			(len > hl && text[len - hl - 1] != '\n'))
		return -EINVAL;	/* a NUL inside, or a torn last line */
	bool seen[3] = { false, false, false };
	char *save = NULL;
	for (char *l = strtok_r(text, "\n", &save); l;
			l = strtok_r(NULL, "\n", &save)) {
		char *w[WORDS_MAX + 1], *ws = NULL;
		unsigned n = 0;
		for (char *t = strtok_r(l, " ", &ws); t && n <= WORDS_MAX;
				t = strtok_r(NULL, " ", &ws))
			w[n++] = t;
		if (n == 0 || n > WORDS_MAX || line(w, n, f, seen)) {
			memset(f, 0, sizeof(*f));
			return -EINVAL;
		}
	}
	if (!seen[0] || !seen[1] || !seen[2] || !f->g.id) {
		memset(f, 0, sizeof(*f));
		return -EINVAL;
	}
	return 0;
}

/* same_part -- does the file speak of this part 0? */
static bool
same_part(const struct gen_part *a, const struct gen_part *b)
{
	return a->dev_major == b->dev_major && a->dev_minor == b->dev_minor &&
		a->ino == b->ino;
}

/* gen_file_read -- the file at `path` for the part 0 `part` */
int
gen_file_read(const char *path, const struct gen_part *part,
		struct gen_file *f, bool *stale)
{
	char *buf;
	size_t len;
	if (stale)
		*stale = false;
	memset(f, 0, sizeof(*f));
	int r = file_slurp(path, GEN_FILE_MAX, &buf, &len);
	if (r == -EFBIG)
		return -EINVAL;
	if (r)
		return r;
	r = gen_file_parse(buf, len, f);
	free(buf);
	if (!r && part && !same_part(part, &f->part)) {
		if (stale)
			*stale = true;
		memset(f, 0, sizeof(*f));
		return -ENOENT;
	}
	return r;
}

/* gen_file_write -- replace the file crash-safely */
int
gen_file_write(const char *path, struct gen_file *f)
{
	char buf[GEN_FILE_MAX];
	f->updated = (int64_t)time(NULL);
	int n = gen_file_format(f, buf, sizeof(buf));
	if (n < 0)
		return n;
	return file_replace(path, buf, (size_t)n);
}
