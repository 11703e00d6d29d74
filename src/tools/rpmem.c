/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpmem.c -- the rpmem command: manage pools with remote replicas
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rawfab.h"
#include "rpmem_tool.h"
#include "tools.h"

static const struct cli_cmd *const Cmds[] = {
	&cmd_create, &cmd_info, &cmd_verify, &cmd_sync, &cmd_rm, &cmd_bench,
	&cmd_promote, &cmd_demote, &cmd_discard, &cmd_status, &cmd_outdate,
	&cmd_fence_peer,
};

#define NCMDS (sizeof(Cmds) / sizeof(Cmds[0]))

/* help -- the top-level help */
static void
help(void)
{
	cli_usage(stdout, NULL);
	printf("\nManage pools whose poolset file has remote REPLICA "
		"lines.\n\ncommands:\n");
	for (size_t i = 0; i < NCMDS; i++)
		printf("  %-10s %s\n", Cmds[i]->name, Cmds[i]->summary);
	printf("\n");
	cli_options(NULL);
	printf("\n'rpmem COMMAND --help' describes a command; "
		"see rpmem(1).\n");
}

/* is -- argv element `arg` is option -c or --name */
static bool
is(const char *arg, char c, const char *name)
{
	return (arg[0] == '-' && arg[1] == c && !arg[2]) ||
		(strncmp(arg, "--", 2) == 0 && strcmp(arg + 2, name) == 0);
}

/* main -- the top level's own options, then a subcommand with its own */
int
main(int argc, char *argv[])
{
	/* replicas are looked at and copied to, never an application's */
	rpmem_tool_untracked();
	int i = 1;
	const char *arg = i < argc ? argv[i] : "";
	if (is(arg, 'h', "help")) {
		help();
		return 0;
	}
	if (is(arg, 'V', "version")) {
		cli_version();
		return 0;
	}
	/* internal: rpmem bench times libfabric's start-up with it */
	if (argc == 2 && strcmp(arg, "--probe-fabric") == 0)
		return rawfab_probe() ? 1 : 0;
	if (strcmp(arg, "--") == 0)
		i++;		/* only the command may follow */
	else if (arg[0] == '-' && arg[1])
		return cli_error(NULL, "unknown option '%.*s' (the options of "
			"a command follow its name)", (int)strcspn(arg, "="),
			arg);
	if (i >= argc)
		return cli_error(NULL, "a command is expected");
	for (size_t c = 0; c < NCMDS; c++) {
		if (strcmp(argv[i], Cmds[c]->name) != 0)
			continue;
		struct cli_args a;
		int status;
		if (!cli_parse(Cmds[c], argc - i, argv + i, &a, &status))
			return status;
		return Cmds[c]->run(&a);
	}
	return cli_error(NULL, "unknown command '%s'", argv[i]);
}
