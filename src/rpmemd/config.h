/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * config.h -- rpmemd configuration: defaults, config files, command line
 *
 * Precedence: command line > user file ($HOME/.rpmemd.conf) > system file
 * (/etc/rpmemd/rpmemd.conf); `-c FILE` reads only FILE.  Files are read
 * with iniparser after a line-by-line check that names file:line for
 * every refusal (bad line, unknown key, bad value, NUL byte), and are
 * refused when writable by group or others (scenario S4).
 */
#ifndef RPMEMD_CONFIG_H
#define RPMEMD_CONFIG_H 1

#include <stdbool.h>
#include <stdint.h>

#include "lanesec.h"
#include "log.h"

#define CONFIG_SYSTEM_FILE "/etc/rpmemd/rpmemd.conf"
#define CONFIG_USER_FILE ".rpmemd.conf"		/* under $HOME */
#define CONFIG_ERR_MAX 512
/* lane_security when not set: lanesec_policy_default of the provider */
#define CONFIG_LANE_SECURITY_DEFAULT (-1)

struct config {
	char *log_file;		/* NULL: stderr when !use_syslog */
	char *poolset_dir;	/* absolute after config_load */
	bool persist_apm;
	bool persist_general;
	bool use_syslog;
	enum log_level log_level;
	unsigned nthreads;	/* 0: one per lane */
	unsigned max_lanes;	/* cap on lanes per session */
	int lane_security;	/* enum lanesec_policy: the least a session
				 * gets, or CONFIG_LANE_SECURITY_DEFAULT */
	bool allow_pmdk_clients; /* serve protocol 0.1 */
	char *after_resync;	/* the after-resync handler; NULL: none */

	/* modes */
	bool protocol;		/* --protocol given: our client */
	uint16_t proto_major;
	uint16_t proto_minor;
	char *remove;		/* --remove <desc> */
	bool force;		/* --force */
	bool pool_set;		/* --pool-set */
	char *outdate;		/* --outdate <desc> */
	char *master;		/* --master <host>, with --outdate */
	bool help;
	bool version;
};

/*
 * config_load -- fill `cfg` from defaults, files and argv.  Returns 0, or
 * -EINVAL (-errno when a file cannot be opened or read) with `err` naming
 * the reason ("file:line: ..." for files, "option --x: ..." for the
 * command line); on failure `cfg` is left freed and zeroed.  With -h or -V
 * no file is read and poolset_dir stays unexpanded.  The environment
 * variable RPMEMD_SYSTEM_CONFIG, when set, replaces CONFIG_SYSTEM_FILE.
 * Uses getopt_long's global state: not thread-safe.
 */
int config_load(struct config *cfg, int argc, char *argv[], char *err,
		size_t errlen);

void config_free(struct config *cfg);

/* config_usage -- the --help text */
void config_usage(const char *progname);

#endif /* RPMEMD_CONFIG_H */
