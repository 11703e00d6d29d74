#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# deb.sh -- build the Debian packages from this tree without touching it
#
#   scripts/deb.sh [OUTDIR]        (default OUTDIR: build/deb)
#
# Copies the sources (what git tracks plus new files it does not ignore;
# without git, the whole tree, then distclean) to a scratch directory,
# runs `dpkg-buildpackage -us -uc -b` there and moves the .deb files, the
# .changes and .buildinfo and the build log to OUTDIR.  An in-tree build
# (./configure && make) is left alone: dpkg-buildpackage itself would
# distclean the tree it runs in.  DEB_BUILD_OPTIONS is passed on (CI sets
# nocheck: it runs the whole suite on the tree anyway); parallel= defaults
# to the number of CPUs.  Build dependencies: scripts/setup.sh.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/build/deb}
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/rpmem-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
src=$work/rpmem
mkdir "$src"

if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	# files deleted but not yet committed are left out
	git -C "$top" ls-files -z -c -o --exclude-standard |
		while IFS= read -r -d '' f; do
			[[ -e $top/$f ]] && printf '%s\0' "$f"
		done | tar -C "$top" --null -T - -cf - | tar -C "$src" -xf -
else
	cp -a "$top/." "$src/"
	rm -rf "$src/build"
	[[ ! -f $src/Makefile ]] || make -s -C "$src" distclean >/dev/null
fi

opts=${DEB_BUILD_OPTIONS:-}
[[ $opts == *parallel=* ]] || opts+=" parallel=$(nproc)"
log=$out/build.log
echo "deb.sh: building in $src (DEB_BUILD_OPTIONS=${opts# }), log $log"
if ! (cd "$src" && DEB_BUILD_OPTIONS=${opts# } \
		dpkg-buildpackage -us -uc -b) >"$log" 2>&1; then
	tail -n 40 "$log"
	echo "deb.sh: dpkg-buildpackage failed; see $log" >&2
	exit 1
fi
rm -f "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo
mv "$work"/*.deb "$work"/*.changes "$work"/*.buildinfo "$out/"
ls -1 "$out"/*.deb
