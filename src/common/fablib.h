/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fablib.h -- libfabric's entry points, the library loaded when a process
 * first needs a fabric rather than when it starts
 *
 * Linked at exec, libfabric costs every process that links it 0.2 s
 * before main: Debian's libfabric1 pulls in libpsm-infinipath1, whose
 * constructor calibrates a clock with some 700 sleeps.  `rpmem status`,
 * the cluster agent's every monitor, `rpmemd --version` and an rpmemd
 * that refuses a session never open a fabric, so they load it never.
 *
 * Only these five of libfabric's calls are functions; all others are
 * inline calls through the operation tables of the objects these return
 * (rdma/fabric.h), so they need no loading of their own.  Each is looked
 * up at the symbol version linking against libfabric 1.17's headers
 * records, as the dynamic linker would have bound it.
 */
#ifndef RPMEM_FABLIB_H
#define RPMEM_FABLIB_H 1

#include <stdint.h>

#include <rdma/fabric.h>

/*
 * fablib_load -- load libfabric unless it is; 0, or when it cannot be
 * (logged; fablib_error says why) -ENOMEM if memory ran out, else
 * -ELIBACC.  Each call below loads it first and fails the same way.
 */
int fablib_load(void);

/* fablib_error -- why libfabric could not be loaded; "" when it was */
const char *fablib_error(void);

/* fi_getinfo */
int fablib_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints,
		struct fi_info **info);

/* fi_freeinfo; nothing to do before libfabric is loaded */
void fablib_freeinfo(struct fi_info *info);

/* fi_dupinfo (fi_allocinfo with NULL); NULL when it cannot be loaded */
struct fi_info *fablib_dupinfo(const struct fi_info *info);

/* fi_fabric */
int fablib_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		void *context);

/* fi_strerror; strerror's text before libfabric is loaded */
const char *fablib_strerror(int err);

#endif /* RPMEM_FABLIB_H */
