/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * db_gen.c -- the generations of a local copy found from its parts
 */
#include <errno.h>
#include <limits.h>

#include "db_gen.h"
#include "file.h"

/* db_gen_path -- PART0.gen of the replica's parts */
int
db_gen_path(const struct poolset_replica *rep, char *buf, size_t len)
{
	if (rep->remote || rep->nparts == 0)
		return -EINVAL;
	return gen_file_path(rep->parts[0].path, buf, len);
}

/* part0 -- the identity of part 0 */
static int
part0(const struct poolset_replica *rep, struct gen_part *p)
{
	uint64_t size = 0;
	for (unsigned i = 0; i < rep->nparts; i++)
		size += rep->parts[i].size;
	return gen_part_of_path(rep->parts[0].path, size, p);
}

/* db_gen_read -- the copy's generations */
int
db_gen_read(const struct poolset_replica *rep, struct gen_file *f,
		bool *stale)
{
	char path[PATH_MAX];
	struct gen_part p;
	int r = db_gen_path(rep, path, sizeof(path));
	if (!r)
		r = part0(rep, &p);
	if (r) {
		if (stale)
			*stale = false;
		return r;
	}
	return gen_file_read(path, &p, f, stale);
}

/* db_gen_write -- replace them, naming part 0 as it is */
int
db_gen_write(const struct poolset_replica *rep, struct gen_file *f)
{
	char path[PATH_MAX];
	int r = db_gen_path(rep, path, sizeof(path));
	if (!r)
		r = part0(rep, &f->part);
	return r ? r : gen_file_write(path, f);
}

/* db_gen_remove -- the copy has none any more */
int
db_gen_remove(const struct poolset_replica *rep)
{
	char path[PATH_MAX];
	int r = db_gen_path(rep, path, sizeof(path));
	return r ? r : file_remove(path);
}
