/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gen_file.h -- a copy's generations on disk: the file PART0.gen beside
 * its part 0, text of one "key value" line each, replaced crash-safely
 *
 *   rpmem-generations 1
 *   copy 5f2c0b1e9a7d4c31           the copy's id (gen.h)
 *   part 259:3 1835011 67108864     the part 0 it speaks of: device,
 *                                   inode, and the pool's size
 *   current 9a1b...                 history, target, master alike
 *   history 77ee... 1c02...
 *   peer ID BITMAP OPEN             one line a peer
 *   discarded 1
 *   refused PEER VERDICT TIME       the last session this copy refused
 *   updated TIME
 *
 * A file whose part line names another file (the pool was removed and
 * made again where it was) speaks of another copy: it reads as absent.
 * Unknown keys are ignored, so a newer writer's files still read.
 */
#ifndef RPMEM_GEN_FILE_H
#define RPMEM_GEN_FILE_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gen.h"

#define GEN_FILE_SUFFIX ".gen"
#define GEN_FILE_MAX 8192
#define GEN_VERDICT_MAX 24

/*
 * the identity of the part 0 a file speaks of: its device and inode
 * (the size is the pool's as the writer saw it, for people to read)
 */
struct gen_part {
	unsigned dev_major;
	unsigned dev_minor;
	uint64_t ino;
	uint64_t size;
};

struct gen_file {
	struct gen g;
	struct gen_part part;
	uint64_t refused_peer;		/* the last refusal: of whom */
	char refused[GEN_VERDICT_MAX];	/* its verdict ("" none) */
	int64_t refused_time;		/* when, epoch seconds */
	int64_t updated;		/* when written, epoch seconds */
	uint64_t async_master;		/* a replica: the master whose session
					 * writes (or wrote last) here
					 * asynchronously, so that it may be
					 * behind that master by its lag;
					 * 0: none */
};

/* gen_file_path -- PART0.gen; 0 or -ENAMETOOLONG */
int gen_file_path(const char *part0, char *buf, size_t len);

/* gen_part_of_path -- the identity of part 0 at `path`, of a `size` pool */
int gen_part_of_path(const char *path, uint64_t size, struct gen_part *p);

/* gen_file_format -- the text of `f`; its length, or -ENOSPC */
int gen_file_format(const struct gen_file *f, char *buf, size_t len);

/* gen_file_parse -- read the text; 0 or -EINVAL */
int gen_file_parse(const char *buf, size_t len, struct gen_file *f);

/*
 * gen_file_read -- the file at `path` for the part 0 `part` (NULL: any):
 * 0; -ENOENT when absent, or when it speaks of another part 0 (then
 * *stale is set, when not NULL); -EINVAL when malformed; another -errno
 */
int gen_file_read(const char *path, const struct gen_part *part,
		struct gen_file *f, bool *stale);

/* gen_file_write -- replace the file crash-safely (updated set now) */
int gen_file_write(const char *path, struct gen_file *f);

#endif /* RPMEM_GEN_FILE_H */
