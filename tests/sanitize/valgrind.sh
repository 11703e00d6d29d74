#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# valgrind.sh -- rpmemd under valgrind's memcheck for end-to-end sessions:
# rpmem_create then rpmem_open through a private sshd on loopback, each
# with persists on two lanes, a read back and a close (the client is R17's
# tests/alloc/alloc_client, run here without any failure)
#
#   top_builddir=BUILD_DIR tests/sanitize/valgrind.sh
#
# Passes when both sessions end "ok" and each rpmemd's memcheck log says
# it ran to its exit with no error and nothing definitely or indirectly
# lost.  valgrind.supp holds the suppressions, all of them for code
# outside this project.  Skipped (77) where valgrind is not installed.
set -uo pipefail

top_srcdir=${top_srcdir:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
top_builddir=$(cd "${top_builddir:-$top_srcdir}" && pwd)
export top_srcdir top_builddir
# shellcheck source-path=SCRIPTDIR source=../common/harness.sh
. "$top_srcdir/tests/common/harness.sh"

valgrind=$(command -v valgrind) || {
	echo "valgrind.sh: valgrind not installed"
	exit 77
}
client=$top_builddir/tests/alloc/alloc_client
rpmemd=$top_builddir/rpmemd
tu_need_built "$client" "$rpmemd"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rpmem-valgrind.XXXXXX")
# cleanup -- stop our sshd, drop the scratch directory
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	harness_stop_sshd "$tmp"
	rm -rf -- "$tmp"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

mkdir -p "$tmp/poolsets" "$tmp/parts" "$tmp/vg"
printf 'PMEMPOOLSET\n8M %s/parts/vg.part0\n' "$tmp" >"$tmp/poolsets/vg.set"
printf '# valgrind.sh: rpmemd reads only this file\nnthreads = 2\n' \
	>"$tmp/rpmemd.conf"
chmod 600 "$tmp/rpmemd.conf"
harness_start_sshd "$tmp" || exit 1

# the remote shell runs rpmemd under memcheck; one log per process.
# valgrind 3.19 does not know openat2 (it warns of syscall 437): rpmemd
# then takes its own component-by-component walk under poolset-dir.
# shellcheck disable=SC2054 # the commas are within valgrind's values
vg=(--tool=memcheck --leak-check=full
	--show-leak-kinds=definite,indirect
	--errors-for-leak-kinds=definite,indirect --error-exitcode=99
	--suppressions="$top_srcdir/tests/sanitize/valgrind.supp" --gen-suppressions=all
	--log-file="$tmp/vg/rpmemd.%p.log")
RPMEM_CMD="exec $(printf '%q ' "$valgrind" "${vg[@]}")"
RPMEM_CMD+=$(harness_rpmemd_cmd "$tmp/poolsets" "$tmp/rpmemd.log" \
	-c "$tmp/rpmemd.conf")
# memcheck runs rpmemd some 20 times slower: its start-up alone takes
# seconds, and a loaded CI machine adds to it
export RPMEM_CMD RPMEM_TIMEOUT=120

rc=0
for op in create open; do
	t0=$SECONDS
	out=$("$client" "$op" "$HARNESS_TARGET" vg.set $((8 << 20)) 2>&1)
	echo "valgrind.sh: $op: $out ($((SECONDS - t0)) s)"
	[[ $out == ok ]] || rc=1
done

# each rpmemd's log: ran to its exit, no error, no leak
logs=("$tmp"/vg/rpmemd.*.log)
if [[ ! -e ${logs[0]} ]]; then
	echo "valgrind.sh: FAIL: no memcheck log: rpmemd never ran under it"
	exit 1
fi
if ((${#logs[@]} != 2)); then
	echo "valgrind.sh: FAIL: ${#logs[@]} rpmemd processes, 2 expected"
	rc=1
fi
for f in "${logs[@]}"; do
	if ! grep -q 'ERROR SUMMARY: 0 errors' "$f" ||
			! grep -q 'HEAP SUMMARY' "$f"; then
		echo "valgrind.sh: FAIL: $f:"
		grep -v '^==[0-9]*== *$' "$f" | head -n 80
		rc=1
	else
		echo "valgrind.sh: $(basename "$f"):" \
			"$(sed -n 's/.*\(ERROR SUMMARY: .*\) (suppressed.*/\1/p' \
			"$f")"
	fi
done
exit $rc
