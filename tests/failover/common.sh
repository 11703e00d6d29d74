# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# common.sh -- what the failover tests share: the tree's programs, a temp
# dir, the replica and handle checks.  Source it with `me` set to the
# script's name; it sources tests/common/harness.sh, and through it
# tests/common/tu.sh, whose assertions (tu_fail, tu_try, tu_must,
# tu_refused, tu_end) the failover tests use.
#
#   fo_tmp           make $tmp (under $TMPDIR, else /dev/shm, else /tmp)
#   fo_rmtmp         remove it (FAILOVER_KEEP=1 keeps it and says where)
#   fo_exit_trap CMD at exit: SIGKILL $app_pid if set, eval CMD, fo_rmtmp
#   fo_backup LEVEL  fo_tmp and a private sshd (stopped at exit) before the
#                    built rpmemd, at log-level LEVEL ($tmp/rpmemd.conf,
#                    log in $tmp/rpmemd.log), serving psd=$tmp/poolsets:
#                    its backup.set (32M, $tmp/backup/b0) is the replica
#                    of $tmp/app.set (32M, $tmp/primary/a0)
#   fo_target [AT_EXIT]
#                    fo_tmp and a private sshd in $tmp/b (stopped at
#                    exit, after AT_EXIT) as target, rpmemd's poolset-dir
#                    psd=$tmp/psd, $tmp/parts, and rpmemd_cmd serving psd
#                    (log in $tmp/rpmemd.log)
#   fo_kill_rpmemd   SIGKILL the rpmemd serving $psd (by pid) and wait
#                    up to 10 s until they are gone
#   fo_poll SECONDS CMD...
#                    poll CMD until it succeeds, the application
#                    ($app_pid, when set) exits or SECONDS pass
#   fo_stacks PID    where each thread of PID waits (gdb's backtraces),
#                    for a failure where an application stopped going on
#   fo_scenarios AFTER SHOW NAME...
#                    run sc_NAME for each NAME, then kill its
#                    application, start the backup's sshd ($tmp/b) again
#                    when it stopped, eval AFTER; after a failed one show
#                    the client log's tail and eval SHOW
#   fo_replica_check PART SIZE PROG ARG...
#                    `PROG check COPY ARG...` passes on a promoted copy
#                    of the replica part file PART: with txlog and LOG,
#                    every commit it logged is there, none half applied
#   state            the live state of the one open handle whose status
#                    is in $tmp/state ("" when none)
#   field KEY        a field of that status

: "${me:?set me to the name of the script before sourcing common.sh}"
# shellcheck source-path=SCRIPTDIR source=../common/harness.sh
. "$(dirname "${BASH_SOURCE[0]}")/../common/harness.sh"
rpmem=$top_builddir/rpmem
txlog=$top_builddir/tests/failover/txlog
libs=$top_builddir/.libs
for p in "$rpmem" "$txlog" "$top_builddir/rpmemd" "$libs/librpmem.so.1"; do
	[[ -e $p ]] || { echo "$me: $p not built" >&2; exit 1; }
done

# fo_tmp -- a temp dir of this run in $tmp
fo_tmp() {
	local base=${TMPDIR:-/tmp}
	[[ -z ${TMPDIR:-} && -d /dev/shm && -w /dev/shm ]] && base=/dev/shm
	tmp=$(mktemp -d "$base/rpmem-${me%.sh}.XXXXXX")
}

# fo_rmtmp -- remove it, unless FAILOVER_KEEP=1
fo_rmtmp() {
	tu_rmtmp "$tmp" "${FAILOVER_KEEP:-0}"
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

# fo_backup -- a backup behind a private sshd, as at the top; exit 1 when
# sshd does not start
fo_backup() {
	fo_tmp
	# shellcheck disable=SC2016 # expanded at exit
	fo_exit_trap 'harness_stop_sshd "$tmp"'
	harness_start_sshd "$tmp" || exit 1
	psd=$tmp/poolsets
	mkdir -p "$psd" "$tmp/primary" "$tmp/backup"
	printf 'log-level = %s\n' "$1" >"$tmp/rpmemd.conf"
	RPMEM_CMD=$(harness_rpmemd_cmd "$psd" "$tmp/rpmemd.log" \
		-c "$tmp/rpmemd.conf")
	export RPMEM_CMD
	printf 'PMEMPOOLSET\n32M %s\n' "$tmp/backup/b0" >"$psd/backup.set"
	printf 'PMEMPOOLSET\n32M %s\nREPLICA %s backup.set\n' \
		"$tmp/primary/a0" "$HARNESS_TARGET" >"$tmp/app.set"
}

# fo_target -- the target of a test with its own set files, as at the
# top; exit 1 when sshd does not start
fo_target() {
	fo_tmp
	fo_exit_trap "harness_stop_sshd \"\$tmp/b\"${1:+; $1}"
	harness_start_sshd "$tmp/b" || exit 1
	# shellcheck disable=SC2034 # target and rpmemd_cmd: the test's
	target=$HARNESS_TARGET
	psd=$tmp/psd
	mkdir -p "$psd" "$tmp/parts"
	# shellcheck disable=SC2034
	rpmemd_cmd=$(harness_rpmemd_cmd "$psd" "$tmp/rpmemd.log")
}

# fo_kill_rpmemd -- SIGKILL the rpmemd of $psd (by pid), wait until they
# are gone; fo_went reads the client log from where it ended before
fo_kill_rpmemd() {
	local pids try
	fo_log_mark=$(stat -c %s "$tmp/client.log" 2>/dev/null || echo 0)
	pids=$(harness_rpmemd_pids "$psd")
	[[ -n $pids ]] || { tu_fail "no rpmemd to kill"; return 1; }
	# shellcheck disable=SC2086 # a list of pids
	kill -KILL $pids
	for ((try = 0; try < 200; try++)); do
		[[ -z $(harness_rpmemd_pids "$psd") ]] && return 0
		tu_nap 0.05
	done
	tu_fail "rpmemd $pids did not go"
}

# fo_went STATE -- the handle is in STATE, or its log ($tmp/client.log)
# says it moved to STATE since the last fo_kill_rpmemd: a reconnect may
# end a spell in STATE before a poll sees it
fo_went() {
	is_state "$1" || grep -q -- "-> $1[: ]" < <(tail -c \
		"+$((${fo_log_mark:-0} + 1))" "$tmp/client.log" 2>/dev/null)
}

# fo_stacks -- the backtrace of every thread of process $1, indented
# (gdb attaches for a moment), or the kernel's wait channels without gdb
fo_stacks() {
	local t c w
	kill -0 "$1" 2>/dev/null || { echo "    (process $1 has ended)"; return 0; }
	if command -v gdb >/dev/null; then
		timeout 60 gdb -q -batch -p "$1" -ex 'thread apply all bt 16' \
			</dev/null 2>&1 | grep -E '^(Thread|#)' | sed 's/^/    /'
		return 0
	fi
	for t in "/proc/$1/task/"*; do
		read -r c <"$t/comm" && read -r w <"$t/wchan" || :
		echo "    ${t##*/} $c: waits in ${w:-?}"
	done 2>/dev/null
}

# fo_poll -- "${@:2}" polled every 20 ms until it succeeds (true), the
# application ($app_pid, when set) exits or $1 seconds pass (false)
fo_poll() {
	local end=$((SECONDS + $1))
	shift
	while ((SECONDS < end)); do
		"$@" && return 0
		[[ -n $app_pid ]] && ! kill -0 "$app_pid" 2>/dev/null && break
		tu_nap 0.02
	done
	return 1
}

# fo_scenarios -- each scenario sc_NAME of "${@:3}" in turn, nothing of
# it left running after it (its application, a stopped sshd of the
# backup in $tmp/b); $1 evaluated after each, $2 after a failed one
fo_scenarios() {
	local after=$1 show=$2 sc before
	shift 2
	for sc in "$@"; do
		echo "$me: --- $sc"
		before=$TU_FAILED
		app_pid=
		"sc_$sc"
		if [[ -n $app_pid ]]; then
			((TU_FAILED == before)) || { echo "$me: $sc failed;" \
				"its application:"; fo_stacks "$app_pid"; }
			kill -KILL "$app_pid" 2>/dev/null
			wait "$app_pid" 2>/dev/null
			app_pid=
		fi
		harness_sshd_pid "$tmp/b" >/dev/null ||
			harness_restart_sshd "$tmp/b"
		eval "$after"
		((TU_FAILED == before)) || { echo "$me: $sc failed; client log:"
			tail -20 "$tmp/client.log" 2>/dev/null; eval "$show"; }
	done
}

# fo_replica_check -- the check of a promoted copy of replica part $1
# ($2 bytes): `$3 check COPY ${@:4}` (txlog against its log, txmt
# against its logs and bound), what it said shown; the copy is removed
fo_replica_check() {
	local c=$tmp/copy
	rm -rf -- "$c"
	mkdir -p "$c"
	cp -- "$1" "$c/r.0"
	printf 'PMEMPOOLSET\n%s %s/r.0\n' "$2" "$c" >"$c/copy.set"
	if ! "$rpmem" promote --force "$c/copy.set" >"$c/promote.out" 2>&1
	then
		tu_fail "promote of the replica's copy: $(<"$c/promote.out")"
	elif ! env LD_LIBRARY_PATH="$libs" "$3" check "$c/copy.set" \
			"${@:4}" >"$c/check.out" 2>&1; then
		tu_fail "the replica lacks a logged commit: $(<"$c/check.out")"
	else
		echo "$me: $(<"$c/check.out")"
	fi
	rm -rf -- "$c"
}

# state -- the live state of the one open handle ("" when none)
state() {
	field state
}

# fields KEY -- FIELDS: the values of KEY in the live status in
# $tmp/state ("KEY VALUE" lines); builtins only, as polls read it
fields() {
	local f k v
	FIELDS=()
	for f in "$tmp/state/run/"*.status; do
		[[ -e $f ]] || continue
		while read -r k v _ || [[ -n $k ]]; do
			[[ $k != "$1" ]] || FIELDS+=("$v")
		done <"$f"
	done
}

# field KEY -- print the values of KEY in the live status (fields)
field() {
	fields "$1"
	((${#FIELDS[@]} == 0)) || printf '%s\n' "${FIELDS[@]}"
}

# is_state STATE... -- the live state is one of STATE, found without a
# fork (a poll's test)
is_state() {
	local v s
	fields state
	for v in "${FIELDS[@]}"; do
		for s; do
			[[ $v != "$s" ]] || return 0
		done
	done
	return 1
}
