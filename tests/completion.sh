#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# completion.sh -- rpmem's bash completion offers the subcommands, each
# subcommand's options, nothing for an option's value, and pool set files
# for POOLSET; asked of the built rpmem.
set -uo pipefail

: "${top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
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

# line | expected completions, sorted, space separated
cases=(
	"rpmem |--help --version bench create info rm sync verify"
	"rpmem ve|verify"
	"rpmem info --|--help --json"
	"rpmem verify -|--help --json"
	"rpmem rm -|--help -f"
	"rpmem sync -|--help"
	"rpmem bench --la|--lanes"
	"rpmem bench --lanes |"
	"rpmem create $tmp/sets/|$tmp/sets/app.set $tmp/sets/sub"
	"rpmem info --json $tmp/sets/a|$tmp/sets/app.set"
)
fail=0
for row in "${cases[@]}"; do
	line=${row%%|*}
	want=${row#*|}
	read -ra words <<<"$line"
	[[ $line == *" " ]] && words+=("")
	got=$(offered "${words[@]}")
	if [[ ${got% } != "$want" ]]; then
		echo "FAIL: '$line' offers '${got% }', want '$want'"
		fail=1
	fi
done
[[ $(complete -p rpmem 2>/dev/null) == "complete -F _rpmem rpmem" ]] || {
	echo "FAIL: the file does not bind _rpmem to rpmem"
	fail=1
}
((fail)) || echo "PASS: ${#cases[@]} completions of rpmem"
exit $fail
