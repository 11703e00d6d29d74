# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# pkg.sh -- what the tests of the Debian packages share (debs.sh,
# packages.sh, upgrade.sh, installed.sh source it); it sources
# tests/common/tu.sh, whose assertions they use
#
#   pkg_gate NAME WHY        exit 77 with WHY unless RPMEM_TEST_PACKAGES=1
#   pkg_arch                 set arch (dpkg's) and multiarch (the libdir's)
#   pkg_debs DIR PKG...      set pkg_files to each PKG's .deb in DIR
#   pkg_absent PKG...        every PKG is not installed
#   refuse MESSAGE...        why the script will not run here: "NAME:
#                            refusing to run: MESSAGE" on stderr, exit 1
#
# pkg_debs and pkg_absent call refuse for what is wrong.  top_srcdir and top_builddir are
# set for the script when the environment does not name them.

: "${top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
top_builddir=$(cd "$top_builddir" && pwd)
# shellcheck source-path=SCRIPTDIR source=../common/tu.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/../common/tu.sh"

# refuse -- why the sourcing script will not run here; exit 1
refuse() {
	printf '%s: refusing to run: %s\n' "${0##*/}" "$*" >&2
	exit 1
}

# pkg_gate -- packages are built and installed only when asked for
pkg_gate() {
	if [[ ${RPMEM_TEST_PACKAGES:-0} != 1 ]]; then
		echo "$1: skipped; $2"
		exit 77
	fi
}

# pkg_arch -- arch and multiarch of this machine
# shellcheck disable=SC2034 # multiarch is read by the sourcing script
pkg_arch() {
	arch=$(dpkg --print-architecture)
	multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null) ||
		multiarch=$(gcc -print-multiarch)
}

# pkg_debs -- pkg_files=(the .deb of each PKG in DIR), after pkg_arch;
# a package of architecture all (rpmem-ocf) is PKG_*_all.deb
pkg_debs() {
	local dir=$1 p f
	shift
	pkg_files=()
	for p in "$@"; do
		f=$(compgen -G "$dir/${p}_*_$arch.deb" ||
			compgen -G "$dir/${p}_*_all.deb") ||
			refuse "no ${p}_*_$arch.deb or ${p}_*_all.deb in $dir" \
				"(tests/installed/debs.sh)"
		pkg_files+=("$(head -n 1 <<<"$f")")
	done
}

# pkg_absent -- none of the packages is installed (the test would replace
# and purge it)
pkg_absent() {
	local p status
	for p in "$@"; do
		status=$(dpkg-query -W -f='${db:Status-Abbrev} ${Version}' \
			"$p" 2>/dev/null) || status=
		[[ -z $status || $status == un* || $status == pn* ]] ||
			refuse "package $p is installed ($status), and this" \
				"test would replace and purge it; remove it first"
	done
}
