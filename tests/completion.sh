#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# completion.sh -- rpmem's bash completion offers the subcommands, each
# subcommand's options (exactly those its usage line shows), nothing for
# an option's value but a FILE's, and pool set files for POOLSET and
# FILE; asked of the built rpmem.
set -uo pipefail

: "${top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
# shellcheck source-path=SCRIPTDIR source=common/tu.sh
. "$(dirname "${BASH_SOURCE[0]}")/common/tu.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rpmem-completion.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/sets/sub"
: >"$tmp/sets/app.set"
: >"$tmp/sets/other.txt"

# shellcheck source=../src/tools/bash-completion/rpmem
. "$top_srcdir/src/tools/bash-completion/rpmem"

# offered -- the sorted completions of the command line "$@" (the last
# word is the one being completed)
offered() {
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMPREPLY=()
	_rpmem "$top_builddir/rpmem" 2>/dev/null
	printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' '
}

# line | expected completions, sorted, space separated ("..." at the end:
# at least these)
cases=(
	"rpmem |--help --version bench create demote fence-peer info outdate promote rm status sync verify ..."
	"rpmem fe|fence-peer"
	"rpmem outdate --|--clear --help --master ..."
	"rpmem ve|verify"
	"rpmem info --|--help --json ..."
	"rpmem verify --j|--json"
	"rpmem rm -|--force --help -f ..."
	"rpmem bench --la|--lanes"
	"rpmem bench --lanes |"
	"rpmem outdate --master |"
	"rpmem promote --end-sessions --master-set $tmp/sets/a|$tmp/sets/app.set"
	"rpmem promote -m $tmp/sets/|$tmp/sets/app.set $tmp/sets/sub"
	"rpmem create $tmp/sets/|$tmp/sets/app.set $tmp/sets/sub"
	"rpmem info --json $tmp/sets/a|$tmp/sets/app.set"
	"rpmem status --pr|--prometheus"
	"rpmem status --prometheus --output $tmp/sets/a|$tmp/sets/app.set"
)
# every subcommand: exactly the options its usage line shows, and --help
for cmd in create info verify sync rm bench promote demote outdate \
		fence-peer status; do
	opts=$("$top_builddir/rpmem" "$cmd" --help | sed -n '1s/^usage: //p' |
		grep -o '\[-[^]]*\]' | grep -o -- '-[-a-z]*' | sort)
	cases+=("rpmem $cmd -|$(printf '%s\n' --help $opts | sort | tr '\n' ' ')")
done
for row in "${cases[@]}"; do
	line=${row%%|*}
	want=${row#*|}
	want=${want% }
	read -ra words <<<"$line"
	[[ $line == *" " ]] && words+=("")
	got=$(offered "${words[@]}")
	got=${got% }
	if [[ $want == *" ..." ]]; then
		# at least these: each expected word is offered
		for w in ${want% ...}; do
			[[ " $got " == *" $w "* ]] && continue
			tu_fail "'$line' offers '$got', without '$w'"
		done
	elif [[ $got != "$want" ]]; then
		tu_fail "'$line' offers '$got', want '$want'"
	fi
done
[[ $(complete -p rpmem 2>/dev/null) == "complete -F _rpmem rpmem" ]] || {
	tu_fail "the file does not bind _rpmem to rpmem"
}
((TU_FAILED)) || echo "PASS: ${#cases[@]} completions of rpmem"
exit $((TU_FAILED != 0))
