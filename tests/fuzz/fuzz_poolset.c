/* SPDX-License-Identifier: BSD-3-Clause */
/* fuzz_poolset.c -- libFuzzer harness for the poolset file parser */

#include <stddef.h>
#include <stdint.h>

#include "poolset.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* LLVMFuzzerTestOneInput -- parse one input, use the result, free it */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[POOLSET_ERR_MAX];
	struct poolset *set = NULL;

	if (poolset_parse_buf("fuzz.set", (const char *)data, size, &set, err,
			sizeof(err)) != 0)
		return 0;

	/* walk the result so that a bad structure is seen by the sanitizer */
	for (unsigned r = 0; r < set->nreplicas; r++)
		(void)poolset_replica_size(set, r);
	(void)poolset_has_remote(set);
	poolset_free(set);
	return 0;
}
