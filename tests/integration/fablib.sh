#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# fablib.sh -- libfabric is loaded when a fabric is first needed, not at
# exec (src/common/fablib.c): what needs no fabric runs where libfabric
# cannot be loaded, and what needs one fails cleanly there, saying why
#
#   top_builddir=BUILD_DIR tests/integration/fablib.sh
#
# "Cannot be loaded": LD_LIBRARY_PATH names a directory whose
# libfabric.so.1 is not a library.  A process that linked libfabric at
# exec would not start at all.  The sessions run rpmemd on this host
# without a login (tests/alloc/local_ssh, as alloc.sh does).
#
# One table of cases, one loop.  A case is one line of fields separated
# by '|':
#
#   WHO | STATUS | ERE | CMD
#
# WHO is where the unloadable library is put: "client" (the command
# itself), "rpmemd" (only the daemon its session starts) or "none";
# "client-other" puts there a library that is not libfabric (a copy of
# libm.so.6), loaded but without libfabric's functions.
# STATUS is the exit status wanted, ERE a line its output (either
# stream) must match, CMD words run with eval ($rpmem, $rpmemd, $client,
# $size stand for the programs and the pool's size).  A create must leave no part when it
# fails, and one where it works.
set -uo pipefail

# shellcheck source-path=SCRIPTDIR source=../common/tu.sh
. "$(dirname "${BASH_SOURCE[0]}")/../common/tu.sh"
me=fablib.sh

rpmem=$top_builddir/rpmem
rpmemd=$top_builddir/rpmemd
client=$top_builddir/tests/alloc/alloc_client
tu_need_built "$rpmem" "$rpmemd" "$client" "$top_builddir/tests/alloc/local_ssh"
tu_tmp fablib
mkdir -p "$tmp/sets" "$tmp/parts" "$tmp/state" "$tmp/bogus"
echo "not a library" >"$tmp/bogus/libfabric.so.1"
mkdir "$tmp/other"
libm=$(ldconfig -p | sed -n 's/^\tlibm\.so\.6 (libc6,x86-64) => //p' | head -n 1)
cp -- "${libm:-/lib/x86_64-linux-gnu/libm.so.6}" "$tmp/other/libfabric.so.1"
printf 'PMEMPOOLSET\n8M %s/parts/f.part0\n' "$tmp" >"$tmp/sets/f.set"
export RPMEM_SSH=$top_builddir/tests/alloc/local_ssh RPMEM_TIMEOUT=20
export RPMEM_STATE_DIR=$tmp/state
# shellcheck disable=SC2034 # used by the cases, through eval
size=$((8 << 20))

cases=$(cat <<'EOF'
client|0|^rpmem version |$rpmem --version
client|0|^rpmemd version |$rpmemd --version
client|0|^no pool open through librpmem|$rpmem status
client|0|^fail create ELIBACC cannot load libfabric\.so\.1: .*bogus|$client create 127.0.0.1 f.set $size
client-other|0|^fail create ELIBACC libfabric\.so\.1 has no fi_getinfo@FABRIC_1\.3|$client create 127.0.0.1 f.set $size
rpmemd|0|^fail create EREMOTEIO .*rpmemd: cannot load libfabric\.so\.1: |$client create 127.0.0.1 f.set $size
none|0|^ok$|$client create 127.0.0.1 f.set $size
EOF
)

while IFS='|' read -r who want ere cmd; do
	rm -f -- "$tmp"/parts/*
	daemon="$rpmemd --poolset-dir=$tmp/sets --log-file=$tmp/rpmemd.log"
	env=()
	case $who in
	client) env=(LD_LIBRARY_PATH="$tmp/bogus") ;;
	client-other) env=(LD_LIBRARY_PATH="$tmp/other") ;;
	rpmemd) daemon="env LD_LIBRARY_PATH=$tmp/bogus $daemon" ;;
	esac
	what="$cmd (libfabric unloadable: $who)"
	eval "set -- $cmd"
	TU_TRY_OUT=$tmp/out TU_TRY_ERR=$tmp/err \
		tu_try env "${env[@]}" RPMEM_CMD="$daemon" "$@"
	if ((rc != want)); then
		tu_fail "$what: exit $rc, not $want: $(cat "$tmp/out" \
			"$tmp/err")"
		continue
	fi
	grep -Eq -- "$ere" "$tmp/out" "$tmp/err" ||
		{ tu_fail "$what: no line matching '$ere' in: $(cat \
			"$tmp/out" "$tmp/err")"
		continue; }
	if [[ $cmd == *create* ]]; then
		if grep -q '^ok$' "$tmp/out"; then
			[[ -e $tmp/parts/f.part0 ]] ||
				{ tu_fail "$what: no part made"; continue; }
		elif [[ -e $tmp/parts/f.part0 ]]; then
			tu_fail "$what: a failed create left its part"
			continue
		fi
	fi
	echo "--- ok: $what"
done <<<"$cases"
tu_end "libfabric loaded only for a fabric; a library that cannot be loaded fails what needs it, saying why"
