#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# packages.sh -- the built .deb files: lintian finds no error (warnings are
# listed), every file is in the package and place Debian's PMDK 1.12
# packages used, rpmemd's config is a conffile, librpmem1's symbols file
# is the one generated from the version script, dependencies come from
# shlibs, and the version is the tree's under epoch 1 (debian/changelog).
# rpmem-ocf, architecture all, holds the Pacemaker agent and its helpers
# below OCF_ROOT with their modes; no file is in two packages.
#
# Only with RPMEM_TEST_PACKAGES=1 (exit 77 otherwise), after debs.sh;
# RPMEM_DEBS names another directory of packages (default: build/deb of
# the build tree).  Installs nothing.
set -uo pipefail

# shellcheck source-path=SCRIPTDIR source=pkg.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/pkg.sh"
pkg_gate packages.sh "set RPMEM_TEST_PACKAGES=1"
debs=${RPMEM_DEBS:-$top_builddir/build/deb}
pkg_arch
version=$(sed -n 's/^PACKAGE_VERSION = //p' "$top_builddir/Makefile")
# the packages' version: epoch 1 over the tree's (debian/changelog)
debversion=1:$version

# the packages, and those of architecture all (the shell scripts)
pkgs=(librpmem1 librpmem-dev rpmemd rpmem-tools rpmem-ocf)
indep=(rpmem-ocf)

# deb -- the .deb of package $1
deb() {
	local a=$arch
	[[ " ${indep[*]} " == *" $1 "* ]] && a=all
	printf '%s/%s_%s_%s.deb\n' "$debs" "$1" "$version" "$a"
}

# package | a path it must hold (as dpkg-deb -c prints it, without ./)
contents=(
	"librpmem1|usr/lib/$multiarch/librpmem.so.1.0.0"
	"librpmem1|usr/lib/$multiarch/librpmem.so.1 -> librpmem.so.1.0.0"
	"librpmem1|usr/share/doc/librpmem1/copyright"
	"librpmem-dev|usr/include/librpmem.h"
	"librpmem-dev|usr/lib/$multiarch/librpmem.so -> librpmem.so.1.0.0"
	"librpmem-dev|usr/lib/$multiarch/pkgconfig/librpmem.pc"
	"librpmem-dev|usr/share/man/man3/rpmem_create.3.gz"
	"librpmem-dev|usr/share/man/man3/rpmem_persist.3.gz"
	"librpmem-dev|usr/share/man/man3/rpmem_open.3.gz -> rpmem_create.3.gz"
	"librpmem-dev|usr/share/man/man7/librpmem.7.gz"
	"rpmemd|usr/bin/rpmemd"
	"rpmemd|etc/rpmemd/rpmemd.conf"
	"rpmemd|usr/share/man/man1/rpmemd.1.gz"
	"rpmemd|usr/share/man/man5/rpmemd.conf.5.gz"
	"rpmem-tools|usr/bin/rpmem"
	"rpmem-tools|usr/share/man/man1/rpmem.1.gz"
	"rpmem-tools|usr/share/man/man5/poolset.5.gz"
	"rpmem-tools|usr/share/bash-completion/completions/rpmem"
	"rpmem-tools|lib/systemd/system/rpmem-metrics.service"
	"rpmem-tools|lib/systemd/system/rpmem-metrics.timer"
	"rpmem-ocf|usr/lib/ocf/resource.d/rpmem/pool"
	"rpmem-ocf|usr/lib/ocf/lib/rpmem/crm-fence-peer"
	"rpmem-ocf|usr/lib/ocf/lib/rpmem/crm-unfence-peer"
	"rpmem-ocf|usr/lib/ocf/lib/rpmem/rpmem-ocf.sh"
	"rpmem-ocf|usr/share/man/man7/ocf_rpmem_pool.7.gz"
)
# package | mode | path: Pacemaker and librpmem run the first two, the
# agent and the handler source the third
modes=(
	"rpmem-ocf|-rwxr-xr-x|usr/lib/ocf/resource.d/rpmem/pool"
	"rpmem-ocf|-rwxr-xr-x|usr/lib/ocf/lib/rpmem/crm-fence-peer"
	"rpmem-ocf|-rwxr-xr-x|usr/lib/ocf/lib/rpmem/crm-unfence-peer"
	"rpmem-ocf|-rw-r--r--|usr/lib/ocf/lib/rpmem/rpmem-ocf.sh"
)
# package | ERE its Depends must match
depends=(
	"librpmem1|(^|, )libfabric1 \\(>= [^)]*\\)"
	"librpmem1|(^|, )openssh-client"
	"librpmem-dev|(^|, )librpmem1 \\(= $debversion\\)"
	"rpmemd|(^|, )libpmem1 \\(>= [^)]*\\)"
	"rpmemd|(^|, )libiniparser1"
	"rpmem-tools|(^|, )libfabric1"
	"rpmemd|(^|, )libfabric1 \\(>= [^)]*\\)"
	"rpmem-ocf|(^|, )rpmem-tools \\(>= $debversion\\)"
	"rpmem-ocf|(^|, )jq(,|$)"
	"rpmem-ocf|(^|, )libxml2-utils(,|$)"
	"rpmem-ocf|(^|, )resource-agents(,|$)"
	"rpmem-ocf|(^|, )pacemaker-cli-utils(,|$)"
	"rpmem-ocf|(^|, )corosync(,|$)"
)

for p in "${pkgs[@]}"; do
	[[ -f $(deb "$p") ]] || tu_fail "$(deb "$p") missing (version $version)"
done
((TU_FAILED == 0)) || exit 1

for row in "${contents[@]}"; do
	p=${row%%|*} path=${row#*|}
	dpkg-deb -c "$(deb "$p")" | awk '{ $1 = $2 = $3 = $4 = $5 = ""; print }' |
		sed 's/^ *\.\///' | grep -qxF -- "$path" ||
		tu_fail "$p does not hold $path"
done
for row in "${modes[@]}"; do
	p=${row%%|*} mode=${row#*|} path=${mode#*|} mode=${mode%%|*}
	m=$(dpkg-deb -c "$(deb "$p")" | awk -v f="./$path" '$6 == f { print $1 }')
	[[ $m == "$mode" ]] || tu_fail "$p holds $path with mode '$m', not $mode"
done
# dpkg would refuse to install two packages that share a file
dup=$(for p in "${pkgs[@]}"; do
	dpkg-deb -c "$(deb "$p")" | awk '$1 !~ /^d/ { print $6 }'
done | sort | uniq -d)
[[ -z $dup ]] || tu_fail "files in two packages: $dup"
for p in "${pkgs[@]}"; do
	v=$(dpkg-deb -f "$(deb "$p")" Version)
	[[ $v == "$debversion" ]] || tu_fail "$p is version $v, not $debversion"
done
for p in "${indep[@]}"; do
	a=$(dpkg-deb -f "$(deb "$p")" Architecture)
	[[ $a == all ]] || tu_fail "$p is of architecture $a, not all"
done
for row in "${depends[@]}"; do
	p=${row%%|*} re=${row#*|}
	dep=$(dpkg-deb -f "$(deb "$p")" Depends)
	[[ $dep =~ $re ]] || tu_fail "$p Depends '$dep' lacks /$re/"
done
[[ $(dpkg-deb -I "$(deb rpmemd)" conffiles 2>/dev/null) == \
	/etc/rpmemd/rpmemd.conf ]] || tu_fail "rpmemd.conf is not a conffile"
# the file as shipped: commented, every key at its default
dpkg-deb --fsys-tarfile "$(deb rpmemd)" |
	tar -xOf - ./etc/rpmemd/rpmemd.conf | cmp -s - \
	"$top_srcdir/src/rpmemd/rpmemd.conf" ||
	tu_fail "/etc/rpmemd/rpmemd.conf differs from src/rpmemd/rpmemd.conf"
diff -u <("$top_srcdir/debian/symbols-from-map" \
	"$top_srcdir/src/librpmem/librpmem.map") \
	<(dpkg-deb -I "$(deb librpmem1)" symbols) ||
	tu_fail "librpmem1's symbols are not those of librpmem.map"
[[ $(dpkg-deb -f "$(deb librpmem1)" Multi-Arch) == same ]] ||
	tu_fail "librpmem1 is not Multi-Arch: same"

# lintian: no error; warnings are printed (README lists them and why)
lintian --fail-on error --suppress-tags-from-file /dev/null \
	"$debs"/*_"$version"_"$arch".changes >"$debs/lintian.txt" 2>&1
rc=$?
grep -v 'running with root privileges' "$debs/lintian.txt"
if grep -q '^E: ' "$debs/lintian.txt" || ((rc != 0)); then
	tu_fail "lintian reports errors (exit $rc)"
fi
((TU_FAILED)) || echo "PASS: the packages' contents, control data and lintian"
exit $((TU_FAILED != 0))
