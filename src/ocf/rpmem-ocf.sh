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
#     </rule>
#   </rsc_location>
#
# It is placed when a master goes on without its replica (the handler)
# or is promoted (the agent), and removed by the master's monitor once
# the other copy is in sync again.  It lives in the CIB, so it outlives
# a whole-cluster restart, as the staleness it stands for does.

RPMEM_FENCE_PREFIX=rpmem-fence-

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

# rpmem_pool_clones -- the ids of every clone of an ocf:rpmem:pool
rpmem_pool_clones() {
	cibadmin -Q -o resources 2>/dev/null | rpmem_xpath \
		"//clone[primitive[@class='ocf' and @provider='rpmem' and @type='pool']]/@id" |
		sed -n 's/^ *id="\(.*\)"$/\1/p'
}

# rpmem_fence_holder CLONE -- the node the fence leaves promotable (empty
# without a fence); non-zero when the CIB cannot be read
rpmem_fence_holder() {
	_x=$(cibadmin -Q -o constraints 2>/dev/null) || return 1
	printf '%s\n' "$_x" | rpmem_xpath "string(//rsc_location[@id='$RPMEM_FENCE_PREFIX$1']//expression/@value)"
}

# rpmem_fence_place CLONE NODE -- forbid the Promoted role of CLONE on
# every node but NODE; 0 when placed, 1 when it could not be
rpmem_fence_place() {
	_id=$RPMEM_FENCE_PREFIX$1
	cibadmin -C -o constraints -X "<rsc_location id=\"$_id\" rsc=\"$1\"><rule id=\"$_id-rule\" role=\"Promoted\" score=\"-INFINITY\"><expression id=\"$_id-expr\" attribute=\"#uname\" operation=\"ne\" value=\"$2\"/></rule></rsc_location>" \
		>/dev/null 2>&1
}

# rpmem_fence_remove CLONE NODE -- remove the fence of CLONE while it
# still names NODE (one that names another node stays)
rpmem_fence_remove() {
	cibadmin -D --xpath "//rsc_location[@id='$RPMEM_FENCE_PREFIX$1'][.//expression/@value='$2']" \
		>/dev/null 2>&1
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

# rpmem_fence CLONE [settle] -- fence every node but this one: already so
# (placed by a quorate partition earlier), or placed now.  With `settle`
# (the handler: a replica lost may be the first sign of this node's own
# isolation), membership is first given the time corosync takes to see a
# member gone, and the fence is placed only if quorum is still there: a
# node being cut off must write nothing to the CIB, whose copy could win
# over the majority's when the partitions merge again.  A promote comes
# from a settled transition and places at once.  0 fenced; 1 refused (no
# quorum, another node holds the fence, the CIB cannot be written), the
# reason on stderr
rpmem_fence() {
	_me=$(rpmem_node)
	if [ -z "$_me" ]; then
		echo "cannot learn this node's name (crm_node -n)" >&2
		return 1
	fi
	for _pass in 1 2; do
		if ! rpmem_quorate; then
			echo "$_me has no quorum: it may be the node cut off" >&2
			return 1
		fi
		if ! _h=$(rpmem_fence_holder "$1"); then
			echo "cannot read the CIB's constraints" >&2
			return 1
		fi
		if [ "$_h" = "$_me" ]; then
			return 0
		elif [ -n "$_h" ]; then
			echo "$RPMEM_FENCE_PREFIX$1 keeps $_h promotable, not $_me: the copy here is the stale one" >&2
			return 1
		fi
		if [ "${2:-}" != settle ] || [ $_pass = 2 ]; then
			break
		fi
		_ms=$(rpmem_settle_ms)
		sleep "$((_ms / 1000)).$(printf '%03d' $((_ms % 1000)))"
	done
	if ! rpmem_fence_place "$1" "$_me" &&
			[ "$(rpmem_fence_holder "$1")" != "$_me" ]; then
		echo "cannot place $RPMEM_FENCE_PREFIX$1 for $_me" >&2
		return 1
	fi
	return 0
}
