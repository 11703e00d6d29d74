#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test.sh -- set up, build with coverage counters and run the whole test
# suite (make check; as root with the Debian packages built, installed
# and purged), print the coverage of src/, then the cluster leg (make
# check-cluster: P1-P6 on a real Pacemaker cluster), then the sanitizer leg
# (tests/sanitize/run.sh: a copy built with ASan and UBSan, beside make
# check, running the unit suites, the daemon protocol tests and a soak).
#
# Ends with one summary line "N passed, N failed, N skipped" counted from
# the automake test logs of both; exits non-zero when any test failed.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1

# the suite runs once, on a tree built with gcov counters, and its last
# test (tests/coverage.sh) prints the coverage of src/ and holds librpmem
# and rpmemd to their floor (tests/coverage.floor); a tree built without
# the counters is cleaned first, so that every object gets them
# shellcheck source=scripts/build_kind.sh
. "$top/scripts/build_kind.sh"
if [ -f Makefile ] && [ "$(build_kind_tree .)" != coverage ]; then
	make clean >/dev/null
fi
"$top/scripts/setup.sh" --enable-coverage ||
	{ echo "0 passed, 1 failed"; exit 1; }
find . -name '*.gcda' -delete

# as root, the Debian packages are built, linted, installed between two
# network namespaces and purged (tests/installed/); otherwise they skip
if [ "$(id -u)" -eq 0 ]; then
	export RPMEM_TEST_PACKAGES=${RPMEM_TEST_PACKAGES:-1}
fi

# the sanitizer leg's build (a copy of the tree with ASan and UBSan) runs
# beside make check at the lowest priority: it takes the cores only when
# the tests leave them idle (a fifth of the time); a build needs no quiet
# cores
san=$(mktemp -d "${TMPDIR:-/tmp}/rpmem-sanitize.XXXXXX")
nice -n 19 "$top/tests/sanitize/run.sh" "$san" build >"$san/build.out" 2>&1 &
san_build=$!

# libfabric's verbs init reads /proc/kallsyms twice in every process
# that opens a fabric: as root, where the kernel has no RDMA core, the
# suite runs with it empty, which tells libfabric the same (0.1 s of CPU
# a process; scripts/without-kallsyms.sh says why that changes nothing)
t0=$SECONDS
"$top/scripts/without-kallsyms.sh" make -j"$(nproc)" check
rc=$?
echo "test.sh: make check: $((SECONDS - t0)) s"

# the cluster leg: a real Pacemaker and Corosync cluster, alone on the
# cores (its token is 1 s); as root with the cluster packages, else skipped
t0=$SECONDS
make check-cluster
rc_cluster=$?
echo "test.sh: cluster leg: $((SECONDS - t0)) s"

# the sanitizer leg's tests, alone on the cores as the cluster leg; it
# prints its own failures
t0=$SECONDS
wait "$san_build"
rc_san=$?
cat "$san/build.out"
if [ $rc_san -eq 0 ]; then
	"$top/scripts/without-kallsyms.sh" "$top/tests/sanitize/run.sh" "$san" check
	rc_san=$?
fi
echo "test.sh: sanitizer leg: $((SECONDS - t0)) s (its build beside make check)"

count() {
	cat tests/*/*.trs tests/*.trs "$san"/src/tests/*/*.trs \
		"$san"/src/tests/*.trs 2>/dev/null | grep -c "^:test-result: $1"
}
pass=$(count PASS)
fail=$(( $(count FAIL) + $(count ERROR) + $(count XPASS) ))
skip=$(count SKIP)

if [ $rc -ne 0 ]; then
	[ -f test-suite.log ] && cat test-suite.log
	[ "$fail" -eq 0 ] && fail=1
fi
if [ $rc_cluster -ne 0 ]; then
	[ -f tests/cluster/cluster-suite.log ] &&
		cat tests/cluster/cluster-suite.log
	[ "$fail" -eq 0 ] && fail=1
fi
if [ $rc_san -ne 0 ] && [ "$fail" -eq 0 ]; then
	fail=1
fi
rm -rf -- "$san"
# the figures of the coverage run, last before the summary
if [ -s coverage/summary.txt ]; then
	echo "--- coverage of src/ (tests/coverage.log; make coverage-html)"
	cat coverage/summary.txt
fi
echo "$pass passed, $fail failed, $skip skipped"
[ $rc -eq 0 ] && [ $rc_cluster -eq 0 ] && [ $rc_san -eq 0 ] &&
	[ "$fail" -eq 0 ]
