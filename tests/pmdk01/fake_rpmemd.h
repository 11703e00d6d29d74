/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fake_rpmemd.h -- a stand-in for PMDK 1.12's rpmemd: what its parts share
 *
 * fake_rpmemd.c runs the command line and the start-up,
 * fake_rpmemd_obc.c the out-of-band loop, fake_rpmemd_pool.c keeps
 * pools as plain files, fake_rpmemd_fip.c serves the lanes.  Behaviour
 * follows ../shared/pmdk-rpmem-facts.md (sections 2.7, 3, 4 and 5).
 */
#ifndef PMDK01_FAKE_RPMEMD_H
#define PMDK01_FAKE_RPMEMD_H 1

#include <stddef.h>
#include <stdint.h>

#include "wire01.h"

/* log levels of --log-level, in PMDK's order */
enum fr_level {
	FR_ERR,
	FR_WARN,
	FR_NOTICE,
	FR_INFO,
	FR_DEBUG,
	FR_LEVELS
};

/* fr_log -- one line to --log-file when its level passes; thread safe */
void fr_log(enum fr_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* fr_die -- PMDK's rpmemd aborts here (an assertion): log and abort */
void fr_die(const char *why) __attribute__((noreturn));

/* fr_send_status -- the 4-byte host-order status word on stdout */
int fr_send_status(uint32_t status);

/* what the out-of-band loop takes from the command line */
struct fr_obc_cfg {
	const char *poolset_dir;	/* absolute */
	unsigned long nthreads;		/* --nthreads */
};

/*
 * fr_obc_serve -- the session after the start-up status; returns the
 * exit status (0, 1 when stdin ended first, 255 on a bad request)
 */
int fr_obc_serve(const struct fr_obc_cfg *cfg);

/* a pool: the file D.pool under --poolset-dir, mapped shared */
struct fr_pool {
	char *path;		/* DIR/DESC.pool */
	char *attr_path;	/* DIR/DESC.attr: the attributes, wire form */
	int fd;			/* holds the flock */
	void *addr;
	size_t size;		/* of the file and the mapping */
	struct w01_attr attr;	/* zero: none */
};

/*
 * fr_pool_create / fr_pool_open -- 0 or -errno; the errno picks the
 * status as PMDK's does (fr_pool_status).  Create makes a file of `size`
 * bytes and stores `attr`; open needs the file and returns its attrs.
 */
int fr_pool_create(const char *dir, const char *desc, uint64_t size,
		const struct w01_attr *attr, struct fr_pool *pool);
int fr_pool_open(const char *dir, const char *desc, struct fr_pool *pool);

/* fr_pool_set_attr -- store new attributes; 0 or -errno */
int fr_pool_set_attr(struct fr_pool *pool, const struct w01_attr *attr);

/* fr_pool_close -- unmap, unlock, close */
void fr_pool_close(struct fr_pool *pool);

/* fr_pool_remove -- delete D.pool and D.attr; 0 or -errno */
int fr_pool_remove(const char *dir, const char *desc, int force);

/* fr_pool_status -- errno of a failed create/open to a wire status */
uint32_t fr_pool_status(int err);

/* fr_pool_persist -- make [addr, addr + len) of a pool durable (msync) */
int fr_pool_persist(void *addr, size_t len);

/* fr_pool_copy -- copy with aligned 8-byte words stored whole */
void fr_pool_copy(void *dst, const void *src, size_t len);

/* what the in-band side needs from a CREATE or OPEN */
struct fr_fip_attr {
	void *addr;		/* pool base: offset 0 of the client */
	size_t size;		/* registered: the request's pool_size */
	uint32_t nlanes;	/* asked for */
	uint32_t provider;
	uint64_t buff_size;	/* the client's inline buffer per lane */
	unsigned long nthreads;	/* --nthreads, 0: one per lane */
};

struct fr_fip;

/*
 * fr_fip_init -- getinfo on `node`, register the pool, listen on an
 * ephemeral port and fill `ibc`; NULL with *status set on failure
 */
struct fr_fip *fr_fip_init(const char *node, const struct fr_fip_attr *attr,
		struct w01_ibc *ibc, uint32_t *status);

/* fr_fip_start -- the accept thread: nlanes connections, then workers */
int fr_fip_start(struct fr_fip *fip);

/*
 * fr_fip_stop -- wait for the accept thread; when it succeeded stop the
 * workers.  Returns the accept thread's result (0 or -1), as PMDK's
 * close does to decide its status.
 */
int fr_fip_stop(struct fr_fip *fip);

/* fr_fip_fini -- close endpoints and free everything */
void fr_fip_fini(struct fr_fip *fip);

#endif /* PMDK01_FAKE_RPMEMD_H */
