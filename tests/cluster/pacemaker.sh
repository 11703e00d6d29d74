#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# pacemaker.sh -- automatic failover of a replicated pool under a real
# Pacemaker and Corosync cluster (issue 25; scenarios F1-F4, D5-D6)
#
# Three nodes, each in its own namespaces (cluster.sh): n1 and n2 hold a
# copy of the pool, n3 only votes.  The pool is a promotable clone of
# ocf:rpmem:pool (src/ocf/pool); the application (tests/failover/txlog,
# Debian's libpmemobj, logging each commit it saw to a file per node) is
# an ocf:heartbeat:anything colocated with the Promoted role, with
# RPMEM_ON_REPLICA_LOSS=fence and crm-fence-peer as its handler.  One
# cluster for every scenario, in order (SCENARIOS= runs a prefix):
#   agent  ocf-tester, and the monitor against a stopped, replica, master,
#          async (scored below a sync replica), outdated, fenced,
#          discarded copy, and one older than what
#          another node says its copy holds (a second clone, never
#          started)
#   p1     the master's node killed: the replica promoted, the
#          application on it; figure: loss to its first commit
#   p2     that node back: Unpromoted, resynced by difference while the
#          application runs, its fence removed; figure: resync bytes
#   p3     the master cut off: the majority promotes the other copy; the
#          cut-off side acknowledges nothing the new master lacks; healed,
#          one master, the other resynced
#   p4     the replica's node killed: the application goes on (the stale
#          copy fenced); back, resynced, the fence gone
#   p5     a planned switch-over (the Promoted role moved); figure
#   p6     the whole cluster crashed while the replica was stale, and
#          started again: the node with the newest copy is promoted
#   c1     compound: the replica's rpmemd killed (F4), and the master's
#          node killed within 1 s of the resync (F1): the replica,
#          unfenced and scored at once by crm-unfence-peer, not at the
#          next monitor, is promoted; figure: loss to its first commit
#   c2     the master cut off right after a replica fault and its resync
#          (F2, no settling time): promoted as fast; the cut-off master
#          acknowledges nothing once the other is promoted (D3)
#   c3     the replica's rpmemd stopped (SIGSTOP; sshd still answers):
#          its heartbeat stops, the master fences and goes on within
#          seconds, not RPMEM_TIMEOUT; resumed, resynced, unfenced
#   c4     the replica's node cut off for 18 s, then healed: in sync
#          again within seconds (the reconnect back-off is capped at
#          2 s), the fence gone; figure: heal to in sync
#   c5     as c1, but the master's node killed while crm-unfence-peer is
#          held (the worst moment: in sync, the fence still there): the
#          replica's agent sees its copy has outlived the fence's
#          generation and removes it; promoted without a person
#   c6     the replica's rpmemd stopped and resumed with every unfence
#          handler failing and a fence the replica cannot outlive: the
#          master's monitor lifts it and gives the replica its score at
#          once (the replica's own monitor slowed to 300 s meanwhile)
# At the end, the application stopped: every logged commit is in both
# copies, none half applied (txlog check of the master and of a promoted
# copy of the other), and `rpmem verify` finds no more than the few 4 KiB
# chunks libpmemobj never persists.  CLUSTER_TOKEN (ms, default 1000)
# sets corosync's token, CLUSTER_TOKEN_COEFFICIENT its coefficient
# (default 0, as the README configures it).  The pool is monitored every
# 10 s (Promoted) and 11 s (Unpromoted), the agent's defaults, so that a
# fence or score left to the next monitor shows; librpmem runs with the
# manual's environment and its own defaults.  RTO_MAX (s, default 10)
# bounds every loss-to-first-commit figure (the goal is 5 s at token
# 1000: the figures say how far from it a run was).
# Needs root and Debian's pacemaker and corosync (exit 77 otherwise).
set -uo pipefail
me=pacemaker.sh
# shellcheck source-path=SCRIPTDIR source=pool_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/pool_lib.sh"

SCENARIOS=${SCENARIOS:-agent p1 p2 p3 p4 p5 p6 c1 c2 c3 c4 c5 c6}
RTO_MAX=${RTO_MAX:-10}
# the agent's own monitor intervals (its meta-data, the manual)
export POOL_MONITORS="10s 11s"
# corosync as the README configures it: the token is 1 s whatever the
# number of nodes (CLUSTER_TOKEN_COEFFICIENT= for corosync's default)
export CLUSTER_TOKEN_COEFFICIENT=${CLUSTER_TOKEN_COEFFICIENT-0}
SIZE=32M

# the cluster's directory, seen by every node at the same path: the
# nodes' own copies in nX/srv, the agent and its helpers as installed
pool_cluster 3 'cluster_logs 20'

# ------------------------------------------------------------- the setup

# now -- seconds since the epoch, with nanoseconds
now() {
	date +%s.%N
}

# secs T0 T1 -- T1 - T0 with two decimals
secs() {
	echo "$1 $2" | awk '{ printf "%.2f", $2 - $1 }'
}

# rpmemd.conf's after-resync, as the manual configures the data nodes
# shellcheck disable=SC2034 # read by pool_lib.sh's pool_env
POOL_AFTER_RESYNC=$tmp/after-resync
pool_env || { tu_fail "librpmem's environment on the nodes"; exit 1; }
# the application resource's program
{
	echo '#!/bin/sh'
	printf 'exec env'
	printf ' %q' "${node_env[@]}" RPMEM_ON_REPLICA_LOSS=fence \
		RPMEM_FENCE_PEER_CMD="/usr/lib/ocf/lib/rpmem/crm-fence-peer --resource pool-clone" \
		RPMEM_UNFENCE_PEER_CMD="$tmp/unfence --resource pool-clone" \
		RPMEM_LOG_LEVEL=notice RPMEM_LOG_FILE=/srv/librpmem.log \
		TXLOG_PAUSE_US=3000 "$txlog" run /srv/app.set
	# shellcheck disable=SC2016 # expanded by the program, on its node
	printf ' %q.$(uname -n)\n' "$tmp/committed"
} >"$tmp/app"
chmod 755 "$tmp/app"
# the unfence-peer handler, held on a FIFO while $tmp/unfence.hold
# exists; it and rpmemd's after-resync handler fail while
# $tmp/unfence.fail does
cat >"$tmp/unfence" <<EOF
#!/bin/sh
[ -e "$tmp/unfence.fail" ] && exit 1
if [ -e "$tmp/unfence.hold" ]; then
	: >"$tmp/unfence.held"
	read -r go <"$tmp/unfence.gate"
fi
exec /usr/lib/ocf/lib/rpmem/crm-unfence-peer "\$@"
EOF
cat >"$tmp/after-resync" <<EOF
#!/bin/sh
[ -e "$tmp/unfence.fail" ] && exit 1
exec /usr/lib/ocf/lib/rpmem/crm-unfence-peer "\$@"
EOF
chmod 755 "$tmp/unfence" "$tmp/after-resync"
mkfifo "$tmp/unfence.gate"

# each data node: its copy's set in rpmemd's poolset-dir, the master set
# naming the other node's copy, librpmem's state directory
pool_sets "$SIZE" n1 n2 || { tu_fail "the set files"; exit 1; }

# crm NODE CMD... -- a Pacemaker command on the node, its output kept
crm() {
	cluster_exec "$@"
}

if ! on n1 "$txlog" create /srv/app.set >"$tmp/create.out" 2>&1; then
	tu_fail "the pool is not created: $(<"$tmp/create.out")"
	exit 1
fi

# configure -- the resources and constraints of the README's cluster, as XML,
# with this cluster's paths, parameters and shorter monitor intervals
configure() {
	crm n1 cibadmin -C -o resources -X "$(pool_xml pool pool-clone \
		/srv/psd/pool.set /srv/app.set)" &&
	crm n1 cibadmin -C -o resources -X "
<primitive id=\"app\" class=\"ocf\" provider=\"heartbeat\" type=\"anything\">
  <instance_attributes id=\"app-params\">
    <nvpair id=\"app-binfile\" name=\"binfile\" value=\"$tmp/app\"/>
    <nvpair id=\"app-errlogfile\" name=\"errlogfile\" value=\"/srv/app.err\"/>
  </instance_attributes>
  <operations>
    <op id=\"app-monitor\" name=\"monitor\" interval=\"2s\" timeout=\"20s\"/>
  </operations>
</primitive>" &&
	crm n1 cibadmin -C -o constraints -X '
<rsc_location id="pool-not-n3" rsc="pool-clone" node="n3" score="-INFINITY" resource-discovery="never"/>' &&
	crm n1 cibadmin -C -o constraints -X '
<rsc_colocation id="app-with-promoted" rsc="app" with-rsc="pool-clone" with-rsc-role="Promoted" score="INFINITY"/>' &&
	crm n1 cibadmin -C -o constraints -X '
<rsc_order id="app-after-promote" first="pool-clone" first-action="promote" then="app" then-action="start" kind="Mandatory"/>'
}

# master -- the node where the pool is Promoted, as n3 sees it
master() {
	cluster_promoted n3 pool-clone
}

# fence_holder -- the node the fence constraint leaves promotable
fence_holder() {
	fence n3 "rpmem_fence_holder pool-clone"
}

# has_master -- the pool is Promoted somewhere
has_master() {
	[[ -n $(master) ]]
}

# fenced_for NODE -- the fence keeps only NODE promotable
fenced_for() {
	[[ $(fence_holder) == "$1" ]]
}

# is_master NODE -- the pool is Promoted on NODE
is_master() {
	[[ $(master) == "$1" ]]
}

# logged NODE -- how many commits the application logged on the node
logged() {
	local f=$tmp/committed.$1
	[[ -f $f ]] && wc -l <"$f" || echo 0
}

# last_logged NODE -- the last commit logged there (0: none)
last_logged() {
	local f=$tmp/committed.$1
	[[ -s $f ]] && tail -n 1 "$f" || echo 0
}

# grows NODE N -- wait until the node's log has N more lines than now
grows() {
	local f=$tmp/committed.$1 want
	want=$(($(logged "$1") + $2))
	cluster_wait 60 bash -c "[[ -f '$f' ]] && (( \$(wc -l <'$f') >= $want ))"
}

# in_sync NODE -- the master on NODE reports its replica connected and
# the fence is gone
in_sync() {
	[[ $(handle_field "$1" state) == connected ]] && [[ -z $(fence_holder) ]]
}

# why NODE -- what a failed wait should show: the live handles on NODE,
# the fence, the agent's last words in NODE's pacemaker log
why() {
	echo "--- on $1: $(on "$1" "$rpmem" status --json 2>&1 | head -c 1500)"
	echo "--- fence: '$(fence_holder)'; roles: $(cluster_running n3 pool-clone | tr '\n' ' ')"
	grep -h 'pool.*\(ERROR\|WARN\|info\|notice\)' "$tmp/$1/var/log/pacemaker/pacemaker.log" 2>/dev/null |
		grep -i 'rpmem\|pool' | tail -n 8
	tail -n 5 "$tmp/$1/srv/librpmem.log" 2>/dev/null
}

# resynced WHAT NODE -- wait until the master on NODE has its replica in
# sync and the fence gone; else a failure named WHAT, with why
resynced() {
	cluster_wait 120 in_sync "$2" && return 0
	tu_fail "$1: the other copy is not resynced"
	why "$2"
	return 1
}

# other NODE -- the other data node
other() {
	[[ $1 == n1 ]] && echo n2 || echo n1
}

# ---------------------------------------------------------- the scenarios

# sc_agent -- ocf-tester and the monitor's answers, on n3's own pair
sc_agent() {
	local s=$tmp/n3/srv
	mkdir -p "$s/psd" "$s/state"
	printf 'PMEMPOOLSET\n16M /srv/probe.0\n' >"$s/psd/probe.set"
	printf 'PMEMPOOLSET\n16M /srv/peer.0\n' >"$s/psd/peer.set"
	printf 'PMEMPOOLSET\n16M /srv/probe.0\nREPLICA root@%s peer.set\n' \
		"$(cluster_addr n3)" >"$s/probe-master.set"
	on n3 "$txlog" create /srv/probe-master.set >"$tmp/out" 2>&1 ||
		{ tu_fail "agent: the probe pool: $(<"$tmp/out")"; return; }
	# a clone Pacemaker never starts, for the agent's own instance
	crm n3 cibadmin -C -o resources -X "$(pool_xml probe probe-clone \
		/srv/psd/probe.set /srv/probe-master.set \
		'<nvpair id="probe-clone-target-role" name="target-role" value="Stopped"/>')" ||
		{ tu_fail "agent: the probe clone"; return; }
	local -a params=(-o replica_set=/srv/psd/probe.set
		-o master_set=/srv/probe-master.set -o rpmem="$rpmem"
		-o state_dir=/srv/state)
	if on n3 ocf-tester -n probe "${params[@]}" \
			/usr/lib/ocf/resource.d/rpmem/pool >"$tmp/ocft" 2>&1; then
		echo "--- ok: ocf-tester: $(tail -n 1 "$tmp/ocft")"
	else
		tu_fail "ocf-tester: $(tail -n 15 "$tmp/ocft")"
	fi
	fence n3 "rpmem_fence_remove probe-clone n3"

	# the agent's crm_attribute, first on its PATH: armed (a file), it
	# does what crm-unfence-peer does for the probe, the fence n1 holds
	# lifted and the probe's score left as it finds it, between the
	# monitor's reading of the fence and its taking the score away
	# (D16: the worst moment for the handler, staged)
	mkdir -p "$tmp/shim"
	cat >"$tmp/shim/crm_attribute" <<EOF
#!/bin/sh
case " \$* " in
*" --promotion -D "*)
	if rm "$tmp/shim/armed" 2>/dev/null; then
		. /usr/lib/ocf/lib/rpmem/rpmem-ocf.sh
		rpmem_fence_remove probe-clone n1 &&
			rpmem_score_replica probe-clone "\$(rpmem_node)" || exit 1
	fi ;;
esac
exec /usr/sbin/crm_attribute "\$@"
EOF
	chmod +x "$tmp/shim/crm_attribute"

	# agent ACTION -- the agent's action on the probe instance; status
	agent() {
		on n3 PATH="$tmp/shim:$PATH" \
			OCF_ROOT=/usr/lib/ocf OCF_RESOURCE_INSTANCE=probe \
			OCF_RESKEY_replica_set=/srv/psd/probe.set \
			OCF_RESKEY_master_set=/srv/probe-master.set \
			OCF_RESKEY_rpmem="$rpmem" OCF_RESKEY_state_dir=/srv/state \
			/usr/lib/ocf/resource.d/rpmem/pool "$1" >/dev/null 2>&1
	}
	# score -- the probe's promotion score on n3 (none: not set)
	score() {
		on n3 OCF_RESOURCE_INSTANCE=probe crm_attribute --promotion \
			-G -q 2>/dev/null || echo none
	}
	# unsaid NODE ATTR -- NODE's transient ATTR is gone
	unsaid() {
		! crm n3 crm_attribute -N "$1" -l reboot -n "$2" -G -q \
			>/dev/null 2>&1
	}
	# newer NODE [gone] -- NODE says (a transient attribute, as its
	# agent would) that its copy holds a generation the probe's current
	# is in the past of; with `gone`, says nothing again
	newer() {
		local a="rpmem-gen-probe-clone" cur
		if [[ ${2:-} == gone ]]; then
			crm n3 crm_attribute -N "$1" -l reboot -n "$a" -D &&
				cluster_wait 10 unsaid "$1" "$a"
			return
		fi
		cur=$(on n3 "$rpmem" status --json /srv/psd/probe.set | jq -r \
			'.sets[0].generations.identifiers.current')
		crm n3 crm_attribute -N "$1" -l reboot -n "$a" \
			-v "f00df00df00df00d:$cur" &&
			cluster_wait 10 crm n3 crm_attribute -N "$1" -l reboot \
				-n "$a" -G -q
	}
	# each row: what monitor must answer, the score, after the step
	local -a rows=(
		"7|none|true"				# stopped
		"0|100|agent start"			# a replica
		"8|1000|agent promote"			# the master
		"0|100|agent demote"			# a replica again
		# its master writes it asynchronously: below a sync copy
		"0|50|echo async 1111111111111111 >>\"\$s/probe.0.gen\""
		"0|100|sed -i '/^async /d' \"\$s/probe.0.gen\""
		"0|none|on n3 \"\$rpmem\" outdate /srv/psd/probe.set"
		"0|100|on n3 \"\$rpmem\" outdate --clear /srv/psd/probe.set"
		"0|100|fence n3 'rpmem_fence_remove probe-clone n3'"
		"0|none|fence n3 'rpmem_fence_place probe-clone n1'"
		"0|100|fence n3 'rpmem_fence_remove probe-clone n1'"
		# D16: lifted between the monitor's read and its delete
		"0|100|fence n3 'rpmem_fence_place probe-clone n1' && : >\"\$tmp/shim/armed\""
		"0|100|[ ! -e \"\$tmp/shim/armed\" ]"	# (it was)
		# a fence with a generation: lifted only by a copy that holds
		# a later one with it in its history
		"0|none|fence n3 'rpmem_fence_place probe-clone n1 \"\" 0123456789abcdef'"
		"0|none|! fence n3 'rpmem_fence_outlived probe-clone 0123456789abcdef 0123456789abcdef'"
		"0|none|! fence n3 'RPMEMD_GENERATION=1111111111111111 RPMEMD_HISTORY=2222222222222222 /usr/lib/ocf/lib/rpmem/crm-unfence-peer -r probe-clone'"
		"0|100|fence n3 'RPMEMD_GENERATION=1111111111111111 RPMEMD_HISTORY=2222222222222222,0123456789abcdef /usr/lib/ocf/lib/rpmem/crm-unfence-peer -r probe-clone'"
		"0|none|newer n1"			# n1's copy wrote since
		"0|100|newer n1 gone"
		"0|none|on n3 \"\$rpmem\" discard /srv/psd/probe.set"
		"7|none|agent stop"
	)
	local row want_rc want_score step got
	for row in "${rows[@]}"; do
		IFS='|' read -r want_rc want_score step <<<"$row"
		eval "$step" >/dev/null 2>&1 || tu_fail "agent: '$step' failed"
		agent monitor
		got=$?
		[[ $got == "$want_rc" ]] ||
			tu_fail "agent: after '$step' monitor says $got, not $want_rc"
		[[ $(score) == "$want_score" ]] ||
			tu_fail "agent: after '$step' the score is $(score), not $want_score"
	done
	# an outdated copy is never promoted
	agent start
	on n3 "$rpmem" outdate /srv/psd/probe.set >/dev/null 2>&1
	agent promote && tu_fail "agent: an outdated copy was promoted"
	agent stop
	crm n3 cibadmin -D -o resources --xpath "//clone[@id='probe-clone']" \
		>/dev/null 2>&1
	echo "--- ok: the agent's monitor: stopped 7, replica 0, master 8; outdated, fenced, older than another node's copy and discarded unpromotable"
}

# sc_p1 -- the master's node killed: the replica takes over by itself
sc_p1() {
	local m r t0 t1 first
	m=$(master) r=$(other "$m")
	echo "--- P1: $m (master) killed; $r holds the replica; the DC is $(cluster_dc n3)"
	t0=$(now)
	cluster_kill "$m"
	cluster_wait 120 test -s "$tmp/committed.$r" ||
		{ tu_fail "P1: the application does not commit on $r"; return; }
	t1=$(now)
	first=$(head -n 1 "$tmp/committed.$r")
	[[ $(master) == "$r" ]] || tu_fail "P1: $r is not the master"
	[[ $(fence_holder) == "$r" ]] || tu_fail "P1: $m's copy is not fenced"
	# the one in flight when it died may be there, not logged
	((first > $(last_logged "$m") && first <= $(last_logged "$m") + 2)) ||
		tu_fail "P1: $r's first commit is $first after $m's last $(last_logged "$m")"
	P1_RTO=$(secs "$t0" "$t1")
	echo "--- P1: loss of the master to the first commit on $r: $P1_RTO s"
	DOWN=$m
}

# sc_p2 -- the old master's node back: it rejoins as the replica
sc_p2() {
	local m=$DOWN r
	r=$(other "$m")
	echo "--- P2: $m back"
	cluster_boot "$m"
	cluster_wait_online "$m" || { tu_fail "P2: $m does not come back"; return; }
	resynced P2 "$r" || return
	[[ $(master) == "$r" ]] || tu_fail "P2: the master moved to $(master)"
	local roles
	roles=$(cluster_running n3 pool-clone)
	grep -qx "$m Unpromoted" <<<"$roles" ||
		tu_fail "P2: $m is not Unpromoted: $roles"
	grows "$r" 20 || tu_fail "P2: the application stopped during the resync"
	P2_BYTES=$(handle_field "$r" resync_total)
	echo "--- P2: $m resynced by difference: ${P2_BYTES:-?} bytes of $SIZE, no person"
	DOWN=
}

# sc_p3 -- the master cut off: the majority promotes the other copy
sc_p3() {
	local m r base first
	m=$(master) r=$(other "$m")
	grows "$m" 20 || tu_fail "P3: no commits on $m before the cut"
	base=$(logged "$r")
	echo "--- P3: $m (master) cut off"
	cluster_cut "$m"
	grows "$r" 1 || { tu_fail "P3: the application does not commit on $r"; }
	[[ $(master) == "$r" ]] || tu_fail "P3: the majority did not promote $r"
	first=$(sed -n "$((base + 1))p" "$tmp/committed.$r")
	cut_healed P3 "$m" "$r" "$first" || return
	echo "--- P3: $m's last commit $LAST_CUT, $r went on at $first; healed, one master ($r), $m resynced"
}

# cut_healed WHAT M R FIRST -- the cut-off M healed: it rejoins and R, the
# new master, resyncs it; M acknowledged nothing from R's first commit
# FIRST on (D3), and one Promoted role is left.  LAST_CUT: M's last commit
cut_healed() {
	cluster_heal "$2"
	cluster_wait_online "$2" || tu_fail "$1: $2 does not rejoin"
	resynced "$1" "$3" || return 1
	LAST_CUT=$(last_logged "$2")
	((LAST_CUT < $4)) ||
		tu_fail "$1: $2 acknowledged commit $LAST_CUT; $3 went on from $4"
	[[ $(cluster_promoted n3 pool-clone | wc -l) == 1 ]] ||
		tu_fail "$1: not one master: $(cluster_promoted n3 pool-clone)"
}

# sc_p4 -- the replica's node lost: the application goes on
sc_p4() {
	local m r
	m=$(master) r=$(other "$m")
	local t0
	echo "--- P4: $r (replica) killed"
	t0=$(now)
	cluster_kill "$r"
	cluster_wait 60 fenced_for "$m" ||
		tu_fail "P4: $r's stale copy is not fenced (fence: $(fence_holder))"
	P4_FENCED=$(secs "$t0" "$(now)")
	grows "$m" 50 || tu_fail "P4: the application stopped without its replica"
	[[ $(handle_field "$m" state) == degraded ]] ||
		tu_fail "P4: the handle is $(handle_field "$m" state), not degraded"
	cluster_boot "$r"
	cluster_wait_online "$r" || tu_fail "P4: $r does not come back"
	resynced P4 "$m"
	echo "--- P4: fenced $P4_FENCED s after the loss, the application went on degraded; $r back and resynced, the fence gone"
}

# sc_p5 -- a planned switch-over
sc_p5() {
	local m r t0 t1 base
	m=$(master) r=$(other "$m")
	base=$(last_logged "$r")
	echo "--- P5: the Promoted role moved from $m to $r"
	t0=$(now)
	crm n3 crm_resource --move --promoted -r pool-clone -N "$r" \
		>"$tmp/out" 2>&1 || tu_fail "P5: crm_resource --move: $(<"$tmp/out")"
	cluster_wait 120 bash -c "[[ \$(tail -n 1 '$tmp/committed.$r' 2>/dev/null || echo 0) -gt $base ]]" ||
		tu_fail "P5: the application does not commit on $r"
	t1=$(now)
	P5_SWITCH=$(secs "$t0" "$t1")
	crm n3 crm_resource --clear -r pool-clone >/dev/null 2>&1
	local first
	first=$(awk -v b="$base" '$1 > b { print; exit }' "$tmp/committed.$r")
	# the application was stopped by a signal: its last commit may be
	# unlogged, never missing
	((first > $(last_logged "$m") && first <= $(last_logged "$m") + 2)) ||
		tu_fail "P5: $r went on at $first after $m's last $(last_logged "$m")"
	resynced P5 "$r"
	echo "--- P5: switch-over to the first commit on $r: $P5_SWITCH s"
}

# sc_p6 -- the whole cluster crashed with the replica stale, restarted
sc_p6() {
	local m r
	m=$(master) r=$(other "$m")
	echo "--- P6: $r (replica) killed, $m goes on, then every node killed"
	cluster_kill "$r"
	cluster_wait 60 fenced_for "$m" ||
		tu_fail "P6: $r is not fenced"
	grows "$m" 30 || tu_fail "P6: no commits on $m alone"
	local n
	for n in "$m" n3; do
		cluster_kill "$n"
	done
	# the stale node first: it must wait for the one with the data
	cluster_boot "$r"
	cluster_boot n3
	cluster_wait_online "$r" n3 || tu_fail "P6: $r and n3 do not form a cluster"
	cluster_boot "$m"
	cluster_wait_online "$m" "$r" n3 || tu_fail "P6: $m does not rejoin"
	cluster_wait 120 is_master "$m" ||
		tu_fail "P6: $(master) promoted, not $m, which has the newest copy"
	resynced P6 "$m"
	grows "$m" 20 || tu_fail "P6: the application does not run on $m"
	echo "--- P6: after the restart $m (the newest copy) is the master; $r resynced"
}

# rto WHAT T0 T1 -- the figure T1 - T0 of WHAT, said, kept in RTO_WHAT,
# and a failure above RTO_MAX
rto() {
	local f
	f=$(secs "$2" "$3")
	printf -v "RTO_$1" '%s' "$f"
	awk -v f="$f" -v m="$RTO_MAX" 'BEGIN { exit !(f <= m) }' ||
		tu_fail "$1: $f s from the loss to the first commit (RTO_MAX $RTO_MAX)"
}

# next_commit NODE BASE SECONDS -- until NODE logs a commit past BASE
next_commit() {
	cluster_wait "$3" bash -c "[[ \$(tail -n 1 '$tmp/committed.$1' 2>/dev/null || echo 0) -gt $2 ]]"
}

# first_after NODE BASE -- the first commit NODE logged past BASE
first_after() {
	awk -v b="$2" '$1 > b { print; exit }' "$tmp/committed.$1"
}

# reconnected NODE N -- the master on NODE has reconnected more than N
# times and has its replica in sync (the fence may still be there)
reconnected() {
	(($(handle_field "$1" reconnects) > $2)) &&
		[[ $(handle_field "$1" state) == connected ]]
}

# unfenced NODE -- the fence of the master on NODE is gone
unfenced() {
	[[ -z $(fence_holder) ]]
}

# replica_fault WHAT NODE -- the rpmemd of the master on NODE killed on
# the other node (F4): fenced, degraded, reconnected, resynced, and
# unfenced within 2 s of the resync's end (crm-unfence-peer, not the
# master's next monitor, up to 10 s later)
replica_fault() {
	local m=$2 r pids n0 t0
	r=$(other "$m")
	n0=$(handle_field "$m" reconnects)
	pids=$(rpmemd_pids "$r")
	[[ -n $pids ]] || { tu_fail "$1: no rpmemd on $r"; return 1; }
	# shellcheck disable=SC2086 # a list of pids
	cluster_exec "$r" kill -KILL $pids
	if ! cluster_wait 60 reconnected "$m" "${n0:-0}"; then
		tu_fail "$1: $m did not resync $r after its rpmemd died"
		why "$m"
		return 1
	fi
	t0=$(now)
	cluster_wait 30 unfenced "$m" || { tu_fail "$1: the fence stays"; return 1; }
	UNFENCED=$(secs "$t0" "$(now)")
	awk -v f="$UNFENCED" 'BEGIN { exit !(f <= 2) }' ||
		tu_fail "$1: the fence went $UNFENCED s after the resync"
	echo "--- $1: in sync, unfenced $UNFENCED s after the resync ended"
}

# master_killed WHAT M R BOUND -- kill the master M: R must be committing
# within BOUND seconds, going on from M's last commit; M booted again and
# resynced.  RTO_WHAT is the figure
master_killed() {
	local base t0 t1 first
	base=$(last_logged "$3")
	t0=$(now)
	cluster_kill "$2"
	next_commit "$3" "$base" 120 ||
		{ tu_fail "$1: the application does not commit on $3"; why "$3"; return 1; }
	t1=$(now)
	RTO_MAX=$4 rto "$1" "$t0" "$t1"
	first=$(first_after "$3" "$base")
	((first > $(last_logged "$2") && first <= $(last_logged "$2") + 2)) ||
		tu_fail "$1: $3 went on at $first after $2's last $(last_logged "$2")"
	cluster_boot "$2"
	cluster_wait_online "$2" || { tu_fail "$1: $2 does not come back"; return 1; }
	resynced "$1" "$3"
}

# sc_c1 -- compound fault: the replica's rpmemd killed, and the master
# killed right after the resync (D1: the fence must be gone at once)
sc_c1() {
	local m r
	m=$(master) r=$(other "$m")
	echo "--- C1: $r's rpmemd killed, then $m (master) killed right after the resync"
	replica_fault C1 "$m" || return
	master_killed C1 "$m" "$r" "$RTO_MAX"
	echo "--- C1: loss of the master right after the resync to the first commit on $r: ${RTO_C1:-?} s"
}

# sc_c5 -- the master lost while its unfence-peer handler runs: the
# replica, in sync, lifts the fence it has outlived itself
sc_c5() {
	local m r pids n0
	m=$(master) r=$(other "$m")
	echo "--- C5: $r's rpmemd killed, then $m (master) killed while crm-unfence-peer is held"
	rm -f "$tmp/unfence.held"
	: >"$tmp/unfence.hold"
	n0=$(handle_field "$m" reconnects)
	pids=$(rpmemd_pids "$r")
	[[ -n $pids ]] || { tu_fail "C5: no rpmemd on $r"; return; }
	# shellcheck disable=SC2086 # a list of pids
	cluster_exec "$r" kill -KILL $pids
	cluster_wait 60 reconnected "$m" "${n0:-0}" &&
		cluster_wait 30 test -e "$tmp/unfence.held" ||
		{ tu_fail "C5: $r not resynced, or the handler not held"; why "$m"; }
	# rpmemd's after-resync handler on $r lifts it, $m's being held;
	# the replica's monitor (every 11 s) would not be in time
	local t0
	t0=$(now)
	cluster_wait 3 unfenced "$m" ||
		tu_fail "C5: the fence is still '$(fence_holder)' with $m's handler held"
	echo "--- C5: the fence gone $(secs "$t0" "$(now)") s after the unfence-peer handler was held"
	rm -f "$tmp/unfence.hold"
	master_killed C5 "$m" "$r" "$RTO_MAX"
	echo "--- C5: loss of the master, its unfence-peer handler held, to the first commit on $r: ${RTO_C5:-?} s"
}

# unscored NODE -- NODE has no promotion score for the pool
unscored() {
	! crm n3 crm_attribute -N "$1" -l reboot --promotion=pool -G -q \
		>/dev/null 2>&1
}

# replica_monitor INTERVAL NODE -- the Unpromoted monitor every INTERVAL
# (e.g. 11s), and its first run at that interval seen on NODE
replica_monitor() {
	local ms=$((${1%s} * 1000))
	crm n3 cibadmin -M -o resources -X "<op id=\"pool-monitor-u\" name=\"monitor\" interval=\"$1\" role=\"Unpromoted\" timeout=\"30s\"/>" &&
		cluster_wait 60 crm n3 cibadmin -Q --xpath \
			"//node_state[@uname='$2']//lrm_rsc_op[@operation='monitor'][@interval='$ms']"
}

# scored_by NODE BY MARK -- n3's attribute manager set NODE's promotion
# score from unset at BY's request, in its log past line MARK
scored_by() {
	tail -n "+$(($3 + 1))" "$tmp/n3/var/log/pacemaker/pacemaker.log" |
		grep -q "Setting master-pool\[$1\]: (unset) -> [0-9]* | from $2 "
}

# sc_c6 -- the fence lifted by the master's monitor, every handler
# failing: the replica scored by it then, not at its own next monitor
# (D16's second half).  The fence is placed again without a generation,
# so that the replica cannot outlive it, and the replica's monitor
# slowed to 300 s once its score is gone: only the master can lift the
# fence or score it in time.
sc_c6() {
	local m r pids mark
	m=$(master) r=$(other "$m")
	echo "--- C6: $r's rpmemd stopped and resumed, the unfence handlers failing: $m's monitor lifts the fence and scores $r"
	pids=$(rpmemd_pids "$r")
	[[ -n $pids ]] || { tu_fail "C6: no rpmemd on $r"; return; }
	: >"$tmp/unfence.fail"
	# shellcheck disable=SC2086 # a list of pids
	cluster_exec "$r" kill -STOP $pids
	if ! cluster_wait 30 fenced_for "$m" ||
			! fence n3 "rpmem_fence_remove pool-clone $m &&
				rpmem_fence_place pool-clone $m" ||
			! cluster_wait 30 unscored "$r" ||
			! replica_monitor 300s "$r"; then
		tu_fail "C6: $r not fenced, its fence not placed again, its score kept or its monitor not slowed"
		why "$m"
	fi
	mark=$(wc -l <"$tmp/n3/var/log/pacemaker/pacemaker.log")
	# shellcheck disable=SC2086 # a list of pids
	cluster_exec "$r" kill -CONT $pids
	if ! cluster_wait 60 unfenced "$m"; then
		tu_fail "C6: $m's monitor did not lift the fence"
		why "$m"
	elif ! cluster_wait 5 scored_by "$r" "$m" "$mark"; then
		tu_fail "C6: $m's monitor lifted the fence, but $r has no score from it (its own monitor is 300 s away): $(crm n3 crm_attribute -N "$r" -l reboot --promotion=pool -G -q 2>&1)"
	else
		echo "--- C6: the fence lifted by $m's monitor, $r scored by it"
	fi
	rm -f "$tmp/unfence.fail"
	replica_monitor 11s "$r" || tu_fail "C6: $r's monitor not back at 11 s"
	resynced C6 "$m"
}

# sc_c2 -- the master cut off right after a replica fault (no settling)
sc_c2() {
	local m r t0 t1 base first
	m=$(master) r=$(other "$m")
	echo "--- C2: $r's rpmemd killed, then $m (master) cut off right after the resync"
	replica_fault C2 "$m" || return
	base=$(last_logged "$r")
	t0=$(now)
	cluster_cut "$m"
	next_commit "$r" "$base" 120 ||
		{ tu_fail "C2: the application does not commit on $r"; why "$r"; return; }
	t1=$(now)
	rto C2 "$t0" "$t1"
	first=$(first_after "$r" "$base")
	[[ $(master) == "$r" ]] || tu_fail "C2: the majority did not promote $r"
	cut_healed C2 "$m" "$r" "$first" || return
	echo "--- C2: cut to the first commit on $r: $RTO_C2 s; $m's last commit $LAST_CUT, $r went on at $first"
}

# sc_c3 -- the replica's rpmemd stopped: a hung peer noticed in seconds
sc_c3() {
	local m r pids n0 t0 t1 t2
	m=$(master) r=$(other "$m")
	n0=$(handle_field "$m" reconnects)
	pids=$(rpmemd_pids "$r")
	[[ -n $pids ]] || { tu_fail "C3: no rpmemd on $r"; return; }
	echo "--- C3: $r's rpmemd ($pids) stopped"
	t0=$(now)
	# shellcheck disable=SC2086 # a list of pids
	cluster_exec "$r" kill -STOP $pids
	cluster_wait 30 fenced_for "$m" ||
		{ tu_fail "C3: the stopped rpmemd was not noticed"; why "$m"; }
	t1=$(now)
	C3_FENCED=$(secs "$t0" "$t1")
	grows "$m" 30 || tu_fail "C3: the application stopped with rpmemd stopped"
	# shellcheck disable=SC2086 # a list of pids
	cluster_exec "$r" kill -CONT $pids
	t1=$(now)
	cluster_wait 60 reconnected "$m" "${n0:-0}" &&
		cluster_wait 30 unfenced "$m" ||
		{ tu_fail "C3: $r not resynced after its rpmemd resumed"; why "$m"; }
	t2=$(now)
	echo "--- C3: stopped rpmemd to the fence (the application going on): $C3_FENCED s; resumed to in sync, unfenced: $(secs "$t1" "$t2") s"
}

# sc_c4 -- the replica's node cut off for 18 s: rejoins within seconds
sc_c4() {
	local m r n0 t0 t1
	m=$(master) r=$(other "$m")
	n0=$(handle_field "$m" reconnects)
	echo "--- C4: $r (replica) cut off for 18 s"
	cluster_cut "$r"
	cluster_wait 30 fenced_for "$m" || tu_fail "C4: $r was not fenced"
	grows "$m" 30 || tu_fail "C4: the application stopped without its replica"
	# the isolation lasts as long as the held-out run's
	tu_nap 18
	cluster_heal "$r"
	t0=$(now)
	cluster_wait 120 reconnected "$m" "${n0:-0}" &&
		cluster_wait 30 unfenced "$m" ||
		{ tu_fail "C4: $r not resynced after the heal"; why "$m"; return; }
	t1=$(now)
	C4_HEAL=$(secs "$t0" "$t1")
	awk -v f="$C4_HEAL" 'BEGIN { exit !(f <= 15) }' ||
		tu_fail "C4: $C4_HEAL s from the heal to in sync"
	echo "--- C4: heal to in sync, the fence gone: $C4_HEAL s"
}

configure || { tu_fail "the configuration is refused"; exit 1; }
cluster_wait 120 has_master ||
	{ tu_fail "the pool is not promoted anywhere"; exit 1; }
grows "$(master)" 50 ||
	{ tu_fail "the application does not run: $(cat "$tmp"/n?/srv/app.err 2>/dev/null)"; exit 1; }
resynced "the first master" "$(master)" || exit 1
echo "--- the pool is promoted on $(master), the application commits"

DOWN=
for sc in $SCENARIOS; do
	t_sc=$(now)
	"sc_$sc"
	echo "--- $sc took $(secs "$t_sc" "$(now)") s"
done

# the end: the application stopped, every commit there, the copies equal
m=$(master)
crm n3 crm_resource -r app --meta -p target-role -v Stopped >/dev/null 2>&1
app_stopped() {
	[[ -z $(cluster_running n3 app) ]]
}
cluster_wait 60 app_stopped || tu_fail "the application does not stop"
sort -n -u "$tmp"/committed.n? >"$tmp/all"
on "$m" "$txlog" check /srv/app.set "$tmp/all" >"$tmp/check" 2>&1 ||
	tu_fail "the master lacks a logged commit or has one half applied: $(<"$tmp/check")"
fo_replica_check "$tmp/$(other "$m")/srv/pool.0" "$SIZE" "$txlog" "$tmp/all"
# libpmemobj writes a few 4 KiB chunks it never persists (README, Known
# limits): verify may find those, and nothing more
on "$m" "$rpmem" verify --json /srv/app.set >"$tmp/verify" 2>&1
ranges=$(jq -r '.replicas[1] | if .status == "equal" then 0
	elif .status == "differs" then .ranges_total else empty end' \
	"$tmp/verify" 2>/dev/null)
if [[ -z $ranges ]] || ((ranges > 8)); then
	tu_fail "the copies differ beyond what libpmemobj never persists: $(<"$tmp/verify")"
fi
echo "--- $(wc -l <"$tmp/all") commits logged, all in both copies; verify: ${ranges:-?} 4 KiB range(s) differ"
printf -- '--- figures: P1 RTO %s s (token %s ms, coefficient %s); P2 resync %s bytes; P5 switch-over %s s; C1 RTO %s s; C2 RTO %s s; C3 stopped to fenced %s s; C4 heal to in sync %s s; C5 RTO %s s\n' \
	"${P1_RTO:-?}" "${CLUSTER_TOKEN:-1000}" "${CLUSTER_TOKEN_COEFFICIENT:-default}" "${P2_BYTES:-?}" "${P5_SWITCH:-?}" \
	"${RTO_C1:-?}" "${RTO_C2:-?}" "${C3_FENCED:-?}" "${C4_HEAL:-?}" \
	"${RTO_C5:-?}"
tu_end "the pool failed over, back and over again by itself"
