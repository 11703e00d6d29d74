/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ssh.c -- spawn ssh, move out-of-band bytes over it, reap it
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "fdio.h"
#include "log.h"
#include "ssh.h"

#define SSH_DEFAULT "ssh"
#define CMD_DEFAULT "rpmemd"
#define ERRBUF_SIZE 4096
#define CMDLINE_MAX 8192

extern char **environ;

static struct {
	char *ssh;		/* RPMEM_SSH */
	char *cmds;		/* RPMEM_CMD, '|' replaced by NUL */
	char **cmd;		/* pointers into cmds */
	unsigned ncmds;
	atomic_uint next;	/* round robin over cmd[] */
} Cmd;

struct ssh {
	pid_t pid;		/* 0 once reaped */
	int status;		/* its exit status, once reaped */
	int in;			/* child's stdin (we write) */
	int out;		/* child's stdout (we read) */
	int err;		/* child's stderr (we read) */
	bool out_eof;
	char errbuf[ERRBUF_SIZE];	/* tail of the child's stderr */
	size_t errlen;
	char lastline[ERRBUF_SIZE];
	const char *cmd;		/* the RPMEM_CMD entry it runs */
	char host[TARGET_USER_MAX + TARGET_NODE_MAX + 1];	/* [user@]node */
	pthread_mutex_t io;		/* one reader of stdout at a time */
	_Atomic long long heard_ms;	/* when stdout last gave bytes */
	_Atomic int silence_ms;		/* rpmemd beats: lost when silent
					 * this long (0: it does not beat) */
	long long watched_ms;		/* the watcher's last look */
};

/* ssh_cmd_init -- read RPMEM_SSH and split RPMEM_CMD on '|' */
int
ssh_cmd_init(void)
{
	const char *s = getenv("RPMEM_SSH");
	const char *c = getenv("RPMEM_CMD");

	Cmd.ssh = strdup(s && *s ? s : SSH_DEFAULT);
	Cmd.cmds = strdup(c && *c ? c : CMD_DEFAULT);
	if (!Cmd.ssh || !Cmd.cmds)
		goto err;

	unsigned n = 1;
	for (const char *p = Cmd.cmds; *p; p++)
		n += *p == '|';
	Cmd.cmd = calloc(n, sizeof(*Cmd.cmd));
	if (!Cmd.cmd)
		goto err;
	char *save = NULL;
	for (char *t = strtok_r(Cmd.cmds, "|", &save); t;
			t = strtok_r(NULL, "|", &save))
		Cmd.cmd[Cmd.ncmds++] = t;
	if (Cmd.ncmds == 0)
		Cmd.cmd[Cmd.ncmds++] = (char *)CMD_DEFAULT;
	atomic_init(&Cmd.next, 0);
	return 0;
err:
	ssh_cmd_fini();
	return -ENOMEM;
}

/* ssh_cmd_fini -- free what ssh_cmd_init allocated */
void
ssh_cmd_fini(void)
{
	free(Cmd.ssh);
	free(Cmd.cmds);
	free(Cmd.cmd);
	memset(&Cmd, 0, sizeof(Cmd));
}

/* ssh_shell_quote -- append `str` single-quoted for a POSIX shell */
int
ssh_shell_quote(char *buf, size_t len, const char *str)
{
	size_t n = strlen(buf);
	if (n + 1 >= len)
		return -ENAMETOOLONG;
	buf[n++] = '\'';
	for (const char *p = str; *p; p++) {
		const char *piece = *p == '\'' ? "'\\''" : NULL;
		size_t plen = piece ? 4 : 1;
		if (n + plen + 2 > len)
			return -ENAMETOOLONG;
		if (piece)
			memcpy(buf + n, piece, plen);
		else
			buf[n] = *p;
		n += plen;
	}
	buf[n++] = '\'';
	buf[n] = '\0';
	return 0;
}

/* ssh_open -- start ssh with the next RPMEM_CMD on the remote side */
int
ssh_open(const struct target *t, const char *args, bool ipv4,
		struct ssh **sshp)
{
	if (!Cmd.ssh)
		return -ENOMEM;

	unsigned idx = atomic_fetch_add(&Cmd.next, 1) % Cmd.ncmds;
	char cmdline[CMDLINE_MAX];
	int r = snprintf(cmdline, sizeof(cmdline), "%s%s%s", Cmd.cmd[idx],
		args && *args ? " " : "", args ? args : "");
	if (r < 0 || (size_t)r >= sizeof(cmdline))
		return -ENAMETOOLONG;

	struct ssh *ssh = calloc(1, sizeof(*ssh));
	if (!ssh)
		return -ENOMEM;
	char *host = ssh->host;
	if (t->user[0])
		snprintf(host, sizeof(ssh->host), "%s@%s", t->user, t->node);
	else
		snprintf(host, sizeof(ssh->host), "%s", t->node);
	ssh->cmd = Cmd.cmd[idx];
	pthread_mutex_init(&ssh->io, NULL);
	atomic_init(&ssh->heard_ms, clock_ms());

	char *argv[16];
	unsigned ac = 0;
	argv[ac++] = Cmd.ssh;
	if (t->service[0]) {
		argv[ac++] = (char *)"-p";
		argv[ac++] = (char *)t->service;
	}
	argv[ac++] = (char *)"-T";
	if (ipv4)
		argv[ac++] = (char *)"-4";
	argv[ac++] = (char *)"-oBatchMode=yes";
	argv[ac++] = (char *)"--";
	argv[ac++] = host;
	argv[ac++] = cmdline;
	argv[ac] = NULL;

	int sv[3][2];
	int nsv = 0;
	for (; nsv < 3; nsv++) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
				sv[nsv]) < 0) {
			r = -errno;
			goto err_sockets;
		}
	}

	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	for (int i = 0; i < 3; i++)
		posix_spawn_file_actions_adddup2(&fa, sv[i][1], i);
	sigset_t empty, dfl;
	sigemptyset(&empty);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	sigaddset(&dfl, SIGINT);
	sigaddset(&dfl, SIGTERM);
	posix_spawnattr_setsigmask(&attr, &empty);
	posix_spawnattr_setsigdefault(&attr, &dfl);
	posix_spawnattr_setflags(&attr,
		POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

	log_info("spawning %s %s '%s'", Cmd.ssh, host, cmdline);
	r = posix_spawnp(&ssh->pid, Cmd.ssh, &fa, &attr, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (r) {
		r = -r;
		goto err_sockets;
	}

	for (int i = 0; i < 3; i++)
		close(sv[i][1]);
	ssh->in = sv[0][0];
	ssh->out = sv[1][0];
	ssh->err = sv[2][0];
	fcntl(ssh->err, F_SETFL, O_NONBLOCK);
	*sshp = ssh;
	return 0;

err_sockets:
	for (int i = 0; i < nsv; i++) {
		close(sv[i][0]);
		close(sv[i][1]);
	}
	pthread_mutex_destroy(&ssh->io);
	free(ssh);
	return r;
}

/* drain_stderr -- keep the tail of whatever the child wrote to stderr */
static void
drain_stderr(struct ssh *ssh)
{
	if (ssh->err < 0)
		return;
	for (;;) {
		char tmp[1024];
		ssize_t n = read(ssh->err, tmp, sizeof(tmp));
		if (n == 0) {
			close(ssh->err);
			ssh->err = -1;
			return;
		}
		if (n < 0)
			return;
		/* keep the tail: drop the oldest bytes to make room */
		size_t un = (size_t)n;
		size_t room = sizeof(ssh->errbuf) - 1 - ssh->errlen;
		if (un > room) {
			size_t drop = un - room;
			memmove(ssh->errbuf, ssh->errbuf + drop,
				ssh->errlen - drop);
			ssh->errlen -= drop;
		}
		memcpy(ssh->errbuf + ssh->errlen, tmp, un);
		ssh->errlen += un;
	}
}

/* stderr_ready -- fdio's watch of the child's stderr: keep its tail */
static int
stderr_ready(void *arg)
{
	struct ssh *ssh = arg;
	drain_stderr(ssh);
	return ssh->err < 0;	/* at its end: watch it no more */
}

/* watch -- stderr as the watch of a transfer, drained while it waits */
static struct fdio_watch
watch(struct ssh *ssh)
{
	return (struct fdio_watch){ ssh->err, stderr_ready, ssh };
}

/* ssh_send -- write all of buf to the child's stdin */
int
ssh_send(struct ssh *ssh, const void *buf, size_t len, int timeout_ms)
{
	struct fdio_watch w = watch(ssh);
	return fdio_send(ssh->in, buf, len, clock_ms() + timeout_ms, &w);
}

/* ssh_recv -- read exactly len bytes from the child's stdout */
int
ssh_recv(struct ssh *ssh, void *buf, size_t len, int timeout_ms)
{
	if (ssh->out_eof)
		return -ECONNRESET;
	struct fdio_watch w = watch(ssh);
	int r = fdio_recv(ssh->out, buf, len, clock_ms() + timeout_ms, &w);
	ssh->out_eof = r == -ECONNRESET;
	if (r == 0)
		atomic_store(&ssh->heard_ms, clock_ms());
	return r;
}

/* ssh_heard -- when stdout last gave bytes (clock_ms) */
long long
ssh_heard(struct ssh *ssh)
{
	return atomic_load(&ssh->heard_ms);
}

/* ssh_heard_now -- count the remote side as heard now */
void
ssh_heard_now(struct ssh *ssh)
{
	atomic_store(&ssh->heard_ms, clock_ms());
}

/* ssh_silence -- how long rpmemd may be silent; 0: no beats asked */
int
ssh_silence(struct ssh *ssh)
{
	return atomic_load(&ssh->silence_ms);
}

/* ssh_set_silence -- rpmemd beats now: silent `ms` means lost */
void
ssh_set_silence(struct ssh *ssh, int ms)
{
	atomic_store(&ssh->silence_ms, ms);
}

/* ssh_watch_gap -- time since the watcher's last look, which is now */
long long
ssh_watch_gap(struct ssh *ssh)
{
	long long now = clock_ms();
	long long gap = ssh->watched_ms ? now - ssh->watched_ms : 0;
	ssh->watched_ms = now;
	return gap;
}

/* ssh_io_lock -- become the one reader of stdout */
void
ssh_io_lock(struct ssh *ssh)
{
	pthread_mutex_lock(&ssh->io);
}

/* ssh_io_trylock -- the same, unless another reads: true when taken */
bool
ssh_io_trylock(struct ssh *ssh)
{
	return pthread_mutex_trylock(&ssh->io) == 0;
}

/* ssh_io_unlock -- stop being the reader */
void
ssh_io_unlock(struct ssh *ssh)
{
	pthread_mutex_unlock(&ssh->io);
}

/* ssh_wait_eof -- wait until the remote side closes stdout */
int
ssh_wait_eof(struct ssh *ssh, int timeout_ms)
{
	char c;
	int r = ssh_recv(ssh, &c, 1, timeout_ms);
	if (r == 0)
		return -EPROTO;
	return r == -ECONNRESET ? 0 : r;
}

/* ssh_fd -- the child's stdout socket */
int
ssh_fd(struct ssh *ssh)
{
	return ssh->out;
}

/* ssh_hangup -- send EOF to the remote side */
void
ssh_hangup(struct ssh *ssh)
{
	(void) shutdown(ssh->in, SHUT_WR);
}

/* ssh_host -- [user@]node the channel goes to */
const char *
ssh_host(const struct ssh *ssh)
{
	return ssh->host;
}

/*
 * ssh_last_error -- last non-empty stderr line of the child, escaped: it
 * is the peer's text, shown in rpmem_errormsg() and our log
 */
const char *
ssh_last_error(struct ssh *ssh)
{
	ssh_io_lock(ssh);	/* a reader drains stderr too */
	drain_stderr(ssh);
	ssh->errbuf[ssh->errlen] = '\0';
	char *end = ssh->errbuf + ssh->errlen;
	while (end > ssh->errbuf && (end[-1] == '\n' || end[-1] == '\r'))
		end--;
	char *start = end;
	while (start > ssh->errbuf && start[-1] != '\n')
		start--;
	char line[ERRBUF_SIZE];
	size_t n = (size_t)(end - start);
	memcpy(line, start, n);
	line[n] = '\0';
	char *cr = strchr(line, '\r');
	if (cr)
		*cr = '\0';
	log_escape(ssh->lastline, sizeof(ssh->lastline), line);
	ssh_io_unlock(ssh);
	return ssh->lastline;
}

/* reap -- wait for the child up to timeout_ms using a pidfd */
static int
reap(pid_t pid, int timeout_ms)
{
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd >= 0) {
		struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
		int r;
		do {
			r = poll(&pfd, 1, timeout_ms);
		} while (r < 0 && errno == EINTR);
		if (r == 0) {
			log_info("ssh (pid %d) did not exit, terminating", pid);
			kill(pid, SIGTERM);
			do {
				r = poll(&pfd, 1, 1000);
			} while (r < 0 && errno == EINTR);
			if (r == 0)
				kill(pid, SIGKILL);
		}
		close(pidfd);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return -1;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* ssh_reap -- close our ends of stdin/stdout, reap the child (once) */
int
ssh_reap(struct ssh *ssh, int timeout_ms)
{
	if (ssh->pid) {
		close(ssh->in);
		close(ssh->out);
		ssh->status = reap(ssh->pid, timeout_ms);
		ssh->pid = 0;
	}
	return ssh->status;
}

/* ssh_said -- did the remote side's stderr (its tail) contain needle? */
bool
ssh_said(struct ssh *ssh, const char *needle)
{
	ssh_io_lock(ssh);
	drain_stderr(ssh);
	bool said = memmem(ssh->errbuf, ssh->errlen, needle, strlen(needle));
	ssh_io_unlock(ssh);
	return said;
}

/*
 * cmd_name_len -- length of the program name that starts an RPMEM_CMD
 * entry (what the remote shell looks up on its PATH); all of it when it
 * is more than a program and its arguments
 */
static int
cmd_name_len(const char *cmd)
{
	if (cmd[strcspn(cmd, ";&|<>()$`'\"=")])
		return (int)strlen(cmd);
	return (int)strcspn(cmd, " \t");
}

/*
 * explain -- the child's last words, with what its exit status says when
 * the remote command never ran: ssh's own failure (255: no route, no
 * name, refused, not logged in) or the remote shell's (127: not found
 * on the PATH of a non-interactive session, 126: not executable)
 */
static void
explain(struct ssh *ssh, int status, char *buf, size_t len)
{
	const char *last = ssh_last_error(ssh);
	const char *sep = *last ? ": " : "";
	int n = cmd_name_len(ssh->cmd);
	switch (status) {
	case 255:
		snprintf(buf, len, "ssh to %s failed%s%s", ssh->host, sep,
			last);
		break;
	case 127:
		if (memchr(ssh->cmd, '/', (size_t)n))
			snprintf(buf, len, "'%.*s' not found on %s%s%s", n,
				ssh->cmd, ssh->host, sep, last);
		else
			snprintf(buf, len, "'%.*s' is not on the PATH of a "
				"non-interactive ssh session on %s (install "
				"rpmemd there, or name its path in RPMEM_CMD)"
				"%s%s", n, ssh->cmd, ssh->host, sep, last);
		break;
	case 126:
		snprintf(buf, len, "'%.*s' cannot be executed on %s%s%s", n,
			ssh->cmd, ssh->host, sep, last);
		break;
	default:
		snprintf(buf, len, "%s", last);
		break;
	}
}

/* ssh_host_unknown -- does `node` fail to resolve?  Why, in `why` */
bool
ssh_host_unknown(const char *node, char *why, size_t len)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
	};
	struct addrinfo *ai;
	int r = getaddrinfo(node, NULL, &hints, &ai);
	if (r == 0) {
		freeaddrinfo(ai);
		return false;
	}
	snprintf(why, len, "%s", r == EAI_SYSTEM ? strerror(errno) :
		gai_strerror(r));
	return true;
}

/* ssh_close -- close the channel, reap the child, keep its last words */
int
ssh_close(struct ssh *ssh, int timeout_ms, char *lasterr, size_t len)
{
	int ret = ssh_reap(ssh, timeout_ms);
	if (lasterr && len)
		explain(ssh, ret, lasterr, len);
	if (ssh->err >= 0)
		close(ssh->err);
	pthread_mutex_destroy(&ssh->io);
	free(ssh);
	return ret;
}

/* ssh_run -- run `args` on `t` to its end; 0, or -errno and `msg` */
int
ssh_run(const struct target *t, const char *args, int timeout_ms,
		const char *doing, const char *set, char *msg, size_t len)
{
	struct ssh *ssh;
	int r = ssh_open(t, args, false, &ssh);
	if (r) {
		snprintf(msg, len, "starting ssh to %s: %s", t->node,
			strerror(-r));
		return r;
	}
	r = ssh_wait_eof(ssh, timeout_ms);
	char last[1024];
	int status = ssh_close(ssh, timeout_ms, last, sizeof(last));
	if (r == -EPROTO) {
		snprintf(msg, len, "%s '%s' on %s: unexpected output", doing,
			set, t->node);
		return -EPROTO;
	}
	if (r) {
		snprintf(msg, len, "%s '%s' on %s: %s", doing, set, t->node,
			r == -ETIMEDOUT ? "timed out" : strerror(-r));
		return r;
	}
	if (status == 0)
		return 0;
	int err = status > 0 && status < 126 ? status : ECONNRESET;
	snprintf(msg, len, "%s '%s' on %s failed: %s", doing, set, t->node,
		*last ? last : strerror(err));
	return -err;
}
