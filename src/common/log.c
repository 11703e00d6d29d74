/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log.c -- levelled logging to stderr, a file or syslog; a line written
 * to a file begins with its UTC time to the millisecond, so that it can
 * be lined up with other hosts' logs (stderr and syslog stay bare:
 * whatever reads those stamps them itself)
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "names.h"

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
	char cause[LOG_LINE_MAX];	/* first err message since a reset */
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
	int i = names_find(level_names, 0, LOG_LVL_MAX, str);
	if (i >= 0)
		*level = (enum log_level)i;
	return i < 0 ? i : 0;
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

/*
 * escape_byte -- the printable form of byte c into e (5 bytes): itself,
 * or a backslash escape; `quote` escapes the quote and the backslash too
 */
static void
escape_byte(unsigned char c, bool quote, char e[5])
{
	static const char named[] = { '\n', 'n', '\r', 'r', '\t', 't' };
	for (size_t i = 0; i < sizeof(named); i += 2) {
		if (c == (unsigned char)named[i]) {
			e[0] = '\\';
			e[1] = named[i + 1];
			e[2] = '\0';
			return;
		}
	}
	if (quote && (c == '\'' || c == '\\'))
		snprintf(e, 5, "\\%c", c);
	else if (c < 0x20 || c >= 0x7f)
		snprintf(e, 5, "\\x%02x", c);
	else
		snprintf(e, 5, "%c", c);
}

/*
 * escape -- src escaped into dst (room for `size` bytes, no NUL added);
 * returns the length, and in *cut whether src did not fit
 */
static size_t
escape(char *dst, size_t size, const char *src, bool quote, bool *cut)
{
	size_t n = 0;
	*cut = false;
	for (const char *c = src; *c != '\0'; c++) {
		char e[5];
		escape_byte((unsigned char)*c, quote, e);
		size_t len = strlen(e);
		if (n + len > size) {
			*cut = true;
			break;
		}
		memcpy(dst + n, e, len);
		n += len;
	}
	return n;
}

/* log_quote -- a peer's string, quoted and escaped */
struct log_quoted
log_quote(const char *str)
{
	struct log_quoted q;
	if (str == NULL) {
		snprintf(q.s, sizeof(q.s), "(null)");
		return q;
	}
	/* room for both quotes, "..." and the NUL */
	bool cut;
	size_t n = escape(q.s + 1, sizeof(q.s) - 6, str, true, &cut);
	q.s[0] = '\'';
	snprintf(q.s + 1 + n, sizeof(q.s) - 1 - n, "'%s", cut ? "..." : "");
	return q;
}

/* log_escape -- a peer's message, escaped */
size_t
log_escape(char *dst, size_t size, const char *src)
{
	bool cut;
	size_t n = escape(dst, size - 1, src, false, &cut);
	dst[n] = '\0';
	return n;
}

/* log_cause_reset -- forget the cause kept so far */
void
log_cause_reset(void)
{
	pthread_mutex_lock(&Log.lock);
	Log.cause[0] = '\0';
	pthread_mutex_unlock(&Log.lock);
}

/* log_cause -- the first err-level text since the reset */
void
log_cause(char *buf, size_t size)
{
	pthread_mutex_lock(&Log.lock);
	snprintf(buf, size, "%s", Log.cause);
	pthread_mutex_unlock(&Log.lock);
}

/*
 * log_stamp -- the time now as ISO 8601 UTC with milliseconds and a
 * space ("2026-11-28T14:05:01.123Z "); its length, 0 when the clock
 * cannot be read
 */
size_t
log_stamp(char buf[LOG_STAMP_SIZE])
{
	struct timespec ts;
	struct tm tm;
	if (clock_gettime(CLOCK_REALTIME, &ts) != 0 ||
			gmtime_r(&ts.tv_sec, &tm) == NULL)
		return 0;
	size_t n = strftime(buf, LOG_STAMP_SIZE, "%Y-%m-%dT%H:%M:%S", &tm);
	if (n == 0)
		return 0;
	int r = snprintf(buf + n, LOG_STAMP_SIZE - n, ".%03ldZ ",
		ts.tv_nsec / 1000000L);
	return r > 0 && (size_t)r < LOG_STAMP_SIZE - n ? n + (size_t)r : 0;
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
	if (level == LOG_LVL_ERR && Log.cause[0] == '\0') {
		size_t pre = Log.sink != LOG_SINK_SYSLOG && Log.prefix[0] ?
			strlen(Log.prefix) + 2 : 0;
		snprintf(Log.cause, sizeof(Log.cause), "%.*s",
			(int)(n - pre), line + pre);
	}
	switch (Log.sink) {
	case LOG_SINK_SYSLOG:
		syslog(syslog_prio[level], "%s", line);
		break;
	case LOG_SINK_STDERR:
		line[n++] = '\n';
		if (write(STDERR_FILENO, line, n) < 0) {
			/* nowhere left to report a failed log write */
		}
		break;
	case LOG_SINK_FILE: {
		/* stamped under the lock: the file's lines in time order */
		char stamp[LOG_STAMP_SIZE];
		line[n++] = '\n';
		struct iovec iov[2] = {
			{ .iov_base = stamp, .iov_len = log_stamp(stamp) },
			{ .iov_base = line, .iov_len = n },
		};
		/* one append: no other writer of the file splits the line */
		if (writev(Log.fd, iov, 2) < 0) {
			/* nowhere left to report a failed log write */
		}
		break;
	}
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
