/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log.h -- levelled logging to stderr, a file or syslog
 *
 * A format starting with '!' gets ": strerror(errno)" appended.
 */
#ifndef RPMEM_LOG_H
#define RPMEM_LOG_H 1

#include <stdarg.h>
#include <stdbool.h>

enum log_level {
	LOG_LVL_ERR,
	LOG_LVL_WARN,
	LOG_LVL_NOTICE,
	LOG_LVL_INFO,
	LOG_LVL_DEBUG,
	LOG_LVL_MAX,
};

enum log_sink {
	LOG_SINK_NONE,		/* discard (librpmem default) */
	LOG_SINK_STDERR,	/* rpmemd before its config is read */
	LOG_SINK_FILE,
	LOG_SINK_SYSLOG,
};

/* log_init -- log to stderr at `level` with `prefix` ("rpmemd") */
void log_init(const char *prefix, enum log_sink sink, enum log_level level);

/* log_to_file -- append to `path` (created 0600); -errno on failure */
int log_to_file(const char *path);

/* log_to_syslog -- send everything to syslog(LOG_USER) */
void log_to_syslog(void);

void log_set_level(enum log_level level);
enum log_level log_get_level(void);

/* log_level_parse -- "err", "warn", "notice", "info", "debug" */
int log_level_parse(const char *str, enum log_level *level);
const char *log_level_name(enum log_level level);

void log_close(void);

void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void log_vmsg(enum log_level level, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

#define log_err(...) log_msg(LOG_LVL_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LVL_WARN, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_LVL_NOTICE, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LVL_DEBUG, __VA_ARGS__)

#endif /* RPMEM_LOG_H */
