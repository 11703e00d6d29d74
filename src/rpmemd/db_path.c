/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * db_path.c -- resolve pool set descriptors strictly beneath poolset-dir
 *
 * PMDK's rpmemd only refused absolute descriptors, so "../x" walked out
 * of poolset-dir (scenario S1).  Here a descriptor is checked as a
 * string first, then resolved by the kernel (openat2 RESOLVE_BENEATH) or,
 * on kernels without openat2, by our own walk that opens one component
 * at a time with O_NOFOLLOW and expands symlinks itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef SYS_openat2
#include <linux/openat2.h>
#endif

#include "db_int.h"
#include "log.h"

/* same bound as the kernel's MAXSYMLINKS */
#define WALK_MAX_LINKS 40

/* openat2 may ask for a retry when a rename raced with the lookup */
#define OPENAT2_RETRIES 8

/*
 * db_path_check -- string-level refusals, before any lookup: what makes
 * the name itself unusable is -EBADF (status BADNAME, as PMDK answers an
 * absolute one); a ".." is an escape, -EACCES (scenario S1)
 */
int
db_path_check(const char *desc)
{
	if (desc == NULL || desc[0] == '\0') {
		log_err("pool set descriptor is empty");
		return -EBADF;
	}

	/* control bytes are refused: no pool set name needs them */
	for (const char *c = desc; *c != '\0'; c++) {
		if ((unsigned char)*c < 0x20 || *c == 0x7f) {
			log_err("pool set descriptor %s contains control "
					"character 0x%02x", log_quote(desc).s,
					(unsigned char)*c);
			return -EBADF;
		}
	}

	if (desc[0] == '/') {
		log_err("pool set descriptor %s is an absolute path",
			log_quote(desc).s);
		return -EBADF;
	}

	if (desc[strlen(desc) - 1] == '/') {
		log_err("pool set descriptor %s names a directory",
			log_quote(desc).s);
		return -EBADF;
	}

	for (const char *c = desc; *c != '\0'; ) {
		size_t len = strcspn(c, "/");

		if (len == 2 && c[0] == '.' && c[1] == '.') {
			log_err("pool set descriptor %s contains '..'",
				log_quote(desc).s);
			return -EACCES;
		}
		c += len;
		c += strspn(c, "/");
	}

	return 0;
}

/* walk_pop -- leave the current directory; refused at the root */
static int
walk_pop(int *stack, size_t *depth)
{
	if (*depth == 0)
		return -EACCES;
	close(stack[--*depth]);
	return 0;
}

/* walk_push -- remember an opened directory */
static int
walk_push(int **stack, size_t *depth, size_t *cap, int fd)
{
	if (*depth == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		int *n = realloc(*stack, ncap * sizeof(**stack));

		if (n == NULL) {
			close(fd);
			return -ENOMEM;
		}
		*stack = n;
		*cap = ncap;
	}
	(*stack)[(*depth)++] = fd;
	return 0;
}

/*
 * walk_link -- splice the target of symlink `name` (in `dirfd`) in front
 * of the rest of the path.  Absolute targets are refused outright, the
 * same as RESOLVE_BENEATH does; relative ones are checked as we walk
 * them, a ".." at the root being the escape.
 */
static int
walk_link(int dirfd, const char *name, const char *rest, char **path,
		const char *desc)
{
	char target[PATH_MAX];
	ssize_t n = readlinkat(dirfd, name, target, sizeof(target));

	if (n < 0)
		return -errno;
	if ((size_t)n >= sizeof(target))
		return -ENAMETOOLONG;
	target[n] = '\0';

	if (target[0] == '/') {
		log_err("pool set descriptor %s: symlink %s points to "
				"absolute path %s", log_quote(desc).s,
				log_quote(name).s, log_quote(target).s);
		return -EACCES;
	}

	char *np;
	int ret = rest[0] == '\0' ?
		asprintf(&np, "%s", target) :
		asprintf(&np, "%s/%s", target, rest);
	if (ret < 0)
		return -ENOMEM;

	free(*path);
	*path = np;
	return 0;
}

/*
 * walk_open -- resolve `desc` one component at a time.  Each directory
 * is opened O_NOFOLLOW from the one before, so a component swapped for
 * a symlink after we looked at it makes the open fail instead of
 * leading somewhere else.
 */
static int
walk_open(int rootfd, const char *root, const char *desc, int flags)
{
	int *stack = NULL;
	size_t depth = 0;
	size_t cap = 0;
	unsigned links = 0;
	int ret;

	char *path = strdup(desc);
	if (path == NULL)
		return -ENOMEM;

	char *p = path;
	for (;;) {
		int top = depth ? stack[depth - 1] : rootfd;

		p += strspn(p, "/");
		if (*p == '\0') {
			ret = openat(top, ".", flags | O_CLOEXEC);
			ret = ret < 0 ? -errno : ret;
			break;
		}

		char *name = p;
		char *end = strchrnul(p, '/');
		bool last = *end == '\0';

		p = last ? end : end + 1;
		*end = '\0';

		if (strcmp(name, ".") == 0)
			continue;
		if (strcmp(name, "..") == 0) {
			ret = walk_pop(stack, &depth);
			if (ret) {
				log_err("pool set descriptor %s leads out of "
						"'%s' through a symlink",
						log_quote(desc).s, root);
				break;
			}
			continue;
		}

		struct stat st;
		if (fstatat(top, name, &st, AT_SYMLINK_NOFOLLOW)) {
			ret = -errno;
			break;
		}

		if (S_ISLNK(st.st_mode)) {
			if (++links > WALK_MAX_LINKS) {
				ret = -ELOOP;
				break;
			}
			ret = walk_link(top, name, p, &path, desc);
			if (ret)
				break;
			p = path;
			continue;
		}

		if (last) {
			ret = openat(top, name, flags | O_NOFOLLOW | O_CLOEXEC);
			ret = ret < 0 ? -errno : ret;
			break;
		}

		int fd = openat(top, name,
				O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			ret = -errno;
			break;
		}
		ret = walk_push(&stack, &depth, &cap, fd);
		if (ret)
			break;
	}

	while (depth > 0)
		close(stack[--depth]);
	free(stack);
	free(path);
	return ret;
}

#if defined(SYS_openat2) && !defined(RPMEMD_DB_NO_OPENAT2)
/*
 * beneath_open -- openat2 RESOLVE_BENEATH; -ENOSYS when the kernel
 * lacks it.  EXDEV is how the kernel reports an escape.
 */
static int
beneath_open(int rootfd, const char *root, const char *desc, int flags)
{
	struct open_how how;

	memset(&how, 0, sizeof(how));
	how.flags = (uint64_t)(flags | O_CLOEXEC);
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;

	for (int i = 0; i < OPENAT2_RETRIES; i++) {
		long fd = syscall(SYS_openat2, rootfd, desc, &how,
				sizeof(how));

		if (fd >= 0)
			return (int)fd;
		if (errno == EAGAIN || errno == EINTR)
			continue;
		if (errno == EXDEV) {
			log_err("pool set descriptor %s leads out of '%s'",
					log_quote(desc).s, root);
			return -EACCES;
		}
		return -errno;
	}
	return -EAGAIN;
}
#else
/* beneath_open -- openat2 not compiled in: always use the walk */
static int
beneath_open(int rootfd, const char *root, const char *desc, int flags)
{
	(void)rootfd;
	(void)root;
	(void)desc;
	(void)flags;
	return -ENOSYS;
}
#endif

/* db_path_open -- open `desc` beneath `rootfd` */
int
db_path_open(int rootfd, const char *root, const char *desc, int flags)
{
	int ret = beneath_open(rootfd, root, desc, flags);

	if (ret != -ENOSYS)
		return ret;
	return walk_open(rootfd, root, desc, flags);
}
