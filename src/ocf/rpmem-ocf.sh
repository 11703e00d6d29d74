# SPDX-License-Identifier: BSD-3-Clause
# rpmem-ocf.sh -- what the ocf:rpmem:pool agent and its fence-peer
# handler share (sourced by both; POSIX sh)
#
# Resource-level fencing, as DRBD's crm-fence-peer does it: one location
# constraint per promotable clone forbids the Promoted role on every node
# but the one whose copy holds every commit (the master that placed it):
#
#   <rsc_location id="rpmem-fence-CLONE" rsc="CLONE">
#     <rule id="rpmem-fence-CLONE-rule" role="Promoted" score="-INFINITY">
#       <expression id="rpmem-fence-CLONE-expr" attribute="#uname"
#                   operation="ne" value="NODE"/>
#       <expression id="rpmem-fence-CLONE-claim" attribute="#uname"
#                   operation="ne" value="claim-TAG"/>
#       <expression id="rpmem-fence-CLONE-gen" attribute="#uname"
#                   operation="ne" value="gen-GENERATION"/>
#     </rule>
#   </rsc_location>
#
# It is placed when a master goes on without its replica (the handler)
# or is promoted (the agent), and removed by the master's monitor once
# the other copy is in sync again.  It lives in the CIB, so it outlives
# a whole-cluster restart, as the staleness it stands for does.
#
# The third expression, always true too, carries the data generation the
# master's copy had when it placed or claimed the fence (gen-none when it
# keeps none): the newest a stale copy can hold.  A copy that has since
# taken a later generation from its master (a resync ended: GEN ADOPT)
# holds everything that master acknowledged until it is fenced again,
# and a new fence claims that later generation.  So the fenced node's
# agent may remove a fence whose generation is in its copy's history and
# is not its current (rpmem_fence_outlived): when the master dies after
# the resync and before it lifted the fence itself (crm-unfence-peer),
# the in-sync copy is still promoted without a person.
#
# The second expression is always true (no node is named claim-TAG): it
# only carries the claim, a random TAG that each placer writes afresh,
# so that the monitor can tell whether the fence changed hands between
# its look at the other copy and its removal.  Without it, a master could
# lose its replica just after its monitor saw it in sync, and the handler
# (finding the fence already there) exit 0 just before that monitor
# removed the fence: librpmem would go on degraded with nothing left in
# the CIB against promoting the stale copy (issue 31).
#
# Why no interleaving of the handler H and the master's monitor M ends
# with H having exited 0 and no fence in the CIB.  Each CIB operation is
# atomic and they are serialised.  H writes its fresh claim T (W: a
# modification that succeeds only while the fence names this node, or
# the creation of the fence with T) and exits 0 only after W succeeded.
# M reads the fence and its claim T0 (R), then looks at the other copy
# (C: `rpmem status`), then deletes the fence only while it still names
# this node and carries T0 (D, one conditional delete).  librpmem shows
# no handle connected from before it runs H until H has exited: when a
# session is lost (repl_drop) the record says "not in sync" and the
# handle's status FROZEN before H starts, and the handle's lock is held
# until H has exited; an open that goes on without its replica runs H
# before it publishes any status.  So no C after H started sees the copy
# in sync.  Then, for a D that would remove the fence after W:
#   - D after W with T0 = T: R read T, so R came after W, and C after R,
#     after H started: C saw the copy out of sync, and M deleted nothing;
#   - D after W with T0 != T: the fence carries T (or a newer claim), not
#     T0, and D matches nothing.
# A D before W removed a fence H had not claimed yet: W then finds none,
# and creates it (or fails, and H exits 1).  Nothing else removes a fence
# with H's claim: the agent's promote removes only one with its own claim
# and only after its own promote failed, on a node that is not the
# master; the monitors of other nodes remove only a fence naming them.
# The fence H leaves therefore stands until a monitor whose R read T (or
# a later claim) sees the copy in sync again, after the resync.

RPMEM_FENCE_PREFIX=rpmem-fence-

# promotion scores: the last master above an in-sync replica, above an
# async one, which may be behind by its lag (the agent sets them;
# crm-unfence-peer gives the other nodes one of the last two)
# shellcheck disable=SC2034 # the agent's
RPMEM_SCORE_PROMOTED=1000
# shellcheck disable=SC2034 # the agent's
RPMEM_SCORE_LAST_MASTER=200
RPMEM_SCORE_REPLICA=100
RPMEM_SCORE_ASYNC=50

# rpmem_xpath XPATH -- the string XPATH selects in the XML on stdin
rpmem_xpath() {
	xmllint --xpath "$1" - 2>/dev/null || true
}

# rpmem_node -- this node's name as Pacemaker knows it
rpmem_node() {
	crm_node -n 2>/dev/null
}

# rpmem_quorate -- does this node's partition have quorum?
rpmem_quorate() {
	[ "$(crm_node -q 2>/dev/null)" = 1 ]
}

# rpmem_clone_of ID -- the promotable clone ID names or holds
rpmem_clone_of() {
	cibadmin -Q -o resources 2>/dev/null | rpmem_xpath \
		"string((//clone[@id='$1'] | //clone[primitive[@id='$1']])/@id)"
}

# rpmem_primitive_of CLONE -- the id of the primitive the clone holds
rpmem_primitive_of() {
	cibadmin -Q -o resources 2>/dev/null | rpmem_xpath \
		"string(//clone[@id='$1']/primitive/@id)"
}

# rpmem_clone_nodes CLONE -- the nodes where an instance of the clone
# is active, one a line
rpmem_clone_nodes() {
	crm_resource --resource "$1" --locate --quiet 2>/dev/null |
		awk 'NF { print $1 }'
}

# rpmem_handler_clone ARG... -- the clone a handler works on, from its
# arguments (--resource ID: the clone or its primitive; without it, the
# only clone of an ocf:rpmem:pool in the CIB), printed; 2 for a usage
# error, 1 when there is none, the reason on stderr either way
rpmem_handler_clone() {
	_rsc=
	while [ $# -gt 0 ]; do
		case $1 in
		--resource=*) _rsc=${1#--resource=} ;;
		--resource|-r)
			[ $# -ge 2 ] || { echo "usage: [--resource ID]" >&2; return 2; }
			_rsc=$2
			shift ;;
		*)	echo "unknown argument '$1'; usage: [--resource ID]" >&2
			return 2 ;;
		esac
		shift
	done
	if [ -n "$_rsc" ]; then
		_cl=$(rpmem_clone_of "$_rsc")
		[ -n "$_cl" ] || { echo "no promotable clone named or holding '$_rsc' in the CIB" >&2; return 1; }
	else
		_cl=$(rpmem_pool_clones)
		case $_cl in
		"") echo "no clone of ocf:rpmem:pool in the CIB (give --resource)" >&2
			return 1 ;;
		*"
"*)		echo "several clones of ocf:rpmem:pool ($(echo "$_cl" | tr "\n" " ")): give --resource" >&2
			return 1 ;;
		esac
	fi
	echo "$_cl"
}

# rpmem_pool_clones -- the ids of every clone of an ocf:rpmem:pool
rpmem_pool_clones() {
	cibadmin -Q -o resources 2>/dev/null | rpmem_xpath \
		"//clone[primitive[@class='ocf' and @provider='rpmem' and @type='pool']]/@id" |
		sed -n 's/^ *id="\(.*\)"$/\1/p'
}

# rpmem_fence_read CLONE -- RPMEM_FENCE_HOLDER, the node the fence leaves
# promotable (empty without a fence), and RPMEM_FENCE_CLAIM, the claim it
# carries (empty for none: one an older agent placed), from one reading
# of the CIB; non-zero when the CIB cannot be read
rpmem_fence_read() {
	_x=$(cibadmin -Q -o constraints 2>/dev/null) || return 1
	_l="//rsc_location[@id='$RPMEM_FENCE_PREFIX$1']/rule/expression"
	RPMEM_FENCE_HOLDER=$(printf '%s\n' "$_x" | rpmem_xpath \
		"string(${_l}[@id='$RPMEM_FENCE_PREFIX$1-expr']/@value)")
	# shellcheck disable=SC2034 # read by the agent's monitor
	RPMEM_FENCE_CLAIM=$(printf '%s\n' "$_x" | rpmem_xpath \
		"string(${_l}[@id='$RPMEM_FENCE_PREFIX$1-claim']/@value)")
	RPMEM_FENCE_GEN=$(printf '%s\n' "$_x" | rpmem_xpath \
		"string(${_l}[@id='$RPMEM_FENCE_PREFIX$1-gen']/@value)")
	RPMEM_FENCE_GEN=${RPMEM_FENCE_GEN#gen-}
	[ "$RPMEM_FENCE_GEN" != none ] || RPMEM_FENCE_GEN=
}

# rpmem_fence_holder CLONE -- print the node the fence leaves promotable
# (empty without a fence); non-zero when the CIB cannot be read
rpmem_fence_holder() {
	rpmem_fence_read "$1" || return 1
	printf '%s\n' "$RPMEM_FENCE_HOLDER"
}

# rpmem_new_claim -- print a fresh claim, never a node's name
rpmem_new_claim() {
	_r=$(od -A n -N 8 -t x1 /dev/urandom | tr -d ' \n')
	[ -n "$_r" ] || _r=$$-$(date +%s%N)
	echo "claim-$_r"
}

# rpmem_claim_xml CLONE CLAIM GEN -- the expressions that carry CLAIM and
# the generation GEN (16 hex digits; anything else: none)
rpmem_claim_xml() {
	_g=none
	case $3 in
	*[!0-9a-f]*) ;;
	*) [ ${#3} -ne 16 ] || _g=$3 ;;
	esac
	echo "<expression id=\"$RPMEM_FENCE_PREFIX$1-claim\" attribute=\"#uname\" operation=\"ne\" value=\"$2\"/><expression id=\"$RPMEM_FENCE_PREFIX$1-gen\" attribute=\"#uname\" operation=\"ne\" value=\"gen-$_g\"/>"
}

# rpmem_fence_mine CLONE NODE -- XPath of the fence of CLONE while it
# names NODE
rpmem_fence_mine() {
	echo "//rsc_location[@id='$RPMEM_FENCE_PREFIX$1'][rule/expression[@id='$RPMEM_FENCE_PREFIX$1-expr'][@value='$2']]"
}

# rpmem_fence_place CLONE NODE [CLAIM [GEN]] -- forbid the Promoted role
# of CLONE on every node but NODE (a new claim without CLAIM; GEN the
# generation of NODE's copy, none without); 0 when placed, 1 when it
# could not be (one is there already, say)
rpmem_fence_place() {
	_id=$RPMEM_FENCE_PREFIX$1
	_pc=${3:-$(rpmem_new_claim)}
	cibadmin -C -o constraints -X "<rsc_location id=\"$_id\" rsc=\"$1\"><rule id=\"$_id-rule\" role=\"Promoted\" score=\"-INFINITY\"><expression id=\"$_id-expr\" attribute=\"#uname\" operation=\"ne\" value=\"$2\"/>$(rpmem_claim_xml "$1" "$_pc" "${4:-}")</rule></rsc_location>" \
		>/dev/null 2>&1
}

# rpmem_fence_claim CLONE NODE GEN -- the fence of CLONE names NODE and
# carries a claim written now (see the top) and the generation GEN of
# NODE's copy: the claim and generation of a fence naming NODE replaced
# (or added to one without) in one conditional modification, or the
# fence placed; print the claim.  1 when the fence names another node or
# the CIB cannot be read or written
rpmem_fence_claim() {
	_claim=$(rpmem_new_claim)
	for _try in 1 2 3; do
		# update_xml_child merges the rule: the claim's and the
		# generation's attributes are replaced, or they are added
		if cibadmin -M --xpath "$(rpmem_fence_mine "$1" "$2")/rule" \
				-X "<rule id=\"$RPMEM_FENCE_PREFIX$1-rule\">$(rpmem_claim_xml "$1" "$_claim" "$3")</rule>" \
				>/dev/null 2>&1 ||
				rpmem_fence_place "$1" "$2" "$_claim" "$3"; then
			echo "$_claim"
			return 0
		fi
		# neither: another node's fence, or it came or went between
		# the two; look again
		rpmem_fence_read "$1" || return 1
		case $RPMEM_FENCE_HOLDER in
		""|"$2") ;;
		*) return 1 ;;
		esac
	done
	return 1
}

# rpmem_fence_remove CLONE NODE [CLAIM] -- remove the fence of CLONE while
# it still names NODE and, given CLAIM, carries that claim (none, when
# CLAIM is empty); 0 when no fence naming NODE is left
rpmem_fence_remove() {
	_mine=$(rpmem_fence_mine "$1" "$2")
	_xp=$_mine
	_e="rule/expression[@id='$RPMEM_FENCE_PREFIX$1-claim']"
	if [ $# -ge 3 ] && [ -n "$3" ]; then
		_xp="${_xp}[${_e}[@value='$3']]"
	elif [ $# -ge 3 ]; then
		_xp="${_xp}[not($_e)]"
	fi
	# a delete that matches nothing succeeds too: look whether one
	# is left (the same, or claimed again meanwhile)
	cibadmin -D --xpath "$_xp" >/dev/null 2>&1 || return 1
	_x=$(cibadmin -Q -o constraints 2>/dev/null) || return 1
	[ "$(printf '%s\n' "$_x" | rpmem_xpath "count($_mine)")" = 0 ]
}

# rpmem_two_node -- is this a corosync two_node cluster?  0 yes, 1 no,
# 2 cannot tell.  corosync's runtime key first; cmap answers only root
# and the users of /etc/corosync/uidgid.d, and a handler may run as a
# member of haclient: then corosync.conf
rpmem_two_node() {
	if _tn=$(corosync-cmapctl -g runtime.votequorum.two_node 2>/dev/null)
	then
		[ "${_tn##* = }" = 1 ]
		return
	fi
	# cmap answers, without the key: votequorum has no two_node
	corosync-cmapctl -g runtime.votequorum.this_node_id >/dev/null 2>&1 &&
		return 1
	_cf=${COROSYNC_MAIN_CONFIG_FILE:-/etc/corosync/corosync.conf}
	[ -r "$_cf" ] || return 2
	sed 's/#.*//' "$_cf" |
		grep -Eq '^[[:space:]]*two_node[[:space:]]*:[[:space:]]*1[[:space:]]*$'
}

# rpmem_unsafe_two_node -- true (and why on stdout) when this may be a
# corosync two_node cluster and Pacemaker may not fence a node: there
# quorum means nothing (each half of a split keeps it), and only STONITH
# keeps the other half from promoting or going on.  The configured
# stonith-enabled is read (its default is true), not whether a fence
# device works: Pacemaker itself starts nothing without one
rpmem_unsafe_two_node() {
	rpmem_two_node
	case $? in
	0) _tn="corosync's two_node is set" ;;
	1) return 1 ;;
	*) _tn="whether corosync's two_node is set cannot be told (corosync-cmapctl does not answer, ${COROSYNC_MAIN_CONFIG_FILE:-/etc/corosync/corosync.conf} cannot be read)" ;;
	esac
	_st=$(crm_attribute --type crm_config --name stonith-enabled \
		--query --quiet --default=true 2>/dev/null) ||
		_st="unreadable"
	case $(echo "$_st" | tr '[:upper:]' '[:lower:]') in
	true|on|yes|y|1) return 1 ;;
	esac
	echo "$_tn and Pacemaker's stonith-enabled is '$_st': in a two_node cluster both halves of a split keep quorum, and only STONITH keeps the other from going on (set stonith-enabled=true with a fence device, or add a third, voting node)"
}

# rpmem_settle_ms -- how long corosync takes to see a member gone (token
# plus consensus, as configured), in milliseconds
rpmem_settle_ms() {
	_t=$(corosync-cmapctl -g runtime.config.totem.token 2>/dev/null |
		sed -n 's/.* = //p')
	_c=$(corosync-cmapctl -g runtime.config.totem.consensus 2>/dev/null |
		sed -n 's/.* = //p')
	echo $(( ${_t:-3000} + ${_c:-3600} ))
}

# rpmem_fence CLONE MODE GEN -- fence every node but this one, with a
# claim of its own and GEN, the generation of this node's copy (none:
# unknown): the fence already names this node (placed by a
# quorate partition earlier), or is placed now.  With `settle` (the
# handler: a replica lost may be the first sign of this node's own
# isolation), membership is first given the time corosync takes to see a
# member gone, and the fence is placed only if quorum is still there: a
# node being cut off must write nothing to the CIB, whose copy could win
# over the majority's when the partitions merge again.  A fence that
# names this node already is claimed at once: the claim changes nothing
# a merge could get wrong (whichever copy wins forbids the same nodes).
# A promote (MODE now) comes from a settled transition and places at
# once.  Quorum
# counts only where a split leaves it to one side: a corosync two_node
# cluster needs stonith-enabled.  0 fenced, the claim on stdout; 1
# refused (two_node without STONITH, no quorum, another node holds the
# fence, the CIB cannot be read or written), the reason on stderr
rpmem_fence() {
	_me=$(rpmem_node)
	if [ -z "$_me" ]; then
		echo "cannot learn this node's name (crm_node -n)" >&2
		return 1
	fi
	if _why=$(rpmem_unsafe_two_node); then
		echo "$_why" >&2
		return 1
	fi
	for _pass in 1 2; do
		if ! rpmem_quorate; then
			echo "$_me has no quorum: it may be the node cut off" >&2
			return 1
		fi
		if ! rpmem_fence_read "$1"; then
			echo "cannot read the CIB's constraints" >&2
			return 1
		fi
		_h=$RPMEM_FENCE_HOLDER
		if [ -n "$_h" ] && [ "$_h" != "$_me" ]; then
			echo "$RPMEM_FENCE_PREFIX$1 keeps $_h promotable, not $_me: the copy here is the stale one" >&2
			return 1
		fi
		if [ -n "$_h" ] || [ "$2" != settle ] || [ $_pass = 2 ]
		then
			break
		fi
		_ms=$(rpmem_settle_ms)
		sleep "$((_ms / 1000)).$(printf '%03d' $((_ms % 1000)))"
	done
	rpmem_fence_claim "$1" "$_me" "$3" && return 0
	if rpmem_fence_read "$1" && [ -n "$RPMEM_FENCE_HOLDER" ] &&
			[ "$RPMEM_FENCE_HOLDER" != "$_me" ]; then
		echo "$RPMEM_FENCE_PREFIX$1 keeps $RPMEM_FENCE_HOLDER promotable, not $_me: the copy here is the stale one" >&2
	else
		echo "cannot place or claim $RPMEM_FENCE_PREFIX$1 for $_me" >&2
	fi
	return 1
}

# rpmem_unfence CLONE -- the other copy is in sync with this node's
# master again (librpmem's unfence-peer handler): the fence naming this
# node removed whatever its claim (librpmem runs this handler and the
# fence-peer one one after the other, never together, so no claim of a
# loss after the sync can be lost here), and each other node running the
# clone without a promotion score given the one of an in-sync replica, so
# that it can be promoted at once should this node fail.  The monitors
# do the same later (the safety net).  0 done; 1, the reason on stderr
rpmem_unfence() {
	_me=$(rpmem_node)
	if [ -z "$_me" ]; then
		echo "cannot learn this node's name (crm_node -n)" >&2
		return 1
	fi
	if ! rpmem_fence_read "$1"; then
		echo "cannot read the CIB's constraints" >&2
		return 1
	fi
	case $RPMEM_FENCE_HOLDER in
	"") ;;
	"$_me")	if ! rpmem_fence_remove "$1" "$_me"; then
			echo "cannot remove $RPMEM_FENCE_PREFIX$1" >&2
			return 1
		fi ;;
	*)	echo "$RPMEM_FENCE_PREFIX$1 keeps $RPMEM_FENCE_HOLDER promotable, not $_me: left alone" >&2
		return 1 ;;
	esac
	rpmem_score_others "$1" "$_me"
}

# rpmem_score_others CLONE [ME] -- the master's copy is in sync with the
# other copy: each node running CLONE but this one (ME, when its caller
# knows it) gets the promotion score of an in-sync replica unless it has
# one (rpmem_score_replica); run by whoever lifts the master's fence, the
# handler or the master's monitor, so that a lifted fence never leaves
# the replica unpromotable until its own next monitor.  0 done; 1, the
# reason on stderr
rpmem_score_others() {
	_me=${2:-$(rpmem_node)}
	for _n in $(rpmem_clone_nodes "$1"); do
		[ "$_n" = "$_me" ] || rpmem_score_replica "$1" "$_n" || return 1
	done
}

# rpmem_score_replica CLONE NODE -- NODE gets the promotion score of an
# in-sync replica in CLONE unless it has one (its agent's monitor sets
# the right one later); an async one's when librpmem's handler runs for
# an async replica (RPMEM_FENCE_REPLICATION), so that it never ranks an
# async copy as high as a sync one
rpmem_score_replica() {
	_prim=$(rpmem_primitive_of "$1")
	[ -n "$_prim" ] || { echo "no primitive in $1" >&2; return 1; }
	crm_attribute -N "$2" -l reboot --promotion="$_prim" -G -q \
		>/dev/null 2>&1 && return 0
	_s=$RPMEM_SCORE_REPLICA
	[ "${RPMEM_FENCE_REPLICATION:-sync}" = async ] && _s=$RPMEM_SCORE_ASYNC
	crm_attribute -N "$2" -l reboot --promotion="$_prim" \
		-v "$_s" -q >/dev/null 2>&1 ||
		{ echo "cannot give $2 its promotion score" >&2; return 1; }
}

# rpmem_unfence_self CLONE GEN HISTORY -- on the node a resync went into,
# once its copy holds GEN (HISTORY its past currents, comma-separated)
# and no bitmap (rpmemd's after-resync handler): a fence on this node
# that the copy has outlived is removed (rpmem_fence_outlived), and the
# node then gets its promotion score; 0 done or nothing to do, 1 the
# fence stays (what it is on stderr)
rpmem_unfence_self() {
	_me=$(rpmem_node)
	[ -n "$_me" ] || { echo "cannot learn this node's name (crm_node -n)" >&2; return 1; }
	rpmem_fence_read "$1" ||
		{ echo "cannot read the CIB's constraints" >&2; return 1; }
	case $RPMEM_FENCE_HOLDER in
	""|"$_me") ;;
	*)	rpmem_fence_outlived "$1" "$2" "$3" || {
			echo "$RPMEM_FENCE_PREFIX$1 (generation ${RPMEM_FENCE_GEN:-none}) stays: this copy has not outlived it" >&2
			return 1
		} ;;
	esac
	rpmem_score_replica "$1" "$_me"
}

# rpmem_fence_outlived CLONE GEN HISTORY -- remove the fence of CLONE that
# keeps another node promotable when this node's copy has outlived it:
# the fence carries a generation, HISTORY (comma-separated, the copy's
# past currents) has it, and GEN (the copy's current) is another (see
# the top).  Only while the fence still carries the claim read with it.
# 0 removed; 1 not (no such fence, none outlived, or the CIB refused)
rpmem_fence_outlived() {
	rpmem_fence_read "$1" || return 1
	_me=$(rpmem_node)
	[ -n "$RPMEM_FENCE_HOLDER" ] && [ "$RPMEM_FENCE_HOLDER" != "$_me" ] &&
		[ -n "$RPMEM_FENCE_GEN" ] && [ -n "$RPMEM_FENCE_CLAIM" ] &&
		[ "$2" != "$RPMEM_FENCE_GEN" ] || return 1
	case ",$3," in
	*",$RPMEM_FENCE_GEN,"*) ;;
	*) return 1 ;;
	esac
	rpmem_fence_remove "$1" "$RPMEM_FENCE_HOLDER" "$RPMEM_FENCE_CLAIM"
}
