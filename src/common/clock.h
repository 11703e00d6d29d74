/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * clock.h -- monotonic milliseconds (and nanoseconds) for deadlines
 */
#ifndef RPMEM_CLOCK_H
#define RPMEM_CLOCK_H 1

#include <stdint.h>
#include <time.h>

/* clock_ms -- CLOCK_MONOTONIC in milliseconds */
static inline long long
clock_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* clock_ns -- CLOCK_MONOTONIC in nanoseconds */
static inline uint64_t
clock_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif /* RPMEM_CLOCK_H */
