#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# node-init.sh -- PID 1 of one node of tests/cluster/cluster.sh: the node's
# own mounts, network, environment, sshd, corosync and pacemakerd; on
# SIGTERM it stops pacemakerd, then corosync, then sshd and exits
#
# Usage (cluster.sh runs it in fresh namespaces, never by hand):
#
#   node-init.sh NAME ADDR NODEDIR DIR [KEEP...]
#
# DIR and every KEEP (the source and build trees) stay visible at their
# own paths, also under /tmp or /dev/shm, which the node mounts afresh.
# NODEDIR (under the cluster's DIR) holds what cluster.sh prepared:
#   mounts    "bind|rbind SRC DST" lines, mounted in order before this
#             node's tmpfs on /run, /dev/shm and /tmp hide anything
#   env       VAR=value lines exported before anything starts
#   go        a FIFO: the node's eth0 exists once a line arrives on it
#   ready     a FIFO: "ready" is written once sshd listens, corosync
#             answers and pacemakerd is started
#   ssh/      sshd_config (harness_write_sshd_config) and sshd's log
# Its own output goes to NODEDIR/init.log (cluster.sh redirects it).
set -uo pipefail

name=$1 addr=$2 node=$3 dir=$4
shift 4
keep=("$dir" "$@")
sshd_pid='' corosync_pid='' pcmk_pid=''

# say -- one timestamped line in the node's init log
say() {
	printf '%s %s: %s\n' "$(date +%T.%3N)" "$name" "$*"
}

# die -- give up: PID 1 exits, and the kernel takes the node with it
die() {
	say "fatal: $*"
	exit 1
}

# stop_one -- SIGTERM child $2 (named $1) and reap it
stop_one() {
	local what=$1 pid=$2 rc
	[[ -n $pid ]] || return 0
	kill -TERM "$pid" 2>/dev/null || return 0
	wait "$pid"
	rc=$?
	say "$what ($pid) stopped, status $rc"
}

# stop -- the SIGTERM handler: a clean shutdown in reverse order
stop() {
	trap '' TERM INT
	say "shutting down"
	# pacemakerd stops its resources and daemons first; corosync must
	# outlive it or its peers see this node fail instead of leave
	stop_one pacemakerd "$pcmk_pid"
	stop_one corosync "$corosync_pid"
	stop_one sshd "$sshd_pid"
	say "down"
	exit 0
}

# close_inherited -- close every descriptor above 2: daemons must not hold
# the caller's pipes (a test runner waits for their end)
close_inherited() {
	local fd n
	for fd in "/proc/$$/fd"/*; do
		n=${fd##*/}
		[[ $n =~ ^[0-9]+$ ]] || continue
		# 255: bash reads this script through it
		((n > 2 && n != 255)) || continue
		eval "exec $n>&-" 2>/dev/null
	done
}

# own_mounts -- NODEDIR/mounts, then tmpfs of this node's own on /run,
# /dev/shm (libqb's rings would clash between nodes) and /tmp, with DIR
# and every KEEP left visible at its own path
own_mounts() {
	local kind src dst k o i=0 held=()
	# first, while every source (an OCF overlay in /tmp, say) is visible
	while read -r kind src dst; do
		case $kind in
		bind) mount --bind "$src" "$dst" ;;
		rbind) mount --rbind "$src" "$dst" ;;
		*) say "unknown mount kind '$kind'"; false ;;
		esac || return 1
	done <"$node/mounts"
	mount -t tmpfs -o mode=755 cluster-run /run || return 1
	# those under /dev/shm or /tmp: held in our /run meanwhile (one
	# inside another goes with it)
	for k in "${keep[@]}"; do
		case $k in /dev/shm/* | /tmp/*) ;; *) continue ;; esac
		for o in "${keep[@]}"; do
			[[ $k != "$o" && $k == "$o"/* ]] && continue 2
		done
		for o in "${held[@]}"; do
			[[ ${o#*:} == "$k" ]] && continue 2
		done
		mkdir "/run/cluster-keep.$i" &&
			mount --rbind "$k" "/run/cluster-keep.$i" || return 1
		held+=("$i:$k")
		i=$((i + 1))
	done
	mount -t tmpfs -o mode=1777 cluster-shm /dev/shm &&
		mount -t tmpfs -o mode=1777 cluster-tmp /tmp || return 1
	for k in "${held[@]}"; do
		mkdir -p "${k#*:}" &&
			mount --move "/run/cluster-keep.${k%%:*}" "${k#*:}" &&
			rmdir "/run/cluster-keep.${k%%:*}" || return 1
	done
	# what daemons expect in /run: pacemaker's state directory, sshd's
	# privilege separation directory, agents' state
	mkdir -m 750 /run/crm && chown hacluster:haclient /run/crm &&
		mkdir -m 755 /run/sshd &&
		mkdir -m 1755 /run/resource-agents &&
		mkdir -m 1777 /run/lock
}

# own_network -- lo up; eth0 (made by cluster.sh from the switch) up with
# ADDR once cluster.sh says it exists
own_network() {
	local line
	ip link set lo up || return 1
	if ! read -r -t 60 line <"$node/go"; then
		say "no word on $node/go"
		return 1
	fi
	ip link set eth0 up && ip addr add "$addr/24" dev eth0
}

# own_env -- export NODEDIR/env's VAR=value lines (checked by cluster.sh)
own_env() {
	local line
	[[ -f $node/env ]] || return 0
	while IFS= read -r line; do
		[[ $line =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || continue
		export "${line?}"
		say "env ${line%%=*}"
	done <"$node/env"
}

# start_sshd -- sshd in the foreground of this init; it listens once it has
# written its pid file
start_sshd() {
	local conf=$node/ssh/sshd_config pidfile try
	pidfile=$(sed -n 's/^PidFile //p' "$conf")
	rm -f -- "$pidfile"
	# sshd re-executes itself, by an absolute path
	"$(command -v sshd)" -D -f "$conf" -E "$node/ssh/sshd.log" &
	sshd_pid=$!
	for ((try = 0; try < 300; try++)); do
		[[ -s $pidfile ]] && return 0
		kill -0 "$sshd_pid" 2>/dev/null || break
		sleep 0.05
	done
	say "sshd did not come up (see $node/ssh/sshd.log)"
	return 1
}

# start_corosync -- corosync in the foreground, up once cmap answers
start_corosync() {
	local try
	corosync -f &
	corosync_pid=$!
	for ((try = 0; try < 300; try++)); do
		corosync-cmapctl -g totem.cluster_name >/dev/null 2>&1 &&
			return 0
		kill -0 "$corosync_pid" 2>/dev/null || break
		sleep 0.05
	done
	say "corosync did not come up (see /var/log/corosync/corosync.log)"
	return 1
}

trap stop TERM INT
close_inherited
# not the caller's directory: it may be hidden here, or removed
cd / || die "cd /"
unset OLDPWD
say "PID $$ in new namespaces"
hostname "$name" || die "hostname"
own_mounts || die "mounts"
own_network || die "network"
own_env
start_sshd || die "sshd"
start_corosync || die "corosync"
# pacemakerd 2.1.5 always runs in the foreground
PCMK_logfile=/var/log/pacemaker/pacemaker.log PCMK_logfacility=none \
	pacemakerd &
pcmk_pid=$!
say "sshd $sshd_pid, corosync $corosync_pid, pacemakerd $pcmk_pid"
echo ready >"$node/ready" || die "cannot say ready"

# stay PID 1: wait returns on the SIGTERM trap, and bash reaps every
# orphan the kernel hands us on the way
while :; do
	sleep infinity &
	wait $!
done
