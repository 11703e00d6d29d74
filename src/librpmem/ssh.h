/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ssh.h -- the ssh child that carries the out-of-band channel
 *
 * The child's stdin, stdout and stderr are AF_UNIX socket pairs so the
 * parent can use MSG_NOSIGNAL and poll them together.  Whatever the
 * remote side writes to stderr is kept (last 4 KiB) and its last line
 * becomes the error message when the channel fails.
 */
#ifndef RPMEM_SSH_H
#define RPMEM_SSH_H 1

#include <stdbool.h>
#include <stddef.h>

#include "target.h"

struct ssh;

/*
 * ssh_cmd_init -- parse RPMEM_SSH and RPMEM_CMD (a '|' separated list)
 * once, when the library is loaded; ssh_cmd_fini frees them.
 */
int ssh_cmd_init(void);
void ssh_cmd_fini(void);

/*
 * ssh_open -- start `ssh [-p port] -T [-4] -oBatchMode=yes -- host
 * "<next RPMEM_CMD>[ args]"`; `args` is appended verbatim (the caller
 * quotes what it passes).
 */
int ssh_open(const struct target *t, const char *args, bool ipv4,
		struct ssh **sshp);

/* ssh_send -- write all of buf; -ECONNRESET when the channel is gone */
int ssh_send(struct ssh *ssh, const void *buf, size_t len, int timeout_ms);

/*
 * ssh_recv -- read exactly len bytes within timeout_ms: -ECONNRESET on
 * EOF, -ETIMEDOUT when the time runs out.
 */
int ssh_recv(struct ssh *ssh, void *buf, size_t len, int timeout_ms);

/* ssh_heard -- when stdout last gave bytes, in clock_ms() time */
long long ssh_heard(struct ssh *ssh);

/* ssh_heard_now -- count the remote side as heard now (no verdict) */
void ssh_heard_now(struct ssh *ssh);

/*
 * ssh_silence, ssh_set_silence -- how long the remote side may stay
 * silent once it beats (obc_beat): a read that waits longer fails with
 * -ETIMEDOUT; 0 (the start): it does not beat
 */
int ssh_silence(struct ssh *ssh);
void ssh_set_silence(struct ssh *ssh, int ms);

/*
 * ssh_watch_gap -- for the one thread that watches the beats: the time
 * since its previous call (0 the first time)
 */
long long ssh_watch_gap(struct ssh *ssh);

/* ssh_host -- the [user@]node the channel goes to */
const char *ssh_host(const struct ssh *ssh);

/*
 * ssh_io_lock, ssh_io_trylock, ssh_io_unlock -- one reader of stdout
 * (and of stderr's tail) at a time: a request and its answer, or the
 * heartbeat's watch; trylock is true when it took the lock
 */
void ssh_io_lock(struct ssh *ssh);
bool ssh_io_trylock(struct ssh *ssh);
void ssh_io_unlock(struct ssh *ssh);

/* ssh_wait_eof -- wait for EOF on stdout; -EPROTO if data arrives */
int ssh_wait_eof(struct ssh *ssh, int timeout_ms);

/* ssh_fd -- the stdout socket, for callers that poll it themselves */
int ssh_fd(struct ssh *ssh);

/*
 * ssh_hangup -- end our half of the channel (EOF to the remote side)
 * without reaping the child; safe from any thread.
 */
void ssh_hangup(struct ssh *ssh);

/*
 * ssh_last_error -- the last non-empty line the remote side wrote to
 * stderr (drains what is pending first), "" when none.
 */
const char *ssh_last_error(struct ssh *ssh);

/*
 * ssh_reap -- close stdin and stdout, reap the child (killing it after
 * timeout_ms), keep stderr readable; its exit status, -1 when killed.
 * Later calls return the same status.
 */
int ssh_reap(struct ssh *ssh, int timeout_ms);

/*
 * ssh_said -- does what the remote side wrote to stderr (its last 4 KiB)
 * contain `needle`?  Complete once the child is reaped.
 */
bool ssh_said(struct ssh *ssh, const char *needle);

/*
 * ssh_close -- ssh_reap, then free; returns the exit status.  The
 * child's last stderr line is copied to `lasterr` when not NULL, after
 * what the status says when the remote command never ran: ssh failed to
 * reach or log in to the host (255), the command is not on the PATH of
 * a non-interactive session there (127) or cannot be executed (126);
 * each names the host.
 */
int ssh_close(struct ssh *ssh, int timeout_ms, char *lasterr, size_t len);

/*
 * ssh_run -- run `args` on `t` to its end (ssh_open, ssh_wait_eof,
 * ssh_close), as rpmem_remove and rpmem_outdate_remote run rpmemd: 0
 * when it exits 0; otherwise -errno to report (its exit status, which
 * rpmemd makes an errno; 126, 127 and 255 come from the shell and ssh:
 * -ECONNRESET) and in `msg` "DOING 'SET' on NODE: why" or "starting
 * ssh to NODE: why"
 */
int ssh_run(const struct target *t, const char *args, int timeout_ms,
		const char *doing, const char *set, char *msg, size_t len);

/*
 * ssh_host_unknown -- true when `node` does not resolve to an address;
 * resolver's reason in `why`
 */
bool ssh_host_unknown(const char *node, char *why, size_t len);

/* ssh_shell_quote -- append `str` single-quoted for a POSIX shell */
int ssh_shell_quote(char *buf, size_t len, const char *str);

#endif /* RPMEM_SSH_H */
