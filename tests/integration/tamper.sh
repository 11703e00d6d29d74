#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# tamper.sh -- scenarios S6, S7: lane traffic read and tampered with
# on the way.  The target (sshd, rpmemd) lives in a network namespace
# joined to ours by a veth pair; the client's ssh is the relay
# (tests/integration/relay.c), which sits on our end of the link and
# carries every lane connection to rpmemd, attacking one message or
# recording them all; tests/integration/tamper.c says what each case
# expects.  rpmemd leaves lane security to the client (none), so each
# case chooses it with RPMEM_LANE_SECURITY.
# Skipped (77) where network namespaces cannot be made (not root).
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=../common/harness.sh
. "$(dirname "${BASH_SOURCE[0]}")/../common/harness.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rpmem-tamper.XXXXXX")
harness_netns_target tamp "$tmp"
# the remote shell execs rpmemd, so $$ is its pid: one log per session
RPMEM_CMD="exec $(harness_rpmemd_cmd "$tmp/poolsets" \
	"$tmp/logs/rpmemd.%.log" --lane-security=none)"
RPMEM_CMD=${RPMEM_CMD//%/\$\$}
export RPMEM_CMD RPMEM_TIMEOUT=30
export RELAY_SSH=$RPMEM_SSH RELAY_HOST=$HARNESS_NETNS_ADDR
export RPMEM_SSH=$top_builddir/tests/integration/relay
export TAMPER_TARGET=$HARNESS_NETNS_HOST:$HARNESS_SSH_PORT
export TAMPER_POOLSET_DIR=$tmp/poolsets TAMPER_PART_DIR=$tmp/parts
export TAMPER_LOG_DIR=$tmp/logs TAMPER_DIR=$tmp

rc=0
"$top_builddir/tests/integration/tamper" || rc=1

# every rpmemd of the run is gone: each ended its own session
tu_sessions_gone tamper.sh 10000 "$tmp"/logs/rpmemd.*.log || rc=1
echo "tamper.sh: $TU_SESSIONS rpmemd sessions"
if [ $rc -ne 0 ]; then
	for f in "$tmp"/logs/*.log "$tmp"/relay.*.log; do
		[[ -s $f ]] || continue
		echo "--- $f (last 30 lines)"
		tail -n 30 "$f"
	done
fi
exit $rc
