#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# outdate.sh -- the outdated mark of a replica its master went on without
# (scenarios D5, D6, F3), over a private sshd on 127.0.0.1
#
#   1. D6: rpmem fence-peer, with the variables librpmem sets, has rpmemd
#      write backup.set.outdated beside the replica's set and exits 0;
#   2. rpmem info shows the mark, in text and in --json;
#   3. D5: rpmem promote refuses the outdated replica (exit 3), naming
#      since when (UTC) and which master went on without it;
#   4. rpmem sync of the master brings the replica to equality and clears
#      the mark through OUTDATE in its session; rpmem outdate marks and
#      --clear removes it locally;
#   5. promote --force promotes an outdated replica and removes the mark,
#      and rpmemd --outdate of the promoted set is refused naming the
#      promotion (F3);
#   6. D6: with the replica's sshd stopped (by its pid) fence-peer exits
#      non-zero and says the replica is not marked.
# Exit status 0 pass, 1 fail.
set -uo pipefail
me=outdate.sh
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
export LD_LIBRARY_PATH=$libs

# fence -- rpmem fence-peer as librpmem runs it for backup.set
fence() {
	RPMEM_FENCE_TARGET=$HARNESS_TARGET RPMEM_FENCE_POOL_SET=backup.set \
		RPMEM_FENCE_POOLSET_UUID= RPMEM_FENCE_REASON="test: link cut" \
		"$rpmem" fence-peer
}

fo_backup notice
host=$(hostname)
mark=$psd/backup.set.outdated
tu_must "libpmemobj creates app.set with its remote replica" \
	"$txlog" create "$tmp/app.set" || exit 1
tu_must "20 transactions replicate" \
	"$txlog" run "$tmp/app.set" "$tmp/committed" 20 || exit 1

# 1. D6: the handler marks the replica
tu_must -m "replica backup.set on .* marked outdated.*master $host" \
	"fence-peer marks the replica outdated and exits 0" fence
[[ -f $mark ]] || tu_fail "no $mark after fence-peer"
grep -qx "host $host" "$mark" || tu_fail "the marker names no master host"
grep -q "^master [0-9a-f-]\{36\}$" "$mark" ||
	tu_fail "the marker has no master uuid: $(<"$mark")"
grep -q "marked outdated since" "$tmp/rpmemd.log" ||
	tu_fail "rpmemd logged no notice of the mark"

# 2. rpmem info shows it
tu_must -m "outdated +since [0-9-]+T.*Z: master $host" "info shows the mark" \
	"$rpmem" info "$psd/backup.set"
tu_must -m "\"outdated\": \"[0-9-]+T.*Z\", \
\"outdated_by\": \"$host\"" "info --json shows the mark" \
	"$rpmem" info --json "$psd/backup.set"

# 3. D5: promote refuses, naming since when and which master
tu_refused "promote refuses the outdated replica" 3 \
	"outdated since [0-9-]+T[0-9:]+Z: master $host \(pool uuid [0-9a-f-]+\)" \
	"$rpmem" promote "$psd/backup.set"
[[ -f $psd/backup.set.promoted ]] && tu_fail "a refused promote left a marker"

# 4. a resync to equality clears it (OUTDATE in the sync's session)
tu_must "sync brings the replica to equality" "$rpmem" sync "$tmp/app.set"
[[ -f $mark ]] && tu_fail "sync left $mark"
grep -q "outdated mark cleared" "$tmp/rpmemd.log" ||
	tu_fail "rpmemd logged no notice of the clear"
tu_must -m "outdated since .*: master primary-a" \
	"rpmem outdate marks a local replica" \
	"$rpmem" outdate --master primary-a "$psd/backup.set"
tu_must -m "outdated mark removed" "rpmem outdate --clear removes the mark" \
	"$rpmem" outdate --clear "$psd/backup.set"
[[ -f $mark ]] && tu_fail "outdate --clear left $mark"

# 5. --force promotes it all the same and the mark goes (F3 after)
tu_must "fence-peer marks it again" fence
tu_must -m "promoting it anyway" \
	"promote --force promotes the outdated replica" \
	"$rpmem" promote --force "$psd/backup.set"
[[ -f $mark ]] && tu_fail "promote --force left $mark"
[[ -f $psd/backup.set.promoted ]] || tu_fail "promote --force did not promote"
tu_refused "fence-peer of the promoted set fails, naming the promotion" 1 \
	"NOT marked outdated.*promoted to a master on" fence
[[ -f $mark ]] && tu_fail "a promoted set was marked outdated"

# 6. D6: the replica's host unreachable: the handler fails
tu_must "demote" "$rpmem" demote "$psd/backup.set"
harness_stop_sshd "$tmp"
tu_refused "fence-peer fails when the replica cannot be reached" 1 \
	"NOT marked outdated" fence
[[ -f $mark ]] && tu_fail "a mark appeared though the host was unreachable"

tu_end "fence-peer, info, promote, sync and clear of the outdated mark"
