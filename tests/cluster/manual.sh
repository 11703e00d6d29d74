#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# manual.sh -- the cluster that ocf_rpmem_pool(7) and the README set up,
# checked as written (issue 32; scenarios F1-F4 rest on it)
#
# The blocks between "manual.sh: NAME" and "manual.sh: end" comments of
# man/ocf_rpmem_pool.7 are what a reader types or writes: corosync.conf,
# the ssh client's config, the crm(8) file and command, the pcs(8)
# commands, and the deletion of the first master's preference in both.
# The README must hold the same blocks.  Every command runs as written,
# with crm and pcs working on a CIB file (CIB_file) that starts empty but
# for corosync.conf's nodes, in a mount and network namespace of its own
# where the agent is visible below /usr/lib/ocf (an overlay) and no live
# cluster can be reached; both shells must load without an error or a
# warning.  Then:
#   - the CIB holds what the manual explains: the options, the clone of
#     ocf:rpmem:pool with the agent's own timeouts, the location that
#     keeps it off the node that only votes, the application's colocation
#     and order, and its librpmem environment, each value explained in
#     both documents; crm and pcs give the same configuration;
#   - crm_verify finds it valid, and crm_simulate (Pacemaker's scheduler)
#     with the three nodes online promotes n1, runs the application
#     there, and neither starts nor probes the pool on the node that only
#     votes (without the location it would, which this check shows too);
#   - the first master: with the preference n1 is promoted over a higher
#     score on n2, after its deletion the scores alone decide, and left in
#     place it would promote a copy the agent gives no score;
#   - corosync.conf's token and the ssh keep-alives are the values the
#     timings are given for.
# Writes only below a mktemp -d directory, which it removes.  Needs root
# (crmsh gives its log file to the haclient group, which a user namespace
# cannot map) and a mount namespace; exit 77 without them.
set -uo pipefail
me=manual.sh
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${top_srcdir:=$(cd "$here/../.." && pwd)}"
man=$top_srcdir/man/ocf_rpmem_pool.7
readme=$top_srcdir/README.md

# ------------------------------------------------ outside the namespace
if [[ ${1:-} != --inside ]]; then
	if (($(id -u) != 0)); then
		echo "$me: skipped (needs root)"
		exit 77
	fi
	for p in crm:crmsh pcs:pcs cibadmin:pacemaker-cli-utils \
			crm_verify:pacemaker-cli-utils crm_simulate:pacemaker-cli-utils \
			crm_mon:pacemaker-cli-utils crm_resource:pacemaker-cli-utils \
			xmllint:libxml2-utils xsltproc:xsltproc ssh:openssh-client \
			unshare:util-linux; do
		command -v "${p%%:*}" >/dev/null && continue
		echo "$me: ${p%%:*} is missing: install ${p#*:} (scripts/setup.sh does)" >&2
		exit 1
	done
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/rpmem-manual.XXXXXX") || exit 1
	trap 'rm -rf "$tmp"' EXIT
	# the agent and its helpers as installed (pool_lib.sh's overlay)
	CLUSTER_LIB_DIR=$here
	# shellcheck source-path=SCRIPTDIR source=pool_lib.sh
	. "$here/pool_lib.sh"
	pool_overlay || { echo "$me: the agent cannot be copied" >&2; exit 1; }
	if ! unshare --mount --net --propagation private true 2>/dev/null; then
		echo "$me: skipped (no mount and network namespace here)"
		exit 77
	fi
	unshare --mount --net --propagation private \
		bash "${BASH_SOURCE[0]}" --inside "$tmp"
	exit $?
fi

# ------------------------------------------------- inside the namespace
tmp=$2
# shellcheck source-path=SCRIPTDIR source=../common/tu.sh
. "$here/../common/tu.sh"
TU_OUT=$tmp/tu.out
if ! mount -t overlay overlay -o "lowerdir=$tmp/ocf:/usr/lib/ocf" \
		/usr/lib/ocf 2>"$tmp/mount.err"; then
	echo "$me: skipped (no overlay on /usr/lib/ocf: $(<"$tmp/mount.err"))"
	exit 77
fi
# crmsh logs every command to /var/log/crmsh: here into $tmp
mkdir -p "$tmp/crmsh" "$tmp/home" "$tmp/t"
[[ -d /var/log/crmsh ]] && mount --bind "$tmp/crmsh" /var/log/crmsh
# no colours in what crm prints
export HOME=$tmp/home TMPDIR=$tmp/t TERM=dumb
unset CIB_file CIB_shadow XDG_CONFIG_HOME XDG_CACHE_HOME


# ------------------------------------------------------ the blocks
# block FILE NAME -- the block NAME of FILE as the reader sees it, each
# line as "LINE<tab>TEXT" (LINE in FILE); blank lines left out.  In the
# man page, roff's escapes are undone and a character that roff would
# print otherwise than typed (-, ' and ` bare) is an error; in the
# README the block is an indented code block.
block() {
	awk -v name="$2" -v md="$([[ $1 == *.md ]] && echo 1)" '
	function fail(why) {
		printf "%s:%d: %s\n", FILENAME, FNR, why > "/dev/stderr"
		bad = 1
	}
	# unroff -- a line of roff text as printed
	function unroff(s,    out, c, e) {
		out = ""
		while (s != "") {
			c = substr(s, 1, 1)
			if (c == "-" || c == "\047" || c == "`") {
				fail("write " (c == "-" ? "\\-" : c == "`" ? \
				    "\\(ga" : "\\(aq") " for a bare " c \
				    " in a block a reader copies")
				return ""
			}
			if (c != "\\") {
				out = out c
				s = substr(s, 2)
				continue
			}
			e = substr(s, 2, 1)
			if (e == "e") { out = out "\\"; s = substr(s, 3) }
			else if (e == "-") { out = out "-"; s = substr(s, 3) }
			else if (e == "&") s = substr(s, 3)
			else if (e == "f") s = substr(s, 4)
			else if (substr(s, 2, 3) == "(aq") { out = out "\047"; s = substr(s, 5) }
			else if (substr(s, 2, 3) == "(ga") { out = out "`"; s = substr(s, 5) }
			else if (substr(s, 2, 3) == "(dq") { out = out "\""; s = substr(s, 5) }
			else { fail("roff escape \\" e " is not known here"); return "" }
		}
		return out
	}
	BEGIN {
		start = md ? "<!-- manual.sh: " name " -->" : ".\\\" manual.sh: " name
		stop = md ? "<!-- manual.sh: end -->" : ".\\\" manual.sh: end"
	}
	$0 == start { on = 1; found++; next }
	on && $0 == stop { on = 0; next }
	!on { next }
	/^[ \t]*$/ { next }
	md && /^    / { printf "%d\t%s\n", FNR, substr($0, 5); next }
	md { fail("not an indented code line: " $0); next }
	/^\.(EX|EE|PP)$/ { next }
	/^[.\047]/ { fail("a roff request inside the block: " $0); next }
	{ printf "%d\t%s\n", FNR, unroff($0) }
	END {
		if (found != 1)
			printf "%s: block \"%s\" found %d times, not once\n",
			    FILENAME, name, found > "/dev/stderr"
		else if (on)
			printf "%s: block \"%s\" has no end\n", FILENAME,
			    name > "/dev/stderr"
		exit bad || found != 1 || on
	}' "$1"
}

# text -- a block's text without its line numbers
text() {
	cut -f 2-
}

# blocks_agree NAME -- the README's block NAME is the man page's
blocks_agree() {
	local m r
	if ! m=$(block "$man" "$1" 2>"$tmp/agree.err" | text) ||
			! r=$(block "$readme" "$1" 2>>"$tmp/agree.err" | text); then
		sed 's/^/    # /' "$tmp/agree.err"
		return 1
	fi
	[[ $m == "$r" ]] && return 0
	tu_why "README.md's block $1 differs from the man page's:"
	diff <(echo "$m") <(echo "$r") | sed 's/^/    # /'
	return 1
}

# each block as $tmp/blocks/NAME (text) and NAME.lines (numbered)
mkdir -p "$tmp/blocks"
for n in corosync.conf ssh_config rpmem.crm crm pcs crm-first pcs-first; do
	tu_check "block $n is in both documents, the same" blocks_agree "$n"
	if ! block "$man" "$n" >"$tmp/blocks/$n.lines" 2>/dev/null; then
		echo "$me: every block of the man page is needed; stopping"
		tu_summary
		exit 1
	fi
	text <"$tmp/blocks/$n.lines" >"$tmp/blocks/$n"
done

# ---------------------------------------------------- corosync, ssh
# conf KEY -- a value of corosync.conf, KEY as section.key (the first)
conf() {
	awk -v want="$1" '
	/[{]/ { split($0, w, /[ \t{]+/); sec = sec (sec ? "." : "") \
		(w[1] != "" ? w[1] : w[2]); next }
	/[}]/ { sub(/\.?[^.]*$/, "", sec); next }
	{ k = $1; sub(/:$/, "", k); $1 = ""; sub(/^ /, "")
	  if (sec "." k == want) { print; exit } }' "$tmp/blocks/corosync.conf"
}

# conf_nodes -- "nodeid name" of each node of corosync.conf's nodelist
conf_nodes() {
	awk '/^ *node *[{]/ { id = ""; name = "" }
	/^ *nodeid:/ { id = $2 } /^ *name:/ { name = $2 }
	/^ *[}]/ && id != "" && name != "" { print id, name; id = "" }' \
		"$tmp/blocks/corosync.conf"
}

# corosync_as_timed -- token 1000 ms, coefficient 0, votequorum of three
corosync_as_timed() {
	local v
	for v in "totem.token 1000" "totem.token_coefficient 0" \
			"quorum.provider corosync_votequorum"; do
		[[ $(conf "${v% *}") == "${v#* }" ]] ||
			tu_why "corosync.conf: ${v% *} is '$(conf "${v% *}")', not ${v#* }" ||
			return 1
	done
	[[ -z $(conf quorum.two_node) ]] || tu_why "corosync.conf sets two_node" ||
		return 1
	(($(conf_nodes | wc -l) == 3)) ||
		tu_why "corosync.conf names $(conf_nodes | wc -l) nodes, not 3"
}
tu_check "corosync.conf: token 1000, token_coefficient 0, three votes" \
	corosync_as_timed

# data_nodes -- the nodes the ssh config's Host line names
data_nodes() {
	awk '$1 == "Host" { for (i = 2; i <= NF; i++) print $i }' \
		"$tmp/blocks/ssh_config"
}

# ssh_as_timed -- each data node: keep-alive 1 s twice, connect in 1 s
ssh_as_timed() {
	local node opt
	for node in $(data_nodes); do
		ssh -G -F "$tmp/blocks/ssh_config" "$node" >"$tmp/ssh.$node" 2>&1 ||
			tu_why "ssh -G: $(<"$tmp/ssh.$node")" || return 1
		for opt in "serveraliveinterval 1" "serveralivecountmax 2" \
				"connecttimeout 1"; do
			grep -qx "$opt" "$tmp/ssh.$node" ||
				tu_why "ssh to $node: not '$opt'" || return 1
		done
	done
	[[ $(data_nodes | sort | tr '\n' ' ') == "n1 n2 " ]] ||
		tu_why "the ssh config names $(data_nodes), not n1 n2"
}
tu_check "ssh config: keep-alive every 1 s, 2 missed, connect within 1 s" \
	ssh_as_timed

# ------------------------------------------------------ loading
# seed FILE -- an empty CIB with quorum and corosync.conf's nodes, as a
# cluster that has just formed has it
seed() {
	local id name
	cibadmin --empty | sed 's/<cib /<cib have-quorum="1" /' >"$1" ||
		return 1
	while read -r id name; do
		CIB_file=$1 cibadmin -C -o nodes \
			-X "<node id=\"$id\" uname=\"$name\"/>" || return 1
	done < <(conf_nodes)
}

# noise OUT -- the errors and warnings in OUT, colours taken out; crm's
# "Blind faith" is what stonith-enabled=false says, pcs's node
# validation what -f says
noise() {
	sed 's/\x1b\[[0-9;]*m//g' "$1" | grep -i -E 'error|warning' |
		grep -v -e 'Blind faith: not fencing unseen nodes' \
			-e '^Warning: Validation for node existence in the cluster will be skipped$'
}

# run_block NAME DIR -- each command of block NAME, in DIR, on the CIB
# DIR/live.xml; only crm configure and pcs on a CIB file may run
run_block() {
	local name=$1 dir=$2 line text todo="" first=0 rc
	while IFS=$'\t' read -r line text; do
		((first)) || first=$line
		todo+=$text$'\n'
		[[ $text == *\\ ]] && continue
		case $todo in
		"crm configure "* | "pcs -f rpmem.xml "* | "pcs constraint "* | \
		"pcs cluster cib rpmem.xml"$'\n' | \
		"pcs cluster cib-push rpmem.xml --config"$'\n') ;;
		*)	tu_why "$man:$first: manual.sh runs crm configure and pcs" \
				"on a CIB file only, not: ${todo%%$'\n'*}"
			return 1 ;;
		esac
		(cd "$dir" && CIB_file=$dir/live.xml timeout 120 bash -c "$todo") \
			>"$dir/out" 2>&1 </dev/null
		rc=$?
		if ((rc != 0)); then
			tu_why "$man:$first: exit $rc: ${todo%%$'\n'*}"
			sed 's/^/    # /' "$dir/out" | head -n 20
			return 1
		fi
		if [[ -n $(noise "$dir/out") ]]; then
			tu_why "$man:$first: ${todo%%$'\n'*}"
			noise "$dir/out" | sed 's/^/    # /'
			return 1
		fi
		todo=""
		first=0
	done <"$tmp/blocks/$name.lines"
	[[ -z $todo ]] || tu_why "block $name ends inside a command"
}

# load SHELL -- DIR $tmp/SHELL: the seed, then the block SHELL (crm also
# writes rpmem.crm first), as live.xml
load() {
	local dir=$tmp/$1
	mkdir -p "$dir" && seed "$dir/live.xml" || return 1
	[[ $1 != crm ]] || cp "$tmp/blocks/rpmem.crm" "$dir/rpmem.crm" ||
		return 1
	run_block "$1" "$dir"
}
failed_before=$TU_FAILED
tu_check "crm loads rpmem.crm as written, without an error or warning" \
	load crm
tu_check "pcs builds and pushes the CIB as written, without an error or warning" \
	load pcs
if ((TU_FAILED > failed_before)); then
	echo "$me: the rest reads the CIBs the blocks load; stopping"
	tu_summary
	exit 1
fi
crm=$tmp/crm/live.xml
pcs=$tmp/pcs/live.xml

# ---------------------------------------------------- what is in it
# flat.xsl: a CIB's configuration, one line an element: its path
# (resources and constraints by id), its attributes but other ids sorted,
# interval 0 as 0s
cat >"$tmp/flat.xsl" <<'XSL'
<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
<xsl:output method="text"/>
<xsl:template match="/">
  <xsl:for-each select="/cib/configuration//*">
    <xsl:for-each select="ancestor-or-self::*[ancestor::configuration]">
      <xsl:if test="position() > 1">/</xsl:if>
      <xsl:value-of select="name()"/>
      <xsl:if test="self::primitive or self::clone or self::rsc_location or self::rsc_colocation or self::rsc_order">
        <xsl:value-of select="concat('#', @id)"/>
      </xsl:if>
    </xsl:for-each>
    <xsl:for-each select="@*[name() != 'id']">
      <xsl:sort select="name()"/>
      <xsl:value-of select="concat(' ', name(), '=')"/>
      <xsl:choose>
        <xsl:when test="name() = 'interval' and . = '0'">0s</xsl:when>
        <xsl:otherwise><xsl:value-of select="."/></xsl:otherwise>
      </xsl:choose>
    </xsl:for-each>
    <xsl:text>&#10;</xsl:text>
  </xsl:for-each>
</xsl:template>
</xsl:stylesheet>
XSL

# flat FILE -- the configuration of CIB FILE through flat.xsl, sorted
flat() {
	xsltproc "$tmp/flat.xsl" "$1" | LC_ALL=C sort
}

# same_config A B -- CIBs A and B hold the same configuration
same_config() {
	local d
	flat "$1" >"$tmp/flat.a" && flat "$2" >"$tmp/flat.b" &&
		[[ -s $tmp/flat.a && -s $tmp/flat.b ]] ||
		tu_why "no configuration in ${1#"$tmp"/} or ${2#"$tmp"/}" || return 1
	d=$(diff "$tmp/flat.a" "$tmp/flat.b") && return 0
	tu_why "${1#"$tmp"/} and ${2#"$tmp"/} differ:"
	printf '%s\n' "$d" | head -n 30 | sed 's/^/    # /'
	return 1
}
tu_check "crm and pcs give the same configuration" same_config "$crm" "$pcs"

# count CIB XPATH -- how many nodes XPATH selects in CIB
count() {
	xmllint --xpath "count($2)" "$1" 2>/dev/null
}

# has CIB WHAT XPATH -- XPATH selects exactly one node in CIB
has() {
	local n
	n=$(count "$1" "$3")
	[[ $n == 1 ]] || tu_why "$2: $n in ${1#"$tmp"/}, not 1 ($3)"
}

# value CIB XPATH -- the string value of XPATH in CIB
value() {
	xmllint --xpath "string($2)" "$1" 2>/dev/null
}

pool="/cib/configuration/resources/clone[@id='pool-clone']"
nv="meta_attributes/nvpair"
# clone_as_explained -- a promotable clone of the agent, one master of two
clone_as_explained() {
	has "$crm" "the pool" \
		"$pool/primitive[@id='pool' and @class='ocf' and @provider='rpmem' and @type='pool']" &&
	has "$crm" "promotable" "$pool/${nv}[@name='promotable' and @value='true']" &&
	has "$crm" "promoted-max=1" "$pool/${nv}[@name='promoted-max' and @value='1']" &&
	has "$crm" "clone-max=2" "$pool/${nv}[@name='clone-max' and @value='2']" &&
	has "$crm" "notify" "$pool/${nv}[@name='notify' and @value='true']"
}
tu_check "a promotable clone of ocf:rpmem:pool: promoted-max=1, clone-max=2, notify" \
	clone_as_explained

# agent_timeouts -- each action of the agent's meta-data with its timeout
# (and interval, role) among the pool's operations
agent_timeouts() {
	local md=$tmp/pool.md ops="$pool/primitive/operations/op" i n a sel v
	crm_resource --show-metadata ocf:rpmem:pool >"$md" 2>&1 ||
		tu_why "no meta-data: $(<"$md")" || return 1
	n=$(count "$md" "//actions/action")
	((n > 0)) || tu_why "no action in the meta-data" || return 1
	for ((i = 1; i <= n; i++)); do
		a="//actions/action[$i]"
		case $(value "$md" "$a/@name") in
		meta-data|validate-all) continue ;;
		esac
		sel="@name='$(value "$md" "$a/@name")'"
		for v in timeout interval role; do
			[[ -z $(value "$md" "$a/@$v") ]] ||
				sel+=" and @$v='$(value "$md" "$a/@$v")'"
		done
		has "$crm" "the agent's $(value "$md" "$a/@name")" "${ops}[$sel]" ||
			return 1
	done
}
tu_check "the pool's operations carry the agent's own timeouts" agent_timeouts

# vote_only -- corosync.conf's node that the ssh config does not name
vote_only() {
	conf_nodes | awk '{ print $2 }' | grep -vxF -f <(data_nodes)
}

# off_vote_only -- the clone is kept off the vote-only node, unprobed
off_vote_only() {
	local n3
	n3=$(vote_only)
	[[ $n3 == n3 ]] || tu_why "the node that only votes is '$n3', not n3" ||
		return 1
	has "$crm" "the location off $n3" \
		"//rsc_location[@rsc='pool-clone' and @node='$n3' and @score='-INFINITY' and @resource-discovery='never']"
}
tu_check "a location keeps the clone off n3 (resource-discovery=never)" \
	off_vote_only

# app_as_explained -- the application where the pool is Promoted, after it
app_as_explained() {
	has "$crm" "the application" \
		"//primitive[@id='app' and @class='ocf' and @provider='heartbeat' and @type='anything']" &&
	has "$crm" "env(1) as its program" \
		"//primitive[@id='app']//nvpair[@name='binfile' and @value='/usr/bin/env']" &&
	has "$crm" "the colocation" \
		"//rsc_colocation[@rsc='app' and @with-rsc='pool-clone' and @with-rsc-role='Promoted' and @score='INFINITY']" &&
	has "$crm" "the order" \
		"//rsc_order[@first='pool-clone' and @first-action='promote' and @then='app' and @then-action='start' and (@kind='Mandatory' or not(@kind))]"
}
tu_check "the application: colocated with Promoted, ordered after promote" \
	app_as_explained

# options_as_explained -- no-quorum-policy=stop, no STONITH device
options_as_explained() {
	has "$crm" "no-quorum-policy=stop" \
		"//crm_config//nvpair[@name='no-quorum-policy' and @value='stop']" &&
	has "$crm" "stonith-enabled=false" \
		"//crm_config//nvpair[@name='stonith-enabled' and @value='false']"
}
tu_check "cluster options: no-quorum-policy=stop, stonith-enabled=false" \
	options_as_explained

# env_words -- the words of the application's cmdline_options, as a
# shell splits them
env_words() {
	value "$crm" "//primitive[@id='app']//nvpair[@name='cmdline_options']/@value" |
		xargs printf '%s\n'
}

# explained WORD -- both documents explain VAR=VALUE: the man page as
# the tag of a list item, the README as code in a list item
explained() {
	grep -qxF ".B ${1//-/\\-}" "$man" ||
		tu_why "ocf_rpmem_pool(7) has no item '.B ${1//-/\\-}'" || return 1
	grep -qF -- "- \`$1\`" "$readme" ||
		tu_why "README.md has no item '- \`$1\`'"
}

# env_as_explained -- the settings librpmem needs, each explained, then
# the program with the pool's master set; the peer timeout within twice
# the token
env_as_explained() {
	local -a words
	local w want master rc=0
	mapfile -t words < <(env_words)
	for want in RPMEM_ON_REPLICA_LOSS=fence \
			RPMEM_FENCE_PEER_CMD=/usr/lib/ocf/lib/rpmem/crm-fence-peer \
			RPMEM_UNFENCE_PEER_CMD=/usr/lib/ocf/lib/rpmem/crm-unfence-peer \
			RPMEM_PEER_TIMEOUT_MS= RPMEM_RECONNECT_MAX_MS=2000 \
			RPMEM_TIMEOUT= RPMEM_FREEZE_TIMEOUT=; do
		printf '%s\n' "${words[@]}" | grep -q "^$want" ||
			tu_why "the application's environment lacks $want" || rc=1
	done
	for w in "${words[@]}"; do
		[[ $w == *=* ]] || break
		[[ $w == RPMEM_LOG_LEVEL=* || $w == RPMEM_LOG_FILE=* ]] ||
			explained "$w" || rc=1
	done
	explained "$(printf '%s\n' "${words[@]}" | grep '^RPMEM_LOG_LEVEL=') $(
		printf '%s\n' "${words[@]}" | grep '^RPMEM_LOG_FILE=')" || rc=1
	w=$(printf '%s\n' "${words[@]}" | sed -n 's/^RPMEM_PEER_TIMEOUT_MS=//p')
	((w > 0 && w <= 2 * $(conf totem.token))) ||
		tu_why "RPMEM_PEER_TIMEOUT_MS=$w is not within twice the token" || rc=1
	master=$(value "$crm" "$pool/primitive//nvpair[@name='master_set']/@value")
	[[ ${words[-1]} == "$master" && -n $master ]] ||
		tu_why "the application opens '${words[-1]}', the pool's master_set is '$master'" ||
		rc=1
	return $rc
}
tu_check "the application's librpmem environment, each value explained" \
	env_as_explained

# --------------------------------------------------- the scheduler
tu_check "crm_verify finds the configuration valid" \
	tu_says 0 crm_verify -V -x "$crm" --

# state IN OUT NODE:SCORE... -- OUT: IN with NODE online and, when SCORE
# is not -, the promotion score the agent would have set there
state() {
	local in=$1 out=$2 arg node score id
	cp "$in" "$out" || return 1
	shift 2
	for arg in "$@"; do
		node=${arg%%:*} score=${arg#*:}
		id=$(conf_nodes | awk -v n="$node" '$2 == n { print $1 }')
		local attrs=""
		[[ $score == - ]] || attrs="<transient_attributes id=\"$id\"><instance_attributes id=\"status-$id\"><nvpair id=\"status-$id-master-pool\" name=\"master-pool\" value=\"$score\"/></instance_attributes></transient_attributes>"
		CIB_file=$out cibadmin -C -o status -X "<node_state id=\"$id\" uname=\"$node\" in_ccm=\"true\" crmd=\"online\" join=\"member\" expected=\"member\">$attrs</node_state>" ||
			return 1
	done
}

# simulate IN NODE:SCORE... -- $tmp/sim.xml: what Pacemaker does from IN
# with those nodes online and scores set, and $tmp/mon.xml its status
simulate() {
	local in=$1
	shift
	state "$in" "$tmp/up.xml" "$@" || tu_why "the simulated nodes" || return 1
	if ! crm_simulate -S -x "$tmp/up.xml" -O "$tmp/sim.xml" \
			>"$tmp/sim.out" 2>&1; then
		tu_why "crm_simulate: $(tail -n 5 "$tmp/sim.out")"
		return 1
	fi
	CIB_file=$tmp/sim.xml crm_mon -1 --output-as=xml >"$tmp/mon.xml" \
		2>&1 || tu_why "crm_mon: $(tail -n 5 "$tmp/mon.xml")"
}

# on ROLE RSC -- the nodes where RSC runs in ROLE after the simulation
on() {
	xmllint --xpath "//resource[@id='$2' and @role='$1']/node/@name" \
		"$tmp/mon.xml" 2>/dev/null | sed 's/ *name="\([^"]*\)"/\1\n/g' |
		grep -v '^$' | sort | tr '\n' ' ' | sed 's/ $//'
}

# touched RSC NODE -- the simulation ran an operation of RSC (a probe
# too) on NODE
touched() {
	[[ $(count "$tmp/sim.xml" "//node_state[@uname='$2']//lrm_resource[@id='$1' or starts-with(@id, '$1:')]") != 0 ]]
}

# placed CIB -- the three nodes online, both copies scored as replicas:
# n1 promoted, n2 unpromoted, the application on n1, nothing on n3; n2
# down, the second instance does not go to n3
placed() {
	simulate "$1" n1:100 n2:100 n3:- || return 1
	[[ $(on Promoted pool) == n1 ]] ||
		tu_why "the pool is Promoted on '$(on Promoted pool)', not n1" || return 1
	[[ $(on Unpromoted pool) == n2 ]] ||
		tu_why "the pool is Unpromoted on '$(on Unpromoted pool)', not n2" || return 1
	[[ $(on Started app) == n1 ]] ||
		tu_why "the application runs on '$(on Started app)', not n1" || return 1
	! touched pool n3 || tu_why "the pool was started or probed on n3" ||
		return 1
	simulate "$1" n1:100 n3:- || return 1
	[[ $(on Promoted pool) == n1 && -z $(on Unpromoted pool) ]] ||
		tu_why "n2 down: Promoted on '$(on Promoted pool)'," \
			"Unpromoted on '$(on Unpromoted pool)'" || return 1
	! touched pool n3 || tu_why "n2 down, the pool was started or probed on n3"
}
tu_check "three nodes online (crm): n1 Promoted, n2 Unpromoted, app on n1, no pool on n3; n2 down, still none on n3" \
	placed "$crm"
tu_check "three nodes online (pcs): the same" placed "$pcs"

# unconstrained -- without pool-not-n3, the simulations touch n3: a probe
# with all three online, the second instance with n2 down (so that the
# checks above can fail)
unconstrained() {
	cp "$crm" "$tmp/free.xml" &&
		CIB_file=$tmp/free.xml cibadmin -D -o constraints \
			-X '<rsc_location id="pool-not-n3"/>' &&
		simulate "$tmp/free.xml" n1:100 n2:100 n3:- || return 1
	touched pool n3 || tu_why "without the location, n3 is not probed" ||
		return 1
	simulate "$tmp/free.xml" n1:100 n3:- || return 1
	[[ $(on Unpromoted pool) == n3 ]] ||
		tu_why "without the location and n2 down, the second instance is on '$(on Unpromoted pool)', not n3"
}
tu_check "without the location the pool is probed on n3, and started there with n2 down" \
	unconstrained

# first_master SHELL -- the preference makes n1 the first master over a
# higher score on n2; after the block SHELL-first the scores decide;
# kept, it would promote a copy the agent does not score
first_master() {
	local dir=$tmp/$1
	simulate "$dir/live.xml" n1:100 n2:101 n3:- || return 1
	[[ $(on Promoted pool) == n1 ]] ||
		tu_why "with the preference, '$(on Promoted pool)' is promoted, not n1" ||
		return 1
	simulate "$dir/live.xml" n1:- n3:- || return 1
	[[ $(on Promoted pool) == n1 ]] ||
		tu_why "kept, the preference does not promote an unscored n1: '$(on Promoted pool)'" ||
		return 1
	cp "$dir/live.xml" "$dir/first.xml" &&
		run_block "$1-first" "$dir" || return 1
	[[ $(count "$dir/live.xml" "//rsc_location[@id='pool-first-n1']") == 0 ]] ||
		tu_why "the preference is still there" || return 1
	diff <(flat "$dir/first.xml" | grep -v '#pool-first-n1') \
		<(flat "$dir/live.xml") >/dev/null ||
		tu_why "deleting the preference changed more than it" || return 1
	simulate "$dir/live.xml" n1:100 n2:101 n3:- || return 1
	[[ $(on Promoted pool) == n2 ]] ||
		tu_why "without the preference, '$(on Promoted pool)' is promoted, not n2 (101)" ||
		return 1
	simulate "$dir/live.xml" n1:- n3:- || return 1
	[[ -z $(on Promoted pool) ]] ||
		tu_why "without the preference, an unscored n1 is promoted"
}
tu_check "the first master (crm): n1 by the preference, then the scores" \
	first_master crm
tu_check "the first master (pcs): the same" first_master pcs

tu_summary
