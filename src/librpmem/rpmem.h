/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpmem.h -- librpmem internals shared by its modules
 */
#ifndef RPMEM_RPMEM_H
#define RPMEM_RPMEM_H 1

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "fabric.h"
#include "librpmem.h"
#include "proto.h"
#include "ssh.h"
#include "target.h"

/*
 * Handle states.  Every public call first checks the state: data calls
 * need READY; a BROKEN handle answers every call but close with its
 * sticky errno.  Only rpmem_create/rpmem_open see an OPENING one.
 */
enum rpmem_state {
	RPMEM_ST_OPENING,	/* session being set up */
	RPMEM_ST_READY,		/* out-of-band done, lanes usable */
	RPMEM_ST_BROKEN,	/* channel or lane failed: sticky error */
};

struct rpmem_pool {
	_Atomic int state;		/* enum rpmem_state */
	_Atomic int error;		/* errno once BROKEN */
	struct target target;
	char desc[PROTO_DESC_MAX];
	struct ssh *ssh;
	struct fabric *fab;
	void *pool_addr;
	size_t pool_size;
	unsigned nlanes;
	bool no_headers;		/* whole pool writable */
	bool created;			/* by rpmem_create */
	bool pmdk;			/* rpmemd is PMDK 1.12's (0.1) */
	uint32_t provider;
	struct proto_resp resp;		/* create/open answer */
};

#endif /* RPMEM_RPMEM_H */
