#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# claim.sh -- the fence constraint's third expression carries the data
# generation a master gave (rpmem-ocf.sh, rpmem_claim_xml) only when it
# is 16 lower-case hex digits, the form rpmemd writes: anything else
# becomes gen-none, which no copy's history can hold, so a malformed
# generation never lets a fenced copy lift the fence as outlived.  Runs
# the sourced library in this shell: no cluster needed.
set -uo pipefail

: "${top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
# shellcheck source=../common/tu.sh
. "$top_srcdir/tests/common/tu.sh"
# shellcheck source=../../src/ocf/rpmem-ocf.sh
. "$top_srcdir/src/ocf/rpmem-ocf.sh"

# each row: the generation given | the value the expression must carry
rows=(
	"0123456789abcdef|gen-0123456789abcdef"
	"|gen-none"
	"none|gen-none"
	"0123456789ABCDEF|gen-none"
	"0123456789abcde|gen-none"
	"0123456789abcdef0|gen-none"
	"0123456789abcdeg|gen-none"
	"0123456789abcde |gen-none"
	"*|gen-none"
)

# carries GEN WANT -- rpmem_claim_xml's gen expression for GEN is WANT,
# and its claim expression is the claim given
carries() {
	local xml
	xml=$(rpmem_claim_xml clone claim-t1 "$1")
	[[ $xml == *"id=\"${RPMEM_FENCE_PREFIX}clone-gen\""*"value=\"$2\""* &&
		$xml == *"id=\"${RPMEM_FENCE_PREFIX}clone-claim\""*"value=\"claim-t1\""* ]] ||
		{ echo "  '$1' gave: $xml"; return 1; }
}

for row in "${rows[@]}"; do
	IFS='|' read -r gen want <<<"$row"
	tu_check "generation '$gen' -> $want" carries "$gen" "$want"
done
tu_summary
