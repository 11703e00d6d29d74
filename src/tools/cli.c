/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cli.c -- one option parser for every rpmem subcommand
 *
 * getopt_long in the mode that hands back operands in place ("-" first
 * in the option string), so options may come before, between or after
 * the operands whatever POSIXLY_CORRECT says, and `--` ends them.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define KEY_LONG 256		/* getopt keys of options without a letter */
#define KEY_OPERAND 1		/* what getopt returns for an operand */

/* the options every subcommand has, after its own */
static const struct cli_opt Builtin[] = {
	{ "help", 'h', NULL, "print this help and exit" },
	{ "version", 'V', NULL, "print the version and exit" },
};
#define NBUILTIN (sizeof(Builtin) / sizeof(Builtin[0]))
#define NALL (CLI_OPTS_MAX + NBUILTIN)

/*
 * all_opts -- cmd's options (none at the top level, cmd NULL), then the
 * built-in ones; how many
 */
static size_t
all_opts(const struct cli_cmd *cmd, const struct cli_opt *out[NALL])
{
	size_t n = 0;
	for (const struct cli_opt *o = cmd ? cmd->opts : NULL; o && o->name;
			o++) {
		if (n == CLI_OPTS_MAX) {
			fprintf(stderr, "rpmem: internal error: %s has more "
				"than %d options\n", cmd->name, CLI_OPTS_MAX);
			abort();
		}
		out[n++] = o;
	}
	for (size_t i = 0; i < NBUILTIN; i++)
		out[n++] = &Builtin[i];
	return n;
}

/* key -- what getopt_long returns for option i */
static int
key(const struct cli_opt *o, size_t i)
{
	return o->short_name ? o->short_name : KEY_LONG + (int)i;
}

/* find -- the index of the option getopt_long returned as `k`, or -1 */
static int
find(const struct cli_opt *const *opts, size_t n, int k)
{
	for (size_t i = 0; i < n; i++)
		if (key(opts[i], i) == k)
			return (int)i;
	return -1;
}

/* cli_usage -- "usage: rpmem NAME [options] OPERANDS" */
void
cli_usage(FILE *f, const struct cli_cmd *cmd)
{
	if (!cmd) {
		fprintf(f, "usage: rpmem [--help | --version] COMMAND "
			"[ARG...]\n");
		return;
	}
	fprintf(f, "usage: rpmem %s", cmd->name);
	for (const struct cli_opt *o = cmd->opts; o && o->name; o++) {
		fputs(" [", f);
		if (o->short_name)
			fprintf(f, "-%c | ", o->short_name);
		fprintf(f, "--%s%s%s]", o->name, o->arg ? " " : "",
			o->arg ? o->arg : "");
	}
	fprintf(f, "%s%s\n", cmd->operands[0] ? " " : "", cmd->operands);
}

/* cli_error -- one line naming the problem, then the usage line */
int
cli_error(const struct cli_cmd *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "rpmem%s%s: ", cmd ? " " : "", cmd ? cmd->name : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	cli_usage(stderr, cmd);
	return EXIT_USAGE;
}

/* cli_version -- the version line */
void
cli_version(void)
{
	printf("rpmem version %s\n", SRCVERSION);
}

/* cli_options -- "options:" and one line per option (cmd NULL: top) */
void
cli_options(const struct cli_cmd *cmd)
{
	const struct cli_opt *opts[NALL];
	size_t n = all_opts(cmd, opts);
	printf("options:\n");
	for (size_t i = 0; i < n; i++) {
		const struct cli_opt *o = opts[i];
		char left[64];
		if (o->short_name)
			snprintf(left, sizeof(left), "-%c, --%s%s%s",
				o->short_name, o->name, o->arg ? " " : "",
				o->arg ? o->arg : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", o->name,
				o->arg ? " " : "", o->arg ? o->arg : "");
		printf("  %-21s %s\n", left, o->help);
	}
}

/* cli_text -- what help.txt says of command `name`; NULL: nothing */
static const char *
cli_text(const char *name)
{
	for (const struct cli_text *t = Cli_texts; t->name; t++)
		if (strcmp(t->name, name) == 0)
			return t->text;
	return NULL;
}

/* cli_help -- usage, description, options, each after a blank line */
void
cli_help(const struct cli_cmd *cmd)
{
	const char *text = cli_text(cmd->name);
	cli_usage(stdout, cmd);
	if (text)
		printf("\n%s", text);
	printf("\n");
	cli_options(cmd);
}

/* long_name -- the option an argv element names: "--name" of "--name=x" */
static void
long_name(const char *arg, char *buf, size_t len)
{
	size_t n = strcspn(arg, "=");
	snprintf(buf, len, "%.*s", (int)n, arg);
}

/* bad_option -- the error for getopt_long's '?' or ':' */
static int
bad_option(const struct cli_cmd *cmd, const struct cli_opt *const *opts,
		size_t n, int c, char *argv[])
{
	int i = optopt ? find(opts, n, optopt) : -1;
	if (c == ':' && i >= 0)
		return cli_error(cmd, "option '--%s' needs an argument",
			opts[i]->name);
	if (i >= 0)
		return cli_error(cmd, "option '--%s' takes no argument",
			opts[i]->name);
	if (optopt)
		return cli_error(cmd, "unknown option '-%c'", optopt);
	char name[64];
	long_name(argv[optind - 1], name, sizeof(name));
	return cli_error(cmd, "unknown option '%s'", name);
}

/* operand -- keep one operand; false (and the error) when too many */
static bool
operand(struct cli_args *a, const char *arg, int *status)
{
	const struct cli_cmd *cmd = a->cmd;
	if (a->noperands >= cmd->nmax || a->noperands >= CLI_OPERANDS_MAX) {
		*status = cli_error(cmd, "unexpected operand '%s' (%s takes "
			"%s)", arg, cmd->name, cmd->operands);
		return false;
	}
	a->operand[a->noperands++] = arg;
	return true;
}

/* cli_parse -- options and operands in any order, `--` ends options */
bool
cli_parse(const struct cli_cmd *cmd, int argc, char *argv[],
		struct cli_args *a, int *status)
{
	const struct cli_opt *opts[NALL];
	size_t n = all_opts(cmd, opts);
	struct option lo[NALL + 1];
	char optstr[2 + 2 * NALL + 1] = "-:";
	size_t pos = 2;
	for (size_t i = 0; i < n; i++) {
		lo[i] = (struct option){ opts[i]->name, opts[i]->arg ?
			required_argument : no_argument, NULL,
			key(opts[i], i) };
		if (opts[i]->short_name) {
			optstr[pos++] = opts[i]->short_name;
			if (opts[i]->arg)
				optstr[pos++] = ':';
		}
	}
	optstr[pos] = '\0';
	lo[n] = (struct option){ NULL, 0, NULL, 0 };

	memset(a, 0, sizeof(*a));
	a->cmd = cmd;
	optind = 0;		/* glibc: start afresh */
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, optstr, lo, NULL)) != -1) {
		if (c == KEY_OPERAND) {
			if (!operand(a, optarg, status))
				return false;
			continue;
		}
		int i = c == '?' || c == ':' ? -1 : find(opts, n, c);
		if (i < 0) {
			*status = bad_option(cmd, opts, n, c, argv);
			return false;
		}
		if ((size_t)i >= n - NBUILTIN) {
			if (opts[i]->short_name == 'h')
				cli_help(cmd);
			else
				cli_version();
			*status = 0;
			return false;
		}
		a->val[i] = optarg ? optarg : "";
	}
	for (; optind < argc; optind++)
		if (!operand(a, argv[optind], status))
			return false;
	if (a->noperands < cmd->nmin) {
		*status = cli_error(cmd, "%s expected", cmd->operands);
		return false;
	}
	return true;
}

/* index_of -- the table index of option `name`; aborts on a typo */
static size_t
index_of(const struct cli_args *a, const char *name)
{
	size_t i = 0;
	for (const struct cli_opt *o = a->cmd->opts; o && o->name; o++, i++)
		if (strcmp(o->name, name) == 0)
			return i;
	fprintf(stderr, "rpmem: internal error: no option --%s\n", name);
	abort();
}

/* cli_flag -- given or not */
bool
cli_flag(const struct cli_args *a, const char *name)
{
	return a->val[index_of(a, name)] != NULL;
}

/* cli_value -- the argument, NULL when not given */
const char *
cli_value(const struct cli_args *a, const char *name)
{
	return a->val[index_of(a, name)];
}

/* cli_uint -- a decimal number in [lo, hi]; no sign, no blanks */
int
cli_uint(const struct cli_args *a, const char *name, unsigned lo,
		unsigned hi, unsigned *out)
{
	const char *s = cli_value(a, name);
	if (!s)
		return 0;
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (s[0] < '0' || s[0] > '9' || *end || errno || v < lo || v > hi)
		return cli_error(a->cmd, "--%s wants a number from %u to %u, "
			"not '%s'", name, lo, hi, s);
	*out = (unsigned)v;
	return 0;
}
