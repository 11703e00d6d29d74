#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# install.sh -- make install honours DESTDIR: the library with PMDK's file
# and link names, the header, pkg-config file, programs, every man page
# (with the per-function links) and the Pacemaker agent with its helpers
# (below OCF_ROOT, executable but for the sourced rpmem-ocf.sh) and the
# systemd units of rpmem-metrics (the service naming the installed rpmem)
# land under DESTDIR only; a program builds against what was installed;
# make uninstall takes it all back.  With configure's defaults every file
# goes below the prefix, OCF_ROOT and the unit directory too (a user's
# make install into a prefix of their own needs no write access
# elsewhere).
set -euo pipefail
# a make of our own, not a child of make check's (no -w, no jobserver)
unset MAKEFLAGS MFLAGS MAKELEVEL

: "${top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
# shellcheck source-path=SCRIPTDIR source=common/tu.sh
. "$(dirname "${BASH_SOURCE[0]}")/common/tu.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rpmem-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
dest=$tmp/root

# nothing_left DIR WHERE -- make uninstall left no file or link in DIR
nothing_left() {
	local left
	left=$(find "$1" -type f -o -type l)
	[[ -z $left ]] && return
	tu_fail "make uninstall left files behind$2:"
	echo "$left"
}

vars=$(make -s -C "$top_builddir" --no-print-directory -f - print <<'MK'
include Makefile
print:
	@echo "$(bindir) $(libdir) $(includedir) $(mandir) $(bashcompdir)" \
		"$(ocfrootdir) $(systemdsystemunitdir)"
MK
)
read -r bindir libdir includedir mandir bashcompdir ocfrootdir unitdir \
	<<<"$vars"

make -s -C "$top_builddir" install DESTDIR="$dest" >"$tmp/install.log" 2>&1 ||
	{ cat "$tmp/install.log"; tu_fail "make install"; exit 1; }

want=(
	"$bindir/rpmemd" "$bindir/rpmem"
	"$libdir/librpmem.so.1.0.0" "$libdir/librpmem.so.1" "$libdir/librpmem.so"
	"$libdir/pkgconfig/librpmem.pc" "$includedir/librpmem.h"
	"$mandir/man7/librpmem.7" "$mandir/man1/rpmemd.1" "$mandir/man1/rpmem.1"
	"$mandir/man5/rpmemd.conf.5" "$mandir/man5/poolset.5"
	"$bashcompdir/rpmem" "$mandir/man7/ocf_rpmem_pool.7"
	"$ocfrootdir/resource.d/rpmem/pool"
	"$ocfrootdir/lib/rpmem/crm-fence-peer" "$ocfrootdir/lib/rpmem/rpmem-ocf.sh"
	"$ocfrootdir/lib/rpmem/crm-unfence-peer"
)
if [ "$unitdir" != no ]; then
	want+=("$unitdir/rpmem-metrics.service" "$unitdir/rpmem-metrics.timer")
fi
for f in create open close set_attr remove persist flush drain \
		deep_persist read check_version errormsg; do
	want+=("$mandir/man3/rpmem_$f.3")
done
for f in "${want[@]}"; do
	if [ ! -e "$dest$f" ]; then
		tu_fail "$f not installed under DESTDIR"
	fi
done
if [ "$(readlink "$dest$libdir/librpmem.so.1")" != librpmem.so.1.0.0 ]; then
	tu_fail "librpmem.so.1 does not link to librpmem.so.1.0.0"
fi
# Pacemaker runs the agent, librpmem the handler; both source the library
for f in resource.d/rpmem/pool lib/rpmem/crm-fence-peer \
		lib/rpmem/crm-unfence-peer; do
	if [ -e "$dest$ocfrootdir/$f" ] && [ ! -x "$dest$ocfrootdir/$f" ]; then
		tu_fail "$ocfrootdir/$f is not executable"
	fi
done
unit=$dest$unitdir/rpmem-metrics.service
if [ "$unitdir" != no ] && [ -e "$unit" ] &&
		! grep -qx "ExecStart=$bindir/rpmem status --prometheus .*" "$unit"
then
	tu_fail "rpmem-metrics.service does not run $bindir/rpmem:"
	grep '^ExecStart' "$unit"
fi
if [ -x "$dest$ocfrootdir/lib/rpmem/rpmem-ocf.sh" ]; then
	tu_fail "$ocfrootdir/lib/rpmem/rpmem-ocf.sh is executable"
fi

# a client builds and runs against the installed files only
cat >"$tmp/client.c" <<'C'
#include <librpmem.h>
int main(void) { return rpmem_check_version(RPMEM_MAJOR_VERSION,
	RPMEM_MINOR_VERSION) != NULL; }
C
if ! ${CC:-cc} -I"$dest$includedir" "$tmp/client.c" -L"$dest$libdir" \
		-lrpmem -o "$tmp/client" ||
		! LD_LIBRARY_PATH="$dest$libdir" "$tmp/client"; then
	tu_fail "building against the installed header and library"
fi

make -s -C "$top_builddir" uninstall DESTDIR="$dest" >>"$tmp/install.log" 2>&1
nothing_left "$dest" ""
[ "$TU_FAILED" -eq 0 ] && echo "PASS: make install / uninstall with DESTDIR"

# outside_prefix DIR PREFIX -- the files and links below DIR that are
# not below DIR/PREFIX
outside_prefix() {
	find "$1" \( -type f -o -type l \) ! -path "$1$2/*"
}

# a staged install into another prefix stays below it, unless configure
# was told to put OCF_ROOT or the units elsewhere (--with-ocf-root=DIR,
# --with-systemdsystemunitdir=DIR)
stage=$tmp/stage
other=/opt/rpmem-install-test
read -r moved moved_units < <(make -s -C "$top_builddir" \
	--no-print-directory -f - prefix="$other" print <<'MK'
include Makefile
print:
	@echo "$(ocfrootdir) $(systemdsystemunitdir)"
MK
)
[[ $moved_units == no ]] && moved_units=$other/units
ocf_args=()
if [[ $moved != "$other"/* || $moved_units != "$other"/* ]] &&
		"$top_builddir/config.status" --config |
		grep -Eq -- '--with-(ocf-root|systemdsystemunitdir)'; then
	echo "SKIP: configured with OCF_ROOT $moved and units in" \
		"$moved_units, outside the prefix"
	ocf_args=(ocfrootdir="$tmp/prefix/lib/ocf")
elif [[ $moved != "$other"/* || $moved_units != "$other"/* ]]; then
	tu_fail "configure's default OCF_ROOT ($moved) or unit directory" \
		"($moved_units) does not follow the prefix"
	ocf_args=(ocfrootdir="$tmp/prefix/lib/ocf")
elif ! make -s -C "$top_builddir" install DESTDIR="$stage" prefix="$other" \
		>"$tmp/stage.log" 2>&1; then
	cat "$tmp/stage.log"
	tu_fail "make install DESTDIR=... prefix=$other"
	ocf_args=(ocfrootdir="$tmp/prefix/lib/ocf")
elif [[ -n $(outside_prefix "$stage" "$other") ]]; then
	tu_fail "make install prefix=$other put files outside it:"
	outside_prefix "$stage" "$other"
	ocf_args=(ocfrootdir="$tmp/prefix/lib/ocf")
elif [[ ! -x $stage$other/lib/ocf/resource.d/rpmem/pool ]]; then
	tu_fail "the agent is not in PREFIX/lib/ocf/resource.d/rpmem"
else
	echo "PASS: make install prefix=$other stays below it (OCF_ROOT too)"
fi

# without DESTDIR: the hooks run ldconfig as root, or tell what to run;
# nothing is written outside the prefix (OCF_ROOT moved into it by hand
# only when the check above failed or was skipped)
prefix=$tmp/prefix
printf '#!/bin/sh\necho "$*" >>"%s"\n' "$tmp/ldconfig.calls" >"$tmp/ldconfig"
chmod +x "$tmp/ldconfig"
for step in install uninstall; do
	: >"$tmp/ldconfig.calls"
	if ! make -C "$top_builddir" "$step" prefix="$prefix" \
			"${ocf_args[@]}" \
			systemdsystemunitdir="$prefix/lib/systemd/system" \
			LDCONFIG="$tmp/ldconfig" >"$tmp/$step.log" 2>&1; then
		cat "$tmp/$step.log"
		tu_fail "make $step into a prefix"
	elif [ "$(id -u)" = 0 ] && [ ! -s "$tmp/ldconfig.calls" ]; then
		tu_fail "make $step as root did not run ldconfig"
	elif [ "$(id -u)" != 0 ] && [ "$step" = install ] &&
			! grep -q 'run ldconfig' "$tmp/$step.log"; then
		tu_fail "make install by a user does not say to run ldconfig"
	fi
done
nothing_left "$prefix" " in its prefix"
[ "$TU_FAILED" -eq 0 ] && echo "PASS: make install / uninstall refresh the linker cache"
exit $((TU_FAILED != 0))
