#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# citations.sh -- every scenario identifier and document the tree cites
# is defined inside it: each identifier is a row of doc/scenarios.md,
# each "pmdk-interop N.N" a section of doc/pmdk-interop.md, each
# "architecture decision N" a numbered decision of doc/architecture.md,
# each *.md named exists, and nothing cites the team's notes outside the
# repository (RELIABILITY, DESIGN, PACEMAKER.md, STYLE.md, the facts
# file, ../shared/ but for the PMDK peer's binaries).
#
#   top_srcdir=SRC_DIR tests/lint/citations.sh [FILE...]
#
# Without FILEs it reads src/, tests/, man/, scripts/, doc/, README.md,
# Makefile.am and configure.ac of top_srcdir.  Needs no build.
set -uo pipefail

: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
# shellcheck source=tests/common/tu.sh
. "$top_srcdir/tests/common/tu.sh"
cd "$top_srcdir" || exit 1
self=tests/lint/citations.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rpmem-citations.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The scenario families of doc/scenarios.md: R S F D A L (reliability),
# P C (cluster), G (performance goals).  K, the other goal label, is a
# bare letter and not looked for.  A token is one of these letters and
# one or two digits standing alone (grep -w), so 0xD1, -O0, AES256 or
# SHA1 never match; other letters (K1, O2, T0, U1, N4...) are not ids.
ID_RE='[RSFDALPCG][0-9]{1,2}'
# Tokens of that form that are not scenario ids, with where and why:
#   C11             the ISO C standard ("C11 6.2.4")
#   check_gen.c G*  that test's generation constants G1..G9 (#define)
not_an_id() {
	local file=$1 tok=$2
	[[ $tok == C11 ]] && return 0
	[[ $file == tests/unit/check_gen.c && $tok == G* ]] && return 0
	return 1
}

# the files read: sources, scripts, man pages and docs, never what a
# build or a test run leaves beside them (objects, logs, binaries)
if (($#)); then
	files=("$@")
else
	mapfile -t files < <(
		find src tests man scripts doc -type f \( \
			-name '*.[ch]' -o -name '*.sh' -o -name '*.md' \
			-o -name '*.in' -o -name '*.map' -o -name '*.py' \
			-o -name '*.supp' -o -name '*.conf' -o -name '*.timer' \
			-o -name '*.[1-8]' -o -path 'src/ocf/*' \
			-o -path 'src/tools/bash-completion/*' \
			-o -name '*.txt' -o -name '*.awk' \) \
			! -path "$self" ! -path 'tests/fuzz/corpus/*' -print |
			sort
		printf '%s\n' README.md Makefile.am configure.ac)
fi

# defined -- the ids doc/scenarios.md defines, one a line
sed -n 's/^| \([A-Z][0-9]*\) |.*/\1/p' doc/scenarios.md | sort >"$tmp/ids"
# the section numbers of doc/pmdk-interop.md ("## 4." is 4, "### 4.7" 4.7)
sed -n -E 's/^#{2,3} ([0-9]+(\.[0-9]+)?)\.? .*/\1/p' doc/pmdk-interop.md |
	sort -u >"$tmp/sections"
# the decisions of doc/architecture.md ("1. **Drop-in ABI.**")
sed -n -E 's/^([0-9]+)\. \*\*.*/\1/p' doc/architecture.md | sort -u \
	>"$tmp/decisions"

# enough -- the tree and the definitions were found at all
enough() {
	local n
	n=$(wc -l <"$tmp/ids")
	((${#files[@]} > 0 && n >= 40)) || {
		echo "    # ${#files[@]} files read, $n ids defined"
		return 1
	}
	[[ -s $tmp/sections && -s $tmp/decisions ]]
}

# ids_unique -- doc/scenarios.md defines each id once
ids_unique() {
	local dup
	dup=$(uniq -d "$tmp/ids")
	[[ -z $dup ]] && return 0
	echo "    # defined twice: ${dup//$'\n'/ }"
	return 1
}

# ids_defined -- every id cited is a row of doc/scenarios.md
ids_defined() {
	local bad=0 file line tok
	while IFS=: read -r file line tok; do
		not_an_id "$file" "$tok" && continue
		grep -qx -- "$tok" "$tmp/ids" && continue
		echo "    # $file:$line: $tok is not defined in" \
			"doc/scenarios.md"
		bad=1
	done < <(grep -H -n -o -w -E "$ID_RE" -- "${files[@]}" 2>/dev/null)
	return $bad
}

# no_outside -- no citation of a document outside the repository; the
# PMDK peer's binaries in ../shared/pmdk-1.12.1 are looked for there at
# run time (doc/pmdk-interop.md, "Sources"), which is no citation, so
# that path is taken out of each line before it is looked at
OUTSIDE_RE='RELIABILITY|\bDESIGN\b|PACEMAKER\.md|STYLE\.md|pmdk-rpmem-facts'
OUTSIDE_RE+='|\bfacts (section |§)?[0-9]|\(facts$|\.\./shared/'
no_outside() {
	local hits line
	hits=$(grep -H -n -E "$OUTSIDE_RE" -- "${files[@]}" 2>/dev/null |
		sed -E 's#\.\./shared/pmdk-1\.12\.1([^A-Za-z0-9.-]|$)#\1#g' |
		grep -E "$OUTSIDE_RE")
	[[ -z $hits ]] && return 0
	while IFS= read -r line; do
		echo "    # outside: $line"
	done <<<"$hits"
	return 1
}

# each_cite MODE RE CHECK -- CHECK FILE LINE CITE for each match of the
# grep pattern RE (MODE -E or -P) in the files; false when one was not
each_cite() {
	local bad=0 file line cite
	while IFS=: read -r file line cite; do
		"$3" "$file" "$line" "$cite" || bad=1
	done < <(grep -H -n -o "$1" -- "$2" "${files[@]}" 2>/dev/null)
	return $bad
}

# docs_exist -- every *.md named exists: a path from top_srcdir or from
# the citing file's directory, a bare name in doc/, at the top or there.
# A name after $ or { is a variable's file, not a citation; and
# doc/pmdk-interop.md names PMDK's own files (doc/poolset/poolset.5.md)
doc_exists() {
	local file=$1 name=${3#./} dir
	[[ $file == doc/pmdk-interop.md ]] && return 0
	dir=$(dirname "$file")
	[[ -f $name || -f $dir/$name || -f doc/$name ]] && return 0
	echo "    # $file:$2: $name does not exist"
	return 1
}
docs_exist() {
	each_cite -P '(?<![$\w/{}.-])[\w./-]*[\w-]\.md\b' doc_exists
}

# sections_exist -- every "pmdk-interop N[.N][-N[.N]]" is a section
section_exists() {
	local bad=0 n
	while read -r n; do
		grep -qxF -- "$n" "$tmp/sections" && continue
		echo "    # $1:$2: section $n is not in doc/pmdk-interop.md"
		bad=1
	done < <(grep -o -E '[0-9]+(\.[0-9]+)?' <<<"${3#pmdk-interop}")
	return $bad
}
sections_exist() {
	local re='pmdk-interop(\.md)? (§ ?)?[0-9]+(\.[0-9]+)?'
	re+='(-[0-9]+(\.[0-9]+)?)?'
	each_cite -E "$re" section_exists
}

# decisions_exist -- every "architecture decision N" is numbered there
decision_exists() {
	grep -qxF -- "${3##* }" "$tmp/decisions" && return 0
	echo "    # $1:$2: $3 is not in doc/architecture.md"
	return 1
}
decisions_exist() {
	each_cite -E 'architecture(\.md)? decision [0-9]+' decision_exists
}

# caught -- each check fails on a file with one bad citation of its kind
caught() {
	local f=$tmp/planted.c check text
	while IFS='|' read -r check text; do
		printf '/* %s */\n' "$text" >"$f"
		if (files=("$f") && "$check" >/dev/null); then
			echo "    # $check passed a file citing: $text"
			return 1
		fi
	done <<-'EOF'
	ids_defined|scenario R99 and D7-D42
	no_outside|as RELIABILITY R1 requires
	no_outside|DESIGN decision 3
	no_outside|see ../shared/PACEMAKER.md
	no_outside|(facts 4.7)
	docs_exist|doc/nonesuch.md
	sections_exist|pmdk-interop 4.99
	sections_exist|pmdk-interop 4.5-4.42
	decisions_exist|architecture decision 99
	EOF
}

tu_check "the tree and doc/ were read" enough
tu_check "each check catches a planted bad citation" caught
tu_check "doc/scenarios.md defines each id once" ids_unique
tu_check "every scenario id cited is defined in doc/scenarios.md" ids_defined
tu_check "no citation of a document outside the repository" no_outside
tu_check "every *.md named exists" docs_exist
tu_check "every pmdk-interop section cited exists" sections_exist
tu_check "every architecture decision cited exists" decisions_exist
tu_summary
