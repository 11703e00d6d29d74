#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# datapath.sh -- data-path tests: persist, flush, drain, read through sshd
#
# Run by `make check` from the build tree (top_builddir and top_srcdir are
# exported), or by hand after a build:
#
#   top_builddir=BUILD_DIR tests/integration/datapath.sh [GROUP...]
#
# Exit status 0 pass, 1 fail; never 77: a machine without sshd fails here.
# Groups of tests/integration/datapath (datapath.c), each with the built
# rpmemd behind a private sshd on 127.0.0.1:
#
#   data    random mixes, torn words, bad requests, nlanes (R6, R10)
#   fault   rpmemd killed or stopped, client killed (R1, R2, R3);
#           RPMEM_TIMEOUT=6 so every bound is short, yet ssh and rpmemd
#           start within it on a loaded machine
#   stray   strangers at the fabric port (S2); ssh's output is held after
#           rpmemd's start-up status until the test opens a gate (a fifo),
#           so the listener is up while the real client waits
#   async   the random mixes on an async replica (RPMEM_REPLICATION)
#   pmdk    the random mixes with rpmemd posing as PMDK 1.12's (it refuses
#           --protocol as PMDK's does, then serves protocol 0.1 with
#           allow-pmdk-clients) and RPMEM_ALLOW_PMDK_DAEMON=1: librpmem
#           recognises it, falls back from tcp to sockets, speaks 0.1
#
# Every rpmemd writes its own log, rpmemd.<pid>.<ns>.log: the tests find
# the daemon serving them by it, and after each group no daemon named in
# a log may still run.  DATAPATH_SEED, DATAPATH_OPS and
# DATAPATH_TORN_ITERS pass through (see datapath.c).
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=../common/harness.sh
. "$(dirname "${BASH_SOURCE[0]}")/../common/harness.sh"

prog=$top_builddir/tests/integration/datapath
rpmemd=$top_builddir/rpmemd
tu_need_built "$prog" "$rpmemd"

export CK_VERBOSITY=${CK_VERBOSITY:-verbose}
MAX_LANES=32

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rpmem-datapath.XXXXXX")
poolset_dir=$tmp/poolsets
part_dir=$tmp/parts
log_dir=$tmp/logs
mkdir -p "$poolset_dir" "$part_dir" "$log_dir"
failed=()
start=$SECONDS
# at exit: what the daemons said, for a failed run
harness_exit_trap "$tmp" 100 "$log_dir/*" "$tmp/ssh/sshd.log"

# log_pids -- pids of every rpmemd that logged a session so far
log_pids() {
	cat -- "$log_dir"/rpmemd.*.log 2>/dev/null |
		sed -n "s/^${TU_STAMP}rpmemd: session: pid \\([0-9][0-9]*\\) .*/\\1/p" |
		sort -u
}

# check_after -- every logged rpmemd gone, nothing of ours running, no
# part or set files left
check_after() {
	local label=$1 pid sshd_pid alive=() stray
	sshd_pid=$(harness_sshd_pid "$tmp") || sshd_pid=
	# shellcheck disable=SC2086 # no pid: no argument
	if ! harness_none_left "$label: processes of this run" "$tmp/" 10 \
			$sshd_pid; then
		for pid in $(log_pids); do
			[[ " ${HARNESS_LEFT[*]} " == *" $pid "* ]] &&
				alive+=("$pid")
		done
		((${#alive[@]} == 0)) ||
			tu_why "the rpmemd among them: ${alive[*]}" || :
		return 1
	fi
	stray=$(find "$part_dir" "$poolset_dir" -mindepth 1)
	if [[ -n $stray ]]; then
		tu_fail "$label: files left after the run:"
		printf '%s\n' "$stray"
		rm -rf -- "${part_dir:?}"/* "${poolset_dir:?}"/*
		return 1
	fi
}

# sessions_with -- how many rpmemd logs of this run contain $1
sessions_with() {
	local n=0 f
	for f in "$log_dir"/rpmemd.*.log; do
		if [[ -f $f ]] && grep -qsF -- "$1" "$f"; then
			n=$((n + 1))
		fi
	done
	echo "$n"
}

# run_group -- run datapath.c group $2 (label $1) in the current environment
run_group() {
	local group=$1 pgroup=$2 result=PASS t0=$SECONDS had
	local policy=${RPMEM_LANE_SECURITY:-encrypt}
	# what each of the group's sessions logs: the lane security it
	# stands for, or serving a PMDK client
	local says="lane security: $policy"
	[[ $group == pmdk ]] && says="serving a PMDK 1.12 client"
	[[ $group == async ]] && says="an async replica's records, applied"
	printf '=== %s: RPMEM_TIMEOUT=%s RPMEM_SSH=%s RPMEM_PROVIDER=%s\n' \
		"$group" "$RPMEM_TIMEOUT" "$RPMEM_SSH" "${RPMEM_PROVIDER:-}"
	had=$(sessions_with "$says")
	"$prog" "$pgroup" || result=FAIL
	check_after "$group" || result=FAIL
	if (($(sessions_with "$says") == had)); then
		tu_fail "$group: no session's log says \"$says\""
		result=FAIL
	fi
	if [[ $result != PASS ]]; then
		failed+=("$group")
	fi
	printf '=== %s: %s (%d s)\n' "$group" "$result" $((SECONDS - t0))
}

harness_start_sshd "$tmp" || {
	echo "datapath.sh: cannot start a private sshd on 127.0.0.1" \
		"(install openssh-server; SSHD=${SSHD:-unset})" >&2
	exit 1
}
harness_ssh=$RPMEM_SSH

# a private config keeps /etc/rpmemd and ~/.rpmemd.conf out of the test
conf=$tmp/rpmemd.conf
# write_conf -- the config, with more lines ($@) for a group
write_conf() {
	printf '# datapath.sh: rpmemd reads only this file\nmax-lanes = %d\n' \
		"$MAX_LANES" >"$conf"
	printf '%s\n' "$@" >>"$conf"
	chmod 600 "$conf"
}
write_conf

# the remote shell execs rpmemd, so $$ is rpmemd's pid: one log per daemon
RPMEM_CMD="exec $(printf '%q' "$rpmemd") -c $(printf '%q' "$conf")"
RPMEM_CMD+=" --poolset-dir=$(printf '%q' "$poolset_dir") --log-level=debug"
RPMEM_CMD+=" --log-file=$(printf '%q' "$log_dir")"
RPMEM_CMD+="/rpmemd.\$\$.\$(date +%s%N).log"
export RPMEM_CMD
harness_test_env "$poolset_dir" "$part_dir"
export RPMEM_TEST_LOG_DIR=$log_dir
export RPMEM_TEST_MAX_LANES=$MAX_LANES

# the ssh of the stray group: output held after the 4-byte start-up
# status until a line arrives on the gate fifo (at most 30 s)
gate=$tmp/gate.fifo
mkfifo -m 600 "$gate"
# shellcheck disable=SC2016 # "$@" and PIPESTATUS belong to the wrapper
{
	printf '#!/bin/bash\n'
	printf '# generated by datapath.sh: %s, its output gated\n' \
		"$harness_ssh"
	printf '%q "$@" | {\n' "$harness_ssh"
	printf '\tdd bs=1 count=4 status=none &&\n'
	printf '\t\tread -r -t 30 _ <>%q &&\n' "$gate"
	printf '\t\texec cat\n'
	printf '}\n'
	printf 'exit "${PIPESTATUS[0]}"\n'
} >"$tmp/ssh-gated"
chmod 755 "$tmp/ssh-gated"

# PMDK 1.12's rpmemd as its client sees it: --protocol is an option it
# does not know, said on stderr as its getopt says it; without it, our
# rpmemd serving PMDK clients (one log per daemon, as above)
# shellcheck disable=SC2016 # $$, $a and "$@" belong to the wrapper
{
	printf '#!/bin/bash\n'
	printf '# generated by datapath.sh: rpmemd posing as PMDK 1.12%ss\n' \
		"'"
	printf 'for a; do\n'
	printf '\t[[ $a == --protocol* ]] || continue\n'
	printf '\techo "rpmemd: unrecognized option '"'"'--protocol'"'"'" >&2\n'
	printf '\texit 1\n'
	printf 'done\n'
	printf 'exec %q -c %q --poolset-dir=%q --log-level=debug' "$rpmemd" \
		"$conf" "$poolset_dir"
	printf ' --allow-pmdk-clients --lane-security=none'
	printf ' --log-file=%q/rpmemd.$$.$(date +%%s%%N).log "$@"\n' "$log_dir"
} >"$tmp/pmdk-rpmemd"
chmod 755 "$tmp/pmdk-rpmemd"
rpmemd_cmd=$RPMEM_CMD
datapath_ops=${DATAPATH_OPS:-}

groups=("$@")
((${#groups[@]} != 0)) ||
	groups=(data fault stray sockets none authenticate async pmdk)
for group in "${groups[@]}"; do
	pgroup=$group
	unset RPMEM_PROVIDER CK_RUN_CASE RPMEM_LANE_SECURITY
	unset RPMEM_ALLOW_PMDK_DAEMON RPMEM_REPLICATION
	RPMEM_CMD=$rpmemd_cmd
	unset DATAPATH_OPS
	[[ -z $datapath_ops ]] || export DATAPATH_OPS=$datapath_ops
	write_conf
	case $group in
	data)	RPMEM_TIMEOUT=20 RPMEM_SSH=$harness_ssh ;;
	fault)	RPMEM_TIMEOUT=6 RPMEM_SSH=$harness_ssh ;;
	stray)	RPMEM_TIMEOUT=10 RPMEM_SSH=$tmp/ssh-gated
		export RPMEM_TEST_GATE=$gate ;;
	sockets) # the random mixes again, over libfabric's sockets provider
		RPMEM_TIMEOUT=20 RPMEM_SSH=$harness_ssh pgroup=data
		export RPMEM_PROVIDER=sockets CK_RUN_CASE=mix ;;
	none|authenticate) # the mixes again, lane security lowered both sides
		RPMEM_TIMEOUT=20 RPMEM_SSH=$harness_ssh pgroup=data
		write_conf "lane-security = $group"
		export RPMEM_LANE_SECURITY=$group CK_RUN_CASE=mix ;;
	async)	# the mixes again on an async replica (doc/async.md): every
		# persist into the send log, a read or a reopen after it
		# waits for the log to drain
		RPMEM_TIMEOUT=20 RPMEM_SSH=$harness_ssh pgroup=data
		export RPMEM_REPLICATION=async CK_RUN_CASE=mix ;;
	pmdk)	# the mixes again, shorter, with PMDK's protocol 0.1
		RPMEM_TIMEOUT=20 RPMEM_SSH=$harness_ssh pgroup=data
		RPMEM_CMD=$(printf '%q' "$tmp/pmdk-rpmemd")
		export RPMEM_ALLOW_PMDK_DAEMON=1 CK_RUN_CASE=mix
		export DATAPATH_OPS=${datapath_ops:-100} ;;
	*)	echo "datapath.sh: unknown group '$group'" >&2
		exit 1 ;;
	esac
	export RPMEM_TIMEOUT RPMEM_SSH
	run_group "$group" "$pgroup"
done

echo "datapath.sh: $(log_pids | wc -l) rpmemd sessions in $((SECONDS -
	start)) s"
if ((${#failed[@]} != 0)); then
	printf 'datapath.sh: FAILED: %s\n' "${failed[@]}"
	exit 1
fi
echo "datapath.sh: all groups passed"
