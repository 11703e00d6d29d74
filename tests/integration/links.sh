#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# links.sh -- a REPLICA that cannot be reached says which host and why
#
# One table, one row per way the link to a target can be missing: the
# host name does not resolve, nothing listens for ssh, ssh refuses the
# login, rpmemd is not on the PATH of a non-interactive session (or not
# at the path RPMEM_CMD names), no pool set of that name is beneath
# poolset-dir.  Each row runs twice:
#
#   rpmem create SET           stderr carries rpmem_errormsg(), which must
#                              name the host and the cause;
#   pmempool create obj SET    Debian's libpmemobj says only "creating
#                              remote replica #1 failed"; the librpmem log
#                              (RPMEM_LOG_FILE, README "Troubleshooting")
#                              must hold the same words.
#
# Run by `make check` (top_builddir, top_srcdir exported) or by hand after
# a build.  ssh goes to a private sshd on 127.0.0.1 (harness.sh).  The
# unresolvable name is looked up with a private nsswitch.conf ("hosts:
# files") in a mount namespace of its own, so no query leaves the
# machine; without the privilege to make one, that row is skipped.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=../common/harness.sh
. "$(dirname "${BASH_SOURCE[0]}")/../common/harness.sh"

rpmem=$top_builddir/rpmem
pmempool=$(command -v pmempool) || {
	echo "links.sh: pmempool not found (install pmdk-tools)" >&2
	exit 1
}
[[ -x $rpmem && -e $top_builddir/.libs/librpmem.so.1 ]] || {
	echo "links.sh: build first (rpmem, librpmem.so.1)" >&2
	exit 1
}
# libpmemobj dlopen()s librpmem.so.1: this build's
export LD_LIBRARY_PATH=$top_builddir/.libs
unset RPMEM_LOG_LEVEL RPMEM_LOG_FILE

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rpmem-links.XXXXXX")
# cleanup -- stop sshd, remove the temp dir
cleanup() {
	local rc=$?
	trap - EXIT
	harness_stop_sshd "$tmp" || rc=1
	rm -rf -- "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

harness_start_sshd "$tmp" || exit 1
psd=$tmp/poolsets
mkdir -p "$psd" "$tmp/local"
printf 'PMEMPOOLSET\n16M %s/remote.part\n' "$tmp" >"$psd/remote.set"
rpmemd_cmd=$(harness_rpmemd_cmd "$psd" "$tmp/rpmemd.log")
closed_port=$(harness_pick_port)
absent_cmd=rpmemd-absent-$$
nouser=rpmem-nouser-$$
host=${HARNESS_TARGET%:*}

# private_hosts -- run "$@" where host names come from /etc/hosts only
private_hosts() {
	printf 'hosts: files\n' >"$tmp/nsswitch.conf"
	unshare -m --propagation private -- sh -c \
		'mount --bind "$0" /etc/nsswitch.conf && exec "$@"' \
		"$tmp/nsswitch.conf" "$@"
}

# The table: name | target | descriptor | RPMEM_CMD | wrapper | ERE that
# the message must match (it names the host and the cause)
cases=(
	"unresolved|no-such-host-$$.invalid|remote.set|$rpmemd_cmd|private_hosts|host no-such-host-$$\\.invalid does not resolve: "
	"ssh-refused|$host:$closed_port|remote.set|$rpmemd_cmd||ssh to $host failed: .*port $closed_port: Connection refused"
	"login-refused|$nouser@$HARNESS_TARGET|remote.set|$rpmemd_cmd||ssh to $nouser@$host failed: .*Permission denied"
	"no-rpmemd|$HARNESS_TARGET|remote.set|$absent_cmd||'$absent_cmd' is not on the PATH of a non-interactive ssh session on $host.*command not found"
	"no-rpmemd-path|$HARNESS_TARGET|remote.set|$tmp/absent/rpmemd||'$tmp/absent/rpmemd' not found on $host: .*No such file"
	"no-poolset|$HARNESS_TARGET|absent.set|$rpmemd_cmd||create of 'absent\\.set' on $host failed: .*pool set 'absent\\.set' in poolset-dir $psd: No such file or directory"
)

# fail -- report a failed check of case $name with the output $1 (tu_fail)
fail() {
	tu_fail "$name: $1"
	[[ -z ${2:-} || ! -s $2 ]] || sed 's/^/    /' "$2"
}

# refused WHAT OUT OK [ERE FILE MSG]... -- WHAT (its status in $rc, its
# output in OUT) failed and each FILE has a line matching its ERE, else
# fail with MSG; say OK when all holds
refused() {
	local what=$1 out=$2 okmsg=$3
	shift 3
	if ((rc == 0)); then
		fail "$what succeeded" "$out"
		return
	fi
	while (($# >= 3)); do
		grep -Eq -- "$1" "$2" || { fail "$3" "$2"; return; }
		shift 3
	done
	echo "ok $name: $okmsg"
}

# run_case -- the two runs of one table row
run_case() {
	local target=$1 desc=$2 cmd=$3 wrap=$4 want=$5 set out rc
	set=$tmp/local/$name.set
	printf 'PMEMPOOLSET\n16M %s/local/%s.part\nREPLICA %s %s\n' \
		"$tmp" "$name" "$target" "$desc" >"$set"
	out=$tmp/$name

	rc=0
	RPMEM_CMD=$cmd $wrap "$rpmem" create "$set" >"$out.rpmem" 2>&1 ||
		rc=$?
	refused "rpmem create" "$out.rpmem" \
		"rpmem_errormsg() names the host and the cause" \
		"$want" "$out.rpmem" "rpmem_errormsg() does not match '$want'"
	rm -f -- "$tmp/local/$name.part"

	rc=0
	RPMEM_CMD=$cmd RPMEM_LOG_FILE=$out.log $wrap "$pmempool" create obj \
		--layout=links "$set" >"$out.pmempool" 2>&1 || rc=$?
	refused "pmempool create" "$out.pmempool" \
		"the librpmem log names the host and the cause" \
		'creating remote replica #1 failed' "$out.pmempool" \
		"libpmemobj's own words changed" \
		"^${TU_STAMP}librpmem: .*$want" "$out.log" \
		"the librpmem log does not match '$want'"
	rm -f -- "$tmp/local/$name.part"
}

skipped=0
for row in "${cases[@]}"; do
	IFS='|' read -r name target desc cmd wrap want <<<"$row"
	if [[ $wrap == private_hosts ]] && ! private_hosts true 2>/dev/null
	then
		echo "SKIP $name: no mount namespace for a private" \
			"nsswitch.conf (needs root)"
		skipped=$((skipped + 1))
		continue
	fi
	run_case "$target" "$desc" "$cmd" "$wrap" "$want"
done

if ((TU_FAILED)); then
	echo "links.sh: $TU_FAILED check(s) failed"
	exit 1
fi
((skipped < ${#cases[@]})) || exit 77
echo "links.sh: every unreachable link named its host and cause"
