#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# partition.sh -- scenario R4: the link to the target goes down while a
# pool is open, then comes back.  The target (sshd, rpmemd) lives in a
# network namespace this script makes, joined to ours by a veth pair;
# "cutting the link" is setting our end down.  Traffic stays on that pair.
# Skipped (77) where network namespaces cannot be made (not root).
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=../common/harness.sh
. "$(dirname "${BASH_SOURCE[0]}")/../common/harness.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rpmem-partition.XXXXXX")
harness_netns_target r4 "$tmp"
printf 'PMEMPOOLSET\n8M %s/parts/r4.part0\n' "$tmp" >"$tmp/poolsets/r4.set"
RPMEM_CMD=$(harness_rpmemd_cmd "$tmp/poolsets" "$tmp/logs/rpmemd.log")
export RPMEM_CMD
export RPMEM_TIMEOUT=${RPMEM_TIMEOUT:-6} R4_TARGET=$HARNESS_TARGET R4_SET=r4.set
export R4_CUT="ip link set $HARNESS_NETNS_IF down"
export R4_HEAL="ip link set $HARNESS_NETNS_IF up"

rc=0
"$top_builddir/tests/integration/partition" || rc=1

# every rpmemd of the run is gone in the end (the first one once the
# healed link delivered its client's hang-up)
tu_sessions_gone partition.sh 20000 "$tmp/logs/rpmemd.log" || rc=1
if [ $rc -ne 0 ]; then
	echo "--- rpmemd log"
	cat "$tmp/logs/rpmemd.log"
fi
exit $rc
