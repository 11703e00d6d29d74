/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gc.h -- genclient's parts (genclient.c says what it does): the
 * master's memory and handle (gc_pool.c), the soak and its oracles
 * (gc_soak.c), the soak of many threads and its oracle (gc_mt.c)
 */
#ifndef GC_H
#define GC_H 1

#include <stddef.h>
#include <stdint.h>

#include <librpmem.h>

#define HDR 4096			/* the pool's header: never written */
#define PIECE ((size_t)1 << 20)		/* the largest persist of `write` */
#define EXIT_OPEN 2			/* rpmem_open failed */

extern const char *Target, *Set;	/* the replica: its target and set */
extern size_t Size;			/* the pool's size */
extern unsigned char *Pool;		/* the master's memory */

/* map -- the master's memory: FILE, Size bytes, shared; 0 or -1 */
int map(const char *file);

/* word -- the 8 bytes pattern `seed` puts at offset `off` */
uint64_t word(uint64_t seed, size_t off);

/* pattern -- pattern `seed` into [off, off + len) of the memory */
void pattern(uint64_t seed, size_t off, size_t len);

/*
 * persist -- [off, off + len) in pieces; 0 or -1 with the message;
 * Persist_max_us is the longest piece's call so far
 */
int persist(RPMEMpool *rpp, size_t off, size_t len);
extern long long Persist_max_us;

/* open_pool -- rpmem_open, timed; NULL after saying why */
RPMEMpool *open_pool(void);

/* close_pool -- rpmem_close, timed; 0 or 1 */
int close_pool(RPMEMpool *rpp);

/* wait_file -- until DIR/name exists */
void wait_file(const char *dir, const char *name);

/* wait_gone -- while DIR/name exists */
void wait_gone(const char *dir, const char *name);

/* touch -- make DIR/name */
void touch(const char *dir, const char *name);

/* beyond_bound -- `behind` bytes past the bound `lag`, said; else 0 */
int beyond_bound(size_t behind, size_t lag);

/* the soak and its oracles (gc_soak.c; genclient.c's usage) */
int cmd_soak(uint64_t seed, const char *dir);
int cmd_acked(uint64_t seed, const char *acks, long long upto,
		const char *part);
int cmd_prefix(uint64_t seed, const char *acks, const char *part,
		size_t lag);

/* the soak of many threads and its oracle (gc_mt.c) */
int cmd_mtsoak(uint64_t seed, unsigned threads, const char *dir);
int cmd_order(uint64_t seed, const char *dir, const char *part, size_t lag);

#endif /* GC_H */
