#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# degraded.sh -- what a lost replica and its way back cost the
# application, under RPMEM_ON_REPLICA_LOSS=continue (src/librpmem/repl.h)
#
#   tests/perf/degraded.sh [--quick] [--pin] [--reps N] [--mib N]
#
# Not part of `make check`: a benchmark, which prints figures and ratios
# to baselines of the same run, and judges nothing.  A pool of MiB + 8
# MiB (256 MiB + 8 by default) with its replica behind a private sshd on
# loopback (tests/common/harness.sh); tests/perf/degraded_client is the
# application, and kills rpmemd itself (by the pids this script finds in
# /proc) so that it can time what follows.  Each rep runs the client
# twice, at the default RPMEM_RESYNC_RATE and at 0 (unlimited), and
# `rpmem sync` once; see the header it prints for the figures.
# --quick: one rep, 128 MiB, 3 losses, 1 s of baseline.  --pin: the
# client (and rpmem sync) on core 1, rpmemd on core 0.  The reconnect
# back-off is RPMEM_RECONNECT_MIN_MS/_MAX_MS, 100 ms both unless set.
# Exits 2 on a build that is not optimised (coverage, -O0, sanitizers).
set -uo pipefail

# this script's tree; harness.sh exports it and top_builddir (default:
# the same tree), made absolute
top_srcdir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source-path=SCRIPTDIR source=../common/harness.sh
. "$top_srcdir/tests/common/harness.sh"
me=degraded.sh

reps=3 mib=256 losses=5 secs=2 pin=0
while (($#)); do
	case $1 in
	--quick) reps=1 mib=128 losses=3 secs=1 ;;
	--pin) pin=1 ;;
	--reps) reps=${2:?--reps N}; shift ;;
	--mib) mib=${2:?--mib N}; shift ;;
	*) echo "usage: $0 [--quick] [--pin] [--reps N] [--mib N]" >&2
		exit 2 ;;
	esac
	shift
done

# figures of an instrumented or unoptimised build mean nothing
# shellcheck source=../../scripts/build_kind.sh
. "$top_srcdir/scripts/build_kind.sh"
build_kind_refuse "$me" "$top_builddir" || exit 2
make -s -C "$top_builddir" rpmemd rpmem librpmem.la \
	tests/perf/degraded_client >/dev/null || exit 1
client=$top_builddir/tests/perf/.libs/degraded_client
[[ -x $client ]] || client=$top_builddir/tests/perf/degraded_client
rpmem=$top_builddir/rpmem libs=$top_builddir/.libs

base=/dev/shm
[[ -d $base && -w $base ]] || base=${TMPDIR:-/tmp}
tmp=$(mktemp -d "$base/rpmem-degraded.XXXXXX") || exit 1
cpid=
cleanup() {
	[[ -n $cpid ]] && kill -KILL "$cpid" 2>/dev/null
	harness_stop_sshd "$tmp/b"
	rm -rf -- "$tmp"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
harness_start_sshd "$tmp/b" || exit 1
target=$HARNESS_TARGET
psd=$tmp/psd ctl=$tmp/ctl
mkdir -p "$psd" "$ctl" "$tmp/parts"

pin_client=() pin_daemon=
((pin)) && pin_client=(taskset -c 1) pin_daemon="taskset -c 0 "
rpmemd_cmd="$pin_daemon$(printf '%q --poolset-dir=%q --log-file=%q' \
	"$top_builddir/rpmemd" "$psd" "$tmp/rpmemd.log") --log-level=err"
rmin=${RPMEM_RECONNECT_MIN_MS:-100} rmax=${RPMEM_RECONNECT_MAX_MS:-100}
env_common=(LD_LIBRARY_PATH="$libs" RPMEM_CMD="$rpmemd_cmd")

# rpmemd_pids -- the rpmemd processes serving this run's poolset dir
rpmemd_pids() {
	harness_rpmemd_pids "$psd"
}

# reply NAME -- DIR/NAME.done from what stdin gives, atomically
reply() {
	cat >"$ctl/$1.tmp" && mv -- "$ctl/$1.tmp" "$ctl/$1.done"
}

# serve -- the client's requests, until it exits
serve() {
	while kill -0 "$cpid" 2>/dev/null; do
		if [[ -e $ctl/pids ]]; then
			rm -f -- "$ctl/pids"
			rpmemd_pids | reply pids
		fi
		if [[ -e $ctl/cut ]]; then
			rm -f -- "$ctl/cut"
			harness_stop_sshd "$tmp/b"
			rpmemd_pids | reply cut
		fi
		if [[ -e $ctl/restore ]]; then
			rm -f -- "$ctl/restore"
			local t
			t=$(date +%s%3N)
			harness_restart_sshd "$tmp/b" || return 1
			echo "$t" | reply restore
		fi
		tu_nap 0.005
	done
	return 0
}

declare -A V	# figure name -> values of every rep, space-separated

# put -- keep a client line `phase key=value...` under TAG.phase.key
put() {
	local tag=$1 phase kv
	read -r phase rest <<<"$2"
	for kv in $rest; do
		V[$tag.$phase.${kv%%=*}]+="${kv#*=} "
	done
}

# run_client TAG RATE PHASE... -- one client session; its lines kept
run_client() {
	local tag=$1 rate=$2 line rc=0
	shift 2
	rm -rf -- "$tmp/state" "$tmp/client.log" "${ctl:?}"/* "${psd:?}"/*
	mkdir -p "$tmp/state"
	printf 'PMEMPOOLSET\nOPTION NOHDRS\n%sM %s/r.0\n' "$((mib + 8))" \
		"$tmp/parts" >"$psd/c.set"
	env "${env_common[@]}" RPMEM_ON_REPLICA_LOSS=continue \
		RPMEM_STATE_DIR="$tmp/state" ${rate:+RPMEM_RESYNC_RATE=$rate} \
		RPMEM_RECONNECT_MIN_MS="$rmin" RPMEM_RECONNECT_MAX_MS="$rmax" \
		RPMEM_LOG_LEVEL=notice RPMEM_LOG_FILE="$tmp/client.log" \
		"${pin_client[@]}" "$client" "$target" c.set "$ctl" "$mib" \
		"$secs" "$losses" "$@" >"$tmp/client.out" 2>"$tmp/client.err" &
	cpid=$!
	serve || rc=1
	wait "$cpid" || rc=1
	cpid=
	harness_sshd_pid "$tmp/b" >/dev/null || harness_restart_sshd "$tmp/b"
	if ((rc)); then
		echo "  ($tag): the client failed:" \
			"$(tail -3 "$tmp/client.err")" >&2
		sed 's/^/    /' "$tmp/client.log" | tail -"${DEGRADED_LOG_LINES:-5}" >&2
		V[$tag.failed]+="1 "
	fi
	while read -r line; do
		put "$tag" "$line"
	done <"$tmp/client.out"
	rm -f -- "$tmp/parts/r.0"
}

# sync_run -- seconds `rpmem sync` takes to copy MiB MiB that differ
sync_run() {
	local set=$tmp/s.set rc=0
	rm -rf -- "${psd:?}"/* "$tmp/parts"/*
	printf 'PMEMPOOLSET\n%sM %s/r.0\n' "$((mib + 8))" "$tmp/parts" \
		>"$psd/s.set"
	printf 'PMEMPOOLSET\n%sM %s/m.0\nREPLICA %s s.set\n' "$((mib + 8))" \
		"$tmp/parts" "$target" >"$set"
	env "${env_common[@]}" "${pin_client[@]}" "$rpmem" create "$set" \
		>/dev/null 2>"$tmp/sync.err" || rc=1
	((rc)) || dd if="$tmp/random" of="$tmp/parts/m.0" bs=1M seek=4096 \
		oflag=seek_bytes conv=notrunc status=none || rc=1
	local t0 t1
	t0=$(date +%s%N)
	((rc)) || env "${env_common[@]}" "${pin_client[@]}" "$rpmem" sync \
		"$set" >"$tmp/sync.out" 2>>"$tmp/sync.err" || rc=1
	t1=$(date +%s%N)
	if ((rc)); then
		echo "  (rpmem sync) failed: $(tail -3 "$tmp/sync.err")" >&2
		return
	fi
	V[sync.ms]+="$(((t1 - t0) / 1000000)) "
	rm -rf -- "${psd:?}"/* "$tmp/parts"/*
}

# med -- the median of a figure, or empty
med() {
	local v=${V[$1]:-}
	[[ -n $v ]] || return 0
	tr ' ' '\n' <<<"$v" | grep -v '^$' | sort -g |
		awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)] }'
}

# ratio A B -- A / B to 2 places, "-" when either is missing
ratio() {
	[[ -n $1 && -n $2 && $1 != -1 && $2 != -1 ]] || { echo -; return; }
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (b > 0) printf "%.3f", a / b; else print "-" }'
}

# mibs BYTES MS -- MiB/s
mibs() {
	[[ -n $1 && -n $2 && $2 != -1 && $2 != 0 ]] || { echo -; return; }
	awk -v b="$1" -v t="$2" 'BEGIN { printf "%.0f", b / 1048576 / t * 1e3 }'
}

echo "== $me $(date -u '+%F %T UTC'), $(nproc) CPUs:" \
	"$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
echo "   load average $(cut -d' ' -f1-3 /proc/loadavg); reps $reps;" \
	"pool $((mib + 8)) MiB, $mib MiB out of sync per resync;" \
	"reconnect back-off ${rmin}-${rmax} ms"
((pin)) && echo "   client on core 1, rpmemd on core 0"
cat <<-EOF
   1 loss->degraded  ms from rpmemd's SIGKILL (sshd up) to the return of
                     the first 64 B persist after which the live status
                     is no longer connected: how long persists stall
   2 persist latency strict 64 B persists, p50/p99 in us, connected (the
                     baseline of the same client run) and while the
                     status says resyncing ($mib MiB, at the default rate
                     and unlimited); such persists are only recorded, the
                     ratio is what the resync's CPU costs the application
   3 resync rate     MiB/s of the online resync of $mib MiB (unlimited,
                     no persists meanwhile) against \`rpmem sync\` of a
                     closed pool of the same size with $mib MiB differing
                     (which compares the whole pool first)
   4 reconnect       ms from sshd started again (the backup reachable)
                     to status resyncing and to connected, against the
                     client's first rpmem_create (its session set-up);
                     the wait includes what is left of the back-off
EOF
head -c $((mib << 20)) /dev/urandom >"$tmp/random"
for ((rep = 1; rep <= reps; rep++)); do
	echo "-- rep $rep of $reps"
	run_client def "" base loss load
	run_client unl 0 base load idle
	sync_run
done

echo
echo "== figures (medians; ratio = left / right)"
printf '  1 loss->degraded  %8s ms (of %s losses; persists after the kill' \
	"$(med def.loss.ms)" "$(wc -w <<<"${V[def.loss.ms]:-}")"
printf ' before it: %s; back to connected %s ms)\n' \
	"$(med def.loss.persists)" "$(med def.loss.back_ms)"
for t in def unl; do
	name="default rate" && [[ $t == unl ]] && name="unlimited"
	b50=$(med "$t.base.p50") b99=$(med "$t.base.p99")
	r50=$(med "$t.load.p50") r99=$(med "$t.load.p99")
	printf '  2 persist, %-12s connected p50 %7s p99 %7s us;\n' "$name" \
		"$b50" "$b99"
	printf '    resyncing p50 %7s p99 %7s us = %6sx %6sx of it (n %s)\n' \
		"$r50" "$r99" "$(ratio "$r50" "$b50")" "$(ratio "$r99" "$b99")" \
		"$(med "$t.load.n")"
	printf '    resync under load: %s MiB/s, %s bytes copied\n' \
		"$(mibs "$(med "$t.load.resync_bytes")" \
			"$(med "$t.load.resync_ms")")" \
		"$(med "$t.load.resync_bytes")"
done
online=$(mibs "$(med unl.idle.resync_bytes)" "$(med unl.idle.resync_ms)")
offline=$(mibs $((mib << 20)) "$(med sync.ms)")
printf '  3 resync rate     online %6s MiB/s (%s bytes in %s ms),' \
	"$online" "$(med unl.idle.resync_bytes)" "$(med unl.idle.resync_ms)"
printf ' rpmem sync %6s MiB/s (%s ms) = %5sx\n' "$offline" \
	"$(med sync.ms)" "$(ratio "$online" "$offline")"
connect=$(med unl.connect.ms)
for t in unl.idle def.load unl.load; do
	name="unlimited, idle"
	[[ $t == def.load ]] && name="default, load"
	[[ $t == unl.load ]] && name="unlimited, load"
	printf '  4 reconnect %-16s to resyncing %6s ms = %5sx,' "$name" \
		"$(med "$t.to_resyncing_ms")" \
		"$(ratio "$(med "$t.to_resyncing_ms")" "$connect")"
	printf ' to connected %6s ms; rpmem_create %s ms\n' \
		"$(med "$t.to_connected_ms")" "$connect"
done
[[ -z ${V[def.failed]:-}${V[unl.failed]:-} ]] || {
	echo "== some client runs failed (above)"; exit 1; }
exit 0
