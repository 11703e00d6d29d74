/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wire01.c -- PMDK 1.12's protocol 0.1 for the stand-in client (hostile
 * messages): field codecs, statuses, full I/O
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "wire01.h"

_Static_assert(sizeof(struct w01_attr) == W01_ATTR, "attr is 104 bytes");
_Static_assert(sizeof(struct w01_persist) == 24, "persist msg is 24 bytes");
_Static_assert(sizeof(struct w01_persist_resp) == 8, "answer is 8 bytes");

/* w01_put_hdr -- request header: type u32 @0, size u64 @4 */
void
w01_put_hdr(unsigned char *p, uint32_t type, uint64_t size)
{
	w01_put32(p, 0, type);
	w01_put64(p, 4, size);
}

/* w01_get_hdr_resp -- decode a response header */
void
w01_get_hdr_resp(const unsigned char *p, uint32_t *status, uint32_t *type,
		uint64_t *size)
{
	*status = w01_get32(p, 0);
	*type = w01_get32(p, 4);
	*size = w01_get64(p, 8);
}

/* w01_put_common -- major @0, minor @2, pool_size @4, nlanes @12, ... */
void
w01_put_common(unsigned char *p, const struct w01_common *c)
{
	w01_put16(p, 0, c->major);
	w01_put16(p, 2, c->minor);
	w01_put64(p, 4, c->pool_size);
	w01_put32(p, 12, c->nlanes);
	w01_put32(p, 16, c->provider);
	w01_put64(p, 20, c->buff_size);
}

/* w01_put_attr -- the four numbers big-endian, the arrays raw */
void
w01_put_attr(unsigned char *p, const struct w01_attr *a)
{
	memcpy(p, a->signature, 8);
	w01_put32(p, 8, a->major);
	w01_put32(p, 12, a->compat_features);
	w01_put32(p, 16, a->incompat_features);
	w01_put32(p, 20, a->ro_compat_features);
	memcpy(p + 24, a->poolset_uuid, 16);
	memcpy(p + 40, a->uuid, 16);
	memcpy(p + 56, a->next_uuid, 16);
	memcpy(p + 72, a->prev_uuid, 16);
	memcpy(p + 88, a->user_flags, 16);
}

/* w01_get_ibc -- decode an ibc block */
void
w01_get_ibc(const unsigned char *p, struct w01_ibc *ibc)
{
	ibc->port = w01_get32(p, 0);
	ibc->persist_method = w01_get32(p, 4);
	ibc->rkey = w01_get64(p, 8);
	ibc->raddr = w01_get64(p, 16);
	ibc->nlanes = w01_get32h(p, 24);
}

/* PMDK's status table: text and client errno of each status */
static const struct {
	const char *str;
	int err;
} status_tab[W01_ERR_MAX] = {
	[W01_OK] = {"Success", 0},
	[W01_ERR_BADPROTO] = {"Protocol version number mismatch",
		EPROTONOSUPPORT},
	[W01_ERR_BADNAME] = {"Invalid pool descriptor", EINVAL},
	[W01_ERR_BADSIZE] = {"Invalid pool size", EFBIG},
	[W01_ERR_BADNLANES] = {"Invalid number of lanes", EINVAL},
	[W01_ERR_BADPROVIDER] = {"Invalid provider", EINVAL},
	[W01_ERR_FATAL] = {"Fatal error", EREMOTEIO},
	[W01_ERR_FATAL_CONN] = {"Fatal in-band connection error",
		ECONNABORTED},
	[W01_ERR_BUSY] = {"Pool already in use", EBUSY},
	[W01_ERR_EXISTS] = {"Pool already exists", EEXIST},
	[W01_ERR_PROVNOSUP] = {"Provider not supported", EMEDIUMTYPE},
	[W01_ERR_NOEXIST] = {"Pool set or its part doesn't exist or it is "
		"unavailable", ENOENT},
	[W01_ERR_NOACCESS] = {"Pool set permission denied", EACCES},
	[W01_ERR_POOL_CFG] = {"Invalid pool set configuration", EINVAL},
};

/* w01_status_str -- PMDK's text of a status */
const char *
w01_status_str(uint32_t status)
{
	if (status >= W01_ERR_MAX)
		return "invalid status received";
	return status_tab[status].str;
}

/* w01_status_errno -- the errno PMDK's client sets for a status */
int
w01_status_errno(uint32_t status)
{
	if (status >= W01_ERR_MAX)
		return EPROTO;
	return status_tab[status].err;
}

/* w01_errno_name -- symbolic name of the errnos the client reports */
const char *
w01_errno_name(int err)
{
	static const struct {
		int err;
		const char *name;
	} tab[] = {
		{0, "0"}, {EPERM, "EPERM"}, {ENOENT, "ENOENT"},
		{EIO, "EIO"}, {EBADF, "EBADF"}, {ENOMEM, "ENOMEM"},
		{EACCES, "EACCES"}, {EBUSY, "EBUSY"}, {EEXIST, "EEXIST"},
		{EINVAL, "EINVAL"}, {EFBIG, "EFBIG"}, {EPIPE, "EPIPE"},
		{ETIMEDOUT, "ETIMEDOUT"}, {EPROTO, "EPROTO"},
		{EPROTONOSUPPORT, "EPROTONOSUPPORT"},
		{ECONNRESET, "ECONNRESET"}, {ECONNABORTED, "ECONNABORTED"},
		{ECONNREFUSED, "ECONNREFUSED"}, {EREMOTEIO, "EREMOTEIO"},
		{EMEDIUMTYPE, "EMEDIUMTYPE"}, {ENOMEDIUM, "ENOMEDIUM"},
		{EAGAIN, "EAGAIN"}, {ENODATA, "ENODATA"},
	};

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		if (tab[i].err == err)
			return tab[i].name;
	}
	return "E?";
}

/* w01_provider_name -- libfabric name of a 0.1 provider id */
const char *
w01_provider_name(uint32_t provider)
{
	switch (provider) {
	case W01_PROV_VERBS:
		return "verbs";
	case W01_PROV_SOCKETS:
		return "sockets";
	default:
		return NULL;
	}
}

/*
 * moved -- count a transfer's `n` bytes into *done: 0 to go on (also
 * after EINTR), -1 when it failed (errno)
 */
static int
moved(ssize_t n, size_t *done)
{
	if (n < 0)
		return errno == EINTR ? 0 : -1;
	*done += (size_t)n;
	return 0;
}

/*
 * w01_read_full -- exactly len bytes within timeout_ms (-1: no bound):
 * 0, 1 on end of file, -1 with errno (ETIMEDOUT when time ran out)
 */
int
w01_read_full(int fd, void *buf, size_t len, int timeout_ms)
{
	unsigned char *p = buf;
	struct pollfd pfd = {.fd = fd, .events = POLLIN};

	for (size_t done = 0; done < len; ) {
		int n = timeout_ms < 0 ? 1 : poll(&pfd, 1, timeout_ms);
		if (n == 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		ssize_t got = n < 0 ? -1 : read(fd, p + done, len - done);
		if (got == 0)
			return 1;
		if (moved(got, &done))
			return -1;
	}
	return 0;
}

/* w01_write_full -- all of buf; sockets without SIGPIPE, pipes as is */
int
w01_write_full(int fd, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	int use_send = 1;

	for (size_t done = 0; done < len; ) {
		ssize_t n = use_send ?
			send(fd, p + done, len - done, MSG_NOSIGNAL) :
			write(fd, p + done, len - done);
		if (n < 0 && use_send && errno == ENOTSOCK) {
			use_send = 0;
			continue;
		}
		if (moved(n, &done))
			return -1;
	}
	return 0;
}
