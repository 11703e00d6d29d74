/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log.c -- levelled logging to stderr, a file or syslog
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "log.h"

#define LOG_LINE_MAX 8192

static const char *const level_names[LOG_LVL_MAX] = {
	[LOG_LVL_ERR] = "err",
	[LOG_LVL_WARN] = "warn",
	[LOG_LVL_NOTICE] = "notice",
	[LOG_LVL_INFO] = "info",
	[LOG_LVL_DEBUG] = "debug",
};

static const int syslog_prio[LOG_LVL_MAX] = {
	[LOG_LVL_ERR] = LOG_ERR,
	[LOG_LVL_WARN] = LOG_WARNING,
	[LOG_LVL_NOTICE] = LOG_NOTICE,
	[LOG_LVL_INFO] = LOG_INFO,
	[LOG_LVL_DEBUG] = LOG_DEBUG,
};

static struct {
	pthread_mutex_t lock;
	enum log_sink sink;
	enum log_level level;
	int fd;			/* LOG_SINK_FILE */
	char prefix[32];
} Log = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.sink = LOG_SINK_NONE,
	.level = LOG_LVL_ERR,
	.fd = -1,
};

/* log_close_sink -- release the current sink; called with the lock held */
static void
log_close_sink(void)
{
	if (Log.sink == LOG_SINK_FILE && Log.fd >= 0)
		close(Log.fd);
	else if (Log.sink == LOG_SINK_SYSLOG)
		closelog();
	Log.fd = -1;
	Log.sink = LOG_SINK_NONE;
}

/* log_init -- start logging to `sink` (file and syslog set separately) */
void
log_init(const char *prefix, enum log_sink sink, enum log_level level)
{
	pthread_mutex_lock(&Log.lock);
	log_close_sink();
	snprintf(Log.prefix, sizeof(Log.prefix), "%s", prefix ? prefix : "");
	Log.sink = sink == LOG_SINK_STDERR ? LOG_SINK_STDERR : LOG_SINK_NONE;
	Log.level = level;
	pthread_mutex_unlock(&Log.lock);
}

/* log_to_file -- append to `path`, creating it private to the user */
int
log_to_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	pthread_mutex_lock(&Log.lock);
	log_close_sink();
	Log.fd = fd;
	Log.sink = LOG_SINK_FILE;
	pthread_mutex_unlock(&Log.lock);
	return 0;
}

/* log_to_syslog -- log through syslog(3) as the user facility */
void
log_to_syslog(void)
{
	pthread_mutex_lock(&Log.lock);
	log_close_sink();
	openlog(Log.prefix[0] ? Log.prefix : NULL, LOG_NDELAY | LOG_PID,
		LOG_USER);
	Log.sink = LOG_SINK_SYSLOG;
	pthread_mutex_unlock(&Log.lock);
}

/* log_set_level -- messages above `level` are dropped */
void
log_set_level(enum log_level level)
{
	Log.level = level;
}

/* log_get_level -- the current threshold */
enum log_level
log_get_level(void)
{
	return Log.level;
}

/* log_level_parse -- level name to value */
int
log_level_parse(const char *str, enum log_level *level)
{
	for (int i = 0; i < LOG_LVL_MAX; i++) {
		if (strcmp(str, level_names[i]) == 0) {
			*level = (enum log_level)i;
			return 0;
		}
	}
	return -EINVAL;
}

/* log_level_name -- level value to name */
const char *
log_level_name(enum log_level level)
{
	return level < LOG_LVL_MAX ? level_names[level] : "?";
}

/* log_close -- stop logging */
void
log_close(void)
{
	pthread_mutex_lock(&Log.lock);
	log_close_sink();
	pthread_mutex_unlock(&Log.lock);
}

/* log_vmsg -- format one line and send it to the sink */
void
log_vmsg(enum log_level level, const char *fmt, va_list ap)
{
	if (Log.sink == LOG_SINK_NONE || level > Log.level)
		return;

	int errnum = errno;
	bool with_errno = fmt[0] == '!';
	if (with_errno)
		fmt++;

	char line[LOG_LINE_MAX];
	size_t n = 0;
	if (Log.sink != LOG_SINK_SYSLOG && Log.prefix[0]) {
		int r = snprintf(line, sizeof(line), "%s: ", Log.prefix);
		n = r > 0 ? (size_t)r : 0;
	}
	int r = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	if (r > 0)
		n += (size_t)r;
	if (n >= sizeof(line) - 1)
		n = sizeof(line) - 2;
	if (with_errno) {
		char ebuf[128];
		const char *e = strerror_r(errnum, ebuf, sizeof(ebuf));
		r = snprintf(line + n, sizeof(line) - n, ": %s", e);
		if (r > 0)
			n += (size_t)r;
		if (n >= sizeof(line) - 1)
			n = sizeof(line) - 2;
	}

	pthread_mutex_lock(&Log.lock);
	switch (Log.sink) {
	case LOG_SINK_SYSLOG:
		syslog(syslog_prio[level], "%s", line);
		break;
	case LOG_SINK_STDERR:
	case LOG_SINK_FILE:
		line[n++] = '\n';
		if (write(Log.sink == LOG_SINK_FILE ? Log.fd : STDERR_FILENO,
				line, n) < 0) {
			/* nowhere left to report a failed log write */
		}
		break;
	default:
		break;
	}
	pthread_mutex_unlock(&Log.lock);
	errno = errnum;
}

/* log_msg -- printf-style front end of log_vmsg */
void
log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}
