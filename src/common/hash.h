/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hash.h -- 64-bit content hash of pool ranges (rpmem verify)
 *
 * Not cryptographic: it tells a replica's bytes from the master's when
 * they differ by accident (lost writes, damaged media, an interrupted
 * sync), computed where the bytes are so they need not cross the wire.
 */
#ifndef RPMEM_HASH_H
#define RPMEM_HASH_H 1

#include <stddef.h>
#include <stdint.h>

/* hash64 -- hash of `len` bytes; equal bytes always hash equal */
uint64_t hash64(const void *buf, size_t len);

/*
 * hash64_chunks -- hashes of consecutive `chunk`-byte pieces of [buf,
 * buf + len), the last one possibly shorter; `out` holds one per piece
 */
void hash64_chunks(const void *buf, size_t len, size_t chunk,
		uint64_t *out);

#endif /* RPMEM_HASH_H */
