#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# installed.sh -- the installed packages between two hosts, as a user
# would run them
#
# The packages built from this tree (tests/installed/debs.sh) are
# installed with dpkg, then used with nothing set by hand but ssh keys:
# no LD_LIBRARY_PATH, RPMEM_CMD, RPMEM_SSH or ldconfig.
#
#   target       a network namespace of its own, joined to ours by a veth
#                pair (harness.sh), with the system's /usr/sbin/sshd on
#                port 22 configured like a server's: public keys only,
#                StrictModes on, no environment accepted; its root's home
#                is a directory of this test mounted over /root in the
#                target's mount namespace, holding only
#                .ssh/authorized_keys.  rpmemd is the one on the PATH of a
#                non-interactive ssh session, its config the packaged
#                /etc/rpmemd/rpmemd.conf plus the poolset-dir this test
#                appends to it.
#   application  this namespace; each command runs with a directory of
#                this test mounted over /root in a mount namespace of its
#                own, so the system's ssh client finds the key it made
#                and a known_hosts entry for the target's host key there
#                (no StrictHostKeyChecking=no), and root's real ~/.ssh is
#                never read or written.
#
# Through them: pmempool create of a replicated libpmemobj pool,
# transactions by counter.c (built here against Debian's libpmemobj only),
# the master deleted and rebuilt with pmempool sync, the replica deleted
# and rebuilt, rpmem info, verify, sync, create and rm, pmempool rm.
# rpmem-ocf's agent and handler run as Pacemaker and librpmem start them:
# the agent finds ocf-shellfuncs and rpmem-ocf.sh below OCF_ROOT alone,
# its meta-data is valid against resource-agents' ra-api-1.dtd.
#
# It installs and purges librpmem1, rpmemd, rpmem-tools and rpmem-ocf
# (whose dependencies must be installed: scripts/setup.sh), so it runs
# only when RPMEM_TEST_PACKAGES=1 (scripts/test.sh sets it; exit 77
# otherwise), as root, and refuses (exit 1) where it would touch what it
# did not install: any of those packages already installed, a
# librpmem.so.1 in the linker's cache, rpmemd or rpmem in /usr/local, an
# /etc/rpmemd, an rpmem directory below /usr/lib/ocf.  RPMEM_DEBS names
# the directory of the .deb files (default: build/deb of the build tree).
# The purge is checked too: no file of the packages may be left.
set -euo pipefail

self=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$self/../.." && pwd)}
top_builddir=$(cd "${top_builddir:-$top_srcdir}" && pwd)
debs=${RPMEM_DEBS:-$top_builddir/build/deb}
pkgs=(librpmem1 rpmemd rpmem-tools rpmem-ocf)
# rpmem-ocf's Depends besides rpmem-tools (dpkg -i installs none of them)
ocf_deps=(jq libxml2-utils resource-agents pacemaker-cli-utils corosync)
ocf_root=/usr/lib/ocf
# shellcheck source-path=SCRIPTDIR source=pkg.sh
. "$self/pkg.sh"

# say -- a progress line
say() {
	printf -- '--- %3d s %s\n' "$SECONDS" "$*"
}

pkg_gate installed.sh "it installs and purges packages: set" \
	"RPMEM_TEST_PACKAGES=1 (scripts/test.sh does)"
[[ $(id -u) == 0 ]] || refuse "dpkg, namespaces and sshd on port 22 need root"
for prog in dpkg ip unshare mount ssh ssh-keygen pmempool cc; do
	command -v "$prog" >/dev/null ||
		refuse "$prog is missing (scripts/setup.sh installs it)"
done
[[ -x /usr/sbin/sshd ]] || refuse "/usr/sbin/sshd is missing (openssh-server)"
pkg_arch
pkg_debs "$debs" "${pkgs[@]}"
files=("${pkg_files[@]}")
pkg_absent "${pkgs[@]}"
for p in "${ocf_deps[@]}"; do
	dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^ii' ||
		refuse "$p is not installed; rpmem-ocf depends on it" \
			"(scripts/setup.sh installs it)"
done
status=$(dpkg-query -W -f='${db:Status-Abbrev}' librpmem-dev 2>/dev/null) ||
	status=
[[ -z $status || $status == un* || $status == pn* ]] ||
	refuse "librpmem-dev is installed; it depends on the librpmem1 this" \
		"test would replace"
cached=$(ldconfig -p | grep 'librpmem\.so\.1 ' || :)
[[ -z $cached ]] ||
	refuse "a librpmem.so.1 is already in the linker cache" \
		"(make uninstall, then ldconfig?): $cached"
for f in /usr/local/bin/rpmemd /usr/local/bin/rpmem /etc/rpmemd \
		"$ocf_root/resource.d/rpmem" "$ocf_root/lib/rpmem"; do
	[[ ! -e $f ]] || refuse "$f exists and is not this test's"
done

# the application side never borrows the build tree
unset LD_LIBRARY_PATH LD_PRELOAD RPMEM_CMD RPMEM_SSH RPMEM_LOG_LEVEL \
	RPMEM_LOG_FILE RPMEM_PROVIDER RPMEMD_SYSTEM_CONFIG

# shellcheck source=../common/harness.sh
. "$top_srcdir/tests/common/harness.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rpmem-installed.XXXXXX")
chmod 755 "$tmp"
app=$tmp/app			# the application's files
tgt=$tmp/target			# the target's files
ahome=$tmp/app-home		# /root of the application side
thome=$tmp/target-home		# /root of the target side
installed=no

# sshd_pid -- pid of the target's sshd, when it runs with our config
sshd_pid() {
	local pid
	[[ -s $tgt/sshd.pid ]] || return 1
	pid=$(<"$tgt/sshd.pid")
	[[ $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) == \
		*"$tgt/sshd_config"* ]] || return 1
	echo "$pid"
}

# purge -- remove the packages this test installed; check nothing is left
purge() {
	local left f
	dpkg-query -W -f='${Conffiles}\n' "${pkgs[@]}" 2>/dev/null |
		awk 'NF { print $1 }' >"$tmp/conffiles" || :
	dpkg -L "${pkgs[@]}" 2>/dev/null | sort -u >"$tmp/files" || :
	if ! dpkg --purge "${pkgs[@]}" >"$tmp/purge.log" 2>&1; then
		cat "$tmp/purge.log"
		tu_fail "dpkg --purge ${pkgs[*]}"
		return
	fi
	# what is there again belongs to the packages the diversions hid
	left=$(cat "$tmp/files" "$tmp/conffiles" | while read -r f; do
		[[ -e $f && ! -d $f ]] || continue
		dpkg -S "$f" >/dev/null 2>&1 || echo "$f"
	done)
	[[ -z $left ]] || tu_fail "files left after the purge: $left"
	[[ ! -e /etc/rpmemd ]] || tu_fail "/etc/rpmemd left after the purge"
	for f in "$ocf_root/resource.d/rpmem" "$ocf_root/lib/rpmem"; do
		[[ ! -e $f ]] || tu_fail "$f left after the purge"
	done
	# rpmemd(1) and poolset(5) of pmdk-tools and libpmem1 were diverted
	dpkg-divert --list | grep -E 'by (rpmemd|rpmem-tools)$' &&
		tu_fail "diversions left after the purge"
	dpkg --verify "${others[@]}" >"$tmp/verify.after" 2>&1 || :
	diff -u "$tmp/verify.before" "$tmp/verify.after" ||
		tu_fail "the purge did not give ${others[*]} their files back"
	if ldconfig -p | grep 'librpmem\.so\.1 ' >/dev/null; then
		tu_fail "librpmem.so.1 still in the linker cache after the purge"
	fi
	[[ $TU_FAILED != 0 ]] || say "ok: purged, nothing of the packages left"
}

# cleanup -- stop sshd, drop the namespace, purge, remove the temp dir
cleanup() {
	local rc=$? pid
	trap - EXIT
	# every step is tried, and each check reports through tu_fail
	set +e
	if pid=$(sshd_pid); then
		kill -TERM "$pid" 2>/dev/null || :
		for _ in $(seq 100); do
			kill -0 "$pid" 2>/dev/null || break
			tu_nap 0.05
		done
	fi
	harness_netns_stop
	[[ $installed == no ]] || purge
	rm -rf -- "$tmp"
	((TU_FAILED == 0)) || rc=1
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

# on_app -- run "$@" on the application side (its /root mounted)
on_app() {
	unshare -m --propagation private -- sh -c \
		'mount --bind "$0" /root && exec "$@"' "$ahome" "$@"
}

# pmemobj_hdr -- file $1 starts with a libpmemobj pool header
pmemobj_hdr() {
	[[ -f $1 && $(head -c 7 -- "$1") == PMEMOBJ ]]
}

# ------------------------------------------------------------ install
# the packages whose files ours divert: as they were, after the purge
others=()
for p in pmdk-tools libpmem1; do
	dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null |
		grep -q '^ii' && others+=("$p")
done
dpkg --verify "${others[@]}" >"$tmp/verify.before" 2>&1 || :
say "installing ${files[*]##*/}"
installed=yes
dpkg -i "${files[@]}" >"$tmp/install.log" 2>&1 || {
	cat "$tmp/install.log"
	tu_fail "dpkg -i of the packages"
	exit 1
}
# /lib is /usr/lib on Debian 12 (merged /usr); ldconfig names either
tu_expect "the linker's cache has librpmem.so.1 in /usr/lib/$multiarch" \
	grep -Eq "librpmem\.so\.1 .*=> (/usr)?/lib/$multiarch/librpmem\.so\.1\$" \
	<(ldconfig -p)
tu_expect "/etc/rpmemd/rpmemd.conf is the shipped, commented file" \
	cmp -s /etc/rpmemd/rpmemd.conf "$top_srcdir/src/rpmemd/rpmemd.conf"
tu_expect "rpmem is rpmem-tools'" \
	test "$(dpkg -S /usr/bin/rpmem 2>/dev/null)" = "rpmem-tools: /usr/bin/rpmem"

# ------------------------------------------------------------ the agent
# as Pacemaker runs it: OCF_ROOT and the action, nothing else
agent=$ocf_root/resource.d/rpmem/pool
tu_expect "ocf:rpmem:pool's meta-data is valid against ra-api-1.dtd" eval \
	'env -i PATH="$PATH" OCF_ROOT=$ocf_root "$agent" meta-data |
	xmllint --nowarning --noout --dtdvalid /usr/share/resource-agents/ra-api-1.dtd -'
rc=0
env -i PATH="$PATH" OCF_ROOT=$ocf_root "$agent" validate-all \
	>/dev/null 2>&1 || rc=$?
tu_expect "ocf:rpmem:pool validate-all without parameters: 6 (got $rc)" \
	test "$rc" = 6
for h in crm-fence-peer crm-unfence-peer; do
	tu_expect "$h finds rpmem-ocf.sh beside it" eval \
		'env -i PATH="$PATH" "$ocf_root/lib/rpmem/$h" --help |
		grep -q "^usage: "'
done

# ------------------------------------------------------------ the hosts
mkdir -p "$app" "$tgt/poolsets" "$tgt/pool"
mkdir -m 700 "$ahome" "$ahome/.ssh" "$thome" "$thome/.ssh"
ssh-keygen -q -t ed25519 -N '' -C rpmem-installed-target \
	-f "$tgt/ssh_host_ed25519_key"
ssh-keygen -q -t ed25519 -N '' -C rpmem-installed-app \
	-f "$ahome/.ssh/id_ed25519"
install -m 600 "$ahome/.ssh/id_ed25519.pub" "$thome/.ssh/authorized_keys"

rc=0
harness_netns_start inst || rc=$?
((rc == 0)) || { tu_fail "no network namespace for the target"; exit 1; }
host=$HARNESS_NETNS_ADDR
printf '%s %s\n' "$host" "$(cut -d' ' -f1,2 "$tgt/ssh_host_ed25519_key.pub")" \
	>"$ahome/.ssh/known_hosts"

# a server's sshd: what Debian's sshd_config leaves on, less PAM (root
# logs in with a key only) and AcceptEnv (nothing is forwarded)
cat >"$tgt/sshd_config" <<EOF
ListenAddress $host
Port 22
HostKey $tgt/ssh_host_ed25519_key
PidFile $tgt/sshd.pid
PermitRootLogin prohibit-password
PubkeyAuthentication yes
AuthenticationMethods publickey
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes yes
PermitUserEnvironment no
X11Forwarding no
PrintMotd no
LogLevel VERBOSE
EOF
mkdir -p /run/sshd
ip netns exec "$HARNESS_NETNS" sh -c \
	'mount --bind "$0" /root && exec /usr/sbin/sshd -f "$1" -E "$2"' \
	"$thome" "$tgt/sshd_config" "$tgt/sshd.log" || {
	cat "$tgt/sshd.log"
	tu_fail "the target's sshd did not start"
	exit 1
}
for _ in $(seq 200); do
	sshd_pid >/dev/null && break
	tu_nap 0.05
done
sshd_pid >/dev/null || { tu_fail "the target's sshd wrote no pid file"; exit 1; }

# sshd has bound its port once it wrote the pid file: the first login
# either works or shows why not
tu_must "ssh root@$host logs in with the test's key and known_hosts" \
	on_app ssh -oBatchMode=yes "root@$host" 'command -v rpmemd' ||
	{ sed 's/^/    /' "$tgt/sshd.log"; exit 1; }
tu_has "rpmemd on the target's non-interactive PATH is the package's" \
	'^/usr/bin/rpmemd$'

# the packaged config, plus where this test keeps its pool sets
printf '\n# added by tests/installed/installed.sh\npoolset-dir = %s\n' \
	"$tgt/poolsets" >>/etc/rpmemd/rpmemd.conf

# ------------------------------------------------------------ the pool
cc -std=gnu11 -O2 -o "$tmp/counter" "$self/counter.c" -lpmemobj ||
	{ tu_fail "counter.c does not build against Debian's libpmemobj"; exit 1; }
tu_expect "counter links libpmemobj, not librpmem" \
	eval '! ldd "$tmp/counter" | grep -q librpmem'
set=$app/app.set
lpart=$app/app.part
rpart=$tgt/pool/app.part
printf 'PMEMPOOLSET\n32M %s\n' "$rpart" >"$tgt/poolsets/app.set"
printf 'PMEMPOOLSET\n32M %s\nREPLICA root@%s app.set\n' "$lpart" "$host" \
	>"$set"

ntx=200			# transactions of the new pool
nmore=50		# and after it was rebuilt twice
tu_must "pmempool create obj of a pool with a remote replica" \
	on_app pmempool create obj --layout=installed "$set"
tu_expect "the replica on the target holds a libpmemobj header" \
	pmemobj_hdr "$rpart"
tu_must "transactions through Debian's libpmemobj" \
	on_app "$tmp/counter" add "$set" "$ntx"
tu_must "the transactions are in the pool" \
	on_app "$tmp/counter" verify "$set" "$ntx"

rm -f -- "$lpart"
tu_must "pmempool sync rebuilds the deleted master from the replica" \
	on_app pmempool sync "$set"
tu_must "the rebuilt master holds every transaction" \
	on_app "$tmp/counter" verify "$set" "$ntx"

rm -f -- "$rpart"
tu_must "pmempool sync recreates the deleted replica" \
	on_app pmempool sync "$set"
tu_expect "the replica is back" pmemobj_hdr "$rpart"
rm -f -- "$lpart"
tu_must "pmempool sync rebuilds the master from the recreated replica" \
	on_app pmempool sync "$set"
tu_must "the master rebuilt from it holds every transaction" \
	on_app "$tmp/counter" verify "$set" "$ntx"
tu_must "more transactions after the rebuilds" \
	on_app "$tmp/counter" add "$set" "$nmore"

tu_must "rpmem info" on_app rpmem info "$set"
tu_has "rpmem info: the replica is remote and healthy" \
	"^replica 1: remote root@$host app.set"
tu_has "rpmem info: same pool" 'same pool +yes'
# a live libpmemobj replica may differ in run-time bytes (README)
on_app rpmem verify "$set" >"$tmp/out" 2>&1 && rc=0 || rc=$?
tu_expect "rpmem verify: equal or differing ranges (exit 0 or 3, got $rc)" \
	test "$rc" = 0 -o "$rc" = 3
tu_must "rpmem sync" on_app rpmem sync "$set"
tu_must "rpmem verify after the sync" on_app rpmem verify "$set"
tu_has "rpmem verify: the replica is equal" "^replica 1 .*: equal"
tu_must "the pool still holds every transaction" \
	on_app "$tmp/counter" verify "$set" $((ntx + nmore))

tu_must "pmempool rm" on_app pmempool rm "$set"
tu_expect "pmempool rm removed the master" test ! -e "$lpart"
tu_expect "pmempool rm removed the replica" test ! -e "$rpart"

tu_must "rpmem create" on_app rpmem create "$set"
tu_expect "rpmem create made the replica" test -s "$rpart"
tu_must "rpmem info of the new pool" on_app rpmem info "$set"
tu_has "rpmem info: its replica opens" 'status +ok'
tu_must "rpmem rm" on_app rpmem rm "$set"
tu_expect "rpmem rm removed the master" test ! -e "$lpart"
tu_expect "rpmem rm removed the replica" test ! -e "$rpart"

((TU_FAILED == 0)) && echo "installed.sh: the installed packages replicate" \
	"between two hosts"
