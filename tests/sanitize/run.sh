#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# run.sh -- CI's sanitizer leg: the tree built again with ASan and UBSan
# (configure --enable-sanitizers), then the unit suites, rpmemd's
# protocol tests (tests/integration/daemon) and a short soak under them
#
#   tests/sanitize/run.sh WORK_DIR [build|check]
#
# Both steps by default; scripts/test.sh runs `build` at the lowest
# priority beside make check (a build needs no quiet cores), then
# `check` alone after the cluster leg.
# An in-tree build blocks a VPATH build of the same tree (automake
# refuses to configure a second build of a configured source dir), so
# the leg builds a copy in WORK_DIR/src: the files git tracks, or what
# `make distdir` ships outside a checkout.  Every sanitizer report of any
# process of the leg, rpmemd behind sshd included (soak.sh hands the
# options on), lands in WORK_DIR/reports; any report there fails the
# leg.  The results stay in WORK_DIR/src/tests/*.trs for scripts/test.sh
# to count, two of them this script's own: the build, and the reports.
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=${1:?usage: run.sh WORK_DIR [build|check]}
step=${2:-all}
[[ $step == @(all|build|check) ]] || {
	echo "run.sh: step must be build or check, not '$step'" >&2
	exit 2
}
mkdir -p "$work/src/tests" "$work/reports"
work=$(cd "$work" && pwd)
src=$work/src
jobs=$(nproc)
t0=$SECONDS

# result -- write an automake-style result for one of our own checks
result() {
	printf ':test-result: %s\n' "$2" >"$src/tests/$1.trs"
	echo "$2: sanitize/$1"
}

# build -- the copy of the tree, configured and built in $src
build() {
	if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git -C "$top" ls-files -z |
			(cd "$top" && tar --null -T - -cf -) | tar -C "$src" -xf -
	else
		make -C "$top" distdir distdir="$src" >"$work/distdir.log" 2>&1
	fi
	# the library, rpmemd and the leg's own test programs only
	# (check-sanitize); -O1, as ASan advises: its reports stay exact
	# and the build is quicker
	if ! (cd "$src" && autoreconf -fi && ./configure --enable-sanitizers \
			--enable-werror CFLAGS='-g -O1' &&
			make -j"$jobs" sanitize-programs) \
			>"$work/build.log" 2>&1; then
		tail -n 40 "$work/build.log"
		result build FAIL
		return 1
	fi
	result build PASS
	echo "sanitize: built with ASan and UBSan in $((SECONDS - t0)) s"
}

if [[ $step != check ]]; then
	build || exit 1
	[[ $step == all ]] || exit 0
elif ! grep -qs 'PASS' "$src/tests/build.trs"; then
	echo "run.sh: no sanitizer build in $work (run.sh $work build)" >&2
	exit 1
fi

export ASAN_OPTIONS="log_path=$work/reports/asan:detect_leaks=1"
export UBSAN_OPTIONS="log_path=$work/reports/ubsan:print_stacktrace=1"
export LSAN_OPTIONS="suppressions=$top/tests/sanitize/lsan.supp"
LSAN_OPTIONS+=":print_suppressions=0"
# libinfinipath (libfabric's psm) would take SIGSEGV from ASan
export IPATH_NO_BACKTRACE=1
# the soak's short profile; sanitized programs run some 2-3 times slower,
# so that its RPMEM_TIMEOUT (and its fault-to-error bound) is raised
export SOAK_PROFILE=short SOAK_TIMEOUT=20
# the faults placed at random around reconnects and promotes: ten seeds
export GENSOAK_SEEDS=10
# an async replica's master killed mid-soak: four seeds (two stopped)
export ASYNC_SEEDS=4
rc=0
make -C "$src" -j"$jobs" check-sanitize || rc=1
[[ $rc == 0 ]] || cat "$src/test-suite.log"

if compgen -G "$work/reports/*" >/dev/null; then
	for f in "$work"/reports/*; do
		printf -- '--- %s ---\n' "$f"
		head -n 60 -- "$f"
	done
	result reports FAIL
	rc=1
else
	result reports PASS
fi
echo "sanitize: leg done in $((SECONDS - t0)) s"
exit $rc
