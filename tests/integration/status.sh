#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# status.sh -- rpmem status over a state directory written by hand: live
# handles in each state, a stale status (a reaped child's pid) skipped
# and removed, replicas out of sync with their pool closed, pool set
# files with and without a promoted marker; text, JSON, --prometheus into
# an --output file and exit statuses
#
# Run by `make check` from the build tree, or by hand after a build:
#
#   top_builddir=BUILD_DIR tests/integration/status.sh
#
# Exit status 0 pass, 1 fail.  No sshd: the files are those librpmem
# writes (rstate.h), made here with printf.  The JSON is checked with
# python3 when there is one.
set -uo pipefail

# shellcheck source-path=SCRIPTDIR source=../common/tu.sh
. "$(dirname "${BASH_SOURCE[0]}")/../common/tu.sh"
rpmem=$top_builddir/rpmem
tu_need_built "$rpmem"
tu_tmp status
export RPMEM_STATE_DIR=$tmp/state
run=$RPMEM_STATE_DIR/run
mkdir -p "$run"
chmod 700 "$RPMEM_STATE_DIR" "$run"
TU_OUT=$tmp/out
now=$(date +%s)
live=$$

# status -- a handle's status file: status PID SEQ POOL_SET STATE [KEY VAL]...
status() {
	local pid=$1 seq=$2 set=$3 state=$4
	shift 4
	{
		printf 'rpmem-handle-status 1\npid %s\nseq %s\n' "$pid" "$seq"
		printf 'target alice@backup\npool_set %s\n' "$set"
		printf 'policy continue\nstate %s\nsince %s\n' "$state" \
			"$((now - 100))"
		while (($# >= 2)); do
			printf '%s %s\n' "$1" "$2"
			shift 2
		done
	} >"$run/$pid-$seq.status"
}

# record -- a replica's record: record KEY POOL_SET IN_SYNC [LINE]...
record() {
	local key=$1 set=$2 in_sync=$3
	shift 3
	{
		printf 'rpmem-replica-state 1\ntarget alice@backup\n'
		printf 'pool_set %s\npool_size 1048576\nin_sync %s\n' "$set" \
			"$in_sync"
		printf 'since %s\n' "$((now - 7200))"
		(($# == 0)) || printf '%s\n' "$@"
	} >"$RPMEM_STATE_DIR/$key.replica"
}

# json_ok -- the last output is JSON of the documented shape with $1
# handles, $2 records and $3 sets (skipped without python3)
json_ok() {
	command -v python3 >/dev/null || { echo "    # no python3"; return 0; }
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
n = [len(d[k]) for k in ("handles", "records", "sets")]
assert n == [int(x) for x in sys.argv[2:5]], n
for h in d["handles"]:
    assert isinstance(h["pid"], int) and isinstance(h["since"], int)
    assert h["state"] in ("connected", "degraded", "resyncing",
        "frozen", "split-brain", "broken"), h["state"]
' "$TU_OUT" "$1" "$2" "$3"
}

# lines -- FILE holds each LINE whole: lines FILE LINE...
lines() {
	local f=$1 l
	shift
	for l in "$@"; do
		grep -qxF -- "$l" "$f" || { echo "    # not in $f: $l"; return 1; }
	done
}

# the stale status first: a child's pid, reaped, so no process has it
sh -c 'exit 0' &
dead=$!
wait "$dead"
status "$dead" 0 dead.set degraded
status "$live" 0 app.set connected
tu_check "connected handle: exit 0, stale status skipped" \
	tu_says 0 "$rpmem" status -- "app.set on alice@backup" \
	"state:        connected" "pid:          $live (handle 0)"
tu_check "stale status not shown" tu_not_logged "$TU_OUT" dead.set
tu_check "stale status removed" test ! -e "$run/$dead-0.status"

# an async replica's handle: its mode and lag (doc/async.md)
status "$live" 9 far.set connected mode async lag_bytes 3145728 lag_ms 250
tu_check "async handle: its mode and lag, beside a sync one" \
	tu_says 0 "$rpmem" status -- "mode:         async" \
	"lag:          3145728 bytes (3.0 MiB), the oldest 250 ms (the$(:
	) replica is behind by this)" "mode:         sync"
tu_check "async handle --json: mode and lag as numbers" \
	tu_says 0 "$rpmem" status --json -- \
	'"mode": "async", "lag_bytes": 3145728, "lag_ms": 250' \
	'"mode": "sync", "lag_bytes": 0, "lag_ms": 0'
tu_check "async handle --prometheus: its lag" \
	tu_says 0 "$rpmem" status --prometheus -- \
	'rpmem_handle_async_lag_bytes{pool_set="far.set",target="alice@backup",pid="'$live'",handle="9"} 3145728' \
	'rpmem_handle_async_lag_seconds{pool_set="far.set",target="alice@backup",pid="'$live'",handle="9"} 0.25'
rm -f -- "$run/$live-9.status"

status "$live" 1 deg.set degraded out_of_sync 1048576 reconnects 4 \
	last_error 'connection%20reset%0A'
tu_check "degraded handle: exit 1, its bytes and last error" \
	tu_says 1 "$rpmem" status -- "deg.set on alice@backup" \
	"state:        degraded" "out of sync:  1048576 bytes (1.0 MiB)" \
	"reconnects:   4" 'last error:   connection reset\x0a'

status "$live" 2 res.set resyncing resync_done 1048576 \
	resync_total 4194304 resync_rate 1048576
tu_check "resyncing handle: progress, rate and ETA" \
	tu_says 1 "$rpmem" status -- \
	"resynced:     1048576 of 4194304 bytes (25.0%)" \
	"rate:         1.0 MiB/s" "eta:          0:00:03"

# records: one held by a live handle, one in sync, two out of sync
record held deg.set 0 "reason gone"
record fine fine.set 1
record ranges closed.set 0 "reason power%20loss" "ranges_known 1" \
	"range 0 4096" "range 65536 8192"
record unknown lost.set 0 "reason crash" "ranges_known 0"
tu_check "closed replicas out of sync listed, ranges known or not" \
	tu_says 1 "$rpmem" status -- "closed.set on alice@backup" \
	"state:        out of sync (closed)" "reason:       power loss" \
	"out of sync:  2 range(s), 12288 bytes (12.0 KiB)" \
	"lost.set on alice@backup" \
	"out of sync:  unknown (hashes will be compared)"
tu_check "held and in-sync records not listed" \
	tu_not_logged "$TU_OUT" "fine.set"
tu_check "a held record is shown through its handle only" \
	test "$(grep -c '^deg.set on' "$TU_OUT")" = 1

tu_check "--json: exit 1, three handles, two records" \
	tu_says 1 "$rpmem" status --json -- '"state": "resyncing"' \
	'"eta_seconds": 3' '"last_error": "connection reset\n"' \
	'"ranges": 2, "out_of_sync": 12288' '"ranges": null'
tu_check "--json parses, numbers as numbers" json_ok 3 2 0

status "$live" 3 split.set split-brain last_error promoted
tu_check "split-brain: exit 3" \
	tu_says 3 "$rpmem" status -- "state:        split-brain" \
	"last error:   promoted"

printf 'rpmem-handle-status 1\npid %s\n' "$live" >"$run/$live-4.status"
tu_check "a malformed status: named, exit 3" \
	tu_says 3 "$rpmem" status -- "$run/$live-4.status: malformed"
rm -f "$run"/*.status "$RPMEM_STATE_DIR"/*.replica
tu_check "nothing open, nothing out of sync: exit 0" \
	tu_says 0 "$rpmem" status -- "no pool open through librpmem"
tu_check "--json of nothing" tu_says 0 "$rpmem" status --json -- \
	'"handles": [], "records": [], "sets": []'

# pool set files, as on a replica's host
set_a=$tmp/a.set
set_b=$tmp/b.set
printf 'PMEMPOOLSET\n8M %s/a.part\n' "$tmp" >"$set_a"
printf 'PMEMPOOLSET\n8M %s/b.part\n' "$tmp" >"$set_b"
tu_check "a set never promoted: exit 0" \
	tu_says 0 "$rpmem" status "$set_a" -- "$set_a" "promoted:     no"
printf 'PMEMPROMOTED 1\ntime %s\nmaster %s\n' "$now" \
	43f3a30d-2c7e-4814-82dc-dfd1a6e399e9 >"$set_b.promoted"
tu_check "a promoted set: exit 1, when and from which master" \
	tu_says 1 "$rpmem" status "$set_a" "$set_b" -- \
	"promoted:     promoted to a master on" \
	"43f3a30d-2c7e-4814-82dc-dfd1a6e399e9"
tu_check "sets as JSON" tu_says 1 "$rpmem" status --json "$set_a" \
	"$set_b" -- '"promoted": null' '"promoted": {"time": '"$now"
tu_check "sets --json parses" json_ok 0 0 2
tu_check "a missing set: exit 3" \
	tu_says 3 "$rpmem" status "$tmp/none.set" -- "none.set: No such file"
# --prometheus and --output (metrics.sh has node-exporter read them)
status "$live" 5 deg.set degraded out_of_sync 4096
prom=$tmp/metrics/rpmem.prom
mkdir -p "$tmp/metrics"
tu_check "--prometheus --output: the verdict (1) and nothing printed" \
	tu_says 1 "$rpmem" status --prometheus --output "$prom" --
tu_check "--output: standard output empty" test ! -s "$TU_OUT"
labels="pool_set=\"deg.set\",target=\"alice@backup\",pid=\"$live\",handle=\"5\""
tu_check "--output: the degraded state at 1, its bytes" lines "$prom" \
	"rpmem_handle_state{$labels,state=\"degraded\"} 1" \
	"rpmem_handle_state{$labels,state=\"connected\"} 0" \
	"rpmem_handle_out_of_sync_bytes{$labels} 4096"
tu_check "--output: no temporary file left beside it" \
	test "$(find "$tmp/metrics" -type f | wc -l)" = 1
tu_check "--output where no directory is: exit 4, the file named" \
	tu_says 4 "$rpmem" status --output "$tmp/none/rpmem.prom" -- \
	"--output $tmp/none/rpmem.prom: No such file or directory"
tu_check "--json with --prometheus: a usage error" \
	tu_says 2 "$rpmem" status --json --prometheus -- \
	"--json and --prometheus are two renderings of the same facts"
tu_check "--output without a name: a usage error" \
	tu_says 2 "$rpmem" status --output= -- "--output wants a file name"
tu_check "usage error: the tool's status 2" \
	tu_says 2 "$rpmem" status --bogus -- "unknown option '--bogus'"

tu_summary
