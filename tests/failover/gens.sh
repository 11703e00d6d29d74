#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# gens.sh -- the reconnects that must be decided from what each copy
# holds, each fault placed at its worst moment (scenarios D7-D11):
# genclient, a librpmem master whose memory is a file, and a replica
# behind a private sshd on loopback.
#
#   d7_open       fence, a handler that refuses, and a record saying the
#                 replica is behind: the open returns and a persist is
#                 acknowledged; at that moment the replica either holds
#                 it or cannot be promoted (rpmem promote --end-sessions)
#   d7_reconnect  the same on the reconnect, with PMDK's rpmemd as the
#                 peer (it cannot be marked): the replica lost during
#                 the open's resync, persists held (frozen), the replica
#                 back: the first persist acknowledged after the freeze
#                 is on the replica
#   d8            the client's record of a replica that lacks 2 MiB made
#                 unreadable (garbage, torn, another pool size, a
#                 directory): the next open under fail makes it equal
#   d9            rpmemd killed during an open's resync under fail: the
#                 open fails with the reason within a bounded time, no
#                 hang, and the next open makes the replica equal
#   d10           split brain, then the promoted copy demoted: the
#                 reconnect is still refused as split brain (under
#                 continue and under fail), the promoted copy's bytes
#                 unchanged; rpmem discard on it, and the next open
#                 copies the master's difference into it
#   d11           the master host lost between its local and its remote
#                 persist: the next open makes the replica equal
#   unmapped      the master's memory unmapped before rpmem_close, as
#                 libpmemobj's close does it, while the open's resync
#                 still reads it: the resync goes on to its end, or the
#                 close right after the unmap stops it; no crash, and
#                 the copies end equal
#   async         an async replica (doc/async.md): while its session
#                 writes, the master copy's generation is ahead, its
#                 bitmap for the replica names the replica's, and the
#                 record says "not in sync"; a clean close makes both
#                 equal, bytes, generation and record; rpmemd
#                 killed while persists stream (continue): the records
#                 it had not answered come back with the resync; a close
#                 while rpmemd is stopped (the log cannot drain, or the
#                 heartbeat breaks the session first): the record says
#                 not in sync, the replica keeps its generation, and
#                 the next open makes the copies equal;
#                 a persist waiting in a full log while rpmemd is
#                 stopped returns when the session times out (continue)
#   promote_race  rpmem promote held (strace) after its first look at
#                 the replica and before it ends the sessions holding
#                 it, while the master reconnects and starts a resync:
#                 promote refuses the copy mid-resync, or the promoted
#                 copy holds every byte the master acknowledged
#   idle          D15: a sync replica's rpmemd killed while the
#                 application makes no call: the live status leaves
#                 "connected" within 5 s, and the handle reconnects
#
# SCENARIOS=... picks some.  Prints each scenario's outcome.
set -uo pipefail
me=gens.sh
# shellcheck source-path=SCRIPTDIR source=gc.sh
. "$(dirname "${BASH_SOURCE[0]}")/gc.sh"

gc_target
ours_cmd=$rpmemd_cmd

# fresh -- a new pool and replica, nothing recorded
fresh() {
	rm -rf -- "$tmp/state" "$tmp/m.pool"* "$tmp/parts"/* "${psd:?}"/* \
		"$tmp/gc.out" "$tmp/client.log" "$tmp/w"
	mkdir -p "$tmp/state" "$tmp/w"
	printf 'PMEMPOOLSET\n%s %s\n' "$SIZE" "$part" >"$psd/g.set"
	gc create || tu_fail "create: $(tail -3 "$tmp/gc.out")"
}

# behind MIB -- the replica away while MIB MiB are persisted at 8 MiB
# (a record with their ranges left by a clean close), then back
behind() {
	harness_stop_sshd "$tmp/b"
	gc RPMEM_ON_REPLICA_LOSS=continue write 3 $((8 * MIB)) \
		$(($1 * MIB)) || tu_fail "writing while away: $(tail -3 "$tmp/gc.out")"
	harness_restart_sshd "$tmp/b" || tu_fail "sshd did not come back"
}

# equal WHAT -- the replica's bytes past the header are the master's
equal() {
	cmp -s -i 4096 "$tmp/m.pool" "$part" || tu_fail "$1: the replica differs" \
		"from the master: $(cmp -i 4096 "$tmp/m.pool" "$part" 2>&1 |
		head -1)"
}

# wait_for TEST SECONDS WHAT -- until TEST (a command) succeeds, while
# the client runs
wait_for() {
	fo_poll "$2" eval "$1" && return 0
	tu_fail "$3 not seen in $2 s (state '$(state)'): $(tail -3 "$tmp/gc.out")"
	return 1
}

# finish_app [SECONDS] -- stop the background client; its status in rc
# (124 when it did not end in time)
finish_app() {
	: >"$tmp/w/stop"
	rc=0
	if tu_pid_gone "$app_pid" "${1:-30}"; then
		wait "$app_pid" || rc=$?
	else
		kill -KILL "$app_pid" 2>/dev/null
		wait "$app_pid" 2>/dev/null
		rc=124
	fi
	app_pid=
}

# promotable_or_holding WHAT -- once something was acknowledged: the
# replica is refused by `rpmem promote --end-sessions` as not up to date,
# or, promoted, holds every byte the master acknowledged
promotable_or_holding() {
	tu_try "$rpmem" promote --end-sessions "$psd/g.set"
	if ((rc == 3)) && grep -Eqi 'outdated|inconsistent|behind' "$tmp/err"
	then
		echo "--- ok: $1: the replica was not promotable"
	elif ((rc == 0)); then
		equal "$1: promoted"
	else
		tu_fail "$1: promote: status $rc: $(<"$tmp/err")"
	fi
}

sc_d7_open() {
	fresh
	behind 8
	gc_bg RPMEM_ON_REPLICA_LOSS=fence RPMEM_FENCE_PEER_CMD='exit 1' \
		RPMEM_RESYNC_RATE=1M write 7 $((20 * MIB)) $((64 << 10)) \
		"$tmp/w"
	wait_for '[[ -e $tmp/w/acked ]]' 60 "the acknowledgement" || return
	echo "$me: acknowledged while '$(state)'"
	promotable_or_holding "fence refused at open"
	finish_app
}

sc_d7_reconnect() {
	local pmdk=${RPMEM_PMDK_PEER:-$top_srcdir/../shared/pmdk-1.12.1}
	if [[ ! -x $pmdk/bin/rpmemd ]]; then
		echo "$me: d7_reconnect skipped: no PMDK rpmemd in $pmdk"
		return
	fi
	rpmemd_cmd=$(printf '%q --poolset-dir=%q --log-file=%q' \
		"$pmdk/bin/rpmemd" "$psd" "$tmp/pmdk.log")
	export RPMEM_ALLOW_PMDK_DAEMON=1 RPMEM_LANE_SECURITY=none
	fresh
	behind 8
	# the open resyncs 8 MiB at 1 MiB/s (or waits for it); the replica
	# lost meanwhile, and back while persists are held
	gc_bg RPMEM_ON_REPLICA_LOSS=fence RPMEM_FENCE_PEER_CMD='exit 1' \
		RPMEM_RESYNC_RATE=1M loop 5 $((28 * MIB)) $((4 * MIB)) "$tmp/w"
	wait_for 'is_state resyncing connected' 60 \
		"the open" && harness_stop_sshd "$tmp/b" && fo_kill_rpmemd &&
		wait_for 'is_state frozen' 30 "frozen"
	: >"$tmp/w/frozen"
	harness_restart_sshd "$tmp/b"
	if wait_for '[[ -e $tmp/w/acked ]]' 60 "the held persist's ack"; then
		local off len
		read -r off len <"$tmp/w/acked"
		echo "$me: acknowledged after the freeze while '$(state)'"
		cmp -s -i "$off" -n "$len" "$tmp/m.pool" "$part" ||
			tu_fail "a persist held while frozen was acknowledged" \
				"before the replica had it (offset $off)"
	fi
	finish_app
	unset RPMEM_ALLOW_PMDK_DAEMON RPMEM_LANE_SECURITY
	rpmemd_cmd=$ours_cmd
}

# the ways a record can be unreadable (D8): NAME:command on $1
record_damage=(
	'garbage:head -c 300 /dev/urandom >"$1"'
	'torn:truncate -s $(($(stat -c %s "$1") / 2)) "$1"'
	'other-size:sed -i "s/^pool_size .*/pool_size 4096/" "$1"'
	'directory:rm -f "$1" && mkdir "$1"'
)

sc_d8() {
	local d
	for d in "${record_damage[@]}"; do
		fresh
		behind 2
		# the command's $1 is the record
		set -- "$(echo "$tmp/state/"*.replica)"
		eval "${d#*:}" || tu_fail "damaging the record: ${d%%:*}"
		set --
		gc open || tu_fail "${d%%:*}: open: $(tail -3 "$tmp/gc.out")"
		equal "record ${d%%:*}"
	done
}

sc_d9() {
	fresh
	behind 8
	gc_bg RPMEM_RESYNC_RATE=1M open
	# under way: its first MiB is on the replica
	wait_for 'cmp -s -i $((8 * MIB)) -n $MIB "$tmp/m.pool" "$part"' \
		60 "a resync under way" || return
	fo_kill_rpmemd
	finish_app 30
	((rc == 2)) || tu_fail "the open ended with status $rc, not a failure" \
		"(124: it hung): $(tail -3 "$tmp/gc.out")"
	grep -q 'open failed: ' "$tmp/gc.out" ||
		tu_fail "no reason given: $(tail -3 "$tmp/gc.out")"
	gc open || tu_fail "the next open: $(tail -3 "$tmp/gc.out")"
	equal "after the failed open, the next one"
}

sc_d10() {
	fresh
	behind 2
	tu_try "$rpmem" promote "$psd/g.set"
	((rc == 0)) || tu_fail "promote: $(<"$tmp/err")"
	printf 'written on the promoted copy' |
		dd of="$part" bs=1 seek=$((12 * MIB)) conv=notrunc status=none
	tu_try "$rpmem" demote "$psd/g.set"
	((rc == 0)) || tu_fail "demote: $(<"$tmp/err")"
	local sum
	sum=$(sha256sum <"$part")
	gc_bg RPMEM_ON_REPLICA_LOSS=continue write 4 $((16 * MIB)) 4096 \
		"$tmp/w"
	wait_for 'is_state split-brain' 30 "split-brain"
	finish_app
	grep -q 'split brain' "$tmp/client.log" ||
		tu_fail "the client's log does not say split brain"
	gc open
	((rc == 2)) && grep -q 'split brain' "$tmp/gc.out" ||
		tu_fail "an open under fail was not refused as split brain"
	grep -q 'last common generation [0-9a-f]\{16\}' "$tmp/gc.out" ||
		tu_fail "the refusal names no common generation: $(tail -1 \
			"$tmp/gc.out")"
	[[ $(sha256sum <"$part") == "$sum" ]] ||
		tu_fail "the promoted copy changed"
	# the replica's host says it too
	tu_try "$rpmem" status "$psd/g.set"
	((rc == 3 || rc == 1)) && grep -q 'refused: *split-brain' "$tmp/out" ||
		tu_fail "rpmem status on the replica's host: $rc: $(<"$tmp/out")"
	tu_try "$rpmem" discard "$psd/g.set"
	((rc == 0)) || tu_fail "discard: $(<"$tmp/err")"
	gc open || tu_fail "the open after discard: $(tail -3 "$tmp/gc.out")"
	equal "after discard"
}

sc_d11() {
	fresh
	gc crash 9 $((10 * MIB)) $((64 << 10))
	((rc == 137)) || tu_fail "the crash ended with status $rc"
	rm -f -- "$tmp/state/run/"*.status	# the dead handle's
	gc open || tu_fail "the open after the crash: $(tail -3 "$tmp/gc.out")"
	equal "after a master crash"
}

# how the test goes on once the memory is unmapped: the resync runs to
# its end first, or the close comes at once
unmapped_then=(
	"wait_for 'is_state connected' 60 'the resync after the unmap'"
	":"
)

sc_unmapped() {
	local then
	for then in "${unmapped_then[@]}"; do
		fresh
		behind 8
		gc_bg RPMEM_ON_REPLICA_LOSS=continue RPMEM_RESYNC_RATE=2M \
			unmap "$tmp/w"
		wait_for 'is_state resyncing' 60 "the open's resync" ||
			return
		: >"$tmp/w/unmap"
		wait_for '[[ -e $tmp/w/unmapped ]]' 30 "the unmap" &&
			eval "$then"
		finish_app
		((rc == 0)) || tu_fail "unmapped, then ${then%% *}: the client" \
			"ended with $rc: $(tail -3 "$tmp/gc.out")"
		gc open || tu_fail "the next open: $(tail -3 "$tmp/gc.out")"
		equal "unmapped, then ${then%% *}"
	done
}

sc_promote_race() {
	fresh
	behind 8
	harness_stop_sshd "$tmp/b"
	gc_bg RPMEM_ON_REPLICA_LOSS=continue RPMEM_RESYNC_RATE=1M loop 6 \
		$((20 * MIB)) $((4 * MIB)) "$tmp/w"
	wait_for 'is_state degraded' 30 "degraded" || return
	# promote looks, then waits 3 s where it reads /proc/locks
	strace -f -qq -o /dev/null -P /proc/locks \
		-e inject=openat:delay_enter=3000000 \
		"$rpmem" promote --end-sessions "$psd/g.set" \
		>"$tmp/promote.out" 2>&1 &
	local ppid=$!
	harness_restart_sshd "$tmp/b"
	wait_for 'is_state resyncing' 30 "the reconnect's resync"
	local prc=0
	wait "$ppid" || prc=$?
	echo "$me: promote ended with $prc while '$(state)':" \
		"$(tail -1 "$tmp/promote.out")"
	if ((prc == 0)); then
		equal "promoted while the master resynced it"
	elif ((prc != 3)) || ! grep -Eqi 'outdated|inconsistent|mid-resync' \
			"$tmp/promote.out"; then
		tu_fail "promote: $prc: $(<"$tmp/promote.out")"
	fi
	: >"$tmp/w/frozen"
	finish_app
}

# gen_of FILE -- the current generation a copy's .gen file names
gen_of() {
	awk '$1 == "current" { print $2 }' "$1"
}

sc_async() {
	fresh
	local m r
	gc_bg RPMEM_REPLICATION=async write 5 $((4 * MIB)) $((8 * MIB)) \
		"$tmp/w"
	wait_for '[[ -e $tmp/w/acked ]]' 30 "the async writes" || return
	m=$(gen_of "$tmp/m.pool.gen") r=$(gen_of "$part.gen")
	[[ -n $m && $m != "$r" ]] ||
		tu_fail "async session: the master's generation $m is not ahead" \
			"of the replica's $r"
	grep -Eq "^peer [0-9a-f]+ $r " "$tmp/m.pool.gen" ||
		tu_fail "async session: no bitmap for the replica from $r:" \
			"$(grep '^peer' "$tmp/m.pool.gen")"
	grep -q '^in_sync 0$' "$tmp/state/"*.replica ||
		tu_fail "async session: the record says the replica is in sync"
	# the replica says whose async session writes it (for the agent)
	local mcopy
	mcopy=$(awk '$1 == "copy" { print $2 }' "$tmp/m.pool.gen")
	grep -q "^async $mcopy\$" "$part.gen" ||
		tu_fail "async session: the replica's generations do not say" \
			"that master $mcopy writes it asynchronously"
	# the status, rewritten about once a second: async, the log drained
	wait_for '[[ $(field mode) == async && $(field lag_bytes) == 0 ]]' 10 \
		"the status of an async replica whose log drained"
	finish_app
	((rc == 0)) || tu_fail "async write: $rc: $(tail -3 "$tmp/gc.out")"
	equal "an async session closed"
	grep -q '^in_sync 1$' "$tmp/state/"*.replica ||
		tu_fail "a drained close: the record says the replica is not in sync"
	[[ $(gen_of "$tmp/m.pool.gen") == "$(gen_of "$part.gen")" ]] ||
		tu_fail "closed: generations $(gen_of "$tmp/m.pool.gen") and" \
			"$(gen_of "$part.gen")"
	grep -q '^async ' "$part.gen" &&
		tu_fail "a drained close: the replica still says it is behind"
	grep -q "async replica (mode from RPMEM_REPLICATION)" \
		"$tmp/client.log" || tu_fail "the client log names no async replica"
	# the link lost while persists stream
	rm -f -- "$tmp/w/stop" "$tmp/w/acks"
	gc_bg RPMEM_REPLICATION=async RPMEM_ON_REPLICA_LOSS=continue \
		soak 11 "$tmp/w"
	wait_for '[[ $(wc -l 2>/dev/null <"$tmp/w/acks") -gt 200 ]]' 30 \
		"200 async persists" || return
	# rpmemd stopped, then killed once 50 more persists were
	# acknowledged: those are in the log, never answered
	local hashes pid n0
	hashes=$(grep -c 'request HASH' "$tmp/rpmemd.log")
	pid=$(harness_rpmemd_pids "$psd" | head -1)
	n0=$(wc -l <"$tmp/w/acks")
	kill -STOP "$pid"
	wait_for '[[ $(wc -l <"$tmp/w/acks") -gt $((n0 + 50)) ]]' 30 \
		"50 persists acknowledged while rpmemd is stopped" || return
	fo_kill_rpmemd || return
	wait_for 'fo_went degraded' 30 "the loss" || return
	wait_for 'is_state connected' 60 "the resync" || return
	# the live master recorded what rpmemd had not answered: the
	# resync copies those ranges, it compares nothing
	[[ $(grep -c 'request HASH' "$tmp/rpmemd.log") == "$hashes" ]] ||
		tu_fail "async, live reconnect: the resync compared hashes" \
			"instead of copying the recorded ranges"
	finish_app
	((rc == 0)) || tu_fail "async soak: $rc: $(tail -3 "$tmp/gc.out")"
	equal "async, after the link was lost and came back"
	# 8 MiB acknowledged into the log while rpmemd is stopped, then
	# rpmemd killed and nothing more written: what it never answered
	# is all the replica lacks, and the resync copies exactly that
	rm -f -- "$tmp/w/stop" "$tmp/w/acked"
	: >"$tmp/w/hold"
	gc_bg RPMEM_REPLICATION=async RPMEM_ON_REPLICA_LOSS=continue \
		write 13 $((12 * MIB)) $((8 * MIB)) "$tmp/w"
	wait_for 'is_state connected' 30 "the open" || return
	pid=$(harness_rpmemd_pids "$psd" | head -1)
	kill -STOP "$pid"
	rm -f -- "$tmp/w/hold"
	wait_for '[[ -e $tmp/w/acked ]]' 30 "8 MiB acknowledged" || return
	fo_kill_rpmemd || return
	wait_for 'fo_went degraded' 30 "the loss" || return
	wait_for 'is_state connected' 60 "the resync" || return
	grep -q "resync of $((8 * MIB)) bytes" "$tmp/client.log" ||
		tu_fail "async, 8 MiB unanswered at the loss: $(grep 'resync of' \
			"$tmp/client.log" | tail -1)"
	finish_app
	((rc == 0)) || tu_fail "async, log lost: $rc: $(tail -3 "$tmp/gc.out")"
	equal "async, the log's unanswered records resynced"
	# a close that cannot drain the log: rpmemd stopped under it
	rm -f -- "$tmp/w/stop" "$tmp/w/acks"
	gc_bg RPMEM_REPLICATION=async RPMEM_CLOSE_TIMEOUT=1 RPMEM_TIMEOUT=3 \
		soak 12 "$tmp/w"
	wait_for '[[ $(wc -l 2>/dev/null <"$tmp/w/acks") -gt 50 ]]' 30 \
		"50 async persists" || return
	pid=$(harness_rpmemd_pids "$psd" | head -1)
	kill -STOP "$pid"
	finish_app 60
	kill -CONT "$pid"
	# the close came first (the log had room), or the heartbeat broke
	# the session first (the soak was waiting in a full log): either
	# way the record says "not in sync"
	grep -q '^in_sync 0$' "$tmp/state/"*.replica ||
		tu_fail "a close before the log drained: the record says" \
			"$(grep -h '^reason\|^in_sync' "$tmp/state/"*.replica)"
	grep -q 'closed before its async log drained' "$tmp/client.log" &&
		echo "$me: the close came before the loss"
	[[ $(gen_of "$tmp/m.pool.gen") != "$(gen_of "$part.gen")" ]] ||
		tu_fail "a close before the log drained gave the replica the" \
			"master's generation"
	wait_for '[[ -z $(harness_rpmemd_pids "$psd") ]]' 30 "rpmemd gone" ||
		return
	gc open || tu_fail "the open after it: $(tail -3 "$tmp/gc.out")"
	equal "async, after a close that could not drain"
	# a persist waiting for room in a full log (1 MiB) while rpmemd is
	# stopped: the session is lost by the waiter's RPMEM_TIMEOUT, the
	# waiter returns (continue), what was not answered comes back with
	# the resync.  The heartbeat's bound is raised past it, so that the
	# loss comes only from a waiter, once the log is full, however slowly
	# the soak fills it (at 2 s, a loaded machine's -O0 soak once had
	# 711 KiB unanswered when the heartbeat ended the session)
	printf '[default]\nlag-bytes = 1M\n' >"$tmp/small.conf"
	chmod 600 "$tmp/small.conf"
	rm -f -- "$tmp/w/stop" "$tmp/w/acks"
	gc_bg RPMEM_CONF="$tmp/small.conf" RPMEM_REPLICATION=async \
		RPMEM_ON_REPLICA_LOSS=continue RPMEM_TIMEOUT=3 \
		RPMEM_PEER_TIMEOUT_MS=30000 soak 13 "$tmp/w"
	wait_for '[[ $(wc -l 2>/dev/null <"$tmp/w/acks") -gt 50 ]]' 30 \
		"50 async persists" || return
	pid=$(harness_rpmemd_pids "$psd" | head -1)
	kill -STOP "$pid"
	wait_for 'is_state degraded resyncing' 25 \
		"the loss with a persist waiting in the full log"
	kill -CONT "$pid"
	wait_for 'is_state connected' 60 "the resync" || return
	# the log was full: no more than one persist (256 KiB) short of it
	local left
	left=$(sed -n 's/.*: \([0-9]*\) bytes of the async log were not answered.*/\1/p' \
		"$tmp/client.log" | tail -1)
	((${left:-0} > 768 << 10)) || tu_fail "the log was not full at the" \
		"loss: ${left:-no} bytes unanswered"
	echo "$me: a full log at the loss: $left bytes unanswered"
	finish_app
	((rc == 0)) || tu_fail "async, full log: $rc: $(tail -3 "$tmp/gc.out")"
	equal "async, after a full log's session timed out"
}

# sc_idle -- D15, a sync replica lost while its application makes no call:
# the handle says so at once (the lane monitor saw the lanes and the
# channel end), not at the next persist, and reconnects
sc_idle() {
	fresh
	gc_bg RPMEM_ON_REPLICA_LOSS=continue write 15 $((4 * MIB)) "$MIB" \
		"$tmp/w"
	wait_for '[[ -e $tmp/w/acked ]]' 30 "the write" || return
	fo_kill_rpmemd || return
	wait_for 'fo_went degraded' 5 "idle: the loss, with no data call," ||
		return
	wait_for 'is_state connected' 30 "idle: the reconnect" ||
		return
	finish_app
	((rc == 0)) || tu_fail "idle: $rc: $(tail -3 "$tmp/gc.out")"
	equal "idle, reconnected"
}

scenarios=${SCENARIOS:-d7_open d7_reconnect d8 d9 d10 d11 unmapped async \
	promote_race idle}
# shellcheck disable=SC2016,SC2086 # evaluated after each; a list of names
fo_scenarios 'for p in $(harness_rpmemd_pids "$psd"); do kill -KILL "$p"; done' \
	'tail -5 "$tmp/gc.out"' $scenarios
tu_end "every reconnect was decided from what the copies hold"
