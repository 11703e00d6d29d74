/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prom.h -- writing Prometheus' text exposition format (0.0.4): metric
 * families of samples, label values escaped, HELP and TYPE before a
 * family's first sample (prom.c); what rpmem exports is status_prom.c's
 */
#ifndef RPMEM_TOOLS_PROM_H
#define RPMEM_TOOLS_PROM_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* one metric family being written */
struct prom_fam {
	FILE *o;
	const char *name;
	const char *type;	/* gauge, counter */
	const char *help;	/* no backslash, no newline */
	/* the labels naming `of`, or NULL */
	void (*labels)(FILE *o, const void *of);
	bool started;		/* HELP and TYPE written */
};

/* a family of one number per object, read from a field of it */
struct prom_col {
	const char *name, *type, *help;
	size_t off;		/* of the field in the object */
	enum {
		PROM_U64,	/* uint64_t */
		PROM_I64,	/* int64_t */
		PROM_MS,	/* int64_t milliseconds, written as seconds */
		PROM_BOOL,	/* bool: 0 or 1 */
		PROM_NONZERO,	/* uint64_t: 1 when not 0 */
	} kind;
	bool (*shown)(const void *of);	/* a sample for `of`? NULL: yes */
};

#define PROM_ROWS(t) (sizeof(t) / sizeof((t)[0]))

/*
 * prom_label -- `s` escaped for the inside of a label value: backslash,
 * double quote and newline as \\, \" and \n, bytes that are not UTF-8
 * as U+FFFD (as json_str does)
 */
void prom_label(FILE *o, const char *s);

/*
 * prom_sample -- one line of family f for `of`: f's labels, then the
 * pairs of kv (label name, value; NULL ends them, kv NULL: none), then
 * the value; HELP and TYPE first when it is the family's first
 */
void prom_sample(struct prom_fam *f, const void *of, const char *const *kv,
		const char *value);

/*
 * prom_cols -- each family of the table t (nt rows) over the n objects
 * of `size` bytes at arr, named by `labels`
 */
void prom_cols(FILE *o, const struct prom_col *t, size_t nt,
		void (*labels)(FILE *o, const void *of), const void *arr,
		size_t n, size_t size);

#endif /* RPMEM_TOOLS_PROM_H */
