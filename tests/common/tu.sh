# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# tu.sh -- what the shell tests share: checks counted and reported, a
# command bounded in time, every rpmemd of a run gone at the end
#
# Source this file from bash (tests/common/harness.sh sources it for
# every test behind sshd).  It defines:
#
#   tu_check NAME CMD...     run CMD, print "ok - NAME" or "not ok - NAME",
#                            count it in TU_PASSED or TU_FAILED
#   tu_summary               print the counts; false when a check failed
#   tu_run CMD...            CMD bounded to 120 s, its output in $TU_OUT,
#                            shown indented; CMD's exit status
#   tu_says STATUS CMD... -- LINE...
#                            tu_run CMD, which must exit STATUS and print
#                            every LINE
#   tu_logged FILE TEXT      FILE has a line with TEXT (fixed string)
#   tu_not_logged FILE TEXT  FILE has no such line
#   tu_sessions_gone WHO MS LOG...
#                            every rpmemd whose "session: pid N" is in a
#                            LOG has exited within MS ms; names the others
#   tu_need_built FILE...    exit 1 naming the first FILE not built (a
#                            program must be executable)
#
# TU_OUT must be set to a file before tu_run or tu_says; with TU_DIR set,
# the command runs in that directory (where a crashing library leaves its
# backtrace, say).  TU_STAMP matches the time that begins each line of a
# log file (RPMEM_LOG_FILE, rpmemd --log-file), in a basic or an extended
# regular expression: "^${TU_STAMP}rpmemd: ".

TU_PASSED=0
TU_FAILED=0
# "2026-11-28T14:05:01.123Z ", the UTC time log.c writes
# shellcheck disable=SC2034 # read by the tests that source this file
TU_STAMP='[0-9-]*T[0-9:.]*Z '
# shellcheck disable=SC2034 # read by the caller
TU_SESSIONS=0

# tu_check -- record one result: tu_check NAME COMMAND...
tu_check() {
	local name=$1
	shift
	if "$@"; then
		TU_PASSED=$((TU_PASSED + 1))
		echo "ok - $name"
	else
		TU_FAILED=$((TU_FAILED + 1))
		echo "not ok - $name"
	fi
}

# tu_summary -- "N passed, M failed"; true when none failed
tu_summary() {
	echo "$TU_PASSED passed, $TU_FAILED failed"
	[[ $TU_FAILED -eq 0 ]]
}

# tu_run -- a command bounded in time; output in $TU_OUT, shown indented
tu_run() {
	(cd "${TU_DIR:-.}" && timeout 120 "$@") \
		>"${TU_OUT:?tu_run: TU_OUT not set}" 2>&1 </dev/null
	local rc=$?
	sed 's/^/    # /' "$TU_OUT"
	return $rc
}

# tu_says -- run "$@" to exit status $1, every later line in its output:
# tu_says STATUS COMMAND... -- LINE...
tu_says() {
	local want=$1 line
	shift
	local -a cmd=()
	while [[ $1 != -- ]]; do
		cmd+=("$1")
		shift
	done
	shift
	tu_run "${cmd[@]}"
	local rc=$?
	[[ $rc == "$want" ]] || { echo "    # exit $rc, not $want"; return 1; }
	for line in "$@"; do
		grep -qF -- "$line" "$TU_OUT" ||
			{ echo "    # missing: $line"; return 1; }
	done
}

# tu_logged -- a line in a log file: tu_logged FILE TEXT
tu_logged() {
	grep -qF -- "$2" "$1" || { echo "    # not in $1: $2"; return 1; }
}

# tu_not_logged -- no such line in a log file: tu_not_logged FILE TEXT
tu_not_logged() {
	! grep -qF -- "$2" "$1" || { echo "    # in $1: $2"; return 1; }
}

# tu_sessions_gone -- the rpmemds named in the logs exit within $2 ms;
# their number in TU_SESSIONS
tu_sessions_gone() {
	local who=$1 ms=$2 pid try rc=0
	shift 2
	local -a pids
	mapfile -t pids < <(sed -n 's/.*session: pid \([0-9]*\) .*/\1/p' "$@")
	# shellcheck disable=SC2034 # read by the caller
	TU_SESSIONS=${#pids[@]}
	for pid in "${pids[@]}"; do
		for ((try = 0; try < ms / 50; try++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.05
		done
		if kill -0 "$pid" 2>/dev/null; then
			echo "$who: rpmemd $pid still running"
			rc=1
		fi
	done
	return $rc
}

# tu_need_built -- every file exists (a program is executable), or exit 1
tu_need_built() {
	local p
	for p in "$@"; do
		if [[ ! -e $p || ($p != *.so* && ! -x $p) ]]; then
			echo "${0##*/}: $p not built (run make check)" >&2
			exit 1
		fi
	done
}
