/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * beat.h -- rpmemd's heartbeat (minor 6): a thread that writes a bare
 * BEAT_RESP on the out-of-band channel every interval, so that the
 * client tells a stopped or hung rpmemd from an idle one.  It runs
 * beside the session's requests and the lanes' work and blocks on
 * neither: it stops beating only when the whole process does.
 */
#ifndef RPMEMD_BEAT_H
#define RPMEMD_BEAT_H 1

struct beat;

/*
 * beat_start -- beat on `out` every `ms` milliseconds (the first beat
 * one interval from now); a running one changes its interval.  0 or
 * -errno.
 */
int beat_start(struct beat **bp, int out, unsigned ms);

/* beat_stop -- no beat after it returns; NULL is fine; frees *bp */
void beat_stop(struct beat **bp);

#endif /* RPMEMD_BEAT_H */
