/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wire01.h -- PMDK 1.12's protocol 0.1 as the stand-in client speaks it,
 * for the messages the real PMDK 1.12.1 never sends (hostile.sh)
 *
 * Written from doc/pmdk-interop.md (sections 3 and 4), not from
 * src/common/proto.[ch]: the client stands in for PMDK's, so it must
 * not share our reading of the wire.  Out-of-band messages are
 * packed and big-endian except ibc.nlanes and close.flags, which PMDK
 * sends in host order (pmdk-interop 3.2); the in-band persist message and its
 * answer are native structs (pmdk-interop 4.6).
 */
#ifndef PMDK01_WIRE01_H
#define PMDK01_WIRE01_H 1

#include <stddef.h>
#include <stdint.h>

#include "tu.h"

#define W01_MAJOR 0
#define W01_MINOR 1

/* message types (pmdk-interop 3.3) */
enum {
	W01_CREATE = 1,
	W01_CREATE_RESP = 2,
	W01_OPEN = 3,
	W01_OPEN_RESP = 4,
	W01_CLOSE = 5,
	W01_CLOSE_RESP = 6,
	W01_SET_ATTR = 7,
	W01_SET_ATTR_RESP = 8,
};

/* status codes (pmdk-interop 2.7) */
enum {
	W01_OK = 0,
	W01_ERR_BADPROTO = 1,
	W01_ERR_BADNAME = 2,
	W01_ERR_BADSIZE = 3,
	W01_ERR_BADNLANES = 4,
	W01_ERR_BADPROVIDER = 5,
	W01_ERR_FATAL = 6,
	W01_ERR_FATAL_CONN = 7,
	W01_ERR_BUSY = 8,
	W01_ERR_EXISTS = 9,
	W01_ERR_PROVNOSUP = 10,
	W01_ERR_NOEXIST = 11,
	W01_ERR_NOACCESS = 12,
	W01_ERR_POOL_CFG = 13,
	W01_ERR_MAX = 14,
};

/* providers PMDK knows; anything else is refused by its rpmemd */
enum {
	W01_PROV_VERBS = 1,
	W01_PROV_SOCKETS = 2,
	W01_PROV_MAX = 3,
};

enum {
	W01_PM_GPSPM = 1,
	W01_PM_APM = 2,
};

#define W01_CLOSE_REMOVE 0x1U

/* sizes of the fixed blocks and whole messages (pmdk-interop 3.4) */
#define W01_HDR 12
#define W01_HDR_RESP 16
#define W01_COMMON 28
#define W01_ATTR 104
#define W01_IBC 28
#define W01_CREATE_SIZE 148	/* + descriptor with its NUL */
#define W01_OPEN_SIZE 44	/* + descriptor with its NUL */
#define W01_CLOSE_SIZE 16
#define W01_SET_ATTR_SIZE 116
#define W01_CREATE_RESP_SIZE 44
#define W01_OPEN_RESP_SIZE 148
#define W01_CLOSE_RESP_SIZE 16
#define W01_SET_ATTR_RESP_SIZE 16

/* where blocks start inside their messages */
#define W01_REQ_COMMON W01_HDR			/* CREATE, OPEN */
#define W01_CREATE_ATTR (W01_HDR + W01_COMMON)	/* 40 */
#define W01_CREATE_DESC (W01_CREATE_ATTR + W01_ATTR)	/* 144: u32 size */
#define W01_OPEN_DESC (W01_HDR + W01_COMMON)	/* 40: u32 size */
#define W01_CLOSE_FLAGS W01_HDR
#define W01_SET_ATTR_ATTR W01_HDR
#define W01_RESP_IBC W01_HDR_RESP
#define W01_OPEN_RESP_ATTR (W01_HDR_RESP + W01_IBC)	/* 44 */

/* the inline buffer of a PMDK client: two pool headers */
#define W01_BUFF_SIZE 8192
/* smallest pool PMDK's rpmemd accepts (RPMEM_MIN_POOL) */
#define W01_MIN_POOL 8192
/* pool header PMDK's client never persists into when attrs are set */
#define W01_HDR_SIZE 4096

/* struct rpmem_pool_attr, field by field (pmdk-interop 1.3) */
struct w01_attr {
	char signature[8];
	uint32_t major;
	uint32_t compat_features;
	uint32_t incompat_features;
	uint32_t ro_compat_features;
	unsigned char poolset_uuid[16];
	unsigned char uuid[16];
	unsigned char next_uuid[16];
	unsigned char prev_uuid[16];
	unsigned char user_flags[16];
};

/* the common block of CREATE and OPEN */
struct w01_common {
	uint16_t major;
	uint16_t minor;
	uint64_t pool_size;
	uint32_t nlanes;
	uint32_t provider;
	uint64_t buff_size;
};

/* in-band connection attributes of CREATE_RESP and OPEN_RESP */
struct w01_ibc {
	uint32_t port;
	uint32_t persist_method;
	uint64_t rkey;
	uint64_t raddr;
	uint32_t nlanes;	/* host order on the wire */
};

/* in-band persist message and its answer: native, not packed */
#define W01_FLUSH_WRITE 0U	/* the bytes came by RMA write */
#define W01_DEEP_PERSIST 1U	/* ditto, deep persist */
#define W01_PERSIST_SEND 2U	/* the bytes are inline */
#define W01_COMPLETION 4U	/* client-internal bit, ignored remotely */
#define W01_MODE_MASK 0x3U

struct w01_persist {
	uint32_t flags;
	uint32_t lane;
	uint64_t addr;
	uint64_t size;
	uint8_t data[];
};

struct w01_persist_resp {
	uint32_t flags;
	uint32_t lane;
};

/* w01_pmsg_size -- one lane's message slot for an inline buffer size */
static inline size_t
w01_pmsg_size(size_t buff_size)
{
	return (sizeof(struct w01_persist) + buff_size + 63) & ~(size_t)63;
}

/* big-endian loads and stores at byte offsets of a buffer (tu.h) */
#define w01_put16(p, off, v) tu_be_set((p), (off), 2, (uint16_t)(v))
#define w01_put32(p, off, v) tu_be_set((p), (off), 4, (uint32_t)(v))
#define w01_put64(p, off, v) tu_be_set((p), (off), 8, (uint64_t)(v))
#define w01_get16(p, off) ((uint16_t)tu_be_at((p), (off), 2))
#define w01_get32(p, off) ((uint32_t)tu_be_at((p), (off), 4))
#define w01_get64(p, off) tu_be_at((p), (off), 8)
/* host-order u32, for the fields PMDK forgot to convert */
#define w01_put32h(p, off, v) tu_host32_set((p), (off), (uint32_t)(v))
#define w01_get32h(p, off) tu_host32_at((p), (off))

/* blocks: request and response headers, common, attributes, ibc */
void w01_put_hdr(unsigned char *p, uint32_t type, uint64_t size);
void w01_get_hdr_resp(const unsigned char *p, uint32_t *status,
		uint32_t *type, uint64_t *size);
void w01_put_common(unsigned char *p, const struct w01_common *c);
void w01_put_attr(unsigned char *p, const struct w01_attr *a);
void w01_get_ibc(const unsigned char *p, struct w01_ibc *ibc);

/* w01_status_str -- PMDK's text of a status; "invalid status received" */
const char *w01_status_str(uint32_t status);

/* w01_status_errno -- the errno PMDK's client sets for a status */
int w01_status_errno(uint32_t status);

/* w01_errno_name -- "ECONNRESET" and friends, for the summary lines */
const char *w01_errno_name(int err);

/* w01_provider_name -- "verbs", "sockets" or NULL */
const char *w01_provider_name(uint32_t provider);

/*
 * w01_read_full -- read exactly len bytes within timeout_ms (-1: no
 * bound): 0, 1 at end of file (even after part of the bytes, as PMDK's
 * helper does) or -1 with errno (ETIMEDOUT when time ran out)
 */
int w01_read_full(int fd, void *buf, size_t len, int timeout_ms);

/* w01_write_full -- write all of buf without SIGPIPE on sockets */
int w01_write_full(int fd, const void *buf, size_t len);

#endif /* PMDK01_WIRE01_H */
