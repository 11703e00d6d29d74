# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# tu.sh -- what the shell tests share: checks counted and reported, a
# command bounded in time, every rpmemd of a run gone at the end
#
# Source this file from bash (tests/common/harness.sh sources it for
# every test behind sshd); it sets top_srcdir and top_builddir (below)
# unless the caller did.  It defines:
#
#   tu_check NAME CMD...     run CMD, print "ok - NAME" or "not ok - NAME",
#                            count it in TU_PASSED or TU_FAILED; with
#                            TU_CHECK_OUT set to a file, CMD's output goes
#                            there and is shown under the verdict
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
#   tu_pid_gone PID SECONDS  PID has ended within SECONDS
#   tu_nap SECONDS           sleep SECONDS (a fraction) without a fork:
#                            what every poll waits with
#   tu_tmp NAME              $tmp: a new directory rpmem-NAME.XXXXXX under
#                            $TMPDIR (else /tmp), removed at exit
#   tu_rmtmp DIR KEEP        remove the test's temp dir DIR, unless KEEP
#                            is 1 (a variable the test names): then say
#                            where it is
#
# and the assertions of the tests that go on after a failed one and give
# their verdict at the end (each failure counted in TU_FAILED):
#
#   tu_fail MSG...           one failed assertion: "FAIL: MSG"
#   tu_try CMD...            CMD's status in rc, its stdout in $tmp/out and
#                            its stderr in $tmp/err (tmp: the caller's), or
#                            in $TU_TRY_OUT and $TU_TRY_ERR when set
#   tu_must [-m ERE] WHAT CMD...
#                            CMD exits 0 (its stdout or stderr matching
#                            ERE): "--- ok: WHAT", else tu_fail; false
#                            when it failed
#   tu_refused WHAT STATUS ERE CMD...
#                            CMD fails with STATUS (-: any non-zero, +: any
#                            exit status but no signal), its stderr
#                            matching ERE
#   tu_expect WHAT TEST...   TEST holds: "--- ok: WHAT", else tu_fail
#                            (and the state of the absolute paths in TEST)
#   tu_has WHAT ERE          the output of the last tu_try or tu_must
#                            ($tmp/out, err) has a line matching ERE
#   tu_status WANT WHAT      the last tu_try exited WANT: "--- ok: WHAT",
#                            else tu_fail and its output; false
#   tu_line LINE             the last tu_try's stdout has the line LINE
#                            (a fixed string): "--- ok: ...", else
#                            tu_fail; false
#   tu_passed_since N WHAT   "--- ok: WHAT" when TU_FAILED is still N
#   tu_why MSG...            "    # MSG", a line under a failed check
#                            saying why; false
#   tu_end MSG               the verdict: exit 1 after a failure ("$me: N
#                            failure(s)"), else print "$me: MSG"
#
# After a failed tu_must or tu_refused, the function TU_EXPLAIN names
# (when set) shows the command's output, instead of the FAIL line.
# TU_OUT must be set to a file before tu_run or tu_says; with TU_DIR set,
# the command runs in that directory (where a crashing library leaves its
# backtrace, say).  TU_STAMP matches the time that begins each line of a
# log file (RPMEM_LOG_FILE, rpmemd --log-file), in a basic or an extended
# regular expression: "^${TU_STAMP}rpmemd: ".

# the trees, for the sourcing script too: top_srcdir as given (default:
# the repository root), top_builddir made absolute (default: top_srcdir)
top_srcdir=${top_srcdir:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
top_builddir=$(cd "${top_builddir:-$top_srcdir}" && pwd)
export top_srcdir top_builddir

# (sourced again, through a second library, the counts stay)
TU_PASSED=${TU_PASSED:-0}
TU_FAILED=${TU_FAILED:-0}
# "2026-11-28T14:05:01.123Z ", the UTC time log.c writes
# shellcheck disable=SC2034 # read by the tests that source this file
TU_STAMP='[0-9-]*T[0-9:.]*Z '
# shellcheck disable=SC2034 # read by the caller
TU_SESSIONS=0

# tu_check -- record one result: tu_check NAME COMMAND...
tu_check() {
	local name=$1 tu_check_rc=0
	shift
	# (not `rc`: the command may set the caller's, as tu_try does)
	if [[ -n ${TU_CHECK_OUT:-} ]]; then
		"$@" >"$TU_CHECK_OUT" 2>&1 || tu_check_rc=$?
	else
		"$@" || tu_check_rc=$?
	fi
	if ((tu_check_rc == 0)); then
		TU_PASSED=$((TU_PASSED + 1))
		echo "ok - $name"
	else
		TU_FAILED=$((TU_FAILED + 1))
		echo "not ok - $name"
	fi
	[[ -z ${TU_CHECK_OUT:-} ]] || sed 's/^/    # /' "$TU_CHECK_OUT"
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
	local -a tu_argv=()
	while [[ $1 != -- ]]; do
		tu_argv+=("$1")
		shift
	done
	shift
	tu_run "${tu_argv[@]}"
	local rc=$?
	[[ $rc == "$want" ]] || tu_why "exit $rc, not $want" || return
	for line in "$@"; do
		grep -qF -- "$line" "$TU_OUT" || tu_why "missing: $line" ||
			return
	done
}

# tu_logged -- a line in a log file: tu_logged FILE TEXT
tu_logged() {
	grep -qF -- "$2" "$1" || tu_why "not in $1: $2"
}

# tu_not_logged -- no such line in a log file: tu_not_logged FILE TEXT
tu_not_logged() {
	! grep -qF -- "$2" "$1" || tu_why "in $1: $2"
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
			tu_nap 0.05
		done
		if kill -0 "$pid" 2>/dev/null; then
			echo "$who: rpmemd $pid still running"
			rc=1
		fi
	done
	return $rc
}

# tu_nap -- sleep $1 seconds (0.05, say) in this shell: a read with a
# time-out on a pipe nobody writes, held open for reading and writing so
# that it never ends.  A poll naps 10-50 times a second; `sleep` would
# fork each time, which costs 10-15 ms on some VMs: most of a core taken
# from what the test waits for
tu_nap() {
	[[ -n ${TU_NAP_FD:-} ]] || exec {TU_NAP_FD}<> <(:)
	read -r -t "$1" -u "$TU_NAP_FD" _ || :
}

# tu_pid_gone -- true once process $1 has ended, false after $2 seconds
tu_pid_gone() {
	local end=$((SECONDS + $2))
	while kill -0 "$1" 2>/dev/null; do
		((SECONDS < end)) || return 1
		tu_nap 0.05
	done
}

# tu_tmp -- $tmp, a new temp dir named after $1, removed at exit (trap)
tu_tmp() {
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/rpmem-$1.XXXXXX")
	trap 'rm -rf -- "$tmp"' EXIT
}

# tu_rmtmp -- remove temp dir $1, or (with $2 1) keep it and say so
tu_rmtmp() {
	if [[ ${2:-0} == 1 ]]; then
		echo "${me:-${0##*/}}: kept $1"
	else
		rm -rf -- "$1"
	fi
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

# tu_fail -- one failed assertion, counted: tu_fail MSG...
tu_fail() {
	echo "FAIL: $*"
	TU_FAILED=$((TU_FAILED + 1))
}

# tu_try -- "$@" with its status in rc, its output in $tmp/out and err
# (in $TU_TRY_OUT and $TU_TRY_ERR when the caller set them)
tu_try() {
	rc=0
	"$@" >"${TU_TRY_OUT:-${tmp:?tu_try: tmp not set}/out}" \
		2>"${TU_TRY_ERR:-$tmp/err}" </dev/null || rc=$?
}

# tu_try_failed -- tu_fail "$1" about the last tu_try, and its output:
# after $1 in the same line, or, when TU_EXPLAIN names a function, what
# that function shows (the command, a daemon's log...); false
tu_try_failed() {
	if [[ -n ${TU_EXPLAIN:-} ]]; then
		tu_fail "$1"
		"$TU_EXPLAIN"
	else
		tu_fail "$1: $(cat "${TU_TRY_OUT:-$tmp/out}" \
			"${TU_TRY_ERR:-$tmp/err}")"
	fi
	return 1
}

# tu_must -- "$@" exits 0 (with -m ERE: its stdout or stderr matches ERE
# too); $1 names it: tu_must [-m ERE] WHAT COMMAND...
tu_must() {
	local re=
	if [[ $1 == -m ]]; then
		re=$2
		shift 2
	fi
	local what=$1
	shift
	tu_try "$@"
	if ((rc != 0)) || { [[ -n $re ]] && ! grep -Eq -- "$re" \
			"${TU_TRY_OUT:-$tmp/out}" "${TU_TRY_ERR:-$tmp/err}"; }
	then
		tu_try_failed "$what: status $rc"
		return 1
	fi
	echo "--- ok: $what"
}

# tu_refused -- "$@" fails with status $2 (any non-zero: -; any exit
# status but no signal: +) and stderr matching ERE $3; $1 names it:
# tu_refused WHAT STATUS ERE COMMAND...
tu_refused() {
	local what=$1 want=$2 re=$3
	shift 3
	tu_try "$@"
	if ((rc == 0)) || { [[ $want == + ]] && ((rc > 128)); } ||
			[[ $want != [-+] && $rc != "$want" ]] ||
			! grep -Eq -- "$re" "${TU_TRY_ERR:-$tmp/err}"; then
		if [[ -n ${TU_EXPLAIN:-} ]]; then
			re="expected failure with stderr matching '$re'"
			tu_try_failed "$what ($re)"
		else
			tu_fail "$what: status $rc, stderr: $(<"$tmp/err")"
		fi
		return 1
	fi
	echo "--- ok: $what"
}

# tu_expect -- the test "${@:2}" holds; $1 names it; on failure the test
# and the state of each absolute path in it are shown
tu_expect() {
	local what=$1 arg
	shift
	if "$@"; then
		echo "--- ok: $what"
		return 0
	fi
	tu_fail "$what ($*)"
	for arg in "$@"; do
		[[ $arg == /* ]] || continue
		if [[ -e $arg ]]; then
			stat -c '    %n: %F, %s bytes' -- "$arg"
		else
			printf '    %s: does not exist\n' "$arg"
		fi
	done
	return 1
}

# tu_has -- the last tu_try's output has a line matching ERE $2; $1
# names it
tu_has() {
	if grep -Eq -- "$2" "$tmp/out" "$tmp/err"; then
		echo "--- ok: $1"
		return 0
	fi
	tu_fail "$1: no line matching '$2' in:"
	sed 's/^/    /' "$tmp/out" "$tmp/err"
	return 1
}

# tu_status -- the last tu_try exited $1; $2 names it; on failure its
# stdout and stderr are shown
tu_status() {
	if [[ $rc == "$1" ]]; then
		echo "--- ok: $2"
		return 0
	fi
	tu_fail "$2: exit status $rc, expected $1"
	printf -- '--- stdout ---\n'
	cat -- "$tmp/out"
	printf -- '--- stderr ---\n'
	cat -- "$tmp/err"
	return 1
}

# tu_line -- the last tu_try's stdout has the line $1 (fixed string)
tu_line() {
	if grep -qxF -- "$1" "$tmp/out"; then
		echo "--- ok: line '$1'"
		return 0
	fi
	tu_fail "no line '$1' in the output:"
	sed 's/^/    /' "$tmp/out"
	return 1
}

# tu_passed_since -- "--- ok: $2" when no check failed since TU_FAILED
# was $1
tu_passed_since() {
	((TU_FAILED == $1)) && echo "--- ok: $2"
}

# tu_why -- say why a check fails, indented under its "not ok"; false
tu_why() {
	printf '    # %s\n' "$@"
	return 1
}

# tu_end -- the verdict of the failures counted: exit 1 after one, else
# print $1
tu_end() {
	local who=${me:-${0##*/}}
	((TU_FAILED == 0)) || { echo "$who: $TU_FAILED failure(s)"; exit 1; }
	echo "$who: $1"
}
