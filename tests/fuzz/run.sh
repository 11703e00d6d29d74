#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# run.sh -- each parser's fuzz harness over its seed corpus and a bounded
# number of mutations (tests/fuzz/driver.c); any crash or abort fails.
set -euo pipefail

: "${top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
rounds=${FUZZ_ROUNDS:-200000}
fail=0
for name in proto poolset target; do
	prog=$top_builddir/tests/fuzz/fuzz_$name
	seeds=("$top_srcdir/tests/fuzz/corpus/$name"/*)
	if out=$("$prog" -n "$rounds" "${seeds[@]}" 2>&1); then
		echo "PASS fuzz_$name: $out"
	else
		echo "FAIL fuzz_$name:"
		echo "$out"
		fail=1
	fi
done
exit $fail
