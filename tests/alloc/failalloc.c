/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * failalloc.c -- LD_PRELOAD shim for scenario R17: make the Nth
 * allocation that chosen code asks for fail, and say which it was
 *
 * Environment (read once, at the first allocation):
 *   FAILALLOC_EXE    act only in a process whose executable has this
 *                    base name; elsewhere everything passes through
 *   FAILALLOC_OBJS   ':'-separated pieces of the paths of the objects
 *                    whose allocations count; "@exe" is the main program
 *   FAILALLOC_SCOPE  "ours" (default): what that code asks for itself,
 *                    directly (malloc, calloc, realloc, reallocarray,
 *                    posix_memalign, aligned_alloc, memalign) or through
 *                    a libc call that allocates for it (strdup, strndup,
 *                    asprintf, vasprintf, getline, getdelim (and
 *                    __getdelim, what -O2 makes of getline), realpath,
 *                    fopen, fdopen, opendir, pthread_create);
 *                    "deep": any allocation while that code is on the
 *                    stack, inside libfabric, iniparser and libc too
 *   FAILALLOC_NTH    the counted allocation to fail, from 1; unset or 0:
 *                    count only
 *   FAILALLOC_LOG    a file each such process appends to: "fail N
 *                    CALLER" when it fails one, "count N" at exit, and
 *                    in a count of scope "ours" (NTH 0) "site N CALLER"
 *                    for each allocation counted
 *
 * Counting ends when exit begins to run destructors (the main program's
 * __cxa_finalize): what a build with coverage counters allocates then,
 * dumping them, is not the project's.
 *
 * No test hook lives in the shipped code: this shim is the whole
 * mechanism.  It composes with LeakSanitizer preloaded after it
 * (LD_PRELOAD="failalloc.so liblsan.so.0"): what it forwards goes to the
 * next definition, LeakSanitizer's.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_RANGES 64
#define DEEP_FRAMES 32
#define BOOT_SIZE (64 * 1024)

struct range {
	uintptr_t lo, hi;
};

static struct {
	int state;			/* 0 new, 1 starting, 2 on, 3 off */
	bool deep;
	unsigned long nth;
	unsigned long count;		/* atomic */
	char log[4096];			/* FAILALLOC_LOG, "" for none */
	struct range ours[MAX_RANGES];
	unsigned nours;
	uintptr_t exe_base;		/* where the main program is loaded */
	char objs[1024];
} Fa;

/* the next definitions: libc's, or LeakSanitizer's when preloaded */
static struct {
	void *(*malloc)(size_t);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void (*free)(void *);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*memalign)(size_t, size_t);
	char *(*strdup)(const char *);
	char *(*strndup)(const char *, size_t);
	int (*vasprintf)(char **, const char *, va_list);
	ssize_t (*getdelim)(char **, size_t *, int, FILE *);
	char *(*realpath)(const char *, char *);
	FILE *(*fopen)(const char *, const char *);
	FILE *(*fdopen)(int, const char *);
	DIR *(*opendir)(const char *);
	int (*pthread_create)(pthread_t *, const pthread_attr_t *,
		void *(*)(void *), void *);
	void (*cxa_finalize)(void *);
} Real;

/* dlsym's own allocations, made before Real.malloc is known */
static char Boot[BOOT_SIZE] __attribute__((aligned(16)));
static size_t Boot_used;
static __thread int In_shim;

/* boot_alloc -- a bump allocator for the few calls during start-up */
static void *
boot_alloc(size_t n)
{
	size_t at = __atomic_fetch_add(&Boot_used, (n + 15) & ~(size_t)15,
		__ATOMIC_SEQ_CST);
	if (at + n > BOOT_SIZE)
		return NULL;
	return memset(Boot + at, 0, n);
}

/* in_boot -- was p handed out by boot_alloc? */
static bool
in_boot(const void *p)
{
	return (const char *)p >= Boot && (const char *)p < Boot + BOOT_SIZE;
}

/* add_object -- dl_iterate_phdr callback: keep the code of our objects */
static int
add_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void) size;
	(void) arg;
	const char *name = info->dlpi_name;
	bool main_exe = !name || !name[0];
	if (main_exe)
		Fa.exe_base = info->dlpi_addr;
	bool ours = false;
	char objs[sizeof(Fa.objs)];
	snprintf(objs, sizeof(objs), "%s", Fa.objs);
	char *save = NULL;
	for (char *t = strtok_r(objs, ":", &save); t && !ours;
			t = strtok_r(NULL, ":", &save))
		ours = strcmp(t, "@exe") == 0 ? main_exe :
			!main_exe && strstr(name, t) != NULL;
	for (int i = 0; ours && i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) ||
				Fa.nours == MAX_RANGES)
			continue;
		Fa.ours[Fa.nours].lo = info->dlpi_addr + ph->p_vaddr;
		Fa.ours[Fa.nours].hi = Fa.ours[Fa.nours].lo + ph->p_memsz;
		Fa.nours++;
	}
	return 0;
}

/* exe_matches -- is this process the one FAILALLOC_EXE names? */
static bool
exe_matches(const char *want)
{
	char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	if (n <= 0)
		return false;
	path[n] = '\0';
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	/* libtool runs the real program as lt-NAME */
	if (strncmp(base, "lt-", 3) == 0)
		base += 3;
	return strcmp(base, want) == 0;
}

/*
 * say -- one line to FAILALLOC_LOG, opened for each line: a daemon may
 * close every descriptor it did not open (rpmemd does)
 */
static void
say(const char *fmt, ...)
{
	if (!Fa.log[0])
		return;
	int fd = open(Fa.log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
		0600);
	if (fd < 0)
		return;
	char line[1536];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > 0 && write(fd, line, (size_t)n < sizeof(line) ?
			(size_t)n : sizeof(line) - 1) < 0) {
		/* nowhere to report it */
	}
	close(fd);
}

/* fini -- how many counted allocations the process made; count no more */
static void
fini(void)
{
	int on = 2;
	if (__atomic_compare_exchange_n(&Fa.state, &on, 3, false,
			__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		say("count %lu pid %d\n", __atomic_load_n(&Fa.count,
			__ATOMIC_SEQ_CST), (int)getpid());
}

/*
 * __cxa_finalize -- run by each object's destructors: at exit the main
 * program's comes first, before the libraries' (and their coverage
 * dumps); a library unloaded earlier (dlclose) does not end the count
 */
void __cxa_finalize(void *dso);	/* glibc declares it nowhere */
void
__cxa_finalize(void *dso)
{
	if (!Real.cxa_finalize)
		Real.cxa_finalize = (__typeof__(Real.cxa_finalize))dlsym(
			RTLD_NEXT, "__cxa_finalize");
	Dl_info di;
	if (Fa.state == 2 && dso && dladdr(dso, &di) &&
			(uintptr_t)di.dli_fbase == Fa.exe_base)
		fini();
	if (Real.cxa_finalize)
		Real.cxa_finalize(dso);
}

#define RESOLVE(f) (Real.f = (__typeof__(Real.f))dlsym(RTLD_NEXT, #f))

/* init -- resolve the next definitions, read the environment */
static void
init(void)
{
	int expected = 0;
	if (!__atomic_compare_exchange_n(&Fa.state, &expected, 1, false,
			__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
		/* another thread is starting us: wait for it */
		while (__atomic_load_n(&Fa.state, __ATOMIC_SEQ_CST) == 1)
			sched_yield();
		return;
	}
	In_shim++;
	RESOLVE(malloc);
	RESOLVE(calloc);
	RESOLVE(realloc);
	RESOLVE(free);
	RESOLVE(posix_memalign);
	RESOLVE(aligned_alloc);
	RESOLVE(memalign);
	RESOLVE(strdup);
	RESOLVE(strndup);
	RESOLVE(vasprintf);
	RESOLVE(getdelim);
	RESOLVE(realpath);
	RESOLVE(fopen);
	RESOLVE(fdopen);
	RESOLVE(opendir);
	RESOLVE(pthread_create);
	const char *exe = getenv("FAILALLOC_EXE");
	const char *objs = getenv("FAILALLOC_OBJS");
	const char *scope = getenv("FAILALLOC_SCOPE");
	const char *nth = getenv("FAILALLOC_NTH");
	const char *log = getenv("FAILALLOC_LOG");
	int on = exe && objs && exe_matches(exe);
	if (on) {
		snprintf(Fa.objs, sizeof(Fa.objs), "%s", objs);
		Fa.deep = scope && strcmp(scope, "deep") == 0;
		Fa.nth = nth ? strtoul(nth, NULL, 10) : 0;
		if (log)
			snprintf(Fa.log, sizeof(Fa.log), "%s", log);
		dl_iterate_phdr(add_object, NULL);
		/* backtrace() loads its unwinder once: do it now */
		void *f[2];
		(void) backtrace(f, 2);
		atexit(fini);
	}
	In_shim--;
	__atomic_store_n(&Fa.state, on ? 2 : 3, __ATOMIC_SEQ_CST);
}

/* is_ours -- does a code address belong to the counted objects? */
static bool
is_ours(const void *addr)
{
	uintptr_t a = (uintptr_t)addr;
	for (unsigned i = 0; i < Fa.nours; i++)
		if (a >= Fa.ours[i].lo && a < Fa.ours[i].hi)
			return true;
	return false;
}

/* frame_name -- "symbol+offset(object)" of a code address, at buf+o */
static size_t
frame_name(const void *addr, char *buf, size_t o, size_t len)
{
	Dl_info di;
	const char *sym = "?", *obj = "?";
	uintptr_t off = 0;
	if (dladdr(addr, &di)) {
		obj = di.dli_fname ? di.dli_fname : "?";
		const char *slash = strrchr(obj, '/');
		obj = slash ? slash + 1 : obj;
		sym = di.dli_sname ? di.dli_sname : "?";
		off = (uintptr_t)addr - (uintptr_t)(di.dli_saddr ?
			di.dli_saddr : di.dli_fbase);
	}
	int n = snprintf(buf + o, len - o, "%s+%#lx(%s)", sym,
		(unsigned long)off, obj);
	if (n < 0)
		return o;
	return o + (size_t)n < len ? o + (size_t)n : len - 1;
}

/*
 * fail_now -- count this allocation if it is in scope; true when it is
 * the one to fail.  `direct`: asked for by the caller at `ret` itself.
 */
static bool
fail_now(const void *ret, bool direct, const char *what)
{
	if (Fa.state != 2 || In_shim)
		return false;
	bool counted;
	if (Fa.deep) {
		void *frames[DEEP_FRAMES];
		In_shim++;
		int n = backtrace(frames, DEEP_FRAMES);
		In_shim--;
		counted = false;
		for (int i = 1; i < n && !counted; i++)
			counted = is_ours(frames[i]);
	} else {
		counted = direct && is_ours(ret);
	}
	if (!counted)
		return false;
	unsigned long n = __atomic_add_fetch(&Fa.count, 1, __ATOMIC_SEQ_CST);
	if (Fa.nth == 0 && !Fa.deep) {
		/* a count: where each is asked for, for alloc.sh's choice */
		char site[256];
		In_shim++;
		frame_name(ret, site, 0, sizeof(site));
		say("site %lu %s pid %d\n", n, site, (int)getpid());
		In_shim--;
	}
	if (n != Fa.nth)
		return false;
	In_shim++;
	/* where: the caller, then the frames up to the first counted one */
	char where[1400];
	size_t o = 0;
	void *frames[DEEP_FRAMES];
	int nf = backtrace(frames, DEEP_FRAMES);
	int i = 0;
	while (i < nf && frames[i] != ret)
		i++;
	if (i == nf) {
		frames[0] = (void *)ret;
		nf = 1;
		i = 0;
	}
	for (; i < nf && o + 100 < sizeof(where); i++) {
		if (o)
			o += (size_t)snprintf(where + o, sizeof(where) - o,
				" < ");
		o = frame_name(frames[i], where, o, sizeof(where));
		if (is_ours(frames[i]))
			break;
	}
	say("fail %lu %s from %s pid %d\n", n, what, where, (int)getpid());
	In_shim--;
	return true;
}

#define CALLER __builtin_return_address(0)
#define START() do { if (Fa.state == 0) init(); } while (0)
/* ENOMEM_IF -- a call that is to fail returns `ret` with ENOMEM */
#define ENOMEM_IF(fail, ret) do { \
	if (fail) { \
		errno = ENOMEM; \
		return ret; \
	} \
} while (0)

/* malloc -- boot memory while starting, else counted */
void *
malloc(size_t n)
{
	if (!Real.malloc) {
		if (Fa.state == 1 || In_shim)
			return boot_alloc(n);
		START();
	}
	ENOMEM_IF(fail_now(CALLER, true, "malloc"), NULL);
	return Real.malloc(n);
}

/* calloc -- boot memory while starting (dlsym asks), else counted */
void *
calloc(size_t n, size_t size)
{
	if (!Real.calloc) {
		if (Fa.state == 1 || In_shim)
			return n && size > SIZE_MAX / n ? NULL :
				boot_alloc(n * size);
		START();
	}
	ENOMEM_IF(fail_now(CALLER, true, "calloc"), NULL);
	return Real.calloc(n, size);
}

/* realloc -- counted; boot memory moves to the real heap */
void *
realloc(void *p, size_t n)
{
	START();
	if (in_boot(p)) {
		size_t room = (size_t)(Boot + BOOT_SIZE - (char *)p);
		void *q = malloc(n);
		if (q)
			memcpy(q, p, n < room ? n : room);
		return q;
	}
	ENOMEM_IF(fail_now(CALLER, true, "realloc"), NULL);
	return Real.realloc(p, n);
}

/* reallocarray -- counted, overflow refused as glibc does */
void *
reallocarray(void *p, size_t n, size_t size)
{
	if (n && size > SIZE_MAX / n) {
		errno = ENOMEM;
		return NULL;
	}
	START();
	ENOMEM_IF(fail_now(CALLER, true, "reallocarray"), NULL);
	return Real.realloc(p, n * size);
}

/* free -- boot memory is never given back */
void
free(void *p)
{
	if (!p || in_boot(p))
		return;
	START();
	Real.free(p);
}

/* posix_memalign -- counted; fails by return value */
int
posix_memalign(void **p, size_t align, size_t n)
{
	START();
	if (fail_now(CALLER, true, "posix_memalign"))
		return ENOMEM;
	return Real.posix_memalign(p, align, n);
}

/* aligned_alloc -- counted */
void *
aligned_alloc(size_t align, size_t n)
{
	START();
	ENOMEM_IF(fail_now(CALLER, true, "aligned_alloc"), NULL);
	return Real.aligned_alloc(align, n);
}

/* memalign -- counted */
void *
memalign(size_t align, size_t n)
{
	START();
	ENOMEM_IF(fail_now(CALLER, true, "memalign"), NULL);
	return Real.memalign(align, n);
}

/* ------------------------- libc calls that allocate for their caller */

/* lib_fail -- a libc call that allocates, made by counted code */
static bool
lib_fail(const void *ret, const char *what)
{
	START();
	return !Fa.deep && fail_now(ret, true, what);
}

/* strdup -- counted for its caller */
char *
strdup(const char *s)
{
	ENOMEM_IF(lib_fail(CALLER, "strdup"), NULL);
	return Real.strdup(s);
}

/* strndup -- counted for its caller */
char *
strndup(const char *s, size_t n)
{
	ENOMEM_IF(lib_fail(CALLER, "strndup"), NULL);
	return Real.strndup(s, n);
}

/* vasprintf -- counted for its caller */
int
vasprintf(char **out, const char *fmt, va_list ap)
{
	ENOMEM_IF(lib_fail(CALLER, "vasprintf"), -1);
	return Real.vasprintf(out, fmt, ap);
}

/* asprintf -- counted for its caller */
int
asprintf(char **out, const char *fmt, ...)
{
	ENOMEM_IF(lib_fail(CALLER, "asprintf"), -1);
	va_list ap;
	va_start(ap, fmt);
	int r = Real.vasprintf(out, fmt, ap);
	va_end(ap);
	return r;
}

/* getdelim -- counted for its caller (it may grow the line) */
ssize_t
getdelim(char **line, size_t *cap, int delim, FILE *f)
{
	ENOMEM_IF(lib_fail(CALLER, "getdelim"), -1);
	return Real.getdelim(line, cap, delim, f);
}

/*
 * __getdelim -- the same: what an optimized build calls for getline
 * (glibc's inline getline in bits/stdio.h)
 */
ssize_t __getdelim(char **line, size_t *cap, int delim, FILE *f);
ssize_t
__getdelim(char **line, size_t *cap, int delim, FILE *f)
{
	ENOMEM_IF(lib_fail(CALLER, "getline"), -1);
	return Real.getdelim(line, cap, delim, f);
}

/* getline -- counted for its caller (it may grow the line) */
ssize_t
getline(char **line, size_t *cap, FILE *f)
{
	ENOMEM_IF(lib_fail(CALLER, "getline"), -1);
	return Real.getdelim(line, cap, '\n', f);
}

/* realpath -- counted when it allocates the result */
char *
realpath(const char *path, char *resolved)
{
	ENOMEM_IF(!resolved && lib_fail(CALLER, "realpath"), NULL);
	return Real.realpath(path, resolved);
}

/* fopen -- counted for its caller (the FILE and its buffer) */
FILE *
fopen(const char *path, const char *mode)
{
	ENOMEM_IF(lib_fail(CALLER, "fopen"), NULL);
	return Real.fopen(path, mode);
}

/* fdopen -- counted for its caller */
FILE *
fdopen(int fd, const char *mode)
{
	ENOMEM_IF(lib_fail(CALLER, "fdopen"), NULL);
	return Real.fdopen(fd, mode);
}

/* opendir -- counted for its caller */
DIR *
opendir(const char *path)
{
	ENOMEM_IF(lib_fail(CALLER, "opendir"), NULL);
	return Real.opendir(path);
}

/* pthread_create -- counted for its caller: EAGAIN, as glibc fails */
int
pthread_create(pthread_t *t, const pthread_attr_t *attr,
		void *(*fn)(void *), void *arg)
{
	if (lib_fail(CALLER, "pthread_create"))
		return EAGAIN;
	return Real.pthread_create(t, attr, fn, arg);
}
