/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tools.h -- subcommands of the rpmem command
 */
#ifndef RPMEM_TOOLS_H
#define RPMEM_TOOLS_H 1

#include "cli.h"

extern const struct cli_cmd cmd_create;
extern const struct cli_cmd cmd_info;
extern const struct cli_cmd cmd_verify;
extern const struct cli_cmd cmd_sync;
extern const struct cli_cmd cmd_rm;
extern const struct cli_cmd cmd_bench;
extern const struct cli_cmd cmd_promote;
extern const struct cli_cmd cmd_demote;
extern const struct cli_cmd cmd_discard;
extern const struct cli_cmd cmd_status;
extern const struct cli_cmd cmd_outdate;
extern const struct cli_cmd cmd_fence_peer;

#endif /* RPMEM_TOOLS_H */
