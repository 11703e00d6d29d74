#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# pair.sh -- failover between the two copies of a pair with rpmem promote
# --master-set (scenarios F1, F2, F5, D2, D4), over a private sshd on
# 127.0.0.1.  Nodes A and B are two directories, each with its parts, the
# poolset-dir its rpmemd serves holding its replica set (app.set: its
# parts), its master set (the same parts and a REPLICA line to the other
# node's app.set) and its own state directory.
#
# For each way A's application stops (a clean stop, SIGKILL):
#   1. txlog (Debian's libpmemobj) commits on A's master set, then stops;
#   2. B's app.set promoted with --master-set (and --end-sessions): its
#      replica links kept; B's record of A's copy (rpmem status --json)
#      says out of sync, reason "promoted on ...", hashes to be compared,
#      over an older record that said in sync;
#   3. A unreachable (sshd stopped): txlog opens B's master set under
#      RPMEM_ON_REPLICA_LOSS=continue, degraded from the record, commits;
#      promote run again meanwhile is refused (the application holds the
#      pool, --end-sessions ends only rpmemd);
#   4. A reachable again (its app.set demoted, as A's agent would): the
#      handle compares hashes, copies what differs and reaches connected
#      (polled through rpmem status --json); the record then holds what
#      rpmemd returned: exactly the attributes promote wrote; rpmem verify
#      equal; every commit logged is there (txlog check);
#   5. back, a planned switch-over: B's application closed, B's app.set
#      demoted, A's promoted with --master-set; A's application opens,
#      comparing B whole first, and commits; verify equal; txlog check.
# Then, on copies of B's part: one table of refusals (a master set naming
# other parts, no REPLICA line, two, two local replicas; a standalone
# pool; an outdated copy under --end-sessions, exit 3), each writing
# nothing (the part's md5, no marker, no record); --force promotes the
# outdated copy.  And the pair's promote stopped after each of its writes
# (RPMEM_PROMOTE_STOP_AFTER) and rerun: finished, links kept, data
# untouched; a rerun of a finished one writes only the record (F5).
# PAIR_WRAP runs every rpmem command under a tool (by hand:
# PAIR_WRAP='valgrind -q --error-exitcode=9 --leak-check=full').
# Exit status 0 pass, 1 fail.
set -uo pipefail
me=pair.sh
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

PART=$((16 << 20))
# two parts: what librpmem is given for a replica is the pool's size
# (PMDK's: each part's header but the first's left out)
SIZE=$((2 * PART - 4096))
# parts DIR -- the part lines of a copy in DIR
parts() {
	printf '%s %s\n' "$PART" "$1/p0" "$PART" "$1/p1"
}
fo_tmp
if [[ -n ${PAIR_WRAP:-} ]]; then
	printf '#!/bin/sh\nexec %s %q "$@"\n' "$PAIR_WRAP" "$rpmem" \
		>"$tmp/rpmem"
	chmod +x "$tmp/rpmem"
	rpmem=$tmp/rpmem
fi
# shellcheck disable=SC2016 # expanded at exit
fo_exit_trap 'harness_stop_sshd "$tmp"'
harness_start_sshd "$tmp" || exit 1
target=$HARNESS_TARGET
log=$tmp/committed
host=$(hostname)
reason="promoted on $host: compared whole at the next session"
declare -A peer=([A]=B [B]=A)
for n in A B; do
	mkdir -p "$tmp/$n/parts" "$tmp/$n/psd" "$tmp/$n/state"
	printf 'PMEMPOOLSET\n%s\n' "$(parts "$tmp/$n/parts")" \
		>"$tmp/$n/psd/app.set"
	printf 'PMEMPOOLSET\n%s\nREPLICA %s app.set\n' \
		"$(parts "$tmp/$n/parts")" "$target" >"$tmp/$n/master.set"
done

# env_of NODE -- NODE's environment in E: its state directory, rpmemd
# serving the other node's poolset-dir, librpmem's log, quick reconnects
env_of() {
	local o=$tmp/${peer[$1]}
	E=(LD_LIBRARY_PATH="$libs" RPMEM_STATE_DIR="$tmp/$1/state"
		RPMEM_CMD="$(harness_rpmemd_cmd "$o/psd" "$o/rpmemd.log")"
		RPMEM_LOG_LEVEL=notice RPMEM_LOG_FILE="$tmp/$1/client.log"
		RPMEM_RECONNECT_MIN_MS=100 RPMEM_RECONNECT_MAX_MS=500)
}

# on NODE CMD... -- CMD run on NODE
on() {
	env_of "$1"
	shift
	env "${E[@]}" "$@"
}


# pr NODE ARG... -- rpmem promote ARG... of NODE's app.set
pr() {
	local n=$1
	shift
	on "$n" "$rpmem" promote "$@" "$tmp/$n/psd/app.set"
}

# promote NODE ARG... -- the same, its status in rc, output in out, err
promote() {
	tu_try pr "$@"
}

# start_app NODE [VAR=VALUE...] -- txlog run on NODE's master set in the
# background until $tmp/stop exists (pid in app_pid: env execs it)
start_app() {
	local n=$1
	shift
	env_of "$n"
	rm -f -- "$tmp/stop" "$tmp/hold" "$tmp/hold.held"
	(cd "$tmp" && exec env "${E[@]}" TXLOG_STOP="$tmp/stop" \
		TXLOG_HOLD="$tmp/hold" TXLOG_PAUSE_US=500 "$@" "$txlog" run \
		"$tmp/$n/master.set" \
		"$log" 0 >"$tmp/app.out" 2>&1) &
	app_pid=$!
}

# stop_app clean|kill -- end the application as told
stop_app() {
	local rc=0
	if [[ $1 == kill ]]; then
		kill -KILL "$app_pid"
		wait "$app_pid" 2>/dev/null
	else
		: >"$tmp/stop"
		wait "$app_pid" || rc=$?
		((rc == 0)) || tu_fail "the application failed: $(<"$tmp/app.out")"
	fi
	app_pid=
}

# await WHAT CMD... -- poll CMD until it succeeds, for 60 s at the most
# and while the application runs; else WHAT failed
await() {
	local what=$1 end=$((SECONDS + 60))
	shift
	while ! "$@"; do
		if ((SECONDS >= end)) || ! kill -0 "$app_pid" 2>/dev/null; then
			"$@" && return 0
			tu_fail "$what: $(<"$tmp/app.out")"
			tail -n 5 -- "$tmp"/[AB]/client.log | sed 's/^/    /'
			fo_stacks "$app_pid"
			return 1
		fi
		tu_nap 0.02
	done
}

# hold -- the application keeps its pool open and commits no more (so
# that no byte libpmemobj writes and never persists lands after the
# resync compared it)
hold() {
	: >"$tmp/hold"
	await "the application did not hold" test -e "$tmp/hold.held"
}

# commits -- how many commits are logged
commits() {
	[[ -f $log ]] && wc -l <"$log" || echo 0
}

# at_least N -- N commits are logged
at_least() {
	(($(commits) >= $1))
}

# wait_commits N -- until N more commits are logged
wait_commits() {
	local want=$(($(commits) + $1))
	await "commit $want not logged" at_least "$want"
}

# in_state NODE STATE -- rpmem status --json on NODE says its handle is
# in STATE
in_state() {
	[[ $(on "$1" "$rpmem" status --json 2>/dev/null |
		grep -o '"state": "[a-z-]*"' | cut -d'"' -f4) == "$2" ]]
}

# wait_state NODE STATE -- until it is
wait_state() {
	await "$1's handle did not reach $2" in_state "$1" "$2"
}

# record NODE -- NODE's record of the other copy
record() {
	cat -- "$tmp/$1/state/"*.replica
}

# links DIR1 DIR2 -- the parts in both have the same replica links
links() {
	local p
	for p in p0 p1; do
		cmp -s -i 88 -n 32 "$1/$p" "$2/$p" || return 1
	done
}

# promoted NODE -- promote NODE's app.set as one copy of the pair, and
# check what it says and records
promoted() {
	local n=$1 o=${peer[$1]} p re
	mkdir -p "$tmp/hdr"
	for p in p0 p1; do
		head -c 4096 "$tmp/$n/parts/$p" >"$tmp/hdr/$p"
	done
	promote "$n" --end-sessions --json --master-set "$tmp/$n/master.set"
	((rc == 0)) || { tu_fail "promote of $n: $rc: $(<"$tmp/err")"; return 1; }
	re='"outcome": "promoted".*"record": \{"path": "'$tmp/$n/state/
	re+='[^"]+\.replica", "master_set": "'$tmp/$n/master.set'", "target": "'
	re+=$target'", "pool_set": "app.set", "pool_size": '$SIZE'\}'
	grep -Eq "$re" "$tmp/out" || tu_fail "promote --json of $n: $(<"$tmp/out")"
	links "$tmp/hdr" "$tmp/$n/parts" ||
		tu_fail "promote of $n changed its replica links"
	tu_try on "$n" "$rpmem" status --json
	re='"records": \[\{"pool_set": "app.set", "target": "'$target
	re+='", "pool_size": '$SIZE', "in_sync": false, "open": false, '
	re+='"since": [0-9]+, "reason": "'$reason'", "ranges_known": false, '
	re+='"ranges": null, "out_of_sync": null\}\]'
	grep -Eq "$re" "$tmp/out" ||
		tu_fail "$n's record after promote: $(<"$tmp/out")"
	attr=$(record "$n" | grep '^attr ')
	echo "--- ok: $n promoted as one copy of the pair; $o recorded"
}

# failover STOP -- A's application stops as STOP says, B takes over
failover() {
	start_app A
	wait_commits 200 || return
	stop_app "$1"
	promoted B || return
	harness_stop_sshd "$tmp"
	start_app B RPMEM_ON_REPLICA_LOSS=continue
	wait_state B degraded || { harness_restart_sshd "$tmp"; return; }
	grep -q "without its replica" "$tmp/B/client.log" ||
		tu_fail "B's open did not go on without A"
	# F5: a rerun while the application holds the pool leaves it alone
	tu_refused "$1: promote again under B's application" 3 \
		"cannot end txlog pid [0-9]+.*: not an rpmemd" \
		pr B --end-sessions --master-set "$tmp/B/master.set"
	wait_commits 200
	hold
	on A "$rpmem" demote "$tmp/A/psd/app.set" >/dev/null
	harness_restart_sshd "$tmp" || return
	wait_state B connected || return
	stop_app clean
	local bytes
	bytes=$(grep -o 'resync of [0-9]* bytes' "$tmp/B/client.log" |
		tail -1 | grep -o '[0-9]*')
	echo "--- $1: B resynced ${bytes:-?} bytes of a $SIZE-byte pool"
	((${bytes:-SIZE} < SIZE / 4)) || tu_fail "the resync copied ${bytes:-?}"
	record B | grep -q '^in_sync 1' || tu_fail "B's record: $(record B)"
	[[ $(record B | grep '^attr ') == "$attr" ]] ||
		tu_fail "rpmemd returned $(record B | grep '^attr '), promote" \
			"recorded $attr"
	tu_must "$1: rpmem verify on B" on B "$rpmem" verify "$tmp/B/master.set"
	tu_must "$1: every commit on B" on B "$txlog" check "$tmp/B/master.set" \
		"$log"
}

# back -- the planned switch-over from B to A
back() {
	on B "$rpmem" demote "$tmp/B/psd/app.set" >/dev/null
	promoted A || return
	: >"$tmp/A/client.log"
	tu_must "A's application opens, comparing B first" \
		on A "$txlog" open "$tmp/A/master.set" || return
	grep -q 'resyncing -> connected' "$tmp/A/client.log" ||
		tu_fail "A opened without comparing B: $(<"$tmp/A/client.log")"
	record A | grep -q '^in_sync 1' || tu_fail "A's record: $(record A)"
	[[ $(record A | grep '^attr ') == "$attr" ]] ||
		tu_fail "rpmemd returned $(record A | grep '^attr '), promote" \
			"recorded $attr"
	tu_must "rpmem verify on A" on A "$rpmem" verify "$tmp/A/master.set"
	tu_must "A commits" on A "$txlog" run "$tmp/A/master.set" "$log" 100
	tu_must "every commit on A" on A "$txlog" check "$tmp/A/master.set" "$log"
}

tu_must "A creates the pool with B's copy" \
	on A "$txlog" create "$tmp/A/master.set" || exit 1
for stop in clean kill; do
	echo "$me: --- A's application stopped: $stop"
	failover "$stop" && back
done

# the refusals, on copies of B's part in C/
c=$tmp/C
mkdir -p "$c/parts" "$c/state" "$c/psd"
printf 'PMEMPOOLSET\n%s\n' "$(parts "$c/parts")" >"$c/psd/app.set"
peer[C]=A
part=$(parts "$c/parts" | tr '\n' ';')
part=${part%;}
rep="REPLICA $target app.set"

# fresh -- C's copy of B's parts, no marker, no record
fresh() {
	cp -- "$tmp/B/parts/p0" "$tmp/B/parts/p1" "$c/parts/"
	rm -rf -- "$c/psd/app.set."* "$c/state"
	mkdir -p "$c/state"
}

# setup_standalone -- C made a standalone pool: promoted without
# --master-set (its marker then removed)
setup_standalone() {
	on C "$rpmem" promote "$c/psd/app.set" >/dev/null &&
		on C "$rpmem" demote "$c/psd/app.set" >/dev/null
}

# setup_outdated -- C marked outdated by its master
setup_outdated() {
	on C "$rpmem" outdate --master nodeA "$c/psd/app.set" >/dev/null
}

# setup_nostate -- C's state directory a file
setup_nostate() {
	rmdir -- "$c/state" && : >"$c/state"
}

# name | status | stderr ERE | master set lines (;) | setup
refusals=(
	"another part file|1|:3: part 1 is $PART bytes of $c/parts/x1, the replica set .* names $PART bytes of $c/parts/p1|$PART $c/parts/p0;$PART $c/parts/x1;$rep|"
	"another size|1|:2: part 0 is 8388608 bytes of $c/parts/p0|8M $c/parts/p0;$PART $c/parts/p1;$rep|"
	"one part fewer|1|1 part\\(s\\), the replica set .* has 2|$PART $c/parts/p0;$rep|"
	"no REPLICA line|1|0 REPLICA lines naming a host|$part|"
	"two REPLICA lines|1|2 REPLICA lines naming a host|$part;$rep;REPLICA $target other.set|"
	"two local replicas|1|2 local replicas|$part;REPLICA;$PART $c/parts/y0;$rep|"
	"no state directory|1|:4: this host's record of app.set on $target cannot be kept in the state directory $c/state: Not a directory|$part;$rep|setup_nostate"
	"a standalone pool|1|part 0 names itself .*make the other copy its replica with 'rpmem sync $c/master.set'|$part;$rep|setup_standalone"
	"an outdated copy under --end-sessions|3|outdated since .*promote it with --force|$part;$rep|setup_outdated"
)
for row in "${refusals[@]}"; do
	IFS='|' read -r what want re lines setup <<<"$row"
	fresh
	{ echo PMEMPOOLSET; tr ';' '\n' <<<"$lines"; } >"$c/master.set"
	[[ -z $setup ]] || $setup || { tu_fail "$what: $setup failed"; continue; }
	sum=$(cat "$c/parts/"* | md5sum)
	tu_refused "refused: $what" "$want" "$re" pr C --end-sessions \
		--master-set "$c/master.set"
	[[ $(cat "$c/parts/"* | md5sum) == "$sum" &&
		! -e $c/psd/app.set.promoted &&
		-z $(ls "$c/state/"*.replica 2>/dev/null) ]] ||
		tu_fail "$what: something was written"
done
if tu_must "--force promotes the outdated copy" pr C --force --master-set \
		"$c/master.set"; then
	[[ -e $c/psd/app.set.promoted && ! -e $c/psd/app.set.outdated ]] ||
		tu_fail "--force left the markers: $(ls "$c/psd")"
	record C | grep -q '^in_sync 0' || tu_fail "--force: $(record C)"
fi

# F2, F5: stopped after each write (the copy's generations, the marker,
# the headers of part 1 and 0, the marker naming the other copy, the
# record), then rerun: after the generations alone it is a promote of
# its own (they are not rolled again)
{ echo PMEMPOOLSET; tr ';' '\n' <<<"$part;$rep"; } >"$c/master.set"
for k in 1 2 3 4 5 6; do
	fresh
	(RPMEM_PROMOTE_STOP_AFTER=$k pr C --master-set "$c/master.set" \
		>/dev/null 2>&1
		echo $? >"$tmp/rc") 2>/dev/null
	[[ $(<"$tmp/rc") == 137 ]] || tu_fail "stop after write $k: $(<"$tmp/rc")"
	# an older record saying in sync is written over
	((k < 6)) || sed -i 's/^in_sync 0/in_sync 1/' "$c/state/"*.replica
	promote C --json --master-set "$c/master.set"
	want=completed
	((k > 1)) || want=promoted
	((k < 5)) || want=already-promoted
	grep -q "\"outcome\": \"$want\"" "$tmp/out" ||
		tu_fail "rerun after write $k: $rc: $(cat "$tmp/out" "$tmp/err")"
	((k < 5)) || grep -q '"headers_written": 0, "writes": 1,' "$tmp/out" ||
		tu_fail "rerun after write $k wrote more than the record:" \
			"$(<"$tmp/out")"
	grep -q '^pair [0-9a-f-]*$' "$c/psd/app.set.promoted" ||
		tu_fail "after write $k: the marker names no other copy"
	record C | grep -q '^in_sync 0' || tu_fail "after write $k: $(record C)"
	if ! cmp -s -i 4096 "$tmp/B/parts/p0" "$c/parts/p0" ||
			! cmp -s -i 4096 "$tmp/B/parts/p1" "$c/parts/p1" ||
			! links "$tmp/B/parts" "$c/parts"; then
		tu_fail "after write $k: the data or the links changed"
	fi
	echo "--- ok: stopped after write $k of 6, rerun: $want"
done

tu_end "a pair failed over and back, clean and killed; refusals wrote nothing"
