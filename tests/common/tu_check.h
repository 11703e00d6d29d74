/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tu_check.h -- what the Check programs share (tu_check.c)
 */
#ifndef RPMEM_TU_CHECK_H
#define RPMEM_TU_CHECK_H 1

#include <check.h>

/* tu_run -- run every test of `s`; EXIT_SUCCESS or EXIT_FAILURE */
int tu_run(Suite *s);

#endif /* RPMEM_TU_CHECK_H */
