#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# hostile.sh -- what PMDK 1.12's client never sends, sent to our rpmemd
#
#   top_builddir=BUILD_DIR tests/pmdk01/hostile.sh
#
# real_peer.sh meets the real PMDK 1.12.1 in both directions; this is
# what it cannot show: pmdk_client, a stand-in written from the interop facts,
# started our rpmemd --allow-pmdk-clients directly as its remote command
# and sent it what PMDK's client never does (R9): a protocol other than
# 0.1, a provider id PMDK has not, persists naming a lane past the last
# one or a range past the pool.  And the inline persists (mode 2) that
# PMDK's client sends only over verbs, absent here.  Each refusal comes
# with a log line naming the field and leaves nothing behind.
# Exit 0 when every tu_check passed, 1 otherwise.
set -uo pipefail

self=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$self/../.." && pwd)}
top_builddir=$(cd "${top_builddir:-$top_srcdir}" && pwd)

pc=$top_builddir/tests/pmdk01/pmdk_client
for p in "$pc" "$top_builddir/rpmemd"; do
	[[ -x $p ]] || { echo "hostile.sh: $p is not built" >&2; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rpmem-hostile.XXXXXX")
trap 'rm -rf -- "$tmp"' EXIT
size=$((4 << 20))
for set in inline proto prov lane range; do
	printf 'PMEMPOOLSET\n%s %s/%s.part\n' "$size" "$tmp" "$set" \
		>"$tmp/$set.set"
done

TU_DIR=$tmp
TU_OUT=$tmp/out
# shellcheck source-path=SCRIPTDIR source=../common/tu.sh
. "$top_srcdir/tests/common/tu.sh"

# run directly, not through ssh: SSH_CONNECTION as sshd would set it tells
# rpmemd the address to listen on
daemon="env SSH_CONNECTION='127.0.0.1 50000 127.0.0.1 22'"
daemon+=" $top_builddir/rpmemd --poolset-dir=$tmp --log-level=info"
daemon+=" --log-file=$tmp/rpmemd.log --allow-pmdk-clients"
pc=("$pc" --provider sockets --size "$size" --cmd "$daemon" --create)

log=$tmp/rpmemd.log
tu_check "inline persists (verbs-only in PMDK) with the others: data read back" \
	tu_says 0 "${pc[@]}" --desc inline.set --lanes 4 --timeout 60 -- \
	"pmdk_client: OK "
tu_check "protocol 0.3 without --protocol: refused, Fatal error" \
	tu_says 1 "${pc[@]}" --desc proto.set --minor 3 --timeout 60 -- \
	"pmdk_client: Fatal error" "errno EREMOTEIO"
tu_check "... rpmemd named the request" \
	tu_logged "$log" "invalid request of type 1 (size "
tu_check "provider id 3 (tcp, not PMDK's): Provider not supported" \
	tu_says 1 "${pc[@]}" --desc prov.set --provider-id 3 --timeout 60 -- \
	"pmdk_client: Provider not supported" "errno EMEDIUMTYPE"
tu_check "... rpmemd named the provider" \
	tu_logged "$log" "provider tcp from a PMDK 0.1 client"
tu_check "no part was made for either" \
	test ! -e "$tmp/proto.part" -a ! -e "$tmp/prov.part"
tu_check "a persist on a lane past the last: unanswered, the session ends" \
	tu_says 1 "${pc[@]}" --desc lane.set --lanes 4 --bad-persist lane \
	--timeout 3 -- "went unanswered on lane 0" "session ended" \
	"errno ECONNRESET"
tu_check "a persist past the pool's end: unanswered, the session ends" \
	tu_says 1 "${pc[@]}" --desc range.set --lanes 1 --bad-persist range \
	--timeout 3 -- "went unanswered on lane 0" "session ended" \
	"errno ECONNRESET"
tu_check "... rpmemd named the range" tu_logged "$log" "size 16 outside the pool"
tu_check "... and ended both sessions with a reason" \
	test "$(grep -c "a PMDK client's persist failed (Invalid argument)" \
	"$log")" -eq 2

tu_summary
