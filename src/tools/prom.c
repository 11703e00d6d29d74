/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prom.c -- writing Prometheus' text exposition format (prom.h)
 *
 * Only what a textfile collector accepts: no timestamps, every sample of
 * a family together after its HELP and TYPE, label values valid UTF-8.
 */
#include <stdint.h>
#include <stdio.h>

#include "prom.h"
#include "utf8.h"

/* prom_label -- escaped for the inside of a label value */
void
prom_label(FILE *o, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		size_t n = *p < 0x80 ? 1 : utf8_len(p);
		if (*p == '\\' || *p == '"')
			fprintf(o, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", o);
		else if (n)
			fwrite(p, 1, n, o);
		else
			fputs("\xef\xbf\xbd", o);	/* U+FFFD */
		p += n ? n : 1;
	}
}

/* prom_sample -- one line of a family, its head first when it is new */
void
prom_sample(struct prom_fam *f, const void *of, const char *const *kv,
		const char *value)
{
	if (!f->started)
		fprintf(f->o, "# HELP %s %s\n# TYPE %s %s\n", f->name, f->help,
			f->name, f->type);
	f->started = true;
	fputs(f->name, f->o);
	bool any = f->labels != NULL;
	if (any || (kv && kv[0]))
		fputc('{', f->o);
	if (f->labels)
		f->labels(f->o, of);
	for (; kv && kv[0]; kv += 2, any = true) {
		fprintf(f->o, "%s%s=\"", any ? "," : "", kv[0]);
		prom_label(f->o, kv[1]);
		fputc('"', f->o);
	}
	fprintf(f->o, "%s %s\n", any ? "}" : "", value);
}

/* col_value -- the field of column c in `of`, as a sample's value */
static void
col_value(const struct prom_col *c, const void *of, char *b, size_t len)
{
	const void *p = (const char *)of + c->off;
	int64_t v = c->kind == PROM_I64 || c->kind == PROM_MS ?
		*(const int64_t *)p : 0;
	uint64_t u = c->kind == PROM_U64 || c->kind == PROM_NONZERO ?
		*(const uint64_t *)p : 0;
	if (c->kind == PROM_BOOL)
		snprintf(b, len, "%d", *(const bool *)p ? 1 : 0);
	else if (c->kind == PROM_NONZERO)
		snprintf(b, len, "%d", u != 0);
	else if (c->kind == PROM_U64)
		snprintf(b, len, "%llu", (unsigned long long)u);
	else if (c->kind == PROM_I64)
		snprintf(b, len, "%lld", (long long)v);
	else
		snprintf(b, len, "%s%lld.%03lld", v < 0 ? "-" : "",
			(long long)(v < 0 ? -(v / 1000) : v / 1000),
			(long long)(v < 0 ? -(v % 1000) : v % 1000));
}

/* prom_cols -- the families of a table of columns over an array */
void
prom_cols(FILE *o, const struct prom_col *t, size_t nt,
		void (*labels)(FILE *o, const void *of), const void *arr,
		size_t n, size_t size)
{
	for (size_t c = 0; c < nt; c++) {
		struct prom_fam f = { o, t[c].name, t[c].type, t[c].help,
			labels, false };
		for (size_t i = 0; i < n; i++) {
			const void *of = (const char *)arr + i * size;
			char b[32];
			if (t[c].shown && !t[c].shown(of))
				continue;
			col_value(&t[c], of, b, sizeof(b));
			prom_sample(&f, of, NULL, b);
		}
	}
}
