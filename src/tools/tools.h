/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tools.h -- subcommands of the rpmem command
 */
#ifndef RPMEM_TOOLS_H
#define RPMEM_TOOLS_H 1

#define EXIT_USAGE 2		/* bad command line */

struct cmd {
	const char *name;
	const char *usage;
	const char *help;
	int (*run)(int argc, char *argv[]);
};

#define CMD_DECLARE(n) \
	extern const char cmd_##n##_usage[]; \
	extern const char cmd_##n##_help[]; \
	int cmd_##n(int argc, char *argv[])

CMD_DECLARE(create);
CMD_DECLARE(bench);
CMD_DECLARE(info);
CMD_DECLARE(rm);
CMD_DECLARE(verify);
CMD_DECLARE(sync);

#endif /* RPMEM_TOOLS_H */
