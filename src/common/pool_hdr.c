/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pool_hdr.c -- PMDK-compatible pool part header: checksum, arch, attrs
 *
 * Fields are stored in host byte order.  PMDK stores them little-endian,
 * so the two agree only on little-endian hosts; big-endian hosts are not
 * supported and refused at compile time rather than silently writing
 * headers that pmempool would reject.
 */
#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/random.h>
#include <sys/types.h>

#include "pool_hdr.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "pool_hdr: big-endian hosts are not supported (headers are LE)"
#endif

/* the on-media layout PMDK 1.12 reads (pmdk-interop 6.5) */
_Static_assert(sizeof(struct pool_hdr) == POOL_HDR_SIZE, "pool_hdr size");
_Static_assert(offsetof(struct pool_hdr, signature) == 0, "signature");
_Static_assert(offsetof(struct pool_hdr, major) == 8, "major");
_Static_assert(offsetof(struct pool_hdr, features) == 12, "features");
_Static_assert(offsetof(struct pool_hdr, features.incompat) == 16,
		"incompat");
_Static_assert(offsetof(struct pool_hdr, features.ro_compat) == 20,
		"ro_compat");
_Static_assert(offsetof(struct pool_hdr, poolset_uuid) == 24, "poolset");
_Static_assert(offsetof(struct pool_hdr, uuid) == 40, "uuid");
_Static_assert(offsetof(struct pool_hdr, prev_part_uuid) == 56, "prev_part");
_Static_assert(offsetof(struct pool_hdr, next_part_uuid) == 72, "next_part");
_Static_assert(offsetof(struct pool_hdr, prev_repl_uuid) == 88, "prev_repl");
_Static_assert(offsetof(struct pool_hdr, next_repl_uuid) == 104,
		"next_repl");
_Static_assert(offsetof(struct pool_hdr, crtime) == 120, "crtime");
_Static_assert(offsetof(struct pool_hdr, arch_flags) == 128, "arch_flags");
_Static_assert(offsetof(struct pool_hdr, unused) == 144, "unused");
_Static_assert(offsetof(struct pool_hdr, unused2) == POOL_HDR_CSUM_2K_OFF,
		"unused2");
_Static_assert(offsetof(struct pool_hdr, sds) == 4024, "sds");
_Static_assert(offsetof(struct pool_hdr, checksum) == 4088, "checksum");
_Static_assert(sizeof(struct pool_arch_flags) == 16, "arch_flags size");
_Static_assert(offsetof(struct pool_arch_flags, machine_class) == 8, "class");
_Static_assert(offsetof(struct pool_arch_flags, data) == 9, "data");
_Static_assert(offsetof(struct pool_arch_flags, machine) == 14, "machine");
_Static_assert(sizeof(struct pool_sds) == 64, "sds size");
_Static_assert(offsetof(struct pool_sds, dirty) == 16, "sds dirty");
_Static_assert(offsetof(struct pool_sds, checksum) == 56, "sds checksum");
_Static_assert(sizeof(struct rpmem_pool_attr) == 104, "rpmem_pool_attr");
_Static_assert(RPMEM_POOL_USER_FLAGS_LEN == sizeof(struct pool_arch_flags),
		"user_flags carry the arch flags raw");
_Static_assert(RPMEM_POOL_HDR_SIG_LEN == POOL_HDR_SIG_LEN, "sig len");
_Static_assert(RPMEM_POOL_HDR_UUID_LEN == POOL_HDR_UUID_LEN, "uuid len");

#if defined(__x86_64__)
#define POOL_HDR_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define POOL_HDR_MACHINE EM_AARCH64
#elif defined(__powerpc64__)
#define POOL_HDR_MACHINE EM_PPC64
#elif defined(__riscv)
#define POOL_HDR_MACHINE EM_RISCV
#elif defined(__loongarch64)
#define POOL_HDR_MACHINE EM_LOONGARCH
#else
#error "pool_hdr: unknown ISA, add its ELF e_machine value"
#endif

#if defined(__LP64__)
#define POOL_HDR_CLASS ELFCLASS64
#else
#define POOL_HDR_CLASS ELFCLASS32
#endif

/*
 * PMDK describes the ABI by the offset each basic type gets after a char
 * in a struct (which can differ from _Alignof, e.g. double on i386), minus
 * one, in 4-bit slots in a fixed order.
 */
#define ALIGN_SLOT_BITS 4
#define MEMBER_ALIGN(t) offsetof(struct { char pad; t member; }, member)
#define ALIGN_SLOT(t, i) \
	((((uint64_t)MEMBER_ALIGN(t) - 1) & 0xfU) << ((i) * ALIGN_SLOT_BITS))

#define POOL_HDR_CSUM_OFF offsetof(struct pool_hdr, checksum)
#define POOL_SDS_CSUM_OFF offsetof(struct pool_sds, checksum)

/*
 * fletcher -- PMDK's Fletcher64 variant over the 32-bit words of
 * [0, len): the 8 bytes at csum_off and every byte from `end` on read as
 * zero, but each of those words still adds lo into hi.  That is why a
 * "2 KiB" header checksum is not simply the checksum of the first 2 KiB.
 */
static uint64_t
fletcher(const void *buf, size_t len, size_t csum_off, size_t end)
{
	const unsigned char *p = buf;
	uint32_t lo = 0;
	uint32_t hi = 0;

	for (size_t off = 0; off + sizeof(uint32_t) <= len;
			off += sizeof(uint32_t)) {
		uint32_t word = 0;
		bool zero = off >= end ||
			(off >= csum_off && off - csum_off < sizeof(uint64_t));

		if (!zero)
			memcpy(&word, p + off, sizeof(word));
		lo += word;
		hi += lo;
	}

	return (uint64_t)hi << 32 | lo;
}

/* pool_hdr_fletcher64 -- checksum of [0, len) with 8 bytes at skip zero */
uint64_t
pool_hdr_fletcher64(const void *buf, size_t len, size_t skip)
{
	return fletcher(buf, len, skip, len);
}

/* pool_hdr_checksum -- the checksum PMDK expects in hdr->checksum */
uint64_t
pool_hdr_checksum(const struct pool_hdr *hdr)
{
	size_t end = (hdr->features.incompat & POOL_FEAT_CKSUM_2K) ?
		POOL_HDR_CSUM_2K_OFF : POOL_HDR_CSUM_OFF;

	return fletcher(hdr, sizeof(*hdr), POOL_HDR_CSUM_OFF, end);
}

/* pool_hdr_checksum_set -- compute and store hdr->checksum */
void
pool_hdr_checksum_set(struct pool_hdr *hdr)
{
	hdr->checksum = pool_hdr_checksum(hdr);
}

/* pool_hdr_is_zero -- all 4096 bytes zero */
bool
pool_hdr_is_zero(const void *buf)
{
	const unsigned char *p = buf;

	for (size_t i = 0; i < POOL_HDR_SIZE; i++) {
		if (p[i] != 0)
			return false;
	}
	return true;
}

/*
 * pool_hdr_valid -- non-zero header with a correct checksum; an all-zero
 * page has checksum 0 too, so the zero test is what rejects it
 */
bool
pool_hdr_valid(const struct pool_hdr *hdr)
{
	return !pool_hdr_is_zero(hdr) &&
		pool_hdr_checksum(hdr) == hdr->checksum;
}

/* pool_hdr_arch_flags -- this machine's arch flags as PMDK computes them */
void
pool_hdr_arch_flags(struct pool_arch_flags *af)
{
	memset(af, 0, sizeof(*af));
	af->alignment_desc =
		ALIGN_SLOT(char, 0) |
		ALIGN_SLOT(short, 1) |
		ALIGN_SLOT(int, 2) |
		ALIGN_SLOT(long, 3) |
		ALIGN_SLOT(long long, 4) |
		ALIGN_SLOT(size_t, 5) |
		ALIGN_SLOT(off_t, 6) |
		ALIGN_SLOT(float, 7) |
		ALIGN_SLOT(double, 8) |
		ALIGN_SLOT(long double, 9) |
		ALIGN_SLOT(void *, 10);
	af->machine_class = POOL_HDR_CLASS;
	af->data = ELFDATA2LSB;
	af->machine = POOL_HDR_MACHINE;
}

/* mem_is_zero -- true when `len` bytes at `buf` are all zero */
static bool
mem_is_zero(const void *buf, size_t len)
{
	const unsigned char *p = buf;

	for (size_t i = 0; i < len; i++) {
		if (p[i] != 0)
			return false;
	}
	return true;
}

/* pool_sds_checksum -- the checksum PMDK expects in sds->checksum */
static uint64_t
pool_sds_checksum(const struct pool_sds *sds)
{
	return fletcher(sds, sizeof(*sds), POOL_SDS_CSUM_OFF, sizeof(*sds));
}

/*
 * pool_sds_set -- record a device's unsafe shutdown count and id sum,
 * with the dirty flag, and checksum the state
 */
void
pool_sds_set(struct pool_sds *sds, uint64_t usc, uint64_t uuid, bool dirty)
{
	memset(sds, 0, sizeof(*sds));
	sds->usc = usc;
	sds->uuid = uuid;
	sds->dirty = dirty;
	sds->checksum = pool_sds_checksum(sds);
}

/* pool_sds_check -- PMDK's verdict on a stored shutdown state */
enum pool_sds_verdict
pool_sds_check(const struct pool_sds *sds, uint64_t usc, uint64_t uuid)
{
	if (mem_is_zero(sds, sizeof(*sds)) ||
			pool_sds_checksum(sds) != sds->checksum)
		return POOL_SDS_REINIT;	/* none, or torn while written */
	bool same = sds->usc == usc && sds->uuid == uuid;
	if (same && !sds->dirty)
		return POOL_SDS_CLEAN;
	/* not closed but no failure, or a failure after a clean close */
	if (same || !sds->dirty)
		return POOL_SDS_REINIT;
	return POOL_SDS_CORRUPT;
}

/* pool_hdr_from_attr -- fill a header from librpmem attributes */
void
pool_hdr_from_attr(struct pool_hdr *hdr, const struct rpmem_pool_attr *attr)
{
	memset(hdr, 0, sizeof(*hdr));
	memcpy(hdr->signature, attr->signature, POOL_HDR_SIG_LEN);
	hdr->major = attr->major;
	hdr->features.compat = attr->compat_features;
	hdr->features.incompat = attr->incompat_features;
	hdr->features.ro_compat = attr->ro_compat_features;
	memcpy(hdr->poolset_uuid, attr->poolset_uuid, POOL_HDR_UUID_LEN);
	memcpy(hdr->uuid, attr->uuid, POOL_HDR_UUID_LEN);
	memcpy(hdr->prev_repl_uuid, attr->prev_uuid, POOL_HDR_UUID_LEN);
	memcpy(hdr->next_repl_uuid, attr->next_uuid, POOL_HDR_UUID_LEN);

	if (mem_is_zero(attr->user_flags, sizeof(attr->user_flags)))
		pool_hdr_arch_flags(&hdr->arch_flags);
	else
		memcpy(&hdr->arch_flags, attr->user_flags,
				sizeof(hdr->arch_flags));

	if (hdr->features.incompat & POOL_FEAT_SDS)
		pool_sds_set(&hdr->sds, 0, 0, false);
}

/* pool_hdr_to_attr -- the attributes stored in a part-0 header */
void
pool_hdr_to_attr(const struct pool_hdr *hdr, struct rpmem_pool_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	memcpy(attr->signature, hdr->signature, POOL_HDR_SIG_LEN);
	attr->major = hdr->major;
	attr->compat_features = hdr->features.compat;
	attr->incompat_features = hdr->features.incompat;
	attr->ro_compat_features = hdr->features.ro_compat;
	memcpy(attr->poolset_uuid, hdr->poolset_uuid, POOL_HDR_UUID_LEN);
	memcpy(attr->uuid, hdr->uuid, POOL_HDR_UUID_LEN);
	memcpy(attr->next_uuid, hdr->next_repl_uuid, POOL_HDR_UUID_LEN);
	memcpy(attr->prev_uuid, hdr->prev_repl_uuid, POOL_HDR_UUID_LEN);
	memcpy(attr->user_flags, &hdr->arch_flags, sizeof(attr->user_flags));
}

/* pool_hdr_uuid_generate -- random RFC 4122 version 4 uuid */
int
pool_hdr_uuid_generate(uint8_t uuid[POOL_HDR_UUID_LEN])
{
	size_t got = 0;

	while (got < POOL_HDR_UUID_LEN) {
		ssize_t n = getrandom(uuid + got, POOL_HDR_UUID_LEN - got, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		got += (size_t)n;
	}

	/*
	 * PMDK keeps a uuid as its RFC 4122 fields in host (little-endian)
	 * order, so the version nibble of time_hi_and_version lands in the
	 * high nibble of byte 7; pmempool then prints a proper v4 uuid.
	 * clock_seq_hi_and_reserved (byte 8) carries the 10xx variant.
	 */
	uuid[7] = (uint8_t)((uuid[7] & 0x0fU) | 0x40U);
	uuid[8] = (uint8_t)((uuid[8] & 0x3fU) | 0x80U);
	return 0;
}
