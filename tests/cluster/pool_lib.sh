# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# pool_lib.sh -- what the tests of ocf:rpmem:pool on a cluster share
# (pacemaker.sh, fence_peer.sh): the agent installed in an OCF overlay,
# librpmem's environment on the nodes, the data nodes' set files, the
# clone's XML, and the agent's shell functions run on a node.  Source it
# with `me` set to the script's name: it sources tests/failover/common.sh
# (and through it tests/common/tu.sh, the assertions) and cluster.sh;
# $tmp is the cluster's directory (pool_cluster makes it).
#
#   pool_overlay         $tmp/ocf: the agent and its helpers as installed
#                        (CLUSTER_OCF_OVERLAY for cluster_start)
#   pool_cluster N AT_EXIT
#                        $tmp made, pool_overlay, N nodes started (exit 77
#                        when no cluster can be made here, 1 when it does
#                        not start); at exit AT_EXIT evaluated after a
#                        failure, then cluster_stop
#   pool_env             after cluster_start: $tmp/rssh and node_env, the
#                        environment of every librpmem process on a node
#   pool_sets SIZE N...  on each data node N (of n1, n2), the copy's set in
#                        rpmemd's poolset-dir (/srv/psd/pool.set), the
#                        master set naming the other's (/srv/app.set) and
#                        librpmem's state directory (/srv/state)
#   on NODE CMD...       CMD on the node with librpmem's environment
#   pool_xml ID CLONE SET MASTER [META]
#                        a promotable clone of ocf:rpmem:pool, monitored
#                        every POOL_MONITORS ("PROMOTED UNPROMOTED",
#                        default "3s 4s")
#   fence NODE CMD       a shell command on the node after the agent's
#                        rpmem-ocf.sh is sourced
#   handle_field NODE F  field F of the first live librpmem handle there
#   rpmemd_pids NODE     the pids of the rpmemd processes in the node

# shellcheck source-path=SCRIPTDIR source=../failover/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../failover/common.sh"
# shellcheck source-path=SCRIPTDIR source=cluster.sh
. "$(dirname "${BASH_SOURCE[0]}")/cluster.sh"

# pool_overlay -- the agent and its helpers under $tmp/ocf, as installed
pool_overlay() {
	local src
	src=$(cd "$CLUSTER_LIB_DIR/../.." && pwd) || return 1
	mkdir -p "$tmp/ocf/resource.d/rpmem" "$tmp/ocf/lib/rpmem" &&
		cp "$src/src/ocf/pool" "$tmp/ocf/resource.d/rpmem/" &&
		cp "$src/src/ocf/crm-fence-peer" "$src/src/ocf/crm-unfence-peer" \
			"$src/src/ocf/rpmem-ocf.sh" \
			"$tmp/ocf/lib/rpmem/"
}

# pool_cluster -- the test's cluster of $1 nodes in a new $tmp with the
# agent as installed; $2 evaluated at exit after a failure, before the
# cluster stops
pool_cluster() {
	local rc=0
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/rpmem-${me%.sh}.XXXXXX")
	fo_exit_trap "((TU_FAILED == 0)) || { $2; }; cluster_stop"
	pool_overlay || { tu_fail "the agent cannot be copied"; exit 1; }
	CLUSTER_OCF_OVERLAY=$tmp/ocf cluster_start "$tmp" "$1" || rc=$?
	if ((rc == 77)); then
		echo "$me: skipped (cluster_start)"
		exit 77
	fi
	((rc == 0)) || { tu_fail "the cluster does not start"; exit 1; }
}

# pool_env -- RPMEM_SSH for librpmem on the nodes (a lost peer noticed
# within about two seconds, an unreachable one refused within one) and
# node_env, what every librpmem process on a node runs with; rpmemd runs
# POOL_AFTER_RESYNC, when set, as its after-resync handler
pool_env() {
	local rpmemd_cmd
	cat >"$tmp/rssh" <<EOF || return 1
#!/bin/sh
exec $CLUSTER_SSH -o ServerAliveInterval=1 -o ServerAliveCountMax=2 \
	-o ConnectTimeout=1 "\$@"
EOF
	chmod 755 "$tmp/rssh" || return 1
	rpmemd_cmd=$(harness_rpmemd_cmd /srv/psd /srv/rpmemd.log \
		${POOL_AFTER_RESYNC:+"--after-resync=$POOL_AFTER_RESYNC"}) ||
		return 1
	node_env=(LD_LIBRARY_PATH="$libs" PMEM_IS_PMEM_FORCE=1
		RPMEM_SSH="$tmp/rssh" RPMEM_CMD="$rpmemd_cmd"
		RPMEM_STATE_DIR=/srv/state)
}

# pool_sets SIZE NODE... -- each data node's set files and state directory
pool_sets() {
	local size=$1 n peer s
	shift
	for n in "$@"; do
		peer=n1
		[[ $n == n1 ]] && peer=n2
		s=$tmp/$n/srv
		mkdir -p "$s/psd" "$s/state" || return 1
		printf 'PMEMPOOLSET\n%s /srv/pool.0\n' "$size" \
			>"$s/psd/pool.set" || return 1
		printf 'PMEMPOOLSET\n%s /srv/pool.0\nREPLICA root@%s pool.set\n' \
			"$size" "$(cluster_addr "$peer")" >"$s/app.set" || return 1
	done
}

# on NODE CMD... -- CMD on the node with librpmem's environment
on() {
	local n=$1
	shift
	cluster_exec "$n" env "${node_env[@]}" "$@"
}

# pool_xml ID CLONE SET MASTER [META] -- a promotable clone of
# ocf:rpmem:pool, META more of its meta attributes
pool_xml() {
	local mon_p mon_u
	read -r mon_p mon_u <<<"${POOL_MONITORS:-3s 4s}"
	cat <<EOF
<clone id="$2">
  <meta_attributes id="$2-meta">
    <nvpair id="$2-promotable" name="promotable" value="true"/>
    <nvpair id="$2-promoted-max" name="promoted-max" value="1"/>
    <nvpair id="$2-clone-max" name="clone-max" value="2"/>
    <nvpair id="$2-notify" name="notify" value="true"/>
    ${5:-}
  </meta_attributes>
  <primitive id="$1" class="ocf" provider="rpmem" type="pool">
    <instance_attributes id="$1-params">
      <nvpair id="$1-replica_set" name="replica_set" value="$3"/>
      <nvpair id="$1-master_set" name="master_set" value="$4"/>
      <nvpair id="$1-rpmem" name="rpmem" value="$rpmem"/>
      <nvpair id="$1-state_dir" name="state_dir" value="/srv/state"/>
    </instance_attributes>
    <operations>
      <op id="$1-monitor-p" name="monitor" interval="$mon_p" role="Promoted" timeout="30s"/>
      <op id="$1-monitor-u" name="monitor" interval="$mon_u" role="Unpromoted" timeout="30s"/>
      <op id="$1-start" name="start" interval="0" timeout="60s"/>
      <op id="$1-promote" name="promote" interval="0" timeout="90s"/>
      <op id="$1-demote" name="demote" interval="0" timeout="60s"/>
    </operations>
  </primitive>
</clone>
EOF
}

# fence NODE CMD -- a function of the agent's rpmem-ocf.sh on the node
fence() {
	cluster_exec "$1" sh -c ". /usr/lib/ocf/lib/rpmem/rpmem-ocf.sh && $2"
}

# handle_field NODE FIELD -- a field of the live handle on the node
handle_field() {
	on "$1" "$rpmem" status --json 2>/dev/null |
		jq -r "[.handles[]][0].$2 // empty"
}

# rpmemd_pids NODE -- the pids of the rpmemd processes in the node
rpmemd_pids() {
	# shellcheck disable=SC2016 # expanded in the node
	cluster_exec "$1" sh -c 'for p in /proc/[0-9]*; do
		case $(readlink "$p/exe" 2>/dev/null) in
		*/rpmemd) echo "${p#/proc/}" ;;
		esac
	done'
}
