#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# control.sh -- control-path tests: librpmem to rpmemd through a real sshd
#
# Run by `make check` from the build tree (top_builddir and top_srcdir are
# exported), or by hand after a build:
#
#   top_builddir=BUILD_DIR tests/integration/control.sh
#
# Exit status 0 pass, 1 fail; never 77: a machine without sshd fails here.
# Each group of tests/integration/control (control.c) gets its RPMEM_CMD:
#
#   main        the built rpmemd with a good config file
#   badconfig   rpmemd with a broken config file, once per file (R16, S4)
#   nodaemon    no rpmemd at the far end; no sshd at the target port
#   fakedaemon  this script posing as a misbehaving rpmemd (R8, R9)
#
# `control.sh --fake-rpmemd SCENARIO [TAG]` is that fake daemon: it is
# started on the "remote" side through ssh, speaks on stdin/stdout.
set -euo pipefail

# put -- write integer $3 as $2 bytes in byte order $1 (be, le) to stdout
put() {
	local order=$1 width=$2 value=$3 i bits esc=
	for ((i = 0; i < width; i++)); do
		if [[ $order == be ]]; then
			bits=$(( (width - 1 - i) * 8 ))
		else
			bits=$(( i * 8 ))
		fi
		esc+=$(printf '\\0%03o' $(( (value >> bits) & 255 )))
	done
	printf '%b' "$esc"
}

# fake_resp_hdr -- response header: status, type, size (big-endian)
fake_resp_hdr() {
	put be 4 "$1"
	put be 4 "$2"
	put be 8 "$3"
}

# fake_ibc -- in-band attrs: port, persist method, rkey, raddr, nlanes
fake_ibc() {
	put be 4 "$1"
	put be 4 "$2"
	put be 8 0
	put be 8 0
	put le 4 "$3"	# PMDK sends nlanes in host order
}

# fake_request -- read one whole request from stdin; print its type
fake_request() {
	local hdr b type size=0 i
	hdr=$(head -c 12 | od -An -v -tu1)
	read -r -a b <<<"$hdr"
	((${#b[@]} == 12)) || return 1
	type=$(( b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3] ))
	for ((i = 4; i < 12; i++)); do
		size=$(( size << 8 | b[i] ))
	done
	head -c $((size - 12)) >/dev/null
	printf '%s\n' "$type"
}

# fake_answer -- a well-formed answer to CREATE or OPEN (request type $1)
# with lanes $2, buffer size $3, lane security $4 ("noext": no extension
# block at all), cipher $5 and lane port $6
fake_answer() {
	local type=$1 nlanes=$2 buff=$3 sec=$4 cipher=$5 port=$6
	local base=44 attr=0 ext=56
	if ((type == 3)); then	# OPEN_RESP carries the pool's attributes
		base=148
		attr=104
	fi
	[[ $sec == noext ]] && ext=0
	fake_resp_hdr 0 $((type + 1)) $((base + ext))
	fake_ibc "$port" 1 "$nlanes"
	head -c "$attr" /dev/zero
	if ((ext)); then
		put be 2 0; put be 2 3	# extension: major, minor
		put be 4 0x000100	# version 0.1.0
		put be 8 "$buff"
		put be 2 "$sec"; put be 2 "$cipher"
		put be 4 0		# reserved
		head -c 32 /dev/urandom
	fi
}

# fake_refused -- answer scenario $1's refused session: its CREATE or OPEN
# with what the scenario gets wrong, then the client's CLOSE with status $2
fake_refused() {
	local type
	type=$(fake_request) || return 1
	case $1 in
	no-extension)	fake_answer "$type" 1 8192 noext 0 7000 ;;
	zero-lanes)	fake_answer "$type" 0 8192 2 1 7000 ;;
	many-lanes)	fake_answer "$type" 99 8192 2 1 7000 ;;
	small-buffer)	fake_answer "$type" 1 4096 2 1 7000 ;;
	unknown-security) fake_answer "$type" 1 8192 7 1 7000 ;;
	no-cipher)	fake_answer "$type" 1 8192 2 0 7000 ;;
	dead-lanes)	fake_answer "$type" 1 8192 2 1 "$3" ;;
	esac
	fake_request >/dev/null || return 1	# the client's CLOSE
	fake_resp_hdr "$2" 6 16
}

# fake_rpmemd -- misbehave as scenario $1 on stdin/stdout, like rpmemd would
# not; $2 is the test's directory, $3 a lane port nobody listens on, and
# what follows is what librpmem added (--protocol 0.3, or nothing)
fake_rpmemd() {
	local resp_create=2 resp_close=6 size=44 i
	case $1 in
	short-status)		# 2 of the 4 status bytes, then EOF
		put le 2 0
		return 0 ;;
	error-status)		# start-up refused with EACCES
		echo "fake rpmemd: refusing to start" >&2
		put le 4 13
		return 13 ;;
	stderr-flood)		# 12 KiB of stderr before the reason
		for ((i = 0; i < 200; i++)); do
			printf 'fake rpmemd: line %03d of a long story%22s\n' \
				"$i" '' >&2
		done
		printf 'fake rpmemd: the last words\r\n' >&2
		put le 4 13
		return 13 ;;
	no-extension | zero-lanes | many-lanes | small-buffer | \
	unknown-security | no-cipher | dead-lanes)
		put le 4 0
		fake_refused "$1" 0 "${3:-}"
		cat >/dev/null
		return 0 ;;
	pmdk-daemon)		# PMDK 1.12's rpmemd: no --protocol, and then
		# it refuses to start
		if [[ " ${*:4} " == *" --protocol "* ]]; then
			echo "rpmemd: unrecognized option '--protocol'" >&2
			return 1
		fi
		echo "fake PMDK rpmemd: refusing to start" >&2
		put le 4 13
		return 13 ;;
	close-refused)		# CLOSE of a refused session fails too
		put le 4 0
		fake_refused zero-lanes 1
		cat >/dev/null
		return 0 ;;
	esac
	put le 4 0
	head -c 12 >/dev/null	# the request header: the request is sent
	case $1 in
	no-response)
		return 0 ;;
	truncated)		# header promises 44 bytes; 16 come
		fake_resp_hdr 0 "$resp_create" "$size"
		return 0 ;;
	wrong-type)
		fake_resp_hdr 0 "$resp_close" "$size"
		fake_ibc 7000 1 1 ;;
	request-as-response)	# a CREATE request where a reply belongs
		put be 4 1
		put be 8 "$size"
		put be 8 0; put be 8 0; put be 8 0; put be 8 0 ;;
	huge-size)		# R8: size 2^64-1: refuse, do not allocate
		fake_resp_hdr 0 "$resp_create" 0xffffffffffffffff
		fake_ibc 7000 1 1 ;;
	bad-status-code)
		fake_resp_hdr 14 "$resp_create" "$size"
		fake_ibc 7000 1 1 ;;
	bad-port)
		fake_resp_hdr 0 "$resp_create" "$size"
		fake_ibc 0 1 1 ;;
	bad-method)
		fake_resp_hdr 0 "$resp_create" "$size"
		fake_ibc 7000 3 1 ;;
	weak-security)		# S8: a well-formed answer with no lane security
		fake_resp_hdr 0 "$resp_create" $((size + 56))
		fake_ibc 7000 1 1
		put be 2 0; put be 2 3	# extension: major, minor
		put be 4 0x000100	# version 0.1.0
		put be 8 65536		# buff_size
		put be 2 0; put be 2 0	# lane security none, no cipher
		put be 4 0		# reserved
		head -c 32 /dev/urandom
		head -c 16 >/dev/null	# the client refuses it: CLOSE
		fake_resp_hdr 0 "$resp_close" 16
		return 0 ;;
	*)
		echo "fake rpmemd: unknown scenario '$1'" >&2
		return 1 ;;
	esac
	cat >/dev/null		# stay until the client hangs up
}

if [[ ${1:-} == --fake-rpmemd ]]; then
	fake_rpmemd "${@:2}"
	exit
fi

self=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
self=$self/$(basename "${BASH_SOURCE[0]}")
top_srcdir=${top_srcdir:-$(cd "$(dirname "$self")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
export top_srcdir top_builddir
# shellcheck source-path=SCRIPTDIR source=../common/harness.sh
. "$top_srcdir/tests/common/harness.sh"

prog=$top_builddir/tests/integration/control
tu_need_built "$prog"

export CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-60}
export CK_VERBOSITY=${CK_VERBOSITY:-verbose}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rpmem-control.XXXXXX")
outside=$tmp/outside		# must stay empty but for the poolset dir
poolset_dir=$outside/poolsets	# so "../x.set" lands in $outside
part_dir=$tmp/parts
log_dir=$tmp/logs
mkdir -p "$poolset_dir" "$part_dir" "$log_dir"
failed=()
# at exit: what the daemons said, for a failed run
harness_exit_trap "$tmp" 300 "$log_dir/*" "$tmp/ssh/ssh.calls" \
	"$tmp/ssh/sshd.log"

# leftovers -- pids of processes whose argv names the temp dir (but sshd)
leftovers() {
	local sshd_pid pid
	sshd_pid=$(harness_sshd_pid "$tmp") || sshd_pid=
	for pid in $(pgrep -f -- "$tmp" || :); do
		[[ $pid == "$sshd_pid" ]] || printf '%s\n' "$pid"
	done
}

# check_after -- nothing left running, outside untouched, no stray parts
check_after() {
	local label=$1 try pids=() stray
	for ((try = 0; try < 100; try++)); do
		mapfile -t pids < <(leftovers)
		((${#pids[@]} == 0)) && break
		tu_nap 0.05
	done
	if ((${#pids[@]} != 0)); then
		tu_fail "$label: processes still running 5 s after the run:"
		ps -o pid,ppid,etime,args -p "$(IFS=,; echo "${pids[*]}")" || :
		# ours for sure: their argv names our private temp dir
		kill -TERM "${pids[@]}" 2>/dev/null || :
		return 1
	fi
	stray=$(find "$outside" -mindepth 1 -path "$poolset_dir" -prune \
		-o -print)
	if [[ -n $stray ]]; then
		tu_fail "$label: files outside the poolset dir after the" \
			"run (an S1 escape, or a failed test's leftovers):"
		printf '%s\n' "$stray"
		rm -rf -- "${outside:?}"/*
		mkdir -p "$poolset_dir"
		return 1
	fi
	stray=$(find "$part_dir" -mindepth 1)
	if [[ -n $stray ]]; then
		tu_fail "$label: part files left after the run (R13, or" \
			"a failed test's leftovers):"
		printf '%s\n' "$stray"
		rm -rf -- "${part_dir:?}"/*
		return 1
	fi
}

# run_group -- run control.c group $2 under the current RPMEM_CMD
run_group() {
	local label=$1 group=$2 result=PASS
	printf '=== %s: RPMEM_CMD=%s\n' "$label" "$RPMEM_CMD"
	"$prog" "$group" || result=FAIL
	check_after "$label" || result=FAIL
	if [[ $result != PASS ]]; then
		failed+=("$label")
	fi
	printf '=== %s: %s\n' "$label" "$result"
}

harness_start_sshd "$tmp" || {
	echo "control.sh: cannot start a private sshd on 127.0.0.1" \
		"(install openssh-server; SSHD=${SSHD:-unset})" >&2
	exit 1
}

harness_test_env "$poolset_dir" "$part_dir"
export RPMEM_TEST_OUTSIDE_DIR=$outside
export RPMEM_TEST_SSH_CALLS=$HARNESS_SSH_CALLS

# a private config keeps /etc/rpmemd and ~/.rpmemd.conf out of the test
conf=$tmp/rpmemd.conf
printf '# control.sh: rpmemd reads only this file\nlog-level = debug\n' \
	>"$conf"
chmod 600 "$conf"

# --- main: the real daemon
RPMEM_CMD=$(harness_rpmemd_cmd "$poolset_dir" "$log_dir/rpmemd-main.log" \
	-c "$conf")
export RPMEM_CMD
run_group main main

# --- badconfig: each file must be refused naming file:line (R16, S4)
# bad_config -- write config $1 from printf format $2, expect message $3
bad_config() {
	local name=$1 content=$2 expect=$3 mode=${4:-600}
	# shellcheck disable=SC2059 # the content is a format on purpose
	printf "$content" >"$tmp/$name"
	chmod "$mode" "$tmp/$name"
	RPMEM_CMD=$(harness_rpmemd_cmd "$poolset_dir" \
		"$log_dir/rpmemd-$name.log" -c "$tmp/$name")
	RPMEM_TEST_EXPECT_MSG=$expect
	export RPMEM_CMD RPMEM_TEST_EXPECT_MSG
	run_group "badconfig $name" badconfig
}
bad_config garbage.conf \
	'# comment\nlog-level = debug\nthis line has no equals sign\n' \
	garbage.conf:3
bad_config nul.conf 'log-level = debug\npersist-apm = n\0o\n' nul.conf:2
bad_config novalue.conf '# comment\npersist-apm =\n' novalue.conf:2
bad_config unknown.conf 'log-level = debug\n\nno-such-key = yes\n' \
	unknown.conf:3
bad_config writable.conf 'log-level = debug\n' writable.conf 666

# --- nodaemon: ssh works but there is no rpmemd; or no sshd listens
RPMEM_CMD=$(printf '%q' "$tmp/no-such-dir/rpmemd")
RPMEM_TEST_EXPECT_MSG=$tmp/no-such-dir/rpmemd
RPMEM_TEST_DEAD_TARGET=127.0.0.1:$(harness_pick_port)
export RPMEM_CMD RPMEM_TEST_EXPECT_MSG RPMEM_TEST_DEAD_TARGET
run_group nodaemon nodaemon
unset RPMEM_TEST_EXPECT_MSG RPMEM_TEST_DEAD_TARGET

# --- fakedaemon: malformed answers fail cleanly, never crash/hang (R8, R9)
# fake -- run the fakedaemon group against scenario $1; errnos $2 allowed,
# rpmem_errormsg() to contain $3 when given
fake() {
	RPMEM_CMD="bash $(printf '%q' "$self") --fake-rpmemd $1 $(printf '%q' \
		"$tmp") $dead_port"
	RPMEM_TEST_EXPECT_ERRNO=$2
	RPMEM_TEST_EXPECT_MSG=${3:-}
	export RPMEM_CMD RPMEM_TEST_EXPECT_ERRNO RPMEM_TEST_EXPECT_MSG
	run_group "fakedaemon $1" fakedaemon
}
dead_port=$(harness_pick_port)
fake short-status ECONNRESET
fake error-status EACCES
fake no-response ECONNRESET
fake truncated ECONNRESET,EPROTO
fake wrong-type EPROTO
fake request-as-response EPROTO,ECONNRESET
fake huge-size EPROTO
fake bad-status-code EPROTO
fake bad-port EPROTO
fake bad-method EPROTO
fake weak-security EPROTO
# well-formed answers a real rpmemd never gives: each refused naming what
# is wrong, the refused session still closed; a lane port nobody listens
# on; a long stderr whose last line is still the message
fake no-extension EPROTO "answered without the extension block"
fake zero-lanes EPROTO "rpmemd announced 0 lanes for"
fake many-lanes EPROTO "rpmemd announced 99 lanes for"
fake small-buffer EPROTO "rpmemd chose a 4096-byte buffer"
fake unknown-security EPROTO "chose lane security 7, unknown here"
fake no-cipher EPROTO "chose cipher 0 for lane security encrypt"
fake close-refused EPROTO "rpmemd announced 0 lanes for"
fake dead-lanes ECONNREFUSED "connecting 1 lanes to 127.0.0.1 port $dead_port"
fake stderr-flood EACCES "rpmemd failed to start: fake rpmemd: the last words"
# PMDK 1.12's rpmemd is recognised; spoken to only when allowed, without
# lane security and not over tcp
fake pmdk-daemon EPROTONOSUPPORT "set RPMEM_ALLOW_PMDK_DAEMON=1 to use"
RPMEM_ALLOW_PMDK_DAEMON=1 RPMEM_LANE_SECURITY=encrypt fake pmdk-daemon \
	EPROTONOSUPPORT "which has no lane security, and RPMEM_LANE_SECURITY"
RPMEM_ALLOW_PMDK_DAEMON=1 RPMEM_PROVIDER=tcp fake pmdk-daemon EMEDIUMTYPE \
	"which has no tcp provider (RPMEM_PROVIDER=tcp)"
RPMEM_ALLOW_PMDK_DAEMON=1 fake pmdk-daemon EACCES \
	"rpmemd failed to start: fake PMDK rpmemd: refusing to start"
unset RPMEM_TEST_EXPECT_MSG

# --- cmdlist: RPMEM_CMD "A|B" hands A and B to successive sessions, in
# order; the rpmem tool creates and removes two remote replicas
cmdlist() {
	local set=$tmp/cmdlist.set rpmem=$top_builddir/rpmem log n
	RPMEM_CMD="$(harness_rpmemd_cmd "$poolset_dir" \
		"$log_dir/cmdlist-a.log" -c "$conf")|$(harness_rpmemd_cmd \
		"$poolset_dir" "$log_dir/cmdlist-b.log" -c "$conf")"
	export RPMEM_CMD
	printf 'PMEMPOOLSET\n2M %s/cl-a.part\n' "$part_dir" \
		>"$poolset_dir/cl-a.set"
	printf 'PMEMPOOLSET\n2M %s/cl-b.part\n' "$part_dir" \
		>"$poolset_dir/cl-b.set"
	printf 'PMEMPOOLSET\n2M %s/cl-local.part\nREPLICA %s cl-a.set\n%s\n' \
		"$part_dir" "$HARNESS_TARGET" "REPLICA $HARNESS_TARGET cl-b.set" \
		>"$set"
	"$rpmem" create "$set" && "$rpmem" rm "$set" || return 1
	rm -f "$poolset_dir"/cl-?.set "$set"
	for log in a b; do
		# one create and one remove session each, in that order
		n=$(grep -c 'session: pid' "$log_dir/cmdlist-$log.log") || :
		if [[ $n != 2 ]] || ! grep -q "CREATE: desc 'cl-$log.set'" \
				"$log_dir/cmdlist-$log.log"; then
			tu_fail "cmdlist: command $log served $n sessions," \
				"or not replica cl-$log.set"
			return 1
		fi
	done
}
echo "=== cmdlist: RPMEM_CMD with two commands"
if cmdlist && check_after cmdlist; then
	echo "=== cmdlist: PASS"
else
	failed+=(cmdlist)
	echo "=== cmdlist: FAIL"
fi

if ((${#failed[@]} != 0)); then
	printf 'control.sh: FAILED: %s\n' "${failed[@]}"
	exit 1
fi
echo "control.sh: all groups passed"
