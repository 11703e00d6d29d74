/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * build_kind.h -- whether this build can give figures that mean anything
 */
#ifndef RPMEM_BUILD_KIND_H
#define RPMEM_BUILD_KIND_H 1

/* the exit status of a benchmark that refuses to measure this build */
#define EXIT_REFUSED 3

const char *build_kind(void);
int build_kind_check(const char *me);

#endif /* RPMEM_BUILD_KIND_H */
