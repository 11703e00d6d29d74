#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# fence_peer.sh -- crm-fence-peer and the master's monitor of
# ocf:rpmem:pool on a real two-node cluster (issue 31; scenarios D12,
# and the race of the handler with the monitor that removes the fence)
#
# Two nodes, each in its own namespaces (cluster.sh), corosync's two_node
# set: n1 and n2 hold a copy of the pool.  Pacemaker never runs the clone
# (resource-discovery=never on both nodes, target-role Stopped): the test
# runs the agent's actions, the handler and the application itself, in
# the order each case needs.
#   d12   D12: "a two-node cluster (corosync two_node) splits: the
#         fence-peer handler refuses without STONITH; never two masters".
#         n2 cut off: each half sees the other gone and keeps quorum; with
#         stonith-enabled=false the handler refuses on both halves (exit
#         1, naming two_node and stonith-enabled) and writes no fence;
#         healed, the agent's promote refuses the same way.  With
#         stonith-enabled=true the promote places the fence and the
#         handler exits 0.  The handler reads only the property, so no
#         fence device is configured (Pacemaker starts no resource without
#         one, and none is started here).
#   race  issue 31, finding 5a: the application runs on n1, its replica
#         on n2 in sync, the fence still naming n1.  The master's monitor
#         has seen the copy in sync and is held just before its delete;
#         n2's rpmemd is killed; librpmem runs the handler, which is held
#         after it finished, before librpmem learns its status.  A monitor
#         that looks now must keep the fence (the handle is frozen).  The
#         held monitor's delete is let go, then the handler's exit 0:
#         when librpmem goes on degraded, the fence must stand.  Then the
#         replica resyncs and a monitor removes the fence.
#   legacy  a fence without a claim (placed by the agent of ac4a13e,
#         still in a CIB after an upgrade): the handler adds its claim;
#         placed so again, the monitor removes it once the copy is in sync.
# The holds are FIFOs read by wrappers (of cibadmin for the monitor, of
# the handler for librpmem), released by the test: no sleeps.
# Needs root and Debian's pacemaker and corosync (exit 77 otherwise).
set -uo pipefail
me=fence_peer.sh
# shellcheck source-path=SCRIPTDIR source=pool_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/pool_lib.sh"

SCENARIOS=${SCENARIOS:-d12 race legacy}
export CLUSTER_TOKEN_COEFFICIENT=${CLUSTER_TOKEN_COEFFICIENT-0}
SIZE=16M
HANDLER=/usr/lib/ocf/lib/rpmem/crm-fence-peer
FENCE="rpmem-fence-pool-clone"

# shellcheck disable=SC2016 # evaluated at exit
pool_cluster 2 'cluster_logs 20; tail -n 20 "$tmp/app.out" "$tmp/n1/srv/librpmem.log" 2>/dev/null'
if ! pool_env || ! pool_sets "$SIZE" n1 n2; then
	tu_fail "the pool's files"
	exit 1
fi

# the clone, never discovered nor started by Pacemaker
if ! cluster_cib n1 -C -o resources -X "$(pool_xml pool pool-clone \
		/srv/psd/pool.set /srv/app.set \
		'<nvpair id="pool-clone-target-role" name="target-role" value="Stopped"/>')" ||
	! cluster_cib n1 -C -o constraints -X '
<rsc_location id="pool-never-n1" rsc="pool-clone" node="n1" score="-INFINITY" resource-discovery="never"/>' ||
	! cluster_cib n1 -C -o constraints -X '
<rsc_location id="pool-never-n2" rsc="pool-clone" node="n2" score="-INFINITY" resource-discovery="never"/>'
then
	tu_fail "the configuration is refused"
	exit 1
fi
if ! on n1 "$txlog" create /srv/app.set >"$tmp/out" 2>&1; then
	tu_fail "the pool is not created: $(<"$tmp/out")"
	exit 1
fi

# agent NODE ACTION -- the agent's ACTION on NODE (more environment
# before NODE: `agent PATH=... n1 monitor`); its status, stderr in
# $tmp/agent.err
agent() {
	local -a envs=()
	while [[ $1 == *=* ]]; do
		envs+=("$1")
		shift
	done
	on "$1" "${envs[@]}" OCF_ROOT=/usr/lib/ocf OCF_RESOURCE_INSTANCE=pool \
		OCF_RESKEY_replica_set=/srv/psd/pool.set \
		OCF_RESKEY_master_set=/srv/app.set \
		OCF_RESKEY_rpmem="$rpmem" OCF_RESKEY_state_dir=/srv/state \
		/usr/lib/ocf/resource.d/rpmem/pool "$2" >/dev/null 2>"$tmp/agent.err"
}

# holder NODE -- the node the fence leaves promotable, as NODE's CIB says
holder() {
	fence "$1" "rpmem_fence_holder pool-clone"
}

# monitor_unfences WHO WHAT -- n1's monitor (WHO) says 8, Promoted, and
# the fence is gone (else WHAT, with its holder, fails)
monitor_unfences() {
	agent n1 monitor
	rc=$?
	((rc == 8)) || tu_fail "$1 says $rc, not 8"
	[[ -z $(holder n1) ]] || tu_fail "$2: $(holder n1)"
}

# claim -- the claim the fence carries, as n1's CIB says
claim() {
	# shellcheck disable=SC2016 # expanded in the node
	fence n1 'rpmem_fence_read pool-clone && echo "$RPMEM_FENCE_CLAIM"'
}

# handler NODE -- crm-fence-peer run on NODE; status in rc, stderr in
# $tmp/err
handler() {
	tu_try cluster_exec "$1" "$HANDLER" --resource pool-clone
}

# stonith VALUE -- Pacemaker's stonith-enabled
stonith() {
	cluster_exec n1 crm_attribute --type crm_config \
		--name stonith-enabled --update "$1" >/dev/null
}


# refuses_two_node WHAT FILE -- the last handler() or agent() said why in
# $tmp/FILE
refuses_two_node() {
	local err=$tmp/$2
	if ! grep -q 'two_node' "$err" || ! grep -q 'stonith-enabled' "$err"
	then
		tu_fail "$1: the reason names not two_node and stonith-enabled: $(<"$err")"
	fi
}

# sc_d12 -- a split two-node cluster: refused without STONITH
sc_d12() {
	local n tn f0=$TU_FAILED
	tn=$(cluster_exec n1 corosync-cmapctl -g runtime.votequorum.two_node)
	[[ $tn == *" = 1" ]] ||
		{ tu_fail "D12: corosync's two_node is not set: $tn"; return; }
	echo "--- D12: n2 cut off, stonith-enabled=false"
	cluster_cut n2
	if ! cluster_wait 30 cluster_seen_offline n1 n2 ||
			! cluster_wait 30 cluster_seen_offline n2 n1; then
		tu_fail "D12: the halves do not see each other gone"
		return
	fi
	for n in n1 n2; do
		cluster_quorate "$n" ||
			tu_fail "D12: $n's half has no quorum (two_node keeps it)"
		handler "$n"
		((rc == 1)) || tu_fail "D12: the handler on $n exits $rc, not 1"
		refuses_two_node "D12: the handler on $n" err
		[[ -z $(holder "$n") ]] ||
			tu_fail "D12: $n's half has a fence for $(holder "$n")"
	done
	tu_passed_since "$f0" "D12: split, each half quorate; the handler refused on both: $(tail -n 1 "$tmp/err")"
	# a handler that corosync's cmap does not answer (not root, say)
	# reads corosync.conf, and refuses when it cannot read that either
	mkdir -p "$tmp/nocmap"
	printf '#!/bin/sh\necho "cmap refuses" >&2\nexit 1\n' \
		>"$tmp/nocmap/corosync-cmapctl"
	chmod 755 "$tmp/nocmap/corosync-cmapctl"
	for cf in /etc/corosync/corosync.conf /nonexistent; do
		tu_try cluster_exec n1 env PATH="$tmp/nocmap:$CLUSTER_NODE_PATH" \
			COROSYNC_MAIN_CONFIG_FILE="$cf" "$HANDLER" \
			--resource pool-clone
		((rc == 1)) ||
			tu_fail "D12: without cmap, with $cf, the handler exits $rc"
		refuses_two_node "D12: without cmap, with $cf" err
	done
	tu_passed_since "$f0" "D12: without corosync's cmap the handler reads corosync.conf, and refuses when it cannot"
	cluster_heal n2
	cluster_wait_online n1 n2 || { tu_fail "D12: n2 does not rejoin"; return; }
	# whatever a failed run left, the next cases start without a fence
	cluster_cib n1 -D --xpath "//rsc_location[@id='$FENCE']" >/dev/null 2>&1

	agent n1 start || tu_fail "D12: the agent's start: $(<"$tmp/agent.err")"
	agent n1 promote && tu_fail "D12: promoted without STONITH on two_node"
	refuses_two_node "D12: the promote" agent.err
	[[ -z $(holder n1) ]] || tu_fail "D12: a refused promote left a fence"

	stonith true || { tu_fail "D12: stonith-enabled=true is refused"; return; }
	agent n1 promote ||
		tu_fail "D12: with stonith-enabled=true the promote fails: $(<"$tmp/agent.err")"
	[[ $(holder n1) == n1 ]] || tu_fail "D12: the promote placed no fence"
	handler n1
	((rc == 0)) ||
		tu_fail "D12: with stonith-enabled=true the handler exits $rc: $(<"$tmp/err")"
	! grep -q two_node "$tmp/err" ||
		tu_fail "D12: with stonith-enabled=true the handler names two_node"
	[[ $(holder n1) == n1 ]] || tu_fail "D12: the handler left no fence"
	tu_passed_since "$f0" "D12: healed, the promote refused too; with stonith-enabled=true the promote fenced n2 and the handler exits 0"
}

# in_sync -- the application on n1 has its replica connected (in sync)
in_sync() {
	[[ $(handle_field n1 state) == connected ]]
}

# not_frozen -- the handle on n1 is there and not frozen
not_frozen() {
	local s
	s=$(handle_field n1 state)
	[[ -n $s && $s != frozen ]]
}

# sc_race -- a handler that finds the fence while the monitor removes it
sc_race() {
	local g=$tmp/gate mon_at mon_go hdl_at hdl_go line pids c0 mon_pid
	local f0=$TU_FAILED
	# the fence a promote leaves (d12's, or one placed here)
	if [[ $(holder n1) != n1 ]] &&
			! fence n1 "rpmem_fence_place pool-clone n1"; then
		tu_fail "race: no fence naming n1 to start from"
		return
	fi
	[[ -n ${app_npid:-} ]] ||
		{ tu_fail "race: the application does not run"; return; }
	mkdir -p "$g/bin"
	mkfifo "$g/mon.at" "$g/mon.go" "$g/hdl.at" "$g/hdl.go" || return
	exec {mon_at}<>"$g/mon.at" {mon_go}<>"$g/mon.go" \
		{hdl_at}<>"$g/hdl.at" {hdl_go}<>"$g/hdl.go"
	cat >"$g/bin/cibadmin" <<EOF
#!/bin/sh
# cibadmin held at the gate before a delete
for a; do
	case \$a in
	-D|--delete)
		echo "\$*" >$g/mon.at
		read -r _ <$g/mon.go
		break ;;
	esac
done
exec $(command -v cibadmin) "\$@"
EOF
	chmod 755 "$g/bin/cibadmin"

	cluster_wait 60 in_sync || { tu_fail "race: the replica is not in sync"; return; }
	c0=$(claim)
	echo "--- race: n1's replica in sync, the fence names n1 (claim '$c0'); the monitor held before its delete"
	agent PATH="$g/bin:$CLUSTER_NODE_PATH" n1 monitor &
	mon_pid=$!
	if ! read -r -t 30 -u "$mon_at" line; then
		tu_fail "race: the monitor did not come to delete the fence"
		wait "$mon_pid"
		return
	fi
	pids=$(rpmemd_pids n2)
	[[ $(wc -w <<<"$pids") == 1 ]] ||
		{ tu_fail "race: not one rpmemd on n2: '$pids'"; echo go >&"$mon_go"; return; }
	echo "--- race: n2's rpmemd ($pids) killed"
	: >"$g/armed"
	cluster_exec n2 kill -KILL "$pids"
	if ! read -r -t 60 -u "$hdl_at" line; then
		tu_fail "race: librpmem ran no handler"
		echo go >&"$mon_go"
		return
	fi
	[[ $line == 0 ]] || tu_fail "race: the handler exits $line, not 0"
	[[ $(handle_field n1 state) == frozen ]] ||
		tu_fail "race: the handle is $(handle_field n1 state) while the handler runs, not frozen"
	# a monitor that looks while the handler runs keeps the fence
	agent n1 monitor
	rc=$?
	((rc == 8)) || tu_fail "race: the second monitor says $rc, not 8"
	[[ $(holder n1) == n1 ]] ||
		tu_fail "race: a monitor removed the fence while the handler ran"
	echo "--- race: the handler held before librpmem learns its 0; the monitor's delete let go"
	echo go >&"$mon_go"
	wait "$mon_pid"
	rc=$?
	((rc == 8)) || tu_fail "race: the held monitor says $rc, not 8"
	echo go >&"$hdl_go"
	cluster_wait 30 not_frozen ||
		tu_fail "race: librpmem did not take the handler's 0"
	[[ $(holder n1) == n1 ]] ||
		tu_fail "race: the handler exited 0, librpmem went on, and no fence forbids promoting n2's stale copy"
	tu_passed_since "$f0" "race: librpmem went on ($(handle_field n1 state)) and the fence stands (claim '$(claim)')"
	exec {mon_at}>&- {mon_go}>&- {hdl_at}>&- {hdl_go}>&-

	# the replica back and resynced: the monitor removes the fence
	cluster_wait 60 in_sync || { tu_fail "race: the replica does not resync"; return; }
	monitor_unfences "race: the monitor after the resync" \
		"race: the replica is in sync, and the fence stays"
	tu_passed_since "$f0" "race: the replica resynced, the monitor removed the fence"
}

# legacy_fence -- a fence naming n1 as the agent placed it before claims
legacy_fence() {
	cluster_cib n1 -D --xpath "//rsc_location[@id='$FENCE']" >/dev/null 2>&1
	cluster_cib n1 -C -o constraints -X "<rsc_location id=\"$FENCE\" rsc=\"pool-clone\"><rule id=\"$FENCE-rule\" role=\"Promoted\" score=\"-INFINITY\"><expression id=\"$FENCE-expr\" attribute=\"#uname\" operation=\"ne\" value=\"n1\"/></rule></rsc_location>"
}

# sc_legacy -- a fence without a claim is claimed, and removed
sc_legacy() {
	local f0=$TU_FAILED
	cluster_wait 60 in_sync || { tu_fail "legacy: the replica is not in sync"; return; }
	legacy_fence || { tu_fail "legacy: the old fence is refused"; return; }
	handler n1
	((rc == 0)) || tu_fail "legacy: the handler exits $rc: $(<"$tmp/err")"
	[[ $(holder n1) == n1 && $(claim) == claim-* ]] ||
		tu_fail "legacy: the handler left the fence for '$(holder n1)' with claim '$(claim)'"
	legacy_fence || { tu_fail "legacy: the old fence is refused"; return; }
	monitor_unfences "legacy: the monitor" \
		"legacy: the copy is in sync, and the old fence stays"
	tu_passed_since "$f0" "legacy: a fence without a claim: the handler claimed it, the monitor removed it"
}

# app_start -- the application on n1, the handler behind the gate's
# wrapper; app_npid is its pid in n1
app_start() {
	local g=$tmp/gate
	mkdir -p "$g"
	cat >"$g/handler" <<EOF
#!/bin/sh
# the handler; once the test armed the gate, held before librpmem learns
# its status
[ -e $g/armed ] || exec $HANDLER "\$@"
$HANDLER "\$@"
rc=\$?
echo "\$rc" >$g/hdl.at
read -r _ <$g/hdl.go
exit "\$rc"
EOF
	chmod 755 "$g/handler"
	on n1 RPMEM_ON_REPLICA_LOSS=fence \
		RPMEM_FENCE_PEER_CMD="$g/handler --resource pool-clone" \
		RPMEM_RECONNECT_MIN_MS=200 RPMEM_RECONNECT_MAX_MS=1000 \
		RPMEM_LOG_LEVEL=notice RPMEM_LOG_FILE=/srv/librpmem.log \
		TXLOG_PAUSE_US=3000 sh -c 'echo $$ >/srv/app.pid; exec "$@"' \
		sh "$txlog" run /srv/app.set "$tmp/committed" \
		</dev/null >"$tmp/app.out" 2>&1 &
	cluster_wait 10 test -s "$tmp/n1/srv/app.pid" ||
		{ tu_fail "the application does not start"; return 1; }
	app_npid=$(<"$tmp/n1/srv/app.pid")
}

for sc in $SCENARIOS; do
	t_sc=$(cluster_now)
	if [[ $sc != d12 && -z ${app_npid:-} ]]; then
		# without d12 first, its end: n1 promoted, STONITH enabled
		if [[ $(holder n1) != n1 ]] && { ! stonith true ||
				! agent n1 start || ! agent n1 promote; }; then
			tu_fail "$sc: n1 is not promoted: $(<"$tmp/agent.err")"
		fi
		app_start
	fi
	"sc_$sc"
	echo "--- $sc took $(cluster_since "$t_sc") s"
done
if [[ -n ${app_npid:-} ]]; then
	cluster_exec n1 kill -TERM "$app_npid"
fi
tu_end "D12 refused without STONITH; the fence outlives the race of the handler and the monitor"
