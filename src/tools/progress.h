/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * progress.h -- what rpmem sync is doing: a bar on a terminal, otherwise
 * one parseable line per step on standard output (see rpmem(1))
 *
 *	sync replica=R action=A bytes=N total=M [key=value...]
 */
#ifndef RPMEM_PROGRESS_H
#define RPMEM_PROGRESS_H 1

#include <stdbool.h>
#include <stddef.h>

struct progress {
	bool tty;		/* stderr is a terminal: draw a bar there */
	bool drawn;		/* a bar is on the current line */
	unsigned replica;
	const char *action;
	size_t total;
	size_t next;		/* bytes at which the next line is due */
	size_t shown;		/* bytes of the last line or bar */
	long long last_ms;	/* when the bar was last drawn */
};

/* progress_init -- decide between the bar and the lines */
void progress_init(struct progress *p);

/*
 * progress_step -- a new step of replica R: one line (with `extra`
 * appended when not NULL), or a fresh bar
 */
void progress_step(struct progress *p, unsigned replica, const char *action,
		size_t bytes, size_t total, const char *extra);

/* progress_update -- bytes done in the current step, throttled */
void progress_update(struct progress *p, size_t bytes);

/* progress_clear -- take the bar off the terminal before other output */
void progress_clear(struct progress *p);

#endif /* RPMEM_PROGRESS_H */
