/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fablib.c -- libfabric loaded at the first call that needs it (fablib.h)
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <rdma/fi_errno.h>

#include "fablib.h"
#include "log.h"

#define FABLIB_SONAME "libfabric.so.1"

/*
 * the functions, as found in the loaded library (NULL: not loaded),
 * typed as rdma/fabric.h declares them (__typeof__ references nothing)
 */
static struct {
	__typeof__(&fi_getinfo) getinfo;
	__typeof__(&fi_freeinfo) freeinfo;
	__typeof__(&fi_dupinfo) dupinfo;
	__typeof__(&fi_fabric) fabric;
	__typeof__(&fi_strerror) strerror;
} Fi;

static pthread_once_t Once = PTHREAD_ONCE_INIT;
static bool Loaded;
static int Load_err = -ELIBACC;		/* what the calls return unloaded */
static char Why[512];			/* and why, from the dynamic linker */

/*
 * sym -- one function of `lib` at symbol version `ver`, or NULL (Why
 * names the first one missing)
 */
static void *
sym(void *lib, const char *name, const char *ver)
{
	void *f = dlvsym(lib, name, ver);
	if (!f && !Why[0])
		snprintf(Why, sizeof(Why), "%s has no %s@%s: %s",
			FABLIB_SONAME, name, ver, dlerror());
	return f;
}

/* load -- dlopen libfabric and find its functions (once a process) */
static void
load(void)
{
	/*
	 * local: a provider libfabric loads itself (FI_PROVIDER_PATH) names
	 * libfabric.so.1 among its own dependencies (libfabric links each
	 * with `linkback`), so it needs no global scope; and RTLD_GLOBAL
	 * makes glibc grow that scope with an allocation LeakSanitizer
	 * reports as leaked (alloc.sh)
	 */
	void *lib = dlopen(FABLIB_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		const char *why = dlerror();
		snprintf(Why, sizeof(Why), "cannot load %s: %s", FABLIB_SONAME,
			why ? why : "?");
		/* the dynamic linker's message names the errno it met */
		if (why && strstr(why, strerror(ENOMEM)))
			Load_err = -ENOMEM;
		log_err("%s", Why);
		return;
	}
	Fi.getinfo = sym(lib, "fi_getinfo", "FABRIC_1.3");
	Fi.freeinfo = sym(lib, "fi_freeinfo", "FABRIC_1.3");
	Fi.dupinfo = sym(lib, "fi_dupinfo", "FABRIC_1.3");
	Fi.fabric = sym(lib, "fi_fabric", "FABRIC_1.1");
	Fi.strerror = sym(lib, "fi_strerror", "FABRIC_1.0");
	Loaded = Fi.getinfo && Fi.freeinfo && Fi.dupinfo && Fi.fabric &&
		Fi.strerror;
	/* a library without them all stays loaded, unused: never closed */
	if (!Loaded)
		log_err("%s", Why);
}

/* loaded -- is libfabric there to call, loading it the first time */
static bool
loaded(void)
{
	(void) pthread_once(&Once, load);
	return Loaded;
}

/* fablib_load -- load libfabric if not yet; 0, -ENOMEM or -ELIBACC */
int
fablib_load(void)
{
	return loaded() ? 0 : Load_err;
}

/* fablib_error -- why libfabric could not be loaded ("" when it was) */
const char *
fablib_error(void)
{
	return loaded() ? "" : Why;
}

/* fablib_getinfo -- fi_getinfo, once libfabric is loaded */
int
fablib_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints,
		struct fi_info **info)
{
	if (!loaded())
		return Load_err;
	return Fi.getinfo(version, node, service, flags, hints, info);
}

/* fablib_freeinfo -- fi_freeinfo; only a loaded library made any */
void
fablib_freeinfo(struct fi_info *info)
{
	if (info && loaded())
		Fi.freeinfo(info);
}

/* fablib_dupinfo -- fi_dupinfo, once libfabric is loaded */
struct fi_info *
fablib_dupinfo(const struct fi_info *info)
{
	return loaded() ? Fi.dupinfo(info) : NULL;
}

/* fablib_fabric -- fi_fabric; its attributes came from fablib_getinfo */
int
fablib_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		void *context)
{
	if (!loaded())
		return Load_err;
	return Fi.fabric(attr, fabric, context);
}

/* fablib_strerror -- fi_strerror; strerror's text while none is loaded */
const char *
fablib_strerror(int err)
{
	return loaded() ? Fi.strerror(err) : strerror(err);
}
