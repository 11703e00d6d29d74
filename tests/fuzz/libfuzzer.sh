#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# libfuzzer.sh -- the fuzz harnesses under clang's coverage-guided libFuzzer
# with ASan and UBSan, each for FUZZ_SECONDS over a copy of its corpus
#
#   tests/fuzz/libfuzzer.sh [--merge] [NAME...]     NAME: proto poolset
#                                                   target session
#
# Each harness is built straight from the sources its Makefile.am target
# links (libcommon; fuzz_session also librpmemd and libpset) into a
# scratch dir, then fuzzed there (-max_len is driver.c's INPUT_MAX, so
# whatever it finds run.sh can replay).  The source corpus is only read,
# unless --merge: then the inputs that add coverage are minimised into
# tests/fuzz/corpus/NAME (-merge=1), each kept below driver.c's
# SEEDS_MAX.  A crash, leak, timeout or sanitizer report fails (exit 1)
# with the report and the reproducer, kept in FUZZ_ARTIFACTS (default
# ./fuzz-artifacts); exit 77 without libFuzzer.  FUZZ_FLAGS: more
# libFuzzer flags for the runs (e.g. -use_value_profile=1).
# Not in TESTS (too slow for CI); `make check` runs run.sh instead.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
seconds=${FUZZ_SECONDS:-60}
artifacts=${FUZZ_ARTIFACTS:-$PWD/fuzz-artifacts}
cc=${CC_FUZZ:-clang}
read -ra flags <<<"${FUZZ_FLAGS:-}"
# shellcheck disable=SC2054 # commas within one flag
san=(-g -O1 -fsanitize=fuzzer,address,undefined
	-fno-sanitize-recover=undefined -fno-omit-frame-pointer)
all=(proto poolset target session)
merge=0
names=()
for arg in "$@"; do
	case $arg in
	--merge) merge=1 ;;
	proto | poolset | target | session) names+=("$arg") ;;
	*)
		echo "usage: $0 [--merge] [${all[*]}]..." >&2
		exit 2
		;;
	esac
done
((${#names[@]})) || names=("${all[@]}")

scratch=$(mktemp -d "${TMPDIR:-/tmp}/libfuzzer.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

# libFuzzer's runtime is a separate package on Debian (libclang-rt-dev)
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n);
int LLVMFuzzerTestOneInput(const char *d, unsigned long n)
{ return d && n; }' >"$scratch/probe.c"
if ! "$cc" "${san[@]}" "$scratch/probe.c" -o "$scratch/probe" \
	>"$scratch/probe.log" 2>&1; then
	echo "SKIP: $cc has no libFuzzer (-fsanitize=fuzzer):" >&2
	cat "$scratch/probe.log" >&2
	exit 77
fi

read -ra pkg_cflags <<<"$(pkg-config --cflags libfabric libpmem libcrypto)"
read -ra pkg_libs <<<"$(pkg-config --libs libfabric libpmem libcrypto)"
cflags=(-std=gnu11 -D_GNU_SOURCE -DSRCVERSION='"fuzz"'
	-I"$top/src/include" -I"$top/src/common" -I"$top/src/pset"
	-I"$top/src/rpmemd" -I/usr/include/iniparser "${pkg_cflags[@]}")
libs=("${pkg_libs[@]}" -liniparser -lpthread)

# compile -- objects of the .c files given, in $scratch/obj; prints them
compile() {
	local src obj
	for src in "$@"; do
		obj=$scratch/obj/${src#"$top"/}
		obj=${obj%.c}.o
		if [[ ! -e $obj ]]; then
			mkdir -p "$(dirname "$obj")"
			"$cc" "${san[@]}" "${cflags[@]}" -c "$src" -o "$obj"
		fi
		echo "$obj"
	done
}

# build -- the harness NAME, linked as its Makefile.am target is
build() {
	local name=$1 srcs
	srcs=("$top/tests/fuzz/fuzz_$name.c" "$top"/src/common/*.c)
	if [[ $name == session ]]; then
		srcs+=("$top"/src/pset/*.c)
		for f in "$top"/src/rpmemd/*.c; do
			[[ $f == */main.c ]] || srcs+=("$f")
		done
	fi
	local objs
	mapfile -t objs < <(compile "${srcs[@]}")
	"$cc" "${san[@]}" "${objs[@]}" "${libs[@]}" -o "$scratch/fuzz_$name"
}

# report -- the figures of a run of $2 seconds: executions, coverage
report() {
	local log=$1 runs stats
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	stats=$(grep -E '^#[0-9]+' "$log" | grep -o 'cov: [0-9]* ft: [0-9]*' |
		tail -1 || true)
	echo "${runs:-?} runs in $2 s, ${stats:-no stats}"
}

# merge_corpus -- the inputs of $2 that reach new edges, minimised into
# the source corpus of $1.  Edges only (-use_counters=0): hit counts
# too would take the corpus past driver.c's SEEDS_MAX and make run.sh's
# bounded rounds slower and shallower (fewer of them per deep seed).
merge_corpus() {
	local name=$1 work=$2 src=$top/tests/fuzz/corpus/$1
	local into=$scratch/merge-$1 n
	cp -r "$src" "$into"
	"$scratch/fuzz_$name" -merge=1 -use_counters=0 -max_len=8192 \
		-timeout=10 -rss_limit_mb=2048 "$into" "$work" \
		>"$into.log" 2>&1
	n=$(find "$into" -type f | wc -l)
	if ((n >= 200)); then
		echo "   not merged: corpus/$name would have $n files" >&2
		return 1
	fi
	echo "   merged: corpus/$name $(find "$src" -type f | wc -l) -> $n files"
	cp -n "$into"/* "$src"/
}

fail=0
for name in "${names[@]}"; do
	echo "== fuzz_$name: build"
	build "$name"
	work=$scratch/corpus-$name
	cp -r "$top/tests/fuzz/corpus/$name" "$work"
	mkdir -p "$scratch/crash-$name"
	log=$scratch/$name.log
	echo "== fuzz_$name: ${seconds}s"
	t0=$SECONDS
	if (cd "$scratch" && "$scratch/fuzz_$name" -max_total_time="$seconds" \
		-timeout=10 -rss_limit_mb=2048 -max_len=8192 \
		-print_final_stats=1 "${flags[@]}" \
		-artifact_prefix="$scratch/crash-$name/" "$work") \
		>"$log" 2>&1; then
		echo "PASS fuzz_$name: $(report "$log" $((SECONDS - t0)))"
	else
		echo "FAIL fuzz_$name: $(report "$log" $((SECONDS - t0)))"
		# the sanitizer's or libFuzzer's report, from its first line
		awk '/==ERROR|runtime error|^ALARM|deadly signal|-timeout/ \
			{ p = 1 } p' "$log" | head -100
		mkdir -p "$artifacts"
		for f in "$scratch/crash-$name"/*; do
			[[ -e $f ]] || continue
			cp "$f" "$artifacts/$name-${f##*/}"
			echo "reproducer: $artifacts/$name-${f##*/}"
			echo "  replay: tests/fuzz/fuzz_$name -n 0 FILE" \
				"(an --enable-sanitizers build)"
		done
		fail=1
		continue
	fi
	((merge)) || continue
	merge_corpus "$name" "$work" || fail=1
done
exit $fail
