# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# cluster.sh -- a real Pacemaker 2.1 + Corosync 3 cluster of 2 or 3 nodes on
# this machine, each node in namespaces of its own, for scenario tests
#
# Files: tests/cluster/cluster.sh (this library; source it from bash) with
# cluster_conf.sh (files written before a node starts) and cluster_query.sh
# (crm_mon's XML asked), tests/cluster/node-init.sh (PID 1 of each node)
# and tests/cluster/smoke.sh (the self-test, with ocf:pacemaker:Stateful).
#
#   cluster_require          exit 77 naming what is missing unless this is
#                            root with corosync, pacemakerd, unshare,
#                            nsenter, ip, sshd and xmllint and namespaces
#                            can be made (cluster_start calls it)
#   cluster_start DIR N      nodes n1..nN (N 2 or 3) under DIR/nX, a switch;
#                            returns once all are online with a DC, the
#                            cluster options set; exports CLUSTER_SSH.
#                            2 nodes: corosync's two_node (each half of a
#                            split keeps quorum), no-quorum-policy=ignore;
#                            always stonith-enabled=false
#   cluster_exec NODE CMD... CMD inside NODE's namespaces; its status
#   cluster_pid1 NODE        print the host pid of NODE's PID 1
#   cluster_kill NODE        power NODE off (SIGKILL to its PID 1)
#   cluster_shutdown NODE    stop NODE cleanly (SIGTERM to its PID 1)
#   cluster_boot NODE        start NODE again with its directories; returns
#                            once corosync and pacemakerd run on it
#   cluster_cut NODE         its link down in the switch
#   cluster_heal NODE        and up again
#   cluster_wait SECS CMD... poll CMD until it succeeds; 1 on timeout
#   cluster_wait_online [NODE...]
#                            the NODEs (default: all running) online as
#                            seen from a quorate node
#   cluster_quorate Q        node Q's partition has a DC and quorum
#   cluster_seen_offline Q NODE...
#                            node Q's partition has a DC and sees the
#                            NODEs offline (after cluster_cut, say)
#   cluster_running Q RSC    "nX ROLE" lines where RSC (a clone, a group or
#                            a primitive id) runs, as node Q sees it
#   cluster_promoted Q RSC   the nodes where RSC runs Promoted
#   cluster_dc Q             the DC's name as node Q sees it
#   cluster_cib NODE ARG...  cibadmin ARG... inside NODE
#   cluster_stop             stop every node and the switch, by pid; safe
#                            to call twice and from an EXIT trap
#   cluster_logs [LINES]     the tail of each node's init, corosync and
#                            pacemaker logs
#   cluster_leftovers        print any process still in a namespace the
#                            harness made (nothing after cluster_stop)
#   cluster_now              date +%s.%N
#   cluster_since START      seconds since START (from cluster_now)
#
# Environment read by cluster_start:
#   CLUSTER_TOKEN        corosync's token in ms (default 1000; corosync adds
#                        token_coefficient, 650 ms, for each node past 2)
#   CLUSTER_TOKEN_COEFFICIENT  corosync's token_coefficient (0: the token
#                        is CLUSTER_TOKEN whatever the number of nodes)
#   CLUSTER_OCF_OVERLAY  a directory laid out like an OCF root, with
#                        resource.d/PROVIDER/ and lib/PROVIDER/: each node
#                        gets a tree of its own over /usr/lib/ocf with the
#                        host's providers and the overlay's
#   CLUSTER_NODE_ENV     VAR=value lines (# comments) exported in each
#                        node's init before corosync and pacemakerd start.
#                        pacemaker-execd runs agents with its environment
#                        plus the OCF_* variables, so they see these (smoke.sh
#                        checks it with Stateful's envfile).  A node starts
#                        from a clean environment (PATH, LANG=C) as a real
#                        one would: this is the only way to give agents
#                        anything (RPMEM_*, LD_LIBRARY_PATH...).  cluster_exec
#                        passes the caller's environment; ssh gives sshd's.
#   CLUSTER_ONLINE_TIMEOUT, CLUSTER_STOP_TIMEOUT
#                        seconds for cluster_wait_online (default 120) and
#                        for a node to stop on SIGTERM (default 60)
#
# Layout: DIR/nX/{etc/corosync,var/lib/corosync,var/log/corosync,
# var/lib/pacemaker,var/log/pacemaker,srv} are bound over the same paths in
# node nX (so /srv is per node, and the CIB survives cluster_kill and
# cluster_boot as it would a reboot); DIR/nX/init.log is the node's init;
# DIR/nX/ssh its sshd; DIR/ssh the client side (key, ssh_config, the
# wrapper $CLUSTER_SSH and its record of calls, ssh.calls).  Each node has
# tmpfs of its own on /run, /dev/shm and /tmp; DIR stays visible at its own
# path inside every node.  cluster_start on a DIR of an earlier run keeps
# what the nodes left there: a restart of the whole cluster.
#
# Rules kept: every process is started here and stopped by its pid; the
# host's network namespace is never entered (each nsenter -n first checks
# the target's is another); nothing is mounted but inside a node's mount
# namespace; nothing is written outside DIR.  Functions print a message to
# stderr and return non-zero on failure.

CLUSTER_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../common/harness.sh
. "$CLUSTER_LIB_DIR/../common/harness.sh"
# shellcheck source-path=SCRIPTDIR source=cluster_conf.sh
. "$CLUSTER_LIB_DIR/cluster_conf.sh"
# shellcheck source-path=SCRIPTDIR source=cluster_query.sh
. "$CLUSTER_LIB_DIR/cluster_query.sh"

# PATH in the nodes (systemd's default)
CLUSTER_NODE_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
CLUSTER_DIR=
CLUSTER_N=0
CLUSTER_NODES=()
CLUSTER_SSH=
# CLUSTER_OCF_OVERLAY made absolute
CLUSTER_OVERLAY=
CLUSTER_SWITCH=
CLUSTER_SWITCH_T=
declare -gA CLUSTER_PID1=() CLUSTER_T1=() CLUSTER_GO_FD=() CLUSTER_READY_FD=()
# "pid start" of every launcher and "ns:[inode]" of every namespace made
CLUSTER_LAUNCHERS=()
CLUSTER_NSIDS=()

# cluster_err -- print a message prefixed with "cluster:" to stderr
cluster_err() {
	printf 'cluster: %s\n' "$*" >&2
}

# cluster_require -- exit 77 (skip) unless a cluster can be made here
cluster_require() {
	local p why=
	if [[ $(id -u) != 0 ]]; then
		why="not root"
	else
		for p in corosync corosync-cmapctl pacemakerd crm_mon \
				crm_attribute cibadmin unshare nsenter ip \
				mkfifo sshd ssh ssh-keygen xmllint; do
			PATH=$PATH:/usr/sbin:/sbin command -v "$p" >/dev/null ||
				why+=" $p"
		done
		[[ -z $why ]] || why="missing:$why"
	fi
	if [[ -z $why ]] && ! id hacluster >/dev/null 2>&1; then
		why="no user hacluster (install pacemaker)"
	fi
	if [[ -z $why ]] && ! unshare --net --mount --uts --pid --fork \
			--mount-proc true 2>/dev/null; then
		why="cannot make namespaces (unshare refused)"
	fi
	[[ -z $why ]] && return 0
	echo "${0##*/}: a cluster cannot be made here: $why; skipped"
	exit 77
}

# cluster_now -- the time, as date +%s.%N
cluster_now() {
	date +%s.%N
}

# cluster_ms -- print seconds $1 (as cluster_now prints them, or 5, 0.5)
# in ms
cluster_ms() {
	local s=${1%.*} f=000
	[[ $1 == *.* ]] && f=${1#*.}000
	echo $((10#${s:-0} * 1000 + 10#${f:0:3}))
}

# cluster_since -- print the seconds since $1 (from cluster_now), as 1.23
cluster_since() {
	local ms
	ms=$(($(cluster_ms "$(cluster_now)") - $(cluster_ms "$1")))
	printf '%d.%02d\n' $((ms / 1000)) $((ms % 1000 / 10))
}

# cluster_us -- the microseconds since the epoch (bash's clock)
cluster_us() {
	echo $((10#${EPOCHREALTIME//[!0-9]/}))
}

# cluster_proc_start -- print the start time of live process $1 (from
# /proc/PID/stat); false when there is none or it is a zombie
cluster_proc_start() {
	local line
	local -a f
	read -r line 2>/dev/null <"/proc/$1/stat" || return 1
	# fields after "(comm)": state is the first, starttime the 20th
	read -r -a f <<<"${line##*) }"
	[[ ${f[0]} != [ZX] ]] || return 1
	printf '%s\n' "${f[19]}"
}

# cluster_is -- true when pid $1 is alive and started at $2
cluster_is() {
	local t
	[[ -n $1 ]] || return 1
	t=$(cluster_proc_start "$1") || return 1
	[[ $t == "$2" ]]
}

# cluster_own_ns -- true when pid $1 has a network namespace of its own
# (never the host's, where nothing may be changed)
cluster_own_ns() {
	[[ -e /proc/$1/ns/net && ! /proc/$1/ns/net -ef /proc/self/ns/net ]]
}

# cluster_is_pid1 -- true when pid $1 is PID 1 of a PID namespace below
# ours, in a network namespace of its own
cluster_is_pid1() {
	local key pids
	cluster_own_ns "$1" || return 1
	while read -r key pids; do
		[[ $key == NSpid: ]] || continue
		[[ $pids == *[[:space:]]1 ]]
		return
	done 2>/dev/null <"/proc/$1/status"
	return 1
}

# cluster_known -- true when $1 names a node of this cluster
cluster_known() {
	local n
	for n in "${CLUSTER_NODES[@]}"; do
		[[ $n == "$1" ]] && return 0
	done
	cluster_err "no node '$1' (nodes: ${CLUSTER_NODES[*]:-none})"
	return 1
}

# cluster_alive -- true when node $1's PID 1 runs
cluster_alive() {
	cluster_is "${CLUSTER_PID1[$1]:-}" "${CLUSTER_T1[$1]:-}"
}

# cluster_pid1 -- print the host pid of node $1's PID 1
cluster_pid1() {
	cluster_known "$1" || return 1
	if ! cluster_alive "$1"; then
		cluster_err "node $1 is not running"
		return 1
	fi
	printf '%s\n' "${CLUSTER_PID1[$1]}"
}

# cluster_exec -- run $2... in node $1's namespaces, in the caller's working
# directory where the node has it (else /); the command's status
cluster_exec() {
	local node=$1 pid
	shift
	cluster_known "$node" || return 1
	if ! cluster_alive "$node"; then
		cluster_err "node $node is not running"
		return 1
	fi
	pid=${CLUSTER_PID1[$node]}
	cluster_own_ns "$pid" || {
		cluster_err "node $node shares the host's network namespace"
		return 1
	}
	# entering a mount namespace resets the working directory to /
	# shellcheck disable=SC2016 # expanded by that shell
	nsenter -t "$pid" -n -m -u -p -- /bin/sh -c \
		'cd -- "$0" 2>/dev/null || cd /; exec "$@"' "$PWD" "$@"
}

# cluster_switch -- run $@ in the switch's network namespace
cluster_switch() {
	if ! cluster_is "$CLUSTER_SWITCH" "$CLUSTER_SWITCH_T" ||
			! cluster_own_ns "$CLUSTER_SWITCH"; then
		cluster_err "the switch is not running"
		return 1
	fi
	nsenter -t "$CLUSTER_SWITCH" -n -- "$@"
}

# cluster_wait -- run $2... every 0.15 s until it succeeds or $1 seconds
# (an integer or a decimal) have passed
cluster_wait() {
	local secs=$1 end
	shift
	end=$(($(cluster_us) + $(cluster_ms "$secs") * 1000))
	while :; do
		"$@" && return 0
		(($(cluster_us) < end)) || break
		tu_nap 0.15
	done
	cluster_err "no success within $secs s: $*"
	return 1
}

# cluster_ns_record -- remember pid $1's namespaces $2... (pid, net, mnt)
# for cluster_leftovers
cluster_ns_record() {
	local pid=$1 ns id
	shift
	for ns in "$@"; do
		id=$(readlink "/proc/$pid/ns/$ns") || return 1
		CLUSTER_NSIDS+=("$id")
	done
}

# cluster_switch_start -- a network namespace with a bridge br0, held by a
# process of its own
cluster_switch_start() {
	local try
	unshare --net -- sleep infinity </dev/null >/dev/null 2>&1 &
	CLUSTER_SWITCH=$!
	disown "$CLUSTER_SWITCH"
	# nsenter must not run before unshare(2) did: it would enter ours
	for ((try = 0; try < 200; try++)); do
		cluster_own_ns "$CLUSTER_SWITCH" && break
		tu_nap 0.01
	done
	CLUSTER_SWITCH_T=$(cluster_proc_start "$CLUSTER_SWITCH") || {
		cluster_err "the switch's process died"
		return 1
	}
	cluster_ns_record "$CLUSTER_SWITCH" net || return 1
	cluster_switch ip link set lo up &&
		cluster_switch ip link add br0 type bridge &&
		cluster_switch ip link set br0 up
}

# cluster_launch -- start node $1: its PID 1 in new namespaces, its port on
# the switch; cluster_ready waits for it
cluster_launch() {
	local node=$1 nd=$CLUSTER_DIR/$1 launcher pid1='' try go ready kids
	rm -f -- "$nd/go" "$nd/ready"
	mkfifo -m 600 "$nd/go" "$nd/ready" || return 1
	# both held open here, so that neither end blocks on open(2) and
	# nothing written is lost before the other side reads
	exec {go}<>"$nd/go" {ready}<>"$nd/ready" || return 1
	CLUSTER_GO_FD[$node]=$go
	CLUSTER_READY_FD[$node]=$ready
	printf '=== %s boot\n' "$(date '+%F %T')" >>"$nd/init.log"
	# setsid inside: PID 1 leads a session of its own, away from the
	# caller's terminal (outside, setsid would fork when we lead a group).
	# The environment is a fresh one, as a real node's init would give:
	# without env -i every agent saw all of the test's variables
	env -i PATH="$CLUSTER_NODE_PATH" LANG=C \
		unshare --net --mount --uts --pid --fork --mount-proc \
		--propagation private -- setsid \
		"$CLUSTER_LIB_DIR/node-init.sh" "$node" \
		"$(cluster_addr "$node")" "$nd" "$CLUSTER_DIR" \
		"${top_srcdir:-}" "${top_builddir:-}" \
		</dev/null >>"$nd/init.log" 2>&1 {go}>&- {ready}>&- &
	launcher=$!
	# no "Killed" report from bash when the node is powered off
	disown "$launcher"
	CLUSTER_LAUNCHERS+=("$launcher $(cluster_proc_start "$launcher")")
	# unshare may fork a short-lived helper first: PID 1 is the child
	# whose pid in its own namespace is 1
	for ((try = 0; try < 500; try++)); do
		kids=$(cat "/proc/$launcher/task/$launcher/children" \
			2>/dev/null) || kids=
		for pid1 in $kids; do
			cluster_is_pid1 "$pid1" && break 2
		done
		pid1=
		kill -0 "$launcher" 2>/dev/null || break
		tu_nap 0.01
	done
	if [[ -z $pid1 ]]; then
		cluster_err "node $node did not start (see $nd/init.log)"
		return 1
	fi
	CLUSTER_PID1[$node]=$pid1
	CLUSTER_T1[$node]=$(cluster_proc_start "$pid1") || return 1
	cluster_ns_record "$pid1" pid net mnt || return 1
	# a powered-off node's port may outlive it for a moment
	cluster_switch ip link del "p-$node" 2>/dev/null
	cluster_switch ip link add "p-$node" type veth peer name eth0 \
		netns "$pid1" &&
		cluster_switch ip link set "p-$node" master br0 up || return 1
	echo go >&"$go"
}

# cluster_ready -- wait until node $1 says it runs sshd, corosync and
# pacemakerd (or dies, or 60 s pass); close the FIFOs.  A read that times
# out keeps what it read of a line (bash reads a FIFO a byte at a time):
# the rest comes with the next read, so a "ready" written just as a
# timeout fired is still heard (it was not, twice in CI)
cluster_ready() {
	local node=$1 line='' part end rc=1 go ready
	end=$(($(cluster_us) + 60000000))
	while (($(cluster_us) < end)); do
		part=
		if read -r -t 0.2 -u "${CLUSTER_READY_FD[$node]}" part; then
			line+=$part
			[[ $line == ready ]] && { rc=0; break; }
			line=
		else
			line+=$part
		fi
		cluster_alive "$node" || break
	done
	go=${CLUSTER_GO_FD[$node]} ready=${CLUSTER_READY_FD[$node]}
	exec {go}>&- {ready}>&-
	unset "CLUSTER_GO_FD[$node]" "CLUSTER_READY_FD[$node]"
	((rc == 0)) && return 0
	cluster_err "node $node did not come up; its init log:"
	tail -n 20 "$CLUSTER_DIR/$node/init.log" >&2
	return 1
}

# cluster_options -- set the cluster options through node $1
cluster_options() {
	local name value
	while read -r name value; do
		cluster_exec "$1" crm_attribute --type crm_config \
			--name "$name" --update "$value" || return 1
	done < <(cluster_option_args)
}

# cluster_start -- start nodes n1..n$2 under $1 (see the top)
cluster_start() {
	local dir=${1:?cluster_start: directory expected}
	local n=${2:?cluster_start: node count expected} t0 node i dc
	cluster_require
	if [[ ! $n =~ ^[23]$ ]]; then
		cluster_err "cluster_start: 2 or 3 nodes, not '$n'"
		return 1
	fi
	if [[ -n $CLUSTER_SWITCH ]]; then
		cluster_err "a cluster already runs under $CLUSTER_DIR"
		return 1
	fi
	mkdir -p -- "$dir" && dir=$(cd -- "$dir" && pwd -P) || return 1
	# DIR goes into ssh configs and mount lists, and must stay visible
	# in the nodes (whose /run, /dev/shm and /tmp are their own)
	case $dir in
	*[[:space:]\"\'\\#]*)
		cluster_err "'$dir': no blanks, quotes, backslashes or '#'"
		return 1 ;;
	/ | /run | /run/* | /var/run/* | /tmp | /dev/shm)
		cluster_err "'$dir': use a directory of its own, not in /run"
		return 1 ;;
	esac
	CLUSTER_OVERLAY=
	if [[ -n ${CLUSTER_OCF_OVERLAY:-} ]]; then
		CLUSTER_OVERLAY=$(cd -- "$CLUSTER_OCF_OVERLAY" 2>/dev/null &&
			pwd -P) || CLUSTER_OVERLAY=
		if [[ -z $CLUSTER_OVERLAY ||
			$CLUSTER_OVERLAY == *[[:space:]]* ]]; then
			cluster_err "CLUSTER_OCF_OVERLAY: no directory" \
				"'$CLUSTER_OCF_OVERLAY' (or one with blanks)"
			return 1
		fi
	fi
	t0=$(cluster_now)
	CLUSTER_DIR=$dir
	CLUSTER_N=$n
	CLUSTER_NODES=()
	for ((i = 1; i <= n; i++)); do
		CLUSTER_NODES+=("n$i")
	done
	if [[ ! -s $dir/authkey ]]; then
		(umask 077 && head -c 256 /dev/urandom >"$dir/authkey") ||
			return 1
	fi
	cluster_keys && cluster_seed_cib || return 1
	for node in "${CLUSTER_NODES[@]}"; do
		cluster_prepare "$node" || return 1
	done
	cluster_client || return 1

	if ! cluster_switch_start; then
		cluster_stop
		return 1
	fi
	for node in "${CLUSTER_NODES[@]}"; do
		cluster_launch "$node" || { cluster_stop; return 1; }
	done
	for node in "${CLUSTER_NODES[@]}"; do
		cluster_ready "$node" || { cluster_stop; return 1; }
	done
	if ! cluster_wait_online "${CLUSTER_NODES[@]}"; then
		cluster_logs 15 >&2
		cluster_stop
		return 1
	fi
	dc=$(cluster_dc n1)
	if ! cluster_options n1; then
		cluster_err "cannot set the cluster options"
		cluster_stop
		return 1
	fi
	for node in "${CLUSTER_NODES[@]}"; do
		if ! cluster_exec n1 "$CLUSTER_SSH" "$node" true \
				</dev/null; then
			cluster_err "no ssh login from n1 into $node"
			cluster_stop
			return 1
		fi
	done
	echo "cluster: $n nodes online under $dir, DC $dc," \
		"in $(cluster_since "$t0") s"
}

# cluster_boot -- start node $1 again (killed or shut down) with its
# directories; returns once it runs corosync and pacemakerd
cluster_boot() {
	local node=$1 t0
	cluster_known "$node" || return 1
	if cluster_alive "$node"; then
		cluster_err "node $node is running"
		return 1
	fi
	t0=$(cluster_now)
	cluster_launch "$node" && cluster_ready "$node" || return 1
	echo "cluster: $node booted in $(cluster_since "$t0") s"
}

# cluster_dead -- true when node $1's PID 1 is gone
cluster_dead() {
	! cluster_alive "$1"
}

# cluster_gone -- wait up to $2 seconds for node $1's PID 1 to be reaped
# (the kernel empties its PID namespace first)
cluster_gone() {
	cluster_wait "$2" cluster_dead "$1" 2>/dev/null && return 0
	cluster_err "node $1 still runs after $2 s"
	return 1
}

# cluster_unplug -- remove node $1's port from the switch, if still there
cluster_unplug() {
	cluster_switch ip link del "p-$1" 2>/dev/null
	return 0
}

# cluster_kill -- power node $1 off: SIGKILL its PID 1, wait, unplug it
cluster_kill() {
	local node=$1
	cluster_known "$node" || return 1
	if ! cluster_alive "$node"; then
		cluster_err "node $node is not running"
		return 1
	fi
	kill -KILL "${CLUSTER_PID1[$node]}" || return 1
	cluster_gone "$node" 10 || return 1
	cluster_unplug "$node"
}

# cluster_shutdown -- stop node $1 cleanly (its init stops pacemakerd,
# corosync, sshd); SIGKILL after CLUSTER_STOP_TIMEOUT seconds
cluster_shutdown() {
	local node=$1
	cluster_known "$node" || return 1
	cluster_alive "$node" || return 0
	kill -TERM "${CLUSTER_PID1[$node]}" || return 1
	if ! cluster_gone "$node" "${CLUSTER_STOP_TIMEOUT:-60}" 2>/dev/null
	then
		cluster_err "node $node ignored SIGTERM; SIGKILL"
		kill -KILL "${CLUSTER_PID1[$node]}" 2>/dev/null
		cluster_gone "$node" 10 || return 1
	fi
	cluster_unplug "$node"
}

# cluster_cut -- take node $1's link down at the switch
cluster_cut() {
	cluster_known "$1" && cluster_switch ip link set "p-$1" down
}

# cluster_heal -- bring node $1's link up again
cluster_heal() {
	cluster_known "$1" && cluster_switch ip link set "p-$1" up
}

# cluster_all_dead -- true when no node's PID 1 runs
cluster_all_dead() {
	[[ -z $(cluster_running_nodes) ]]
}

# cluster_quiet -- true when no launcher (and so no node) of this run and
# not the switch runs
cluster_quiet() {
	local l
	for l in "${CLUSTER_LAUNCHERS[@]}"; do
		# shellcheck disable=SC2086 # "pid starttime"
		cluster_is $l && return 1
	done
	! cluster_is "$CLUSTER_SWITCH" "$CLUSTER_SWITCH_T"
}

# cluster_reap_launchers -- SIGKILL the children of launchers still running
cluster_reap_launchers() {
	local l pid kids
	for l in "${CLUSTER_LAUNCHERS[@]}"; do
		# shellcheck disable=SC2086 # "pid starttime"
		cluster_is $l || continue
		pid=${l%% *}
		kids=$(cat "/proc/$pid/task/$pid/children" 2>/dev/null) ||
			continue
		[[ -n $kids ]] || continue
		cluster_err "launcher $pid still runs; SIGKILL to $kids"
		# shellcheck disable=SC2086 # a list of pids
		kill -KILL $kids 2>/dev/null
	done
	return 0
}

# cluster_stop -- stop every node (SIGTERM, then SIGKILL after the
# deadline) and the switch; all by pid, safe to repeat
cluster_stop() {
	local node rc=0 fd t
	for fd in "${CLUSTER_GO_FD[@]}" "${CLUSTER_READY_FD[@]}"; do
		exec {fd}>&-
	done
	CLUSTER_GO_FD=() CLUSTER_READY_FD=()
	for node in $(cluster_running_nodes); do
		kill -TERM "${CLUSTER_PID1[$node]}" 2>/dev/null
	done
	t=${CLUSTER_STOP_TIMEOUT:-60}
	if ! cluster_wait "$t" cluster_all_dead 2>/dev/null; then
		for node in $(cluster_running_nodes); do
			cluster_err "node $node ignored SIGTERM ($t s); SIGKILL"
			kill -KILL "${CLUSTER_PID1[$node]}" 2>/dev/null
		done
		cluster_wait 10 cluster_all_dead || rc=1
	fi
	if cluster_is "$CLUSTER_SWITCH" "$CLUSTER_SWITCH_T"; then
		kill -TERM "$CLUSTER_SWITCH" 2>/dev/null
	fi
	# a launcher whose PID 1 was never recorded (a boot that failed
	# half-way): SIGKILL its children, by pid
	cluster_reap_launchers
	# the launchers exit as soon as their node's PID 1 is reaped
	cluster_wait 10 cluster_quiet || rc=1
	((rc == 0)) || return 1
	CLUSTER_PID1=() CLUSTER_T1=()
	CLUSTER_SWITCH='' CLUSTER_SWITCH_T=''
}

# cluster_logs -- print the last $1 (default 30) lines of each node's logs
cluster_logs() {
	local lines=${1:-30} node f
	for node in "${CLUSTER_NODES[@]}"; do
		for f in init.log var/log/corosync/corosync.log \
				var/log/pacemaker/pacemaker.log; do
			f=$CLUSTER_DIR/$node/$f
			[[ -s $f ]] || continue
			printf -- '--- %s (last %d lines) ---\n' "$f" "$lines"
			tail -n "$lines" -- "$f"
		done
	done
}

# cluster_leftovers -- print "pid comm" of each process still in one of
# the namespaces made here, or a launcher still running; false if any
cluster_leftovers() {
	local l p id found=1
	local -A ours=() seen=()
	for id in "${CLUSTER_NSIDS[@]}"; do
		ours[$id]=1
	done
	for l in "${CLUSTER_LAUNCHERS[@]}"; do
		# shellcheck disable=SC2086 # "pid starttime"
		cluster_is $l || continue
		p=${l%% *}
		echo "$p $(cat "/proc/$p/comm" 2>/dev/null) (launcher)"
		found=0
	done
	# one find for all: "/proc/PID/ns ns:[inode]"
	while read -r p id; do
		[[ -n $id && -n ${ours[$id]:-} && -z ${seen[$p]:-} ]] ||
			continue
		seen[$p]=1
		p=${p%/ns}
		echo "${p#/proc/} $(cat "$p/comm" 2>/dev/null) ($id)"
		found=0
	done < <(find /proc/[0-9]*/ns -maxdepth 1 \( -name pid -o -name net \
		-o -name mnt \) -printf '%h %l\n' 2>/dev/null)
	return $found
}
