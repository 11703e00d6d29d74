#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# gensoak.sh -- faults placed at random in the windows a reconnect and a
# promote open (scenarios D7-D11 over many seeds): genclient soaks its
# replica with random persists, each logged once acknowledged, under an
# on-replica-loss policy drawn for the seed, while random faults land
# during its opens, reconnects, resyncs and a promote of the replica:
#
#   kill     rpmemd SIGKILLed
#   stop     rpmemd SIGSTOPped past RPMEM_TIMEOUT, then SIGCONT
#   cut      sshd stopped and rpmemd killed for up to 2 s (no way back)
#   crash    the client SIGKILLed, its memory left as it was, restarted
#   resync   rpmemd killed once the client says resyncing
#   promote  rpmem promote --end-sessions of the replica, then demote
#
# What must hold, for each seed:
#   - promote: it refuses the copy, or (under fence and fail) the
#     promoted copy holds every persist acknowledged before it began
#     (the last one to write each word; under continue the master goes
#     on unfenced by design, and the split brain is caught below);
#   - the end, every fault healed and the client stopped: an open under
#     fail either finds the replica equal to the master byte for byte,
#     or refuses it naming both sides' generations and the last common
#     one, and only after a promote; then `rpmem discard` of the replica
#     and an open make it equal.
# GENSOAK_SEEDS (2; the sanitizer leg: 10) seeds from GENSOAK_SEED (drawn
# and printed; it replays the run).
set -uo pipefail
me=gensoak.sh
# shellcheck source-path=SCRIPTDIR source=gc.sh
. "$(dirname "${BASH_SOURCE[0]}")/gc.sh"

SIZE=$((16 << 20))
nseeds=${GENSOAK_SEEDS:-2}
seed0=${GENSOAK_SEED:-$(((RANDOM << 15 | RANDOM) % 1000000))}
# sanitized programs run slower: a stopped rpmemd is noticed after
TIMEOUT=${GENSOAK_TIMEOUT:-2}
gc_env=(RPMEM_TIMEOUT="$TIMEOUT" RPMEM_FREEZE_TIMEOUT=$((2 * TIMEOUT)))
POLICIES=(continue fence-ok fence-refuse fail)
EVENTS=(kill stop cut crash resync promote)
gc_target
handler=$tmp/fence-peer
cat >"$handler" <<-EOF
	#!/bin/sh
	exec env RPMEM_SSH="$RPMEM_SSH" RPMEM_CMD="$rpmemd_cmd" \
		LD_LIBRARY_PATH="$libs" "$rpmem" fence-peer
EOF
chmod +x "$handler"
echo "$me: $nseeds seed(s) from $seed0 (GENSOAK_SEED=$seed0 replays them)"

# policy_env -- the client's environment for $policy
policy_env() {
	case $policy in
	continue) echo RPMEM_ON_REPLICA_LOSS=continue ;;
	fence-ok) echo RPMEM_ON_REPLICA_LOSS=fence \
		RPMEM_FENCE_PEER_CMD="$handler" ;;
	fence-refuse) echo RPMEM_ON_REPLICA_LOSS=fence \
		RPMEM_FENCE_PEER_CMD=false ;;
	*) echo RPMEM_ON_REPLICA_LOSS=fail ;;
	esac
}

# start -- the soaking client in the background (app_pid)
start() {
	# shellcheck disable=SC2046 # the policy's words
	gc_bg $(policy_env) soak "$seed" "$tmp/w"
}

# running -- is the client still there?
running() {
	[[ -n $app_pid ]] && kill -0 "$app_pid" 2>/dev/null
}

# reap -- the client ended: collect it (a persist refused under fail, an
# open refused, a crash)
reap() {
	if [[ -n $app_pid ]] && ! running; then
		wait "$app_pid" 2>/dev/null
		app_pid=
	fi
}

# rpmemds -- this run's rpmemd pids
rpmemds() {
	harness_rpmemd_pids "$psd"
}

# acks -- how many persists were acknowledged so far
acks() {
	[[ -f $tmp/w/acks ]] && wc -l <"$tmp/w/acks" || echo 0
}

# nap -- a random pause of 0.2 to 1.5 s: where the next fault lands
nap() {
	tu_nap "$(printf '0.%d' $((2 + RANDOM % 13)))"
	((RANDOM % 3)) || tu_nap 1
}

# ev_kill, ev_stop... -- the faults
ev_kill() {
	local p
	p=$(rpmemds)
	# shellcheck disable=SC2086 # a list of pids
	[[ -z $p ]] || kill -KILL $p
}
ev_stop() {
	local p
	p=$(rpmemds)
	[[ -n $p ]] || return 0
	# shellcheck disable=SC2086
	kill -STOP $p
	tu_nap $((TIMEOUT + 1)).$((RANDOM % 10))
	# shellcheck disable=SC2086
	kill -CONT $p 2>/dev/null
}
ev_cut() {
	harness_stop_sshd "$tmp/b"
	ev_kill
	tu_nap "$(printf '0.%d' $((RANDOM % 10)))"
	((RANDOM % 2)) || tu_nap 1
	harness_restart_sshd "$tmp/b"
}
ev_crash() {
	running || return 0
	kill -KILL "$app_pid"
	wait "$app_pid" 2>/dev/null
	app_pid=
	rm -f -- "$tmp/state/run/"*.status	# the dead handle's
	start
}
ev_resync() {
	local end=$((SECONDS + 5))
	while ! is_state resyncing && ((SECONDS < end)); do
		running || return 0
		tu_nap 0.02
	done
	ev_kill
}
ev_promote() {
	((promoted)) && return 0
	local t0
	t0=$(acks)
	tu_try "$rpmem" promote --end-sessions "$psd/g.set"
	case $rc in
	0)
		promoted=1
		echo "$me:   promoted after $t0 acknowledged persists"
		if [[ $policy != continue ]] && ! "$gc" "$target" g.set \
				"$SIZE" "$tmp/m.pool" acked "$seed" "$tmp/w/acks" \
				"$t0" "$part" >"$tmp/acked.out" 2>&1; then
			tu_fail "seed $seed ($policy): promoted without an" \
				"acknowledged persist: $(<"$tmp/acked.out")"
		fi
		"$rpmem" demote "$psd/g.set" >/dev/null 2>&1 ||
			tu_fail "seed $seed: demote"
		;;
	3) echo "$me:   promote refused: $(head -c 160 "$tmp/err")" ;;
	*) tu_fail "seed $seed: promote: $rc: $(<"$tmp/err")" ;;
	esac
}

# one_seed -- a fresh pool, a policy, faults, the end's checks
one_seed() {
	seed=$1
	RANDOM=$seed
	policy=${POLICIES[RANDOM % ${#POLICIES[@]}]}
	promoted=0
	rm -rf -- "$tmp/state" "$tmp/m.pool"* "$tmp/parts"/* "${psd:?}"/* \
		"$tmp/w" "$tmp/gc.out" "$tmp/client.log"
	mkdir -p "$tmp/state" "$tmp/w"
	printf 'PMEMPOOLSET\n%s %s\n' "$SIZE" "$part" >"$psd/g.set"
	gc create || { tu_fail "seed $seed: create: $(tail -3 "$tmp/gc.out")"
		return; }
	start
	local k ev done_ev=()
	for ((k = 0; k < 3; k++)); do
		nap
		reap
		running || start
		ev=${EVENTS[RANDOM % ${#EVENTS[@]}]}
		done_ev+=("$ev")
		"ev_$ev"
	done
	# healed: sshd up, nothing stopped; the client on (again)
	harness_sshd_pid "$tmp/b" >/dev/null || harness_restart_sshd "$tmp/b"
	for p in $(rpmemds); do kill -CONT "$p" 2>/dev/null; done
	reap
	running || start
	local end=$((SECONDS + 60))
	while ((SECONDS < end)) && running &&
			! is_state connected split-brain refused; do
		tu_nap 0.05
	done
	: >"$tmp/w/stop"
	if running && ! tu_pid_gone "$app_pid" 60; then
		tu_fail "seed $seed: the client did not stop"
		kill -KILL "$app_pid"
	fi
	wait "$app_pid" 2>/dev/null
	app_pid=
	rm -f -- "$tmp/w/stop" "$tmp/state/run/"*.status
	echo "$me: seed $seed: $policy, ${done_ev[*]}: $(acks) acknowledged"
	# the end: equal, or refused with the facts (after a promote only)
	gc open
	if ((rc == 2)); then
		grep -Eq 'refused: (split brain|the replica wrote since).*last common generation [0-9a-f]{16}' \
			"$tmp/gc.out" ||
			tu_fail "seed $seed: the open failed: $(tail -1 "$tmp/gc.out")"
		((promoted)) ||
			tu_fail "seed $seed: refused without a promote: $(tail -1 \
				"$tmp/gc.out")"
		"$rpmem" discard "$psd/g.set" >/dev/null 2>&1 ||
			tu_fail "seed $seed: discard"
		gc open
	fi
	((rc == 0)) || tu_fail "seed $seed: the last open: $(tail -2 "$tmp/gc.out")"
	cmp -s -i 4096 "$tmp/m.pool" "$part" ||
		tu_fail "seed $seed ($policy, ${done_ev[*]}): the replica differs" \
			"from the master: $(cmp -i 4096 "$tmp/m.pool" "$part")"
}

for ((i = 0; i < nseeds; i++)); do
	before=$TU_FAILED
	one_seed $((seed0 + i))
	harness_sshd_pid "$tmp/b" >/dev/null || harness_restart_sshd "$tmp/b"
	for p in $(rpmemds); do kill -KILL "$p"; done
	((TU_FAILED == before)) || { echo "$me: seed $((seed0 + i)) failed:"
		tail -15 "$tmp/client.log"; tail -5 "$tmp/gc.out"; }
done
tu_end "$nseeds seed(s): no acknowledged persist lost, no silent divergence"
