#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# degraded.sh -- a soak of degraded mode (scenarios D1, D2, D3 over the
# long run of L1): for SOAK_SECONDS (60) two applications write through
# librpmem under RPMEM_ON_REPLICA_LOSS=continue while random faults take
# their backup away and give it back, over and over:
#
#   txlog     Debian's libpmemobj committing transactions (a pool set with
#             a REPLICA), each commit logged once it returned
#   hotrange  a librpmem client (tests/failover/hotrange soak) persisting
#             random ranges all over its pool and one hot range after
#             each, so that resyncs race newer persists of the same bytes
#
# The faults, one table, drawn from a seeded RNG (the seed is printed;
# SOAK_SEED=N replays the same sequence of faults and pauses):
#
#   kill     SIGKILL to one or all rpmemd of this run (D1)
#   stop     SIGSTOP to them for longer than RPMEM_TIMEOUT, then SIGCONT
#   cut      the link to the backup down for 1-4 s, then up again (root
#            only: the backup lives in a network namespace made here)
#   sshd     the backup's sshd stopped for 2-4 s, then started again
#   reboot   the backup "rebooted": sshd stopped and every rpmemd killed,
#            back 1-3 s later (D1)
#
# SOAK_FAULTS=kill,cut,... narrows the table.  A trace of the faults and
# the handles' states is shown when the soak fails.
#
# Between two faults either a pause of up to a second or, half the time,
# until both handles say connected again (their status files), so that
# faults land both during a resync and in steady state.  At the end all
# is healed, both handles reach connected (D2: resynced while they ran),
# the applications stop, and:
#
#   both exited 0 and never degraded after the last connected
#   txlog check of the master passes, and of a promoted copy of the
#   replica: every logged commit is there, none half applied (D1, D2)
#   rpmem verify finds no more differing ranges than a fault-free run of
#   as many commits does (measured here, after the soak: libpmemobj
#   writes chunk footers and run state it never hands to rpmem_persist)
#   hotrange read its replica back equal to its memory byte for byte (D3)
#   no rpmemd of this run's poolset dir is left, no status file either
#
# It prints each fault's count, the degraded episodes, the resyncs and the
# bytes they copied.  Not root: no namespace, so no link cuts (said so).
# Exit 77 where no sshd can be run.
set -uo pipefail
me=degraded-soak.sh
# shellcheck source-path=SCRIPTDIR source=../failover/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../failover/common.sh"
hotrange=$top_builddir/tests/failover/hotrange
[[ -x $hotrange ]] || { echo "$me: $hotrange not built" >&2; exit 1; }
harness_prog "${SSHD:-}" sshd >/dev/null 2>&1 ||
	{ echo "$me: no sshd; skipped"; exit 77; }

secs=${SOAK_SECONDS:-60}
seed=${SOAK_SEED:-$(((RANDOM << 15 | RANDOM) % 1000000))}
TIMEOUT=3			# RPMEM_TIMEOUT: a stopped rpmemd noticed
SIZE=$((64 << 20))		# txlog's pool
HOT_SIZE=$((16 << 20))		# hotrange's
t_start=$SECONDS

fo_tmp
stopped=
# cleanup -- at exit: the apps, rpmemd resumed and ended, the namespace
# shellcheck disable=SC2317 # the exit trap
cleanup() {
	local p
	for p in $tx_pid $hot_pid; do
		kill -KILL "$p" 2>/dev/null
	done
	[[ -n ${HARNESS_NETNS_IF:-} ]] &&
		ip link set "$HARNESS_NETNS_IF" up 2>/dev/null
	for p in $(rpmemd_pids); do
		kill -CONT "$p" 2>/dev/null
		kill -KILL "$p" 2>/dev/null
	done
	harness_stop_sshd "$tmp/b"
	harness_netns_stop
}
tx_pid='' hot_pid=''
fo_exit_trap cleanup
trap 'exit 1' HUP INT TERM

netns=no
if [[ $(id -u) == 0 ]]; then
	rc=0
	harness_netns_start dsk || rc=$?
	if ((rc == 0)); then
		netns=yes
		export HARNESS_ADDR=$HARNESS_NETNS_ADDR
	elif ((rc != 77)); then
		echo "$me: cannot set up the network namespace" >&2
		exit 1
	fi
fi
[[ $netns == yes ]] || echo "$me: no network namespace (not root):" \
	"the backup on loopback, no link cuts"
harness_start_sshd "$tmp/b" || exit 1
target=$HARNESS_TARGET
psd=$tmp/psd
mkdir -p "$psd" "$tmp/parts" "$tmp/st-tx" "$tmp/st-hot" "$tmp/hot"
rpmemd_cmd=$(harness_rpmemd_cmd "$psd" "$tmp/rpmemd.log")

faults=(kill stop sshd reboot)
[[ $netns == yes ]] && faults+=(cut)
if [[ -n ${SOAK_FAULTS:-} ]]; then
	# shellcheck disable=SC2206 # a list of names
	faults=(${SOAK_FAULTS//,/ })
fi
declare -A nfault=()
for f in "${faults[@]}"; do nfault[$f]=0; done

# rpmemd_pids -- the rpmemd processes serving this run's poolset dir
rpmemd_pids() {
	harness_rpmemd_pids "$psd"
}

# some_rpmemd -- print the running rpmemd pids, waiting up to 5 s for one
some_rpmemd() {
	local try pids
	for ((try = 0; try < 100; try++)); do
		pids=$(rpmemd_pids)
		[[ -n $pids ]] && { echo "$pids"; return 0; }
		tu_nap 0.05
	done
	return 1
}

# pick PIDS... -- one of them or, a third of the time, all
pick() {
	local a=("$@")
	((RANDOM % 3 == 0)) && { echo "${a[@]}"; return; }
	echo "${a[RANDOM % ${#a[@]}]}"
}

# state APP -- the live state of app tx or hot ("none": no status file)
state() {
	local f s=none
	for f in "$tmp/st-$1/run/"*.status; do
		[[ -e $f ]] && s=$(awk '$1 == "state" { print $2 }' "$f")
	done
	echo "${s:-none}"
}

# alive -- both applications still run
alive() {
	kill -0 "$tx_pid" 2>/dev/null && kill -0 "$hot_pid" 2>/dev/null
}

# wait_connected SECONDS -- until both handles say connected
wait_connected() {
	local end=$((SECONDS + $1))
	while ((SECONDS < end)); do
		[[ $(state tx) == connected && $(state hot) == connected ]] &&
			return 0
		alive || return 1
		tu_nap 0.05
	done
	return 1
}

# wait_away SECONDS -- until a handle is no longer connected
wait_away() {
	local end=$((SECONDS + $1))
	while ((SECONDS < end)); do
		[[ $(state tx) != connected || $(state hot) != connected ]] &&
			return 0
		alive || return 1
		tu_nap 0.05
	done
	return 1
}

# nap MS_MIN MS_MAX -- a random pause between the two
nap() {
	local ms=$(($1 + RANDOM % ($2 - $1 + 1)))
	tu_nap "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
}

# trace WHAT -- a line of the fault trace (shown at the end)
trace() {
	printf '%4d s  %-40s tx %s, hot %s\n' $((SECONDS - t_loop)) "$*" \
		"$(state tx)" "$(state hot)" >>"$tmp/faults.trace"
}

# fault_kill -- SIGKILL one or all rpmemd
fault_kill() {
	local pids
	pids=$(some_rpmemd) || return 0
	# shellcheck disable=SC2086 # a list of pids
	pids=$(pick $pids)
	# shellcheck disable=SC2086 # a list of pids
	kill -KILL $pids 2>/dev/null
	trace "kill $pids"
}

# serves PID -- the application whose replica rpmemd PID holds open (tx,
# hot, or nothing while it opens none)
serves() {
	local l
	for l in "/proc/$1/fd/"*; do
		case $(readlink "$l" 2>/dev/null) in
		"$tmp/parts/soak-r.0") echo tx; return ;;
		"$tmp/parts/hot.0") echo hot; return ;;
		esac
	done
}

# fault_stop -- SIGSTOP them past RPMEM_TIMEOUT, then SIGCONT; a handle
# connected through one of them must notice within the timeout (R3)
fault_stop() {
	local pids p who t0=$SECONDS watch=() end
	pids=$(some_rpmemd) || return 0
	# shellcheck disable=SC2086 # a list of pids
	stopped=$(pick $pids)
	# shellcheck disable=SC2086 # a list of pids
	kill -STOP $stopped 2>/dev/null
	for p in $stopped; do
		who=$(serves "$p")
		[[ -n $who && $(state "$who") == connected ]] && watch+=("$who")
	done
	trace "stop $stopped (serving ${watch[*]:-none connected})"
	end=$((SECONDS + TIMEOUT + 5))
	for who in "${watch[@]}"; do
		while [[ $(state "$who") == connected ]] && alive &&
			((SECONDS < end)); do
			tu_nap 0.05
		done
		[[ $(state "$who") != connected ]] || ! alive ||
			tu_fail "$who stayed connected $((SECONDS - t0)) s with" \
				"its rpmemd stopped"
	done
	trace "stopped $((SECONDS - t0)) s"
	while ((SECONDS - t0 <= TIMEOUT)); do tu_nap 0.1; done
	nap 0 1000
	# shellcheck disable=SC2086 # a list of pids
	kill -CONT $stopped 2>/dev/null
	trace "cont $stopped"
	stopped=
}

# fault_cut -- the link down 1-4 s
fault_cut() {
	ip link set "$HARNESS_NETNS_IF" down
	trace "link down"
	nap 1000 4000
	ip link set "$HARNESS_NETNS_IF" up
	trace "link up"
}

# fault_sshd -- sshd stopped 2-4 s
fault_sshd() {
	harness_stop_sshd "$tmp/b"
	trace "sshd stopped"
	nap 2000 4000
	harness_restart_sshd "$tmp/b" || tu_fail "sshd did not start again"
	trace "sshd started"
}

# fault_reboot -- sshd stopped, every rpmemd killed, back 1-3 s later
fault_reboot() {
	local pids
	harness_stop_sshd "$tmp/b"
	pids=$(rpmemd_pids)
	# shellcheck disable=SC2086 # a list of pids
	[[ -z $pids ]] || kill -KILL $pids 2>/dev/null
	trace "reboot: sshd stopped, kill" "$pids"
	wait_away 5
	nap 1000 3000
	harness_restart_sshd "$tmp/b" || tu_fail "sshd did not start again"
	trace "reboot: sshd started"
}

# the applications' environment (each its own state dir and log)
app_env=(LD_LIBRARY_PATH="$libs" RPMEM_CMD="$rpmemd_cmd"
	RPMEM_ON_REPLICA_LOSS=continue RPMEM_TIMEOUT="$TIMEOUT"
	RPMEM_RECONNECT_MIN_MS=100 RPMEM_RECONNECT_MAX_MS=1000
	RPMEM_RESYNC_RATE=32M RPMEM_LOG_LEVEL=notice)

# app WHO CMD... -- run a command as application WHO (tx or hot)
app() {
	local who=$1
	shift
	env "${app_env[@]}" RPMEM_STATE_DIR="$tmp/st-$who" \
		RPMEM_LOG_FILE="$tmp/$who.log" "$@"
}

# diffs SET -- the ranges rpmem verify finds differing ("" when equal;
# the lines of what it skipped end with what lies there)
diffs() {
	app tx "$rpmem" verify "$1" 2>&1 |
		grep -E '^  offset 0x[0-9a-f]+ length 0x[0-9a-f]+$'
}

# poolset NAME -- a pool set NAME.set of txlog's size and its replica
poolset() {
	printf 'PMEMPOOLSET\n%s %s/parts/%s-r.0\n' "$SIZE" "$tmp" "$1" \
		>"$psd/$1.set"
	printf 'PMEMPOOLSET\n%s %s/parts/%s-m.0\nREPLICA %s %s.set\n' \
		"$SIZE" "$tmp" "$1" "$target" "$1" >"$tmp/$1.set"
	app tx "$txlog" create "$tmp/$1.set" >"$tmp/create.out" 2>&1 ||
		{ tu_fail "txlog create $1: $(<"$tmp/create.out")"; exit 1; }
}


# last_move WHO -- the last state change in the application's log
last_move() {
	grep -o '[a-z-]* -> [a-z-]*' "$tmp/$1.log" | tail -1
}

echo "$me: seed $seed (SOAK_SEED=$seed replays it), $secs s," \
	"faults: ${faults[*]}"
RANDOM=$seed

poolset soak
printf 'PMEMPOOLSET\nOPTION NOHDRS\n%s %s/parts/hot.0\n' "$HOT_SIZE" "$tmp" \
	>"$psd/hot.set"
app tx env TXLOG_STOP="$tmp/tx.stop" TXLOG_PAUSE_US=3000 "$txlog" run \
	"$tmp/soak.set" "$tmp/tx.commits" 0 >"$tmp/tx.out" 2>&1 &
tx_pid=$!
app hot "$hotrange" "$target" hot.set "$HOT_SIZE" "$tmp/hot" soak \
	>"$tmp/hot.out" 2>&1 &
hot_pid=$!
end=$((SECONDS + 60))
while [[ ! -e $tmp/hot/ready ]] && ((SECONDS < end)) && alive; do
	tu_nap 0.05
done
wait_connected 60 || { tu_fail "the applications did not start:" \
	"$(cat "$tmp/tx.out" "$tmp/hot.out")"; exit 1; }

# the soak: one fault, then a pause or a wait for both to be connected
# (no fault begun in the last 5 s: one may take 10 s)
end=$((SECONDS + secs - 5)) t_loop=$SECONDS
while ((SECONDS < end)) && alive; do
	f=${faults[RANDOM % ${#faults[@]}]}
	"fault_$f"
	nfault[$f]=$((nfault[$f] + 1))
	if ((RANDOM % 2)); then
		wait_connected 30 || { alive && tu_fail "not connected 30 s" \
			"after $f: tx $(state tx), hot $(state hot)"; }
	else
		nap 0 1000
	fi
done

# heal everything, wait for both to be in sync, stop them
[[ $netns == yes ]] && ip link set "$HARNESS_NETNS_IF" up
harness_sshd_pid "$tmp/b" >/dev/null || harness_restart_sshd "$tmp/b"
wait_connected 60 || tu_fail "not connected 60 s after the last fault:" \
	"tx $(state tx), hot $(state hot)"
: >"$tmp/tx.stop"
: >"$tmp/hot/stop"
rc=0
wait "$tx_pid" || rc=$?
((rc == 0)) || tu_fail "txlog exited $rc: $(tail -5 "$tmp/tx.out")"
rc=0
wait "$hot_pid" || rc=$?
((rc == 0)) || tu_fail "hotrange exited $rc: $(tail -5 "$tmp/hot.out")"
tx_pid='' hot_pid=''
t_soak=$((SECONDS - t_start))
for who in tx hot; do
	[[ $(last_move $who) == *"-> connected" ]] ||
		tu_fail "$who's last state change: '$(last_move $who)'"
	for f in "$tmp/st-$who/run/"*.status; do
		[[ -e $f ]] && tu_fail "a status file outlived $who: $f"
	done
done
grep -q '^in_sync 1' "$tmp/st-tx/"*.replica ||
	tu_fail "txlog's record of its replica does not say in sync"
cat "$tmp/hot.out"

app tx "$txlog" check "$tmp/soak.set" "$tmp/tx.commits" >"$tmp/check.out" \
	2>&1 || tu_fail "master lacks a commit: $(<"$tmp/check.out")"
fo_replica_check "$tmp/parts/soak-r.0" "$SIZE" "$txlog" "$tmp/tx.commits"
n_soak=$(diffs "$tmp/soak.set" | wc -l)
commits=$(wc -l <"$tmp/tx.commits")
rm -f -- "$tmp/parts/soak-"* "$tmp/parts/hot.0"

# the baseline: as many commits without a fault, as fast as they go
t0=$SECONDS
poolset base
app tx "$txlog" run "$tmp/base.set" "$tmp/base.commits" "$commits" \
	>"$tmp/base.out" 2>&1 || tu_fail "fault-free run: $(<"$tmp/base.out")"
n_base=$(diffs "$tmp/base.set" | wc -l)
echo "$me: rpmem verify: $n_soak differing range(s) after the soak," \
	"$n_base after a fault-free run of as many commits ($((SECONDS - t0)) s)"
((n_soak <= n_base)) || tu_fail "rpmem verify: $n_soak differing range(s)," \
	"a fault-free run has $n_base"

# no rpmemd of this run left (the last ones end with their sessions)
for ((try = 0; try < 100; try++)); do
	[[ -z $(rpmemd_pids) ]] && break
	tu_nap 0.1
done
[[ -z $(rpmemd_pids) ]] || tu_fail "rpmemd left running: $(rpmemd_pids)"

# the figures
line="faults:"
for f in "${faults[@]}"; do line+=" $f ${nfault[$f]}"; done
echo "$me: $line"
# an episode begins where a handle leaves connected or resyncing for
# degraded (a failed reconnect is "degraded -> degraded")
deg_tx=$(grep -Ec '(connected|resyncing) -> degraded' "$tmp/tx.log")
deg_hot=$(grep -Ec '(connected|resyncing) -> degraded' "$tmp/hot.log")
deg=$((deg_tx + deg_hot))
res=$(cat "$tmp/tx.log" "$tmp/hot.log" | grep -c 'resyncing -> connected')
bytes=$(cat "$tmp/tx.log" "$tmp/hot.log" |
	grep -o 'resync of [0-9]* bytes' | awk '{ s += $3 } END { print s + 0 }')
echo "$me: $commits commits; $deg degraded episode(s) (txlog $deg_tx," \
	"hotrange $deg_hot), $res resync(s) done, $bytes bytes resynced;" \
	"soak $t_soak s, all $((SECONDS - t_start)) s"
((deg > 0)) || tu_fail "no degraded episode in $secs s of faults"
((TU_FAILED == 0)) || { echo "$me: the faults:"; cat "$tmp/faults.trace"
	echo "$me: tx log:"; tail -20 "$tmp/tx.log"
	echo "$me: hot log:"; tail -20 "$tmp/hot.log"; }
tu_end "seed $seed: both applications outlived every fault; replicas in sync"
