/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * main.c -- rpmemd: start-up, remove and outdate modes, then one session
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "fab.h"
#include "db.h"
#include "lanesec.h"
#include "log.h"
#include "obc.h"
#include "proto.h"
#include "session.h"

/*
 * Inherited -- the descriptors above stderr that were open when the
 * process began, before any initialiser of a library ran (S5 closes
 * these, and only these: a library may open its log file from its
 * constructor, before main, and must keep it)
 */
#define INHERITED_MAX 65536
static uint64_t Inherited[INHERITED_MAX / 64];

/*
 * note_inherited -- record the open descriptors: called through
 * .preinit_array, which the dynamic loader runs before the initialisers
 * of every shared object, LD_PRELOADed ones included, so whatever is
 * open here came through exec.  Above INHERITED_MAX nothing is recorded:
 * those are closed at once, since nothing but exec can have opened them.
 */
static void
note_inherited(void)
{
	struct rlimit rl;
	int max = INHERITED_MAX;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)max)
		max = (int)rl.rlim_cur;
	for (int fd = STDERR_FILENO + 1; fd < max; fd++) {
		if (fcntl(fd, F_GETFD) >= 0)
			Inherited[fd / 64] |= 1ULL << (fd % 64);
	}
	(void) close_range(INHERITED_MAX, ~0U, 0);
}

__attribute__((section(".preinit_array"), used))
static void (*const note_inherited_at_exec)(void) = note_inherited;

/* harden -- scenario S5: no inherited fds, private files, no setuid */
static void
harden(void)
{
	for (int fd = 0; fd < INHERITED_MAX; fd++) {
		if (Inherited[fd / 64] & (1ULL << (fd % 64)))
			(void) close(fd);
	}
	umask(077);
	(void) prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	signal(SIGPIPE, SIG_IGN);
}

/* setup_logging -- switch from stderr to what the config asks for */
static int
setup_logging(const struct config *cfg)
{
	log_set_level(cfg->log_level);
	if (cfg->use_syslog) {
		log_to_syslog();
		return 0;
	}
	if (cfg->log_file) {
		int r = log_to_file(cfg->log_file);
		if (r) {
			log_err("cannot open log file %s: %s", cfg->log_file,
				strerror(-r));
			return r;
		}
	}
	return 0;
}

/* startup_failed -- tell the client (status word) and stderr, then exit */
static int
startup_failed(int err)
{
	(void) obc_send_status(STDOUT_FILENO, (uint32_t)err);
	return 1;
}

/* log_startup -- what a reader of the log needs to place this session */
static void
log_startup(const struct config *cfg)
{
	const char *conn = getenv("SSH_CONNECTION");
	const char *user = getenv("USER");
	log_info("rpmemd version %s", SRCVERSION);
	log_notice("session: pid %d SSH_CONNECTION=%s USER=%s",
		(int)getpid(), log_quote(conn ? conn : "").s,
		log_quote(user ? user : "").s);
	log_notice("config: poolset-dir %s, persist-apm %s, log-level %s, "
		"max-lanes %u, nthreads %u", cfg->poolset_dir,
		cfg->persist_apm ? "yes" : "no",
		log_level_name(cfg->log_level), cfg->max_lanes,
		cfg->nthreads);
}

/*
 * log_session_end -- the session's end, with the CPU time rpmemd spent
 * on it (all threads), which rpmem bench and users can set against the
 * bytes it moved
 */
static void
log_session_end(int r)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	log_notice("session ended%s; CPU user %ld.%03ld s, system "
		"%ld.%03ld s", r == -ECONNRESET ? " without a CLOSE (the "
		"client went away)" : r ? " with an error" : "",
		(long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec / 1000,
		(long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec / 1000);
}

/*
 * client_check -- which client is this?  librpmem of this project says
 * its protocol with --protocol; without it the client is PMDK 1.12's
 * (protocol 0.1), served only with allow-pmdk-clients and no lane
 * security asked for.  A refusal goes to stderr and the log, where
 * this project's client and an operator read it; PMDK's client shows
 * neither (pmdk_refuse).  Returns 0 to serve, -EPROTONOSUPPORT to
 * refuse a client of ours, -EPERM to refuse PMDK's.
 */
static int
client_check(const struct config *cfg)
{
	if (cfg->protocol) {
		if (cfg->proto_major == PROTO_MAJOR)
			return 0;
		log_err("protocol major version mismatch: client %u.%u, "
			"rpmemd %u.%u", cfg->proto_major, cfg->proto_minor,
			PROTO_MAJOR, PROTO_MINOR);
		fprintf(stderr, "rpmemd: the client speaks protocol %u.%u, "
			"rpmemd %s speaks %u.%u\n", cfg->proto_major,
			cfg->proto_minor, SRCVERSION, PROTO_MAJOR,
			PROTO_MINOR);
		return -EPROTONOSUPPORT;
	}
	if (!cfg->allow_pmdk_clients) {
		log_err("refused a PMDK 1.12 client (protocol 0.1): "
			"allow-pmdk-clients is no; set allow-pmdk-clients = "
			"yes in rpmemd.conf (rpmemd.conf(5)) to serve it "
			"without lane security, or install this project's "
			"librpmem on the client host");
		fprintf(stderr, "rpmemd: this client is PMDK 1.12's librpmem "
			"(protocol 0.1); rpmemd %s needs this project's "
			"librpmem (protocol %u.%u) on the client host, or "
			"allow-pmdk-clients = yes in rpmemd.conf to serve it "
			"without lane security\n", SRCVERSION, PROTO_MAJOR,
			PROTO_MINOR);
		return -EPERM;
	}
	if (cfg->lane_security > LANESEC_NONE) {
		const char *ls = lanesec_policy_name(
			(unsigned)cfg->lane_security);
		log_err("refused a PMDK 1.12 client (protocol 0.1, no lane "
			"security): lane-security is %s", ls);
		fprintf(stderr, "rpmemd: this client is PMDK 1.12's librpmem "
			"(protocol 0.1), which has no lane security, and "
			"rpmemd.conf asks lane-security = %s: set it to none "
			"to serve such clients\n", ls);
		return -EPERM;
	}
	log_warn("serving a PMDK 1.12 client (protocol 0.1, "
		"allow-pmdk-clients): its lanes are admitted without tokens "
		"and carry no lane security, and the pool is open to its RMA "
		"writes, which a stopped rpmemd cannot refuse");
	return 0;
}

#define REFUSE_WAIT_S 10	/* for a refused PMDK client's request */

/*
 * pmdk_refuse -- turn a refused PMDK client away in its own terms.  Its
 * rpmem_errormsg() never shows rpmemd's stderr (a failed start reads
 * "out-of-band connection failed: <strerror of the status word>"), but
 * it does show the status string of a CREATE or OPEN answer: so the
 * start is let through, and the request answered "Protocol version
 * number mismatch" (errno EPROTONOSUPPORT), the nearest of its words.
 */
static void
pmdk_refuse(void)
{
	/* its request comes at once: one that never comes is not waited for */
	static struct proto_req req;
	uint32_t type = 0;
	if (!obc_send_status(STDOUT_FILENO, 0) &&
			!obc_recv(STDIN_FILENO, -1, &req, &type,
				REFUSE_WAIT_S * 1000, REFUSE_WAIT_S * 1000) &&
			(req.type == PROTO_MSG_CREATE ||
			req.type == PROTO_MSG_OPEN)) {
		static struct proto_resp resp;
		resp.type = proto_resp_type(req.type);
		resp.status = PROTO_ERR_BADPROTO;
		(void) obc_send(STDOUT_FILENO, &resp);
	}
}

/*
 * wants_remove -- was --remove or --outdate asked for?  Decides, even
 * when the config is bad, whether failure is told by exit status (those
 * modes: nothing may be written to stdout) or by the start-up status
 * word.
 */
static bool
wants_remove(int argc, char *argv[])
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strncmp(argv[i], "--remove", 8) == 0 ||
				strncmp(argv[i], "--outdate", 9) == 0 ||
				strncmp(argv[i], "-r", 2) == 0)
			return true;
	}
	return false;
}

/*
 * outdate_mode -- rpmemd --outdate DESC [--master HOST]: the fence-peer
 * handler of a master that goes on without this replica marks it
 * (scenarios D5, D6); the exit status is 0 or the errno
 */
static int
outdate_mode(struct db *db, const struct config *cfg)
{
	struct db_outdate o = {
		.mark = true,
		.host = cfg->master,
	};
	int r = db_outdate(db, cfg->outdate, &o);
	if (r) {
		log_err("marking %s outdated failed: %s",
			log_quote(cfg->outdate).s, strerror(-r));
		fprintf(stderr, "rpmemd: marking %s outdated failed: %s\n",
			log_quote(cfg->outdate).s, db_strerror(r));
	}
	return r;
}

int
main(int argc, char *argv[])
{
	harden();
	log_init("rpmemd", LOG_SINK_STDERR, LOG_LVL_ERR);

	struct config cfg;
	char err[CONFIG_ERR_MAX];
	int r = config_load(&cfg, argc, argv, err, sizeof(err));
	if (r) {
		log_err("%s", err);
		config_free(&cfg);
		if (wants_remove(argc, argv))
			return -r;
		return startup_failed(-r);
	}
	if (cfg.help) {
		config_usage(argv[0]);
		config_free(&cfg);
		return 0;
	}
	if (cfg.version) {
		fprintf(stderr, "rpmemd version %s\n", SRCVERSION);
		config_free(&cfg);
		return 0;
	}

	bool remove_mode = cfg.remove != NULL || cfg.outdate != NULL;
	r = setup_logging(&cfg);
	if (r)
		goto err_cfg;
	log_startup(&cfg);

	struct db *db;
	r = db_init(cfg.poolset_dir, &db);
	if (r) {
		log_err("poolset-dir %s: %s", cfg.poolset_dir, strerror(-r));
		/* after switching sinks the client still needs the reason */
		fprintf(stderr, "rpmemd: poolset-dir %s: %s\n",
			cfg.poolset_dir, strerror(-r));
		goto err_cfg;
	}

	if (cfg.outdate) {
		r = outdate_mode(db, &cfg);
		db_fini(db);
		config_free(&cfg);
		log_close();
		return -r;
	}
	if (remove_mode) {
		r = db_pool_remove(db, cfg.remove, cfg.force, cfg.pool_set);
		if (r) {
			log_err("removing %s failed: %s",
				log_quote(cfg.remove).s, strerror(-r));
			fprintf(stderr, "rpmemd: removing %s failed: %s\n",
				log_quote(cfg.remove).s, db_strerror(r));
		}
		db_fini(db);
		config_free(&cfg);
		log_close();
		return -r;
	}

	r = client_check(&cfg);
	if (r) {
		/* no status word: our client reads stderr instead */
		if (r == -EPERM)
			pmdk_refuse();
		db_fini(db);
		config_free(&cfg);
		log_close();
		return 1;
	}
	r = obc_send_status(STDOUT_FILENO, 0);
	if (r == 0)
		r = session_run(&cfg, db, STDIN_FILENO, STDOUT_FILENO);
	db_fini(db);
	config_free(&cfg);
	log_session_end(r);
	log_close();
	return r ? 1 : 0;

err_cfg:
	config_free(&cfg);
	if (remove_mode)
		return -r;
	return startup_failed(-r);
}
