# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# common.sh -- what the failover tests share: the tree's programs, a temp
# dir, failed assertions counted.  Source it with `me` set to the
# script's name; it sources tests/common/harness.sh.
#
#   fo_tmp           make $tmp (under $TMPDIR, else /dev/shm, else /tmp)
#   fo_rmtmp         remove it (FAILOVER_KEEP=1 keeps it and says where)
#   fo_exit_trap CMD at exit: SIGKILL $app_pid if set, eval CMD, fo_rmtmp
#   bad MSG          one failed assertion, counted in $fails
#   run CMD...       CMD's status in rc, its output in $tmp/out and err
#   refused NAME STATUS ERE CMD...
#                    CMD fails with STATUS (-: any non-zero), its stderr
#                    matching ERE
#   fo_replica_check PART SIZE LOG
#                    every commit txlog logged in LOG is in a promoted
#                    copy of the replica part file PART, none half applied
#   state            the live state of the one open handle whose status
#                    is in $tmp/state ("" when none)
#   field KEY        a field of that status
#   fo_end           the verdict: exit 1 after failures, else say so

: "${me:?set me to the name of the script before sourcing common.sh}"
# shellcheck source-path=SCRIPTDIR source=../common/harness.sh
. "$(dirname "${BASH_SOURCE[0]}")/../common/harness.sh"
rpmem=$top_builddir/rpmem
txlog=$top_builddir/tests/failover/txlog
libs=$top_builddir/.libs
for p in "$rpmem" "$txlog" "$top_builddir/rpmemd" "$libs/librpmem.so.1"; do
	[[ -e $p ]] || { echo "$me: $p not built" >&2; exit 1; }
done
fails=0

# fo_tmp -- a temp dir of this run in $tmp
fo_tmp() {
	local base=${TMPDIR:-/tmp}
	[[ -z ${TMPDIR:-} && -d /dev/shm && -w /dev/shm ]] && base=/dev/shm
	tmp=$(mktemp -d "$base/rpmem-${me%.sh}.XXXXXX")
}

# fo_rmtmp -- remove it, unless FAILOVER_KEEP=1
fo_rmtmp() {
	if [[ ${FAILOVER_KEEP:-0} == 1 ]]; then
		echo "$me: kept $tmp"
	else
		rm -rf -- "$tmp"
	fi
}

# fo_exit_trap -- at exit: $app_pid killed, $1 evaluated, fo_rmtmp; the
# script's status kept
fo_exit_trap() {
	fo_at_exit=$1
	app_pid=
	trap fo_exit EXIT
}

# fo_exit -- the EXIT trap fo_exit_trap sets
fo_exit() {
	local rc=$?
	[[ -n $app_pid ]] && kill -KILL "$app_pid" 2>/dev/null
	eval "$fo_at_exit"
	fo_rmtmp
	exit "$rc"
}

# bad -- one failed assertion
bad() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# run -- "$@" with its status in rc, its output in $tmp/out and err
run() {
	rc=0
	"$@" >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
}

# refused -- "$@" fails with status $2 (any non-zero: -) and stderr
# matching ERE $3; $1 names it
refused() {
	local what=$1 want=$2 re=$3
	shift 3
	run "$@"
	if ((rc == 0)) || [[ $want != - && $rc != "$want" ]] ||
			! grep -Eq -- "$re" "$tmp/err"; then
		bad "$what: status $rc, stderr: $(<"$tmp/err")"
		return 1
	fi
	echo "--- ok: $what"
}

# fo_replica_check -- txlog check of a promoted copy of replica part $1
# ($2 bytes) against the commits logged in $3; the copy is removed
fo_replica_check() {
	local c=$tmp/copy
	rm -rf -- "$c"
	mkdir -p "$c"
	cp -- "$1" "$c/r.0"
	printf 'PMEMPOOLSET\n%s %s/r.0\n' "$2" "$c" >"$c/copy.set"
	if ! "$rpmem" promote --force "$c/copy.set" >"$c/promote.out" 2>&1
	then
		bad "promote of the replica's copy: $(<"$c/promote.out")"
	elif ! env LD_LIBRARY_PATH="$libs" "$txlog" check "$c/copy.set" \
			"$3" >"$c/check.out" 2>&1; then
		bad "the replica lacks a logged commit: $(<"$c/check.out")"
	fi
	rm -rf -- "$c"
}

# state -- the live state of the one open handle ("" when none)
state() {
	field state
}

# field KEY -- a field of the live status in $tmp/state
field() {
	local f
	for f in "$tmp/state/run/"*.status; do
		[[ -e $f ]] && awk -v k="$1" '$1 == k { print $2 }' "$f"
	done
}

# fo_end -- exit 1 after failures; else print $1
fo_end() {
	((fails == 0)) || { echo "$me: $fails failure(s)"; exit 1; }
	echo "$me: $1"
}
