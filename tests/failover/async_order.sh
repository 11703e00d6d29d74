#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# async_order.sh -- an async replica is always an image the master held
# (doc/async.md, "The ordering rule"): genclient's soak persists on an
# async replica whose log may hold 4 MiB, rpmemd stopped now and then so
# the lag builds; the master SIGKILLed at a moment each seed picks, half
# the seeds while rpmemd is stopped (the lag at its bound), half while it
# runs; rpmemd then applies what it had received and ends.  Oracle
# (genclient prefix): the replica's part is the image after the first N
# persists the soak logged as acknowledged, the one after them possibly
# in part, nothing of any later one (no hole, no torn word), and the
# acknowledged persists it lacks hold at most the 4 MiB bound.
#
#   [ASYNC_SEEDS=N] top_builddir=BUILD_DIR tests/failover/async_order.sh
#
# A private sshd on loopback; rpmemd found and stopped by its pid.
set -uo pipefail
me=async_order.sh
# shellcheck source-path=SCRIPTDIR source=gc.sh
. "$(dirname "${BASH_SOURCE[0]}")/gc.sh"

LAG=$((4 << 20))
SEEDS=${ASYNC_SEEDS:-20}
gc_target
conf=$tmp/librpmem.conf
printf '[default]\nmode = async\nlag-bytes = 4M\nlag-ms = 600000\n' >"$conf"
chmod 600 "$conf"
gc_env=(RPMEM_CONF="$conf")

# rpmemd_pid -- the one rpmemd serving g.set
rpmemd_pid() {
	harness_rpmemd_pids "$psd" | head -1
}

behind_seen=0
for ((seed = 1; seed <= SEEDS; seed++)); do
	rm -rf -- "$tmp/state" "$tmp/m.pool"* "$tmp/parts"/* "${psd:?}"/* \
		"$tmp/w"
	mkdir -p "$tmp/state" "$tmp/w"
	printf 'PMEMPOOLSET\n%s %s\n' "$SIZE" "$part" >"$psd/g.set"
	gc RPMEM_REPLICATION=sync create ||
		{ tu_fail "seed $seed: create: $(tail -3 "$tmp/gc.out")"; continue; }
	gc_bg soak "$seed" "$tmp/w"
	end=$((SECONDS + 30))
	while (($(wc -l 2>/dev/null <"$tmp/w/acks" || echo 0) < 20)) &&
			((SECONDS < end)) && kill -0 "$app_pid" 2>/dev/null; do
		tu_nap 0.02
	done
	pid=$(rpmemd_pid)
	[[ -n $pid ]] || { tu_fail "seed $seed: no rpmemd"; continue; }
	# a moment of the seed's: 0-300 ms on, rpmemd stopped or running
	stopped=$((seed % 2))
	((stopped)) && kill -STOP "$pid"
	tu_nap "0.$(printf '%03d' $((seed * 7919 % 300)))"
	kill -KILL "$app_pid"
	wait "$app_pid" 2>/dev/null
	app_pid=
	((stopped)) && kill -CONT "$pid"
	# rpmemd applies what it received, sees the client gone, and ends
	tu_pid_gone "$pid" 30 ||
		{ tu_fail "seed $seed: rpmemd still runs"; kill -KILL "$pid"; }
	gc prefix "$seed" "$tmp/w/acks" "$part" "$LAG"
	echo "$me: seed $seed (rpmemd $( ((stopped)) && echo stopped ||
		echo running) at the kill): $(grep '^replica:' "$tmp/gc.out" |
		tail -1)"
	((rc == 0)) || tu_fail "seed $seed: $(tail -2 "$tmp/gc.out")"
	tail -1 "$tmp/gc.out" | grep -Eq ' [1-9][0-9]* bytes behind' &&
		behind_seen=$((behind_seen + 1))
done
# the lag was there to lose, or the test proved nothing
((behind_seen > 0)) ||
	tu_fail "no seed left the replica behind: the kills found no lag"
tu_end "every killed master left its async replica a prefix of its persists"
