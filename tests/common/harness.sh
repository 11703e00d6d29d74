# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# harness.sh -- a private sshd on loopback for end-to-end tests and demos
#
# Source this file from bash.  It defines:
#
#   harness_start_sshd DIR   generate keys and configs under DIR/ssh, start
#                            sshd on 127.0.0.1:<free high port>, wait until
#                            a login works; exports HARNESS_SSH_PORT,
#                            HARNESS_TARGET, HARNESS_SSH_CALLS, RPMEM_SSH
#                            and, unless set, RPMEM_STATE_DIR (DIR/state)
#   harness_stop_sshd DIR    stop that sshd (by the pid in its pid file)
#   harness_restart_sshd DIR start it again, on the same port
#   harness_rpmemd_cmd PSDIR LOG [ARG...]
#                            print an RPMEM_CMD running the built rpmemd
#   harness_rpmemd_pids PSDIR
#                            print the pids of the rpmemd processes that
#                            command started (found through /proc)
#   harness_test_env PSDIR PARTDIR
#                            export RPMEM_TEST_TARGET, RPMEM_TEST_POOLSET_DIR
#                            and RPMEM_TEST_PART_DIR for a C test program
#   harness_pick_port        print a TCP port nobody listens on
#   harness_netns_start TAG  make a network namespace joined to ours by a
#                            veth pair, each end with an address of a
#                            /30 of 198.18.0.0/15 no other run uses;
#                            exports HARNESS_NETNS (pass it on to
#                            harness_start_sshd with HARNESS_ADDR),
#                            HARNESS_NETNS_IF (our end's name),
#                            HARNESS_NETNS_HOST (our end's address) and
#                            HARNESS_NETNS_ADDR (the namespace's);
#                            returns 77 where namespaces cannot be made
#   harness_netns_stop       delete them again
#   harness_netns_shape RATE BURST LATENCY
#                            tbf on both ends of the veth pair: RATE and
#                            BURST as tc writes them (40mbit, 64kb),
#                            LATENCY the queue (5ms); RATE "none": the
#                            link unshaped again
#   harness_netns_target TAG DIR
#                            harness_netns_start TAG and an sshd for DIR
#                            in it, both removed with DIR at exit; DIR
#                            gets poolsets/, parts/ and logs/; exits 77
#                            where namespaces cannot be made
#   harness_exit_trap DIR LINES PATTERN...
#                            at exit stop DIR's sshd, show the last LINES
#                            lines of the files PATTERN matches (then)
#                            if the script failed, remove DIR
#
# It sources tests/common/tu.sh (checks, bounded runs, sessions gone).
#
# Every function returns non-zero with a message on stderr when it fails,
# so callers may use `|| exit 1` even where `set -e` does not apply.
# Environment: SSHD, SSH_KEYGEN, SSH (programs; found in PATH and /usr/sbin
# when unset or empty), top_srcdir and top_builddir (default: the
# repository root; exported, top_builddir absolute);
# HARNESS_ADDR (listen address, default 127.0.0.1) and HARNESS_NETNS (a
# network namespace the caller made, to run sshd in) for partition tests.
#
# Nothing here listens on or connects to anything but 127.0.0.1 or the
# caller's own namespace, and no process is ever signalled by name: sshd
# is stopped by the pid it wrote.

HARNESS_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# tu.sh sets the trees (top_srcdir, top_builddir) for the sourcing script
# shellcheck source-path=SCRIPTDIR source=tu.sh
. "$HARNESS_LIB_DIR/tu.sh"

# harness_err -- print a message prefixed with "harness:" to stderr
harness_err() {
	printf 'harness: %s\n' "$*" >&2
}

# harness_squote -- print $1 quoted for a POSIX shell
harness_squote() {
	local q="'\\''"
	printf "'%s'" "${1//\'/$q}"
}

# harness_prog -- print the absolute path of program $2 (or the value $1)
harness_prog() {
	local given=$1 name=$2 path
	if [[ -n $given ]]; then
		path=$(command -v -- "$given" 2>/dev/null) || path=
	else
		path=$(PATH=$PATH:/usr/sbin:/sbin command -v -- "$name" \
			2>/dev/null) || path=
	fi
	if [[ -z $path || $path != /* || ! -x $path ]]; then
		[[ -z $given ]] || name="$name (given as $given)"
		harness_err "$name not found;" \
			"install openssh-server and openssh-client"
		return 1
	fi
	printf '%s\n' "$path"
}

# harness_port_busy -- true when something listens on TCP port $1
harness_port_busy() {
	local out
	command -v ss >/dev/null 2>&1 || return 1
	out=$(ss -Htln "sport = :$1" 2>/dev/null) || return 1
	[[ -n $out ]]
}

# harness_pick_port -- print a random port in 20000-60000 that is not in use
harness_pick_port() {
	local port try
	for ((try = 0; try < 100; try++)); do
		port=$(( 20000 + (RANDOM * 32768 + RANDOM) % 40001 ))
		if ! harness_port_busy "$port"; then
			printf '%s\n' "$port"
			return 0
		fi
	done
	harness_err "no free TCP port found in 20000-60000"
	return 1
}

# harness_sshd_pid -- print the pid of the harness sshd under $1, if running
harness_sshd_pid() {
	local sshdir=$1/ssh pid
	[[ -s $sshdir/sshd.pid ]] || return 1
	read -r pid 2>/dev/null <"$sshdir/sshd.pid" || [[ -n $pid ]] || return 1
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	# a stale pid file may name a recycled pid: insist on our config file
	local IFS=' '
	local -a args
	mapfile -d '' args 2>/dev/null <"/proc/$pid/cmdline" || return 1
	[[ "${args[*]}" == *"$sshdir/sshd_config"* ]] || return 1
	printf '%s\n' "$pid"
}

# harness_show_log -- print the sshd log under $1 to stderr
harness_show_log() {
	local log=$1/ssh/sshd.log
	if [[ -s $log ]]; then
		printf -- '--- %s ---\n' "$log" >&2
		cat -- "$log" >&2
		printf -- '--- end of %s ---\n' "$log" >&2
	fi
}

# harness_write_sshd_config -- write DIR/ssh/sshd_config for port $2
harness_write_sshd_config() {
	local sshdir=$1/ssh port=$2 user
	user=$(id -un) || return 1
	# AcceptEnv and Subsystem are left out on purpose: their defaults
	# accept no environment and offer no subsystem.  Sessions get a HOME
	# of their own (SetEnv is applied after sshd's HOME), so that the
	# login shell runs none of the invoking user's start-up files: bash
	# sources ~/.bashrc for ssh commands, and what a developer's holds
	# (0.6 s of pyenv set-up on the CI machines) is not under test.
	mkdir -p -- "$1/home" || return 1
	cat >"$sshdir/sshd_config" <<-EOF || return 1
	ListenAddress ${HARNESS_ADDR:-127.0.0.1}
	Port $port
	HostKey $sshdir/host_ed25519_key
	PidFile $sshdir/sshd.pid
	AuthorizedKeysFile $sshdir/authorized_keys
	AllowUsers $user
	AuthenticationMethods publickey
	PubkeyAuthentication yes
	PasswordAuthentication no
	KbdInteractiveAuthentication no
	UsePAM no
	PermitRootLogin prohibit-password
	PermitUserEnvironment no
	StrictModes no
	AllowTcpForwarding no
	AllowAgentForwarding no
	AllowStreamLocalForwarding no
	X11Forwarding no
	PermitTunnel no
	PrintMotd no
	PrintLastLog no
	MaxStartups 64:30:128
	LogLevel VERBOSE
	SetEnv HOME=$1/home
	EOF
	chmod 600 "$sshdir/sshd_config"
}

# harness_write_client -- write ssh_config, known_hosts and the ssh wrapper
harness_write_client() {
	local sshdir=$1/ssh port=$2 ssh=$3 key
	key=$(cut -d' ' -f1,2 <"$sshdir/host_ed25519_key.pub") || return 1
	printf '[%s]:%s %s\n' "${HARNESS_ADDR:-127.0.0.1}" "$port" "$key" \
		>"$sshdir/known_hosts" || return 1
	cat >"$sshdir/ssh_config" <<-EOF || return 1
	Host *
	IdentityFile $sshdir/id_ed25519
	IdentitiesOnly yes
	IdentityAgent none
	UserKnownHostsFile $sshdir/known_hosts
	GlobalKnownHostsFile /dev/null
	StrictHostKeyChecking yes
	UpdateHostKeys no
	CheckHostIP no
	BatchMode yes
	ControlMaster no
	ControlPath none
	ForwardAgent no
	ForwardX11 no
	ConnectTimeout 10
	LogLevel ERROR
	EOF
	chmod 600 "$sshdir/ssh_config" || return 1
	# librpmem execvp()s $RPMEM_SSH with ssh's own argv; the wrapper adds
	# the private config and records each call so tests can prove that
	# a refused request never reached ssh.
	{
		printf '#!/bin/sh\n'
		printf '# generated by harness.sh: ssh with a private config\n'
		printf 'printf "%%s\\n" "$*" >>%s\n' \
			"$(harness_squote "$sshdir/ssh.calls")"
		printf 'exec %s -F %s "$@"\n' "$(harness_squote "$ssh")" \
			"$(harness_squote "$sshdir/ssh_config")"
	} >"$sshdir/ssh" || return 1
	chmod 755 "$sshdir/ssh"
}

# harness_launch -- start sshd once; 0: running, 2: port taken, 1: error
harness_launch() {
	local dir=$1 sshd=$2 sshdir=$1/ssh try
	rm -f -- "$sshdir/sshd.pid"
	: >"$sshdir/sshd.log" || return 1
	# daemon mode: sshd forks, binds, then writes the pid file; with
	# HARNESS_NETNS it runs inside that network namespace
	local -a in_ns=()
	[[ -n ${HARNESS_NETNS:-} ]] && in_ns=(ip netns exec "$HARNESS_NETNS")
	if ! "${in_ns[@]}" "$sshd" -f "$sshdir/sshd_config" \
			-E "$sshdir/sshd.log" \
			</dev/null >"$sshdir/sshd.out" 2>&1; then
		harness_err "$sshd refused to start:"
		cat -- "$sshdir/sshd.out" >&2
		return 1
	fi
	for ((try = 0; try < 200; try++)); do
		if harness_sshd_pid "$dir" >/dev/null; then
			return 0
		fi
		if grep -q 'Cannot bind any address' "$sshdir/sshd.log"; then
			return 2
		fi
		tu_nap 0.05
	done
	harness_err "sshd wrote no pid file in 10 s"
	return 1
}

# harness_start_sshd -- set up and start a private sshd under $1/ssh
harness_start_sshd() {
	local dir=${1:?harness_start_sshd: directory expected}
	local sshd keygen ssh sshdir port attempt rc try
	sshd=$(harness_prog "${SSHD:-}" sshd) || return 1
	keygen=$(harness_prog "${SSH_KEYGEN:-}" ssh-keygen) || return 1
	ssh=$(harness_prog "${SSH:-}" ssh) || return 1
	mkdir -p -- "$dir" || return 1
	dir=$(cd -- "$dir" && pwd) || return 1
	if [[ $dir =~ [[:space:]\"\'\\#] ]]; then
		harness_err "directory '$dir' must not contain blanks," \
			"quotes, backslashes or '#' (it goes into ssh configs)"
		return 1
	fi
	sshdir=$dir/ssh
	if harness_sshd_pid "$dir" >/dev/null; then
		harness_err "an sshd is already running for $dir"
		return 1
	fi
	rm -rf -- "$sshdir" || return 1
	mkdir -m 700 -- "$sshdir" || return 1

	"$keygen" -q -t ed25519 -N '' -C rpmem-harness-host \
		-f "$sshdir/host_ed25519_key" || return 1
	"$keygen" -q -t ed25519 -N '' -C rpmem-harness-client \
		-f "$sshdir/id_ed25519" || return 1
	cp -- "$sshdir/id_ed25519.pub" "$sshdir/authorized_keys" || return 1
	chmod 600 "$sshdir/authorized_keys" || return 1

	# privilege separation chroots into /run/sshd when run as root
	if [[ $(id -u) == 0 ]]; then
		mkdir -p /run/sshd || return 1
	fi

	# a port that looked free may be taken before sshd binds: retry
	rc=1
	for ((attempt = 0; attempt < 10; attempt++)); do
		port=$(harness_pick_port) || return 1
		harness_write_sshd_config "$dir" "$port" || return 1
		rc=0
		harness_launch "$dir" "$sshd" || rc=$?
		[[ $rc == 2 ]] || break
	done
	if [[ $rc != 0 ]]; then
		[[ $rc == 2 ]] && harness_err "every port tried was taken"
		harness_show_log "$dir"
		return 1
	fi
	harness_write_client "$dir" "$port" "$ssh" || {
		harness_stop_sshd "$dir"
		return 1
	}

	for ((try = 0; try < 100; try++)); do
		if "$sshdir/ssh" -p "$port" "${HARNESS_ADDR:-127.0.0.1}" true \
				2>"$sshdir/login.err" </dev/null; then
			break
		fi
		tu_nap 0.1
	done
	if ((try == 100)); then
		harness_err "cannot log in through sshd on" \
			"${HARNESS_ADDR:-127.0.0.1}:$port:"
		cat -- "$sshdir/login.err" >&2
		if grep -q 'account is locked' "$sshdir/sshd.log"; then
			harness_err "the account $(id -un) is locked" \
				"(password field starts with '!');" \
				"sshd with UsePAM no refuses it"
		fi
		harness_show_log "$dir"
		harness_stop_sshd "$dir"
		return 1
	fi
	: >"$sshdir/ssh.calls"

	HARNESS_SSH_PORT=$port
	HARNESS_TARGET=${HARNESS_ADDR:-127.0.0.1}:$port
	HARNESS_SSH_CALLS=$sshdir/ssh.calls
	RPMEM_SSH=$sshdir/ssh
	export HARNESS_SSH_PORT HARNESS_TARGET HARNESS_SSH_CALLS RPMEM_SSH
	# librpmem's records of replicas and handle statuses: this run's own,
	# never the host's (/var/lib/rpmem) nor another run's
	if [[ -z ${RPMEM_STATE_DIR:-} ]]; then
		mkdir -p -m 700 -- "$dir/state" || return 1
		export RPMEM_STATE_DIR=$dir/state
	fi
}

# harness_stop_sshd -- TERM the sshd started for $1 and wait for it to exit
harness_stop_sshd() {
	local dir=${1:?harness_stop_sshd: directory expected} pid try
	pid=$(harness_sshd_pid "$dir") || return 0
	kill -TERM "$pid" 2>/dev/null || return 0
	for ((try = 0; try < 100; try++)); do
		kill -0 "$pid" 2>/dev/null || break
		tu_nap 0.05
	done
	if kill -0 "$pid" 2>/dev/null; then
		harness_err "sshd $pid ignored SIGTERM for 5 s; sending SIGKILL"
		kill -KILL "$pid" 2>/dev/null || :
	fi
	rm -f -- "$dir/ssh/sshd.pid"
}

# harness_restart_sshd -- start the sshd of $1 again with its config
harness_restart_sshd() {
	local dir=${1:?harness_restart_sshd: directory expected} sshd rc=0
	sshd=$(harness_prog "${SSHD:-}" sshd) || return 1
	dir=$(cd -- "$dir" && pwd) || return 1
	harness_launch "$dir" "$sshd" || rc=$?
	((rc == 0)) && return 0
	harness_err "the sshd of $dir did not start again (status $rc)"
	harness_show_log "$dir"
	return 1
}

# harness_netns_start -- a namespace and a veth pair to it (see the top)
harness_netns_start() {
	local tag=${1:?harness_netns_start: tag expected} net n lock
	HARNESS_NETNS=rpmem-$tag-$$
	HARNESS_NETNS_IF=rp${tag:0:4}$$
	if ! ip netns add "$HARNESS_NETNS" 2>/dev/null; then
		harness_err "cannot make a network namespace (not root?)"
		return 77
	fi
	# concurrent runs pick their /30 one at a time, among free ones
	lock=${TMPDIR:-/tmp}/rpmem-netns.lock
	exec {n}>>"$lock" || return 1
	flock "$n" || return 1
	for ((net = $$ % 4096; ; net = (net + 1) % 4096)); do
		HARNESS_NETNS_HOST=198.$((18 + net / 2048)).$((net / 8 % 256))
		HARNESS_NETNS_HOST+=.$((net % 8 * 32 + 1))
		ip -o addr show | grep -qF " $HARNESS_NETNS_HOST/" || break
	done
	HARNESS_NETNS_ADDR=${HARNESS_NETNS_HOST%.*}.$((${HARNESS_NETNS_HOST##*.} + 1))
	ip link add "$HARNESS_NETNS_IF" type veth peer name "${HARNESS_NETNS_IF}n" &&
	ip link set "${HARNESS_NETNS_IF}n" netns "$HARNESS_NETNS" &&
	ip addr add "$HARNESS_NETNS_HOST/30" dev "$HARNESS_NETNS_IF" &&
	ip link set "$HARNESS_NETNS_IF" up &&
	ip netns exec "$HARNESS_NETNS" ip link set lo up &&
	ip netns exec "$HARNESS_NETNS" ip addr add "$HARNESS_NETNS_ADDR/30" \
		dev "${HARNESS_NETNS_IF}n" &&
	ip netns exec "$HARNESS_NETNS" ip link set "${HARNESS_NETNS_IF}n" up
	local rc=$?
	exec {n}>&-
	export HARNESS_NETNS HARNESS_NETNS_IF HARNESS_NETNS_HOST \
		HARNESS_NETNS_ADDR
	return $rc
}

# harness_netns_stop -- delete the namespace and the veth pair
harness_netns_stop() {
	[[ -n ${HARNESS_NETNS_IF:-} ]] &&
		ip link del "$HARNESS_NETNS_IF" 2>/dev/null
	[[ -n ${HARNESS_NETNS:-} ]] && ip netns del "$HARNESS_NETNS" 2>/dev/null
	unset HARNESS_NETNS HARNESS_NETNS_IF
	return 0
}

# harness_netns_shape -- tbf on both ends of the veth pair (see the top)
harness_netns_shape() {
	local dev
	for dev in "$HARNESS_NETNS_IF" "ns:${HARNESS_NETNS_IF}n"; do
		local -a in_ns=()
		if [[ $dev == ns:* ]]; then
			in_ns=(ip netns exec "$HARNESS_NETNS")
			dev=${dev#ns:}
		fi
		if [[ $1 == none ]]; then
			"${in_ns[@]}" tc qdisc del dev "$dev" root 2>/dev/null
			continue
		fi
		"${in_ns[@]}" tc qdisc replace dev "$dev" root tbf rate "$1" \
			burst "$2" latency "$3" || return 1
	done
}

# harness_netns_cleanup -- the exit trap of harness_netns_target
harness_netns_cleanup() {
	harness_stop_sshd "$HARNESS_NETNS_DIR" || :
	harness_netns_stop
	rm -rf -- "$HARNESS_NETNS_DIR"
}

# harness_netns_target -- a target (sshd) in a namespace of its own, for
# DIR; the caller's name ($0) in the skip message
harness_netns_target() {
	local tag=${1:?harness_netns_target: tag expected} rc=0
	HARNESS_NETNS_DIR=${2:?harness_netns_target: directory expected}
	trap harness_netns_cleanup EXIT
	harness_netns_start "$tag" || rc=$?
	if ((rc == 77)); then
		echo "${0##*/}: cannot make a network namespace; skipped"
		exit 77
	fi
	((rc == 0)) || exit 1
	HARNESS_ADDR=$HARNESS_NETNS_ADDR harness_start_sshd \
		"$HARNESS_NETNS_DIR" || exit 1
	mkdir -p "$HARNESS_NETNS_DIR/poolsets" "$HARNESS_NETNS_DIR/parts" \
		"$HARNESS_NETNS_DIR/logs"
}

# harness_exit -- the exit trap of harness_exit_trap
harness_exit() {
	local rc=$? pat f IFS=
	trap - EXIT
	harness_stop_sshd "$HARNESS_EXIT_DIR" || rc=1
	if ((rc != 0)); then
		for pat in "${HARNESS_EXIT_LOGS[@]}"; do
			# shellcheck disable=SC2066 # the pattern is globbed here
			for f in $pat; do
				[[ -s $f ]] || continue
				printf -- '--- %s (last %d lines) ---\n' "$f" \
					"$HARNESS_EXIT_LINES"
				tail -n "$HARNESS_EXIT_LINES" -- "$f" | tr -d '\r' |
					cat -v
			done
		done
	fi
	rm -rf -- "$HARNESS_EXIT_DIR"
	exit "$rc"
}

# harness_exit_trap -- stop sshd, show logs of a failure, clean up DIR
harness_exit_trap() {
	HARNESS_EXIT_DIR=${1:?harness_exit_trap: directory expected}
	HARNESS_EXIT_LINES=${2:?harness_exit_trap: line count expected}
	shift 2
	HARNESS_EXIT_LOGS=("$@")
	trap harness_exit EXIT
	trap 'exit 1' HUP INT TERM
}

# harness_test_env PSDIR PARTDIR -- export what a C test program of an
# sshd target reads: RPMEM_TEST_TARGET (this harness's), _POOLSET_DIR and
# _PART_DIR
harness_test_env() {
	export RPMEM_TEST_TARGET=$HARNESS_TARGET RPMEM_TEST_POOLSET_DIR=$1 \
		RPMEM_TEST_PART_DIR=$2
}

# harness_pids_naming STR [PID...] -- the live processes (zombies left
# out) whose argv, its words joined by spaces and a space either side,
# contains STR (" ARG " matches a whole word), but the PIDs given and
# this shell; a test's own are those whose argv names its private temp
# dir.  Builtins only: a fork a process took seconds a call on VMs where
# a fork costs 20 ms, long enough for a fault's transient state to pass
# before the test looked
harness_pids_naming() {
	local str=$1 p pid st IFS=' '
	local -a args
	shift
	for p in /proc/[0-9]*; do
		pid=${p#/proc/}
		[[ $pid != "$$" && $pid != "$BASHPID" && " $* " != *" $pid "* ]] ||
			continue
		mapfile -d '' args 2>/dev/null <"$p/cmdline" || continue
		[[ " ${args[*]} " == *"$str"* ]] || continue
		read -r st 2>/dev/null <"$p/stat" || continue
		st=${st##*) }
		[[ ${st%% *} == [ZX] ]] || echo "$pid"
	done
}

# harness_none_left WHAT STR SECONDS [PID...] -- true once no process
# whose argv contains STR runs, but the PIDs given (harness_pids_naming);
# after SECONDS, tu_fail "WHAT still running", show them and SIGKILL
# them (ours for sure: a run's STR is its private temp dir), their pids
# in HARNESS_LEFT, and false
harness_none_left() {
	local what=$1 str=$2 secs=$3 end=$((SECONDS + $3))
	shift 3
	while :; do
		mapfile -t HARNESS_LEFT < <(harness_pids_naming "$str" "$@")
		((${#HARNESS_LEFT[@]} != 0 && SECONDS < end)) || break
		tu_nap 0.05
	done
	((${#HARNESS_LEFT[@]} != 0)) || return 0
	tu_fail "$what still running $secs s after:"
	ps -o pid,ppid,stat,etime,args \
		-p "$(IFS=,; echo "${HARNESS_LEFT[*]}")" || :
	kill -KILL "${HARNESS_LEFT[@]}" 2>/dev/null || :
	return 1
}

# harness_rpmemd_pids -- the rpmemd processes serving poolset dir $1
# (harness_pids_naming: zombies, which hold no pool, left out)
harness_rpmemd_pids() {
	local psdir=${1:?harness_rpmemd_pids: poolset dir expected}
	local pid comm
	while read -r pid; do
		read -r comm 2>/dev/null <"/proc/$pid/comm" &&
			[[ $comm == rpmemd ]] && echo "$pid"
	done < <(harness_pids_naming " --poolset-dir=$psdir ")
	return 0
}

# harness_rpmemd_cmd -- print an RPMEM_CMD that runs the built rpmemd
harness_rpmemd_cmd() {
	local psdir=${1:?harness_rpmemd_cmd: poolset dir expected}
	local log=${2:?harness_rpmemd_cmd: log file expected}
	local top arg
	shift 2
	top=${top_builddir:-$HARNESS_LIB_DIR/../..}
	top=$(cd -- "$top" && pwd) || return 1
	printf '%q --poolset-dir=%q --log-file=%q --log-level=debug' \
		"$top/rpmemd" "$psdir" "$log"
	for arg in "$@"; do
		printf ' %q' "$arg"
	done
	printf '\n'
}
