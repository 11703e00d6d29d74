#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# real_peer.sh -- mixed sites against the real PMDK 1.12.1, both directions
#
#   top_builddir=BUILD_DIR tests/pmdk01/real_peer.sh
#
# PMDK 1.12.1's rpmemd and librpmem.so.1, built unmodified, are looked
# for in ../shared/pmdk-1.12.1 beside the source tree (RPMEM_PMDK_PEER
# names another place); where they are absent the test skips (77),
# saying so.  Everything runs behind a private sshd on 127.0.0.1.
#
# Our librpmem against PMDK's rpmemd (started by RPMEM_CMD, as a PMDK
# target would be), then PMDK's librpmem against our rpmemd; in each
# direction:
#   - the default refusal (R19), with the words the client really prints
#     and no pool left behind;
#   - opted in (RPMEM_ALLOW_PMDK_DAEMON=1; allow-pmdk-clients = yes in
#     rpmemd.conf, where also a create whose lanes cannot connect, which
#     PMDK's client ends with CLOSE's remove flag), peer_client, built
#     against our header and run on either library by LD_LIBRARY_PATH:
#     create, strict and relaxed persists, flush + drain of both kinds
#     and deep persists on four lanes at once, read back, set_attr,
#     close; the replica's file compared byte for byte; reopen with 1024
#     lanes asked (set_attr's attributes and the data); remove with the
#     pool set file;
#   - Debian's unmodified libpmemobj and pmempool: pmemobj_create with
#     the remote replica, transactions, reopen, verify; `pmempool sync`
#     rebuilding the master from the replica and a lost replica from the
#     master; `pmempool rm -a`.
# And a target that swaps PMDK's rpmemd for ours and back keeps serving
# the same replica files to libpmemobj and pmempool.
# PMDK's client speaks sockets only when RPMEM_ENABLE_SOCKETS=1.
# Exit 0 when every tu_check passed, 1 otherwise, 77 when skipped.
set -uo pipefail

self=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top_srcdir=$(cd "${top_srcdir:-$self/../..}" && pwd)
top_builddir=$(cd "${top_builddir:-$top_srcdir}" && pwd)
export top_srcdir top_builddir
# shellcheck source-path=SCRIPTDIR source=../common/harness.sh
. "$top_srcdir/tests/common/harness.sh"

pmdk=${RPMEM_PMDK_PEER:-$top_srcdir/../shared/pmdk-1.12.1}
if [[ ! -x $pmdk/bin/rpmemd || ! -f $pmdk/lib/librpmem.so.1 ]]; then
	echo "real_peer.sh: SKIP: PMDK 1.12.1's bin/rpmemd and" \
		"lib/librpmem.so.1 are not in $pmdk (set RPMEM_PMDK_PEER)"
	exit 77
fi
pmdk=$(cd "$pmdk" && pwd)
pc=$top_builddir/tests/pmdk01/peer_client
obj=$top_builddir/tests/integration/pmemobj
for p in "$pc" "$obj" "$top_builddir/rpmemd"; do
	[[ -x $p ]] || { echo "real_peer.sh: $p is not built" >&2; exit 1; }
done
pmempool=$(command -v pmempool) ||
	{ echo "real_peer.sh: pmempool not found (pmdk-tools)" >&2; exit 1; }
if ! "$pmdk/bin/rpmemd" --version 2>&1 | grep -qF "rpmemd version 1.12.1"
then
	echo "real_peer.sh: $pmdk/bin/rpmemd does not run:" >&2
	"$pmdk/bin/rpmemd" --version >&2
	exit 1
fi

base=${TMPDIR:-/tmp}
[[ -z ${TMPDIR:-} && -d /dev/shm && -w /dev/shm ]] && base=/dev/shm
tmp=$(mktemp -d "$base/rpmem-real-peer.XXXXXX")
cleanup() {
	harness_stop_sshd "$tmp"
	rm -rf -- "$tmp"
}
trap cleanup EXIT
harness_start_sshd "$tmp" || exit 1
target=$HARNESS_TARGET
size=$((4 << 20))

TU_DIR=$tmp	# where libinfinipath leaves the backtrace of a crash
TU_OUT=$tmp/out

# gone -- none of the files exist
gone() {
	local f
	for f in "$@"; do
		[[ ! -e $f ]] || { echo "    # still there: $f"; return 1; }
	done
}

# pool_sets -- DIR gets p.set (one part p.part of $size) and o.set (one
# part o.part of 16M) for the remote side, and DIR/local the master set
# of libpmemobj naming o.set on the target
pool_sets() {
	local d=$1
	mkdir -p "$d/local"
	printf 'PMEMPOOLSET\n%s %s/p.part\n' "$size" "$d" >"$d/p.set"
	printf 'PMEMPOOLSET\n16M %s/o.part\n' "$d" >"$d/o.set"
	printf 'PMEMPOOLSET\n16M %s/local/o.part\nREPLICA %s o.set\n' \
		"$d" "$target" >"$d/local/o.set"
}

# librpmem_level -- peer_client's sessions on pool sets in $1, with the
# library $2: create on 4 lanes, the file, reopen, remove
librpmem_level() {
	local d=$1 lib=$2
	tu_check "$dir: create, persists of every kind on 4 lanes, set_attr" \
		tu_says 0 "$pc" create "$target" p.set "$size" 7 4 "$tmp/expect" \
		-- "library $lib" "OK create"
	tu_check "$dir: the replica's file holds every byte persisted" \
		cmp -i 4096 "$tmp/expect" "$d/p.part"
	tu_check "$dir: reopen asking 1024 lanes: set_attr's attributes, data" \
		tu_says 0 "$pc" open "$target" p.set "$size" 7 1024 -- \
		"library $lib" "OK open"
	tu_check "$dir: remove with the pool set file" \
		tu_says 0 "$pc" remove "$target" p.set 2 -- "OK remove"
	tu_check "$dir: the part and the set file are gone" \
		gone "$d/p.part" "$d/p.set"
}

# pmemobj_level -- Debian's libpmemobj and pmempool on pool sets in $1
pmemobj_level() {
	local d=$1 set=$1/local/o.set
	tu_check "$dir: pmemobj_create with the replica, 300 transactions" \
		tu_says 0 "$obj" create "$set" 300 -- "created, 300 transactions"
	tu_check "$dir: reopen, 100 transactions more" \
		tu_says 0 "$obj" extend "$set" 100 -- "to 400 transactions"
	rm -f -- "$d/local/o.part"
	tu_check "$dir: pmempool sync rebuilds the lost master from the replica" \
		tu_says 0 "$pmempool" sync "$set" --
	tu_check "$dir: the rebuilt master verifies" \
		tu_says 0 "$obj" verify "$set" 400 -- "verified 400 transactions"
	rm -f -- "$d/o.part"
	tu_check "$dir: pmempool sync recreates the lost replica" \
		tu_says 0 "$pmempool" sync "$set" --
	rm -f -- "$d/local/o.part"
	tu_check "$dir: ... which alone rebuilds the master again" \
		tu_says 0 "$pmempool" sync "$set" --
	tu_check "$dir: that master verifies too" \
		tu_says 0 "$obj" verify "$set" 400 -- "verified 400 transactions"
	tu_check "$dir: pmempool rm -a removes master, replica and remote set" \
		tu_says 0 "$pmempool" rm -a "$set" --
	tu_check "$dir: nothing is left of the pool" \
		gone "$d/local/o.part" "$d/o.part" "$d/o.set"
}

# --- our librpmem against PMDK's rpmemd -----------------------------------

dir="ours -> PMDK rpmemd"
theirs=$tmp/theirs
pool_sets "$theirs"
RPMEM_CMD=$(printf '%q --poolset-dir=%q --log-file=%q --log-level=info' \
	"$pmdk/bin/rpmemd" "$theirs" "$tmp/theirs.log")
export RPMEM_CMD LD_LIBRARY_PATH=$top_builddir/.libs
ours_lib=$top_builddir/.libs/librpmem.so.1
tu_check "$dir: refused by default, naming the target and the opt-in" \
	tu_says 1 "$pc" create "$target" p.set "$size" 7 4 "$tmp/expect" -- \
	"library $ours_lib" "FAIL rpmem_create: EPROTONOSUPPORT" \
	"rpmemd on 127.0.0.1 is PMDK 1.12's" "RPMEM_ALLOW_PMDK_DAEMON=1"
tu_check "$dir: ... and no part was made" gone "$theirs/p.part"
tu_check "$dir: libpmemobj is refused too, and tu_says why" \
	tu_says 1 "$obj" create "$theirs/local/o.set" 10 -- \
	"errno: Protocol not supported"
export RPMEM_ALLOW_PMDK_DAEMON=1
tu_check "$dir: an async replica is refused, saying why and the fix" \
	tu_says 1 env RPMEM_REPLICATION=async "$pc" create "$target" p.set \
	"$size" 7 4 "$tmp/expect" -- "FAIL rpmem_create: EPROTONOSUPPORT" \
	"is async, but its rpmemd (PMDK's, protocol 0.1) serves only" \
	"make it sync (RPMEM_REPLICATION, librpmem.conf)"
tu_check "$dir: ... and no part was made" gone "$theirs/p.part"
librpmem_level "$theirs" "$ours_lib"
pmemobj_level "$theirs"
# a target moving from PMDK's rpmemd to ours, and back, keeps its replica
theirs_cmd=$RPMEM_CMD
ours_cmd=$(printf '%q --poolset-dir=%q --log-file=%q' \
	"$top_builddir/rpmemd" "$theirs" "$tmp/swap.log")
set=$theirs/local/o.set
pool_sets "$theirs"	# rm -a took the set files
tu_check "target swap: PMDK's rpmemd creates the replica, 100 transactions" \
	tu_says 0 "$obj" create "$set" 100 -- "created, 100 transactions"
tu_check "rpmem info says what a session with PMDK's rpmemd guarantees" \
	tu_says 0 "$top_builddir/rpmem" info "$set" -- \
	"rpmemd        PMDK 1.12 (protocol 0.1)" \
	"guarantees    no lane security or lane tokens; strict persists up to" \
	"deep ones, and over sockets larger strict ones, RMA writes" \
	"without 8-byte atomicity"
tu_check "target swap: our rpmemd serves that replica, 100 more" \
	tu_says 0 env RPMEM_CMD="$ours_cmd" "$obj" extend "$set" 100 -- \
	"to 200 transactions"
tu_check "target swap: PMDK's rpmemd serves it again, 100 more" \
	tu_says 0 "$obj" extend "$set" 100 -- "to 300 transactions"
rm -f -- "$theirs/local/o.part"
tu_check "target swap: our rpmemd's sync rebuilds the master from it" \
	tu_says 0 env RPMEM_CMD="$ours_cmd" "$pmempool" sync "$set" --
tu_check "target swap: the master verifies through PMDK's rpmemd" \
	tu_says 0 env RPMEM_CMD="$theirs_cmd" "$obj" verify "$set" 300 -- \
	"verified 300 transactions"
tu_check "target swap: pmempool rm -a" tu_says 0 "$pmempool" rm -a "$set" --
unset RPMEM_ALLOW_PMDK_DAEMON

# --- PMDK's librpmem against our rpmemd -----------------------------------

dir="PMDK librpmem -> ours"
ours=$tmp/ours
pool_sets "$ours"
conf=$tmp/rpmemd.conf
{
	echo "poolset-dir = $ours"
	echo "log-file = $tmp/ours.log"
	echo "use-syslog = no"
	echo "log-level = notice"
} >"$conf"
RPMEM_CMD=$(printf '%q -c %q' "$top_builddir/rpmemd" "$conf")
export RPMEM_CMD LD_LIBRARY_PATH=$pmdk/lib RPMEM_ENABLE_SOCKETS=1
tu_check "$dir: refused by default: PMDK's rpmem_errormsg() and errno" \
	tu_says 1 "$pc" create "$target" p.set "$size" 7 4 "$tmp/expect" -- \
	"library $pmdk/lib/librpmem.so.1" \
	"FAIL rpmem_create: EPROTONOSUPPORT: Protocol version number mismatch"
tu_check "$dir: ... the log names the cause and the fix" \
	tu_logged "$tmp/ours.log" "allow-pmdk-clients is no; set$(:
	) allow-pmdk-clients = yes in rpmemd.conf (rpmemd.conf(5))"
tu_check "$dir: ... and no part was made" gone "$ours/p.part"
tu_check "$dir: libpmemobj is refused too, and tu_says why" \
	tu_says 1 "$obj" create "$ours/local/o.set" 10 -- \
	"errno: Protocol not supported"
echo "allow-pmdk-clients = yes" >>"$conf"
# rpmemd told by SSH_CONNECTION to listen where the client does not connect
tu_check "$dir: lanes that cannot connect: create fails" \
	tu_says 1 env RPMEM_CMD="SSH_CONNECTION='127.0.0.1 1 127.0.0.2 22' $(:
	)$RPMEM_CMD" "$pc" create "$target" p.set "$size" 7 4 "$tmp/expect" \
	-- "FAIL rpmem_create: ECONNREFUSED"
tu_check "$dir: ... PMDK's client closed with its remove flag" \
	tu_logged "$tmp/ours.log" "request CLOSE: flags 0x1 (removing the pool)"
tu_check "$dir: ... and rpmemd removed the pool it had made" gone "$ours/p.part"
librpmem_level "$ours" "$pmdk/lib/librpmem.so.1"
tu_check "$dir: rpmemd warned that it served a PMDK client" \
	tu_logged "$tmp/ours.log" "serving a PMDK 1.12 client (protocol 0.1"
pmemobj_level "$ours"
# PMDK's client connects no more lanes than the provider's contexts:
# rpmemd must not announce more and wait for them
tu_check "$dir: PMDK's client connected every lane rpmemd announced" \
	tu_not_logged "$tmp/ours.log" " lanes connected in "

tu_summary
