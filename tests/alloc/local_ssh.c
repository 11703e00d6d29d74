/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * local_ssh.c -- stands in for ssh (RPMEM_SSH) in R17's loops: runs the
 * remote command on this host as sshd would, without a login
 *
 *   local_ssh [-p PORT] -T [-4] -oBatchMode=yes -- HOST COMMAND
 *
 * R17 is about allocations; an ssh login costs about a second here and
 * the loops make hundreds of sessions.  The command runs under
 * /bin/sh -c with SSH_CONNECTION naming loopback (rpmemd listens on the
 * address it names) and without LD_PRELOAD: what the client was given
 * is not for the daemon, which the command itself may preload.  The
 * command's exit status (128 + N for signal N) is appended to the file
 * $ALLOC_STATUS and is ours.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* record -- append the command's status to $ALLOC_STATUS */
static void
record(int status)
{
	const char *path = getenv("ALLOC_STATUS");
	if (!path || !*path)
		return;
	FILE *f = fopen(path, "a");
	if (!f)
		return;
	fprintf(f, "%d\n", status);
	fclose(f);
}

int
main(int argc, char *argv[])
{
	int i = 1;
	while (i < argc && strcmp(argv[i], "--") != 0)
		i++;
	if (argc - i != 3) {
		fprintf(stderr, "local_ssh: usage: local_ssh [OPTION]... -- "
			"HOST COMMAND\n");
		return 255;
	}
	const char *cmd = argv[i + 2];
	unsetenv("LD_PRELOAD");
	setenv("SSH_CONNECTION", "127.0.0.1 0 127.0.0.1 0", 1);
	pid_t pid = fork();
	if (pid < 0) {
		perror("local_ssh: fork");
		return 255;
	}
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		perror("local_ssh: /bin/sh");
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		;
	int status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	record(status);
	return status;
}
