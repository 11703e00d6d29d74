#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# cli_conventions.sh -- the command-line conventions of every rpmem
# subcommand, one table of cases run by one loop
#
# Run by `make check` from the build tree, or by hand after a build:
#
#   top_builddir=BUILD_DIR tests/integration/cli_conventions.sh
#
# Exit status 0 pass, 1 fail.  No sshd is needed: the pool set used has
# only a local master, which every subcommand accepts (bench then fails
# for want of a remote replica, after its options were accepted).
#
# A case is one line of fields separated by '|':
#
#   STATUS | STDOUT | STDERR | ARGS
#
# STATUS is the exit status wanted.  STDOUT and STDERR each say what the
# stream must hold: '-' nothing, '@help' the help layout of the
# subcommand (usage line, blank line, description, blank line,
# "options:", one line per option), '@usage MESSAGE' exactly two lines,
# "rpmem CMD: MESSAGE" and the usage line, anything else an extended
# regular expression some line must match (MESSAGE may be the start of
# the message only).  ARGS are words after `rpmem`.  {set} stands for the
# pool set, in ARGS and in what the streams must hold; lines with {cmd}
# are run once for each subcommand.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=../common/tu.sh
. "$(dirname "${BASH_SOURCE[0]}")/../common/tu.sh"
rpmem=$top_builddir/rpmem
tu_need_built "$rpmem"
tu_tmp conv
set_file=$tmp/local.set
printf 'PMEMPOOLSET\n8M %s/local.part0\n' "$tmp" >"$set_file"

# bench refuses a coverage build before it reads the set, which these
# cases are not about (tests/integration/bench_refuses_build.sh is)
export RPMEM_BENCH_ANY_BUILD=1
cmds=(create info verify sync rm bench promote demote)
version="^rpmem version [0-9]+\.[0-9]+\.[0-9]+\$"

cases=$(cat <<'EOF'
# every subcommand (each rpmem process costs ~0.2 s here, mostly the
# start-up of the libraries libfabric pulls in: keep this short)
0 | @help | - | {cmd} {set} --help
0 | VERSION | - | {cmd} {set} --version
2 | - | @usage unknown option '--bogus' | {cmd} --bogus {set}
2 | - | @usage unknown option '--bogus' | {cmd} {set} --bogus=1
2 | - | @usage unknown option '-Z' | {cmd} {set} -Z
2 | - | @usage POOLSET expected | {cmd}
2 | - | @usage unexpected operand 'extra' | {cmd} {set} extra
1 | - | --version | {cmd} -- --version
# the top level
0 | ^  {cmd} +[a-z] | - | -h
0 | VERSION | - | --version
2 | - | ^rpmem: a command is expected$ |
2 | - | ^rpmem: unknown command 'bogus'$ | bogus
2 | - | ^rpmem: unknown option '--json' | --json info {set}
2 | - | ^usage: rpmem \[--help . --version\] COMMAND | --json info {set}
# each subcommand's own options, before, after and between operands,
# as --opt=value and --opt value; in order: the pool exists from create
# to rm
0 | ^created local replica: | - | create {set}
0 | ^\{"poolset": | - | info {set} --json
0 | ^\{"poolset": | - | info --json {set}
0 | ^\{"poolset": | - | info --json -- {set}
2 | - | @usage option '--json' takes no argument | info --json=yes {set}
0 | @help | - | info --json {set} -h --bogus
2 | - | @usage unknown option '--bogus' | info --json {set} --bogus -h
0 | VERSION | - | sync -V {set}
2 | - | @usage unexpected operand '{set}' | sync {set} -- {set}
0 | ^replica 0 \(local\): master$ | - | verify {set} --strict
0 | "result": "equal", "strict": true, | - | verify --strict {set} --json
0 | "strict": false, "skipped_bytes": 0, | - | verify --json {set}
0 | ^sync: all 1 replica\(s\) of | - | sync {set} --strict
0 | ^sync: all 1 replica\(s\) of | - | sync -- {set}
2 | - | @usage option '--master-set' needs an argument | promote {set} -e --master-set
1 | - | 0 REPLICA lines .* nothing written$ | promote -e --master-set={set} {set}
1 | - | 0 REPLICA lines .* nothing written$ | promote {set} -m {set} --end-sessions
2 | - | @usage option '--lanes' needs an argument | bench {set} --lanes
2 | - | @usage --lanes wants a number from 1 to 64 | bench {set} --lanes=0
2 | - | ^rpmem bench: --lanes wants .*, not '0'$ | bench {set} --lanes=0
2 | - | ^rpmem bench: --lanes wants .*, not '65'$ | bench --lanes 65 {set}
2 | - | ^rpmem bench: --lanes wants .*, not '-1'$ | bench --lanes=-1 {set}
2 | - | ^rpmem bench: --lanes wants .*, not '2x'$ | bench --lanes 2x {set}
1 | - | has no remote replica | bench --quick {set} --lanes 2 --json
1 | - | has no remote replica | bench --lanes=2 {set}
0 | ^removed .*local\.part0$ | - | rm {set}
1 | - | local\.part0: No such file | rm {set}
0 | - | - | rm {set} -f
0 | - | - | rm --force {set}
EOF
)

# lines_are -- file $1 holds exactly the lines $2...
lines_are() {
	local f=$1
	shift
	diff <(printf '%s\n' "$@") "$f" >/dev/null
}

# an option in a help: [-c, ]--name [ARG]  what it does
opt_line='^  (-[a-zA-Z], |    )--[a-z][-a-z]*( [A-Z]+)? +[a-z]'

# help_ok -- file $1 is the help of subcommand $2
help_ok() {
	local f=$1 cmd=$2
	local -a l
	mapfile -t l <"$f"
	((${#l[@]} >= 7)) &&
		[[ ${l[0]} == "usage: rpmem $cmd "* && -z ${l[1]} &&
			${l[2]} =~ ^[A-Z] ]] &&
		grep -qx -- 'options:' "$f" &&
		[[ -z $(grep -B1 -x 'options:' "$f" | head -n 1) ]] &&
		grep -Eq -- '^  -h, --help +print' "$f" &&
		grep -Eq -- '^  -V, --version +print' "$f" &&
		! sed -n '/^options:$/,$p' "$f" | tail -n +2 |
			grep -Ev -- "$opt_line"
}

# stream_ok -- file $1 holds what spec $2 says, for subcommand $3
stream_ok() {
	local f=$1 spec=$2 cmd=$3
	case $spec in
	-) [[ ! -s $f ]] ;;
	@help) help_ok "$f" "$cmd" ;;
	@usage*)
		local -a l
		mapfile -t l <"$f"
		((${#l[@]} == 2)) &&
			[[ ${l[0]} == "rpmem $cmd: ${spec#@usage }"* &&
				${l[1]} == "usage: rpmem $cmd "* ]] ;;
	VERSION) lines_are "$f" "$("$rpmem" --version)" &&
		grep -Eq -- "$version" "$f" ;;
	*) grep -Eq -- "$spec" "$f" ;;
	esac
}

# trim -- $1 without leading and trailing blanks
trim() {
	local s=$1
	s=${s#"${s%%[![:space:]]*}"}
	printf '%s' "${s%"${s##*[![:space:]]}"}"
}

# expand -- the cases, {cmd} lines once per subcommand
expand() {
	local line c
	while IFS= read -r line; do
		[[ -z $line || $line == '#'* ]] && continue
		if [[ $line == *'{cmd}'* ]]; then
			for c in "${cmds[@]}"; do
				printf '%s\n' "${line//\{cmd\}/$c}"
			done
		else
			printf '%s\n' "$line"
		fi
	done <<<"$cases"
}

n=0
while IFS='|' read -r want out err args; do
	want=$(trim "$want")
	out=$(trim "${out//\{set\}/$set_file}")
	err=$(trim "${err//\{set\}/$set_file}")
	args=$(trim "${args//\{set\}/$set_file}")
	read -r -a argv <<<"$args"
	cmd=${argv[0]:-}
	n=$((n + 1))
	set +e
	"$rpmem" "${argv[@]}" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	set -e
	why=
	[[ $rc == "$want" ]] || why="exit status $rc, wanted $want"
	[[ -n $why ]] || stream_ok "$tmp/out" "$out" "$cmd" ||
		why="stdout is not '$out'"
	[[ -n $why ]] || stream_ok "$tmp/err" "$err" "$cmd" ||
		why="stderr is not '$err'"
	if [[ -n $why ]]; then
		tu_fail "rpmem $args: $why"
		printf -- '--- stdout:\n%s\n--- stderr:\n%s\n' \
			"$(cat "$tmp/out")" "$(cat "$tmp/err")"
	fi
done < <(expand)

# every command `rpmem -h` lists has its text in src/tools/help.txt
all=$("$rpmem" -h | sed -n '/^commands:$/,/^$/s/^  \([a-z][-a-z]*\) .*/\1/p')
[[ $all == *fence-peer* ]] || tu_fail "rpmem -h lists no commands: $all"
for c in $all; do
	n=$((n + 1))
	"$rpmem" "$c" --help >"$tmp/out" && help_ok "$tmp/out" "$c" ||
		tu_fail "rpmem $c --help: no help layout: $(cat "$tmp/out")"
done

echo "cli_conventions.sh: $((n - TU_FAILED)) of $n cases passed"
((TU_FAILED == 0))
