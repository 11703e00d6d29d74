/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpmem.c -- the rpmem command: manage pools with remote replicas
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools.h"

#define CMD(n) { #n, cmd_##n##_usage, cmd_##n##_help, cmd_##n }

static const struct cmd Cmds[] = {
	CMD(create),
	CMD(info),
	CMD(verify),
	CMD(sync),
	CMD(rm),
	CMD(bench),
};

#define NCMDS (sizeof(Cmds) / sizeof(Cmds[0]))

/* usage -- the top-level help */
static void
usage(FILE *f)
{
	fprintf(f, "usage: rpmem [--help | --version] <command> [args]\n\n"
		"Manage pools whose poolset file has remote REPLICA lines.\n\n"
		"commands:\n");
	for (size_t i = 0; i < NCMDS; i++)
		fprintf(f, "  %-8s %s\n", Cmds[i].name, Cmds[i].help);
	fprintf(f, "\n'rpmem <command> --help' describes a command; "
		"see rpmem(1).\n");
}

int
main(int argc, char *argv[])
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		printf("rpmem version %s\n", SRCVERSION);
		return 0;
	}
	for (size_t i = 0; i < NCMDS; i++) {
		if (strcmp(argv[1], Cmds[i].name) != 0)
			continue;
		for (int a = 2; a < argc; a++) {
			if (strcmp(argv[a], "--help") == 0 ||
					strcmp(argv[a], "-h") == 0) {
				printf("usage: rpmem %s %s\n\n%s\n",
					Cmds[i].name, Cmds[i].usage,
					Cmds[i].help);
				return 0;
			}
		}
		return Cmds[i].run(argc - 1, argv + 1);
	}
	fprintf(stderr, "rpmem: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
