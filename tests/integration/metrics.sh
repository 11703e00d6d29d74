#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# metrics.sh -- rpmem status --prometheus read by a real node-exporter
# (Debian's prometheus-node-exporter, textfile collector only, on
# 127.0.0.1): a librpmem master (genclient) persisting under
# RPMEM_ON_REPLICA_LOSS=continue loses its replica (sshd stopped, rpmemd
# killed: D1) and gets it back (D2).  At each step the file is written
# by the command rpmem-metrics.service runs, node-exporter is scraped,
# and the metrics must move as the handle does: connected, then degraded
# with bytes out of sync and reconnects counted, then connected again
# with none out of sync and the time of the transition later each time;
# node_textfile_scrape_error 0 at every scrape (node-exporter parsed the
# file; a file it cannot parse is shown to make it 1).  Label values
# with a quote, a backslash, a newline and a byte that is not UTF-8 come
# back from node-exporter as they were written; pool set files given in
# RPMEM_METRICS_SETS are reported; the units pass systemd-analyze verify.
#
# Exit status 0 pass, 1 fail (prometheus-node-exporter missing too:
# scripts/setup.sh installs it).  Traffic only to 127.0.0.1.
set -uo pipefail
me=metrics.sh
# shellcheck source-path=SCRIPTDIR source=../failover/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../failover/common.sh"
# shellcheck source-path=SCRIPTDIR source=../failover/gc.sh
. "$(dirname "${BASH_SOURCE[0]}")/../failover/gc.sh"
exporter=$(command -v prometheus-node-exporter) || {
	echo "$me: prometheus-node-exporter not found (scripts/setup.sh" \
		"installs Debian's)" >&2
	exit 1
}
command -v curl >/dev/null || { echo "$me: curl not found" >&2; exit 1; }
unit_in=$top_srcdir/src/systemd/rpmem-metrics.service.in
timer=$top_srcdir/src/systemd/rpmem-metrics.timer

SIZE=$((32 << 20))
fo_target stop_exporter
textdir=$tmp/textfile
mkdir -p "$tmp/state" "$tmp/w" "$textdir"
exporter_pid=

# stop_exporter -- TERM node-exporter by its pid, wait for it
stop_exporter() {
	[[ -n $exporter_pid ]] || return 0
	kill -TERM "$exporter_pid" 2>/dev/null
	wait "$exporter_pid" 2>/dev/null
	exporter_pid=
}

# scrape -- node-exporter's /metrics into $tmp/scrape; false when it
# does not answer
scrape() {
	curl -sS --noproxy '*' --max-time 5 -o "$tmp/scrape" \
		"http://127.0.0.1:$port/metrics" 2>"$tmp/curl.err"
}

# start_exporter -- node-exporter on a free port of 127.0.0.1 reading
# $textdir, answering within 10 s; a port taken meanwhile: another
start_exporter() {
	local try end
	for ((try = 0; try < 5; try++)); do
		port=$(harness_pick_port) || return 1
		"$exporter" --web.listen-address="127.0.0.1:$port" \
			--collector.disable-defaults --collector.textfile \
			--collector.textfile.directory="$textdir" \
			>"$tmp/exporter.log" 2>&1 &
		exporter_pid=$!
		end=$((SECONDS + 10))
		while kill -0 "$exporter_pid" 2>/dev/null &&
				((SECONDS < end)); do
			scrape && return 0
			tu_nap 0.05
		done
		stop_exporter
	done
	echo "$me: node-exporter did not answer: $(tail -3 "$tmp/exporter.log")"
	return 1
}

# unit_argv -- the command of rpmem-metrics.service, with this tree's
# rpmem, $textdir for node-exporter's directory and $RPMEM_METRICS_SETS
# as the unit would expand it, into the array argv
unit_argv() {
	local line w
	line=$(sed -n 's/^ExecStart=//p' "$unit_in")
	argv=()
	# shellcheck disable=SC2086 # the unit's words, as systemd splits them
	for w in $line; do
		case $w in
		@bindir@/rpmem) argv+=("$rpmem") ;;
		\$RPMEM_METRICS_SETS) read -ra sets <<<"${RPMEM_METRICS_SETS:-}"
			argv+=("${sets[@]}") ;;
		*) argv+=("${w/\/var\/lib\/prometheus\/node-exporter/$textdir}") ;;
		esac
	done
}

# write_metrics -- run that command; its exit status in rc
write_metrics() {
	unit_argv
	rc=0
	RPMEM_STATE_DIR=$tmp/state "${argv[@]}" >"$tmp/unit.out" 2>&1 || rc=$?
}

# value NAME [LABEL=VALUE...] -- the value of the series of NAME in the
# last scrape that has these labels (as node-exporter writes them), or
# nothing
value() {
	local name=$1
	shift
	# the labels through the environment: awk -v would unescape them
	want=$(printf '%s\n' "$@") awk -v name="$name" '
		BEGIN { n = split(ENVIRON["want"], w, "\n") }
		index($0, name "{") == 1 || index($0, name " ") == 1 {
			for (i = 1; i <= n; i++)
				if (w[i] != "" && index($0, w[i]) == 0)
					next
			print $NF
			exit
		}' "$tmp/scrape"
}

# is NAME OP NUMBER [LABEL...] -- the series' value compares so
is() {
	local name=$1 op=$2 want=$3 got
	shift 3
	got=$(value "$name" "$@")
	if [[ -z $got ]] || ! awk -v g="$got" -v w="$want" -v op="$op" \
		'BEGIN { exit !((op == "==" && g + 0 == w + 0) ||
			(op == ">" && g + 0 > w + 0) ||
			(op == ">=" && g + 0 >= w + 0)) }'; then
		echo "    # $name{$*} is '${got:-absent}', not $op $want"
		return 1
	fi
}

# written -- the last run wrote rpmem.prom (not exit 4), no temporary
# file is left beside it
written() {
	if [[ $rc == 4 || ! -s $textdir/rpmem.prom ||
			$(find "$textdir" -type f) != "$textdir/rpmem.prom" ]]; then
		echo "    # exit $rc: $(cat "$tmp/unit.out") $(ls "$textdir")"
		return 1
	fi
}

# step WHAT -- write the file, scrape; node-exporter read it without error
step() {
	write_metrics
	tu_check "$1: rpmem-metrics.service's command wrote the file" written
	tu_check "$1: node-exporter answers" scrape
	tu_check "$1: node-exporter parsed the file" \
		is node_textfile_scrape_error == 0
}

# integer NAME [LABEL...] -- value, as a whole number (0 when absent)
integer() {
	awk -v v="$(value "$@")" 'BEGIN { printf "%d\n", v }'
}

# count KEY -- a number of the live status (field), 0 when there is none
count() {
	local v
	v=$(field "$1")
	echo "${v:-0}"
}

# wait_until SECONDS CMD... -- poll CMD until it succeeds, with a deadline
# (fo_poll's, whether the application runs or not)
wait_until() {
	local app_pid=
	fo_poll "$@" && return 0
	echo "    # '$*' not so in time (state '$(state)')"
	return 1
}

# losing -- the live handle recorded bytes out of sync and tried to
# reconnect
losing() {
	(($(count out_of_sync) > 0 && $(count reconnects) > 0))
}

# past SECONDS -- the clock is past that second
past() {
	(($(date +%s) > $1))
}

start_exporter || exit 1

# a file node-exporter cannot parse is reported, so 0 means something
printf 'rpmem_bad{x="a"b"} 1\n' >"$textdir/bad.prom"
scrape
tu_check "a file node-exporter cannot parse: node_textfile_scrape_error 1" \
	is node_textfile_scrape_error == 1
rm -f "$textdir/bad.prom"

# the master and its replica, then the master persisting
printf 'PMEMPOOLSET\n%s %s/parts/g.0\n' "$SIZE" "$tmp" >"$psd/g.set"
gc create || { echo "$me: create: $(tail -3 "$tmp/gc.out")"; exit 1; }
gc_bg RPMEM_ON_REPLICA_LOSS=continue soak 7 "$tmp/w"
h=("pool_set=\"g.set\"" "target=\"$target\"" "pid=\"$app_pid\"")
tu_check "the handle is connected" \
	wait_until 30 is_state connected

step connected
tu_check "connected: the state gauge says so, the others 0" \
	is rpmem_handle_state == 1 "${h[@]}" 'state="connected"'
tu_check "connected: not degraded" \
	is rpmem_handle_state == 0 "${h[@]}" 'state="degraded"'
tu_check "connected: nothing out of sync" \
	is rpmem_handle_out_of_sync_bytes == 0 "${h[@]}"
tu_check "connected: severity 0" is rpmem_status_severity == 0
tu_check "connected: fresh (updated within a minute)" \
	is rpmem_handle_updated_timestamp_seconds '>' "$(($(date +%s) - 60))" \
	"${h[@]}"
since0=$(value rpmem_handle_state_since_timestamp_seconds "${h[@]}")

# D1: the replica lost while the master persists
harness_stop_sshd "$tmp/b"
# shellcheck disable=SC2046 # a list of pids
kill -KILL $(harness_rpmemd_pids "$psd")
tu_check "the handle goes degraded" \
	wait_until 30 is_state degraded
tu_check "bytes are recorded out of sync, reconnects tried" \
	wait_until 30 losing

step degraded
tu_check "degraded: the state gauge says so" \
	is rpmem_handle_state == 1 "${h[@]}" 'state="degraded"'
tu_check "degraded: no longer connected" \
	is rpmem_handle_state == 0 "${h[@]}" 'state="connected"'
tu_check "degraded: bytes out of sync" \
	is rpmem_handle_out_of_sync_bytes '>' 0 "${h[@]}"
tu_check "degraded: reconnects counted" \
	is rpmem_handle_reconnects_total '>' 0 "${h[@]}"
tu_check "degraded: the master's generation is not the replica's" \
	is rpmem_handle_generation_mismatch == 1 "${h[@]}"
tu_check "degraded: severity 1, and so the service's exit status" \
	is rpmem_status_severity == 1
tu_check "degraded: the service's command exits 1, not a failure" \
	test "$rc" = 1
tu_check "degraded: the transition's time, not before the connect" \
	is rpmem_handle_state_since_timestamp_seconds '>=' "$since0" "${h[@]}"
since1=$(integer rpmem_handle_state_since_timestamp_seconds "${h[@]}")
reconnects1=$(value rpmem_handle_reconnects_total "${h[@]}")
# the next transition falls in a later second: the clock is the signal
wait_until 5 past "$since1"

# D2: the replica back, resynced while the master persists
harness_restart_sshd "$tmp/b" || exit 1
tu_check "the handle resyncs and is connected again" \
	wait_until 60 is_state connected

step resynced
tu_check "resynced: connected again" \
	is rpmem_handle_state == 1 "${h[@]}" 'state="connected"'
tu_check "resynced: no longer degraded" \
	is rpmem_handle_state == 0 "${h[@]}" 'state="degraded"'
tu_check "resynced: nothing out of sync" \
	is rpmem_handle_out_of_sync_bytes == 0 "${h[@]}"
tu_check "resynced: the resync copied bytes" \
	is rpmem_handle_resync_total_bytes '>' 0 "${h[@]}"
tu_check "resynced: all it had to" \
	is rpmem_handle_resync_done_bytes == \
	"$(value rpmem_handle_resync_total_bytes "${h[@]}")" "${h[@]}"
tu_check "resynced: the generations agree" \
	is rpmem_handle_generation_mismatch == 0 "${h[@]}"
tu_check "resynced: the transition's time moved forward" \
	is rpmem_handle_state_since_timestamp_seconds '>' "$since1" "${h[@]}"
tu_check "resynced: the reconnects counter did not go back" \
	is rpmem_handle_reconnects_total '>=' "$reconnects1" "${h[@]}"
tu_check "resynced: severity 0" is rpmem_status_severity == 0

: >"$tmp/w/stop"
crc=0
wait "$app_pid" || crc=$?
app_pid=
tu_check "the client ended well (exit $crc)" test "$crc" = 0
step closed
tu_check "closed: no handle left in the metrics" \
	test -z "$(value rpmem_handle_state)"
tu_check "closed: no replica out of sync" \
	test -z "$(value rpmem_replica_out_of_sync)"

# labels that must be escaped, and pool set files, as node-exporter
# reads them back
run=$tmp/state/run
printf 'rpmem-handle-status 1\npid %s\nseq 0\ntarget t\npool_set %s\n' \
	$$ 'q"b\s%0Al%FF' >"$run/$$-0.status"
printf 'state split-brain\nrefusal split-brain\n' >>"$run/$$-0.status"
printf 'PMEMPOOLSET\n8M %s/a.part\n' "$tmp" >"$tmp/a.set"
printf 'PMEMPROMOTED 1\ntime %s\nmaster %s\n' 1795667870 \
	43f3a30d-2c7e-4814-82dc-dfd1a6e399e9 >"$tmp/a.set.promoted"
step escaped
e=('pool_set="q\"b\\s\nl'$'\xef\xbf\xbd''"' 'pid="'$$'"')
tu_check "escaped: the quote, backslash, newline and U+FFFD read back" \
	is rpmem_handle_state == 1 "${e[@]}" 'state="split-brain"'
tu_check "escaped: the refusal's reason" \
	is rpmem_handle_refused == 1 "${e[@]}" 'reason="split-brain"'
tu_check "escaped: severity 3" is rpmem_status_severity == 3
tu_check "escaped: the service's command exits 3, not a failure" \
	test "$rc" = 3
RPMEM_METRICS_SETS="$tmp/a.set $tmp/none.set" step sets
tu_check "sets: the promoted marker" \
	is rpmem_set_promoted == 1 "set=\"$tmp/a.set\""
tu_check "sets: not outdated" is rpmem_set_outdated == 0 "set=\"$tmp/a.set\""
tu_check "sets: a set that is not there is unreadable" \
	is rpmem_set_readable == 0 "set=\"$tmp/none.set\""
tu_check "sets: only the sets, no handle" \
	test -z "$(value rpmem_handle_state)"
rm -f "$run/$$-0.status"

# the units as systemd reads them, this tree's rpmem in ExecStart
if command -v systemd-analyze >/dev/null; then
	mkdir -p "$tmp/units" "$tmp/man/man1"
	ln -s "$top_srcdir/man/rpmem.1" "$tmp/man/man1/rpmem.1"
	sed "s|@bindir@/rpmem|$rpmem|" "$unit_in" \
		>"$tmp/units/rpmem-metrics.service"
	cp "$timer" "$tmp/units/"
	tu_check "the units pass systemd-analyze verify" \
		env MANPATH="$tmp/man" systemd-analyze verify \
		"$tmp/units/rpmem-metrics.service" \
		"$tmp/units/rpmem-metrics.timer"
else
	echo "# no systemd-analyze: the units are not verified"
fi

tu_summary
