/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tu_time.c -- the monotonic clock and short naps of the test programs
 */
#include <errno.h>
#include <time.h>

#include "tu.h"

/* tu_now_ms -- CLOCK_MONOTONIC in milliseconds */
long long
tu_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* tu_now_us -- CLOCK_MONOTONIC in microseconds */
long long
tu_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* tu_nap -- sleep for `ms` milliseconds, resumed after a signal */
void
tu_nap(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}
