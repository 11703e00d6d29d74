/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto.c -- out-of-band wire messages: encoders and validating decoders
 */
#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "proto.h"
#include "proto_int.h"

/*
 * Where each block starts inside its message (pmdk-interop 3.4).  Fields are
 * reached through offsets and memcpy, never through a cast of the buffer,
 * so the buffer needs no alignment and the layout does not depend on the
 * compiler's idea of a struct.
 */
#define HDR_TYPE 0
#define HDR_SIZE 4
#define HDR_RESP_STATUS 0
#define HDR_RESP_TYPE 4
#define HDR_RESP_SIZE 8

#define CREATE_ATTR (PROTO_HDR_SIZE + PROTO_COMMON_SIZE)
#define HASH_OFF PROTO_HDR_SIZE
#define HASH_RESP_COUNT PROTO_HDR_RESP_SIZE
#define HASH_RESP_HASHES PROTO_HASH_RESP_SIZE
#define CLOSE_FLAGS PROTO_HDR_SIZE
#define SET_ATTR_ATTR PROTO_HDR_SIZE
#define RESP_IBC PROTO_HDR_RESP_SIZE
#define OPEN_RESP_ATTR (RESP_IBC + PROTO_IBC_SIZE)

/* a pool descriptor: u32 size, then that many bytes ending in NUL */
#define DESC_SIZE_LEN 4
#define DESC_MIN 2	/* one character and the NUL */

#define PORT_MAX 65535U

/*
 * One wire field of a fixed block: its offset on the wire, where it lives
 * in our struct, its width, and how its bytes are ordered.  Each block is
 * described once below and the same table drives encoding and decoding.
 */
enum field_order {
	RAW,	/* byte array, copied as is */
	BE,	/* number, big-endian on the wire */
	HOST,	/* number PMDK forgot to convert (pmdk-interop 3.2) */
};

struct field {
	unsigned short wire;
	unsigned short mem;
	unsigned short len;
	enum field_order order;
};

#define FIELD(wire, type, member, order) \
	{(wire), offsetof(type, member), sizeof(((type *)0)->member), (order)}
#define NELEMS(tab) (sizeof(tab) / sizeof((tab)[0]))
#define PUT(p, tab, src) fields_put((p), (tab), NELEMS(tab), (src))
#define GET(p, tab, dst) fields_get((p), (tab), NELEMS(tab), (dst))

#define A(w, m, o) FIELD(w, struct rpmem_pool_attr, m, o)
static const struct field attr_fields[] = {
	A(0, signature, RAW), A(8, major, BE), A(12, compat_features, BE),
	A(16, incompat_features, BE), A(20, ro_compat_features, BE),
	A(24, poolset_uuid, RAW), A(40, uuid, RAW), A(56, next_uuid, RAW),
	A(72, prev_uuid, RAW), A(88, user_flags, RAW),
};
#undef A

#define C(w, m) FIELD(w, struct proto_common, m, BE)
static const struct field common_fields[] = {
	C(0, major), C(2, minor), C(4, pool_size), C(12, nlanes),
	C(16, provider), C(20, buff_size),
};
#undef C

#define I(w, m, o) FIELD(w, struct proto_ibc, m, o)
static const struct field ibc_fields[] = {
	I(0, port, BE), I(4, persist_method, BE), I(8, rkey, BE),
	I(16, raddr, BE), I(24, nlanes, HOST),
};
#undef I

#define E(w, m, o) FIELD(w, struct proto_ext, m, o)
static const struct field ext_fields[] = {
	E(0, major, BE), E(2, minor, BE), E(4, version, BE),
	E(8, buff_size, BE), E(16, security, BE), E(18, cipher, BE),
	E(20, flags, BE), E(24, random, RAW),
};
#undef E

/* reserved bytes, zero on the wire: decoders refuse anything else */
#define REQ_EXT_RSVD 4
#define HASH_RESP_RSVD (HASH_RESP_COUNT + 4)

/*
 * ext_flags_ok -- the response extension's flags: known ones only, and
 * none from a peer older than minor 7, whose word was reserved
 */
static bool
ext_flags_ok(const struct proto_ext *ext)
{
	return !(ext->flags & ~PROTO_EXT_FLAGS) &&
		(!ext->flags || ext->minor >= PROTO_MINOR_FLAGS);
}

/* bytes 4-7 of the request extension are reserved (zero) */
#define Q(w, m, o) FIELD(w, struct proto_req_ext, m, o)
static const struct field req_ext_fields[] = {
	Q(0, security, BE), Q(2, cipher, BE), Q(8, random, RAW),
};
#undef Q

static const struct field close_fields[] = {
	FIELD(0, struct proto_req, close_flags, HOST),
};

static const struct field stat_resp_fields[] = {
	FIELD(16, struct proto_resp, cpu_user_us, BE),
	FIELD(24, struct proto_resp, cpu_sys_us, BE),
};

static const struct field hash_fields[] = {
	FIELD(0, struct proto_req, hash_off, BE),
	FIELD(8, struct proto_req, hash_len, BE),
	FIELD(16, struct proto_req, hash_chunk, BE),
};

/*
 * copy_be -- copy a `len`-byte number from `src` to `dst`, swapping
 * between host and big-endian order; the swap is its own inverse, so this
 * serves both directions
 */
static void
copy_be(void *dst, const void *src, size_t len)
{
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	switch (len) {
	case sizeof(v16):
		memcpy(&v16, src, sizeof(v16));
		v16 = htobe16(v16);
		memcpy(dst, &v16, sizeof(v16));
		break;
	case sizeof(v32):
		memcpy(&v32, src, sizeof(v32));
		v32 = htobe32(v32);
		memcpy(dst, &v32, sizeof(v32));
		break;
	case sizeof(v64):
		memcpy(&v64, src, sizeof(v64));
		v64 = htobe64(v64);
		memcpy(dst, &v64, sizeof(v64));
		break;
	default:
		/* no such field in the tables; never touch other bytes */
		break;
	}
}

/* fields_put -- encode the struct at `src` as described by `f` */
static void
fields_put(unsigned char *p, const struct field *f, size_t n,
		const void *src)
{
	for (size_t i = 0; i < n; i++) {
		const unsigned char *m = (const unsigned char *)src + f[i].mem;
		if (f[i].order == BE)
			copy_be(p + f[i].wire, m, f[i].len);
		else
			memcpy(p + f[i].wire, m, f[i].len);
	}
}

/* fields_get -- decode into the struct at `dst` as described by `f` */
static void
fields_get(const unsigned char *p, const struct field *f, size_t n,
		void *dst)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char *m = (unsigned char *)dst + f[i].mem;
		if (f[i].order == BE)
			copy_be(m, p + f[i].wire, f[i].len);
		else
			memcpy(m, p + f[i].wire, f[i].len);
	}
}

/* put32 -- store `v` big-endian at `p` + `off` */
static void
put32(unsigned char *p, size_t off, uint32_t v)
{
	copy_be(p + off, &v, sizeof(v));
}

/* put64 -- store `v` big-endian at `p` + `off` */
static void
put64(unsigned char *p, size_t off, uint64_t v)
{
	copy_be(p + off, &v, sizeof(v));
}

/* get32 -- load a big-endian u32 from `p` + `off` */
static uint32_t
get32(const unsigned char *p, size_t off)
{
	uint32_t v;

	copy_be(&v, p + off, sizeof(v));
	return v;
}

/* get64 -- load a big-endian u64 from `p` + `off` */
static uint64_t
get64(const unsigned char *p, size_t off)
{
	uint64_t v;

	copy_be(&v, p + off, sizeof(v));
	return v;
}

/*
 * every message type: its name, and the fixed part of the message
 * (pmdk-interop 3.3); a request and its response side by side
 */
#define MSG(t) [PROTO_MSG_##t] = { PROTO_##t##_SIZE, #t }, \
	[PROTO_MSG_##t##_RESP] = { PROTO_##t##_RESP_SIZE, #t "_RESP" }
static const struct {
	unsigned short base;
	const char *name;
} Msgs[] = {
	MSG(CREATE), MSG(OPEN), MSG(CLOSE), MSG(SET_ATTR), MSG(HASH),
	MSG(STAT), MSG(OUTDATE), MSG(GEN), MSG(BEAT),
};
#undef MSG

/* base_size -- fixed part of a message of `type`; 0: no such type */
static size_t
base_size(uint32_t type)
{
	return type < NELEMS(Msgs) ? Msgs[type].base : 0;
}

/* proto_msg_name -- "CREATE", "OPEN_RESP", ...; "unknown" for others */
const char *
proto_msg_name(uint32_t type)
{
	return base_size(type) ? Msgs[type].name : "unknown";
}

/* is_req -- requests are the odd types */
static bool
is_req(uint32_t type)
{
	return base_size(type) != 0 && type % 2 == 1;
}

/*
 * has_desc -- CREATE and OPEN carry the common block at the header's end
 * and end with the descriptor, whose u32 size ends their fixed part
 */
static bool
has_desc(uint32_t type)
{
	return type == PROTO_MSG_CREATE || type == PROTO_MSG_OPEN;
}

/* has_ibc -- CREATE_RESP and OPEN_RESP carry ibc and maybe the extension */
static bool
has_ibc(uint32_t type)
{
	return type == PROTO_MSG_CREATE_RESP || type == PROTO_MSG_OPEN_RESP;
}

/* attr_offset -- where a message's attribute block is; 0: it has none */
static size_t
attr_offset(uint32_t type)
{
	switch (type) {
	case PROTO_MSG_CREATE:
		return CREATE_ATTR;
	case PROTO_MSG_SET_ATTR:
		return SET_ATTR_ATTR;
	case PROTO_MSG_OPEN_RESP:
		return OPEN_RESP_ATTR;
	default:
		return 0;
	}
}

/* proto_hash_count -- hashes covering len bytes; 0: not one response */
uint64_t
proto_hash_count(uint64_t len, uint64_t chunk)
{
	if (chunk == 0)
		return 0;
	uint64_t n = len / chunk + (len % chunk != 0);
	return n <= PROTO_HASH_MAX ? n : 0;
}

/* hash_resp_size_ok -- a HASH_RESP carries a whole number of hashes */
static bool
hash_resp_size_ok(uint64_t size)
{
	return size >= PROTO_HASH_RESP_SIZE &&
		(size - PROTO_HASH_RESP_SIZE) % 8 == 0 &&
		(size - PROTO_HASH_RESP_SIZE) / 8 <= PROTO_HASH_MAX;
}

/* provider_ok -- the provider ids we know, tcp included */
static bool
provider_ok(uint32_t provider)
{
	return provider > PROTO_PROV_UNKNOWN && provider < PROTO_PROV_MAX;
}

/*
 * ibc_ok -- a successful create/open must name a usable fabric port and
 * a persist method we know; failed ones carry a zeroed block
 */
static bool
ibc_ok(const struct proto_ibc *ibc)
{
	return ibc->port != 0 && ibc->port <= PORT_MAX &&
		(ibc->persist_method == PROTO_PM_GPSPM ||
		ibc->persist_method == PROTO_PM_APM);
}

/*
 * desc_get -- validate the descriptor that follows the fixed part
 * (`base` bytes) of a message of `len` bytes and is followed by exactly
 * `tail` bytes, and copy the string out
 */
static int
desc_get(const unsigned char *p, size_t len, size_t base, size_t tail,
		char *desc)
{
	uint32_t size = get32(p, base - DESC_SIZE_LEN);

	if (size < DESC_MIN || size > PROTO_DESC_MAX || len - base < tail ||
			size != len - base - tail)
		return -EPROTO;

	const unsigned char *s = p + base;
	if (s[size - 1] != '\0' || memchr(s, '\0', size - 1) != NULL)
		return -EPROTO;

	memcpy(desc, s, size);
	return 0;
}

/* desc_len -- wire length of `desc` with its NUL, or 0 when unusable */
static size_t
desc_len(const char *desc)
{
	size_t n = strnlen(desc, PROTO_DESC_MAX);

	/* n == PROTO_DESC_MAX: no NUL inside the buffer at all */
	if (n == 0 || n == PROTO_DESC_MAX)
		return 0;
	return n + 1;
}

/* proto_hdr_decode -- check the 12-byte request header */
int
proto_hdr_decode(const void *buf, size_t len, uint32_t *type,
		uint64_t *size)
{
	if (buf == NULL || type == NULL || size == NULL)
		return -EINVAL;
	if (len < PROTO_HDR_SIZE)
		return -EPROTO;

	*type = get32(buf, HDR_TYPE);
	*size = get64(buf, HDR_SIZE);

	if (!is_req(*type))
		return -EPROTO;

	/*
	 * only CREATE and OPEN have a variable part (and maybe an ext),
	 * capped alike: the longest descriptor and the extension
	 */
	uint64_t min = base_size(*type);
	uint64_t max = min;
	if (has_desc(*type)) {
		max += PROTO_DESC_MAX + PROTO_REQ_EXT_SIZE;
		min += DESC_MIN;
	}
	if (*size > PROTO_REQ_MAX || (has_desc(*type) && *size > max))
		return -EMSGSIZE;
	if (*size < min || *size > max)
		return -EPROTO;

	return 0;
}

/* proto_hdr_resp_decode -- check the 16-byte response header */
int
proto_hdr_resp_decode(const void *buf, size_t len, uint32_t expected,
		uint32_t *status, uint64_t *size)
{
	if (buf == NULL || status == NULL || size == NULL)
		return -EINVAL;

	uint64_t base = base_size(expected);
	if (base == 0 || is_req(expected))
		return -EINVAL;
	if (len < PROTO_HDR_RESP_SIZE)
		return -EPROTO;

	*status = get32(buf, HDR_RESP_STATUS);
	*size = get64(buf, HDR_RESP_SIZE);

	if (get32(buf, HDR_RESP_TYPE) != expected)
		return -EPROTO;
	if (*status >= PROTO_ERR_MAX)
		return -EPROTO;
	if (expected == PROTO_MSG_HASH_RESP) {
		if (!hash_resp_size_ok(*size))
			return -EPROTO;
	} else if (*size != base && !(has_ibc(expected) &&
			*size == base + PROTO_EXT_SIZE)) {
		/* a PMDK 0.1 daemon sends the bare layout, ours the ext */
		return -EPROTO;
	}

	return 0;
}

/* req_body_decode -- validate and decode what follows a good header */
static int
req_body_decode(const unsigned char *p, size_t len, struct proto_req *req)
{
	uint32_t type = req->type;

	if (has_desc(type)) {
		GET(p + PROTO_HDR_SIZE, common_fields, &req->common);
		/* first: another major may lay out the rest differently */
		if (req->common.major != PROTO_MAJOR)
			return -EPROTONOSUPPORT;
		if (!provider_ok(req->common.provider))
			return -EPROTO;
		/* ours end with the extension block; PMDK's do not */
		req->has_ext = req->common.minor >= PROTO_MINOR_EXT;
		size_t tail = req->has_ext ? PROTO_REQ_EXT_SIZE : 0;
		int ret = desc_get(p, len, base_size(type), tail, req->desc);
		if (ret)
			return ret;
		if (req->has_ext) {
			if (get32(p, len - tail + REQ_EXT_RSVD))
				return -EPROTO;
			GET(p + len - tail, req_ext_fields, &req->ext);
		}
	}

	size_t attr = attr_offset(type);
	if (attr != 0) {
		GET(p + attr, attr_fields, &req->attr);
		req->has_attr = !proto_attr_is_zero(&req->attr);
	}

	if (type == PROTO_MSG_CLOSE)
		GET(p + CLOSE_FLAGS, close_fields, req);

	if (type == PROTO_MSG_HASH) {
		GET(p + HASH_OFF, hash_fields, req);
		if (req->hash_len == 0 ||
				!proto_hash_count(req->hash_len, req->hash_chunk))
			return -EPROTO;
	}
	if (type == PROTO_MSG_OUTDATE)
		return proto_outdate_get(p, req);
	if (type == PROTO_MSG_GEN)
		return proto_gen_get(p, req);
	if (type == PROTO_MSG_BEAT)
		return proto_beat_get(p, req);
	return 0;
}

/* proto_req_decode -- decode and validate a whole request message */
int
proto_req_decode(const void *buf, size_t len, struct proto_req *req)
{
	uint32_t type;
	uint64_t size;

	if (buf == NULL || req == NULL)
		return -EINVAL;

	memset(req, 0, sizeof(*req));

	int ret = proto_hdr_decode(buf, len, &type, &size);
	if (ret)
		return ret;
	if (size != len)
		return -EPROTO;

	req->type = (enum proto_msg_type)type;
	ret = req_body_decode(buf, len, req);
	/* on a version mismatch keep common for the caller's log line */
	if (ret != 0 && ret != -EPROTONOSUPPORT)
		memset(req, 0, sizeof(*req));
	return ret;
}

/* proto_resp_decode -- decode and validate a whole response message */
int
proto_resp_decode(const void *buf, size_t len, uint32_t expected,
		struct proto_resp *resp)
{
	uint32_t status;
	uint64_t size;

	if (buf == NULL || resp == NULL)
		return -EINVAL;

	memset(resp, 0, sizeof(*resp));

	int ret = proto_hdr_resp_decode(buf, len, expected, &status, &size);
	if (ret)
		return ret;
	if (size != len)
		return -EPROTO;

	resp->type = (enum proto_msg_type)expected;
	resp->status = status;
	if (expected == PROTO_MSG_HASH_RESP) {
		const unsigned char *h = buf;
		resp->nhashes = get32(h, HASH_RESP_COUNT);
		if (resp->nhashes != (size - PROTO_HASH_RESP_SIZE) / 8 ||
				get32(h, HASH_RESP_RSVD) ||
				(status != PROTO_SUCCESS && resp->nhashes)) {
			memset(resp, 0, sizeof(*resp));
			return -EPROTO;
		}
		for (uint32_t i = 0; i < resp->nhashes; i++)
			resp->hashes[i] = get64(h, HASH_RESP_HASHES + 8 * i);
		return 0;
	}
	if (expected == PROTO_MSG_STAT_RESP)
		GET((const unsigned char *)buf, stat_resp_fields, resp);
	if (expected == PROTO_MSG_GEN_RESP && proto_gen_block_get(
			(const unsigned char *)buf + PROTO_HDR_RESP_SIZE,
			&resp->gen)) {
		memset(resp, 0, sizeof(*resp));
		return -EPROTO;
	}
	if (!has_ibc(expected))
		return 0;

	const unsigned char *p = buf;
	size_t base = base_size(expected);

	GET(p + RESP_IBC, ibc_fields, &resp->ibc);
	if (attr_offset(expected) != 0)
		GET(p + attr_offset(expected), attr_fields, &resp->attr);
	resp->has_ext = size > base;
	if (resp->has_ext) {
		GET(p + base, ext_fields, &resp->ext);
		if (!ext_flags_ok(&resp->ext)) {
			memset(resp, 0, sizeof(*resp));
			return -EPROTO;
		}
	}

	if (status != PROTO_SUCCESS)
		return 0;

	/* the extension is ours: our major, minor 3 on */
	if (!ibc_ok(&resp->ibc) || (resp->has_ext &&
			(resp->ext.major != PROTO_MAJOR ||
			resp->ext.minor < PROTO_MINOR_EXT))) {
		memset(resp, 0, sizeof(*resp));
		return -EPROTO;
	}
	return 0;
}

/*
 * proto_req_encode -- encode a request; returns its size or -errno
 *
 * Refuses what the decoder would refuse, except the version fields, so
 * that tests can still speak to a daemon of another version.
 */
ssize_t
proto_req_encode(const struct proto_req *req, void *buf, size_t len)
{
	if (req == NULL || buf == NULL)
		return -EINVAL;

	uint32_t type = (uint32_t)req->type;
	if (!is_req(type))
		return -EINVAL;

	size_t base = base_size(type);
	size_t dlen = 0;
	if (has_desc(type)) {
		if (!provider_ok(req->common.provider))
			return -EINVAL;
		dlen = desc_len(req->desc);
		if (dlen == 0)
			return -EINVAL;
	}

	size_t tail = has_desc(type) && req->has_ext ? PROTO_REQ_EXT_SIZE : 0;
	size_t size = base + dlen + tail;
	if (len < size)
		return -ENOBUFS;

	unsigned char *p = buf;
	memset(p, 0, size);	/* reserved bytes and absent blocks */
	put32(p, HDR_TYPE, type);
	put64(p, HDR_SIZE, size);

	if (has_desc(type)) {
		PUT(p + PROTO_HDR_SIZE, common_fields, &req->common);
		put32(p, base - DESC_SIZE_LEN, (uint32_t)dlen);
		memcpy(p + base, req->desc, dlen);
		if (tail)
			PUT(p + base + dlen, req_ext_fields, &req->ext);
	}

	/* no attributes travel as an all-zero block (pmdk-interop 3.5) */
	size_t attr = attr_offset(type);
	if (attr != 0 && req->has_attr)
		PUT(p + attr, attr_fields, &req->attr);

	if (type == PROTO_MSG_CLOSE)
		PUT(p + CLOSE_FLAGS, close_fields, req);
	if (type == PROTO_MSG_HASH) {
		if (req->hash_len == 0 ||
				!proto_hash_count(req->hash_len, req->hash_chunk))
			return -EINVAL;
		PUT(p + HASH_OFF, hash_fields, req);
	}
	if (type == PROTO_MSG_OUTDATE) {
		int ret = proto_outdate_put(p, req);
		if (ret)
			return ret;
	}
	if (type == PROTO_MSG_GEN) {
		int ret = proto_gen_put(p, req);
		if (ret)
			return ret;
	}
	if (type == PROTO_MSG_BEAT) {
		int ret = proto_beat_put(p, req);
		if (ret)
			return ret;
	}

	return (ssize_t)size;
}

/*
 * proto_resp_encode -- encode a response; returns its size or -errno
 *
 * Like the request encoder it refuses what the decoder would refuse,
 * except the version fields of the extension block.
 */
ssize_t
proto_resp_encode(const struct proto_resp *resp, void *buf, size_t len)
{
	if (resp == NULL || buf == NULL)
		return -EINVAL;

	uint32_t type = (uint32_t)resp->type;
	size_t base = base_size(type);
	if (base == 0 || is_req(type) || resp->status >= PROTO_ERR_MAX)
		return -EINVAL;

	bool ibc = has_ibc(type);
	if (ibc && resp->status == PROTO_SUCCESS && !ibc_ok(&resp->ibc))
		return -EINVAL;

	bool ext = ibc && resp->has_ext;
	if (ext && !ext_flags_ok(&resp->ext))
		return -EINVAL;
	bool hash = type == PROTO_MSG_HASH_RESP;
	if (hash && (resp->nhashes > PROTO_HASH_MAX ||
			(resp->status != PROTO_SUCCESS && resp->nhashes)))
		return -EINVAL;
	size_t size = base + (ext ? PROTO_EXT_SIZE : 0) +
		(hash ? 8 * (size_t)resp->nhashes : 0);
	if (len < size)
		return -ENOBUFS;

	unsigned char *p = buf;
	memset(p, 0, size);	/* reserved bytes */
	put32(p, HDR_RESP_STATUS, resp->status);
	put32(p, HDR_RESP_TYPE, type);
	put64(p, HDR_RESP_SIZE, size);

	if (ibc)
		PUT(p + RESP_IBC, ibc_fields, &resp->ibc);
	if (attr_offset(type) != 0)
		PUT(p + attr_offset(type), attr_fields, &resp->attr);
	if (ext)
		PUT(p + base, ext_fields, &resp->ext);
	if (type == PROTO_MSG_STAT_RESP)
		PUT(p, stat_resp_fields, resp);
	if (type == PROTO_MSG_GEN_RESP &&
			proto_gen_block_put(p + PROTO_HDR_RESP_SIZE, &resp->gen))
		return -EINVAL;
	if (hash) {
		put32(p, HASH_RESP_COUNT, resp->nhashes);
		for (uint32_t i = 0; i < resp->nhashes; i++)
			put64(p, HASH_RESP_HASHES + 8 * i, resp->hashes[i]);
	}

	return (ssize_t)size;
}

/* proto_resp_type -- the response type answering a request type */
uint32_t
proto_resp_type(uint32_t req_type)
{
	return is_req(req_type) ? req_type + 1 : 0;
}

/* proto_attr_is_zero -- an all-zero attribute block means "none" */
bool
proto_attr_is_zero(const struct rpmem_pool_attr *attr)
{
	if (attr == NULL)
		return true;

	/* the struct has no padding (pmdk-interop 1.3), so bytes are fields */
	const unsigned char *p = (const unsigned char *)attr;
	for (size_t i = 0; i < sizeof(*attr); i++) {
		if (p[i] != 0)
			return false;
	}
	return true;
}
