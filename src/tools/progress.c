/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * progress.c -- progress of rpmem sync: a bar on a terminal, lines for
 * scripts
 *
 * Lines go to standard output and are flushed one by one, so a reader
 * at the other end of a pipe sees each step as it starts: the test of an
 * interrupted sync kills the tool on its first "action=copy" line.
 */
#include <stdio.h>
#include <unistd.h>

#include "clock.h"
#include "progress.h"

#define LINE_STEP_MIN ((size_t)1 << 20)	/* at most a line per MiB */
#define LINE_STEPS 64			/* and about 64 lines per step */
#define BAR_WIDTH 30
#define BAR_MS 100			/* redraw at most 10 times a second */

/* progress_init -- bar when stderr is a terminal */
void
progress_init(struct progress *p)
{
	*p = (struct progress){ .tty = isatty(STDERR_FILENO) == 1 };
}

/* line_step -- bytes between two lines of one step */
static size_t
line_step(size_t total)
{
	return total / LINE_STEPS > LINE_STEP_MIN ? total / LINE_STEPS :
		LINE_STEP_MIN;
}

/* draw -- the bar of the current step */
static void
draw(struct progress *p, size_t bytes)
{
	unsigned pct = p->total ? (unsigned)((double)bytes * 100.0 /
		(double)p->total) : 100;
	unsigned fill = pct * BAR_WIDTH / 100;
	char bar[BAR_WIDTH + 1];
	for (unsigned i = 0; i < BAR_WIDTH; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[BAR_WIDTH] = '\0';
	fprintf(stderr, "\rreplica %u %-7s [%s] %3u%% %.1f/%.1f MiB\033[K",
		p->replica, p->action, bar, pct,
		(double)bytes / (1024.0 * 1024.0),
		(double)p->total / (1024.0 * 1024.0));
	p->drawn = true;
	p->last_ms = clock_ms();
}

/* line -- one step line on stdout */
static void
line(struct progress *p, size_t bytes, const char *extra)
{
	printf("sync replica=%u action=%s bytes=%zu total=%zu%s%s\n",
		p->replica, p->action, bytes, p->total, extra ? " " : "",
		extra ? extra : "");
	fflush(stdout);
}

/* progress_step -- a new step */
void
progress_step(struct progress *p, unsigned replica, const char *action,
		size_t bytes, size_t total, const char *extra)
{
	p->replica = replica;
	p->action = action;
	p->total = total;
	p->next = bytes + line_step(total);
	p->shown = bytes;
	if (p->tty) {
		progress_clear(p);
		if (total)
			draw(p, bytes);
	} else
		line(p, bytes, extra);
}

/* progress_update -- advance the current step */
void
progress_update(struct progress *p, size_t bytes)
{
	if (p->tty) {
		if (p->total && (bytes >= p->total ||
				clock_ms() - p->last_ms >= BAR_MS))
			draw(p, bytes);
		return;
	}
	if (bytes == p->shown || (bytes < p->next && bytes < p->total))
		return;
	line(p, bytes, NULL);
	p->shown = bytes;
	p->next = bytes + line_step(p->total);
}

/* progress_clear -- end the bar's line */
void
progress_clear(struct progress *p)
{
	if (p->tty && p->drawn) {
		fprintf(stderr, "\r\033[K");
		p->drawn = false;
	}
}
