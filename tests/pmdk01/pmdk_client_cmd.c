/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pmdk_client_cmd.c -- the PMDK stand-in client's remote command
 *
 * As PMDK 1.12's client runs ssh (pmdk-interop 3.1): the command's stdin,
 * stdout and stderr are AF_UNIX socket pairs; the first four bytes on
 * stdout are the start-up status, and when they do not come the first
 * line of stderr is the error.  Every wait here is bounded.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pmdk_client.h"

#define ERR_LINE 4096

/* pc_spawn -- sh -c COMMAND on three socket pairs, as PMDK runs ssh */
int
pc_spawn(const char *cmd, struct pc_remote *r)
{
	int in[2], out[2], err[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) ||
			socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
			out) ||
			socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
			err))
		return -errno;
	r->pid = fork();
	if (r->pid < 0)
		return -errno;
	if (r->pid == 0) {
		/* dup2 clears close-on-exec on the three the child keeps */
		if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 ||
				dup2(err[1], 2) < 0)
			_exit(127);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	close(err[1]);
	r->in = in[1];
	r->out = out[0];
	r->err = err[0];
	return 0;
}

/*
 * stderr_line -- read the command's stderr to its end and keep the first
 * line, CR/LF cut (pmdk-interop 3.1); strerror(oerr) when there is nothing
 */
static void
stderr_line(int fd, int oerr, int timeout_ms, char *line, size_t len)
{
	size_t n = 0;
	struct pollfd pfd = {.fd = fd, .events = POLLIN};

	while (n < len - 1 && poll(&pfd, 1, timeout_ms) > 0) {
		ssize_t got = read(fd, line + n, len - 1 - n);
		if (got <= 0)
			break;
		n += (size_t)got;
	}
	line[n] = '\0';
	line[strcspn(line, "\r\n")] = '\0';
	if (line[0] == '\0')
		snprintf(line, len, "%s", oerr ? strerror(oerr) :
			"unknown error");
}

/* show_stderr -- what the command left on stderr, for the reader */
static void
show_stderr(const struct pc_remote *r)
{
	char buf[ERR_LINE];
	ssize_t n = recv(r->err, buf, sizeof(buf) - 1, MSG_DONTWAIT);

	if (n <= 0)
		return;
	buf[n] = '\0';
	for (char *save, *l = strtok_r(buf, "\n", &save); l != NULL;
			l = strtok_r(NULL, "\n", &save))
		pc_say("remote stderr: %s", l);
}

/*
 * pc_finish -- close our ends (PMDK's ssh close) and wait for the command
 * within the timeout; SIGKILL it after that.  Returns its exit status.
 */
int
pc_finish(struct pc_remote *r, int timeout_ms)
{
	close(r->in);
	close(r->out);
	int status, fd = (int)syscall(SYS_pidfd_open, r->pid, 0);
	if (fd >= 0) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		if (poll(&pfd, 1, timeout_ms) == 0) {
			pc_say("the remote command did not end within %d ms: "
				"killing it", timeout_ms);
			kill(r->pid, SIGKILL);
		}
		close(fd);
	}
	if (waitpid(r->pid, &status, 0) != r->pid)
		return -1;
	show_stderr(r);
	close(r->err);
	if (WIFSIGNALED(status)) {
		pc_say("remote command killed by signal %d", WTERMSIG(status));
		return -1;
	}
	pc_say("remote command exited with status %d", WEXITSTATUS(status));
	return WEXITSTATUS(status);
}

/*
 * pc_startup_status -- the 4-byte host-order word (pmdk-interop 3.1).
 * Returns 0 or the errno PMDK's client would leave.
 */
int
pc_startup_status(const char *node, int timeout_ms, struct pc_remote *r)
{
	int32_t status;
	char line[ERR_LINE];

	int ret = w01_read_full(r->out, &status, sizeof(status),
		timeout_ms);
	int err = errno;
	if (ret != 0) {
		if (ret == 1 || err == ECONNRESET) {
			err = ECONNRESET;
			stderr_line(r->err, err, timeout_ms, line,
				sizeof(line));
			pc_say("%s", line);
		} else {
			pc_say("%s: %s", node, strerror(err));
		}
	} else if (status != 0) {
		pc_say("%s: unexpected status received -- '%d'", node,
			status);
		err = status;
	} else {
		return 0;
	}
	pc_say("out-of-band connection failed: %s", strerror(err));
	return err;
}
