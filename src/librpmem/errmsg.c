/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * errmsg.c -- the calling thread's last error message, and errno
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "rpmem.h"

static __thread char Errmsg[ERRMSG_MAX];

/* vset_err -- format this thread's message; '!' appends strerror(err) */
static void
vset_err(int err, const char *fmt, va_list ap)
{
	bool with_errno = fmt[0] == '!';
	if (with_errno)
		fmt++;
	int n = vsnprintf(Errmsg, sizeof(Errmsg), fmt, ap);
	if (with_errno && n >= 0 && (size_t)n < sizeof(Errmsg)) {
		char ebuf[128];
		snprintf(Errmsg + n, sizeof(Errmsg) - (size_t)n, ": %s",
			strerror_r(err, ebuf, sizeof(ebuf)));
	}
	log_err("%s", Errmsg);
}

/* fail -- set the message and errno = err; returns -1 for the caller */
int
fail(int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vset_err(err, fmt, ap);
	va_end(ap);
	errno = err;
	return -1;
}

/* errno_of -- errno for a negative internal return */
int
errno_of(int r)
{
	return r < 0 ? -r : r;
}

/*
 * channel_fail -- message for a dead out-of-band channel: the remote
 * side's own last words when it left some.
 */
int
channel_fail(int r, const char *what, const char *last)
{
	if (r == -ETIMEDOUT)
		return fail(ETIMEDOUT, "%s: no answer from the remote side "
			"within %d s", what, Env.timeout_ms / 1000);
	if (*last)
		return fail(errno_of(r), "%s: %s", what, last);
	return fail(errno_of(r), "!%s", what);
}

/* rpmem_check_version -- NULL when this library provides the version */
API const char *
rpmem_check_version(unsigned major_required, unsigned minor_required)
{
	if (major_required != RPMEM_MAJOR_VERSION) {
		fail(EINVAL, "librpmem major version mismatch (need %u, "
			"found %u)", major_required, RPMEM_MAJOR_VERSION);
		return Errmsg;
	}
	if (minor_required > RPMEM_MINOR_VERSION) {
		fail(EINVAL, "librpmem minor version mismatch (need %u, "
			"found %u)", minor_required, RPMEM_MINOR_VERSION);
		return Errmsg;
	}
	return NULL;
}

/* rpmem_errormsg -- the calling thread's last error message */
API const char *
rpmem_errormsg(void)
{
	return Errmsg;
}


/* rpmem_errmsg_save -- copy this thread's message into buf[ERRMSG_MAX] */
void
rpmem_errmsg_save(char *buf)
{
	memcpy(buf, Errmsg, ERRMSG_MAX);
}

/* rpmem_errmsg_restore -- make a saved message this thread's again */
void
rpmem_errmsg_restore(const char *buf)
{
	memcpy(Errmsg, buf, ERRMSG_MAX);
}
