/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto.h -- out-of-band wire messages: layouts, encoders, decoders
 *
 * Wire base is PMDK 1.12's protocol 0.1 (packed, big-endian, except
 * ibc.nlanes and close.flags which PMDK sends in host order and which we
 * therefore send in host order too).  Our extension (minor 3) appends a
 * fixed block to CREATE and OPEN, after the descriptor, carrying the
 * client's lane-security minimum, its preferred cipher and its half of
 * the session's key material; and one to CREATE_RESP and OPEN_RESP
 * carrying the negotiated minor, the daemon's version, the inline buffer
 * size, the lane-security policy and cipher of the session and the
 * daemon's half of the key material (see lanesec.h).  It adds HASH:
 * content hashes of pool ranges computed by rpmemd, so replicas can be
 * compared without moving their bytes, and STAT: the CPU time rpmemd
 * has spent so far, for rpmem bench.  Minor 4 adds OUTDATE: the master
 * marks the replica of the session outdated, or clears the mark
 * (proto_ext.c).  Minor 5 adds GEN: the data-generation identifiers of
 * both copies (gen.h), exchanged once the lanes are up and before the
 * master writes anything, and again when a resync ends; and CLOSE's
 * flag INSYNC: the master says the replica holds what it holds
 * (proto_gen.c).  Minor 6 adds BEAT: the client asks rpmemd for a beat
 * every interval; the answer is the first, and a bare BEAT_RESP follows
 * every interval for the rest of the session, unasked, so that a client
 * tells a stopped or hung rpmemd from an idle one (proto_ext.c).  Minor 7
 * gives the response extension's reserved word a meaning, flags
 * (PROTO_EXT_*): the replica's persists wait for a file system's
 * write-back, so a client may poll through that wait (spin.h).  Minor 8
 * serves LANE_OP_EPOCHS on the lanes (fab.h): an async replica's records
 * in the master's persist order (doc/async.md).  All of it travels
 * inside ssh.
 *
 * Decoders take (buf, len), check every field and never read past len.
 * They return 0 or -errno (-EPROTO for a malformed message, -EMSGSIZE for
 * a size over the cap, -EPROTONOSUPPORT for a version we do not speak,
 * -EINVAL for a NULL pointer or an `expected` that is not a response).
 * So that refusals can be logged with the offending value, the header
 * decoders store their outputs whenever len covers the header, and
 * proto_req_decode keeps req->type and req->common on -EPROTONOSUPPORT;
 * after any other failure the decoded struct is zeroed.
 */
#ifndef RPMEM_PROTO_H
#define RPMEM_PROTO_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gen.h"
#include "librpmem.h"

#define PROTO_MAJOR 0
#define PROTO_MINOR_PMDK 1	/* plain PMDK 1.12 */
#define PROTO_MINOR_EXT 3	/* ours: extension blocks, tcp, lane security */
#define PROTO_MINOR_OUTDATE 4	/* ours: OUTDATE */
#define PROTO_MINOR_GEN 5	/* ours: GEN, CLOSE's INSYNC */
#define PROTO_MINOR_BEAT 6	/* ours: BEAT */
#define PROTO_MINOR_FLAGS 7	/* ours: the response extension's flags */
#define PROTO_MINOR_EPOCHS 8	/* ours: LANE_OP_EPOCHS */
#define PROTO_MINOR_ASYNC 9	/* ours: GEN ASYNC */
#define PROTO_MINOR 9		/* the newest we speak */

/* the response extension's flags (minor 7 on; zero before) */
#define PROTO_EXT_WRITES_BACK 0x1U	/* a persist waits for the replica's
					 * file system to write back */
#define PROTO_EXT_FLAGS PROTO_EXT_WRITES_BACK

enum proto_msg_type {
	PROTO_MSG_CREATE = 1,
	PROTO_MSG_CREATE_RESP = 2,
	PROTO_MSG_OPEN = 3,
	PROTO_MSG_OPEN_RESP = 4,
	PROTO_MSG_CLOSE = 5,
	PROTO_MSG_CLOSE_RESP = 6,
	PROTO_MSG_SET_ATTR = 7,
	PROTO_MSG_SET_ATTR_RESP = 8,
	PROTO_MSG_HASH = 9,		/* ours */
	PROTO_MSG_HASH_RESP = 10,	/* ours */
	PROTO_MSG_STAT = 11,		/* ours */
	PROTO_MSG_STAT_RESP = 12,	/* ours */
	PROTO_MSG_OUTDATE = 13,		/* ours, minor 4 */
	PROTO_MSG_OUTDATE_RESP = 14,	/* ours, minor 4 */
	PROTO_MSG_GEN = 15,		/* ours, minor 5 */
	PROTO_MSG_GEN_RESP = 16,	/* ours, minor 5 */
	PROTO_MSG_BEAT = 17,		/* ours, minor 6 */
	PROTO_MSG_BEAT_RESP = 18,	/* ours, minor 6: also unasked */
};

/* what a GEN asks (proto_gen.c) */
enum proto_gen_op {
	PROTO_GEN_HELLO = 0,	/* the master's identifiers: decide, mark */
	PROTO_GEN_ADOPT = 1,	/* a resync ended: take the master's current */
	PROTO_GEN_ASYNC = 2,	/* the master writes on asynchronously */
	PROTO_GEN_OPS,
};

/* GEN's flags */
#define PROTO_GEN_FLAG_READONLY 0x1U	/* HELLO of a session that writes
					 * nothing (rpmem info, verify) */
#define PROTO_GEN_FLAG_CREATED 0x2U	/* HELLO right after this session's
					 * CREATE */
#define PROTO_GEN_FLAGS (PROTO_GEN_FLAG_READONLY | PROTO_GEN_FLAG_CREATED)

/* wire status codes (pmdk-interop 2.7) */
enum proto_status {
	PROTO_SUCCESS = 0,
	PROTO_ERR_BADPROTO = 1,
	PROTO_ERR_BADNAME = 2,
	PROTO_ERR_BADSIZE = 3,
	PROTO_ERR_BADNLANES = 4,
	PROTO_ERR_BADPROVIDER = 5,
	PROTO_ERR_FATAL = 6,
	PROTO_ERR_FATAL_CONN = 7,
	PROTO_ERR_BUSY = 8,
	PROTO_ERR_EXISTS = 9,
	PROTO_ERR_PROVNOSUP = 10,
	PROTO_ERR_NOEXIST = 11,
	PROTO_ERR_NOACCESS = 12,
	PROTO_ERR_POOL_CFG = 13,
	PROTO_ERR_MAX = 14,
};

enum proto_provider {
	PROTO_PROV_UNKNOWN = 0,
	PROTO_PROV_VERBS = 1,
	PROTO_PROV_SOCKETS = 2,
	PROTO_PROV_TCP = 3,	/* ours */
	PROTO_PROV_MAX = 4,
};

enum proto_pm {
	PROTO_PM_GPSPM = 1,
	PROTO_PM_APM = 2,
};

#define PROTO_CLOSE_FLAG_REMOVE 0x1U
#define PROTO_CLOSE_FLAG_INSYNC 0x2U	/* minor 5: the replica holds every
					 * byte the master persisted */

/* fixed wire sizes */
#define PROTO_HDR_SIZE 12
#define PROTO_HDR_RESP_SIZE 16
#define PROTO_COMMON_SIZE 28
#define PROTO_ATTR_SIZE 104
#define PROTO_IBC_SIZE 28
#define PROTO_REQ_EXT_SIZE 40
#define PROTO_EXT_SIZE 56
#define PROTO_RANDOM_LEN 32

#define PROTO_CREATE_SIZE 148		/* + descriptor incl. NUL + ext */
#define PROTO_OPEN_SIZE 44		/* + descriptor incl. NUL + ext */
#define PROTO_CLOSE_SIZE 16
#define PROTO_SET_ATTR_SIZE 116
#define PROTO_CREATE_RESP_SIZE 44	/* + PROTO_EXT_SIZE in ours */
#define PROTO_OPEN_RESP_SIZE 148	/* + PROTO_EXT_SIZE in ours */
#define PROTO_CLOSE_RESP_SIZE 16
#define PROTO_SET_ATTR_RESP_SIZE 16
#define PROTO_HASH_SIZE 36		/* hdr, offset, length, chunk */
#define PROTO_HASH_RESP_SIZE 24		/* + 8 bytes per hash */
#define PROTO_HASH_MAX 1024		/* hashes in one response */
#define PROTO_STAT_SIZE 12		/* the header alone */
#define PROTO_STAT_RESP_SIZE 32		/* hdr, user us, system us */
#define PROTO_OUTDATE_SIZE 92		/* hdr, mark, rsvd, time, host */
#define PROTO_OUTDATE_RESP_SIZE 16	/* the header alone */
#define PROTO_HOST_MAX 64		/* OUTDATE's host, NUL-padded */
#define PROTO_GEN_BLOCK_SIZE 296	/* a copy's identifiers */
#define PROTO_GEN_SIZE 316		/* hdr, op, flags, block */
#define PROTO_GEN_RESP_SIZE 312		/* hdr, block */
#define PROTO_BEAT_SIZE 16		/* hdr, interval */
#define PROTO_BEAT_RESP_SIZE 16		/* the header alone */
#define PROTO_BEAT_MIN_MS 10		/* BEAT's interval: bounds */
#define PROTO_BEAT_MAX_MS 60000

/* caps applied before anything is allocated or read */
#define PROTO_DESC_MAX 4096		/* descriptor length incl. NUL */
#define PROTO_REQ_MAX (PROTO_CREATE_SIZE + PROTO_DESC_MAX + \
	PROTO_REQ_EXT_SIZE)
#define PROTO_RESP_MAX (PROTO_HASH_RESP_SIZE + 8 * PROTO_HASH_MAX)

/* buff_size of PMDK 0.1 peers: two pool headers */
#define PROTO_DEF_BUFF_SIZE 8192

struct proto_common {
	uint16_t major;
	uint16_t minor;
	uint64_t pool_size;
	uint32_t nlanes;
	uint32_t provider;
	uint64_t buff_size;
};

/* in-band connection attributes returned by create/open */
struct proto_ibc {
	uint32_t port;
	uint32_t persist_method;
	uint64_t rkey;
	uint64_t raddr;
	uint32_t nlanes;
};

/* our request extension: CREATE and OPEN of minor >= 3 */
struct proto_req_ext {
	uint16_t security;	/* the client's lane-security minimum */
	uint16_t cipher;	/* the cipher the client prefers */
	uint8_t random[PROTO_RANDOM_LEN];	/* its key material */
};

/* our response extension: CREATE_RESP and OPEN_RESP to minor >= 3 */
struct proto_ext {
	uint16_t major;
	uint16_t minor;		/* negotiated: min(client, daemon) */
	uint32_t version;	/* rpmemd's: major << 16 | minor << 8 | patch */
	uint64_t buff_size;	/* negotiated inline buffer per lane */
	uint16_t security;	/* the session's lane-security policy */
	uint16_t cipher;	/* and its cipher */
	uint32_t flags;		/* PROTO_EXT_*; minor 7 on, else zero */
	uint8_t random[PROTO_RANDOM_LEN];	/* the daemon's key material */
};

/* a decoded request */
struct proto_req {
	enum proto_msg_type type;
	struct proto_common common;		/* CREATE, OPEN */
	bool has_attr;				/* CREATE, SET_ATTR */
	struct rpmem_pool_attr attr;		/* zeroed when !has_attr */
	char desc[PROTO_DESC_MAX];		/* CREATE, OPEN */
	bool has_ext;				/* CREATE, OPEN of ours */
	struct proto_req_ext ext;
	uint32_t close_flags;			/* CLOSE */
	uint64_t hash_off;			/* HASH: pool offset */
	uint64_t hash_len;			/* HASH: bytes to cover */
	uint64_t hash_chunk;			/* HASH: bytes per hash */
	uint32_t outdate_mark;			/* OUTDATE: 1 mark, 0 clear */
	int64_t outdate_time;			/* OUTDATE: since, epoch s */
	char outdate_host[PROTO_HOST_MAX];	/* OUTDATE: the master's */
	uint32_t gen_op;			/* GEN: enum proto_gen_op */
	uint32_t gen_flags;			/* GEN: PROTO_GEN_FLAG_* */
	struct gen gen;				/* GEN: the master's */
	uint32_t beat_ms;			/* BEAT: the interval */
};

/* a decoded response */
struct proto_resp {
	enum proto_msg_type type;
	uint32_t status;
	struct proto_ibc ibc;			/* CREATE_RESP, OPEN_RESP */
	struct rpmem_pool_attr attr;		/* OPEN_RESP */
	bool has_ext;				/* CREATE_RESP, OPEN_RESP */
	struct proto_ext ext;
	uint32_t nhashes;			/* HASH_RESP */
	uint64_t hashes[PROTO_HASH_MAX];	/* HASH_RESP */
	uint64_t cpu_user_us;			/* STAT_RESP: rpmemd's */
	uint64_t cpu_sys_us;			/* STAT_RESP */
	struct gen gen;				/* GEN_RESP: the replica's */
};

/*
 * proto_hdr_decode -- check the 12-byte request header: type is a
 * request, size is within the type's bounds: -EMSGSIZE above
 * PROTO_REQ_MAX or above the longest CREATE or OPEN (descriptor of
 * PROTO_DESC_MAX, extension), -EPROTO otherwise.
 */
int proto_hdr_decode(const void *buf, size_t len, uint32_t *type,
		uint64_t *size);

/*
 * proto_hdr_resp_decode -- check the 16-byte response header: type is
 * `expected`, size within [base size, PROTO_RESP_MAX].
 */
int proto_hdr_resp_decode(const void *buf, size_t len, uint32_t expected,
		uint32_t *status, uint64_t *size);

/* proto_req_decode -- decode and validate a whole request message */
int proto_req_decode(const void *buf, size_t len, struct proto_req *req);

/* proto_resp_decode -- decode and validate a whole response message */
int proto_resp_decode(const void *buf, size_t len, uint32_t expected,
		struct proto_resp *resp);

/* proto_req_encode -- encode a request; returns its size or -errno */
ssize_t proto_req_encode(const struct proto_req *req, void *buf, size_t len);

/* proto_resp_encode -- encode a response; returns its size or -errno */
ssize_t proto_resp_encode(const struct proto_resp *resp, void *buf,
		size_t len);

/*
 * proto_hash_count -- hashes covering `len` bytes in `chunk`-byte pieces,
 * 0 when chunk is 0 or the count does not fit one response
 */
uint64_t proto_hash_count(uint64_t len, uint64_t chunk);

/* proto_resp_type -- the response type answering a request type */
uint32_t proto_resp_type(uint32_t req_type);

/* proto_attr_is_zero -- an all-zero attribute block means "none" */
bool proto_attr_is_zero(const struct rpmem_pool_attr *attr);

/* proto_status_errno -- wire status to client errno (pmdk-interop 2.7) */
int proto_status_errno(uint32_t status);

/* proto_status_str -- human text of a wire status */
const char *proto_status_str(uint32_t status);

/* proto_provider_name / proto_provider_parse -- "verbs", "sockets"... */
const char *proto_provider_name(uint32_t provider);
enum proto_provider proto_provider_parse(const char *name);

/* proto_msg_name -- "CREATE", "OPEN_RESP", ...; "unknown" for others */
const char *proto_msg_name(uint32_t type);

/* proto_pm_name -- "GPSPM" / "APM" */
const char *proto_pm_name(uint32_t pm);

#endif /* RPMEM_PROTO_H */
