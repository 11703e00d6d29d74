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
#include <stddef.h>

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

/*
 * log_to_file -- append to `path` (created 0600); -errno on failure.
 * Each line begins with log_stamp's time and a space.
 */
int log_to_file(const char *path);

/* room for log_stamp's "2026-11-28T14:05:01.123Z " and its NUL */
#define LOG_STAMP_SIZE 32

/*
 * log_stamp -- the time now, ISO 8601 UTC to the millisecond, and a
 * space, into buf; its length (0 when the clock cannot be read)
 */
size_t log_stamp(char buf[LOG_STAMP_SIZE]);

/* log_to_syslog -- send everything to syslog(LOG_USER) */
void log_to_syslog(void);

void log_set_level(enum log_level level);
enum log_level log_get_level(void);

/* log_level_parse -- "err", "warn", "notice", "info", "debug" */
int log_level_parse(const char *str, enum log_level *level);
const char *log_level_name(enum log_level level);

void log_close(void);

/* the quoted form of a string, NUL included */
#define LOG_QUOTE_MAX 1024

/* log_quoted -- a string from a peer, made safe for a log line */
struct log_quoted {
	char s[LOG_QUOTE_MAX];
};

/*
 * log_quote -- `str` (a descriptor, anything read off the wire or from
 * the ssh environment) between single quotes, with the quote, the
 * backslash and every byte outside printable ASCII escaped (\' \\ \n \r
 * \t \xNN), so that no peer can forge a line, move a terminal's cursor
 * or hide bytes from a reader; "..." after the closing quote says it
 * was cut.  NULL gives (null).  Meant for arguments of log calls and
 * stderr lines: log_err("... %s", log_quote(desc).s), the temporary
 * living to the end of the full expression (C11 6.2.4).
 */
struct log_quoted log_quote(const char *str);

/*
 * log_escape -- the same escaping of control, DEL and high bytes into
 * `dst` (`size` > 0 bytes, always terminated), without the quotes, for
 * text shown as a message of its own; returns the length written
 */
size_t log_escape(char *dst, size_t size, const char *src);

/*
 * log_cause_reset, log_cause -- the first err-level message since the
 * reset, its text without the prefix copied into buf ("" when none):
 * the root cause of a refusal, which rpmemd repeats to its client
 */
void log_cause_reset(void);
void log_cause(char *buf, size_t size);

void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void log_vmsg(enum log_level level, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

#define log_err(...) log_msg(LOG_LVL_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LVL_WARN, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_LVL_NOTICE, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LVL_DEBUG, __VA_ARGS__)

/*
 * log_errno -- log_err of a call that just failed, with errno's text
 * appended (the '!' of a format); its value is -errno, kept by the log
 */
#define log_errno(fmt, ...) (log_err("!" fmt, ##__VA_ARGS__), -errno)

#endif /* RPMEM_LOG_H */
