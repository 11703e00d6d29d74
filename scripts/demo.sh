#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# demo.sh -- the main job: a replicated pool on this host, end to end.
#
# Installs what is missing and builds (scripts/setup.sh), starts a private
# sshd on a loopback port with generated keys, then, through a real ssh
# hop to rpmemd: creates a pool with a remote replica, reopens it, writes
# data through librpmem while printing persist latency and throughput
# (rpmem bench), shows the replica holds the same bytes, and removes it.  Everything lives in a
# temporary directory that is removed at the end; sshd is stopped by pid.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# the figures are of an optimised build: a tree that scripts/test.sh left
# built with gcov counters (-O0, atomic counter updates in every loop), or
# one built with sanitizers or without optimisation, is cleaned and
# configured again with the defaults; rpmem bench refuses what is left
# shellcheck source=scripts/build_kind.sh
. "$top/scripts/build_kind.sh"
case $(build_kind_tree "$top") in
optimised | unconfigured) "$top/scripts/setup.sh" ;;
*)	make -C "$top" clean >/dev/null
	"$top/scripts/setup.sh" --disable-coverage --disable-sanitizers \
		CFLAGS='-g -O2' ;;
esac
build_kind_refuse demo.sh "$top" || exit 2

export top_builddir="$top" top_srcdir="$top"
# shellcheck source=tests/common/harness.sh
source "$top/tests/common/harness.sh"

# Pool parts live in memory (/dev/shm), as on persistent memory: msync is
# then cheap and the figures show the replication path itself.  On a
# disk-backed file system every persist also waits for writeback.
base=/dev/shm
[ -d "$base" ] && [ -w "$base" ] || base=${TMPDIR:-/tmp}
work=$(mktemp -d "$base/rpmem-demo.XXXXXX")
cleanup() {
	harness_stop_sshd "$work" || true
	rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/local" "$work/remote" "$work/poolsets"

echo "== starting a private sshd on 127.0.0.1"
harness_start_sshd "$work"
# rpmemd leaves lane security to the client (the client's default is
# encrypt), so that rpmem bench can measure every policy side by side
RPMEM_CMD=$(harness_rpmemd_cmd "$work/poolsets" "$work/rpmemd.log" \
	--lane-security=none)
export RPMEM_CMD

sed "s|@DIR@|$work|g; s|@TARGET@|$HARNESS_TARGET|g" \
	"$top/poolsets/demo.set.in" > "$work/demo.set"
sed "s|@DIR@|$work|g" "$top/poolsets/demo-remote.set.in" \
	> "$work/poolsets/demo-remote.set"
echo "== pool set $work/demo.set:"
sed 's/^/   /' "$work/demo.set"

rpmem=("$top/rpmem")
# Debian's libpmemobj loads librpmem.so.1 by name for REPLICA lines (in
# rpmem bench's transactions and in act two): the one built here
export LD_LIBRARY_PATH="$top/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "== rpmem create"
"${rpmem[@]}" create "$work/demo.set"
echo "== rpmem info (reopens every replica)"
"${rpmem[@]}" info "$work/demo.set"
echo "== rpmem bench --quick (writes through librpmem; latency, throughput," \
	"each lane-security policy)"
"${rpmem[@]}" bench --quick --lanes 2 "$work/demo.set"
echo "== the replica's bytes equal the local ones"
size=$(stat -c %s "$work/local/demo.part0")
if cmp -n $((size - 4096)) -i 4096:4096 "$work/local/demo.part0" \
		"$work/remote/demo.part0"; then
	echo "   $((size - 4096)) bytes of pool data equal on both sides"
else
	echo "   the replica differs from the local pool" >&2
	exit 1
fi
echo "== rpmem rm"
"${rpmem[@]}" rm "$work/demo.set"

# Act two: Debian's unmodified libpmemobj replicating through our
# librpmem (LD_LIBRARY_PATH above).
printf 'PMEMPOOLSET\n32M %s/local/app.part0\nREPLICA %s app-remote.set\n' \
	"$work" "$HARNESS_TARGET" > "$work/app.set"
printf 'PMEMPOOLSET\n32M %s/remote/app.part0\n' "$work" \
	> "$work/poolsets/app-remote.set"
echo "== pmempool create obj (libpmemobj, replicated through librpmem)"
pmempool create obj --layout=app "$work/app.set"
echo "== rpmem info"
"${rpmem[@]}" info "$work/app.set"
echo "== rpmem verify (hashes computed by rpmemd next to the replica)"
# the run-time state libpmemobj never flushes is skipped, and named
"${rpmem[@]}" verify "$work/app.set"
echo "== rpmem sync"
"${rpmem[@]}" sync "$work/app.set"
"${rpmem[@]}" rm "$work/app.set"
echo "== done: pools created, replicated, verified and removed"
