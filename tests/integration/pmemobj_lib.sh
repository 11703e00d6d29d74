# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# pmemobj_lib.sh -- pmemobj.sh's assertions, set-file writers, after-checks
#
# Sourced by pmemobj.sh after harness.sh; it defines functions only:
#
#   ok WHAT CMD...           CMD must succeed (tu.sh's tu_must)
#   ko WHAT ERE CMD...       CMD must fail (no signal), stderr matching ERE
#                            (tu_refused WHAT + ERE CMD...)
#   logged WHAT MARK ERE     the rpmemd log after MARK (from log_mark) has
#                            a line matching ERE; count_logged MARK ERE
#                            counts them
#   gone, has_size, is_pmemobj_hdr, same_bytes, removed_since
#                            tests for tu_expect (tu.sh's: TEST must
#                            hold); damage overwrites bytes
#   remote_set DESC SINGLE SIZE...
#   local_set NAME SINGLE "SIZE..." [DESC...]
#                            write a set file; rpart DESC N and lpart
#                            NAME N print the path of its part N
#   check_after NAME PASSED  no rpmemd of scenario NAME still runs, no
#                            file of this run is outside the temp dir
#                            (and, when PASSED is yes, no part file in it)
#
# A failed assertion prints "FAIL: <scenario>: <what>" (tu.sh's tu_fail)
# and why, then returns 1, which ends the scenario (its subshell runs
# under set -e).  ok and ko are tu_must and tu_refused with each
# command's output kept under out_dir (TU_TRY_OUT, TU_TRY_ERR) and, after
# a failure, the command, its output and the rpmemd log since it began
# shown (TU_EXPLAIN=explain).  logged is not tu_logged, which matches a
# fixed string anywhere in a log: it matches an ERE after a mark and
# shows the log since the mark.  check_after
# is not tu_sessions_gone, which takes a zombie or a reused pid for a
# live rpmemd; it kills (by pid) what is still running.
#
# They read harness.sh's HARNESS_TARGET, HARNESS_SSH_CALLS, top_srcdir
# and top_builddir; pmemobj.sh's tmp (the temp dir), token (in every
# file name of the run), out_dir and log_dir; and the current scenario's,
# which pmemobj.sh's setup sets: sc (its name), log (its rpmemd log), ld,
# rd and psd (local parts, remote parts, rpmemd's poolset-dir), nrun.
# ok and ko set base (the stem of the last command's .cmd, .out and .err
# files) and rc (its exit status, tu_try's).

# shellcheck disable=SC2154 # set by harness.sh and pmemobj.sh, above

# ------------------------------------------------------------ assertions

# say -- a progress line of the current scenario
say() {
	printf -- '--- %s: %s\n' "$sc" "$*"
}

# show -- print file $2 under the title $1, if not empty
show() {
	[[ -s $2 ]] || return 0
	printf '    --- %s:\n' "$1"
	tr -d '\r' <"$2" | cat -v | tail -n 60 | sed 's/^/    /'
}

# log_mark -- how many lines the current scenario's rpmemd log has
log_mark() {
	if [[ -f $log ]]; then
		wc -l <"$log"
	else
		echo 0
	fi
}

# log_since -- the lines of the rpmemd log after mark $1
log_since() {
	[[ -f $log ]] || return 0
	tail -n "+$(($1 + 1))" -- "$log"
}

# next_cmd -- the files of the command "$@" is about to be: base (their
# stem: .cmd holds the command, .out and .err its output, tu_try's
# TU_TRY_OUT and TU_TRY_ERR) and cmd_mark (the rpmemd log's mark)
next_cmd() {
	cmd_mark=$(log_mark)
	nrun=$((nrun + 1))
	base=$out_dir/$sc.$(printf '%03d' "$nrun")
	printf '%q ' "$@" >"$base.cmd"
}

# explain -- the command, its status, its output, the daemons' log since
# (TU_EXPLAIN of ok and ko)
explain() {
	local why
	if ((rc > 128)); then
		why="killed by signal $((rc - 128))"
		why+=" ($(kill -l "$((rc - 128))"))"
	else
		why="exit status $rc"
	fi
	printf '    command: %s\n    %s\n' "$(<"$base.cmd")" "$why"
	show stdout "$base.out"
	show stderr "$base.err"
	log_since "$cmd_mark" >"$base.log"
	show "rpmemd log of this command" "$base.log"
}

# ok -- "${@:2}" must succeed; $1 names the behaviour (tu_must)
ok() {
	next_cmd "${@:2}"
	TU_EXPLAIN=explain TU_TRY_OUT=$base.out TU_TRY_ERR=$base.err \
		tu_must "$sc: $1" "${@:2}"
}

# ko -- "${@:3}" must fail with a status (no signal), stderr matching
# $2 (tu_refused)
ko() {
	next_cmd "${@:3}"
	TU_EXPLAIN=explain TU_TRY_OUT=$base.out TU_TRY_ERR=$base.err \
		tu_refused "$sc: $1" + "$2" "${@:3}"
}

# logged -- the rpmemd log after mark $2 has a line matching ERE $3
logged() {
	local what=$1 mark=$2 re=$3
	# not `log_since | grep -q`: grep's early exit would end log_since
	# with SIGPIPE, and pipefail call a line that is there missing
	if ! grep -Eq -- "$re" < <(log_since "$mark"); then
		tu_fail "$sc: $what (no rpmemd log line matching '$re')"
		log_since "$mark" >"$out_dir/$sc.since"
		show "rpmemd log since" "$out_dir/$sc.since"
		return 1
	fi
	say "ok: $what"
}

# count_logged -- how many lines after mark $1 match ERE $2
count_logged() {
	log_since "$1" | grep -Ec -- "$2" || :
}

# gone -- no file $1
gone() {
	[[ ! -e $1 ]]
}

# has_size -- file $1 is exactly $2 bytes
has_size() {
	[[ -f $1 && $(stat -c %s -- "$1") == "$2" ]]
}

# hdr_u32 -- little-endian u32 at offset $2 of file $1
hdr_u32() {
	od -An -tu4 -j "$2" -N4 --endian=little -- "$1" | tr -d ' '
}

# is_pmemobj_hdr -- file $1 starts with a PMEMOBJ pool header, SINGLEHDR
# bit (incompat 0x1 at offset 16) as $2 says (0 or 1)
is_pmemobj_hdr() {
	local sig
	sig=$(head -c 7 -- "$1") || return 1
	[[ $sig == PMEMOBJ ]] || return 1
	(( ($(hdr_u32 "$1" 16) & 1) == $2 ))
}

# same_bytes -- $3 bytes at offset $2 of file $1 equal file $4
same_bytes() {
	cmp -s <(dd if="$1" bs=1 skip="$2" count="$3" status=none) "$4"
}

# damage -- overwrite $3 bytes at offset $2 of file $1 with 0xff
damage() {
	head -c "$3" /dev/zero | tr '\0' '\377' |
		dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# removed_since -- an ssh call after line $1 of the harness's record of
# ssh calls ran "--remove $2 --force" (libpmempool's own spawn)
removed_since() {
	tail -n "+$(($1 + 1))" -- "$HARNESS_SSH_CALLS" |
		grep -Fq -- "--remove $2 --force"
}

# ------------------------------------------------------------- set files
# remote_set -- write remote set $psd/$1: [SINGLEHDR if $2 = 1] parts $3...
remote_set() {
	local desc=$1 single=$2 size i=0
	shift 2
	mkdir -p -- "$(dirname -- "$psd/$desc")"
	{
		echo PMEMPOOLSET
		((single == 0)) || echo 'OPTION SINGLEHDR'
		for size in "$@"; do
			printf '%s %s/%s-%s.%d.part\n' "$size" "$rd" \
				"${desc//\//_}" "$token" "$i"
			i=$((i + 1))
		done
	} >"$psd/$desc"
}

# rpart -- path of part $2 of remote set $1
rpart() {
	printf '%s/%s-%s.%d.part\n' "$rd" "${1//\//_}" "$token" "$2"
}

# local_set -- write $ld/$1.set: [SINGLEHDR] parts, then REPLICA lines
#   local_set NAME SINGLE "SIZE..." [DESC...]
local_set() {
	local name=$1 single=$2 sizes=$3 size i=0 desc
	shift 3
	{
		echo PMEMPOOLSET
		((single == 0)) || echo 'OPTION SINGLEHDR'
		for size in $sizes; do
			printf '%s %s/%s-%s.%d.part\n' "$size" "$ld" "$name" \
				"$token" "$i"
			i=$((i + 1))
		done
		for desc in "$@"; do
			printf 'REPLICA %s %s\n' "$HARNESS_TARGET" "$desc"
		done
	} >"$ld/$name.set"
}

# lpart -- path of part $2 of local set $1
lpart() {
	printf '%s/%s-%s.%d.part\n' "$ld" "$1" "$token" "$2"
}

# ----------------------------------------------------------- after each
# log_pids -- pids of every rpmemd that logged a session in log $1
log_pids() {
	[[ -f $1 ]] || return 0
	sed -n "s/^${TU_STAMP}rpmemd: session: pid \\([0-9][0-9]*\\) .*/\\1/p" -- "$1" |
		sort -u
}

# strays -- files of this run outside the temp dir, where a path bug
# would put them: the login directory, /tmp, /dev/shm, /, the build and
# source trees and the current directory
strays() {
	find "$HOME" /tmp /dev/shm / "$top_builddir" "$top_srcdir" "$PWD" \
		-xdev -maxdepth 3 -path "$tmp" -prune -o -name "*$token*" \
		-print 2>/dev/null | sort -u
}

# check_after -- no rpmemd of scenario $1 running, no stray files
check_after() {
	local name=$1 passed=$2 sshd_pid stray n
	n=$(log_pids "$log_dir/$name.rpmemd.log" | wc -l)
	sshd_pid=$(harness_sshd_pid "$tmp") || sshd_pid=
	# shellcheck disable=SC2086 # no pid: no argument
	harness_none_left "$name: processes of the scenario" "$tmp" 10 \
		$sshd_pid || return 1
	if ((n == 0)); then
		tu_fail "$name: no rpmemd logged a session"
		return 1
	fi
	printf -- '--- %s: ok: all %d rpmemd sessions ended\n' "$name" "$n"
	stray=$(strays)
	if [[ -n $stray ]]; then
		tu_fail "$name: files of this run outside $tmp:"
		printf '%s\n' "$stray"
		return 1
	fi
	if [[ $passed == yes ]]; then
		stray=$(find "$tmp/$name" -name '*.part')
		if [[ -n $stray ]]; then
			tu_fail "$name: part files left after pmempool rm:"
			printf '%s\n' "$stray"
			return 1
		fi
	fi
}

