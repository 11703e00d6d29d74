#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# peers.sh -- PMDK 1.12 peers in both directions, by default and opted in
#
#   top_builddir=BUILD_DIR tests/pmdk01/peers.sh
#
# A PMDK 1.12 client (pmdk_client, written from the facts) against the
# built rpmemd, started directly as its remote command: refused by
# default with words the client prints; served protocol 0.1 with
# --allow-pmdk-clients, across two sessions, with the warning logged;
# still refused where lane security is asked for.
#
# This project's librpmem (rpmem_client) against a PMDK 1.12 rpmemd
# (fake_rpmemd) behind a private sshd on 127.0.0.1: by default
# rpmem_create fails naming the target, both protocols and the fix;
# with RPMEM_ALLOW_PMDK_DAEMON=1 create, persists of every kind, reads
# and a second session work, and the daemon's file holds every byte;
# RPMEM_LANE_SECURITY=encrypt with it is refused.
#
# Exit 0 when every check passed, 1 otherwise.
set -uo pipefail

self=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$self/../.." && pwd)}
top_builddir=$(cd "${top_builddir:-$top_srcdir}" && pwd)
export top_srcdir top_builddir
# shellcheck source-path=SCRIPTDIR source=../integration/harness.sh
. "$top_srcdir/tests/integration/harness.sh"

bin=$top_builddir/tests/pmdk01
tu_need_built "$bin/fake_rpmemd" "$bin/pmdk_client" "$bin/rpmem_client" \
	"$top_builddir/rpmemd"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rpmem-peers.XXXXXX")
cleanup() {
	harness_stop_sshd "$tmp"
	rm -rf -- "$tmp"
}
trap cleanup EXIT
ours=$tmp/ours		# the built rpmemd's pool sets and parts
theirs=$tmp/theirs	# the PMDK stand-in's pools
mkdir -p "$ours" "$theirs"
size=$((4 << 20))
for set in a b c; do
	printf 'PMEMPOOLSET\n%s %s/%s.part\n' "$size" "$ours" "$set" \
		>"$ours/$set.set"
done

TU_OUT=$tmp/out

# logged -- a line in a log file: logged FILE TEXT
logged() {
	grep -qF -- "$2" "$1" || { echo "    # not in $1: $2"; return 1; }
}

# --- a PMDK 1.12 client against our rpmemd --------------------------------

# run directly, not through ssh: SSH_CONNECTION as sshd would set it tells
# rpmemd the address to listen on
daemon="env SSH_CONNECTION='127.0.0.1 50000 127.0.0.1 22'"
daemon+=" $top_builddir/rpmemd --poolset-dir=$ours --log-level=info"
pc=("$bin/pmdk_client" --provider sockets --size "$size" --timeout 60)

tu_check "PMDK client, default rpmemd: refused with words it prints" \
	tu_says 1 "${pc[@]}" --cmd "$daemon --log-file=$tmp/d1.log" --desc a.set \
	--create -- "is PMDK 1.12's librpmem (protocol 0.1)" \
	"allow-pmdk-clients = yes"
tu_check "the refusal is in rpmemd's log" \
	logged "$tmp/d1.log" "refused a PMDK 1.12 client"
tu_check "no part was made for the refused client" test ! -e "$ours/a.part"

allow="$daemon --allow-pmdk-clients --lane-security=none"
tu_check "PMDK client, allow-pmdk-clients: create, persists, reads, close" \
	tu_says 0 "${pc[@]}" --cmd "$allow --log-file=$tmp/d2.log" --desc a.set \
	--create --lanes 4 --seed 7 -- "pmdk_client: OK "
tu_check "the session was warned about in rpmemd's log" \
	logged "$tmp/d2.log" "serving a PMDK 1.12 client (protocol 0.1"
tu_check "a second PMDK session finds the first one's data" \
	tu_says 0 "${pc[@]}" --cmd "$allow --log-file=$tmp/d3.log" --desc a.set \
	--open --lanes 2 --reverify 7 --seed 8 -- "pmdk_client: OK "
tu_check "PMDK client, allowed but lane-security=encrypt: refused" \
	tu_says 1 "${pc[@]}" --cmd "$daemon --allow-pmdk-clients --lane-security=encrypt \
	--log-file=$tmp/d4.log" --desc b.set --create -- \
	"which has no lane security" "lane-security = encrypt"

# --- our client against a PMDK 1.12 rpmemd ---------------------------------

harness_start_sshd "$tmp" || exit 1
RPMEM_CMD="$bin/fake_rpmemd --poolset-dir=$theirs --log-file=$tmp/f.log"
RPMEM_CMD+=" --log-level=info"
export RPMEM_CMD RPMEM_TIMEOUT=60
target=$HARNESS_TARGET
rc=$bin/rpmem_client

tu_check "our client, PMDK rpmemd: rpmem_create names target, both, the fix" \
	tu_says 1 "$rc" create "$target" p1 "$size" 1 "$tmp/expect" -- \
	"FAIL rpmem_create: EPROTONOSUPPORT" "rpmemd on 127.0.0.1 is PMDK" \
	"protocol 0.1" "speaks 0.3" "RPMEM_ALLOW_PMDK_DAEMON=1"
tu_check "no pool was made by the refused create" test ! -e "$theirs/p1.pool"
tu_check "RPMEM_ALLOW_PMDK_DAEMON=1 with lane security asked: refused" \
	tu_says 1 env RPMEM_ALLOW_PMDK_DAEMON=1 RPMEM_LANE_SECURITY=encrypt \
	"$rc" create "$target" p1 "$size" 1 "$tmp/expect" -- \
	"FAIL rpmem_create: EPROTONOSUPPORT" "which has no lane security"
export RPMEM_ALLOW_PMDK_DAEMON=1
tu_check "opted in: create, strict, relaxed and deep persists, reads" \
	tu_says 0 "$rc" create "$target" p1 "$size" 5 "$tmp/expect" -- "OK create"
tu_check "the PMDK daemon's file holds every byte persisted" \
	cmp -i 4096 "$tmp/expect" "$theirs/p1.pool"
tu_check "opted in: open returns create's attributes and the data" \
	tu_says 0 "$rc" open "$target" p1 "$size" 5 -- "OK open"

tu_summary
