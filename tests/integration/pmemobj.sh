#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# pmemobj.sh -- Debian's libpmemobj and pmempool replicate through our librpmem
#
# Run by `make check` from the build tree (top_builddir and top_srcdir are
# exported), or by hand after a build:
#
#   top_builddir=BUILD_DIR tests/integration/pmemobj.sh [SCENARIO...]
#
# The temp dir is under $TMPDIR, else /dev/shm, else /tmp.
# PMEMOBJ_SH_KEEP=1 keeps the temp dir (logs, every command's output).
# Exit status 0 pass, 1 fail; never 77: a machine without sshd, pmempool
# or libpmemobj fails here.  libpmemobj1 and pmempool 1.12.1 dlopen
# "librpmem.so.1" for REPLICA lines; LD_LIBRARY_PATH makes that ours, and
# RPMEM_CMD runs the built rpmemd behind a private sshd on 127.0.0.1.
# tests/integration/pmemobj (pmemobj.c) runs a verifiable transactional
# workload; it does not link librpmem.
#
# A replica differs from the master in a few hundred bytes that
# libpmemobj never flushes (run-time state near the pool descriptor and
# lanes), so no test compares the files: data is proven to be on a
# replica by deleting the master and rebuilding it with `pmempool sync`.
#
# Scenarios (each a test case; after each, no rpmemd that logged a
# session may still run and no file of this run may exist outside the
# temp dir):
#
#   create-replicated      pmemobj_create with one remote replica,
#                          transactions, reopen; master rebuilt from it
#   sync-recreates-replica sync recreates a lost and a damaged replica
#   rm-remote              pmempool rm, rm -f, rm -r, rm -a
#   transform              transform adds a remote replica, removes it
#   info-remote            pmempool info names the remote replica
#   two-replicas           two REPLICA lines; each alone rebuilds master
#   sync-health-check      sync of a healthy set: the 8 KiB open
#   singlehdr              OPTION SINGLEHDR on both sides
#   concurrent-lanes       transactions of 4 threads at once replicate
#   create-refusals        pmemobj_create fails cleanly on a replica too
#                          small, already a pool, or SINGLEHDR mismatched
#   pool-in-use            a second open of a remote pool gets EBUSY while
#                          the first session carries on
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=harness.sh
. "$(dirname "${BASH_SOURCE[0]}")/harness.sh"

prog=$top_builddir/tests/integration/pmemobj
tu_need_built "$prog" "$top_builddir/rpmemd" \
	"$top_builddir/.libs/librpmem.so.1"
pmempool=$(command -v pmempool) || {
	echo "pmemobj.sh: pmempool not found (install pmdk-tools)" >&2
	exit 1
}

# libpmemobj and libpmempool dlopen("librpmem.so.1"): ours, not another
export LD_LIBRARY_PATH="$top_builddir/.libs"

NTX=1000		# transactions of a new pool
NTX_MORE=200		# transactions after a reopen

# rpmemd flushes each persist with msync(2): on tmpfs that costs nothing,
# on a disk it makes the run take twice as long
base=${TMPDIR:-}
if [[ -z $base ]]; then
	base=/tmp
	[[ -d /dev/shm && -w /dev/shm ]] && base=/dev/shm
fi
tmp=$(mktemp -d "$base/rpmem-pmemobj.XXXXXX")
token=${tmp##*.}	# in every file name of this run: strays are findable
log_dir=$tmp/logs
out_dir=$tmp/out
mkdir -p "$log_dir" "$out_dir"
: >"$tmp/start"
failed=()
start=$SECONDS

# cleanup -- stop sshd, remove the temp dir (PMEMOBJ_SH_KEEP=1: keep it)
cleanup() {
	local rc=$?
	trap - EXIT
	harness_stop_sshd "$tmp" || rc=1
	if [[ ${PMEMOBJ_SH_KEEP:-0} == 1 ]]; then
		echo "pmemobj.sh: logs and outputs kept in $tmp"
	else
		rm -rf -- "$tmp"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

# ------------------------------------------------------------ assertions
# These run inside a scenario's subshell under set -e: a failed
# assertion prints why, then returns 1, which ends the scenario.

# say -- a progress line of the current scenario
say() {
	printf -- '--- %s: %s\n' "$sc" "$*"
}

# bad -- report a failed assertion of the current scenario
bad() {
	printf 'FAIL %s: %s\n' "$sc" "$*"
}

# show -- print file $2 under the title $1, if not empty
show() {
	[[ -s $2 ]] || return 0
	printf '    --- %s:\n' "$1"
	tr -d '\r' <"$2" | cat -v | tail -n 60 | sed 's/^/    /'
}

# log_mark -- how many lines the current scenario's rpmemd log has
log_mark() {
	if [[ -f $log ]]; then
		wc -l <"$log"
	else
		echo 0
	fi
}

# log_since -- the lines of the rpmemd log after mark $1
log_since() {
	[[ -f $log ]] || return 0
	tail -n "+$(($1 + 1))" -- "$log"
}

# invoke -- run "$@" with output in files; set cmd_rc, base
invoke() {
	nrun=$((nrun + 1))
	base=$out_dir/$sc.$(printf '%03d' "$nrun")
	printf '%q ' "$@" >"$base.cmd"
	cmd_rc=0
	"$@" >"$base.out" 2>"$base.err" </dev/null || cmd_rc=$?
}

# explain -- the command, its status, its output, the daemons' log since
explain() {
	local mark=$1 why
	if ((cmd_rc > 128)); then
		why="killed by signal $((cmd_rc - 128))"
		why+=" ($(kill -l "$((cmd_rc - 128))"))"
	else
		why="exit status $cmd_rc"
	fi
	printf '    command: %s\n    %s\n' "$(<"$base.cmd")" "$why"
	show stdout "$base.out"
	show stderr "$base.err"
	log_since "$mark" >"$base.log"
	show "rpmemd log of this command" "$base.log"
}

# ok -- "$@" must succeed; $1 names the behaviour
ok() {
	local what=$1 mark
	shift
	mark=$(log_mark)
	invoke "$@"
	if ((cmd_rc != 0)); then
		bad "$what"
		explain "$mark"
		return 1
	fi
	say "ok: $what"
}

# ko -- "$@" must fail with a status (no signal), stderr matching $2
ko() {
	local what=$1 want=$2 mark
	shift 2
	mark=$(log_mark)
	invoke "$@"
	if ((cmd_rc == 0 || cmd_rc > 128)) ||
			! grep -Eq -- "$want" "$base.err"; then
		bad "$what (expected failure with stderr matching '$want')"
		explain "$mark"
		return 1
	fi
	say "ok: $what"
}

# expect -- the test "${@:2}" must hold; $1 names the behaviour
expect() {
	local what=$1
	shift
	local arg
	if ! "$@"; then
		bad "$what"
		printf '    check: %s\n' "$*"
		for arg in "$@"; do
			[[ $arg == /* ]] || continue
			if [[ -e $arg ]]; then
				stat -c '    %n: %F, %s bytes' -- "$arg"
			else
				printf '    %s: does not exist\n' "$arg"
			fi
		done
		return 1
	fi
	say "ok: $what"
}

# logged -- the rpmemd log after mark $2 has a line matching ERE $3
logged() {
	local what=$1 mark=$2 re=$3
	if ! log_since "$mark" | grep -Eq -- "$re"; then
		bad "$what (no rpmemd log line matching '$re')"
		log_since "$mark" >"$out_dir/$sc.since"
		show "rpmemd log since" "$out_dir/$sc.since"
		return 1
	fi
	say "ok: $what"
}

# count_logged -- how many lines after mark $1 match ERE $2
count_logged() {
	log_since "$1" | grep -Ec -- "$2" || :
}

# gone -- no file $1
gone() {
	[[ ! -e $1 ]]
}

# has_size -- file $1 is exactly $2 bytes
has_size() {
	[[ -f $1 && $(stat -c %s -- "$1") == "$2" ]]
}

# hdr_u32 -- little-endian u32 at offset $2 of file $1
hdr_u32() {
	od -An -tu4 -j "$2" -N4 --endian=little -- "$1" | tr -d ' '
}

# is_pmemobj_hdr -- file $1 starts with a PMEMOBJ pool header, SINGLEHDR
# bit (incompat 0x1 at offset 16) as $2 says (0 or 1)
is_pmemobj_hdr() {
	local sig
	sig=$(head -c 7 -- "$1") || return 1
	[[ $sig == PMEMOBJ ]] || return 1
	(( ($(hdr_u32 "$1" 16) & 1) == $2 ))
}

# same_bytes -- $3 bytes at offset $2 of file $1 equal file $4
same_bytes() {
	cmp -s <(dd if="$1" bs=1 skip="$2" count="$3" status=none) "$4"
}

# damage -- overwrite $3 bytes at offset $2 of file $1 with 0xff
damage() {
	head -c "$3" /dev/zero | tr '\0' '\377' |
		dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# removed_since -- an ssh call after line $1 of the harness's record of
# ssh calls ran "--remove $2 --force" (libpmempool's own spawn)
removed_since() {
	tail -n "+$(($1 + 1))" -- "$HARNESS_SSH_CALLS" |
		grep -Fq -- "--remove $2 --force"
}

# obj -- run the workload program: create|extend|verify SET NTX
obj() {
	ok "pmemobj $1 $(basename -- "$2") $3" "$prog" "$@"
}

# --------------------------------------------------------- the scenarios
# setup -- directories, rpmemd command and names for scenario $sc
setup() {
	d=$tmp/$sc
	ld=$d/local		# local parts and set files
	rd=$d/remote		# remote parts
	psd=$d/poolsets		# rpmemd's poolset-dir
	log=$log_dir/$sc.rpmemd.log
	nrun=0
	mkdir -p "$ld" "$rd" "$psd"
	RPMEM_CMD=$(harness_rpmemd_cmd "$psd" "$log" -c "$conf")
	export RPMEM_CMD
}

# remote_set -- write remote set $psd/$1: [SINGLEHDR if $2 = 1] parts $3...
remote_set() {
	local desc=$1 single=$2 size i=0
	shift 2
	mkdir -p -- "$(dirname -- "$psd/$desc")"
	{
		echo PMEMPOOLSET
		((single == 0)) || echo 'OPTION SINGLEHDR'
		for size in "$@"; do
			printf '%s %s/%s-%s.%d.part\n' "$size" "$rd" \
				"${desc//\//_}" "$token" "$i"
			i=$((i + 1))
		done
	} >"$psd/$desc"
}

# rpart -- path of part $2 of remote set $1
rpart() {
	printf '%s/%s-%s.%d.part\n' "$rd" "${1//\//_}" "$token" "$2"
}

# local_set -- write $ld/$1.set: [SINGLEHDR] parts, then REPLICA lines
#   local_set NAME SINGLE "SIZE..." [DESC...]
local_set() {
	local name=$1 single=$2 sizes=$3 size i=0 desc
	shift 3
	{
		echo PMEMPOOLSET
		((single == 0)) || echo 'OPTION SINGLEHDR'
		for size in $sizes; do
			printf '%s %s/%s-%s.%d.part\n' "$size" "$ld" "$name" \
				"$token" "$i"
			i=$((i + 1))
		done
		for desc in "$@"; do
			printf 'REPLICA %s %s\n' "$HARNESS_TARGET" "$desc"
		done
	} >"$ld/$name.set"
}

# lpart -- path of part $2 of local set $1
lpart() {
	printf '%s/%s-%s.%d.part\n' "$ld" "$1" "$token" "$2"
}

M=$((1024 * 1024))

# synced_back SET WHAT NTX FILE... -- the FILEs removed, pmempool sync
# rebuilds WHAT of SET, which then verifies with NTX transactions
synced_back() {
	local set=$1 what=$2 ntx=$3
	shift 3
	rm -- "$@"
	ok "pmempool sync rebuilds $what" "$pmempool" sync "$set"
	obj verify "$set" "$ntx"
}

# sc_create_replicated -- scenario 1
sc_create_replicated() {
	local set=$ld/pool.set mark
	remote_set remote.set 0 16M
	local_set pool 0 16M remote.set
	mark=$(log_mark)
	obj create "$set" "$NTX"
	logged "pmemobj_create created the remote pool" "$mark" \
		"request CREATE: desc 'remote.set' size $((16 * M)) "
	logged "every lane rpmemd granted was connected" "$mark" \
		'lanes connected'
	expect "remote part holds a PMEMOBJ header (no SINGLEHDR)" \
		is_pmemobj_hdr "$(rpart remote.set 0)" 0
	expect "remote part has the size its set names" \
		has_size "$(rpart remote.set 0)" $((16 * M))
	obj verify "$set" "$NTX"
	mark=$(log_mark)
	obj extend "$set" "$NTX_MORE"
	logged "pmemobj_open opened the remote pool" "$mark" \
		"request OPEN: desc 'remote.set' size $((16 * M)) "
	obj verify "$set" $((NTX + NTX_MORE))
	synced_back "$set" "the deleted master from the replica" \
		$((NTX + NTX_MORE)) "$(lpart pool 0)"
	expect "master part is back" has_size "$(lpart pool 0)" $((16 * M))
	ok "pmempool rm -a removes the pool" "$pmempool" rm -a "$set"
}

# sc_sync_recreates_replica -- scenario 2
sc_sync_recreates_replica() {
	local set=$ld/pool.set mark part calls
	remote_set mirror/remote.set 0 24M
	local_set pool 0 16M mirror/remote.set
	part=$(rpart mirror/remote.set 0)
	obj create "$set" "$NTX"

	say "lost replica: the remote part deleted"
	rm -- "$part"
	mark=$(log_mark)
	calls=$(wc -l <"$HARNESS_SSH_CALLS")
	ok "pmempool sync recreates a lost remote replica" \
		"$pmempool" sync "$set"
	expect "libpmempool ran rpmemd --remove for the broken replica" \
		removed_since "$calls" mirror/remote.set
	logged "sync created the remote pool anew" "$mark" \
		"request CREATE: desc 'mirror/remote.set' "
	expect "remote part recreated with its size" \
		has_size "$part" $((24 * M))
	expect "recreated part holds a PMEMOBJ header" is_pmemobj_hdr "$part" 0
	obj verify "$set" "$NTX"
	synced_back "$set" "the master from the recreated replica" "$NTX" \
		"$(lpart pool 0)"

	say "damaged replica: 64 bytes of the remote header overwritten"
	dd if="$part" of="$d/hdr.good" bs=1 skip=256 count=64 status=none
	damage "$part" 256 64
	mark=$(log_mark)
	ok "pmempool sync recreates a replica whose header is damaged" \
		"$pmempool" sync "$set"
	logged "the damaged header was refused on the health-check open" \
		"$mark" "OPEN_RESP: status [1-9]"
	logged "sync created the remote pool anew" "$mark" \
		"request CREATE: desc 'mirror/remote.set' "
	expect "damaged header bytes restored" \
		same_bytes "$part" 256 64 "$d/hdr.good"
	expect "recreated part holds a PMEMOBJ header" is_pmemobj_hdr "$part" 0
	synced_back "$set" "the master from the recreated replica" "$NTX" \
		"$(lpart pool 0)"
	ok "pmempool rm -a removes the pool" "$pmempool" rm -a "$set"
	expect "pmempool rm -a removed the remote set file" \
		gone "$psd/mirror/remote.set"
}

# sc_rm_remote -- scenario 3
sc_rm_remote() {
	local set=$ld/pool.set part
	remote_set remote.set 0 16M
	local_set pool 0 16M remote.set
	part=$(rpart remote.set 0)

	ok "pmempool create obj" "$pmempool" create obj --layout=rm "$set"
	expect "remote part created" has_size "$part" $((16 * M))
	ok "pmempool rm removes the parts" "$pmempool" rm "$set"
	expect "pmempool rm removed the remote part" gone "$part"
	expect "pmempool rm removed the local part" gone "$(lpart pool 0)"
	expect "pmempool rm kept the remote set file" test -f "$psd/remote.set"
	expect "pmempool rm kept the local set file" test -f "$set"
	ok "pmempool rm -f succeeds with every part gone" \
		"$pmempool" rm -f "$set"

	ok "pmempool create obj" "$pmempool" create obj --layout=rm "$set"
	rm -- "$part"
	ok "pmempool rm -f succeeds on a set whose remote part is gone" \
		"$pmempool" rm -f "$set"
	expect "pmempool rm -f removed the local part" gone "$(lpart pool 0)"

	ok "pmempool create obj" "$pmempool" create obj --layout=rm "$set"
	rm -- "$part"
	ko "pmempool rm (no -f) reports the missing remote part (ENOENT)" \
		'No such file or directory' "$pmempool" rm "$set"
	rm -f -- "$(lpart pool 0)"

	ok "pmempool create obj" "$pmempool" create obj --layout=rm "$set"
	ok "pmempool rm -r removes parts and remote set files" \
		"$pmempool" rm -r "$set"
	expect "pmempool rm -r removed the remote part" gone "$part"
	expect "pmempool rm -r removed the remote set file" \
		gone "$psd/remote.set"
	expect "pmempool rm -r removed the local part" gone "$(lpart pool 0)"
	expect "pmempool rm -r kept the local set file" test -f "$set"

	remote_set remote.set 0 16M
	ok "pmempool create obj" "$pmempool" create obj --layout=rm "$set"
	ok "pmempool rm -a removes everything" "$pmempool" rm -a "$set"
	expect "pmempool rm -a removed the remote part" gone "$part"
	expect "pmempool rm -a removed the remote set file" \
		gone "$psd/remote.set"
	expect "pmempool rm -a removed the local part" gone "$(lpart pool 0)"
	expect "pmempool rm -a removed the local set file" gone "$set"
}

# sc_transform -- scenario 4
sc_transform() {
	local src=$ld/pool.set dst=$ld/pool-replicated.set mark part
	remote_set remote.set 0 20M
	local_set pool 0 16M
	# the same local part, plus the remote replica
	{
		cat -- "$src"
		printf 'REPLICA %s remote.set\n' "$HARNESS_TARGET"
	} >"$dst"
	part=$(rpart remote.set 0)

	obj create "$src" "$NTX"
	mark=$(log_mark)
	ok "pmempool transform adds a remote replica" \
		"$pmempool" transform "$src" "$dst"
	logged "transform created the remote pool" "$mark" \
		"request CREATE: desc 'remote.set' size $((16 * M)) "
	expect "remote part created" has_size "$part" $((20 * M))
	obj verify "$dst" "$NTX"
	obj extend "$dst" "$NTX_MORE"
	rm -- "$(lpart pool 0)"
	ok "pmempool sync rebuilds the master from the added replica" \
		"$pmempool" sync "$dst"
	obj verify "$dst" $((NTX + NTX_MORE))

	mark=$(log_mark)
	ok "pmempool transform removes the remote replica" \
		"$pmempool" transform "$dst" "$src"
	expect "transform removed the remote part" gone "$part"
	expect "transform kept the remote set file" test -f "$psd/remote.set"
	obj verify "$src" $((NTX + NTX_MORE))
	ok "pmempool rm -a removes the pool" "$pmempool" rm -a "$src"
	rm -f -- "$dst" "$psd/remote.set"
}

# sc_info_remote -- scenario 5
sc_info_remote() {
	local set=$ld/pool.set
	remote_set info/remote.set 0 16M
	local_set pool 0 16M info/remote.set
	ok "pmempool create obj" "$pmempool" create obj --layout=info "$set"
	ok "pmempool info" "$pmempool" info "$set"
	expect "pmempool info lists replica 1 as remote" \
		grep -Eq '^Replica 1 - remote' "$base.out"
	expect "pmempool info names the node" \
		grep -Eq "^node +: $HARNESS_TARGET\$" "$base.out"
	expect "pmempool info names the remote pool set" \
		grep -Eq '^pool set +: info/remote.set$' "$base.out"
	expect "pmempool info shows the layout" \
		grep -Eq '^Layout +: info$' "$base.out"
	ok "pmempool rm -a removes the pool" "$pmempool" rm -a "$set"
}

# sc_two_replicas -- scenario 6
sc_two_replicas() {
	local set=$ld/pool.set mark n
	remote_set a/one.set 0 24M
	remote_set two.set 0 8M 12M	# 20 MiB - 4 KiB >= 16 MiB
	local_set pool 0 16M a/one.set two.set
	mark=$(log_mark)
	obj create "$set" "$NTX"
	n=$(count_logged "$mark" "request CREATE: desc '(a/one|two).set' ")
	expect "pmemobj_create created both remote pools ($n)" test "$n" = 2
	mark=$(log_mark)
	obj extend "$set" "$NTX_MORE"
	n=$(count_logged "$mark" "request OPEN: desc '(a/one|two).set' ")
	expect "pmemobj_open opened both remote pools ($n)" test "$n" = 2
	obj verify "$set" $((NTX + NTX_MORE))
	ok "pmempool info" "$pmempool" info "$set"
	expect "pmempool info lists two remote replicas" \
		test "$(grep -Ec '^Replica [12] - remote' "$base.out")" = 2

	say "master and replica one lost: rebuilt from replica two"
	synced_back "$set" "master and replica one from replica two" \
		$((NTX + NTX_MORE)) "$(lpart pool 0)" "$(rpart a/one.set 0)"
	expect "replica one recreated" \
		has_size "$(rpart a/one.set 0)" $((24 * M))

	say "master and replica two lost: rebuilt from replica one"
	synced_back "$set" "master and replica two from replica one" \
		$((NTX + NTX_MORE)) "$(lpart pool 0)" "$(rpart two.set 0)" \
		"$(rpart two.set 1)"
	expect "replica two recreated" has_size "$(rpart two.set 1)" $((12 * M))
	ok "pmempool rm -a removes the pool" "$pmempool" rm -a "$set"
}

# sc_sync_health_check -- scenario 7
sc_sync_health_check() {
	local set=$ld/pool.set mark
	remote_set remote.set 0 16M
	local_set pool 0 16M remote.set
	obj create "$set" "$NTX"
	mark=$(log_mark)
	ok "pmempool sync succeeds on a healthy set" "$pmempool" sync "$set"
	logged "sync's health check opened 8 KiB with one lane" "$mark" \
		"request OPEN: desc 'remote.set' size 8192 nlanes 1 "
	logged "rpmemd accepted the 8 KiB open" "$mark" \
		'response OPEN_RESP: status 0 '
	expect "sync recreated nothing" \
		test "$(count_logged "$mark" 'request CREATE')" = 0
	obj verify "$set" "$NTX"
	ok "pmempool rm -a removes the pool" "$pmempool" rm -a "$set"
}

# sc_singlehdr -- scenario 8
sc_singlehdr() {
	local set=$ld/pool.set
	remote_set remote.set 1 8M 8M
	local_set pool 1 "8M 8M" remote.set
	obj create "$set" "$NTX"
	expect "remote part 0 holds a PMEMOBJ header with SINGLEHDR" \
		is_pmemobj_hdr "$(rpart remote.set 0)" 1
	expect "remote part 1 has no header" \
		test "$(head -c 7 -- "$(rpart remote.set 1)")" != PMEMOBJ
	obj verify "$set" "$NTX"
	obj extend "$set" "$NTX_MORE"
	obj verify "$set" $((NTX + NTX_MORE))
	synced_back "$set" "the SINGLEHDR master from the replica" \
		$((NTX + NTX_MORE)) "$(lpart pool 0)" "$(lpart pool 1)"
	ok "pmempool rm -a removes the pool" "$pmempool" rm -a "$set"
}

# sc_concurrent_lanes -- threads in transactions at once, each on its
# libpmemobj lane and so on its own rpmem lane
sc_concurrent_lanes() {
	local set=$ld/pool.set mark
	remote_set remote.set 0 16M
	local_set pool 0 16M remote.set
	obj create "$set" 300
	mark=$(log_mark)
	ok "pmemobj threads: 4 threads, 250 transactions each, at once" \
		"$prog" threads "$set" 4 250
	logged "the session has more than one lane for the threads" "$mark" \
		'([2-9]|[1-9][0-9]+) lanes connected'
	obj verify "$set" 300
	synced_back "$set" "the master from the replica" 300 "$(lpart pool 0)"
	ok "pmempool rm -a removes the pool" "$pmempool" rm -a "$set"
}

# refused -- pmemobj create on $1 fails with errno text $2, rpmemd
# logging ERE $3; nothing of the pool is left (parts $4...)
refused() {
	local set=$1 err=$2 re=$3 part mark
	shift 3
	mark=$(log_mark)
	ko "pmemobj_create on $(basename -- "$set") fails ($err)" \
		"creating remote replica #1 failed \\(errno: $err\\)" \
		"$prog" create "$set" 10
	logged "rpmemd named the reason" "$mark" "$re"
	logged "rpmemd refused the CREATE" "$mark" \
		'response CREATE_RESP: status [1-9]'
	for part in "$@"; do
		expect "no part $(basename -- "$part") left" gone "$part"
	done
}

# sc_create_refusals -- R13, R14: a refused remote create leaves nothing
sc_create_refusals() {
	local sum
	remote_set small.set 0 8M
	local_set small 0 16M small.set
	refused "$ld/small.set" 'File too large' \
		"is $((8 * M)) bytes, $((16 * M)) requested" \
		"$(lpart small 0)" "$(rpart small.set 0)"

	remote_set single.set 1 16M
	local_set single 0 16M single.set
	refused "$ld/single.set" 'Invalid argument' 'SINGLEHDR set' \
		"$(lpart single 0)" "$(rpart single.set 0)"
	remote_set multi.set 0 16M
	local_set multi 1 16M multi.set
	refused "$ld/multi.set" 'Invalid argument' 'SINGLEHDR absent' \
		"$(lpart multi 0)" "$(rpart multi.set 0)"

	remote_set taken.set 0 16M
	local_set taken 0 16M taken.set
	obj create "$ld/taken.set" 10
	rm -- "$(lpart taken 0)"
	sum=$(md5sum <"$(rpart taken.set 0)")
	refused "$ld/taken.set" 'File exists' 'exists' "$(lpart taken 0)"
	expect "the existing remote pool is untouched" \
		test "$(md5sum <"$(rpart taken.set 0)")" = "$sum"
	rm -- "$(rpart taken.set 0)"
}

# sc_pool_in_use -- R12: a twin of the master (a copy: same uuids) cannot
# open the remote pool while the master's session has it
sc_pool_in_use() {
	local set=$ld/pool.set twin=$ld/twin.set line hpid hin hout hrc=0 mark
	remote_set remote.set 0 16M
	local_set pool 0 16M remote.set
	local_set twin 0 16M remote.set
	obj create "$set" 300
	cp -- "$(lpart pool 0)" "$(lpart twin 0)"

	# the first process: open, tell "held" through a fifo, then wait for
	# a line on the other fifo (EOF, should this scenario end early)
	mkfifo -m 600 "$d/to-holder" "$d/from-holder"
	"$prog" hold "$set" 100 <"$d/to-holder" >"$d/from-holder" \
		2>"$d/hold.err" &
	hpid=$!
	exec {hin}>"$d/to-holder" {hout}<"$d/from-holder"
	read -r -t 60 line <&"$hout" || line=
	expect "the first process has the pool open" test "$line" = held
	mark=$(log_mark)
	ko "a second open of the remote pool fails with EBUSY" \
		'remote replica #1 failed \(errno: Device or resource busy\)' \
		"$prog" verify "$twin" 300
	logged "rpmemd refused the second session" "$mark" \
		'OPEN_RESP: status [1-9]'
	echo go >&"$hin"
	exec {hin}>&-
	cat <&"$hout" >/dev/null
	exec {hout}<&-
	wait "$hpid" || hrc=$?
	if ((hrc != 0)); then
		show "stderr of the first process" "$d/hold.err"
	fi
	expect "the first session carried on and closed the pool" \
		test "$hrc" = 0
	obj verify "$set" 400
	synced_back "$set" "the master from the replica" 400 \
		"$(lpart pool 0)" "$(lpart twin 0)"
	ok "pmempool rm -a removes the pool" "$pmempool" rm -a "$set"
}

# ----------------------------------------------------------- after each
# log_pids -- pids of every rpmemd that logged a session in log $1
log_pids() {
	[[ -f $1 ]] || return 0
	sed -n 's/^rpmemd: session: pid \([0-9][0-9]*\) .*/\1/p' -- "$1" |
		sort -u
}

# alive -- pid $1 runs (not a zombie) and its argv names this run
alive() {
	local state cmd
	state=$(sed 's/.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null) ||
		return 1
	[[ $state != Z && $state != X ]] || return 1
	cmd=$(tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline") || return 1
	[[ $cmd == *"$tmp"* ]]
}

# leftovers -- live processes whose argv names the temp dir, but sshd
leftovers() {
	local sshd_pid pid
	sshd_pid=$(harness_sshd_pid "$tmp") || sshd_pid=
	for pid in /proc/[0-9]*; do
		pid=${pid#/proc/}
		[[ $pid != "$sshd_pid" && $pid != "$$" ]] || continue
		[[ $pid != "$BASHPID" ]] || continue
		alive "$pid" && printf '%s\n' "$pid"
	done
	return 0
}

# strays -- files of this run outside the temp dir, where a path bug
# would put them: the login directory, /tmp, /dev/shm, /, the build and
# source trees and the current directory
strays() {
	find "$HOME" /tmp /dev/shm / "$top_builddir" "$top_srcdir" "$PWD" \
		-xdev -maxdepth 3 -path "$tmp" -prune -o -name "*$token*" \
		-print 2>/dev/null | sort -u
}

# check_after -- no rpmemd of scenario $1 running, no stray files
check_after() {
	local name=$1 passed=$2 deadline pid daemons=() others=() stray n
	mapfile -t daemons < <(log_pids "$log_dir/$name.rpmemd.log")
	n=${#daemons[@]}
	deadline=$((SECONDS + 10))
	while :; do
		others=()
		for pid in "${daemons[@]}"; do
			alive "$pid" && others+=("$pid")
		done
		mapfile -t -O "${#others[@]}" others < <(leftovers)
		((${#others[@]} != 0 && SECONDS < deadline)) || break
		sleep 0.1
	done
	if ((n == 0)); then
		printf 'FAIL %s: no rpmemd logged a session\n' "$name"
		return 1
	fi
	if ((${#others[@]} != 0)); then
		printf 'FAIL %s: still running 10 s after the scenario:\n' \
			"$name"
		ps -o pid,ppid,stat,etime,args \
			-p "$(IFS=,; echo "${others[*]}")" || :
		# ours for sure: their argv names our private temp dir
		kill -KILL "${others[@]}" 2>/dev/null || :
		return 1
	fi
	printf -- '--- %s: ok: all %d rpmemd sessions ended\n' "$name" "$n"
	stray=$(strays)
	if [[ -n $stray ]]; then
		printf 'FAIL %s: files of this run outside %s:\n%s\n' \
			"$name" "$tmp" "$stray"
		return 1
	fi
	if [[ $passed == yes ]]; then
		stray=$(find "$tmp/$name" -name '*.part')
		if [[ -n $stray ]]; then
			printf 'FAIL %s: part files left after pmempool rm' \
				"$name"
			printf ':\n%s\n' "$stray"
			return 1
		fi
	fi
}

# scenario -- run scenario $1 (function sc_$1 with - as _) and check after
scenario() {
	local name=$1 fn=sc_${1//-/_} result=PASS passed=yes rc t0=$SECONDS
	printf '=== %s\n' "$name"
	# errexit works in the subshell only outside an if, || or &&
	set +e
	(
		set -e
		sc=$name
		setup
		"$fn"
	)
	rc=$?
	set -e
	((rc == 0)) || { result=FAIL; passed=no; }
	check_after "$name" "$passed" || result=FAIL
	rm -rf -- "${tmp:?}/$name"
	[[ $result == PASS ]] || failed+=("$name")
	printf '=== %s: %s (%d s)\n' "$name" "$result" $((SECONDS - t0))
}

all=(create-replicated sync-recreates-replica rm-remote transform
	info-remote two-replicas sync-health-check singlehdr concurrent-lanes
	create-refusals pool-in-use)
chosen=("$@")
((${#chosen[@]} != 0)) || chosen=("${all[@]}")
for name in "${chosen[@]}"; do
	if ! declare -F "sc_${name//-/_}" >/dev/null; then
		echo "pmemobj.sh: unknown scenario '$name';" \
			"known: ${all[*]}" >&2
		exit 1
	fi
done

harness_start_sshd "$tmp" || {
	echo "pmemobj.sh: cannot start a private sshd on 127.0.0.1" \
		"(install openssh-server; SSHD=${SSHD:-unset})" >&2
	exit 1
}

# a private config keeps /etc/rpmemd and ~/.rpmemd.conf out of the test
conf=$tmp/rpmemd.conf
printf '# pmemobj.sh: rpmemd reads only this file\nlog-level = debug\n' \
	>"$conf"
chmod 600 "$conf"

for name in "${chosen[@]}"; do
	scenario "$name"
done

echo "pmemobj.sh: ${#chosen[@]} scenarios in $((SECONDS - start)) s"
if ((${#failed[@]} != 0)); then
	printf 'pmemobj.sh: FAILED: %s\n' "${failed[@]}"
	exit 1
fi
echo "pmemobj.sh: all scenarios passed"
