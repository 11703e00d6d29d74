# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# cluster_query.sh -- what cluster.sh asks a running cluster: crm_mon's
# XML (never its text), the DC, who is online, where a resource runs and
# in which role (sourced by cluster.sh; its globals are cluster.sh's)

# cluster_mon -- crm_mon's XML as node $1 sees the cluster
cluster_mon() {
	cluster_exec "$1" crm_mon --output-as=xml 2>/dev/null
}

# cluster_xpath -- evaluate XPath $1 on the XML on stdin; print the result
cluster_xpath() {
	xmllint --xpath "$1" - 2>/dev/null
}

# cluster_dc -- print the DC's name as node $1 sees it
cluster_dc() {
	local dc xp="/pacemaker-result/summary/current_dc[@present='true']"
	dc=$(cluster_mon "$1" | cluster_xpath "string($xp/@name)")
	[[ -n $dc ]] && printf '%s\n' "$dc"
}

# cluster_seen_online -- true when node $1 has quorum and a DC and sees
# nodes $2... online (and their join done)
cluster_seen_online() {
	local q=$1 node names='' want
	shift
	for node in "$@"; do
		names+="${names:+ or }@name='$node'"
	done
	want="concat(count(/pacemaker-result/summary/current_dc[@present='true'"
	want+=" and @with_quorum='true']), ':',"
	want+=" count(/pacemaker-result/nodes/node[@online='true'"
	want+=" and @pending='false' and @unclean='false' and ($names)]))"
	[[ $(cluster_mon "$q" | cluster_xpath "$want") == "1:$#" ]]
}

# cluster_quorate -- true when node $1's partition has a DC and quorum
cluster_quorate() {
	local xp="/pacemaker-result/summary/current_dc[@present='true'"
	xp+=" and @with_quorum='true']"
	[[ $(cluster_mon "$1" | cluster_xpath "count($xp)") == 1 ]]
}

# cluster_seen_offline -- true when node $1's partition has a DC and sees
# nodes $2... offline (gone from its membership: after cluster_cut, say)
cluster_seen_offline() {
	local q=$1 node names=''
	shift
	for node in "$@"; do
		names+="${names:+ or }@name='$node'"
	done
	[[ $(cluster_mon "$q" | cluster_xpath "concat(count(/pacemaker-result/summary/current_dc[@present='true']), ':', count(/pacemaker-result/nodes/node[@online='false' and ($names)]))") == "1:$#" ]]
}

# cluster_running_nodes -- print the nodes whose PID 1 runs
cluster_running_nodes() {
	local node
	for node in "${CLUSTER_NODES[@]}"; do
		cluster_alive "$node" && echo "$node"
	done
}

# cluster_seen_somewhere -- true when a running node sees nodes $@ online
cluster_seen_somewhere() {
	local q
	for q in $(cluster_running_nodes); do
		cluster_seen_online "$q" "$@" && return 0
	done
	return 1
}

# cluster_wait_online -- wait until nodes $@ (default: all running) are
# online with a DC, as a quorate node sees them
cluster_wait_online() {
	local node
	local -a nodes=("$@")
	((${#nodes[@]})) || mapfile -t nodes < <(cluster_running_nodes)
	((${#nodes[@]})) || { cluster_err "no node is running"; return 1; }
	for node in "${nodes[@]}"; do
		cluster_known "$node" || return 1
	done
	cluster_wait "${CLUSTER_ONLINE_TIMEOUT:-120}" \
		cluster_seen_somewhere "${nodes[@]}"
}

# cluster_running -- print "nX ROLE" for each node where resource $2 (a
# primitive, or a clone or group of it) is active, as node $1 sees it;
# false when it runs nowhere
cluster_running() {
	local q=$1 rsc=$2 node expr='' match role i=0 found=1
	local -a roles
	if [[ ! $rsc =~ ^[A-Za-z0-9_.:-]+$ ]]; then
		cluster_err "not a resource id: '$rsc'"
		return 2
	fi
	match="(@id='$rsc' or starts-with(@id, '$rsc:') or"
	match+=" ancestor::*[@id='$rsc']) and @active='true'"
	for node in "${CLUSTER_NODES[@]}"; do
		expr+="${expr:+, '|', }string(/pacemaker-result/resources//"
		expr+="resource[$match and node/@name='$node'][1]/@role)"
	done
	IFS='|' read -r -a roles < <(cluster_mon "$q" |
		cluster_xpath "concat($expr, '|')")
	for node in "${CLUSTER_NODES[@]}"; do
		role=${roles[i++]:-}
		case $role in
		'') continue ;;
		Master) role=Promoted ;;
		Slave) role=Unpromoted ;;
		esac
		echo "$node $role"
		found=0
	done
	return $found
}

# cluster_promoted -- print the nodes where $2 runs Promoted, as node $1
# sees it; false when none
cluster_promoted() {
	local node role found=1
	while read -r node role; do
		[[ $role == Promoted ]] || continue
		echo "$node"
		found=0
	done < <(cluster_running "$@")
	return $found
}

# cluster_cib -- cibadmin $2... inside node $1
cluster_cib() {
	local node=$1
	shift
	cluster_exec "$node" cibadmin "$@"
}
