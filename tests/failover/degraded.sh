#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# degraded.sh -- a backup that comes and goes never takes the primary
# down (scenarios D1-D6): Debian's libpmemobj (txlog) commits through
# our librpmem to a replica behind a private sshd on loopback, and the
# replica is lost and comes back under each on-replica-loss policy.
#
#   fail       rpmemd killed: the application gets the error and dies,
#              as with PMDK (D1 under fail)
#   continue   rpmemd killed mid-run: the application goes on; the backup
#              is reconnected and resynced while it still runs, by
#              difference (resync bytes far below the pool size); every
#              logged commit is in the master and in a promoted copy of
#              the replica; rpmem verify finds it equal, as after a
#              fault-free run (D1, D2)
#   away       sshd stopped before the open: the application opens
#              degraded from the remembered attributes, commits, and is
#              resynced once sshd is back (D4)
#   crash      the application SIGKILLed while degraded (the bitmap is
#              lost): the next open compares hashes and copies only what
#              differs (D4)
#   resume     closed while degraded: the record lists the ranges the
#              replica lacks; the next open, under fail, copies them before
#              it returns (nothing acknowledged that the replica lacks)
#   fence-ok   fence, `rpmem fence-peer` as the handler: the replica is
#              marked outdated, the application goes on; the resync
#              clears the mark (D6)
#   unfence    fence, with an unfence-peer handler too: it runs once the
#              open is in sync and again after the resync; a loss staged
#              while it runs (it is held on a FIFO) holds the persists
#              and runs the fence-peer handler only after it ended,
#              never beside it (issue 32)
#   fence-hold fence, a handler that refuses: persists are held while
#              the replica is away and go on once it is back (D6)
#   fence-fail fence, a handler that hangs, replica stays away: the
#              handler is killed and the application fails at the freeze
#              timeout, no commit logged after the loss (D6)
#   hung       rpmemd SIGSTOPped mid-run (sshd still answers): its
#              heartbeat stops, and within RPMEM_PEER_TIMEOUT_MS (+1 s)
#              the application goes on degraded, though RPMEM_TIMEOUT is
#              60 s; rpmemd resumed, the replica is resynced (issue 32 D4)
#   split      the replica promoted while the primary ran degraded: the
#              reconnect is refused as split brain, the promoted pool's
#              bytes do not change, rpmem status says split-brain (D5)
#   hot        a librpmem client rewrites one range throughout a resync:
#              the replica read back equals its memory byte for byte (D3)
#
# Prints the loss-to-degraded and reconnect times it saw (ms).  HOT_WRAP
# runs hotrange under a tool (HOT_WRAP='valgrind --error-exitcode=9').
set -uo pipefail
me=degraded.sh
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
hotrange=$top_builddir/tests/failover/hotrange
[[ -x $hotrange ]] || { echo "$me: $hotrange not built" >&2; exit 1; }

SIZE=$((64 << 20))
# shellcheck disable=SC2119 # nothing more to do at exit
fo_target

# now_ms -- milliseconds since the epoch
now_ms() {
	date +%s%3N
}

# rpmemd_pids -- the rpmemd processes serving this run's poolset dir
rpmemd_pids() {
	harness_rpmemd_pids "$psd"
}

# lose_backup STATE -- the backup gone (its sshd stopped, its rpmemd
# killed): the handle in STATE within 30 s
lose_backup() {
	harness_stop_sshd "$tmp/b"
	fo_kill_rpmemd
	wait_state "$1" 30
}

# wait_state STATE SECONDS [HOW] -- until the handle is in STATE (HOW
# is_state), or is or went there since the fault (HOW fo_went: for a
# state a quick reconnect may end before a poll sees it)
wait_state() {
	fo_poll "$2" "${3:-is_state}" "$1" && return 0
	tu_fail "state '$1' not reached in $2 s (it is '$(state)')"
	return 1
}

# commits -- how many commits txlog logged so far
commits() {
	[[ -f $tmp/log ]] && wc -l <"$tmp/log" || echo 0
}

# commits_logged N -- at least N commits are logged
commits_logged() {
	(($(commits) >= $1))
}

# wait_commits N SECONDS -- until at least N commits are logged
wait_commits() {
	fo_poll "$2" commits_logged "$1" && return 0
	tu_fail "fewer than $1 commits in $2 s ($(commits))"
	return 1
}

# fresh -- a new pool with its replica, the state directory emptied
fresh() {
	rm -rf -- "$tmp/state" "$tmp/log" "$tmp/stop" "$tmp/parts"/* \
		"$psd"/* "$tmp/client.log"
	mkdir -p "$tmp/state"
	printf 'PMEMPOOLSET\n%s %s/parts/r.0\n' "$SIZE" "$tmp" \
		>"$psd/app.set"
	printf 'PMEMPOOLSET\n%s %s/parts/m.0\nREPLICA %s app.set\n' "$SIZE" \
		"$tmp" "$target" >"$tmp/app.set"
	app "$txlog" create "$tmp/app.set" || tu_fail "txlog create"
}

# the primary's application's environment
app_env=(LD_LIBRARY_PATH="$libs" RPMEM_CMD="$rpmemd_cmd"
	RPMEM_STATE_DIR="$tmp/state" RPMEM_LOG_LEVEL=notice
	RPMEM_LOG_FILE="$tmp/client.log" RPMEM_RECONNECT_MIN_MS=100
	RPMEM_RECONNECT_MAX_MS=500 TXLOG_STOP="$tmp/stop" TXLOG_PAUSE_US=500)

# app [VAR=VALUE...] CMD... -- run a command as the primary's application
app() {
	env "${app_env[@]}" "$@"
}

# start_app [VAR=VALUE...] -- txlog run in the background (its pid in
# app_pid: env execs it) until $tmp/stop exists
start_app() {
	# in $tmp: what libpmemobj leaves when it aborts stays there
	(cd "$tmp" && exec env "${app_env[@]}" "$@" "$txlog" run \
		"$tmp/app.set" "$tmp/log" 0 >"$tmp/app.out" 2>&1) &
	app_pid=$!
}

# stop_at N -- once N commits are logged, stop the application: it must
# exit 0
stop_at() {
	wait_commits "$1" 60
	stop_app || tu_fail "the application failed: $(<"$tmp/app.out")"
}

# stop_app -- ask it to stop; its exit status
stop_app() {
	: >"$tmp/stop"
	local rc=0
	wait "$app_pid" || rc=$?
	app_pid=
	return "$rc"
}

# diffs -- the ranges rpmem verify finds differing ("" when equal; the
# lines of what it skipped end with what lies there)
diffs() {
	app "$rpmem" verify "$tmp/app.set" 2>&1 |
		grep -E '^  offset 0x[0-9a-f]+ length 0x[0-9a-f]+$'
}


# baseline -- what rpmem verify finds after a fault-free run: nothing
# (it skips the bytes libpmemobj writes and never hands to
# rpmem_persist); a resync must leave no more than that
baseline() {
	fresh
	start_app
	wait_commits 600 60
	stop_app || tu_fail "fault-free run failed: $(<"$tmp/app.out")"
	base_n=$(diffs | wc -l)
	echo "$me: a fault-free run leaves $base_n range(s) rpmem verify" \
		"reports"
	((base_n == 0)) || tu_fail "rpmem verify after a fault-free run:" \
		"$base_n differing range(s): $(diffs | head -5)"
}

# by_difference WHAT -- the last resync copied far less than the pool
by_difference() {
	local bytes
	bytes=$(grep -o 'resync of [0-9]* bytes' "$tmp/client.log" |
		tail -1 | grep -o '[0-9]*')
	echo "$me: $1 ${bytes:-?} bytes of a $SIZE-byte pool"
	((${bytes:-SIZE} < SIZE / 8)) ||
		tu_fail "$1 ${bytes:-?} bytes: not by difference"
}

# after -- the checks every scenario that ends in sync makes
after() {
	app "$txlog" check "$tmp/app.set" "$tmp/log" >"$tmp/check.out" 2>&1 ||
		tu_fail "master lacks a commit: $(<"$tmp/check.out")"
	local n
	n=$(diffs | wc -l)
	((n <= base_n)) || tu_fail "rpmem verify: $n differing range(s)," \
		"a fault-free run has $base_n: $(diffs | head -5)"
	fo_replica_check "$tmp/parts/r.0" "$SIZE" "$txlog" "$tmp/log"
	[[ -z $(state) ]] || tu_fail "a status file outlived the application"
	grep -q '^in_sync 1' "$tmp/state/"*.replica ||
		tu_fail "the record does not say in sync"
}

sc_fail() {
	fresh
	start_app
	wait_commits 200 60 || return
	fo_kill_rpmemd
	local rc=0
	wait "$app_pid" || rc=$?
	app_pid=
	((rc != 0)) || tu_fail "the application did not fail under fail"
}

sc_continue() {
	fresh
	start_app RPMEM_ON_REPLICA_LOSS=continue RPMEM_RESYNC_RATE=64M
	wait_commits 300 60 || return
	local t0 t1 n0 n1
	t0=$(now_ms)
	fo_kill_rpmemd
	wait_state degraded 30 fo_went || return
	n0=$(commits)
	wait_commits $((n0 + 100)) 60 || return
	t1=$(now_ms)
	echo "$me: loss to 100 more commits degraded: $((t1 - t0)) ms"
	wait_state connected 60 || return
	n1=$(commits)
	kill -0 "$app_pid" 2>/dev/null ||
		tu_fail "the resync did not end while the application ran"
	stop_at $((n1 + 200))
	tu_expect "the client logged it" tu_logged "$tmp/client.log" \
		"connected -> degraded"
	tu_expect "the client logged it" tu_logged "$tmp/client.log" \
		"degraded -> resyncing"
	tu_expect "the client logged it" tu_logged "$tmp/client.log" \
		"resyncing -> connected"
	by_difference "resync copied"
	after
}

sc_hung() {
	fresh
	local peer=1000
	start_app RPMEM_ON_REPLICA_LOSS=continue RPMEM_TIMEOUT=60 \
		RPMEM_PEER_TIMEOUT_MS=$peer
	wait_commits 300 60 || return
	local pids t0 t1 n0
	pids=$(rpmemd_pids)
	[[ -n $pids ]] || { tu_fail "no rpmemd to stop"; return; }
	t0=$(now_ms)
	# shellcheck disable=SC2086 # a list of pids
	kill -STOP $pids
	wait_state degraded 30
	t1=$(now_ms)
	echo "$me: rpmemd stopped to degraded: $((t1 - t0)) ms" \
		"(RPMEM_PEER_TIMEOUT_MS=$peer)"
	((t1 - t0 <= peer + 1000)) || tu_fail "a stopped rpmemd was noticed" \
		"after $((t1 - t0)) ms, more than $peer ms + 1 s"
	n0=$(commits)
	wait_commits $((n0 + 100)) 30
	tu_expect "the client logged it" tu_logged "$tmp/client.log" \
		"silent for"
	# shellcheck disable=SC2086 # a list of pids
	kill -CONT $pids
	wait_state connected 60 || return
	stop_at $(($(commits) + 100))
	after
}

sc_away() {
	fresh
	harness_stop_sshd "$tmp/b"
	start_app RPMEM_ON_REPLICA_LOSS=continue
	wait_state degraded 60 || { harness_restart_sshd "$tmp/b"; return; }
	wait_commits 200 60
	local t0
	t0=$(now_ms)
	harness_restart_sshd "$tmp/b" || return
	wait_state connected 60 || return
	echo "$me: backup back to in sync: $(($(now_ms) - t0)) ms"
	stop_at $(($(commits) + 100))
	after
}

sc_crash() {
	fresh
	start_app RPMEM_ON_REPLICA_LOSS=continue
	wait_commits 100 60 || return
	lose_backup degraded
	wait_commits $(($(commits) + 300)) 60
	kill -KILL "$app_pid"
	wait "$app_pid" 2>/dev/null
	app_pid=
	grep -q '^ranges_known 0' "$tmp/state/"*.replica ||
		tu_fail "the record of a crashed degraded run claims its ranges"
	rm -f -- "$tmp/state/run/"*.status	# the dead handle's
	harness_restart_sshd "$tmp/b" || return
	start_app RPMEM_ON_REPLICA_LOSS=continue
	wait_state connected 60 || return
	stop_at $(($(commits) + 100))
	by_difference "after a crash, hashes found"
	after
}

sc_resume() {
	fresh
	start_app RPMEM_ON_REPLICA_LOSS=continue
	wait_commits 100 60 || return
	lose_backup degraded
	stop_at $(($(commits) + 300))
	grep -q '^ranges_known 1' "$tmp/state/"*.replica &&
		grep -q '^range ' "$tmp/state/"*.replica ||
		tu_fail "a clean close while degraded recorded no ranges"
	harness_restart_sshd "$tmp/b" || return
	rm -f -- "$tmp/stop"
	start_app
	wait_state connected 60 || return
	grep -q 'resyncing -> connected' "$tmp/client.log" ||
		tu_fail "no resync before the open under fail"
	stop_at $(($(commits) + 100))
	after
}

sc_fence_ok() {
	fresh
	cat >"$tmp/handler" <<-EOF
		#!/bin/sh
		env | grep '^RPMEM_FENCE_' | sort >"$tmp/handler.env"
		exec env RPMEM_SSH="$RPMEM_SSH" RPMEM_CMD="$rpmemd_cmd" \
			LD_LIBRARY_PATH="$libs" "$rpmem" fence-peer
	EOF
	chmod +x "$tmp/handler"
	start_app RPMEM_ON_REPLICA_LOSS=fence \
		RPMEM_FENCE_PEER_CMD="$tmp/handler" RPMEM_RECONNECT_MIN_MS=2000
	wait_commits 200 60 || return
	fo_kill_rpmemd
	wait_state degraded 30 fo_went || return
	[[ -e $psd/app.set.outdated ]] ||
		tu_fail "the fence-peer handler left no outdated mark"
	grep -q "^RPMEM_FENCE_TARGET=$target\$" "$tmp/handler.env" &&
		grep -q '^RPMEM_FENCE_POOL_SET=app.set$' "$tmp/handler.env" &&
		grep -Eq '^RPMEM_FENCE_POOLSET_UUID=[0-9a-f-]{36}$' \
			"$tmp/handler.env" &&
		grep -q '^RPMEM_FENCE_REASON=.' "$tmp/handler.env" ||
		tu_fail "handler environment: $(cat "$tmp/handler.env")"
	wait_state connected 60 || return
	[[ ! -e $psd/app.set.outdated ]] ||
		tu_fail "the outdated mark outlived the resync"
	stop_at $(($(commits) + 100))
	after
}

# handlers_said N ERE SECONDS -- until the handlers' log has N lines of
# ERE
handlers_said() {
	local end=$((SECONDS + $3))
	while ((SECONDS < end)); do
		(($(cat "$tmp/handlers.log" 2>/dev/null | grep -Ec "$2") >= $1)) &&
			return 0
		tu_nap 0.05
	done
	tu_fail "the handlers did not say '$2' $1 time(s) in $3 s:" \
		"$(cat "$tmp/handlers.log")"
	return 1
}

# release_unfence -- let the unfence-peer handler held on its FIFO end
release_unfence() {
	# shellcheck disable=SC2016 # the FIFO is sh's $1
	timeout 30 sh -c 'echo go >"$1"' sh "$tmp/ugate" ||
		tu_fail "the unfence-peer handler never read its gate"
}

sc_unfence() {
	fresh
	rm -f "$tmp/handlers.log" "$tmp/ugate"
	mkfifo "$tmp/ugate"
	rm -f "$tmp/fence.gen" "$tmp/after.log"
	cat >"$tmp/after" <<-EOF
		#!/bin/sh
		echo "\$RPMEMD_GENERATION \$RPMEMD_HISTORY \$RPMEMD_POOL_SET" >>"$tmp/after.log"
	EOF
	cat >"$tmp/handler" <<-EOF
		#!/bin/sh
		echo "\$RPMEM_FENCE_GENERATION" >"$tmp/fence.gen"
		echo "fence begin" >>"$tmp/handlers.log"
		env RPMEM_SSH="$RPMEM_SSH" RPMEM_CMD="$rpmemd_cmd" \
			LD_LIBRARY_PATH="$libs" "$rpmem" fence-peer
		rc=\$?
		echo "fence end \$rc" >>"$tmp/handlers.log"
		exit \$rc
	EOF
	cat >"$tmp/unhandler" <<-EOF
		#!/bin/sh
		echo "unfence begin \$RPMEM_FENCE_REASON" >>"$tmp/handlers.log"
		read -r go <"$tmp/ugate"
		echo "unfence end" >>"$tmp/handlers.log"
	EOF
	chmod +x "$tmp/handler" "$tmp/unhandler" "$tmp/after"
	start_app RPMEM_ON_REPLICA_LOSS=fence \
		RPMEM_FENCE_PEER_CMD="$tmp/handler" \
		RPMEM_UNFENCE_PEER_CMD="$tmp/unhandler" \
		RPMEM_CMD="$rpmemd_cmd --after-resync=$(printf %q "$tmp/after")"
	handlers_said 1 '^unfence begin in sync$' 30 || return
	# the handler runs beside the persists, holding nothing
	local n0
	n0=$(commits)
	wait_commits $((n0 + 100)) 30 || return
	# the replica lost while the unfence-peer handler runs
	fo_kill_rpmemd
	wait_state frozen 30 || return
	grep -q '^fence' "$tmp/handlers.log" &&
		tu_fail "the fence-peer handler ran beside the unfence-peer one"
	release_unfence
	wait_state degraded 30 fo_went || return
	wait_state connected 60 || return
	handlers_said 2 '^unfence begin in sync$' 30 && release_unfence
	stop_at $(($(commits) + 100))
	local order
	order=$(awk '{ print $1 $2 }' "$tmp/handlers.log" | paste -sd' ')
	[[ $order == "unfencebegin unfenceend fencebegin fenceend unfencebegin unfenceend" ]] ||
		tu_fail "the handlers ran in this order: $order"
	grep -q '^fence end 0$' "$tmp/handlers.log" ||
		tu_fail "the fence-peer handler failed: $(cat "$tmp/handlers.log")"
	after
	after_resync
}

# after_resync -- sc_unfence's handlers: the fence-peer one was given the
# generation the replica held, and rpmemd's after-resync handler, run
# when the resync ended, the replica's new one, with that one in its
# history (what lets a cluster's replica lift a fence it has outlived)
after_resync() {
	local fg cur hist set want
	fg=$(cat "$tmp/fence.gen" 2>/dev/null)
	[[ $fg =~ ^[0-9a-f]{16}$ ]] ||
		{ tu_fail "RPMEM_FENCE_GENERATION was '$fg'"; return; }
	want=$(app "$rpmem" status --json "$psd/app.set" |
		jq -r '.sets[0].generations.identifiers.current')
	read -r cur hist set < <(tail -n 1 "$tmp/after.log" 2>/dev/null)
	[[ $set == "$psd/app.set" ]] ||
		tu_fail "after-resync handler: RPMEMD_POOL_SET '$set', not $psd/app.set"
	[[ $cur == "$want" && $cur != "$fg" ]] ||
		tu_fail "after-resync handler: RPMEMD_GENERATION '$cur'; the replica holds $want, the fence was at $fg"
	[[ ,$hist, == *,$fg,* ]] ||
		tu_fail "after-resync handler: RPMEMD_HISTORY '$hist' lacks the fence's $fg"
	echo "$me: fenced at generation $fg; the resync's end ran the after-resync handler with $cur (history $hist)"
}

sc_fence_hold() {
	fresh
	start_app RPMEM_ON_REPLICA_LOSS=fence RPMEM_FENCE_PEER_CMD='exit 1' \
		RPMEM_FREEZE_TIMEOUT=60
	wait_commits 200 60 || return
	lose_backup frozen || { harness_restart_sshd "$tmp/b"; return; }
	local n0
	n0=$(commits)
	# held: no commit while the replica is away (poll a second)
	local end=$((SECONDS + 1))
	while ((SECONDS < end)); do tu_nap 0.1; done
	(($(commits) == n0)) || tu_fail "commits went on while frozen"
	harness_restart_sshd "$tmp/b" || return
	wait_state connected 60 || return
	stop_at $((n0 + 100))
	after
}

sc_fence_fail() {
	fresh
	# a handler that hangs: killed at the freeze timeout, not fenced
	start_app RPMEM_ON_REPLICA_LOSS=fence RPMEM_FENCE_PEER_CMD='sleep 60' \
		RPMEM_FREEZE_TIMEOUT=2
	wait_commits 200 60 || return
	harness_stop_sshd "$tmp/b"
	local n0 t0 rc=0
	t0=$(now_ms)
	fo_kill_rpmemd
	n0=$(commits)
	wait "$app_pid" || rc=$?
	app_pid=
	((rc != 0)) || tu_fail "the application did not fail at the freeze timeout"
	local dt=$(($(now_ms) - t0))
	((dt >= 1500 && dt < 30000)) || tu_fail "failed after $dt ms, not ~2 s"
	(($(commits) <= n0 + 1)) ||
		tu_fail "$(($(commits) - n0)) commits acknowledged while frozen"
	tu_expect "the client logged it" tu_logged "$tmp/client.log" \
		"frozen -> broken"
	tu_expect "the client logged it" tu_logged "$tmp/client.log" \
		"did not finish within 2 s"
	harness_restart_sshd "$tmp/b"
}

sc_split() {
	fresh
	start_app RPMEM_ON_REPLICA_LOSS=continue
	wait_commits 200 60 || return
	lose_backup degraded || { harness_restart_sshd "$tmp/b"; return; }
	"$rpmem" promote --force "$psd/app.set" >"$tmp/promote.out" 2>&1 ||
		tu_fail "promote: $(<"$tmp/promote.out")"
	local sum
	sum=$(sha256sum <"$tmp/parts/r.0")
	harness_restart_sshd "$tmp/b" || return
	wait_state split-brain 30
	tu_expect "the client logged it" tu_logged "$tmp/client.log" \
		"split brain"
	app "$rpmem" status >"$tmp/status.out" 2>&1
	grep -q 'split-brain' "$tmp/status.out" ||
		tu_fail "rpmem status: $(<"$tmp/status.out")"
	wait_commits $(($(commits) + 100)) 60
	is_state split-brain || tu_fail "state $(state), not split-brain"
	stop_app || tu_fail "the application failed: $(<"$tmp/app.out")"
	[[ $(sha256sum <"$tmp/parts/r.0") == "$sum" ]] ||
		tu_fail "the promoted pool changed"
	grep -q '^in_sync 0' "$tmp/state/"*.replica ||
		tu_fail "the record of a split brain says in sync"
	RPMEM_STATE_DIR=$tmp/state "$rpmem" info "$tmp/app.set" \
		>"$tmp/info.out" 2>&1
	grep -q 'out of sync since .*split brain' "$tmp/info.out" ||
		tu_fail "rpmem info: $(<"$tmp/info.out")"
}

sc_hot() {
	rm -rf -- "$tmp/state" "$tmp/hot" "$psd"/*
	mkdir -p "$tmp/state" "$tmp/hot"
	printf 'PMEMPOOLSET\nOPTION NOHDRS\n%s %s/parts/hot.0\n' \
		$((16 << 20)) "$tmp" >"$psd/hot.set"
	env "${app_env[@]}" RPMEM_ON_REPLICA_LOSS=continue \
		RPMEM_RESYNC_RATE=8M ${HOT_WRAP:-} "$hotrange" "$target" hot.set \
		$((16 << 20)) "$tmp/hot" >"$tmp/hot.out" 2>&1 &
	app_pid=$!
	local end=$((SECONDS + 60))
	while [[ ! -e $tmp/hot/ready ]] && ((SECONDS < end)); do
		kill -0 "$app_pid" 2>/dev/null || break
		tu_nap 0.02
	done
	# away until 4 MiB are out of sync, then back: a resync of half a
	# second or more at 8 MiB/s, the hot range rewritten all along
	lose_backup degraded
	end=$((SECONDS + 60))
	local oos=0
	while ((oos < (4 << 20) && SECONDS < end)); do
		kill -0 "$app_pid" 2>/dev/null || break
		tu_nap 0.02
		oos=$(field out_of_sync)
		oos=${oos:-0}
	done
	: >"$tmp/hot/cold-done"
	harness_restart_sshd "$tmp/b" || return
	wait_state resyncing 60
	wait_state connected 60
	: >"$tmp/hot/stop"
	local rc=0
	wait "$app_pid" || rc=$?
	app_pid=
	((rc == 0)) || tu_fail "hot range: $(<"$tmp/hot.out")"
	cat "$tmp/hot.out"
}

# the scenarios: SCENARIOS (a list) picks some, degraded_hot.sh the last
scenarios=${SCENARIOS:-fail continue hung away crash resume fence_ok \
	unfence fence_hold fence_fail split hot}
[[ $scenarios == hot ]] || baseline
# shellcheck disable=SC2086 # a list of names
fo_scenarios : : $scenarios
[[ -z $(rpmemd_pids) ]] || tu_fail "rpmemd left running: $(rpmemd_pids)"
tu_end "the primary outlived its backup under every policy"
