#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test-cpu.sh -- run one test in a control group of its own and append
# its CPU time and wall time to a file: where make check's time goes
#
#   make -j2 check LOG_COMPILER=$PWD/scripts/test-cpu.sh \
#       SH_LOG_COMPILER=$PWD/scripts/test-cpu.sh TEST_CPU_OUT=/tmp/cpu.txt
#   sort -rn /tmp/cpu.txt
#
# Each line: CPU seconds, wall seconds, the test.  The CPU time is that
# of every process the test started while it ran, the daemons that left
# its process tree (sshd, rpmemd behind it) included, as a control group
# counts them; what outlives the test is not counted.  Needs root and
# cgroup v1's cpuacct (/sys/fs/cgroup/cpuacct) or cgroup v2; without
# them the test runs unmeasured and the line says "-".
set -u

out=${TEST_CPU_OUT:-/tmp/rpmem-test-cpu.txt}
v1=/sys/fs/cgroup/cpuacct
v2=/sys/fs/cgroup
cg=

# usage -- the group's CPU time so far, in nanoseconds
usage() {
	local k v
	if [[ $cg == "$v1"/* ]]; then
		cat "$cg/cpuacct.usage"
		return
	fi
	while read -r k v; do
		[[ $k == usage_usec ]] && echo $((v * 1000))
	done <"$cg/cpu.stat"
}

if [[ -w $v1/tasks ]]; then
	cg=$v1/rpmem-test.$$
elif [[ -w $v2/cgroup.procs && -e $v2/cgroup.controllers ]]; then
	cg=$v2/rpmem-test.$$
fi
if [[ -n $cg ]] && ! { mkdir -p "$cg" && echo $$ >"$cg/cgroup.procs"; }; then
	cg=
fi

t0=$EPOCHREALTIME
"$@"
rc=$?
t1=$EPOCHREALTIME
wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
if [[ -n $cg ]]; then
	cpu=$(awk -v n="$(usage)" 'BEGIN { printf "%.1f", n / 1e9 }')
	# out again, so that the group can go once what is left in it ends
	echo $$ >"${cg%/*}/cgroup.procs"
	rmdir "$cg" 2>/dev/null
else
	cpu=-
fi
echo "$cpu $wall ${*: -1}" >>"$out"
exit $rc
