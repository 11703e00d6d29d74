/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pool_hdr.h -- PMDK-compatible 4 KiB pool part header
 *
 * Layout, feature bits and checksum match PMDK 1.12 (pmdk-interop 6.5) so that
 * pmempool and libpmemobj read what rpmemd writes.  Stored little-endian.
 */
#ifndef RPMEM_POOL_HDR_H
#define RPMEM_POOL_HDR_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "librpmem.h"

#define POOL_HDR_SIZE 4096
#define POOL_HDR_SIG_LEN 8
#define POOL_HDR_UUID_LEN 16

#define POOL_FEAT_CHECK_BAD_BLOCKS 0x1U	/* compat */
#define POOL_FEAT_SINGLEHDR 0x1U	/* incompat */
#define POOL_FEAT_CKSUM_2K 0x2U		/* incompat */
#define POOL_FEAT_SDS 0x4U		/* incompat */

#define POOL_HDR_CSUM_2K_OFF 2048

struct pool_features {
	uint32_t compat;
	uint32_t incompat;
	uint32_t ro_compat;
};

struct pool_arch_flags {
	uint64_t alignment_desc;
	uint8_t machine_class;
	uint8_t data;
	uint8_t reserved[4];
	uint16_t machine;
};

struct pool_sds {
	uint64_t usc;
	uint64_t uuid;
	uint8_t dirty;
	uint8_t reserved[39];
	uint64_t checksum;
};

struct pool_hdr {
	char signature[POOL_HDR_SIG_LEN];
	uint32_t major;
	struct pool_features features;
	uint8_t poolset_uuid[POOL_HDR_UUID_LEN];
	uint8_t uuid[POOL_HDR_UUID_LEN];
	uint8_t prev_part_uuid[POOL_HDR_UUID_LEN];
	uint8_t next_part_uuid[POOL_HDR_UUID_LEN];
	uint8_t prev_repl_uuid[POOL_HDR_UUID_LEN];
	uint8_t next_repl_uuid[POOL_HDR_UUID_LEN];
	uint64_t crtime;
	struct pool_arch_flags arch_flags;
	uint8_t unused[1904];
	uint8_t unused2[1976];
	struct pool_sds sds;
	uint64_t checksum;
};

/*
 * pool_hdr_fletcher64 -- PMDK's checksum: over little-endian 32-bit
 * words of [0, len), lo += w; hi += lo; the 8 bytes at `skip` (if
 * < len) count as zero.  Returns hi << 32 | lo.
 */
uint64_t pool_hdr_fletcher64(const void *buf, size_t len, size_t skip);

/* pool_hdr_checksum -- header checksum (2 KiB or 4088 bytes covered) */
uint64_t pool_hdr_checksum(const struct pool_hdr *hdr);

/* pool_hdr_checksum_set -- compute and store hdr->checksum */
void pool_hdr_checksum_set(struct pool_hdr *hdr);

/* pool_hdr_valid -- non-zero header with a correct checksum */
bool pool_hdr_valid(const struct pool_hdr *hdr);

/* pool_hdr_is_zero -- all 4096 bytes zero */
bool pool_hdr_is_zero(const void *buf);

/* pool_hdr_arch_flags -- this machine's arch flags as PMDK computes them */
void pool_hdr_arch_flags(struct pool_arch_flags *af);

/*
 * pool_hdr_from_attr -- fill a header from librpmem attributes: signature,
 * major, features, poolset uuid, part uuid, replica links, arch flags
 * (user_flags; this machine's when all zero); SDS initialised when the
 * feature is set.  Part links and crtime are the caller's.
 */
void pool_hdr_from_attr(struct pool_hdr *hdr,
		const struct rpmem_pool_attr *attr);

/* pool_hdr_to_attr -- the attributes stored in a part-0 header */
void pool_hdr_to_attr(const struct pool_hdr *hdr,
		struct rpmem_pool_attr *attr);

/*
 * PMDK's verdict on the shutdown state a header stores, against the
 * unsafe shutdown count and id sum of the devices now: CLEAN, the same
 * and closed; REINIT, nothing to fear but the state must be recorded
 * afresh (none stored, a bad checksum, open but no unsafe shutdown since,
 * or one while the pool was closed); CORRUPT, an unsafe shutdown while
 * the pool was open (dirty): it may have lost what was acknowledged.
 */
enum pool_sds_verdict {
	POOL_SDS_CLEAN,
	POOL_SDS_REINIT,
	POOL_SDS_CORRUPT,
};

/* pool_sds_check -- the verdict on `sds` for the devices' usc and uuid */
enum pool_sds_verdict pool_sds_check(const struct pool_sds *sds,
		uint64_t usc, uint64_t uuid);

/* pool_sds_set -- store usc, uuid and dirty, with the state's checksum */
void pool_sds_set(struct pool_sds *sds, uint64_t usc, uint64_t uuid,
		bool dirty);

/* pool_hdr_uuid_generate -- random RFC 4122 version 4 uuid */
int pool_hdr_uuid_generate(uint8_t uuid[POOL_HDR_UUID_LEN]);

#endif /* RPMEM_POOL_HDR_H */
