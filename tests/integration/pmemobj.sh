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
#   async-replica          the same through an async replica
#                          (RPMEM_REPLICATION=async, doc/async.md): the
#                          closes drain the log, the replica rebuilds
#                          the master
#   async-crash            the master SIGKILLed while its transactions
#                          stream to an async replica: the replica's
#                          image opens with libpmemobj and holds the
#                          first n transactions whole, for some n
#   degraded-crash         the same after the sync replica was lost
#                          under continue (the record says behind):
#                          pmempool sync never pushes the new master
#                          part over the replica
#   mixed-modes            two REPLICA lines, one sync, one async by its
#                          section of librpmem.conf: each alone rebuilds
#                          the master
#   create-refusals        R13, R14: pmemobj_create fails cleanly on a
#                          replica too small, already a pool, or
#                          SINGLEHDR mismatched
#   pool-in-use            R12: a second open of a remote pool gets EBUSY
#                          while the first session carries on
#
# A new scenario is a function sc_NAME (dashes of NAME as _) below and
# NAME in the list `all` before the runner.  It runs in a subshell under
# set -e with its own directories (setup) and asserts with the helpers of
# pmemobj_lib.sh: ok, ko, expect, logged (which print what differed), set
# files by remote_set and local_set; obj runs the workload program.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=../common/harness.sh
. "$(dirname "${BASH_SOURCE[0]}")/../common/harness.sh"

# shellcheck source-path=SCRIPTDIR source=pmemobj_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/pmemobj_lib.sh"

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
M=$((1024 * 1024))

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
	tu_rmtmp "$tmp" "${PMEMOBJ_SH_KEEP:-0}"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

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

# obj -- run the workload program: create|extend|verify SET NTX
obj() {
	ok "pmemobj $1 $(basename -- "$2") $3" "$prog" "$@"
}

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
	tu_expect "remote part holds a PMEMOBJ header (no SINGLEHDR)" \
		is_pmemobj_hdr "$(rpart remote.set 0)" 0
	tu_expect "remote part has the size its set names" \
		has_size "$(rpart remote.set 0)" $((16 * M))
	obj verify "$set" "$NTX"
	mark=$(log_mark)
	obj extend "$set" "$NTX_MORE"
	logged "pmemobj_open opened the remote pool" "$mark" \
		"request OPEN: desc 'remote.set' size $((16 * M)) "
	obj verify "$set" $((NTX + NTX_MORE))
	synced_back "$set" "the deleted master from the replica" \
		$((NTX + NTX_MORE)) "$(lpart pool 0)"
	tu_expect "master part is back" has_size "$(lpart pool 0)" $((16 * M))
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
	tu_expect "libpmempool ran rpmemd --remove for the broken replica" \
		removed_since "$calls" mirror/remote.set
	logged "sync created the remote pool anew" "$mark" \
		"request CREATE: desc 'mirror/remote.set' "
	tu_expect "remote part recreated with its size" \
		has_size "$part" $((24 * M))
	tu_expect "recreated part holds a PMEMOBJ header" is_pmemobj_hdr "$part" 0
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
	tu_expect "damaged header bytes restored" \
		same_bytes "$part" 256 64 "$d/hdr.good"
	tu_expect "recreated part holds a PMEMOBJ header" is_pmemobj_hdr "$part" 0
	synced_back "$set" "the master from the recreated replica" "$NTX" \
		"$(lpart pool 0)"
	ok "pmempool rm -a removes the pool" "$pmempool" rm -a "$set"
	tu_expect "pmempool rm -a removed the remote set file" \
		gone "$psd/mirror/remote.set"
}

# sc_rm_remote -- scenario 3
sc_rm_remote() {
	local set=$ld/pool.set part
	remote_set remote.set 0 16M
	local_set pool 0 16M remote.set
	part=$(rpart remote.set 0)

	ok "pmempool create obj" "$pmempool" create obj --layout=rm "$set"
	tu_expect "remote part created" has_size "$part" $((16 * M))
	ok "pmempool rm removes the parts" "$pmempool" rm "$set"
	tu_expect "pmempool rm removed the remote part" gone "$part"
	tu_expect "pmempool rm removed the local part" gone "$(lpart pool 0)"
	tu_expect "pmempool rm kept the remote set file" test -f "$psd/remote.set"
	tu_expect "pmempool rm kept the local set file" test -f "$set"
	ok "pmempool rm -f succeeds with every part gone" \
		"$pmempool" rm -f "$set"

	ok "pmempool create obj" "$pmempool" create obj --layout=rm "$set"
	rm -- "$part"
	ok "pmempool rm -f succeeds on a set whose remote part is gone" \
		"$pmempool" rm -f "$set"
	tu_expect "pmempool rm -f removed the local part" gone "$(lpart pool 0)"

	ok "pmempool create obj" "$pmempool" create obj --layout=rm "$set"
	rm -- "$part"
	ko "pmempool rm (no -f) reports the missing remote part (ENOENT)" \
		'No such file or directory' "$pmempool" rm "$set"
	rm -f -- "$(lpart pool 0)"

	ok "pmempool create obj" "$pmempool" create obj --layout=rm "$set"
	ok "pmempool rm -r removes parts and remote set files" \
		"$pmempool" rm -r "$set"
	tu_expect "pmempool rm -r removed the remote part" gone "$part"
	tu_expect "pmempool rm -r removed the remote set file" \
		gone "$psd/remote.set"
	tu_expect "pmempool rm -r removed the local part" gone "$(lpart pool 0)"
	tu_expect "pmempool rm -r kept the local set file" test -f "$set"

	remote_set remote.set 0 16M
	ok "pmempool create obj" "$pmempool" create obj --layout=rm "$set"
	ok "pmempool rm -a removes everything" "$pmempool" rm -a "$set"
	tu_expect "pmempool rm -a removed the remote part" gone "$part"
	tu_expect "pmempool rm -a removed the remote set file" \
		gone "$psd/remote.set"
	tu_expect "pmempool rm -a removed the local part" gone "$(lpart pool 0)"
	tu_expect "pmempool rm -a removed the local set file" gone "$set"
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
	tu_expect "remote part created" has_size "$part" $((20 * M))
	obj verify "$dst" "$NTX"
	obj extend "$dst" "$NTX_MORE"
	rm -- "$(lpart pool 0)"
	ok "pmempool sync rebuilds the master from the added replica" \
		"$pmempool" sync "$dst"
	obj verify "$dst" $((NTX + NTX_MORE))

	mark=$(log_mark)
	ok "pmempool transform removes the remote replica" \
		"$pmempool" transform "$dst" "$src"
	tu_expect "transform removed the remote part" gone "$part"
	tu_expect "transform kept the remote set file" test -f "$psd/remote.set"
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
	tu_expect "pmempool info lists replica 1 as remote" \
		grep -Eq '^Replica 1 - remote' "$base.out"
	tu_expect "pmempool info names the node" \
		grep -Eq "^node +: $HARNESS_TARGET\$" "$base.out"
	tu_expect "pmempool info names the remote pool set" \
		grep -Eq '^pool set +: info/remote.set$' "$base.out"
	tu_expect "pmempool info shows the layout" \
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
	tu_expect "pmemobj_create created both remote pools ($n)" test "$n" = 2
	mark=$(log_mark)
	obj extend "$set" "$NTX_MORE"
	n=$(count_logged "$mark" "request OPEN: desc '(a/one|two).set' ")
	tu_expect "pmemobj_open opened both remote pools ($n)" test "$n" = 2
	obj verify "$set" $((NTX + NTX_MORE))
	ok "pmempool info" "$pmempool" info "$set"
	tu_expect "pmempool info lists two remote replicas" \
		test "$(grep -Ec '^Replica [12] - remote' "$base.out")" = 2

	say "master and replica one lost: rebuilt from replica two"
	synced_back "$set" "master and replica one from replica two" \
		$((NTX + NTX_MORE)) "$(lpart pool 0)" "$(rpart a/one.set 0)"
	tu_expect "replica one recreated" \
		has_size "$(rpart a/one.set 0)" $((24 * M))

	say "master and replica two lost: rebuilt from replica one"
	synced_back "$set" "master and replica two from replica one" \
		$((NTX + NTX_MORE)) "$(lpart pool 0)" "$(rpart two.set 0)" \
		"$(rpart two.set 1)"
	tu_expect "replica two recreated" has_size "$(rpart two.set 1)" $((12 * M))
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
	tu_expect "sync recreated nothing" \
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
	tu_expect "remote part 0 holds a PMEMOBJ header with SINGLEHDR" \
		is_pmemobj_hdr "$(rpart remote.set 0)" 1
	# NUL bytes dropped: command substitution would warn of each
	tu_expect "remote part 1 has no header" test "$(head -c 7 -- \
		"$(rpart remote.set 1)" | tr -d '\0')" != PMEMOBJ
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

# sc_async_replica -- libpmemobj through an async replica: its threads'
# transactions return from the send log, each close drains it
sc_async_replica() {
	local set=$ld/pool.set mark
	remote_set remote.set 0 16M
	local_set pool 0 16M remote.set
	export RPMEM_REPLICATION=async
	mark=$(log_mark)
	obj create "$set" 300
	ok "pmemobj threads on an async replica: 4 threads, 250 each" \
		"$prog" threads "$set" 4 250
	logged "rpmemd applied an async replica's records" "$mark" \
		"an async replica's records, applied in order"
	obj verify "$set" 300
	synced_back "$set" "the master from the async replica" 300 \
		"$(lpart pool 0)"
	ok "pmempool rm -a removes the pool" "$pmempool" rm -a "$set"
}

# crash_rebuild MODE -- the master SIGKILLed while its transactions go
# on: MODE async, while they stream to an async replica; MODE degraded,
# after its sync replica's rpmemd was SIGKILLed under continue (the record
# says "not in sync", no reconnect in time). Either way the replica holds
# a prefix the master's record calls behind, and the master's part is
# lost: pmempool sync makes it anew and reads the replica into it (the
# new part is never pushed over the replica), libpmemobj opens the copy
# and it holds the first n transactions whole
crash_rebuild() {
	local mode=$1 set=$ld/pool.set mark pid i got
	remote_set remote.set 0 16M
	local_set pool 0 16M remote.set
	case $mode in
	async) export RPMEM_REPLICATION=async ;;
	degraded) export RPMEM_ON_REPLICA_LOSS=continue \
		RPMEM_RECONNECT_MIN_MS=600000 ;;
	esac
	obj create "$set" "$NTX"
	mark=$(log_mark)
	"$prog" extend "$set" 1000000 >"$d/extend.out" 2>"$d/extend.err" &
	pid=$!
	# the extension's session started (and, async, shipped records)
	for ((i = 0; i < 300; i++)); do
		(($(count_logged "$mark" "${Crash_wait[$mode]}") > 0)) && break
		tu_nap 0.1
	done
	tu_expect "the extension's session: ${Crash_wait[$mode]}" \
		test "$(count_logged "$mark" "${Crash_wait[$mode]}")" -gt 0
	if [[ $mode == degraded ]]; then
		local pids
		mapfile -t pids < <(log_since "$mark" | sed -n \
			"s/^${TU_STAMP}rpmemd: session: pid \\([0-9]*\\) .*/\\1/p")
		kill -KILL "${pids[@]}"
		for ((i = 0; i < 300; i++)); do
			grep -qx 'in_sync 0' "$RPMEM_STATE_DIR"/*.replica \
				2>/dev/null && break
			tu_nap 0.1
		done
	fi
	tu_expect "the record calls the replica behind" \
		grep -qx 'in_sync 0' "$RPMEM_STATE_DIR"/*.replica
	kill -KILL "$pid"
	wait "$pid" || :
	tu_expect "the master died mid-stream" test ! -s "$d/extend.out"
	rm -- "$(lpart pool 0)"
	ok "pmempool sync rebuilds the master from its replica" \
		"$pmempool" sync "$set"
	caught_up "$set"
	mark=$(log_mark)
	ok "the copy opens and holds the first n transactions whole" \
		"$prog" verify "$set" "$NTX" $((NTX + 1000000))
	# the resync made the replica this master's (GEN ADOPT): the crashed
	# master's unended session no longer makes an open compare
	tu_expect "the open after the first resync compares nothing" \
		test "$(count_logged "$mark" 'request HASH')" = 0
	got=$(sed -n 's/.*verified \([0-9]*\) transactions.*/\1/p' \
		"$base.out")
	say "the replica held $got transactions ($NTX before the extension)"
	ok "pmempool rm -a removes the pool" "$pmempool" rm -a "$set"
}

# hold_start SET NTX -- `pmemobj hold` in the background, talked to
# through two fifos: Hpid, Hin, Hout set, and Hline to what it said
# first ("held" once the pool is open; empty if it did not in 60 s)
hold_start() {
	mkfifo -m 600 "$d/to-holder" "$d/from-holder"
	"$prog" hold "$1" "$2" <"$d/to-holder" >"$d/from-holder" \
		2>"$d/hold.err" &
	Hpid=$!
	exec {Hin}>"$d/to-holder" {Hout}<"$d/from-holder"
	read -r -t 60 Hline <&"$Hout" || Hline=
}

# hold_end -- tell the holder to go on, wait for it; its exit status
hold_end() {
	local rc=0
	echo go >&"$Hin"
	exec {Hin}>&-
	cat <&"$Hout" >/dev/null
	exec {Hout}<&-
	wait "$Hpid" || rc=$?
	rm -f -- "$d/to-holder" "$d/from-holder"
	return "$rc"
}

# caught_up SET -- an open of SET held until its handle is connected:
# the first open after a rebuild compares the copies in the background,
# and libpmemobj unmaps the master before it closes the replica, so a
# resync still running at pmemobj_close reads unmapped memory (a known
# bug, SIGSEGV in the resync's hashing; see the issue note)
caught_up() {
	local line i st=
	hold_start "$1" 0
	line=$Hline
	for ((i = 0; i < 600 && ${#line}; i++)); do
		st=$(awk '$1 == "state" { print $2 }' \
			"$RPMEM_STATE_DIR/run/$Hpid-"*.status 2>/dev/null)
		[[ $st == connected ]] && break
		tu_nap 0.1
	done
	hold_end || line=
	tu_expect "the first open after the rebuild caught the replica up" \
		test "$st" = connected -a -n "$line"
}

# what crash_rebuild waits for in rpmemd's log before it kills
declare -A Crash_wait=(
	[async]="an async replica's records"
	[degraded]="lanes connected"
)

# sc_async_crash, sc_degraded_crash -- crash_rebuild's two modes
sc_async_crash() {
	crash_rebuild async
}
sc_degraded_crash() {
	crash_rebuild degraded
}

# sc_mixed_modes -- a sync and an async replica of one pool, the async
# one named by its section of the client's configuration file
sc_mixed_modes() {
	local set=$ld/pool.set mark
	remote_set one.set 0 16M
	remote_set two.set 0 16M
	local_set pool 0 16M one.set two.set
	printf '[second-site]\ntarget = %s\npoolset = two.set\nmode = async\n' \
		"$HARNESS_TARGET" >"$ld/librpmem.conf"
	chmod 600 "$ld/librpmem.conf"
	export RPMEM_CONF=$ld/librpmem.conf
	mark=$(log_mark)
	obj create "$set" "$NTX"
	obj extend "$set" "$NTX_MORE"
	tu_expect "one replica's rpmemd applied async records, per open" \
		test "$(count_logged "$mark" "an async replica's records")" = 2
	obj verify "$set" $((NTX + NTX_MORE))
	synced_back "$set" "master and the sync replica from the async one" \
		$((NTX + NTX_MORE)) "$(lpart pool 0)" "$(rpart one.set 0)"
	synced_back "$set" "master and the async replica from the sync one" \
		$((NTX + NTX_MORE)) "$(lpart pool 0)" "$(rpart two.set 0)"
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
		tu_expect "no part $(basename -- "$part") left" gone "$part"
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
	tu_expect "the existing remote pool is untouched" \
		test "$(md5sum <"$(rpart taken.set 0)")" = "$sum"
	rm -- "$(rpart taken.set 0)"
}

# sc_pool_in_use -- R12: a twin of the master (a copy: same uuids) cannot
# open the remote pool while the master's session has it
sc_pool_in_use() {
	local set=$ld/pool.set twin=$ld/twin.set hrc=0 mark
	remote_set remote.set 0 16M
	local_set pool 0 16M remote.set
	local_set twin 0 16M remote.set
	obj create "$set" 300
	cp -- "$(lpart pool 0)" "$(lpart twin 0)"

	# the first process: open, tell "held" through a fifo, then wait for
	# a line on the other fifo (EOF, should this scenario end early)
	hold_start "$set" 100
	tu_expect "the first process has the pool open" test "$Hline" = held
	mark=$(log_mark)
	ko "a second open of the remote pool fails with EBUSY" \
		'remote replica #1 failed \(errno: Device or resource busy\)' \
		"$prog" verify "$twin" 300
	logged "rpmemd refused the second session" "$mark" \
		'OPEN_RESP: status [1-9]'
	hold_end || hrc=$?
	if ((hrc != 0)); then
		show "stderr of the first process" "$d/hold.err"
	fi
	tu_expect "the first session carried on and closed the pool" \
		test "$hrc" = 0
	obj verify "$set" 400
	synced_back "$set" "the master from the replica" 400 \
		"$(lpart pool 0)" "$(lpart twin 0)"
	ok "pmempool rm -a removes the pool" "$pmempool" rm -a "$set"
}

# ---------------------------------------------------------------- runner
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
	async-replica async-crash degraded-crash mixed-modes create-refusals pool-in-use)
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
