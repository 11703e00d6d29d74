/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_target.c -- libFuzzer harness for the replica target parser
 *
 * An accepted target must satisfy the parser's promises (nothing ssh
 * could take for an option, a port in range) and must parse back to
 * itself once reassembled, so two spellings cannot mean different hosts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target.h"

#define INPUT_MAX 1024

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* check_fields -- the invariants of an accepted target */
static void
check_fields(const struct target *t)
{
	if (t->node[0] == '\0' || t->node[0] == '-' || t->user[0] == '-')
		abort();
	if (strchr(t->user, '@') != NULL || strchr(t->node, '@') != NULL)
		abort();

	if (t->service[0] != '\0') {
		char *end;
		unsigned long port = strtoul(t->service, &end, 10);
		if (*end != '\0' || port == 0 || port > 65535)
			abort();
	}
}

/* reassemble -- spell `t` back as `[user@]host[:port]` */
static void
reassemble(const struct target *t, char *buf, size_t len)
{
	/* a host with a colon needs brackets, or a port would be lost */
	int colon = strchr(t->node, ':') != NULL;
	int n = snprintf(buf, len, "%s%s%s%s%s%s%s", t->user,
			t->user[0] ? "@" : "", colon ? "[" : "", t->node,
			colon ? "]" : "", t->service[0] ? ":" : "", t->service);
	if (n < 0 || (size_t)n >= len)
		abort();
}

/* LLVMFuzzerTestOneInput -- parse one input as a target string */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char str[INPUT_MAX + 1];
	char again[INPUT_MAX];
	struct target t, u;

	if (size > INPUT_MAX)
		return 0;
	memcpy(str, data, size);
	str[size] = '\0';

	if (target_parse(str, &t) != 0)
		return 0;

	check_fields(&t);
	reassemble(&t, again, sizeof(again));
	if (target_parse(again, &u) != 0 || memcmp(&t, &u, sizeof(t)) != 0)
		abort();

	return 0;
}
