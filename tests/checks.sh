# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# checks.sh -- one line per result for test scripts, and commands judged
# by their exit status and output
#
# Source this file from bash, after setting CHECKS_DIR to a directory of
# the test's own (commands run there; their output goes to
# $CHECKS_DIR/out).  It defines:
#
#   check NAME COMMAND...        run COMMAND: "ok - NAME" or "not ok -
#                                NAME", counted
#   says STATUS COMMAND... -- LINE...
#                                COMMAND (bounded to 120 s, stdin from
#                                /dev/null) must exit STATUS and print
#                                every LINE (fixed strings); its output is
#                                shown indented
#   logged FILE TEXT             FILE has a line with TEXT
#   checks_end                   print the counts; false if any failed

checks_passed=0
checks_failed=0

# check -- record one result: check NAME COMMAND...
check() {
	local name=$1
	shift
	if "$@"; then
		checks_passed=$((checks_passed + 1))
		echo "ok - $name"
	else
		checks_failed=$((checks_failed + 1))
		echo "not ok - $name"
	fi
}

# says -- run to exit status $1, every later line in its output:
# says STATUS COMMAND... -- LINE...
says() {
	local want=$1 out=$CHECKS_DIR/out line rc
	shift
	local -a cmd=()
	while [[ $1 != -- ]]; do
		cmd+=("$1")
		shift
	done
	shift
	(cd "$CHECKS_DIR" && timeout 120 "${cmd[@]}") >"$out" 2>&1 </dev/null
	rc=$?
	sed 's/^/    # /' "$out"
	[[ $rc == "$want" ]] || { echo "    # exit $rc, not $want"; return 1; }
	for line in "$@"; do
		grep -qF -- "$line" "$out" ||
			{ echo "    # missing: $line"; return 1; }
	done
}

# logged -- a line in a log file: logged FILE TEXT
logged() {
	grep -qF -- "$2" "$1" || { echo "    # not in $1: $2"; return 1; }
}

# checks_end -- the counts; false when a check failed
checks_end() {
	echo "$checks_passed passed, $checks_failed failed"
	[[ $checks_failed -eq 0 ]]
}
