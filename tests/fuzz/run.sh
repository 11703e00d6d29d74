#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# run.sh -- each parser's fuzz harness over its seed corpus and a bounded
# number of mutations (tests/fuzz/driver.c); any crash or abort fails.
# fuzz_session serves whole rpmemd sessions (pool files, a fabric
# listener) for each input: fewer rounds, a few seconds.
# Coverage-guided, open-ended fuzzing of the same harnesses under clang's
# libFuzzer: tests/fuzz/libfuzzer.sh (by hand; too slow for make check).
set -euo pipefail

: "${top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
# shellcheck source-path=SCRIPTDIR source=../common/tu.sh
. "$(dirname "${BASH_SOURCE[0]}")/../common/tu.sh"
rounds=${FUZZ_ROUNDS:-200000}
for name in proto poolset target session; do
	prog=$top_builddir/tests/fuzz/fuzz_$name
	seeds=("$top_srcdir/tests/fuzz/corpus/$name"/*)
	n=$rounds
	[[ $name != session ]] || n=${FUZZ_SESSION_ROUNDS:-10000}
	if out=$("$prog" -n "$n" "${seeds[@]}" 2>&1); then
		echo "PASS fuzz_$name: $out"
	else
		tu_fail "fuzz_$name:"
		echo "$out"
	fi
done
exit $((TU_FAILED != 0))
