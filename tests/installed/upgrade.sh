#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# upgrade.sh -- a host with Debian 11's PMDK librpmem1 and rpmemd moves to
# ours with apt, as an upgrade
#
# Debian 11 built librpmem1 and rpmemd 1.10-2 from PMDK, under the names
# our packages have.  Stand-ins of those two (same names, version,
# architecture and file paths: librpmem.so.1 and its file, /usr/bin/rpmemd,
# rpmemd(1) unless Debian 12's pmdk-tools holds it) are built here with
# dpkg-deb (nothing is downloaded) and installed; then `apt-get install
# ./librpmem1_*.deb ./rpmemd_*.deb` of ours must upgrade both without
# --allow-downgrades and leave their files in place of PMDK's, and a
# purge must leave nothing of either: no file, diversion or linker cache
# entry, and pmdk-tools whole again.
#
# It installs and purges packages, so it runs only when
# RPMEM_TEST_PACKAGES=1 (scripts/test.sh sets it) and as root (exit 77
# otherwise), and refuses (exit 1) where it would touch what it did not
# install, as installed.sh does.  RPMEM_DEBS names the directory of our
# .deb files (default: build/deb of the build tree, from debs.sh).
set -uo pipefail

self=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$self/../.." && pwd)}
top_builddir=$(cd "${top_builddir:-$top_srcdir}" && pwd)
debs=${RPMEM_DEBS:-$top_builddir/build/deb}
pkgs=(librpmem1 rpmemd)
old=1.10-2
page=/usr/share/man/man1/rpmemd.1.gz
# shellcheck source-path=SCRIPTDIR source=pkg.sh
. "$self/pkg.sh"

pkg_gate upgrade.sh "it installs and purges packages: set" \
	"RPMEM_TEST_PACKAGES=1 (scripts/test.sh does)"
if [[ $(id -u) != 0 ]]; then
	echo "upgrade.sh: skipped; dpkg and apt-get need root"
	exit 77
fi

for prog in dpkg dpkg-deb apt-get gzip cc; do
	command -v "$prog" >/dev/null || refuse "$prog is missing"
done
pkg_arch
pkg_debs "$debs" "${pkgs[@]}"
ours=("${pkg_files[@]}")
pkg_absent "${pkgs[@]}" librpmem-dev rpmem-tools
! ldconfig -p | grep 'librpmem\.so\.1 ' >/dev/null ||
	refuse "a librpmem.so.1 is already in the linker cache"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rpmem-upgrade.XXXXXX")
chmod 755 "$tmp"
installed=no
TU_DIR=$tmp
TU_OUT=$tmp/out
# shellcheck source-path=SCRIPTDIR source=../common/tu.sh
. "$top_srcdir/tests/common/tu.sh"

# shows -- a command's output, kept in $tmp/NAME.log: shows NAME CMD...
shows() {
	local name=$1
	shift
	"$@" >"$tmp/$name.log" 2>&1
	local rc=$?
	sed 's/^/    # /' "$tmp/$name.log"
	return $rc
}

# stand_in -- build PMDK's package $1 at $old from the tree $tmp/$1
stand_in() {
	local p=$1 d=$tmp/$1
	mkdir -p "$d/DEBIAN" "$d/usr/share/doc/$p"
	echo "a stand-in of Debian 11's $p $old (PMDK)" \
		>"$d/usr/share/doc/$p/README"
	{
		echo "Package: $p"
		echo "Version: $old"
		echo "Architecture: $arch"
		[[ $p != librpmem1 ]] || echo "Multi-Arch: same"
		echo "Maintainer: upgrade.sh <root@localhost>"
		echo "Section: libs"
		echo "Priority: optional"
		echo "Description: stand-in of PMDK's $p $old for upgrade.sh"
	} >"$d/DEBIAN/control"
	dpkg-deb --root-owner-group -Zgzip --build "$d" "$tmp/${p}_$old.deb" \
		>/dev/null
}

# build_stand_ins -- PMDK's librpmem.so.1 (a library of that soname) and
# rpmemd with its page, where Debian 11 put them
build_stand_ins() {
	local lib=$tmp/librpmem1/usr/lib/$multiarch owner
	mkdir -p "$lib" "$tmp/rpmemd/usr/bin"
	echo 'int rpmem_pmdk_stand_in;' >"$tmp/lib.c"
	cc -shared -fPIC -Wl,-soname,librpmem.so.1 -o "$lib/librpmem.so.1.0.0" \
		"$tmp/lib.c" || return 1
	ln -s librpmem.so.1.0.0 "$lib/librpmem.so.1"
	printf '#!/bin/sh\necho "rpmemd version 1.10 (stand-in)"\n' \
		>"$tmp/rpmemd/usr/bin/rpmemd"
	chmod 755 "$tmp/rpmemd/usr/bin/rpmemd"
	# Debian 12's pmdk-tools took PMDK's rpmemd(1) over: where it is
	# installed, a 1.10-2 rpmemd with the page could not be
	if owner=$(dpkg-query -S "$page" 2>/dev/null); then
		echo "    # without rpmemd(1), which ${owner%%:*} holds here"
	else
		mkdir -p "$tmp/rpmemd${page%/*}"
		printf '.TH RPMEMD 1 "" "PMDK 1.10 stand-in"\n' | gzip -9n \
			>"$tmp/rpmemd$page"
	fi
	stand_in librpmem1 && stand_in rpmemd
}

# version_is -- package $1 is installed at version $2
version_is() {
	local v
	v=$(dpkg-query -W -f='${db:Status-Abbrev} ${Version}' "$1" \
		2>/dev/null)
	[[ $v == "ii  $2" ]] ||
		{ echo "    # $1: '$v', not 'ii  $2'"; return 1; }
}

# upgraded -- apt-get's plan said upgrade, never downgrade
upgraded() {
	grep -q 'upgraded:' "$tmp/apt.log" &&
		! grep -qi 'downgrad' "$tmp/apt.log" &&
		grep -Eq "^Unpacking librpmem1:$arch .* over \\($old\\)" \
			"$tmp/apt.log" &&
		grep -Eq "^Unpacking rpmemd .* over \\($old\\)" "$tmp/apt.log"
}

# ours_in_place -- rpmemd, its page and librpmem.so.1 are ours (dpkg
# --verify holds every file to our md5sums), and no page of the stand-in
# was left aside
ours_in_place() {
	/usr/bin/rpmemd --version 2>&1 | grep -q "rpmemd version $(ver)" ||
		{ echo "    # /usr/bin/rpmemd is not $(ver)"; return 1; }
	! zgrep -qs "PMDK 1.10 stand-in" "$page" \
		/usr/share/man/man1/rpmemd.pmdk.1.gz ||
		{ echo "    # a stand-in's page is left"; return 1; }
	ldconfig -p | grep 'librpmem\.so\.1 ' >/dev/null ||
		{ echo "    # ldconfig knows no librpmem.so.1"; return 1; }
	! grep -q rpmem_pmdk_stand_in "/usr/lib/$multiarch/librpmem.so.1" ||
		{ echo "    # librpmem.so.1 is the stand-in"; return 1; }
	dpkg --verify "${pkgs[@]}" ||
		{ echo "    # dpkg --verify: files differ"; return 1; }
}

# ver -- the upstream version of our package (no epoch, no revision)
ver() {
	local v
	v=$(dpkg-deb -f "${ours[1]}" Version)
	v=${v#*:}
	echo "${v%-*}"
}

# purge -- purge everything of this test; nothing may be left
purge() {
	dpkg -L "${pkgs[@]}" 2>/dev/null | sort -u >"$tmp/files"
	dpkg-query -W -f='${Conffiles}\n' "${pkgs[@]}" 2>/dev/null |
		awk 'NF { print $1 }' >>"$tmp/files"
	shows purge dpkg --purge "${pkgs[@]}" || return 1
	installed=no
	local left f
	left=$(while read -r f; do
		[[ -e $f && ! -d $f ]] && ! dpkg -S "$f" >/dev/null 2>&1 &&
			echo "$f"
	done <"$tmp/files")
	[[ -z $left ]] || { echo "    # left: $left"; return 1; }
	[[ ! -e /etc/rpmemd && ! -e /usr/share/man/man1/rpmemd.pmdk.1.gz ]] ||
		{ echo "    # /etc/rpmemd or rpmemd.pmdk.1.gz left"; return 1; }
	! dpkg-divert --list | grep -E 'by (rpmemd|rpmem-tools)$' &&
		! ldconfig -p | grep 'librpmem\.so\.1 ' &&
		verify_others >"$tmp/verify.after" &&
		diff -u "$tmp/verify.before" "$tmp/verify.after"
}

# verify_others -- dpkg --verify of pmdk-tools, whose rpmemd(1) ours
# diverts, when it is installed
verify_others() {
	! dpkg-query -W pmdk-tools >/dev/null 2>&1 ||
		dpkg --verify pmdk-tools 2>&1
}

# cleanup -- purge whatever is still installed, remove the temp dir
cleanup() {
	local rc=$?
	trap - EXIT
	[[ $installed == no ]] || dpkg --purge "${pkgs[@]}" >/dev/null 2>&1
	rm -rf -- "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

verify_others >"$tmp/verify.before"
tu_check "stand-ins of Debian 11's librpmem1 and rpmemd $old built" \
	build_stand_ins
installed=yes
tu_check "... and installed" shows stand-ins \
	dpkg -i "$tmp/librpmem1_$old.deb" "$tmp/rpmemd_$old.deb"
tu_check "librpmem1 is at $old" version_is librpmem1 "$old"
tu_check "rpmemd is at $old" version_is rpmemd "$old"
v=$(dpkg-deb -f "${ours[0]}" Version)
tu_check "ours ($v) sorts above $old" dpkg --compare-versions "$v" gt "$old"
tu_check "apt-get install of ours: no downgrade allowed, none needed" \
	shows apt env DEBIAN_FRONTEND=noninteractive apt-get install -y \
	--no-install-recommends -o DPkg::Lock::Timeout=120 "${ours[@]}"
tu_check "... it upgraded both over $old" upgraded
tu_check "librpmem1 is ours" version_is librpmem1 "$v"
tu_check "rpmemd is ours" version_is rpmemd "$v"
tu_check "rpmemd, rpmemd(1) and librpmem.so.1 are ours, no page left aside" \
	ours_in_place
if dpkg-query -W pmdk-tools >/dev/null 2>&1; then
	tu_check "pmdk-tools' rpmemd(1) was set aside as rpmemd.pmdk(1)" \
		test -s /usr/share/man/man1/rpmemd.pmdk.1.gz
fi
tu_check "the purge leaves nothing of either" purge

tu_summary
