/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer_handlers.c -- the fence-peer and unfence-peer handlers librpmem runs
 *
 * Before a master goes on without its replica, RPMEM_FENCE_PEER_CMD runs
 * through /bin/sh with what it needs in its environment (as DRBD hands
 * its handlers the resource and the peer): RPMEM_FENCE_TARGET,
 * RPMEM_FENCE_POOL_SET, RPMEM_FENCE_POOLSET_UUID, RPMEM_FENCE_REASON,
 * RPMEM_FENCE_GENERATION: the master copy's current generation (empty
 * when it keeps none), the newest a stale replica can hold, so that a
 * fence can say which generation its copy must have moved past, and
 * RPMEM_FENCE_REPLICATION: sync or async, the replica's mode (an async
 * one in READY may be behind by its lag: its promotion score is lower).
 * Exit 0 means the replica can no longer be taken for up to date
 * (outdated, or forbidden to be promoted); anything else, or no exit
 * within the freeze timeout, means it could not be fenced.  Once the
 * replica is in sync again, RPMEM_UNFENCE_PEER_CMD runs the same way
 * (as DRBD's unfence-peer): it lifts what the fence placed; its exit
 * only goes to the log, a monitor being the safety net.  Their stdin is
 * /dev/null and their stdout goes to stderr: the application owns
 * stdout.
 */
#include <errno.h>
#include <stdbool.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "async.h"
#include "repl_int.h"
#include "shspawn.h"

#define UUID_STR 37

/* uuid_str -- 16 bytes as 8-4-4-4-12 hex */
static void
uuid_str(const unsigned char *u, char out[UUID_STR])
{
	snprintf(out, UUID_STR, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		"%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4], u[5],
		u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
		u[15]);
}

/*
 * handler_env -- the environment with our variables (replacing any of
 * the same name); NULL when out of memory.  Free with spawn_env_free.
 */
static char **
handler_env(RPMEMpool *rpp, const char *reason)
{
	char uuid[UUID_STR] = "";
	const struct rstate_record *rec = &rpp->repl->rec;
	if (rec->has_attr)
		uuid_str(rec->attr.poolset_uuid, uuid);
	char gen[GEN_STR] = "";
	struct gen m;
	if (mgen_get(rpp, &m) == 0 && m.current)
		gen_str(m.current, gen);
	const char *const vals[][2] = {
		{ "RPMEM_FENCE_TARGET", rpp->target_str },
		{ "RPMEM_FENCE_POOL_SET", rpp->desc },
		{ "RPMEM_FENCE_POOLSET_UUID", uuid },
		{ "RPMEM_FENCE_REASON", reason },
		{ "RPMEM_FENCE_GENERATION", gen },
		{ "RPMEM_FENCE_REPLICATION", async_on(rpp) ? "async" : "sync" },
	};
	return spawn_env(vals, sizeof(vals) / sizeof(vals[0]),
		"RPMEM_FENCE_");
}

/*
 * wait_child -- its exit status within timeout_ms (pidfd), else it is
 * killed: -ETIMEDOUT; killed too when `stop_fd` turns readable (the
 * handle closes): -ECANCELED
 */
static int
wait_child(pid_t pid, int timeout_ms, int stop_fd)
{
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	bool stopped = false;
	if (pfd >= 0) {
		struct pollfd p[2] = {
			{ .fd = pfd, .events = POLLIN },
			{ .fd = stop_fd, .events = POLLIN },
		};
		long long deadline = clock_ms() + timeout_ms;
		int r;
		do {
			long long left = deadline - clock_ms();
			r = left > 0 ? poll(p, stop_fd >= 0 ? 2 : 1,
				(int)left) : 0;
		} while (r < 0 && errno == EINTR);
		close(pfd);
		stopped = r > 0 && !(p[0].revents & POLLIN);
		if (r == 0 || stopped)
			kill(pid, SIGKILL);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (stopped)
		return -ECANCELED;
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		return -ETIMEDOUT;
	return status;
}

/*
 * run -- run handler `cmd` (`what`: "fence-peer", "unfence-peer") with
 * `reason`: 0 when it exited 0, else -1 and why in msg
 */
static int
run(RPMEMpool *rpp, const char *what, const char *cmd, const char *reason,
		char *msg, size_t len)
{
	struct repl *rp = rpp->repl;
	char **env = handler_env(rpp, reason);
	if (!env) {
		snprintf(msg, len, "%s handler: %s", what, strerror(ENOMEM));
		return -1;
	}
	pid_t pid;
	log_notice("'%s' on %s: running the %s handler: %s", rpp->desc,
		rpp->target.node, what, cmd);
	int r = spawn_sh(cmd, env, NULL, false, &pid);
	spawn_env_free(env);
	if (r) {
		snprintf(msg, len, "%s handler '%s' did not start: %s", what,
			cmd, strerror(r));
		log_err("%s", msg);
		return -1;
	}
	int status = wait_child(pid, rp->freeze_ms, rp->stop_fd);
	if (status == 0)
		return 0;
	if (status == -ETIMEDOUT)
		snprintf(msg, len, "%s handler '%s' did not finish within "
			"%d s", what, cmd, rp->freeze_ms / 1000);
	else if (status < 0)
		snprintf(msg, len, "%s handler '%s': %s", what, cmd,
			strerror(-status));
	else if (WIFEXITED(status))
		snprintf(msg, len, "%s handler '%s' exited %d", what, cmd,
			WEXITSTATUS(status));
	else
		snprintf(msg, len, "%s handler '%s' killed by signal %d",
			what, cmd, WTERMSIG(status));
	log_err("'%s' on %s: %s", rpp->desc, rpp->target.node, msg);
	return -1;
}

/* fence_peer -- run the fence-peer handler: 0 when it exited 0 */
int
fence_peer(RPMEMpool *rpp, const char *reason, char *msg, size_t len)
{
	struct repl *rp = rpp->repl;
	if (!rp->fence_cmd) {
		snprintf(msg, len, "no fence-peer handler");
		return -1;
	}
	if (run(rpp, "fence-peer", rp->fence_cmd, reason, msg, len)) {
		size_t n = strlen(msg);
		snprintf(msg + n, len - n, ": the replica is not fenced");
		return -1;
	}
	log_notice("'%s' on %s: the fence-peer handler fenced the replica",
		rpp->desc, rpp->target.node);
	return 0;
}

/* unfence_peer -- run the unfence-peer handler: 0 when it exited 0 */
int
unfence_peer(RPMEMpool *rpp, char *msg, size_t len)
{
	struct repl *rp = rpp->repl;
	if (!rp->unfence_cmd) {
		snprintf(msg, len, "no unfence-peer handler");
		return -1;
	}
	if (run(rpp, "unfence-peer", rp->unfence_cmd, "in sync", msg, len))
		return -1;
	log_notice("'%s' on %s: the unfence-peer handler lifted the fence",
		rpp->desc, rpp->target.node);
	return 0;
}
