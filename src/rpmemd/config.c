/* SPDX-License-Identifier: BSD-3-Clause */
/* config.c -- rpmemd settings from defaults, config files and command line */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pwd.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <iniparser.h>

#include "conffile.h"
#include "config.h"
#include "marker.h"

/*
 * Lets tests (and packagers) point at another system-wide file.  It grants
 * nothing: the user can already name any file with -c.
 */
#define CONFIG_SYSTEM_ENV "RPMEMD_SYSTEM_CONFIG"

#define NTHREADS_MAX 1024
#define MAX_LANES_MAX 65536
#define MAX_LANES_DEFAULT 64

enum key_id {
	KEY_LOG_FILE,
	KEY_POOLSET_DIR,
	KEY_PERSIST_APM,
	KEY_PERSIST_GENERAL,
	KEY_USE_SYSLOG,
	KEY_LOG_LEVEL,
	KEY_NTHREADS,
	KEY_MAX_LANES,
	KEY_LANE_SECURITY,
	KEY_ALLOW_PMDK_CLIENTS,
	KEY_AFTER_RESYNC,
	KEY_MAX,
};

enum key_type { KT_STR, KT_BOOL, KT_LEVEL, KT_UINT, KT_SECURITY };

/* one settable value; a file key and its long option share the name */
struct key_desc {
	const char *name;
	enum key_type type;
	size_t off, size;	/* where in struct config, how wide */
	unsigned min, max;
	const char *expect;
};

/*
 * how wide a key's field must be: what key_apply stores there (a string's
 * pointer, or key_parse's member of union key_val for its type); KEY
 * refuses to compile a key whose field is another width
 */
#define KT_STR_SIZE sizeof(char *)
#define KT_BOOL_SIZE sizeof(bool)
#define KT_LEVEL_SIZE sizeof(enum log_level)
#define KT_UINT_SIZE sizeof(unsigned)
#define KT_SECURITY_SIZE sizeof(int)
#define FIELD_SIZE(field) sizeof(((struct config *)0)->field)
#define KEY(name, type, field, min, max, expect) \
	{name, type, offsetof(struct config, field), \
	FIELD_SIZE(field) + 0 * sizeof(struct { \
		_Static_assert(FIELD_SIZE(field) == type##_SIZE, \
			"the field of key " name " is not as wide as its type's value"); \
		char c; }), \
	min, max, expect}

static const struct key_desc Keys[KEY_MAX] = {
	[KEY_LOG_FILE] = KEY("log-file", KT_STR, log_file, 0, 0, "a path"),
	[KEY_POOLSET_DIR] = KEY("poolset-dir", KT_STR, poolset_dir, 0, 0,
		"a path"),
	[KEY_PERSIST_APM] = KEY("persist-apm", KT_BOOL, persist_apm, 0, 0,
		"yes or no"),
	[KEY_PERSIST_GENERAL] = KEY("persist-general", KT_BOOL,
		persist_general, 0, 0, "yes or no"),
	[KEY_USE_SYSLOG] = KEY("use-syslog", KT_BOOL, use_syslog, 0, 0,
		"yes or no"),
	[KEY_LOG_LEVEL] = KEY("log-level", KT_LEVEL, log_level, 0, 0,
		"err, warn, notice, info or debug"),
	[KEY_NTHREADS] = KEY("nthreads", KT_UINT, nthreads, 0, NTHREADS_MAX,
		"0..1024"),
	[KEY_MAX_LANES] = KEY("max-lanes", KT_UINT, max_lanes, 1,
		MAX_LANES_MAX, "1..65536"),
	[KEY_LANE_SECURITY] = KEY("lane-security", KT_SECURITY, lane_security,
		0, 0, "encrypt, authenticate or none"),
	[KEY_ALLOW_PMDK_CLIENTS] = KEY("allow-pmdk-clients", KT_BOOL,
		allow_pmdk_clients, 0, 0, "yes or no"),
	[KEY_AFTER_RESYNC] = KEY("after-resync", KT_STR, after_resync, 0, 0,
		"a command"),
};

/* long options that set a key use OPT_KEY + key_id as their value */
#define OPT_KEY 256
#define OPT_PROTOCOL 255	/* --protocol: set by librpmem, not a key */
#define OPT_OUTDATE 254		/* --outdate DESC: a mode */
#define OPT_MASTER 253		/* --master HOST: with --outdate */
#define MASTER_MAX 64		/* a host name with its NUL (PROTO_HOST_MAX) */

static const struct option Long_opts[] = {
	{"config", required_argument, NULL, 'c'},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{"log-file", required_argument, NULL, OPT_KEY + KEY_LOG_FILE},
	{"poolset-dir", required_argument, NULL, OPT_KEY + KEY_POOLSET_DIR},
	{"persist-apm", no_argument, NULL, OPT_KEY + KEY_PERSIST_APM},
	{"persist-general", no_argument, NULL, OPT_KEY + KEY_PERSIST_GENERAL},
	{"use-syslog", no_argument, NULL, OPT_KEY + KEY_USE_SYSLOG},
	{"log-level", required_argument, NULL, OPT_KEY + KEY_LOG_LEVEL},
	{"remove", required_argument, NULL, 'r'},
	{"force", no_argument, NULL, 'f'},
	{"pool-set", no_argument, NULL, 's'},
	{"nthreads", required_argument, NULL, 't'},
	{"max-lanes", required_argument, NULL, OPT_KEY + KEY_MAX_LANES},
	{"lane-security", required_argument, NULL,
		OPT_KEY + KEY_LANE_SECURITY},
	{"allow-pmdk-clients", no_argument, NULL,
		OPT_KEY + KEY_ALLOW_PMDK_CLIENTS},
	{"after-resync", required_argument, NULL,
		OPT_KEY + KEY_AFTER_RESYNC},
	{"protocol", required_argument, NULL, OPT_PROTOCOL},
	{"outdate", required_argument, NULL, OPT_OUTDATE},
	{"master", required_argument, NULL, OPT_MASTER},
	{NULL, 0, NULL, 0},
};

/*
 * '+' stops at the first non-option instead of permuting the caller's argv;
 * ':' makes a missing argument distinguishable from an unknown option.
 */
#define SHORT_OPTS "+:c:hVr:fst:"

/* the state of one config_load call */
struct load {
	struct config *cfg;
	const char *val[KEY_MAX];	/* command line; NULL: unset */
	const char *config;		/* -c FILE */
	char *home;			/* NULL: unknown */
	char *err;
	size_t errlen;
	const char *path;		/* the file being checked */
};

/* fail -- describe a failure in the caller's buffer and return `ret` */
static int __attribute__((format(printf, 3, 4)))
fail(struct load *ld, int ret, const char *fmt, ...)
{
	if (ld->err == NULL || ld->errlen == 0)
		return ret;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ld->err, ld->errlen, fmt, ap);
	va_end(ap);
	return ret;
}

/* parse_uint -- strict decimal in [min, max]: no sign, blanks or suffix */
static int
parse_uint(const char *s, unsigned min, unsigned max, unsigned *out)
{
	if (!isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *end != '\0' || v < min || v > max)
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

/* the value of a key that is not a string, as its field holds it */
union key_val {
	bool b;			/* KT_BOOL */
	enum log_level lvl;	/* KT_LEVEL */
	unsigned u;		/* KT_UINT */
	int pol;		/* KT_SECURITY: enum lanesec_policy */
};

/* key_parse -- the value `val` gives key `kd`, not a string; or -EINVAL */
static int
key_parse(const struct key_desc *kd, const char *val, union key_val *v)
{
	enum lanesec_policy pol;

	switch (kd->type) {
	case KT_BOOL:
		v->b = strcmp(val, "yes") == 0;
		return v->b || strcmp(val, "no") == 0 ? 0 : -EINVAL;
	case KT_LEVEL:
		return log_level_parse(val, &v->lvl) ? -EINVAL : 0;
	case KT_UINT:
		return parse_uint(val, kd->min, kd->max, &v->u);
	case KT_SECURITY:
		if (lanesec_policy_parse(val, &pol))
			return -EINVAL;
		v->pol = (int)pol;
		return 0;
	case KT_STR:
		break;
	}
	return -EINVAL;
}

/* key_apply -- check `val` for key `kd`; store it when `cfg` is given */
static int
key_apply(struct config *cfg, const struct key_desc *kd, const char *val)
{
	void *field = cfg ? (char *)cfg + kd->off : NULL;

	if (kd->type == KT_STR) {
		if (val[0] == '\0')
			return -EINVAL;
		if (field) {
			char *dup = strdup(val);
			if (dup == NULL)
				return -ENOMEM;
			free(*(char **)field);
			*(char **)field = dup;
		}
		return 0;
	}
	union key_val v;
	if (key_parse(kd, val, &v))
		return -EINVAL;
	if (field)	/* the member key_parse wrote is as wide (KEY) */
		memcpy(field, &v, kd->size);
	return 0;
}

/* key_find -- the key called `name`, or NULL */
static const struct key_desc *
key_find(const char *name)
{
	for (int i = 0; i < KEY_MAX; i++)
		if (strcmp(Keys[i].name, name) == 0)
			return &Keys[i];
	return NULL;
}

/*
 * line_check -- a line of a config file (conffile_each split it) must
 * be `key = value` with a known key and a valid value
 */
static int
line_check(void *arg, unsigned lno, const struct conffile_line *l)
{
	struct load *ld = arg;
	if (l->kind == CONFFILE_SECTION)
		return fail(ld, -EINVAL, "%s:%u: sections are not supported",
			ld->path, lno);
	const struct key_desc *kd = key_find(l->name);
	if (kd == NULL)
		return fail(ld, -EINVAL, "%s:%u: unknown key '%s'", ld->path,
			lno, l->name);
	if (!conffile_value_ok(l->value) || key_apply(NULL, kd, l->value))
		return fail(ld, -EINVAL,
			"%s:%u: invalid value '%s' for key '%s' (expected %s)",
			ld->path, lno, l->value, l->name, kd->expect);
	return 0;
}

/* ini_quiet -- iniparser error sink; our own check already named the line */
static int
ini_quiet(const char *fmt, ...)
{
	(void)fmt;
	return 0;
}

/* ini_apply -- take the checked file's values from iniparser */
static int
ini_apply(struct load *ld, const char *path, int fd)
{
	char name[64];
	int ret = 0;

	/*
	 * Reopen through our descriptor so iniparser reads the very file
	 * that was checked, even if the path was swapped meanwhile.
	 */
	snprintf(name, sizeof(name), "/proc/self/fd/%d", fd);
	iniparser_set_error_callback(ini_quiet);
	dictionary *d = iniparser_load(name);
	if (d == NULL)
		return fail(ld, -EINVAL, "%s: cannot be parsed", path);
	for (int i = 0; i < KEY_MAX && ret == 0; i++) {
		/* iniparser 4.1 files keys outside any section as ":key" */
		snprintf(name, sizeof(name), ":%s", Keys[i].name);
		const char *val = iniparser_getstring(d, name, NULL);
		if (val && (ret = key_apply(ld->cfg, &Keys[i], val)) != 0)
			ret = fail(ld, ret, "%s: key '%s': %s", path,
				Keys[i].name, strerror(-ret));
	}
	iniparser_freedict(d);
	return ret;
}

/* file_load -- check and apply one file; a missing optional one is fine */
static int
file_load(struct load *ld, const char *path, bool required)
{
	FILE *f = fopen(path, "re");
	if (f == NULL) {
		int e = errno;
		return e == ENOENT && !required ? 0 :
			fail(ld, -e, "%s: %s", path, strerror(e));
	}
	int ret = conffile_trusted(path, fileno(f), ld->err, ld->errlen);
	ld->path = path;
	if (ret == 0)
		ret = conffile_each(f, path, line_check, ld, ld->err,
			ld->errlen);
	if (ret == 0)
		ret = ini_apply(ld, path, fileno(f));
	fclose(f);
	return ret;
}

/* opt_name -- the long name of the option whose value is `val` */
static const char *
opt_name(int val)
{
	for (const struct option *o = Long_opts; o->name; o++)
		if (o->val == val)
			return o->name;
	return "?";
}

/* cli_bad_opt -- explain why getopt_long returned '?' */
static int
cli_bad_opt(struct load *ld, char *argv[])
{
	/* known options only come back as '?' when given an argument */
	for (const struct option *o = Long_opts; optopt && o->name; o++)
		if (o->val == optopt)
			return fail(ld, -EINVAL, "option --%s: takes no "
				"argument", o->name);
	if (optopt)
		return fail(ld, -EINVAL, "unknown option '-%c'", optopt);
	const char *arg = argv[optind - 1];
	return fail(ld, -EINVAL, "unknown option '%.*s'",
		(int)strcspn(arg, "="), arg);
}

/* parse_protocol -- "MAJOR.MINOR" of the client, as librpmem passes it */
static int
parse_protocol(const char *s, struct config *cfg)
{
	const char *dot = strchr(s, '.');
	unsigned major, minor;
	char num[16];
	if (!dot || (size_t)(dot - s) >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, (size_t)(dot - s));
	num[dot - s] = '\0';
	if (parse_uint(num, 0, UINT16_MAX, &major) ||
			parse_uint(dot + 1, 0, UINT16_MAX, &minor))
		return -EINVAL;
	cfg->protocol = true;
	cfg->proto_major = (uint16_t)major;
	cfg->proto_minor = (uint16_t)minor;
	return 0;
}

/* set_str -- replace *dst by a copy of `val` */
static int
set_str(struct load *ld, char **dst, const char *val)
{
	free(*dst);
	*dst = strdup(val);
	return *dst ? 0 : fail(ld, -ENOMEM, "out of memory");
}

/* set_desc -- the pool set descriptor option `opt` names, not empty */
static int
set_desc(struct load *ld, const char *opt, char **dst, const char *val)
{
	if (val[0] == '\0')
		return fail(ld, -EINVAL, "option --%s: empty descriptor", opt);
	return set_str(ld, dst, val);
}

/* cli_parse -- read argv: modes into the config, keys and -c into `ld` */
static int
cli_parse(struct load *ld, int argc, char *argv[])
{
	struct config *cfg = ld->cfg;
	int opt, ret;

	/* GNU getopt restarts from scratch when optind is 0 */
	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, SHORT_OPTS, Long_opts,
			NULL)) != -1) {
		int key = -1;
		switch (opt) {
		case 'c':
			ld->config = optarg;
			break;
		case 'h':
			cfg->help = true;
			break;
		case 'V':
			cfg->version = true;
			break;
		case 'r':
			ret = set_desc(ld, "remove", &cfg->remove, optarg);
			if (ret)
				return ret;
			break;
		case OPT_OUTDATE:
			ret = set_desc(ld, "outdate", &cfg->outdate, optarg);
			if (ret)
				return ret;
			break;
		case OPT_MASTER:
			/* the host goes into SET.outdated (marker.h) */
			if (!marker_value_ok(optarg, strlen(optarg),
					MASTER_MAX))
				return fail(ld, -EINVAL, "option --master: "
					"invalid host name '%s' (1 to %d "
					"printable characters, no blank)",
					optarg, MASTER_MAX - 1);
			if (set_str(ld, &cfg->master, optarg))
				return -ENOMEM;
			break;
		case 'f':
			cfg->force = true;
			break;
		case 's':
			cfg->pool_set = true;
			break;
		case 't':
			key = KEY_NTHREADS;
			break;
		case OPT_PROTOCOL:
			if (parse_protocol(optarg, cfg))
				return fail(ld, -EINVAL, "option --protocol: "
					"invalid value '%s' (expected MAJOR.MINOR,"
					" e.g. 0.3)", optarg);
			break;
		case ':':
			return fail(ld, -EINVAL, "option --%s: requires an "
				"argument", opt_name(optopt));
		case '?':
			return cli_bad_opt(ld, argv);
		default:
			key = opt - OPT_KEY;
			break;
		}
		if (key < 0)
			continue;

		const struct key_desc *kd = &Keys[key];
		const char *val = kd->type == KT_BOOL ? "yes" : optarg;
		if (key_apply(NULL, kd, val))
			return fail(ld, -EINVAL, "option --%s: invalid value "
				"'%s' (expected %s)", kd->name, val,
				kd->expect);
		ld->val[key] = val;
	}
	if (optind < argc)
		return fail(ld, -EINVAL, "unexpected argument '%s'",
			argv[optind]);
	if (cfg->outdate && cfg->remove)
		return fail(ld, -EINVAL, "options --remove and --outdate "
			"exclude each other");
	if (cfg->master && !cfg->outdate)
		return fail(ld, -EINVAL, "option --master: only with "
			"--outdate");
	return 0;
}

/* home_dir -- $HOME, else the passwd entry; ld->home stays NULL if neither */
static int
home_dir(struct load *ld)
{
	const char *home = getenv("HOME");
	struct passwd pw, *res = NULL;
	char buf[4096];

	if (home == NULL || home[0] == '\0') {
		if (getpwuid_r(getuid(), &pw, buf, sizeof(buf), &res) ||
				res == NULL)
			return 0;
		home = res->pw_dir;
	}
	ld->home = strdup(home);
	return ld->home ? 0 : fail(ld, -ENOMEM, "out of memory");
}

/* home_var -- does `p` start a "$HOME" that is not a longer name? */
static bool
home_var(const char *p)
{
	return strncmp(p, "$HOME", 5) == 0 && !isalnum((unsigned char)p[5]) &&
		p[5] != '_';
}

/* home_expand -- replace each "$HOME" (not "$HOMEDIR") in poolset-dir */
static int
home_expand(struct load *ld)
{
	char **dir = &ld->cfg->poolset_dir;
	size_t count = 0;

	for (const char *p = *dir; *p; p++)
		count += home_var(p);
	if (count == 0)
		return 0;
	if (ld->home == NULL)
		return fail(ld, -ENOENT, "poolset-dir: home directory unknown");

	size_t hlen = strlen(ld->home);
	char *out = malloc(strlen(*dir) + count * hlen + 1);
	if (out == NULL)
		return fail(ld, -ENOMEM, "out of memory");
	char *o = out;
	for (const char *p = *dir; *p; ) {
		if (home_var(p)) {
			memcpy(o, ld->home, hlen);
			o += hlen;
			p += 5;
		} else {
			*o++ = *p++;
		}
	}
	*o = '\0';
	free(*dir);
	*dir = out;
	return 0;
}

/* files_load -- -c FILE alone, else the system file then the user file */
static int
files_load(struct load *ld)
{
	if (ld->config)
		return file_load(ld, ld->config, true);

	const char *sys = getenv(CONFIG_SYSTEM_ENV);
	int ret = file_load(ld, sys && sys[0] ? sys : CONFIG_SYSTEM_FILE,
		false);
	if (ret || ld->home == NULL)
		return ret;

	char *user;
	if (asprintf(&user, "%s/%s", ld->home, CONFIG_USER_FILE) < 0)
		return fail(ld, -ENOMEM, "out of memory");
	ret = file_load(ld, user, false);
	free(user);
	return ret;
}

/* config_load -- defaults, then files, then the command line */
int
config_load(struct config *cfg, int argc, char *argv[], char *err,
	size_t errlen)
{
	struct load ld = {.cfg = cfg, .err = err, .errlen = errlen};
	int ret;

	/*
	 * PMDK defaults log-file to /var/log/rpmemd.log, which the
	 * unprivileged user ssh starts us as cannot write; we leave it unset,
	 * meaning stderr once syslog is off.
	 */
	*cfg = (struct config){
		.log_file = NULL,
		.poolset_dir = strdup("$HOME"),
		.persist_general = true,
		.use_syslog = true,
		.log_level = LOG_LVL_ERR,
		.max_lanes = MAX_LANES_DEFAULT,
		.lane_security = CONFIG_LANE_SECURITY_DEFAULT,
	};
	fail(&ld, 0, "%s", "");
	if (cfg->poolset_dir == NULL) {
		ret = fail(&ld, -ENOMEM, "out of memory");
		goto err;
	}
	ret = cli_parse(&ld, argc, argv);
	if (ret)
		goto err;
	/* a broken file must not hide --help or --version */
	if (cfg->help || cfg->version)
		return 0;

	ret = home_dir(&ld);
	if (ret)
		goto err;
	/* a file's use-syslog may still turn syslog back on */
	if (ld.val[KEY_LOG_FILE])
		cfg->use_syslog = false;
	ret = files_load(&ld);
	for (int i = 0; i < KEY_MAX && ret == 0; i++)
		if (ld.val[i] && key_apply(cfg, &Keys[i], ld.val[i]))
			ret = fail(&ld, -ENOMEM, "out of memory");
	if (ret == 0)
		ret = home_expand(&ld);
	if (ret == 0 && cfg->poolset_dir[0] != '/')
		ret = fail(&ld, -EINVAL, "poolset-dir must be an absolute "
			"path: %s", cfg->poolset_dir);
	if (ret)
		goto err;
	free(ld.home);
	return 0;
err:
	free(ld.home);
	config_free(cfg);
	return ret;
}

/* config_free -- release the strings; safe on a zeroed or failed config */
void
config_free(struct config *cfg)
{
	free(cfg->log_file);
	free(cfg->poolset_dir);
	free(cfg->after_resync);
	free(cfg->remove);
	free(cfg->outdate);
	free(cfg->master);
	memset(cfg, 0, sizeof(*cfg));
}

/* config_usage -- the --help text */
void
config_usage(const char *progname)
{
	fprintf(stderr,
"Usage: %s [OPTION]...\n"
"Serve remote persistent memory pools; librpmem starts it over ssh.\n"
"\n"
"  -c, --config FILE       read only FILE (default: %s,\n"
"                          then ~/%s)\n"
"  -h, --help              show this help and exit\n"
"  -V, --version           show the version and exit\n"
"      --log-file PATH     log to PATH instead of syslog\n"
"      --poolset-dir DIR   where pool set descriptors live (default: $HOME)\n"
"      --persist-apm       make writes durable by RDMA read (APM)\n"
"      --persist-general   make writes durable by a server-side flush (GPSPM)\n"
"      --use-syslog        log to syslog (the default)\n"
"      --log-level LEVEL   err, warn, notice, info or debug (default: err)\n"
"  -r, --remove DESC       remove the pool described by DESC, then exit\n"
"  -f, --force             with --remove: carry on past errors\n"
"  -s, --pool-set          with --remove: delete the pool set file as well\n"
"      --outdate DESC      mark the replica DESC outdated (its master went\n"
"                          on without it), then exit\n"
"      --master HOST       with --outdate: the master's host name\n"
"  -t, --nthreads N        worker threads, 0..%d (default 0: one per lane)\n"
"      --max-lanes N       lanes allowed per session, 1..%d (default: %d)\n"
"      --lane-security P   the least a session's lanes get: encrypt,\n"
"                          authenticate or none (default: encrypt over\n"
"                          tcp and sockets, none over verbs)\n"
"      --allow-pmdk-clients  serve PMDK 1.12's librpmem (protocol 0.1)\n"
"      --after-resync CMD  run CMD through /bin/sh once a resync into a\n"
"                          replica has ended (its generation durable)\n"
"      --protocol M.N      the client's protocol (librpmem passes it)\n",
		progname ? progname : "rpmemd", CONFIG_SYSTEM_FILE,
		CONFIG_USER_FILE, NTHREADS_MAX, MAX_LANES_MAX,
		MAX_LANES_DEFAULT);
}
