/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * soak_stray.c -- strangers at a lane port while rpmemd admits lanes
 * (scenario S2): plain TCP garbage, a silent connection, libfabric
 * connection requests with no data and with random data
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fi_errno.h>

#include "soak.h"

#define ANSWER_MS 5000		/* a refusal comes at once */

/*
 * soak_stray -- strangers at a lane port during admission; returns how
 * many were let in, or -1 when the port could not be reached at all
 */
int
soak_stray(const char *prov, const char *addr, unsigned port,
		uint64_t *rng, int *silent, char *why, size_t whylen)
{
	why[0] = '\0';
	int fd = tu_tcp_stranger(addr, port);
	if (fd < 0) {
		snprintf(why, whylen, "connect to %s:%u: %s", addr, port,
			strerror(-fd));
		return -1;
	}
	unsigned char junk[256];
	size_t n = 1 + tu_rnd(rng) % sizeof(junk);
	for (size_t i = 0; i < n; i++)
		junk[i] = (unsigned char)tu_rnd(rng);
	if (write(fd, junk, n) < 0) {
		/* a refusal may already have closed it: fine */
	}
	close(fd);
	*silent = tu_tcp_stranger(addr, port);

	/* no data, a few bytes, the size of a real request, random size */
	size_t lens[] = { 0, 4, 24, 1 + tu_rnd(rng) % 64 };
	int in = 0;
	for (size_t i = 0; i < TU_NELEMS(lens); i++) {
		unsigned char data[64];
		for (size_t j = 0; j < lens[i]; j++)
			data[j] = (unsigned char)tu_rnd(rng);
		int r = tu_fabric_stranger(prov, addr, port,
			lens[i] ? data : NULL, lens[i], ANSWER_MS);
		if (r == 1) {
			in++;
			snprintf(why, whylen, "a stranger with %zu bytes of "
				"connection data was let in", lens[i]);
		} else if (r < 0 && !why[0]) {
			snprintf(why, whylen, "stranger with %zu bytes: %s",
				lens[i], fi_strerror(-r));
		}
	}
	return in;
}
