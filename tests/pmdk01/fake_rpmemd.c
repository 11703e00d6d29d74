/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fake_rpmemd.c -- a stand-in for PMDK 1.12's rpmemd (protocol 0.1)
 *
 * Started by a client as its remote command, through ssh or directly
 * with stdin and stdout on pipes or sockets.  It behaves as PMDK's rpmemd
 * does (facts 3 to 5); this file has its command line, whose unknown
 * options are refused as PMDK's are (glibc's complaint and a usage line
 * on stderr, exit 255, no start-up status), --remove, and the host-order
 * start-up status word.  There is no configuration file but for -c's
 * existence, and the only log is --log-file (PMDK's default, syslog, is
 * not used).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "fake_rpmemd.h"

#define DAEMON "rpmemd"
#define PMDK_VERSION "1.12.1"
#define LINE_MAX_LEN 8192

/* the log: --log-file, filtered by --log-level (default err) */
static struct {
	int fd;
	enum fr_level level;
	pthread_mutex_t lock;
} logger = {-1, FR_ERR, PTHREAD_MUTEX_INITIALIZER};

static const char *const level_names[FR_LEVELS] = {
	"err", "warn", "notice", "info", "debug",
};

struct config {
	const char *config_file;
	const char *log_file;
	char *poolset_dir;
	const char *rm_desc;
	int force;
	int pool_set;
	unsigned long nthreads;
};

/* fr_log -- one line to the log file */
void
fr_log(enum fr_level level, const char *fmt, ...)
{
	char buf[LINE_MAX_LEN];

	if (logger.fd < 0 || level > logger.level)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	size_t len = (size_t)n < sizeof(buf) - 1 ? (size_t)n :
		sizeof(buf) - 2;
	buf[len++] = '\n';
	pthread_mutex_lock(&logger.lock);
	if (write(logger.fd, buf, len) < 0) {
		/* nowhere left to report it */
	}
	pthread_mutex_unlock(&logger.lock);
}

/* fr_die -- an assertion of PMDK's rpmemd fails: abort as it does */
void
fr_die(const char *why)
{
	fr_log(FR_ERR, "assertion fault: %s", why);
	signal(SIGABRT, SIG_DFL);
	abort();
}

/* usage -- PMDK's one-line usage, on stderr */
static void
usage(const char *name)
{
	fprintf(stderr, "usage: %s [--version] [--help] [<args>]\n", name);
}

/* help -- -h: usage, version and the options, all on stderr */
static void
help(const char *name)
{
	usage(name);
	fprintf(stderr, "%s version %s\n\n"
		"A stand-in for PMDK 1.12's rpmemd (protocol 0.1), for tests.\n"
		"\nOptions:\n"
		"  -c, --config <path>       configuration file (must exist)\n"
		"  -r, --remove <desc>       remove the pool, then exit\n"
		"  -f, --force               ignore errors while removing\n"
		"  -s, --pool-set            (accepted; no set files here)\n"
		"  -t, --nthreads <num>      worker threads, 0: one a lane\n"
		"  -h, --help                this text\n"
		"  -V, --version             the version\n"
		"      --log-file <path>     log to this file\n"
		"      --poolset-dir <path>  where pools live (absolute)\n"
		"      --persist-apm         (accepted; files are not pmem)\n"
		"      --persist-general     (accepted)\n"
		"      --use-syslog          (accepted; nothing is logged)\n"
		"      --log-level <level>   err, warn, notice, info, debug\n",
		DAEMON, PMDK_VERSION);
}

/* home_dir -- $HOME, else the password entry */
static const char *
home_dir(void)
{
	const char *home = getenv("HOME");
	if (home != NULL)
		return home;
	struct passwd *pw = getpwuid(getuid());
	return pw != NULL ? pw->pw_dir : "/";
}

/* level_parse -- a --log-level value, FR_LEVELS when unknown */
static enum fr_level
level_parse(const char *s)
{
	for (int l = 0; l < FR_LEVELS; l++) {
		if (strcmp(s, level_names[l]) == 0)
			return (enum fr_level)l;
	}
	return FR_LEVELS;
}

enum {
	OPT_LOG_FILE = 256,
	OPT_POOLSET_DIR,
	OPT_PERSIST_APM,
	OPT_PERSIST_GENERAL,
	OPT_USE_SYSLOG,
	OPT_LOG_LEVEL,
};

/*
 * parse_args -- PMDK's command line (facts 5.1); what PMDK refuses ends
 * the process here with status 255 and nothing on stdout
 */
static void
parse_args(int argc, char *argv[], struct config *cfg)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{"log-file", required_argument, NULL, OPT_LOG_FILE},
		{"poolset-dir", required_argument, NULL, OPT_POOLSET_DIR},
		{"persist-apm", no_argument, NULL, OPT_PERSIST_APM},
		{"persist-general", no_argument, NULL, OPT_PERSIST_GENERAL},
		{"use-syslog", no_argument, NULL, OPT_USE_SYSLOG},
		{"log-level", required_argument, NULL, OPT_LOG_LEVEL},
		{"remove", required_argument, NULL, 'r'},
		{"force", no_argument, NULL, 'f'},
		{"pool-set", no_argument, NULL, 's'},
		{"nthreads", required_argument, NULL, 't'},
		{NULL, 0, NULL, 0},
	};
	int opt;
	char *end;

	while ((opt = getopt_long(argc, argv, "c:hVr:fst:", opts, NULL)) !=
			-1) {
		switch (opt) {
		case 'c':
			cfg->config_file = optarg;
			break;
		case 'r':
			cfg->rm_desc = optarg;
			break;
		case 'f':
			cfg->force = 1;
			break;
		case 's':
			cfg->pool_set = 1;
			break;
		case 't':
			errno = 0;
			cfg->nthreads = strtoul(optarg, &end, 10);
			if (errno || *end != '\0') {
				fprintf(stderr, "invalid number of threads -- "
					"'%s'\n", optarg);
				exit(255);
			}
			break;
		case 'h':
			help(argv[0]);
			exit(0);
		case 'V':
			fprintf(stderr, "%s version %s\n", DAEMON,
				PMDK_VERSION);
			exit(0);
		case OPT_LOG_FILE:
			cfg->log_file = optarg;
			break;
		case OPT_POOLSET_DIR:
			free(cfg->poolset_dir);
			cfg->poolset_dir = strdup(optarg);
			break;
		case OPT_PERSIST_APM:
		case OPT_PERSIST_GENERAL:
		case OPT_USE_SYSLOG:
			break;
		case OPT_LOG_LEVEL:
			logger.level = level_parse(optarg);
			if (logger.level != FR_LEVELS)
				break;
			usage(argv[0]);
			exit(255);
		default:
			/* getopt_long has named the option on stderr */
			usage(argv[0]);
			exit(255);
		}
	}
}

/* fr_send_status -- the 4-byte host-order status word on stdout */
int
fr_send_status(uint32_t status)
{
	return w01_write_full(STDOUT_FILENO, &status, sizeof(status));
}

/*
 * startup -- after the command line: -c, log file, pool directory.
 * Returns 0 or the errno that goes out as the start-up status.
 */
static int
startup(struct config *cfg)
{
	if (cfg->config_file != NULL) {
		FILE *f = fopen(cfg->config_file, "r");
		if (f == NULL) {
			int err = errno;
			fprintf(stderr, "%s: %s\nreading configuration "
				"failed\n", cfg->config_file, strerror(err));
			return err;
		}
		fclose(f);
	}
	if (cfg->log_file != NULL) {
		logger.fd = open(cfg->log_file,
			O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
		if (logger.fd < 0) {
			int err = errno;
			perror(cfg->log_file);
			return err;
		}
	}
	fr_log(FR_INFO, "%s version %s (fake, tests/pmdk01)", DAEMON,
		PMDK_VERSION);
	if (cfg->poolset_dir == NULL || cfg->poolset_dir[0] != '/') {
		fr_log(FR_ERR, "pool set directory '%s' is not absolute",
			cfg->poolset_dir ? cfg->poolset_dir : "(null)");
		return EINVAL;
	}
	return 0;
}

int
main(int argc, char *argv[])
{
	struct config cfg = {.poolset_dir = strdup(home_dir())};
	struct rlimit nocore = {0, 0};

	setrlimit(RLIMIT_CORE, &nocore);	/* fr_die leaves no core */
	parse_args(argc, argv, &cfg);

	int err = startup(&cfg);
	if (err) {
		fr_send_status((uint32_t)err);
		return 1;
	}
	if (cfg.rm_desc != NULL) {
		/* no status word: the exit code is the answer */
		int ret = fr_pool_remove(cfg.poolset_dir, cfg.rm_desc,
			cfg.force);
		fr_log(ret ? FR_ERR : FR_NOTICE, "removing '%s': %s",
			cfg.rm_desc, ret ? strerror(-ret) : "done");
		return -ret;
	}
	if (fr_send_status(0) != 0) {
		fr_log(FR_ERR, "writing the start-up status failed");
		return 255;
	}

	struct fr_obc_cfg ocfg = {
		.poolset_dir = cfg.poolset_dir,
		.nthreads = cfg.nthreads,
	};
	int ret = fr_obc_serve(&ocfg);
	free(cfg.poolset_dir);
	return ret;
}
