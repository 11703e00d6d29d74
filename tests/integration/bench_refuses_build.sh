#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench_refuses_build.sh -- every figure-printing path refuses a build whose
# figures mean nothing (coverage counters, sanitizers, no optimisation),
# with one message, and RPMEM_BENCH_ANY_BUILD=1 turns rpmem bench's
# refusal into a warning
#
# Run by `make check` from the build tree, or by hand after a build:
#
#   top_builddir=BUILD_DIR tests/integration/bench_refuses_build.sh
#
# Exit status 0 pass, 1 fail.  A case is one line of fields separated by
# '|':
#
#   SCRIPTS | C | CFLAGS | WARN_CFLAGS | LDFLAGS | MAKE_CFLAGS
#
# For each, a fake tree whose Makefile records CFLAGS, WARN_CFLAGS and
# LDFLAGS as configure writes them: scripts/build_kind.sh must call it
# SCRIPTS, and tests/perf/sidebyside.sh and degraded.sh must refuse it
# (exit 2, the helper's message) unless it is optimised.  Then
# src/tools/build_kind.c, compiled with those flags and MAKE_CFLAGS (flags
# given to make alone, which no Makefile records) and with
# RPMEM_BUILD_KIND defined as configure defines it, must call it C and
# refuse it (exit 3, the same message) unless optimised, and only warn
# under RPMEM_BENCH_ANY_BUILD=1.  Last, the tree's own `rpmem bench`
# refuses or runs as the helper says this tree is.
# shellcheck disable=SC2016 # check evaluates its single-quoted condition
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=../common/tu.sh
. "$(dirname "${BASH_SOURCE[0]}")/../common/tu.sh"
rpmem=$top_builddir/rpmem
tu_need_built "$rpmem"
# shellcheck source-path=SCRIPTDIR source=../../scripts/build_kind.sh
. "$top_srcdir/scripts/build_kind.sh"
tu_tmp kind

cases=$(cat <<'EOF'
optimised | optimised | -g -O2 | -Wall -Werror | |
coverage | coverage | -g -O0 --coverage -fprofile-update=single | -Wall | --coverage |
sanitizers | sanitizers | -g -O1 | -Wall -fsanitize=address,undefined | -fsanitize=address,undefined |
sanitizers | sanitizers | -g -O2 -fsanitize=thread | -Wall | -fsanitize=thread |
unoptimised | unoptimised | -g -O0 | -Wall | |
unoptimised | unoptimised | -g | -Wall | |
unoptimised | unoptimised | -O2 -Og | -Wall | |
optimised | optimised | -O0 -O3 | -Wall | |
# `make CFLAGS=-O0` in a tree configured -O2: only the C side sees it
optimised | unoptimised | -g -O2 | -Wall | | -O0
EOF
)

# C program: build_kind.c as rpmem bench uses it
cat >"$tmp/main.c" <<'EOF'
#include <stdio.h>
#include "build_kind.h"
int main(void)
{
	if (build_kind_check("rpmem bench"))
		return EXIT_REFUSED;
	puts(build_kind());
	return 0;
}
EOF

# trim -- $1 without leading and trailing blanks
trim() {
	local s=$1
	s=${s#"${s%%[![:space:]]*}"}
	printf '%s' "${s%"${s##*[![:space:]]}"}"
}

n=0
# check -- a case's condition $1 (evaluated here) holds, else its
# failure $2 is counted
check() {
	n=$((n + 1))
	if ! eval "$1"; then
		tu_fail "case $i: $2"
		[[ -s $tmp/err ]] && sed 's/^/  stderr: /' "$tmp/err"
	fi
	return 0
}

i=0
while IFS='|' read -r skind ckind cflags wflags ldflags mflags; do
	[[ -z $skind || $skind == '#'* ]] && continue
	i=$((i + 1))
	skind=$(trim "$skind") ckind=$(trim "$ckind")
	cflags=$(trim "$cflags") wflags=$(trim "$wflags")
	ldflags=$(trim "$ldflags") mflags=$(trim "$mflags")
	tree=$tmp/tree$i
	mkdir -p "$tree"
	printf 'CC = gcc\nCFLAGS = %s\nLDFLAGS = %s\nWARN_CFLAGS = %s\n' \
		"$cflags" "$ldflags" "$wflags" >"$tree/Makefile"
	: >"$tmp/err"
	check '[[ $(build_kind_tree "$tree") == "$skind" ]]' \
		"the helper says $(build_kind_tree "$tree"), not $skind"
	if [[ $skind != optimised ]]; then
		want=$(build_kind_message "$tree" "$skind")
		for s in sidebyside degraded; do
			tu_try env top_builddir="$tree" \
				"$top_srcdir/tests/perf/$s.sh" --quick
			check '[[ $rc == 2 && $(<"$tmp/err") == "$s.sh: $want" ]]' \
				"$s.sh exits $rc, wanted 2 and the helper's line"
		done
	fi
	# shellcheck disable=SC2086 # flags are words
	tu_try "${CC:-cc}" -std=gnu11 $cflags $wflags $mflags \
		-DRPMEM_BUILD_KIND="\"$(build_kind_of "$cflags $wflags $ldflags")\"" \
		-I"$top_srcdir/src/tools" -o "$tree/kind" "$tmp/main.c" \
		"$top_srcdir/src/tools/build_kind.c" $ldflags
	check '[[ $rc == 0 ]]' "build_kind.c does not build with these flags"
	[[ $rc == 0 ]] || continue
	tu_try env -u RPMEM_BENCH_ANY_BUILD ASAN_OPTIONS=detect_leaks=0 \
		"$tree/kind"
	if [[ $ckind == optimised ]]; then
		check '[[ $rc == 0 && $(<"$tmp/out") == optimised &&
			! -s $tmp/err ]]' "build_kind.c refuses an optimised build"
		continue
	fi
	want="rpmem bench: $(build_kind_message "this rpmem" "$ckind")"
	check '[[ $rc == 3 && $(<"$tmp/err") == "$want" ]]' \
		"build_kind.c exits $rc, wanted 3 and the helper's line"
	tu_try env RPMEM_BENCH_ANY_BUILD=1 ASAN_OPTIONS=detect_leaks=0 \
		"$tree/kind"
	check '[[ $rc == 0 && $(<"$tmp/out") == "$ckind" &&
		$(<"$tmp/err") == "rpmem bench: warning: this rpmem is"* &&
		$(<"$tmp/err") == *"(measuring anyway: RPMEM_BENCH_ANY_BUILD=1)" ]]' \
		"RPMEM_BENCH_ANY_BUILD=1 does not turn the refusal into a warning"
done <<<"$cases"

# this tree's rpmem bench, on a set without a remote replica: refused
# before the set is read, or failing on it
kind=$(build_kind_tree "$top_builddir")
printf 'PMEMPOOLSET\n8M %s/local.part0\n' "$tmp" >"$tmp/local.set"
i=tree
for any in unset 0 1; do
	env=(env -u RPMEM_BENCH_ANY_BUILD)
	[[ $any == unset ]] || env+=("RPMEM_BENCH_ANY_BUILD=$any")
	tu_try "${env[@]}" "$rpmem" bench --quick "$tmp/local.set"
	if [[ $kind != optimised && $any != 1 ]]; then
		# shellcheck disable=SC2034 # check reads it
		want="rpmem bench: $(build_kind_message "this rpmem" "$kind")"
		check '[[ $rc == 3 && $(<"$tmp/err") == "$want" ]]' \
			"$kind tree, RPMEM_BENCH_ANY_BUILD $any: rpmem bench" \
			"exits $rc, wanted 3 and the helper's line"
	else
		check '[[ $rc == 1 ]] && grep -q "has no remote replica" \
			"$tmp/err"' "$kind tree, RPMEM_BENCH_ANY_BUILD $any:" \
			"rpmem bench exits $rc, wanted 1 for want of a replica"
	fi
done

echo "bench_refuses_build.sh: $((n - TU_FAILED)) of $n checks passed" \
	"(this tree: $kind)"
((TU_FAILED == 0))
