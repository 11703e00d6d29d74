#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# debs.sh -- build the Debian packages of this tree (scripts/deb.sh) into
# build/deb of the build tree, for packages.sh and installed.sh.
#
# Only with RPMEM_TEST_PACKAGES=1 (scripts/test.sh sets it; exit 77
# otherwise): a package build takes minutes and needs the build
# dependencies of debian/control.  DEB_BUILD_OPTIONS defaults to
# "nocheck parallel=1": make check runs every test on the tree already,
# and the other tests share the machine meanwhile.
set -uo pipefail

# shellcheck source-path=SCRIPTDIR source=pkg.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/pkg.sh"
pkg_gate debs.sh "set RPMEM_TEST_PACKAGES=1 to build packages"
# a make of our own inside dpkg-buildpackage, not a child of make check's
unset MAKEFLAGS MFLAGS MAKELEVEL
out=$top_builddir/build/deb
start=$SECONDS
# at the lowest priority: the tests beside it measure time-outs
DEB_BUILD_OPTIONS=${DEB_BUILD_OPTIONS:-nocheck parallel=1} \
	nice -n 19 "$top_srcdir/scripts/deb.sh" "$out" || {
	tu_fail "the packages did not build"
	exit 1
}
# rpmem-ocf is of architecture all: rpmem-ocf_VERSION_all.deb
for p in librpmem1 librpmem-dev rpmemd rpmem-tools rpmem-ocf; do
	compgen -G "$out/${p}_*.deb" >/dev/null || {
		tu_fail "no $p package in $out"
	}
done
((TU_FAILED)) && exit 1
echo "PASS: packages built in $((SECONDS - start)) s"
