/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * clock.h -- monotonic milliseconds for deadlines
 */
#ifndef RPMEM_CLOCK_H
#define RPMEM_CLOCK_H 1

#include <time.h>

/* clock_ms -- CLOCK_MONOTONIC in milliseconds */
static inline long long
clock_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#endif /* RPMEM_CLOCK_H */
