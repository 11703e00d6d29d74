#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# soak.sh -- scenarios L1 and L2: the soak program (tests/soak/soak)
# against the built rpmemd behind a private sshd, with the faults it needs
#
#   [SOAK_PROFILE=soak|short|many] [SOAK_SECONDS=N] [SOAK_SEED=N] \
#   [SOAK_TIMEOUT=S] [SOAK_ARGS='--faults stray,...'] \
#   top_builddir=BUILD_DIR tests/soak/soak.sh
#
# Profiles:
#   soak   (default) 4 clients x 4 lanes for SOAK_SECONDS (120) with every
#          fault: rpmemd SIGKILL and SIGSTOP, ssh killed, client killed,
#          the link cut, the file system full, strangers at a lane port
#   short  the same with 2 clients for 30 s (the sanitizer leg)
#   many   L2: 32 sessions x 4 lanes on one target, 20 s without faults
#          (then every replica checked with the sessions up), then until
#          SOAK_SECONDS (50) sessions killed and reopened 4 at a time; each
#          rpmemd's private memory held to its cap, the target's processes
#          and descriptors back to where they were (tests/load/many.sh)
#
# SOAK_TIMEOUT is RPMEM_TIMEOUT of the soak and short profiles (10 s):
# the sanitizer leg raises it, for its programs run slower.
#
# The clients' traffic is niced and paced (a random pause between two
# calls of a lane, --think-us), so that the soak's own ssh logins and the
# tests running beside it under `make -j2 check` keep their timeouts.
#
# As root the target (sshd, rpmemd) runs in a network namespace made here,
# joined by a veth pair whose host end "cuts the link", and the pools live
# on a small tmpfs mounted here (the "file system full" fault); elsewhere
# those two faults are left out.  Names carry $$; the EXIT trap removes
# all of it.  Exit status: the soak's (0 pass, 1 fail, 77 skipped).
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=../common/harness.sh
. "$(dirname "${BASH_SOURCE[0]}")/../common/harness.sh"

prog=$top_builddir/tests/soak/soak
rpmemd=$top_builddir/rpmemd
tu_need_built "$prog" "$rpmemd"

profile=${SOAK_PROFILE:-soak}
case $profile in
soak)	runs=("--label soak --seconds ${SOAK_SECONDS:-120}
		--think-us 5000")
	clients=4 timeout=${SOAK_TIMEOUT:-10} pool_mib=8 lanes=4 netns=yes ;;
short)	runs=("--label short --seconds ${SOAK_SECONDS:-30}
		--think-us 5000")
	clients=2 timeout=${SOAK_TIMEOUT:-10} pool_mib=8 lanes=4 netns=yes ;;
many)	runs=("--label many --check-mem --steady 20 --per-round 4
		--think-us 50000
		--faults client-kill,rpmemd-kill,ssh-kill
		--seconds ${SOAK_SECONDS:-50}")
	# 32 sessions' logins on 2 cores: the default bound, no stop faults
	clients=32 timeout=60 pool_mib=4 lanes=4 netns=no ;;
*)	echo "soak.sh: unknown SOAK_PROFILE '$profile'" >&2
	exit 1 ;;
esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rpmem-soak.XXXXXX")
fs=$tmp/fs.$$
ns=rpmem-soak-$$
host_if=rpskh$$
ns_if=rpskn$$
mounted=no
made_ns=no

# cleanup -- stop sshd, end what names $tmp, unmount, drop the namespace
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	local rc=$? pid
	trap - EXIT
	harness_stop_sshd "$tmp" || :
	# anything whose argv names our private temp dir is ours
	for pid in $(harness_pids_naming "$tmp/"); do
		echo "soak.sh: ending leftover $pid:" \
			"$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline")" >&2
		kill -KILL "$pid" 2>/dev/null || :
	done
	if [[ $mounted == yes ]]; then
		umount "$fs" 2>/dev/null || umount -l "$fs" || :
	fi
	if [[ $made_ns == yes ]]; then
		ip link del "$host_if" 2>/dev/null || :
		ip netns del "$ns" 2>/dev/null || :
	fi
	if ((rc != 0 && rc != 77)); then
		for f in "$tmp"/logs/*.log; do
			[[ -s $f ]] || continue
			grep -l -q -E 'err|refused' "$f" || continue
			printf -- '--- %s (last 20 lines) ---\n' "$f"
			tail -n 20 -- "$f"
		done | tail -n 400
	fi
	rm -rf -- "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

mkdir -p "$tmp/poolsets" "$tmp/state" "$tmp/logs" "$tmp/gates" "$fs"
chmod 700 "$tmp"
extra=()

# the pools on a tmpfs of their own: room for them and a little more
root=no
[[ $(id -u) == 0 ]] && root=yes
if [[ $root == yes ]] &&
		mount -t tmpfs -o "size=$((clients * pool_mib + 4))m,mode=700" \
			tmpfs "$fs" 2>/dev/null; then
	mounted=yes
	extra+=(--fill "$fs/fill")
else
	echo "soak.sh: no tmpfs of our own (not root): no fs-full faults"
fi

# the target in a network namespace; "the link" is our end of a veth
if [[ $netns == yes && $root == yes ]] && ip netns add "$ns" 2>/dev/null
then
	made_ns=yes
	net=198.19.$(( ($$ >> 6) % 250 )).$(( ($$ % 64) * 4 ))
	net_host=${net%.*}.$(( ${net##*.} + 1 ))
	net_ns=${net%.*}.$(( ${net##*.} + 2 ))
	ip link add "$host_if" type veth peer name "$ns_if"
	ip link set "$ns_if" netns "$ns"
	ip addr add "$net_host/30" dev "$host_if"
	ip link set "$host_if" up
	ip netns exec "$ns" ip link set lo up
	ip netns exec "$ns" ip addr add "$net_ns/30" dev "$ns_if"
	ip netns exec "$ns" ip link set "$ns_if" up
	export HARNESS_ADDR=$net_ns HARNESS_NETNS=$ns
	extra+=(--cut "ip link set $host_if down"
		--heal "ip link set $host_if up")
elif [[ $netns == yes ]]; then
	echo "soak.sh: no network namespace (not root): no link-cut faults"
fi

harness_start_sshd "$tmp" || {
	echo "soak.sh: cannot start a private sshd" >&2
	exit 1
}
sshd_pid=$(harness_sshd_pid "$tmp")
ssh_exe=$(readlink -f "$(harness_prog "${SSH:-}" ssh)")

# a private config keeps /etc/rpmemd and ~/.rpmemd.conf out of the test
conf=$tmp/rpmemd.conf
printf '# soak.sh: rpmemd reads only this file\nmax-lanes = 16\n' >"$conf"
chmod 600 "$conf"

# the ssh of every worker: the harness's, but worker W's next session is
# held after rpmemd's start-up status while gates/arm.W exists, until a
# line arrives on gates/gate.W (the stray fault opens it)
gates=$tmp/gates
# shellcheck disable=SC2016 # "$@", $w and PIPESTATUS belong to the wrapper
{
	printf '#!/bin/bash\n'
	printf '# generated by soak.sh: %s, one session held on request\n' \
		"$RPMEM_SSH"
	printf 'w=${SOAK_WORKER:?}\n'
	printf 'if rm -- %q/arm.$w 2>/dev/null; then\n' "$gates"
	printf '\t%q "$@" | {\n' "$RPMEM_SSH"
	printf '\t\tdd bs=1 count=4 status=none &&\n'
	printf '\t\t\tread -r -t 60 _ <>%q/gate.$w &&\n' "$gates"
	printf '\t\t\texec cat\n'
	printf '\t}\n'
	printf '\texit "${PIPESTATUS[0]}"\n'
	printf 'fi\n'
	printf 'exec %q "$@"\n' "$RPMEM_SSH"
} >"$tmp/ssh-soak"
chmod 755 "$tmp/ssh-soak"
export RPMEM_SSH=$tmp/ssh-soak RPMEM_TIMEOUT=$timeout

# the remote shell execs rpmemd: $$ is rpmemd's pid, named in its log;
# niced like the clients' traffic, so that logins keep up under load
rcmd="exec nice -n 10 $(printf '%q' "$rpmemd") -c $(printf '%q' "$conf")"
rcmd+=" --poolset-dir=$(printf '%q' "$tmp/poolsets") --log-level=notice"
rcmd+=" --log-file=$(printf '%q' "$tmp/logs")/rpmemd.w@W@.\$\$.\$(date"
rcmd+=" +%s%N).log"
# sshd passes no environment: the sanitizer leg's options go in the
# command, so that rpmemd reports where the leg looks
for v in ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS IPATH_NO_BACKTRACE; do
	[[ -z ${!v:-} ]] || rcmd="$v=$(printf '%q' "${!v}") $rcmd"
done

rc=0
for run in "${runs[@]}"; do
	# shellcheck disable=SC2086 # the run's options split on purpose
	"$prog" $run --clients "$clients" --lanes "$lanes" \
		--pool-mib "$pool_mib" \
		--target "$HARNESS_TARGET" --poolset-dir "$tmp/poolsets" \
		--part-dir "$fs" --state-dir "$tmp/state" \
		--log-dir "$tmp/logs" --gate-dir "$gates" \
		--rpmemd-cmd "$rcmd" --ssh-exe "$ssh_exe" \
		--sshd-pid "$sshd_pid" ${SOAK_SEED:+--seed "$SOAK_SEED"} \
		"${extra[@]}" ${SOAK_ARGS:-} || rc=1
	if [[ -n $(find "$fs" -mindepth 1) ]]; then
		echo "soak.sh: files left on the pools' file system:"
		find "$fs" -mindepth 1
		rc=1
	fi
done
exit $rc
