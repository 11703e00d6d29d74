#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# abi.sh -- librpmem.so.1 exports exactly PMDK's 12 functions under
# LIBRPMEM_1.0, with PMDK's SONAME and file name, and the header's
# struct layout and constants match PMDK's (pmdk-interop 1).
set -euo pipefail

: "${top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
# shellcheck source-path=SCRIPTDIR source=common/tu.sh
. "$(dirname "${BASH_SOURCE[0]}")/common/tu.sh"
lib="$top_builddir/.libs/librpmem.so.1.0.0"

[ -f "$lib" ] || { tu_fail "$lib not built"; exit 1; }

soname=$(objdump -p "$lib" | awk '/SONAME/ { print $2 }')
if [ "$soname" != "librpmem.so.1" ]; then
	tu_fail "SONAME is '$soname', want librpmem.so.1"
fi

want="rpmem_check_version rpmem_close rpmem_create rpmem_deep_persist
rpmem_drain rpmem_errormsg rpmem_flush rpmem_open rpmem_persist
rpmem_read rpmem_remove rpmem_set_attr"
got=$(objdump -T "$lib" | awk '$2 == "g" && $4 == ".text" { print $NF }' |
	sort | tr '\n' ' ')
want=$(echo "$want" | tr -s ' ' '\n' | sort | tr '\n' ' ')
if [ "$got" != "$want" ]; then
	tu_fail "exported functions differ"
	echo "  want: $want"; echo "  got:  $got"
fi
others=$(objdump -T "$lib" | awk '$2 == "g" && $4 != "*UND*" && $4 != ".text" { print $NF }' | grep -v '^LIBRPMEM_1.0$' || true)
if [ -n "$others" ]; then
	tu_fail "unexpected exported symbols: $others"
fi
badver=$(objdump -T "$lib" | awk '$2 == "g" && $4 == ".text" && $(NF-1) != "LIBRPMEM_1.0" { print $NF "@" $(NF-1) }')
if [ -n "$badver" ]; then
	tu_fail "symbols outside LIBRPMEM_1.0: $badver"
fi

# struct layout and constants, checked by the compiler
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/abi.c" <<'C'
#include <stddef.h>
#include "librpmem.h"
#define OFF(f, o) _Static_assert(offsetof(struct rpmem_pool_attr, f) == o, #f)
OFF(signature, 0); OFF(major, 8); OFF(compat_features, 12);
OFF(incompat_features, 16); OFF(ro_compat_features, 20);
OFF(poolset_uuid, 24); OFF(uuid, 40); OFF(next_uuid, 56);
OFF(prev_uuid, 72); OFF(user_flags, 88);
_Static_assert(sizeof(struct rpmem_pool_attr) == 104, "size");
_Static_assert(RPMEM_PERSIST_RELAXED == 1 && RPMEM_FLUSH_RELAXED == 1, "f");
_Static_assert(RPMEM_REMOVE_FORCE == 1 && RPMEM_REMOVE_POOL_SET == 2, "r");
_Static_assert(RPMEM_MAJOR_VERSION == 1 && RPMEM_MINOR_VERSION == 3, "v");
_Static_assert(RPMEM_MIN_POOL == 8192 && RPMEM_MIN_PART == 2097152, "m");
int main(void) { return rpmem_check_version(1, 3) != NULL; }
C
if ! ${CC:-cc} -std=c11 -I"$top_srcdir/src/include" "$tmp/abi.c" \
		-L"$top_builddir/.libs" -lrpmem -o "$tmp/abi" ||
		! LD_LIBRARY_PATH="$top_builddir/.libs" "$tmp/abi"; then
	tu_fail "header layout/constants or linking against librpmem"
fi

# the unversioned dlsym lookups libpmemobj does (pmdk-interop 0)
cat > "$tmp/dl.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
int main(void) {
	const char *n[] = { "rpmem_create", "rpmem_open", "rpmem_close",
		"rpmem_persist", "rpmem_deep_persist", "rpmem_read",
		"rpmem_remove", "rpmem_set_attr" };
	void *h = dlopen("librpmem.so.1", RTLD_NOW);
	if (!h) { fprintf(stderr, "%s\n", dlerror()); return 1; }
	for (unsigned i = 0; i < sizeof(n) / sizeof(n[0]); i++)
		if (!dlsym(h, n[i])) { fprintf(stderr, "no %s\n", n[i]); return 1; }
	return 0;
}
C
if ! ${CC:-cc} "$tmp/dl.c" -o "$tmp/dl" -ldl ||
		! LD_LIBRARY_PATH="$top_builddir/.libs" "$tmp/dl"; then
	tu_fail "dlopen(librpmem.so.1) + dlsym as libpmemobj does"
fi

[ "$TU_FAILED" -eq 0 ] && echo "PASS: ABI of librpmem.so.1"
exit $((TU_FAILED != 0))
