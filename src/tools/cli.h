/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cli.h -- the command line of every rpmem subcommand: one option table
 * each, one parser (options anywhere among the operands, `--` ends them)
 */
#ifndef RPMEM_CLI_H
#define RPMEM_CLI_H 1

#include <stdbool.h>
#include <stdio.h>

#define EXIT_USAGE 2		/* bad command line */
#define CLI_OPTS_MAX 8		/* options of one subcommand */
#define CLI_OPERANDS_MAX 32	/* operands kept; more is an error */

/* one option of a subcommand; --help and --version come on top */
struct cli_opt {
	const char *name;	/* --name */
	char short_name;	/* -c, or 0 */
	const char *arg;	/* its argument as help names it; NULL: none */
	const char *help;	/* one line */
};

/* the option several subcommands share, and the end of every table */
#define CLI_OPT_JSON \
	{ "json", 0, NULL, "print one JSON object instead of text" }
#define CLI_OPT_END { NULL, 0, NULL, NULL }

struct cli_args;

/* what `rpmem NAME --help` says of a command: src/tools/help.txt */
struct cli_text {
	const char *name;
	const char *text;	/* lines, each '\n' ended */
};

/* every command's text, ended by a NULL name (cli_text.c, made) */
extern const struct cli_text Cli_texts[];

/* a subcommand: its name, operands, help and option table */
struct cli_cmd {
	const char *name;
	const char *operands;	/* as the usage line names them */
	unsigned nmin, nmax;	/* operands accepted */
	const char *summary;	/* one line for `rpmem --help` */
	const struct cli_opt *opts;	/* ends with a NULL name */
	int (*run)(const struct cli_args *a);
};

/* a command line as cli_parse found it */
struct cli_args {
	const struct cli_cmd *cmd;
	/* per option of cmd->opts: NULL not given, "" a flag given, else
	 * its argument (the last one when given again) */
	const char *val[CLI_OPTS_MAX];
	const char *operand[CLI_OPERANDS_MAX];
	unsigned noperands;
};

/*
 * cli_parse -- parse argv[1..argc) (argv[0] is the subcommand's name)
 * against cmd's table; true when the command is to run, false when it is
 * done with *status: 0 after --help or --version, EXIT_USAGE after a
 * one-line error and the usage line on stderr
 */
bool cli_parse(const struct cli_cmd *cmd, int argc, char *argv[],
		struct cli_args *a, int *status);

/* cli_flag -- option `name` (of the table) was given */
bool cli_flag(const struct cli_args *a, const char *name);

/* cli_value -- the argument of option `name`, NULL when not given */
const char *cli_value(const struct cli_args *a, const char *name);

/*
 * cli_uint -- option `name` as a number in [lo, hi] into *out (left as
 * it is when the option was not given); 0, or EXIT_USAGE after the error
 */
int cli_uint(const struct cli_args *a, const char *name, unsigned lo,
		unsigned hi, unsigned *out);

/*
 * cli_error -- "rpmem NAME: message" and the usage line on stderr (cmd
 * NULL: the top level); returns EXIT_USAGE
 */
__attribute__((format(printf, 2, 3)))
int cli_error(const struct cli_cmd *cmd, const char *fmt, ...);

/* cli_usage -- the usage line of cmd (NULL: the top level) */
void cli_usage(FILE *f, const struct cli_cmd *cmd);

/* cli_options -- the options of cmd (NULL: the top level's) on stdout */
void cli_options(const struct cli_cmd *cmd);

/* cli_help -- usage line, description and options of cmd on stdout */
void cli_help(const struct cli_cmd *cmd);

/* cli_version -- "rpmem version X.Y.Z" on stdout */
void cli_version(void);

#endif /* RPMEM_CLI_H */
