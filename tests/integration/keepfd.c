/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * keepfd.c -- an LD_PRELOAD shim that opens a descriptor before main(),
 * as a library's log stream does, for daemon_pmdk.c: its constructor
 * opens $KEEPFD_PATH as descriptor KEEPFD_FD; its destructor writes to
 * it, which reaches the file only if nobody closed the descriptor
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KEEPFD_FD 42
#define KEEPFD_LINE "written at exit through the descriptor\n"

/* keepfd_open -- the library's own descriptor, opened before main() */
__attribute__((constructor))
static void
keepfd_open(void)
{
	const char *path = getenv("KEEPFD_PATH");
	if (!path)
		return;
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);
	if (fd < 0 || fd == KEEPFD_FD)
		return;
	(void) dup2(fd, KEEPFD_FD);
	(void) close(fd);
}

/* keepfd_write -- use the descriptor once more at exit */
__attribute__((destructor))
static void
keepfd_write(void)
{
	if (getenv("KEEPFD_PATH"))
		(void) !write(KEEPFD_FD, KEEPFD_LINE, strlen(KEEPFD_LINE));
}
