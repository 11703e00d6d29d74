#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# fence.sh -- a replica promoted while its primary still holds a session,
# the primary refused afterwards, replication turned the other way and
# back (scenarios F1, F3, F4), over a private sshd on 127.0.0.1
#
#   1. txlog (Debian's libpmemobj) runs transactions on app.set, whose
#      REPLICA line names backup.set in rpmemd's poolset-dir, and keeps
#      running: a partitioned primary that still holds its session;
#   2. F4: rpmem promote refuses (exit 3) and names that session: the
#      rpmemd's pid, sshd's client address, since when; promote --force
#      kills it, promotes, and the application dies on its next persist;
#      every transaction it logged as committed is in the promoted pool,
#      none half applied (F1);
#   3. F3: the old primary's open, rpmem create and rpmemd --remove of
#      the set are refused with "promoted to a master on"; the promoted
#      pool's bytes do not change; rpmem info shows the roles;
#   4. back: a REPLICA line from the new master to a set naming the old
#      primary's part, rpmem sync copies only what differs (the figure
#      is printed) and rpmem verify finds it equal, transactions on the
#      new master replicate; then the same steps in reverse (promote the
#      old primary's copy, demote the backup, sync, verify).  (Verify
#      runs right after a sync: libpmemobj leaves some run-time bytes of
#      its heap unflushed, which verify would report after transactions.)
# Exit status 0 pass, 1 fail.
set -uo pipefail
me=fence.sh
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
export LD_LIBRARY_PATH=$libs

fo_backup debug
a0=$tmp/primary/a0
b0=$tmp/backup/b0
log=$tmp/committed

tu_must "libpmemobj creates app.set with its remote replica" \
	"$txlog" create "$tmp/app.set" || exit 1
tu_must "200 transactions replicate" "$txlog" run "$tmp/app.set" "$log" 200 ||
	exit 1

# 1. the application keeps running: its session holds backup.set
# (in $tmp: a library's crash handler may leave a backtrace file in ".")
(cd "$tmp" && exec "$txlog" run "$tmp/app.set" "$log") >/dev/null \
	2>"$tmp/app.err" &
app_pid=$!
# the log grows once the session is up again: wait for line 210
grep -qxm1 210 < <(timeout 60 tail -n +1 -f "$log") ||
	{ tu_fail "the application does not run: $(<"$tmp/app.err")"; exit 1; }

# 2. F4
tu_refused "promote refuses while the primary's session holds the pool" 3 \
	"held by rpmemd pid [0-9]+, client 127\.0\.0\.1 port [0-9]+, since " \
	"$rpmem" promote "$psd/backup.set"
held=$(grep -o 'rpmemd pid [0-9]*' "$tmp/err" | grep -o '[0-9]*$')
tu_refused "promote --json says who holds the pool" 3 . \
	"$rpmem" promote --json "$psd/backup.set"
grep -Eq "^\{.*\"outcome\": \"refused\", \"held_by\": \[\{\"pid\": $held, \"program\": \"rpmemd\", \"client\": \"127\.0\.0\.1 port [0-9]+\", \"since\": \"[0-9T:-]+Z\"\}\]\}$" \
	"$tmp/out" || tu_fail "promote --json when refused: $(<"$tmp/out")"
[[ -n $held && $(tr '\0' ' ' </proc/"$held"/cmdline) == *"$psd"* ]] ||
	tu_fail "the pid named ($held) is not the rpmemd serving $psd"
[[ ! -e $psd/backup.set.promoted ]] || tu_fail "a refused promote left a marker"
tu_must "promote --force ends the session and promotes" \
	"$rpmem" promote --force --json "$psd/backup.set"
grep -q "\"fenced\": \[{\"pid\": $held, \"client\": \"127.0.0.1 port" \
	"$tmp/out" || tu_fail "promote --json does not name the ended session: \
$(<"$tmp/out")"
grep -Eq '"outcome": "promoted".*"seconds": [0-9.]+' "$tmp/out" ||
	tu_fail "promote --json: $(<"$tmp/out")"
# gone, or a zombie sshd has yet to reap: either way it holds nothing
state=$(awk '{ print $3 }' "/proc/$held/stat" 2>/dev/null)
[[ -z $state || $state == Z ]] || tu_fail "rpmemd $held still runs ($state)"
wait "$app_pid"
app_rc=$?
app_pid=
((app_rc != 0)) || tu_fail "the application went on after its replica was fenced"
echo "--- the application ended with status $app_rc after the fence"
tu_must "F1: every transaction logged as committed is in the promoted pool" \
	"$txlog" check "$psd/backup.set" "$log"
cat "$tmp/out"

# 3. F3
sum=$(md5sum <"$b0")
# libpmemobj says only "opening remote replica #1 failed"; librpmem's
# own log (RPMEM_LOG_LEVEL) carries rpmemd's reason
tu_refused "the old primary's libpmemobj open is refused" - \
	"promoted to a master on" env RPMEM_LOG_LEVEL=err \
	"$txlog" open "$tmp/app.set"
printf 'PMEMPOOLSET\n32M %s/new0\nREPLICA %s backup.set\n' "$tmp/primary" \
	"$HARNESS_TARGET" >"$tmp/new.set"
tu_refused "rpmem create onto the promoted set is refused" - \
	"promoted to a master on" "$rpmem" create "$tmp/new.set"
tu_refused "rpmemd --remove of the promoted set is refused" - \
	"promoted to a master on" "$top_builddir/rpmemd" \
	--poolset-dir="$psd" -c "$tmp/rpmemd.conf" --remove backup.set --force
[[ $(md5sum <"$b0") == "$sum" && -e $b0 ]] ||
	tu_fail "the promoted pool changed under the refused requests"
tu_try "$rpmem" info "$tmp/app.set"
if ((rc != 1)) || ! grep -q "^  role          promoted" "$tmp/out"; then
	tu_fail "rpmem info of the old primary's set: $rc: $(<"$tmp/out")"
fi
tu_must "rpmem info --json of the promoted set" \
	"$rpmem" info --json "$psd/backup.set"
grep -Eq '"role": "promoted", "promoted": "[0-9T:-]+Z", "promoted_from": ' \
	"$tmp/out" || tu_fail "info --json: $(<"$tmp/out")"

# 4. the other way: the new master replicates to the old primary's part
printf 'PMEMPOOLSET\n32M %s\n' "$a0" >"$psd/old.set"
printf 'PMEMPOOLSET\n32M %s\nREPLICA %s old.set\n' "$b0" \
	"$HARNESS_TARGET" >"$tmp/newmaster.set"
tu_must "rpmem sync makes the old primary's copy a replica" \
	"$rpmem" sync "$tmp/newmaster.set"
sent=$(grep -o 'copied, [0-9]* bytes' "$tmp/out" | grep -o '[0-9]*')
echo "--- differential sync sent ${sent:-?} bytes of a $((32 << 20))-byte pool"
if [[ -z $sent ]] || ((sent >= (32 << 20) / 2)); then
	tu_fail "the sync copied more than half the pool: $(<"$tmp/out")"
fi
tu_must "rpmem verify: the old primary's copy equals the new master" \
	"$rpmem" verify "$tmp/newmaster.set"
tu_must "transactions on the new master replicate" \
	"$txlog" run "$tmp/newmaster.set" "$log" 100

# and back: promote the old primary's copy, demote the backup, sync
tu_must "promote on the old primary" "$rpmem" promote "$psd/old.set"
tu_refused "the backup is refused as a replica before demote" - \
	"promoted to a master on" "$rpmem" sync "$tmp/app.set"
tu_must "demote the backup" "$rpmem" demote "$psd/backup.set"
tu_must "rpmem sync from the old primary" "$rpmem" sync "$tmp/app.set"
tu_must "rpmem verify: the backup equals the old primary" \
	"$rpmem" verify "$tmp/app.set"
tu_must "transactions on the old primary again" \
	"$txlog" run "$tmp/app.set" "$log" 50
tu_must "all of them there" "$txlog" check "$tmp/app.set" "$log"

tu_end "F1, F3, F4 and failing back passed"
