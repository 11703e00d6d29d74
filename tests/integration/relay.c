/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * relay.c -- a man in the middle of the lanes, for the tamper and
 * capture tests (scenarios S6, S7)
 *
 * librpmem runs it as its ssh (RPMEM_SSH).  It runs the real ssh
 * (RELAY_SSH) to the real target (RELAY_HOST) in place of the host it
 * was given and passes the out-of-band channel through, but for the
 * fabric port in CREATE_RESP and OPEN_RESP, which it points at a
 * listener of its own on the host it was given.  Each lane connection
 * it accepts there it carries to rpmemd's real port frame by frame
 * (libfabric 1.17's tcp provider: a 32-byte connection header and its
 * data, then frames whose 16-byte header holds their size), and on lane
 * 0 it attacks one message frame as RELAY_ATTACK says:
 *
 *   none     carry everything (with RELAY_CAPTURE: a socket tap)
 *   flip     flip one bit in the middle of the frame's payload
 *   drop     do not forward the frame
 *   dup      forward it twice
 *   reorder  hold it back and forward it after the next one
 *   inject   forward a forged frame (its header, random payload) first
 *
 * RELAY_DIR (c2s or s2c) and RELAY_AT (1: the first message frame of
 * that direction) choose the frame.  RELAY_CAPTURE names a file that
 * gets every lane byte carried, both ways; RELAY_LOG one where the relay
 * says what it did.  A test tool: blocking writes, one thread.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define CM_HDR 32		/* struct ofi_ctrl_hdr */
#define FRAME_HDR 16		/* struct tcpx_base_hdr */
#define FRAME_MAX (64 << 20)
#define OP_MSG 0		/* ofi_op_msg */
#define LANE_MAGIC 0x52504d4cU	/* fab.h LANE_CONN_MAGIC */
#define MAX_CONNS 16
#define RESP_HDR 16
#define RESP_PORT 16		/* offset of ibc.port in CREATE/OPEN_RESP */

enum attack { NONE, FLIP, DROP, DUP, REORDER, INJECT };
static const char *const Attack_names[] = { "none", "flip", "drop", "dup",
	"reorder", "inject" };

/* bytes read from one side, waiting to be carried whole */
struct stream {
	unsigned char *buf;
	size_t len;
	size_t cap;
};

/* one direction of a lane connection */
struct dir {
	struct stream in;
	bool set_up;		/* the connection header went through */
	unsigned frames;	/* message frames carried */
	unsigned char *held;	/* reorder: the frame held back */
	size_t held_len;
};

/* one lane connection: [0] the client's socket, [1] rpmemd's */
struct conn {
	int fd[2];
	struct dir dir[2];	/* [0] c2s, [1] s2c */
	int lane;		/* -1 until the client said */
};

static struct {
	enum attack attack;
	int dir;
	unsigned at;
	FILE *capture;
	FILE *log;
	const char *host;	/* where rpmemd really is */
	uint32_t port;		/* its fabric port, once seen */
	int listen_fd;
	struct conn conns[MAX_CONNS];
	unsigned nconns;
	bool done;		/* the attack happened */
} R;

/* die -- report and exit */
__attribute__((noreturn, format(printf, 1, 2))) static void
die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "relay: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(255);
}

/* note -- a line in RELAY_LOG */
__attribute__((format(printf, 1, 2))) static void
note(const char *fmt, ...)
{
	if (!R.log)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(R.log, fmt, ap);
	va_end(ap);
	fputc('\n', R.log);
	fflush(R.log);
}

/* write_all -- write everything or give up on the connection */
static bool
write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

/* stream_read -- append what fd has; false on EOF or error */
static bool
stream_read(struct stream *s, int fd)
{
	if (s->cap - s->len < 65536) {
		s->cap = s->cap ? 2 * s->cap : 1 << 17;
		s->buf = realloc(s->buf, s->cap);
		if (!s->buf)
			die("out of memory");
	}
	ssize_t n = read(fd, s->buf + s->len, s->cap - s->len);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0)
		return false;
	s->len += (size_t)n;
	return true;
}

/* stream_take -- drop `n` carried bytes from the front */
static void
stream_take(struct stream *s, size_t n)
{
	memmove(s->buf, s->buf + n, s->len - n);
	s->len -= n;
}

/* carry -- forward a unit to the other side, recording it */
static bool
carry(struct conn *c, int d, const unsigned char *p, size_t len)
{
	if (R.capture) {
		fwrite(p, 1, len, R.capture);
		fflush(R.capture);
	}
	return write_all(c->fd[!d], p, len);
}

/* attack_frame -- do to this frame what RELAY_ATTACK says */
static bool
attack_frame(struct conn *c, int d, unsigned char *f, size_t len)
{
	struct dir *dr = &c->dir[d];
	size_t hlen = f[6] >= FRAME_HDR && f[6] < len ? f[6] : FRAME_HDR;
	note("attacked %s frame %u on lane %d: %s (%zu bytes)",
		d ? "s2c" : "c2s", dr->frames, c->lane,
		Attack_names[R.attack], len);
	R.done = true;
	switch (R.attack) {
	case FLIP:
		f[hlen + (len - hlen) / 2] ^= 0x01;
		return carry(c, d, f, len);
	case DROP:
		return true;
	case DUP:
		return carry(c, d, f, len) && carry(c, d, f, len);
	case REORDER:
		dr->held = malloc(len);
		if (!dr->held)
			die("out of memory");
		memcpy(dr->held, f, len);
		dr->held_len = len;
		return true;
	case INJECT: {
		unsigned char *forged = malloc(len);
		if (!forged)
			die("out of memory");
		memcpy(forged, f, hlen);
		for (size_t i = hlen; i < len; i++)
			forged[i] = (unsigned char)random();
		bool ok = carry(c, d, forged, len) && carry(c, d, f, len);
		free(forged);
		return ok;
	}
	case NONE:
		break;
	}
	return carry(c, d, f, len);
}

/* frame -- one message frame: maybe attack it, release a held one */
static bool
frame(struct conn *c, int d, unsigned char *f, size_t len)
{
	struct dir *dr = &c->dir[d];
	if (f[1] != OP_MSG)
		return carry(c, d, f, len);
	dr->frames++;
	bool ok;
	if (!R.done && R.attack != NONE && c->lane == 0 && d == R.dir &&
			dr->frames == R.at)
		ok = attack_frame(c, d, f, len);
	else
		ok = carry(c, d, f, len);
	if (ok && dr->held && dr->frames == R.at + 1) {
		ok = carry(c, d, dr->held, dr->held_len);
		free(dr->held);
		dr->held = NULL;
	}
	return ok;
}

/* pump -- carry every whole unit read so far in direction d */
static bool
pump(struct conn *c, int d)
{
	struct dir *dr = &c->dir[d];
	struct stream *s = &dr->in;
	for (;;) {
		size_t need;
		if (!dr->set_up) {
			if (s->len < CM_HDR)
				return true;
			uint16_t seg;
			memcpy(&seg, s->buf + 2, sizeof(seg));
			need = CM_HDR + ntohs(seg);
			if (s->len < need)
				return true;
			if (d == 0 && need >= CM_HDR + 8) {
				uint32_t magic, lane;
				memcpy(&magic, s->buf + CM_HDR, 4);
				memcpy(&lane, s->buf + CM_HDR + 4, 4);
				if (magic == LANE_MAGIC)
					c->lane = (int)lane;
			}
			dr->set_up = true;
			if (!carry(c, d, s->buf, need))
				return false;
		} else {
			if (s->len < FRAME_HDR)
				return true;
			uint64_t size;
			memcpy(&size, s->buf + 8, sizeof(size));
			size = le64toh(size);
			if (size < FRAME_HDR || size > FRAME_MAX)
				die("lane %d: a %llu-byte frame: not libfabric "
					"1.17's tcp framing", c->lane,
					(unsigned long long)size);
			need = (size_t)size;
			if (s->len < need)
				return true;
			if (!frame(c, d, s->buf, need))
				return false;
		}
		stream_take(s, need);
	}
}

/* tcp_socket -- a connected or listening socket for host:port */
static int
tcp_socket(const char *host, uint32_t port, bool listening)
{
	char svc[16];
	snprintf(svc, sizeof(svc), "%u", port);
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
		.ai_flags = listening ? AI_PASSIVE : 0 };
	struct addrinfo *ai;
	int r = getaddrinfo(host, svc, &hints, &ai);
	if (r)
		die("%s: %s", host, gai_strerror(r));
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("socket: %s", strerror(errno));
	int one = 1;
	(void) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (listening ? bind(fd, ai->ai_addr, ai->ai_addrlen) ||
			listen(fd, 16) :
			connect(fd, ai->ai_addr, ai->ai_addrlen))
		die("%s %s:%u: %s", listening ? "listen on" : "connect to",
			host, port, strerror(errno));
	freeaddrinfo(ai);
	return fd;
}

/* local_port -- the port a socket is bound to */
static uint32_t
local_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		die("getsockname: %s", strerror(errno));
	return ntohs(ss.ss_family == AF_INET6 ?
		((struct sockaddr_in6 *)&ss)->sin6_port :
		((struct sockaddr_in *)&ss)->sin_port);
}

/*
 * oob_pump -- carry whole out-of-band messages from ssh to the client:
 * the 4-byte start-up status, then responses, pointing the fabric port
 * of a successful CREATE_RESP / OPEN_RESP at our listener
 */
static bool
oob_pump(struct stream *s, bool *status_seen, int out)
{
	for (;;) {
		size_t need = 4;
		if (*status_seen) {
			if (s->len < RESP_HDR)
				return true;
			uint64_t size;
			memcpy(&size, s->buf + 8, sizeof(size));
			need = (size_t)be64toh(size);
			if (need < RESP_HDR || need > (1 << 20))
				die("out-of-band message of %zu bytes", need);
		}
		if (s->len < need)
			return true;
		if (*status_seen) {
			uint32_t status, type, port;
			memcpy(&status, s->buf, 4);
			memcpy(&type, s->buf + 4, 4);
			type = ntohl(type);
			if (!status && (type == 2 || type == 4) &&
					need >= RESP_PORT + 4) {
				memcpy(&port, s->buf + RESP_PORT, 4);
				R.port = ntohl(port);
				port = htonl(local_port(R.listen_fd));
				memcpy(s->buf + RESP_PORT, &port, 4);
				note("fabric port %u now %u", R.port,
					ntohl(port));
			}
		}
		*status_seen = true;
		if (!write_all(out, s->buf, need))
			return false;
		stream_take(s, need);
	}
}

/* conn_accept -- a lane connects: connect it on to rpmemd */
static void
conn_accept(void)
{
	int fd = accept4(R.listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	if (R.nconns == MAX_CONNS || !R.port) {
		close(fd);
		return;
	}
	struct conn *c = &R.conns[R.nconns++];
	memset(c, 0, sizeof(*c));
	c->lane = -1;
	c->fd[0] = fd;
	c->fd[1] = tcp_socket(R.host, R.port, false);
}

/* conn_close -- end both sides of a lane connection */
static void
conn_close(struct conn *c)
{
	for (int i = 0; i < 2; i++) {
		if (c->fd[i] >= 0)
			close(c->fd[i]);
		c->fd[i] = -1;
		free(c->dir[i].in.buf);
		free(c->dir[i].held);
		c->dir[i] = (struct dir){ 0 };
	}
}

/* spawn -- run the real ssh to the real host; pipes for its stdio */
static pid_t
spawn(char **argv, int *to, int *from)
{
	int in[2], out[2];
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		die("pipe: %s", strerror(errno));
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		dup2(in[0], STDIN_FILENO);
		dup2(out[1], STDOUT_FILENO);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	*to = in[1];
	*from = out[0];
	return pid;
}

/* env_or -- an environment variable, or a default */
static const char *
env_or(const char *name, const char *def)
{
	const char *v = getenv(name);
	return v && *v ? v : def;
}

/* setup -- read RELAY_*, open the listener on the host we were given */
static void
setup(const char *given_host)
{
	const char *a = env_or("RELAY_ATTACK", "none");
	unsigned i;
	for (i = 0; i < sizeof(Attack_names) / sizeof(Attack_names[0]); i++)
		if (strcmp(a, Attack_names[i]) == 0)
			break;
	if (i == sizeof(Attack_names) / sizeof(Attack_names[0]))
		die("unknown RELAY_ATTACK=%s", a);
	R.attack = (enum attack)i;
	R.dir = strcmp(env_or("RELAY_DIR", "c2s"), "s2c") == 0;
	R.at = (unsigned)atoi(env_or("RELAY_AT", "1"));
	R.host = getenv("RELAY_HOST");
	if (!R.host || !*R.host)
		die("RELAY_HOST is not set");
	const char *cap = getenv("RELAY_CAPTURE");
	if (cap && *cap && !(R.capture = fopen(cap, "ae")))
		die("%s: %s", cap, strerror(errno));
	const char *log = getenv("RELAY_LOG");
	if (log && *log && !(R.log = fopen(log, "ae")))
		die("%s: %s", log, strerror(errno));
	srandom((unsigned)getpid());
	R.listen_fd = tcp_socket(given_host, 0, true);
}

int
main(int argc, char *argv[])
{
	signal(SIGPIPE, SIG_IGN);
	const char *ssh = getenv("RELAY_SSH");
	if (!ssh || !*ssh)
		die("RELAY_SSH is not set");
	/* ssh's argv as librpmem builds it: [options] -- host command */
	int host_at = 0;
	for (int i = 1; i + 1 < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			host_at = i + 1;
			break;
		}
	if (!host_at)
		die("no \"-- host\" among the arguments");
	setup(argv[host_at]);
	char **args = calloc((size_t)argc + 1, sizeof(*args));
	if (!args)
		die("out of memory");
	args[0] = (char *)ssh;
	for (int i = 1; i < argc; i++)
		args[i] = i == host_at ? (char *)R.host : argv[i];
	int to_ssh, from_ssh;
	pid_t pid = spawn(args, &to_ssh, &from_ssh);

	struct stream oob = { 0 };
	bool status_seen = false, in_open = true;
	while (from_ssh >= 0) {
		struct pollfd p[3 + 2 * MAX_CONNS];
		unsigned n = 0;
		p[n++] = (struct pollfd){ .fd = from_ssh, .events = POLLIN };
		p[n++] = (struct pollfd){ .fd = in_open ? STDIN_FILENO : -1,
			.events = POLLIN };
		p[n++] = (struct pollfd){ .fd = R.listen_fd, .events = POLLIN };
		for (unsigned i = 0; i < R.nconns; i++)
			for (int d = 0; d < 2; d++)
				p[n++] = (struct pollfd){
					.fd = R.conns[i].fd[d], .events = POLLIN };
		if (poll(p, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll: %s", strerror(errno));
		}
		if (p[0].revents && (!stream_read(&oob, from_ssh) ||
				!oob_pump(&oob, &status_seen, STDOUT_FILENO))) {
			close(from_ssh);
			from_ssh = -1;
		}
		if (p[1].revents) {
			char buf[4096];
			ssize_t got = read(STDIN_FILENO, buf, sizeof(buf));
			if (got <= 0 || !write_all(to_ssh, buf, (size_t)got)) {
				in_open = false;
				close(to_ssh);
			}
		}
		if (p[2].revents)
			conn_accept();
		for (unsigned i = 0, k = 3; i < R.nconns; i++) {
			struct conn *c = &R.conns[i];
			for (int d = 0; d < 2; d++, k++) {
				if (!p[k].revents || c->fd[d] < 0)
					continue;
				if (!stream_read(&c->dir[d].in, c->fd[d]) ||
						!pump(c, d))
					conn_close(c);
			}
		}
	}
	/* the session is over: ssh's output ended */
	close(STDOUT_FILENO);
	for (unsigned i = 0; i < R.nconns; i++)
		conn_close(&R.conns[i]);
	if (in_open)
		close(to_ssh);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	free(oob.buf);
	free(args);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 255;
}
