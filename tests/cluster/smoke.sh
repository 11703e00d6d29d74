#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# smoke.sh -- the self-test of tests/cluster/cluster.sh with Pacemaker's own
# ocf:pacemaker:Stateful as a promotable clone: 3 nodes started, the clone
# promoted, the promoted node killed (failover timed), booted again and
# Unpromoted, a node cut off and healed, everything stopped; then nothing
# of it left on the host.  Exit 0, 1, or 77 where no cluster can be made.
#
# CLUSTER_KEEP=1 keeps the directory; CLUSTER_TOKEN as in cluster.sh.
set -uo pipefail

# shellcheck disable=SC2034 # read by tu.sh (tu_rmtmp)
me=${0##*/}
# shellcheck source-path=SCRIPTDIR source=cluster.sh
. "$(dirname "${BASH_SOURCE[0]}")/cluster.sh"
cluster_require

t_all=$(cluster_now)
base=${TMPDIR:-/tmp}
[[ -z ${TMPDIR:-} && -d /dev/shm && -w /dev/shm ]] && base=/dev/shm
tmp=$(mktemp -d "$base/rpmem-cluster-smoke.XXXXXX") || exit 1

# smoke_exit -- the EXIT trap: stop the cluster, logs of a failure, clean up
smoke_exit() {
	local rc=$?
	trap - EXIT
	cluster_stop || rc=1
	((rc == 0)) || cluster_logs 25
	tu_rmtmp "$tmp" "${CLUSTER_KEEP:-0}"
	exit "$rc"
}
trap smoke_exit EXIT
trap 'exit 1' HUP INT TERM

# figure -- print one measured figure
figure() {
	printf '# figure: %-40s %s s\n' "$1" "$2"
}

# host_state -- what the host shows that a run must leave as it was
host_state() {
	findmnt -rn -o TARGET,SOURCE,FSTYPE
	ip -o link show | sed 's/^[0-9]*: //; s/ .*//'
	ls -A /srv
}

# node_procs -- "pid starttime" of every corosync, pacemaker* and sshd
# process whose parent chain leads to a node's PID 1
node_procs() {
	local -A parent=() comm=() pid1s=()
	local pid ppid c p node t
	for node in "${CLUSTER_NODES[@]}"; do
		p=$(cluster_pid1 "$node" 2>/dev/null) && pid1s[$p]=1
	done
	while read -r pid ppid c; do
		parent[$pid]=$ppid
		comm[$pid]=$c
	done < <(ps -eo pid=,ppid=,comm=)
	for pid in "${!comm[@]}"; do
		[[ ${comm[$pid]} =~ ^(corosync|pacemaker|sshd) ]] || continue
		for ((p = parent[$pid]; p > 1; p = ${parent[$p]:-0})); do
			[[ -n ${pid1s[$p]:-} ]] || continue
			t=$(cluster_proc_start "$pid") && echo "$pid $t"
			break
		done
	done
}

# count_roles -- true when node $1 sees RSC $2 Promoted $3 times and
# Unpromoted $4 times
count_roles() {
	local out
	out=$(cluster_running "$1" "$2") || return 1
	[[ $(grep -c ' Promoted$' <<<"$out") == "$3" &&
		$(grep -c ' Unpromoted$' <<<"$out") == "$4" ]]
}

# promoted_elsewhere -- true when node $1 sees $2 Promoted on one node,
# not $3
promoted_elsewhere() {
	local p
	p=$(cluster_promoted "$1" "$2") || return 1
	[[ $p != *$'\n'* && $p != "$3" ]]
}

# running_as -- true when node $1 sees $2 on node $3 in role $4
running_as() {
	cluster_running "$1" "$2" | grep -qx "$3 $4"
}

# back_unpromoted -- true when node $1 sees node $2 Unpromoted and one
# Promoted, two Unpromoted in all
back_unpromoted() {
	running_as "$1" st-clone "$2" Unpromoted &&
		count_roles "$1" st-clone 1 2
}

# not_running_on -- true when node $1 sees no instance of $2 on node $3
not_running_on() {
	! cluster_running "$1" "$2" | grep -q "^$3 "
}

# other_node -- print a node other than $1 and $2
other_node() {
	local n
	for n in "${CLUSTER_NODES[@]}"; do
		[[ $n != "$1" && $n != "$2" ]] && { echo "$n"; return 0; }
	done
	return 1
}

# is_equal -- $1 (what) is $3, as expected $2
is_equal() {
	[[ $2 == "$3" ]] && return 0
	echo "    # $1: '$3', expected '$2'"
	return 1
}

# own_nodes -- each node has its own hostname, address and /srv
own_nodes() {
	local n
	for n in "${CLUSTER_NODES[@]}"; do
		is_equal "hostname of $n" "$n" \
			"$(cluster_exec "$n" hostname)" || return 1
		cluster_exec "$n" ip -4 -o addr show dev eth0 |
			grep -q " $(cluster_addr "$n")/24 " || return 1
		cluster_exec "$n" sh -c "echo $n >/srv/whoami" || return 1
		is_equal "$n's /srv" "$n" "$(cat "$cdir/$n/srv/whoami")" ||
			return 1
	done
}

# options_set -- the cluster options as cluster_start sets them
options_set() {
	local name value
	for name in stonith-enabled no-quorum-policy dc-deadtime; do
		value=$(cluster_exec n2 crm_attribute --type crm_config \
			--name "$name" --query --quiet) || return 1
		echo "    # $name=$value"
	done
	[[ $value == 5s ]]
}

# ssh_works -- CLUSTER_SSH by name, by address and with -p as librpmem
# calls it
ssh_works() {
	is_equal "n1 to n2" n2 \
		"$(cluster_exec n1 "$CLUSTER_SSH" n2 hostname </dev/null)" &&
	is_equal "n2 to 198.18.0.3" n3 "$(cluster_exec n2 "$CLUSTER_SSH" \
		198.18.0.3 hostname </dev/null)" &&
	is_equal "n3 to n1 -p 22" n1 \
		"$(cluster_exec n3 "$CLUSTER_SSH" -p 22 n1 hostname </dev/null)"
}

# overlay_seen -- the overlay's agent (with its lib) and the host's own
# providers in a node's /usr/lib/ocf
overlay_seen() {
	cluster_exec n3 crm_resource --show-metadata ocf:smoke:probe |
		grep -q smoke-overlay-lib-ok &&
		cluster_exec n3 test -x /usr/lib/ocf/resource.d/heartbeat/Dummy
}

# env_seen -- Stateful's envfile on every node holds CLUSTER_NODE_ENV's
# variable
env_seen() {
	local n
	for n in "${CLUSTER_NODES[@]}"; do
		grep -qx SMOKE_NODE_ENV=from-node-init \
			"$cdir/$n/srv/stateful.env" || return 1
	done
}

# no_zombie -- no zombie process in node $1
no_zombie() {
	! cluster_exec "$1" ps -eo stat= | grep -q '^Z'
}

# procs_gone -- none of the "pid starttime" lines of $1 runs
procs_gone() {
	local pid t
	while read -r pid t; do
		[[ -z $pid ]] && continue
		if cluster_is "$pid" "$t"; then
			echo "    # $pid still runs"
			return 1
		fi
	done <<<"$1"
	return 0
}

# nothing_left -- cluster_leftovers finds nothing
nothing_left() {
	! cluster_leftovers
}

host_state >"$tmp/host.before"

# an overlay with one provider of its own (an agent and its lib), and a
# variable for the agents' environment
mkdir -p "$tmp/ocf/resource.d/smoke" "$tmp/ocf/lib/smoke"
cat >"$tmp/ocf/resource.d/smoke/probe" <<'EOF'
#!/bin/sh
# probe -- meta-data only: proves a node sees the overlay and the host's lib
: "${OCF_ROOT:=/usr/lib/ocf}"
. "$OCF_ROOT/lib/heartbeat/ocf-shellfuncs"
. "$OCF_ROOT/lib/smoke/probe.sh"
case $1 in
meta-data) probe_meta; exit "$OCF_SUCCESS" ;;
*) exit "$OCF_ERR_UNIMPLEMENTED" ;;
esac
EOF
cat >"$tmp/ocf/lib/smoke/probe.sh" <<'EOF'
# probe.sh -- the probe agent's meta-data, from the overlay's lib/smoke
probe_meta() {
	cat <<'XML'
<?xml version="1.0"?>
<resource-agent name="probe" version="1">
<version>1.1</version>
<longdesc lang="en">smoke-overlay-lib-ok</longdesc>
<shortdesc lang="en">smoke probe</shortdesc>
<parameters/>
<actions><action name="meta-data" timeout="5s"/></actions>
</resource-agent>
XML
}
EOF
chmod 755 "$tmp/ocf/resource.d/smoke/probe"
export CLUSTER_OCF_OVERLAY=$tmp/ocf
export CLUSTER_NODE_ENV='# seen by resource agents?
SMOKE_NODE_ENV=from-node-init'

echo "# starting 3 nodes (token ${CLUSTER_TOKEN:-1000} ms)"
t0=$(cluster_now)
cluster_start "$tmp/c" 3 || exit 1
t_cold=$(cluster_since "$t0")
figure "cold start, 3 nodes online with a DC" "$t_cold"
cdir=$tmp/c

tu_check "each node has its own hostname, address and /srv" own_nodes
tu_check "the cluster options are set" options_set
tu_check "ssh by name, by address and as librpmem calls it (-p PORT)" \
	ssh_works
tu_check "the overlay's agent and lib are in the nodes' /usr/lib/ocf" \
	overlay_seen

# the promotable clone; Stateful's envfile records each action's environment
clone='<clone id="st-clone">
  <meta_attributes id="st-clone-meta">
    <nvpair id="st-clone-promotable" name="promotable" value="true"/>
    <nvpair id="st-clone-promoted-max" name="promoted-max" value="1"/>
  </meta_attributes>
  <primitive id="st" class="ocf" provider="pacemaker" type="Stateful">
    <instance_attributes id="st-params">
      <nvpair id="st-envfile" name="envfile" value="/srv/stateful.env"/>
    </instance_attributes>
    <operations>
      <op id="st-monitor-promoted" name="monitor" interval="3s"
          role="Promoted" timeout="20s"/>
      <op id="st-monitor-unpromoted" name="monitor" interval="4s"
          role="Unpromoted" timeout="20s"/>
    </operations>
  </primitive>
</clone>'
t0=$(cluster_now)
tu_check "the clone is created" cluster_cib n1 --create -o resources \
	--xml-text "$clone"
tu_check "it is promoted on one node and unpromoted on the two others" \
	cluster_wait 60 count_roles n2 st-clone 1 2
figure "clone created to 1 Promoted + 2 Unpromoted" "$(cluster_since "$t0")"
promoted=$(cluster_promoted n1 st-clone)
echo "# promoted on $promoted"
tu_check "the primitive's id finds the same" is_equal "promoted (by st)" \
	"$promoted" "$(cluster_promoted n3 st)"
# Pacemaker's agents inherit node-init's environment: pacemaker-execd runs
# them with its own environment plus the OCF_* variables
tu_check "Stateful saw CLUSTER_NODE_ENV's variable on every node" env_seen
tu_check "no zombie in a node (its PID 1 reaps orphans)" no_zombie n1

procs=$(node_procs)
echo "# $(wc -l <<<"$procs") corosync, pacemaker* and sshd processes"
tu_check "ps shows corosync, pacemaker and sshd under each node" \
	test "$(wc -l <<<"$procs")" -ge 27

# power off the promoted node
survivor=$(other_node "$promoted" "")
t0=$(cluster_now)
tu_check "$promoted is powered off" cluster_kill "$promoted"
t_kill=$(cluster_since "$t0")
tu_check "the clone is promoted elsewhere" \
	cluster_wait 60 promoted_elsewhere "$survivor" st-clone "$promoted"
t_fail=$(cluster_since "$t0")
figure "kill -9 of the node's PID 1 returned" "$t_kill"
figure "failover (kill to Promoted elsewhere)" "$t_fail"
newp=$(cluster_promoted "$survivor" st-clone)
echo "# now promoted on $newp"

t0=$(cluster_now)
tu_check "$promoted boots again" cluster_boot "$promoted"
tu_check "$promoted is online again" cluster_wait_online
figure "boot to all online" "$(cluster_since "$t0")"
tu_check "$promoted runs Unpromoted, $newp still Promoted" \
	cluster_wait 60 back_unpromoted "$survivor" "$promoted"
figure "boot to Unpromoted" "$(cluster_since "$t0")"

# cut the promoted node off: the other two keep quorum and promote, it
# loses quorum and stops its instance (no-quorum-policy=stop)
cut=$newp
majority=$(other_node "$cut" "")
t0=$(cluster_now)
tu_check "$cut is cut off" cluster_cut "$cut"
tu_check "the majority promotes another node" \
	cluster_wait 60 promoted_elsewhere "$majority" st-clone "$cut"
figure "cut to Promoted elsewhere" "$(cluster_since "$t0")"
tu_check "$cut, without quorum, stops its instance" \
	cluster_wait 60 not_running_on "$cut" st-clone "$cut"
t0=$(cluster_now)
tu_check "$cut is healed" cluster_heal "$cut"
tu_check "all three online again" cluster_wait_online n1 n2 n3
figure "heal to all online" "$(cluster_since "$t0")"
tu_check "one Promoted, two Unpromoted again" \
	cluster_wait 60 count_roles "$cut" st-clone 1 2
figure "heal to 1 Promoted + 2 Unpromoted" "$(cluster_since "$t0")"

procs=$(node_procs)
t0=$(cluster_now)
tu_check "the cluster stops" cluster_stop
figure "cluster_stop" "$(cluster_since "$t0")"
tu_check "cluster_stop again is harmless" cluster_stop
tu_check "no node's process is left (ps)" procs_gone "$procs"
tu_check "nothing is left in the harness's namespaces" nothing_left
host_state >"$tmp/host.after"
tu_check "mounts, links and /srv on the host are as before" \
	diff -u "$tmp/host.before" "$tmp/host.after"
figure "total" "$(cluster_since "$t_all")"
tu_summary
