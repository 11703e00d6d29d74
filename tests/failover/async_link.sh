#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# async_link.sh -- an async replica behind a link slower than the
# application (tbf at 40 Mbit/s on a veth pair to a namespace the test
# makes; each pool is created before the link is slowed): the congestion
# policies of doc/async.md, each with a 24 MiB burst of persists into a
# 2 MiB log, and the ordering rule across lanes.
#
#   block       the lag, read from the live status all through, builds
#               to its bound and never passes it (bytes and age); the
#               burst takes about the link's time
#   pull-ahead  the burst returns at local speed (in under a quarter of
#               the link's time, no persist waiting a quarter of a full
#               log's worth of it); the handle says it pulled ahead, the
#               replica carries the outdated mark while it resyncs on the
#               same session, then the copies are equal and the mark is
#               gone; the next open finds them in sync
#   pull-close  ASYNC_PULL_CLOSES (4) writes closed at once right after
#               they pulled ahead: the next open's resync makes the
#               copies equal (what the stopped sender had not had
#               answered was recorded)
#   order       ASYNC_SEEDS (20) runs of genclient mtsoak: 4 threads on
#               4 lanes persisting overlapping ranges, each held while
#               written (block, a 4 MiB log), the master SIGKILLed at a
#               moment each seed picks, on odd seeds once the link is
#               cut (the veth pair down) so rpmemd keeps only what had
#               crossed; oracle (genclient order): no torn word, every
#               persist that returned before the latest one the replica
#               holds began is whole there, and the returned ones it
#               lacks hold at most the bound
#   objorder    ASYNC_OBJ_SEEDS (10) runs of txmt: 4 threads of Debian's
#               libpmemobj on 4 lanes, each seed from a copy of one pool
#               made over the fast link, killed as in order; the
#               replica's part promoted and opened with libpmemobj
#               (txmt check): each thread's transactions a prefix, each
#               whole, none missing that returned before the latest one
#               there began, the missing ones' records within the bound
#
#   top_builddir=BUILD_DIR tests/failover/async_link.sh
set -uo pipefail
me=async_link.sh
# shellcheck source-path=SCRIPTDIR source=gc.sh
. "$(dirname "${BASH_SOURCE[0]}")/gc.sh"

BURST=$((24 * MIB))
LAG=$((2 * MIB))
LAG_MS=2000
RATE_MBIT=40
# the burst at the link's rate, in ms; and a full log's worth
LINK_MS=$((BURST * 8 / (RATE_MBIT * 1000)))
LOG_MS=$((LAG * 8 / (RATE_MBIT * 1000)))
SEEDS=${ASYNC_SEEDS:-20}
OBJ_SEEDS=${ASYNC_OBJ_SEEDS:-10}
txmt=$top_builddir/tests/failover/txmt
gc_target link
conf=$tmp/librpmem.conf
mark=$psd/g.set.outdated

# empty POLICY [LAG] -- no pool, the link fast, g.set on the target and
# librpmem.conf saying async under POLICY
empty() {
	harness_netns_shape none
	rm -rf -- "$tmp/state" "$tmp/m.pool"* "$tmp/parts"/* "${psd:?}"/* \
		"$tmp/w"
	mkdir -p "$tmp/state" "$tmp/w"
	printf 'PMEMPOOLSET\n%s %s\n' "$SIZE" "$part" >"$psd/g.set"
	printf '[default]\nmode = async\nlag-bytes = %s\nlag-ms = %s\n' \
		"${2:-$LAG}" "$LAG_MS" >"$conf"
	printf 'on-congestion = %s\n' "$1" >>"$conf"
	chmod 600 "$conf"
	gc_env=(RPMEM_CONF="$conf")
}

# slow -- the link slowed to RATE_MBIT
slow() {
	harness_netns_shape "${RATE_MBIT}mbit" 64kb 20ms ||
		tu_fail "tbf on the veth pair"
}

# fresh POLICY [LAG] -- a new pool replicated in sync over the fast
# link, then the link slowed and the replica async under POLICY
fresh() {
	empty "$@"
	gc RPMEM_REPLICATION=sync create ||
		tu_fail "$1: create: $(tail -3 "$tmp/gc.out")"
	slow
}

# burst -- the 24 MiB burst in the background; its time in burst_ms
# once acknowledged and its longest persist in longest_ms, the largest
# lag the live status showed meanwhile in max_bytes and max_ms
burst() {
	: >"$tmp/gc.out"
	gc_bg write 5 $((4 * MIB)) "$BURST" "$tmp/w"
	max_bytes=0 max_ms=0 burst_ms=
	local end=$((SECONDS + 60)) b m
	while [[ ! -e $tmp/w/acked ]] && ((SECONDS < end)) &&
			kill -0 "$app_pid" 2>/dev/null; do
		b=$(field lag_bytes) m=$(field lag_ms)
		((${b:-0} > max_bytes)) && max_bytes=$b
		((${m:-0} > max_ms)) && max_ms=$m
		tu_nap 0.02
	done
	burst_ms=$(sed -n 's/^acked .* in \([0-9]*\) ms, .*$/\1/p' "$tmp/gc.out")
	longest_ms=$(sed -n 's/^acked .* the longest persist \([0-9]*\) ms$/\1/p' \
		"$tmp/gc.out")
	[[ -n $burst_ms ]] ||
		tu_fail "the burst was not acknowledged: $(tail -3 "$tmp/gc.out")"
	echo "$me: burst of $((BURST / MIB)) MiB in ${burst_ms:-?} ms (the" \
		"link's time $LINK_MS ms), the longest persist" \
		"${longest_ms:-?} ms, lag at most $max_bytes bytes," \
		"$max_ms ms; state '$(state)'"
}

sc_block() {
	fresh block
	burst
	((max_bytes <= LAG && max_ms <= LAG_MS)) ||
		tu_fail "block: the lag passed its bound: $max_bytes bytes," \
			"$max_ms ms (bounds $LAG, $LAG_MS)"
	((max_bytes > LAG / 2)) ||
		tu_fail "block: the lag never built ($max_bytes bytes): the link" \
			"was not the bottleneck, the test proves nothing"
	((${burst_ms:-0} > LINK_MS / 2)) ||
		tu_fail "block: the burst took ${burst_ms:-?} ms, less than half" \
			"the link's time: the persists did not wait for room"
	finish_app
	((rc == 0)) || tu_fail "block: the client ended with $rc"
	equal "block, after a drained close"
}

sc_pull_ahead() {
	fresh pull-ahead
	burst
	((${burst_ms:-LINK_MS} < LINK_MS / 4)) ||
		tu_fail "pull-ahead: the burst took ${burst_ms:-?} ms, not local" \
			"speed (the link's time: $LINK_MS ms)"
	# the persist that pulls ahead does not wait for what is in flight
	((${longest_ms:-LOG_MS} < LOG_MS / 4)) ||
		tu_fail "pull-ahead: a persist took ${longest_ms:-?} ms, not" \
			"local speed (a full log's worth of the link: $LOG_MS ms)"
	grep -q 'pulled ahead' "$tmp/client.log" ||
		tu_fail "pull-ahead: the client never said it pulled ahead"
	if is_state resyncing; then
		[[ -e $mark ]] ||
			tu_fail "pull-ahead: resyncing, the replica not marked outdated"
	else
		tu_fail "pull-ahead: '$(state)' right after the burst, not resyncing"
	fi
	wait_state connected 120 || return
	[[ ! -e $mark ]] || tu_fail "pull-ahead: in sync, the outdated mark stays"
	finish_app
	((rc == 0)) || tu_fail "pull-ahead: the client ended with $rc"
	equal "pull-ahead, resynced"
	gc open || tu_fail "pull-ahead: the next open: $(tail -3 "$tmp/gc.out")"
	grep -q 'resync of' <(tail -3 "$tmp/client.log") &&
		tu_fail "pull-ahead: the next open resynced: not in sync at close"
}

# pulled_close I -- a write of the log's size and 2 MiB more, closed at
# once (RPMEM_CLOSE_TIMEOUT=0) right after the persist that pulled it
# ahead: the close may come before the worker collected the sender
# (async_stop), and what that had not had answered must reach the
# record, so that the next open's resync, over the fast link, makes
# the copies equal
pulled_close() {
	fresh pull-ahead
	local seen
	seen=$(wc -l <"$tmp/client.log")
	gc RPMEM_CLOSE_TIMEOUT=0 write $((100 + $1)) $((4 * MIB)) \
		$((LAG + 2 * MIB)) ||
		tu_fail "pull-close $1: the write: $(tail -3 "$tmp/gc.out")"
	grep -q 'pulled ahead' < <(tail -n +$((seen + 1)) "$tmp/client.log") ||
		tu_fail "pull-close $1: the client never pulled ahead"
	harness_netns_shape none
	gc open || tu_fail "pull-close $1: the next open: $(tail -3 \
		"$tmp/gc.out")"
	equal "pull-close $1, the next open resynced"
}

sc_pull_close() {
	local i
	for ((i = 0; i < ${ASYNC_PULL_CLOSES:-4}; i++)); do
		pulled_close "$i"
	done
}

# wait_state STATE SECONDS -- until the live status says STATE
wait_state() {
	local end=$((SECONDS + $2))
	while ! is_state "$1"; do
		((SECONDS < end)) && kill -0 "$app_pid" 2>/dev/null || {
			tu_fail "'$1' not seen in $2 s (state '$(state)'):" \
				"$(tail -3 "$tmp/gc.out")"
			return 1
		}
		tu_nap 0.05
	done
}

# finish_app -- the client closes; its status in rc
finish_app() {
	: >"$tmp/w/stop"
	rc=0
	wait "$app_pid" || rc=$?
	app_pid=
}

# equal WHAT -- the replica's bytes past the header are the master's
equal() {
	cmp -s -i 4096 "$tmp/m.pool" "$part" || tu_fail "$1: the replica differs" \
		"from the master: $(cmp -i 4096 "$tmp/m.pool" "$part" 2>&1 |
		head -1)"
}

# link DIR -- the veth pair up or down
link() {
	ip link set "$HARNESS_NETNS_IF" "$1"
}

sc_order() {
	local seed
	for ((seed = 1; seed <= SEEDS; seed++)); do
		fresh block $((2 * LAG))
		gc_bg mtsoak "$seed" 4 "$tmp/w"
		local end=$((SECONDS + 30))
		while (($(cat "$tmp/w"/ops.* 2>/dev/null | grep -c '^e') < 40))
		do
			((SECONDS < end)) && kill -0 "$app_pid" 2>/dev/null ||
				break
			tu_nap 0.02
		done
		rpmemd=$(harness_rpmemd_pids "$psd" | head -1)
		[[ -n $rpmemd ]] || { tu_fail "seed $seed: no rpmemd"; continue; }
		kill_at "$seed" || continue
		gc order "$seed" "$tmp/w" "$part" $((2 * LAG))
		echo "$me: seed $seed ($( ((seed % 2)) && echo "link cut" ||
			echo streaming) at the kill): $(grep '^replica:' \
			"$tmp/gc.out" | tail -1)"
		((rc == 0)) || tu_fail "seed $seed: $(tail -2 "$tmp/gc.out")"
	done
}

# kill_at SEED -- the application SIGKILLed at a moment of the seed's,
# 0-300 ms on, on odd seeds once the link is cut so rpmemd keeps only
# what had crossed; then rpmemd ($rpmemd) applies that, finds its
# client gone and ends; false when it does not
kill_at() {
	local seed=$1 cut=$(($1 % 2))
	((cut)) && link down
	tu_nap "0.$(printf '%03d' $((seed * 7919 % 300)))"
	kill -KILL "$app_pid"
	wait "$app_pid" 2>/dev/null
	app_pid=
	((cut)) && link up
	tu_pid_gone "$rpmemd" 60 && return 0
	tu_fail "seed $seed: rpmemd still runs"
	kill -KILL "$rpmemd"
	return 1
}

# obj [VAR=VALUE...] CMD ARG... -- become txmt CMD on $tmp/om/o.set in
# gc's environment (in a subshell: a background one's pid is txmt's)
obj() {
	local vars=()
	while [[ $1 == *=* ]]; do vars+=("$1"); shift; done
	exec env LD_LIBRARY_PATH="$libs" RPMEM_CMD="$rpmemd_cmd" \
		RPMEM_STATE_DIR="$tmp/state" RPMEM_LOG_LEVEL=notice \
		RPMEM_LOG_FILE="$tmp/client.log" "${gc_env[@]}" "${vars[@]}" \
		"$txmt" "$1" "$tmp/om/o.set" "${@:2}"
}

sc_objorder() {
	local seed keep=(om state psd parts) d
	# one pool, made in sync over the fast link; each seed runs on a
	# copy of it (master, its generations, the record and the replica),
	# copied over the files (their inodes name the pool to the
	# generations)
	empty block $((2 * LAG))
	rm -rf -- "$tmp/om" "$tmp/snap"
	mkdir -p "$tmp/om" "$tmp/snap"
	printf 'PMEMPOOLSET\n%s %s/o.0\nREPLICA %s g.set\n' "$SIZE" \
		"$tmp/om" "$target" >"$tmp/om/o.set"
	(obj RPMEM_REPLICATION=sync create) >"$tmp/obj.out" 2>&1 ||
		{ tu_fail "objorder: txmt create: $(<"$tmp/obj.out")"; return; }
	for d in "${keep[@]}"; do cp -a "$tmp/$d" "$tmp/snap/"; done
	slow
	for ((seed = 1; seed <= OBJ_SEEDS; seed++)); do
		for d in "${keep[@]}"; do
			cp -a "$tmp/snap/$d/." "$tmp/$d/"
		done
		rm -rf -- "$tmp/w"
		mkdir -p "$tmp/w"
		(obj run "$tmp/w" 4) >"$tmp/obj.out" 2>&1 &
		app_pid=$!
		# libpmemobj's open and each thread's first run ship first;
		# about 1200 transactions fill the 4 MiB log: 2500 logged,
		# and the replica has the first ones
		fo_poll 60 logged_at_least 2500 ||
			{ tu_fail "seed $seed: 2500 commits not logged:" \
				"$(<"$tmp/obj.out")"; continue; }
		rpmemd=$(harness_rpmemd_pids "$psd" | head -1)
		[[ -n $rpmemd ]] || { tu_fail "seed $seed: no rpmemd"; continue; }
		kill_at "$seed" || continue
		echo "$me: seed $seed ($( ((seed % 2)) && echo "link cut" ||
			echo streaming) at the kill)"
		fo_replica_check "$part" "$SIZE" "$txmt" "$tmp/w" $((2 * LAG))
	done
}

# logged_at_least N -- txmt logged N commits or more, of all threads
logged_at_least() {
	(($(cat "$tmp/w"/tx.* 2>/dev/null | wc -l) >= $1))
}

for sc in ${SCENARIOS:-block pull_ahead pull_close order objorder}; do
	echo "$me: --- $sc"
	"sc_$sc"
done
tu_end "the congestion policies hold their promises over a slow link"
