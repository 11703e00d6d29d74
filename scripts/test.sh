#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test.sh -- set up, build with coverage counters and run the whole test
# suite (make check), then print the coverage of src/.
#
# Ends with one summary line "N passed, N failed, N skipped" counted from
# the automake test logs; exits non-zero when any test failed.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1

# the suite runs once, on a tree built with gcov counters, and its last
# test (tests/coverage.sh) prints the coverage of src/ and holds librpmem
# and rpmemd to their floor (tests/coverage.floor); a tree built without
# the counters is cleaned first, so that every object gets them
if [ -f Makefile ] && ! grep -q -- '--coverage' Makefile; then
	make clean >/dev/null
fi
"$top/scripts/setup.sh" --enable-coverage ||
	{ echo "0 passed, 1 failed"; exit 1; }
find . -name '*.gcda' -delete

make -j"$(nproc)" check
rc=$?

count() { cat tests/*/*.trs tests/*.trs 2>/dev/null | grep -c "^:test-result: $1"; }
pass=$(count PASS)
fail=$(( $(count FAIL) + $(count ERROR) + $(count XPASS) ))
skip=$(count SKIP)

if [ $rc -ne 0 ]; then
	[ -f test-suite.log ] && cat test-suite.log
	[ "$fail" -eq 0 ] && fail=1
fi
if [ -s coverage/summary.txt ]; then
	echo "--- coverage of src/ (tests/coverage.log; make coverage-html)"
	cat coverage/summary.txt
fi
echo "$pass passed, $fail failed, $skip skipped"
[ $rc -eq 0 ] && [ "$fail" -eq 0 ]
