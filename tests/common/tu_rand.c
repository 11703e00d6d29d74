/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tu_rand.c -- the tests' reproducible pseudo-random numbers
 */
#include <stdint.h>

#include "tu.h"

/* tu_mix -- splitmix64's output for state x: a well-spread value */
uint64_t
tu_mix(uint64_t x)
{
	uint64_t z = x + 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* tu_rnd -- splitmix64 step */
uint64_t
tu_rnd(uint64_t *s)
{
	uint64_t z = tu_mix(*s);
	*s += 0x9e3779b97f4a7c15ULL;
	return z;
}
