/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dtest.h -- rpmemd spoken to directly on its stdin/stdout: what the
 * daemon test programs (daemon.c, daemon_errors.c) share
 *
 * Each test runs in a scratch directory, Dtest_dir, with rpmemd.conf,
 * pool.set (4 MiB, no headers) created through the daemon itself and
 * rpmemd's log at Dtest_log (dtest_setup, dtest_teardown as a fixture).
 * Environment: top_builddir (where rpmemd is), TMPDIR; DTEST_KEEP=1
 * keeps the scratch directories for a look after a failure.
 */
#ifndef RPMEM_DTEST_H
#define RPMEM_DTEST_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto.h"

#define DTEST_WAIT_MS 20000
#define DTEST_ARGS_MAX 8

/* the scratch directory and rpmemd's log file in it */
extern char Dtest_dir[256];
extern char Dtest_log[300];
/* more rpmemd options for the next spawn, NULL-ended; reset by setup */
extern const char *Dtest_args[DTEST_ARGS_MAX + 1];
/* start it as PMDK's client does: no --protocol */
extern bool Dtest_pmdk_client;
/* start it without SSH_CONNECTION in its environment */
extern bool Dtest_no_ssh_connection;
/* the rpmemd to run: NULL for the built one; reset by setup */
extern const char *Dtest_exe;

struct daemon {
	pid_t pid;
	int in;		/* its stdin */
	int out;	/* its stdout */
};

/* dtest_exe -- the rpmemd the next spawn runs (Dtest_exe or the built) */
const char *dtest_exe(void);

/* dtest_sys -- run a shell command, fail the test if it fails */
void dtest_sys(const char *cmd);

/* dtest_spawn -- rpmemd with pipes, its stderr into Dtest_dir/stderr.txt */
void dtest_spawn(struct daemon *d);

/* dtest_start -- spawn rpmemd and read its start-up status: 0 */
void dtest_start(struct daemon *d);

/* dtest_said -- rpmemd's stderr contains `needle` */
bool dtest_said(const char *needle);

/* dtest_finish -- close stdin, expect rpmemd to exit with `code` in time */
void dtest_finish(struct daemon *d, int code);

/* dtest_send_raw -- write bytes to rpmemd */
void dtest_send_raw(struct daemon *d, const void *buf, size_t len);

/* dtest_send_req -- encode and send a request */
void dtest_send_req(struct daemon *d, const struct proto_req *req);

/* dtest_recv_resp -- read one response of `type`; false on EOF */
bool dtest_recv_resp(struct daemon *d, uint32_t type,
	struct proto_resp *resp);

/* dtest_answer -- send `req`; its answer (static storage), whatever status */
const struct proto_resp *dtest_answer(struct daemon *d,
	const struct proto_req *req);

/* dtest_send_hdr -- a request header of `type` and `size`, `len` bytes */
void dtest_send_hdr(struct daemon *d, uint32_t type, uint64_t size,
	size_t len);

/* dtest_request -- send `req`, expect its answer with `status` */
void dtest_request(struct daemon *d, const struct proto_req *req,
	uint32_t status);

/* dtest_serve_once -- start rpmemd, `req` answered 0, CLOSE, exit 0 */
void dtest_serve_once(const struct proto_req *req);

/*
 * dtest_refused_once -- start rpmemd, `req` answered `status`, exit
 * `code`, and `log` (unless NULL) in its log
 */
void dtest_refused_once(const struct proto_req *req, uint32_t status,
	int code, const char *log);

/* dtest_log_has -- the daemon's log contains `needle` */
bool dtest_log_has(const char *needle);

/* dtest_start_open -- dtest_start, then OPEN pool.set: success in *resp */
void dtest_start_open(struct daemon *d, struct proto_resp *resp);

/* dtest_open_req -- an OPEN of pool.set with the given version */
struct proto_req dtest_open_req(uint16_t major, uint16_t minor);

/* dtest_close -- CLOSE the session's pool; expect `status` */
void dtest_close(struct daemon *d, uint32_t status);

/* dtest_done -- CLOSE answered 0, then rpmemd exits 0 */
void dtest_done(struct daemon *d);

/* dtest_setup, dtest_teardown -- the scratch directory (a fixture) */
void dtest_setup(void);
void dtest_teardown(void);

#endif /* RPMEM_DTEST_H */
