#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# coverage.sh -- line and branch coverage of src/ after the suite, and the
# floor that src/librpmem and src/rpmemd must not drop below
#
# Run by `make check` as the last test of a tree configured with
# --enable-coverage (its log depends on every other test's log); skipped
# (77) in any other tree.  By hand, after a coverage run of the suite:
#
#   top_builddir=BUILD_DIR tests/coverage.sh
#
# It collects the gcov counters of every object under top_builddir with
# lcov (never-run files count with zero lines hit), prints one line per
# directory of src/ and one for the whole of src/, writes them to
# top_builddir/coverage/summary.txt and the merged counters to
# top_builddir/coverage/src.info, then compares the line coverage of
# each directory named in tests/coverage.floor with its floor there.
# Exit status 0 when every floor holds, 1 when one does not or lcov
# fails, 77 when the tree has no coverage instrumentation.
set -uo pipefail

: "${top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
top_builddir=$(cd "$top_builddir" && pwd) || exit 1
top_srcdir=$(cd "$top_srcdir" && pwd) || exit 1
# shellcheck source-path=SCRIPTDIR source=common/tu.sh
. "$(dirname "${BASH_SOURCE[0]}")/common/tu.sh"
floor_file=${COVERAGE_FLOOR:-$top_srcdir/tests/coverage.floor}
out=$top_builddir/coverage
lcov=${LCOV:-lcov}

if ! grep -q -- '--coverage' "$top_builddir/Makefile" 2>/dev/null; then
	echo "SKIP: $top_builddir is not configured with --enable-coverage"
	exit 77
fi
if ! command -v "$lcov" >/dev/null; then
	tu_fail "lcov not found (install lcov)"
	exit 1
fi

mkdir -p "$out" || exit 1
rc=(--rc lcov_branch_coverage=1 --quiet)
# run_lcov -- lcov, less the warnings Debian's 1.16 geninfo gives of its
# own redefined subroutines
run_lcov() {
	"$lcov" "$@" 2> >(grep -v 'redefined at .*geninfo' >&2)
}
# the zero baseline makes files no test ran count, with no line hit
run_lcov "${rc[@]}" --capture --initial --directory "$top_builddir" \
	--output-file "$out/base.info" || { tu_fail "lcov --initial"; exit 1; }
run_lcov "${rc[@]}" --capture --directory "$top_builddir" \
	--output-file "$out/run.info" || { tu_fail "lcov --capture"; exit 1; }
run_lcov "${rc[@]}" --add-tracefile "$out/base.info" \
	--add-tracefile "$out/run.info" --output-file "$out/all.info" ||
	{ tu_fail "lcov --add-tracefile"; exit 1; }
run_lcov "${rc[@]}" --extract "$out/all.info" "$top_srcdir/src/*" \
	--output-file "$out/src.info" || { tu_fail "lcov --extract"; exit 1; }
rm -f "$out/base.info" "$out/run.info" "$out/all.info"

# one line per directory of src/ and one for src/: from the tracefile's
# per-file counts (LF/LH lines found/hit, BRF/BRH branches)
awk -v src="$top_srcdir/" '
	/^SF:/ { f = substr($0, 4); sub("^" src, "", f);
		d = f; sub("/[^/]*$", "", d); dirs[d] = 1 }
	/^LF:/ { lf[d] += substr($0, 4); lf["src"] += substr($0, 4) }
	/^LH:/ { lh[d] += substr($0, 4); lh["src"] += substr($0, 4) }
	/^BRF:/ { bf[d] += substr($0, 5); bf["src"] += substr($0, 5) }
	/^BRH:/ { bh[d] += substr($0, 5); bh["src"] += substr($0, 5) }
	function pct(h, n) { return n ? 100 * h / n : 100 }
	function row(d) {
		return sprintf("coverage %-13s lines %5.1f%% (%d of %d)  " \
			"branches %5.1f%% (%d of %d)", d, pct(lh[d], lf[d]),
			lh[d], lf[d], pct(bh[d], bf[d]), bh[d], bf[d])
	}
	END {
		for (d in dirs)
			print row(d) | "sort"
		close("sort")
		print row("src")
	}' "$out/src.info" >"$out/summary.txt" || exit 1
cat "$out/summary.txt"

# each floor line: a directory of src/ and its least line coverage, in %
if [[ ! -r $floor_file ]]; then
	tu_fail "no floor file $floor_file"
	exit 1
fi
while read -r dir floor _; do
	[[ -z $dir || $dir == \#* ]] && continue
	got=$(awk -v d="$dir" '$2 == d { sub("%", "", $4); print $4 }' \
		"$out/summary.txt")
	if [[ -z $got ]]; then
		tu_fail "$dir (in $floor_file) has no coverage figures"
	elif awk -v g="$got" -v f="$floor" 'BEGIN { exit !(g < f) }'; then
		tu_fail "$dir line coverage $got% is below its floor" \
			"$floor% ($floor_file)"
	else
		echo "PASS: $dir line coverage $got% >= floor $floor%"
	fi
done <"$floor_file"
exit $((TU_FAILED != 0))
