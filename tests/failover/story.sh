#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# story.sh -- failover between two hosts, told whole (scenarios F1-F4)
#
#   primary  this network namespace: the application (txlog, built
#            against Debian's libpmemobj only) with app.set, whose REPLICA
#            line names the backup; an sshd on our veth end for the sync
#            back
#   backup   a network namespace of its own (harness_netns_start, named
#            per run), joined by a veth pair: sshd, rpmemd, the replica
#
# The application runs transactions and logs each one it saw committed;
# the primary is lost mid-run (the application SIGKILLed, the link cut:
# the backup's rpmemd still holds the dead primary's session); an
# operator logs in to the backup with ssh, runs rpmem promote --force and
# starts the application there, which finds every logged transaction and
# none half applied.  The old primary comes back and is refused; not a
# byte of the new master changes.  The new master makes the old primary's
# copy its replica with rpmem sync, which sends only what differs; rpmem
# verify finds them equal.  Printed: promote time, time from the loss to
# the application committing on the backup, bytes sent against pool size.
# Needs root for the namespace (exit 77 otherwise).
set -uo pipefail
me=story.sh
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

SIZE=$((64 << 20))
fo_tmp
# shellcheck disable=SC2016 # expanded at exit
fo_exit_trap 'harness_stop_sshd "$tmp/b"; harness_stop_sshd "$tmp/p"
	harness_netns_stop'
rc=0
harness_netns_start fo || rc=$?
if ((rc == 77)); then
	echo "story.sh: cannot make a network namespace (not root?); skipped"
	exit 77
fi
((rc == 0)) || exit 1

# now -- seconds since the epoch, with nanoseconds
now() {
	date +%s.%N
}

# backup's sshd and rpmemd, in the namespace
HARNESS_ADDR=$HARNESS_NETNS_ADDR harness_start_sshd "$tmp/b" || exit 1
b_target=$HARNESS_TARGET b_port=$HARNESS_SSH_PORT b_ssh=$RPMEM_SSH
# the primary's, on our end of the veth pair (for the sync back)
HARNESS_NETNS='' HARNESS_ADDR=$HARNESS_NETNS_HOST harness_start_sshd \
	"$tmp/p" || exit 1
p_target=$HARNESS_TARGET p_ssh=$RPMEM_SSH
mkdir -p "$tmp/b/psd" "$tmp/p/psd" "$tmp/b/parts" "$tmp/p/parts"
b_cmd=$(harness_rpmemd_cmd "$tmp/b/psd" "$tmp/b/rpmemd.log")
p_cmd=$(harness_rpmemd_cmd "$tmp/p/psd" "$tmp/p/rpmemd.log")
printf 'PMEMPOOLSET\n%s %s/b/parts/app.0\n' "$SIZE" "$tmp" \
	>"$tmp/b/psd/app.set"
printf 'PMEMPOOLSET\n%s %s/p/parts/app.0\nREPLICA %s app.set\n' "$SIZE" \
	"$tmp" "$b_target" >"$tmp/p/app.set"
log=$tmp/committed

# primary -- run "$@" on the primary, replicating to the backup
primary() {
	env LD_LIBRARY_PATH="$libs" RPMEM_SSH="$b_ssh" RPMEM_CMD="$b_cmd" \
		"$@"
}

# backup -- run "$@" on the backup through ssh, as an operator would,
# from inside its namespace; it replicates to the primary's sshd
backup() {
	local cmd
	cmd=$(printf '%q ' env LD_LIBRARY_PATH="$libs" RPMEM_SSH="$p_ssh" \
		RPMEM_CMD="$p_cmd" "$@")
	ip netns exec "$HARNESS_NETNS" "$b_ssh" -p "$b_port" \
		"$HARNESS_NETNS_ADDR" "cd $(printf '%q' "$tmp") && $cmd"
}

primary "$txlog" create "$tmp/p/app.set" || { tu_fail "create"; exit 1; }
(cd "$tmp" && exec env LD_LIBRARY_PATH="$libs" RPMEM_SSH="$b_ssh" \
	RPMEM_CMD="$b_cmd" "$txlog" run "$tmp/p/app.set" "$log") \
	>/dev/null 2>"$tmp/app.err" &
app_pid=$!
grep -qxm1 500 < <(timeout 120 tail -n +1 -F "$log" 2>/dev/null) ||
	{ tu_fail "the application does not run: $(<"$tmp/app.err")"; exit 1; }

# the primary is lost mid-run: the link first, so that the backup's
# rpmemd never hears of the end of its session
t_loss=$(now)
ip link set "$HARNESS_NETNS_IF" down
kill -KILL "$app_pid"
wait "$app_pid" 2>/dev/null
app_pid=
logged=$(wc -l <"$log")
echo "--- primary lost after $logged transactions logged as committed"

# on the backup: promote, then the application
backup "$rpmem" promote --force --json "$tmp/b/psd/app.set" >"$tmp/promote" \
	2>"$tmp/promote.err" || tu_fail "promote: $(cat "$tmp/promote"*)"
backup "$txlog" run "$tmp/b/psd/app.set" "$log" 1 >/dev/null 2>&1 ||
	tu_fail "the application does not run on the backup"
t_run=$(now)
backup "$txlog" check "$tmp/b/psd/app.set" "$log" >"$tmp/check" 2>&1 ||
	tu_fail "F1: $(<"$tmp/check")"
cat "$tmp/check"
grep -q '"fenced": \[{"pid"' "$tmp/promote" ||
	tu_fail "promote ended no session of the lost primary: $(<"$tmp/promote")"
t_promote=$(grep -o '"seconds": [0-9.]*' "$tmp/promote" | grep -o '[0-9.]*$')

# the old primary comes back, and is refused
ip link set "$HARNESS_NETNS_IF" up
sum=$(md5sum <"$tmp/b/parts/app.0")
primary env RPMEM_LOG_LEVEL=err "$txlog" open "$tmp/p/app.set" \
	>/dev/null 2>"$tmp/old.err" && tu_fail "the old primary opened its pool"
grep -q "promoted to a master on" "$tmp/old.err" ||
	tu_fail "the old primary's refusal: $(<"$tmp/old.err")"
[[ $(md5sum <"$tmp/b/parts/app.0") == "$sum" ]] ||
	tu_fail "the refused open changed the new master"
echo "--- the old primary is refused: $(grep -o 'pool set .*' "$tmp/old.err" |
	head -1)"

# the new master makes the old primary's copy its replica
printf 'PMEMPOOLSET\n%s %s/p/parts/app.0\n' "$SIZE" "$tmp" \
	>"$tmp/p/psd/old.set"
printf 'PMEMPOOLSET\n%s %s/b/parts/app.0\nREPLICA %s old.set\n' "$SIZE" \
	"$tmp" "$p_target" >"$tmp/b/new.set"
backup "$rpmem" sync "$tmp/b/new.set" >"$tmp/sync" 2>&1 ||
	tu_fail "sync back: $(<"$tmp/sync")"
sent=$(grep -o 'copied, [0-9]* bytes' "$tmp/sync" | grep -o '[0-9]*')
grep '^replica 1' "$tmp/sync"
backup "$rpmem" verify "$tmp/b/new.set" >"$tmp/verify" 2>&1 ||
	tu_fail "verify: $(<"$tmp/verify")"
backup "$txlog" run "$tmp/b/new.set" "$log" 100 >/dev/null 2>&1 ||
	tu_fail "transactions on the new master with its new replica"
backup "$txlog" check "$tmp/b/new.set" "$log" >/dev/null 2>&1 ||
	tu_fail "the transactions after the sync"

printf -- '--- figures: promote %.3f s; loss to the application committing' \
	"${t_promote:-0}"
printf ' on the backup %.2f s (ssh and start-up included);\n' \
	"$(echo "$t_run - $t_loss" | bc)"
printf -- '--- differential sync sent %s bytes of a %s-byte pool\n' \
	"${sent:-?}" "$SIZE"
if [[ -z $sent ]] || ((sent >= SIZE / 4)); then
	tu_fail "the sync back sent more than a quarter of the pool"
fi
tu_end "F1-F4 between two hosts passed"
