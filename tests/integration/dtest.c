/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dtest.c -- rpmemd spoken to directly on its stdin/stdout (dtest.h)
 */
#include <check.h>
#include <endian.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dtest.h"

#define STR_(x) #x
#define STR(x) STR_(x)

char Dtest_dir[256];
char Dtest_log[300];
const char *Dtest_args[DTEST_ARGS_MAX + 1];
bool Dtest_pmdk_client;
bool Dtest_no_ssh_connection;
const char *Dtest_exe;

/* dtest_sys -- run a shell command, fail the test if it fails */
void
dtest_sys(const char *cmd)
{
	ck_assert_msg(system(cmd) == 0, "command failed: %s", cmd);
}

/* dtest_exe -- the rpmemd the next spawn runs */
const char *
dtest_exe(void)
{
	static char exe[512];
	if (Dtest_exe)
		return Dtest_exe;
	snprintf(exe, sizeof(exe), "%s/rpmemd",
		getenv("top_builddir") ? getenv("top_builddir") : ".");
	return exe;
}

/* child -- in the forked child: become rpmemd with the test's options */
static void
child(int in, int out)
{
	dup2(in, 0);
	dup2(out, 1);
	char err[300];
	snprintf(err, sizeof(err), "%s/stderr.txt", Dtest_dir);
	int efd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (efd >= 0)
		dup2(efd, 2);
	/* a descriptor rpmemd must not keep (S5) */
	int leak = open("/dev/null", O_RDONLY);
	if (leak >= 0 && leak < 9)
		dup2(leak, 9);
	char exe[512], psd[300], log[320], conf[300];
	snprintf(exe, sizeof(exe), "%s", dtest_exe());
	snprintf(psd, sizeof(psd), "--poolset-dir=%s", Dtest_dir);
	snprintf(log, sizeof(log), "--log-file=%s", Dtest_log);
	snprintf(conf, sizeof(conf), "%s/rpmemd.conf", Dtest_dir);
	if (Dtest_no_ssh_connection)
		unsetenv("SSH_CONNECTION");
	else
		setenv("SSH_CONNECTION", "127.0.0.1 40000 127.0.0.1 22", 1);
	char *argv[8 + DTEST_ARGS_MAX] = { exe, "-c", conf, psd, log,
		"--log-level=debug" };
	int ac = 6;
	if (!Dtest_pmdk_client) {
		argv[ac++] = "--protocol";
		argv[ac++] = STR(PROTO_MAJOR) "." STR(PROTO_MINOR);
	}
	for (int i = 0; i < DTEST_ARGS_MAX && Dtest_args[i]; i++)
		argv[ac++] = (char *)Dtest_args[i];
	execv(exe, argv);
	_exit(127);
}

/* dtest_spawn -- rpmemd with pipes, its stderr into Dtest_dir/stderr.txt */
void
dtest_spawn(struct daemon *d)
{
	int in[2], out[2];
	/* the child keeps only its ends (0, 1): a daemon that does not
	 * close what it inherits, as PMDK's, must still see EOF */
	ck_assert_int_eq(pipe2(in, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
	d->pid = fork();
	ck_assert_int_ge(d->pid, 0);
	if (d->pid == 0)
		child(in[0], out[1]);
	close(in[0]);
	close(out[1]);
	d->in = in[1];
	d->out = out[0];
}

/* dtest_start -- spawn rpmemd and read its start-up status: 0 */
void
dtest_start(struct daemon *d)
{
	dtest_spawn(d);
	uint32_t status = 1;
	ck_assert_int_eq(read(d->out, &status, 4), 4);
	ck_assert_uint_eq(status, 0);
}

/* dtest_said -- rpmemd's stderr contains `needle` */
bool
dtest_said(const char *needle)
{
	char path[300], buf[8192];
	snprintf(path, sizeof(path), "%s/stderr.txt", Dtest_dir);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return strstr(buf, needle) != NULL;
}

/* dtest_finish -- close stdin, expect rpmemd to exit with `code` in time */
void
dtest_finish(struct daemon *d, int code)
{
	close(d->in);
	int st;
	for (int i = 0; i < DTEST_WAIT_MS / 10; i++) {
		pid_t r = waitpid(d->pid, &st, WNOHANG);
		if (r == d->pid) {
			close(d->out);
			ck_assert_msg(WIFEXITED(st), "rpmemd died of signal %d",
				WIFSIGNALED(st) ? WTERMSIG(st) : 0);
			ck_assert_int_eq(WEXITSTATUS(st), code);
			return;
		}
		struct pollfd p = { .fd = -1 };
		poll(&p, 0, 10);
	}
	kill(d->pid, SIGKILL);
	waitpid(d->pid, &st, 0);
	ck_abort_msg("rpmemd did not exit within %d ms", DTEST_WAIT_MS);
}

/* dtest_send_raw -- write bytes to rpmemd */
void
dtest_send_raw(struct daemon *d, const void *buf, size_t len)
{
	ck_assert_int_eq(write(d->in, buf, len), (ssize_t)len);
}

/* dtest_send_req -- encode and send a request */
void
dtest_send_req(struct daemon *d, const struct proto_req *req)
{
	unsigned char buf[PROTO_REQ_MAX];
	ssize_t n = proto_req_encode(req, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	dtest_send_raw(d, buf, (size_t)n);
}

/* dtest_recv_resp -- read one response of `type`; false on EOF */
bool
dtest_recv_resp(struct daemon *d, uint32_t type, struct proto_resp *resp)
{
	static unsigned char buf[PROTO_RESP_MAX];
	size_t got = 0;
	uint64_t size = PROTO_HDR_RESP_SIZE;
	while (got < size) {
		struct pollfd p = { .fd = d->out, .events = POLLIN };
		ck_assert_msg(poll(&p, 1, DTEST_WAIT_MS) == 1,
			"no answer in time");
		ssize_t n = read(d->out, buf + got, (size_t)size - got);
		if (n == 0)
			return false;
		ck_assert_int_gt(n, 0);
		got += (size_t)n;
		if (got == PROTO_HDR_RESP_SIZE && size == PROTO_HDR_RESP_SIZE) {
			uint32_t status;
			ck_assert_int_eq(proto_hdr_resp_decode(buf, got, type,
				&status, &size), 0);
		}
	}
	ck_assert_int_eq(proto_resp_decode(buf, got, type, resp), 0);
	return true;
}

/* dtest_answer -- send `req`; its answer, whatever its status */
const struct proto_resp *
dtest_answer(struct daemon *d, const struct proto_req *req)
{
	static struct proto_resp resp;
	dtest_send_req(d, req);
	ck_assert(dtest_recv_resp(d, proto_resp_type(req->type), &resp));
	return &resp;
}

/* dtest_request -- send `req`, expect its answer with `status` */
void
dtest_request(struct daemon *d, const struct proto_req *req, uint32_t status)
{
	ck_assert_uint_eq(dtest_answer(d, req)->status, status);
}

/* dtest_send_hdr -- a raw request header, zero-padded to `len` bytes */
void
dtest_send_hdr(struct daemon *d, uint32_t type, uint64_t size, size_t len)
{
	unsigned char hdr[PROTO_REQ_MAX] = {0};
	uint32_t t = htobe32(type);
	uint64_t sz = htobe64(size);
	ck_assert_uint_ge(len, 12);
	ck_assert_uint_le(len, sizeof(hdr));
	memcpy(hdr, &t, 4);
	memcpy(hdr + 4, &sz, 8);
	dtest_send_raw(d, hdr, len);
}

/* dtest_serve_once -- start rpmemd, `req` answered 0, CLOSE, exit 0 */
void
dtest_serve_once(const struct proto_req *req)
{
	struct daemon d;
	dtest_start(&d);
	dtest_request(&d, req, 0);
	dtest_done(&d);
}

/*
 * dtest_refused_once -- start rpmemd, `req` answered `status`, exit
 * `code`, and `log` (unless NULL) in its log
 */
void
dtest_refused_once(const struct proto_req *req, uint32_t status, int code,
	const char *log)
{
	struct daemon d;
	dtest_start(&d);
	dtest_request(&d, req, status);
	dtest_finish(&d, code);
	ck_assert_msg(!log || dtest_log_has(log), "no \"%s\" in %s", log,
		Dtest_log);
}

/* dtest_log_has -- the daemon's log contains `needle` */
bool
dtest_log_has(const char *needle)
{
	FILE *f = fopen(Dtest_log, "r");
	if (!f)
		return false;
	char line[1024];
	bool found = false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, needle) != NULL;
	fclose(f);
	return found;
}

/* dtest_open_req -- an OPEN of pool.set with the given version */
struct proto_req
dtest_open_req(uint16_t major, uint16_t minor)
{
	struct proto_req r = {
		.type = PROTO_MSG_OPEN,
		.common = { major, minor, 4 << 20, 1, PROTO_PROV_TCP, 65536 },
		/* ours carry the extension block; PMDK's do not */
		.has_ext = minor >= PROTO_MINOR_EXT,
	};
	strcpy(r.desc, "pool.set");
	return r;
}

/* dtest_start_open -- dtest_start, then OPEN pool.set: success in *resp */
void
dtest_start_open(struct daemon *d, struct proto_resp *resp)
{
	dtest_start(d);
	struct proto_req r = dtest_open_req(PROTO_MAJOR, PROTO_MINOR);
	dtest_send_req(d, &r);
	ck_assert(dtest_recv_resp(d, PROTO_MSG_OPEN_RESP, resp));
	ck_assert_uint_eq(resp->status, 0);
}

/* dtest_close -- CLOSE the session's pool; expect `status` */
void
dtest_close(struct daemon *d, uint32_t status)
{
	static struct proto_resp resp;
	struct proto_req c = { .type = PROTO_MSG_CLOSE };
	dtest_send_req(d, &c);
	ck_assert(dtest_recv_resp(d, PROTO_MSG_CLOSE_RESP, &resp));
	ck_assert_uint_eq(resp.status, status);
}

/* dtest_done -- CLOSE answered 0, then rpmemd exits 0 */
void
dtest_done(struct daemon *d)
{
	dtest_close(d, 0);
	dtest_finish(d, 0);
}

/* dtest_setup -- a scratch dir with a pool the tests can open */
void
dtest_setup(void)
{
	memset(Dtest_args, 0, sizeof(Dtest_args));
	Dtest_pmdk_client = false;
	Dtest_no_ssh_connection = false;
	Dtest_exe = NULL;
	snprintf(Dtest_dir, sizeof(Dtest_dir), "%s/rpmemd-daemon.XXXXXX",
		getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(Dtest_dir));
	snprintf(Dtest_log, sizeof(Dtest_log), "%s/rpmemd.log", Dtest_dir);
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "printf 'log-level = debug\\n' > "
		"%s/rpmemd.conf && chmod 600 %s/rpmemd.conf && printf "
		"'PMEMPOOLSET\\nOPTION NOHDRS\\n4M %s/part0\\n' > %s/pool.set",
		Dtest_dir, Dtest_dir, Dtest_dir, Dtest_dir);
	dtest_sys(cmd);
	/* create the pool once through the daemon itself */
	struct proto_req r = dtest_open_req(PROTO_MAJOR, PROTO_MINOR);
	r.type = PROTO_MSG_CREATE;
	dtest_serve_once(&r);
	unlink(Dtest_log);
}

/* dtest_teardown -- remove the scratch dir (kept with DTEST_KEEP=1) */
void
dtest_teardown(void)
{
	if (getenv("DTEST_KEEP") && atoi(getenv("DTEST_KEEP")) > 0) {
		fprintf(stderr, "kept %s\n", Dtest_dir);
		return;
	}
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", Dtest_dir);
	dtest_sys(cmd);
}
