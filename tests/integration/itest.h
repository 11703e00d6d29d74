/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * itest.h -- small helpers the end-to-end Check programs share
 */
#ifndef RPMEM_ITEST_H
#define RPMEM_ITEST_H 1

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "librpmem.h"

/* errmsg -- rpmem_errormsg(), never NULL */
static inline const char *
errmsg(void)
{
	const char *m = rpmem_errormsg();
	return m ? m : "(null)";
}

/* ename -- symbolic name of errno value `e` */
static inline const char *
ename(int e)
{
	const char *n = e ? strerrorname_np(e) : "0";
	return n ? n : "E?";
}

/* fmt -- snprintf that fails the test instead of truncating */
static inline void fmt(char *buf, size_t len, const char *f, ...)
	__attribute__((format(printf, 3, 4)));
static inline void
fmt(char *buf, size_t len, const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	int n = vsnprintf(buf, len, f, ap);
	va_end(ap);
	ck_assert_msg(n >= 0 && (size_t)n < len, "string too long: %s", buf);
}

#endif /* RPMEM_ITEST_H */
