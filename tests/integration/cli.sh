#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# cli.sh -- the rpmem tool end to end: create, info, verify, sync, rm
#
# Run by `make check` from the build tree (top_builddir and top_srcdir are
# exported), or by hand after a build:
#
#   top_builddir=BUILD_DIR tests/integration/cli.sh
#
# Exit status 0 pass, 1 fail; never 77: a machine without sshd fails here.
# One pool set: a local master of two 32 MiB parts and one remote replica
# of 64 MiB served by the built rpmemd behind a private sshd on
# 127.0.0.1.  Each step asserts the tool's exit status and what it says;
# the first failure ends the run with the tool's output and the logs.
# The interrupted-sync step covers scenario R18.  A second pool set,
# made by Debian's pmempool through our librpmem, shows that verify and
# sync leave out exactly libpmemobj's run-time state and nothing else.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=../common/harness.sh
. "$(dirname "${BASH_SOURCE[0]}")/../common/harness.sh"

rpmem=$top_builddir/rpmem
tu_need_built "$rpmem" "$top_builddir/rpmemd" \
	"$top_builddir/.libs/librpmem.so.1"
for p in python3 flock cmp pmempool; do
	if ! command -v "$p" >/dev/null; then
		echo "cli.sh: $p is needed" >&2
		exit 1
	fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rpmem-cli.XXXXXX")
poolset_dir=$tmp/poolsets
part_dir=$tmp/parts
log_dir=$tmp/logs
mkdir -p "$poolset_dir" "$part_dir" "$log_dir"
start=$SECONDS
sync_pid=

# cleanup -- stop what we started, show logs on failure, remove the dir
cleanup() {
	local rc=$? f
	trap - EXIT
	if [[ -n $sync_pid ]]; then
		kill -KILL "$sync_pid" 2>/dev/null || :
	fi
	harness_stop_sshd "$tmp" || rc=1
	if ((rc != 0)); then
		for f in "$log_dir"/* "$tmp/ssh/sshd.log"; do
			[[ -s $f ]] || continue
			printf -- '--- %s (last 60 lines) ---\n' "$f"
			tail -n 60 -- "$f" | cat -v
		done
	fi
	rm -rf -- "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

# fail -- report a failed assertion with the last command's output; exit
fail() {
	tu_fail "$*"
	printf -- '--- stdout of the last rpmem command ---\n%s\n' "$out"
	printf -- '--- stderr ---\n'
	cat -- "$tmp/err" 2>/dev/null || :
	exit 1
}

# run -- `rpmem ARGS` by tu_try: stdout in $out (and $tmp/out), stderr
# in $tmp/err, status $rc; tu.sh's tu_status and tu_line check them (a
# failed one ends the run: set -e)
run() {
	tu_try "$rpmem" "$@"
	out=$(<"$tmp/out")
}

# step -- announce a step
step() {
	printf '=== %s\n' "$*"
}

harness_start_sshd "$tmp" || {
	echo "cli.sh: cannot start a private sshd on 127.0.0.1" >&2
	exit 1
}
conf=$tmp/rpmemd.conf
printf '# cli.sh: rpmemd reads only this file\n' >"$conf"
chmod 600 "$conf"
RPMEM_CMD=$(harness_rpmemd_cmd "$poolset_dir" "$log_dir/rpmemd.log" \
	-c "$conf")
export RPMEM_CMD
export RPMEM_TIMEOUT=30

MIB=$((1024 * 1024))
PART=$((32 * MIB))			# two local parts, a header each
SIZE=$((2 * PART - 4096))		# the pool
m0=$part_dir/master.0
m1=$part_dir/master.1
r0=$part_dir/remote.0
set=$tmp/cli.set
rdesc=cli-remote.set
printf 'PMEMPOOLSET\n%s %s\n%s %s\nREPLICA %s %s\n' "$PART" "$m0" \
	"$PART" "$m1" "$HARNESS_TARGET" "$rdesc" >"$set"
printf 'PMEMPOOLSET\n64M %s\n' "$r0" >"$poolset_dir/$rdesc"
replica1="replica 1 ($HARNESS_TARGET $rdesc)"

# master_bytes -- $2 bytes at pool offset $1 of the master, to stdout
master_bytes() {
	local off=$1 len=$2
	if ((off < PART)); then
		dd if="$m0" bs=1 skip="$off" count="$len" status=none
	else
		dd if="$m1" bs=1 skip=$((off - PART + 4096)) count="$len" \
			status=none
	fi
}

# scribble -- write $2 over the remote part at pool offset $1
scribble() {
	printf '%s' "$2" | dd of="$r0" bs=1 seek="$1" conv=notrunc \
		status=none
}

# remote_released -- wait until no rpmemd holds the remote part's lock
remote_released() {
	[[ ! -e $r0 ]] || flock -w 30 "$r0" true ||
		fail "the remote part is still locked after 30 s"
}

# verify_equal -- verify says the replica equals the master
verify_equal() {
	run verify "$set"
	tu_status 0 "verify ($1)"
	tu_line "$replica1: equal"
}

step "create, info, info --json"
run create "$set"
tu_status 0 create
run info "$set"
tu_status 0 info
tu_line "  same pool     yes"
grep -q '^  rpmemd        [0-9]' <<<"$out" || fail "info: no rpmemd version"
grep -q '^  lanes         [1-9]' <<<"$out" || fail "info: no lanes"
run info --json "$set"
tu_status 0 "info --json"
python3 -m json.tool <<<"$out" >/dev/null || fail "info --json: not JSON"
python3 -c '
import json, sys
d = json.load(sys.stdin)
r = d["replicas"]
assert d["size"] == int(sys.argv[1]), d["size"]
assert [x["kind"] for x in r] == ["local", "remote"], r
assert len(r[0]["parts"]) == 2 and r[1]["parts"] is None
assert all(x["status"] == "ok" and x["error"] is None for x in r), r
assert r[1]["poolset_uuid_matches"] is True
assert r[1]["daemon_version"] and r[1]["nlanes"] >= 1
assert r[0]["poolset_uuid"] == r[1]["poolset_uuid"]
assert r[1]["signature"] == r[0]["signature"] != None
' "$SIZE" <<<"$out" || fail "info --json: unexpected content"
verify_equal "fresh pool"

# librpmem's own log: RPMEM_LOG_LEVEL as a number (1 warn: no info lines;
# past the last level: debug), a '-' ending RPMEM_LOG_FILE becomes the pid,
# values of RPMEM_TIMEOUT and RPMEM_MAX_NLANES that are no count ignored
step "librpmem's log: level by number, a file per process, bad values"
for level in 1 9; do
	rm -f -- "$tmp"/librpmem[0-9]*
	RPMEM_LOG_LEVEL=$level RPMEM_LOG_FILE=$tmp/librpmem- \
		RPMEM_TIMEOUT=soon RPMEM_MAX_NLANES=0 run info "$set"
	tu_status 0 "info, RPMEM_LOG_LEVEL=$level"
	logs=("$tmp"/librpmem[0-9]*)
	[[ ${#logs[@]} == 1 && -s ${logs[0]} ]] ||
		fail "RPMEM_LOG_FILE=$tmp/librpmem-: no one log file per pid"
	for bad in "RPMEM_TIMEOUT=soon" "RPMEM_MAX_NLANES=0"; do
		grep -qF "ignoring invalid $bad" "${logs[0]}" ||
			fail "librpmem log: no 'ignoring invalid $bad'"
	done
	n=$(grep -c "open of '$rdesc' on 127.0.0.1: [1-9]" "${logs[0]}") || :
	[[ $n == $((level == 1 ? 0 : 1)) ]] ||
		fail "RPMEM_LOG_LEVEL=$level: $n info lines of the open"
done
rm -f -- "$tmp"/librpmem[0-9]*

step "fill the master with random data; sync copies it"
head -c $((PART - 4096)) /dev/urandom |
	dd of="$m0" bs=4096 seek=1 conv=notrunc status=none
head -c $((PART - 4096)) /dev/urandom |
	dd of="$m1" bs=4096 seek=1 conv=notrunc status=none
run verify "$set"
tu_status 3 "verify after filling the master"
run sync "$set"
tu_status 0 "sync of the filled master"
grep -q '^sync replica=1 action=copy bytes=[0-9]* total=[0-9]*$' <<<"$out" ||
	fail "sync printed no copy step"
verify_equal "after the first sync"

step "garbage in the remote data area: two ranges named, then repaired"
off1=$((0x123456))
off2=$((0x2345ffc))		# 8 bytes across two 4 KiB blocks
scribble "$off1" "GARBAGE!"
scribble "$off2" "garbage!"
run verify "$set"
tu_status 3 "verify of a scribbled replica"
tu_line "$replica1: differs in 2 range(s), 12288 bytes"
tu_line "  offset 0x123000 length 0x1000"
tu_line "  offset 0x2345000 length 0x2000"
[[ $(grep -c '^  offset ' <<<"$out") == 2 ]] || fail "more than 2 ranges"
run verify --json "$set"
tu_status 3 "verify --json of a scribbled replica"
python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["result"] == "differs"
r = d["replicas"][1]
assert r["status"] == "differs" and r["bytes"] == 12288, r
assert [(x["offset"], x["length"]) for x in r["ranges"]] == \
	[(0x123000, 0x1000), (0x2345000, 0x2000)], r["ranges"]
' <<<"$out" || fail "verify --json: unexpected content"
run sync "$set"
tu_status 0 "sync of a scribbled replica"
tu_line "sync replica=1 action=copy bytes=0 total=12288"
verify_equal "after repairing the scribbles"
for o in "$off1" "$off2"; do
	cmp <(master_bytes "$o" 8) <(dd if="$r0" bs=1 skip="$o" count=8 \
		status=none) || fail "remote bytes at $o differ from the master"
done

step "remote part deleted: unavailable, then rebuilt"
rm -f -- "$r0"
run verify "$set"
tu_status 3 "verify of a deleted replica"
grep -q "^$replica1: unavailable: " <<<"$out" || fail "not unavailable"
run sync "$set"
tu_status 0 "sync of a deleted replica"
tu_line "sync replica=1 action=check bytes=0 total=0 state=missing"
tu_line "sync replica=1 action=rebuild bytes=0 total=$((SIZE - 4096)) state=missing"
verify_equal "after rebuilding the deleted replica"

step "remote header damaged: rebuilt"
head -c 4096 /dev/urandom | dd of="$r0" conv=notrunc status=none
run verify "$set"
tu_status 3 "verify of a replica with a damaged header"
run sync "$set"
tu_status 0 "sync of a replica with a damaged header"
tu_line "sync replica=1 action=check bytes=0 total=0 state=damaged"
verify_equal "after rebuilding the damaged replica"

step "local part deleted: the master is rebuilt from the replica"
dd if="$m0" bs=4096 skip=1 status=none >"$tmp/m0.data"
dd if="$m1" bs=4096 skip=1 status=none >"$tmp/m1.data"
rm -f -- "$m1"
run verify "$set"
tu_status 3 "verify with a missing master part"
run sync "$set"
tu_status 0 "sync with a missing master part"
tu_line "sync replica=0 action=check bytes=0 total=0 state=missing"
tu_line "sync replica=0 action=rebuild bytes=0 total=$((SIZE - 4096))"
cmp -i 4096:0 "$m0" "$tmp/m0.data" || fail "rebuilt master part 0 differs"
cmp -i 4096:0 "$m1" "$tmp/m1.data" || fail "rebuilt master part 1 differs"
rm -f -- "$tmp"/m?.data
[[ -z $(find "$part_dir" -name '*.rpmsync') ]] || fail "temporary parts left"
verify_equal "after rebuilding the master"

# killed_sync -- run a sync that is SIGKILLed as soon as it reports its
# first copy to replica $1: 0 when it died, 1 when it had already
# finished (the kill comes within milliseconds; the copy of 64 MiB takes
# far longer, but nothing guarantees it)
killed_sync() {
	local fifo=$tmp/sync.fifo line seen=
	rm -f -- "$fifo"
	mkfifo "$fifo"
	"$rpmem" sync "$set" >"$fifo" 2>"$tmp/err" &
	sync_pid=$!
	exec 3<"$fifo"
	while IFS= read -r line <&3; do
		seen+=$line$'\n'
		if [[ $line == "sync replica=$1 action=copy "* ]]; then
			kill -KILL "$sync_pid"
			break
		fi
	done
	exec 3<&-
	set +e
	{ wait "$sync_pid"; } 2>/dev/null
	rc=$?
	set -e
	sync_pid=
	out=$seen
	[[ $rc != 0 ]] || return 1
	tu_status 137 "the killed sync"
	[[ $out == *"replica=$1 action=copy "* ]] || fail "no copy step seen"
}

# killed_sync_of -- remove part file $1 and kill a sync on its first copy
# to replica $2 (killed_sync), up to 3 times until the kill comes first
killed_sync_of() {
	local attempt
	for attempt in 1 2 3; do
		rm -f -- "$1"
		killed_sync "$2" && return 0
		echo "the sync finished before the kill (attempt $attempt)"
	done
	fail "the sync finished before the kill 3 times"
}

step "sync killed on its first copy (R18): never equal, rerun converges"
killed_sync_of "$r0" 1
remote_released
[[ $(head -c 8 "$r0" | od -An -c | tr -d ' ') == 'RPMSYNC\0' ]] ||
	fail "remote signature is not RPMSYNC: $(head -c 8 "$r0" | od -An -c)"
run verify "$set"
tu_status 3 "verify of an interrupted replica"
grep -q "^$replica1: differs in [0-9]* range(s), [0-9]* bytes\$" <<<"$out" ||
	fail "verify does not say the interrupted replica differs"
grep -q "^  signature RPMSYNC: an interrupted rpmem sync" <<<"$out" ||
	fail "verify does not name the interrupted sync"
run sync "$set"
tu_status 0 "sync after the interrupted one"
tu_line "sync replica=1 action=check bytes=0 total=0 state=incomplete"
verify_equal "after the rerun"

step "master rebuild killed on its first copy: missing, rerun converges"
killed_sync_of "$m0" 0
[[ ! -e $m0 ]] || fail "the master's part 0 is back before the rebuild ended"
run verify "$set"
tu_status 3 "verify of an interrupted master rebuild"
tu_line "replica 0 (local): missing: part $m0 is missing"
run sync "$set"
tu_status 0 "sync after the interrupted master rebuild"
tu_line "sync replica=0 action=rebuild bytes=0 total=$((SIZE - 4096))"
[[ -z $(find "$part_dir" -name '*.rpmsync') ]] || fail "temporary parts left"
verify_equal "after the rerun of the master rebuild"

step "bench --quick --json: every policy, libpmemobj, the replica equal after"
saved_cmd=$RPMEM_CMD
RPMEM_CMD="$RPMEM_CMD --lane-security=none"
# libpmemobj, which the bench loads, loads librpmem.so.1 from the tree;
# make check runs this in the coverage build too, which bench refuses
# unless told to measure anyway
LD_LIBRARY_PATH=$top_builddir/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
	RPMEM_BENCH_ANY_BUILD=1 run bench --quick --json --lanes 2 "$set"
RPMEM_CMD=$saved_cmd
tu_status 0 "bench --quick"
grep -qF "removing and creating replica 1" "$tmp/err" ||
	fail "bench did not warn that it recreates the replica"
python3 -c '
import json, os, sys
d = json.load(sys.stdin)
n = os.sysconf("SC_NPROCESSORS_ONLN")
assert d["shared_cpus"] == (n if d["target_loopback"] and n < 4 else 0), d
assert [r["lane_security"] for r in d["runs"]] == \
	["none", "authenticate", "encrypt"], d["runs"]
assert all(r["measured"] and r["cpu_s_per_gib"]["self"] > 0 and
	r["cpu_s_per_gib"]["rpmemd"] > 0
	for r in d["runs"]), d["runs"]
assert len(d["checks"]) == 10, d["checks"]
for c in d["checks"]:
	assert c["result"] in ("PASS", "MISS") and c["value"] is not None, c
s = d["setup"]
assert s["rounds"] == 2 and 0 < s["ssh_s"] and 0 < s["open_s"], s
assert 0 < s["fabric_s"] and s["fabric_s"] < s["open_s"] + 1, s
assert all(r["cpu_s_per_gib"]["raw_machine"] > 0 for r in d["runs"]), d
f = d["first_pass"]
assert f["first_mib_s"] > 0 and f["steady_mib_s"] > 0, f
o = d["pmemobj"]
assert o["measured"] and [t["size"] for t in o["tx"]] == [64, 4096], o
assert all(t["p50_us"] > 0 and t["round_trips"] >= 1 for t in o["tx"]), o
' <<<"$out" || fail "bench --json: unexpected content"
verify_equal "after bench recreated the replica"

step "rm removes everything"
run rm "$set"
tu_status 0 rm
remote_released
[[ -z $(find "$part_dir" -type f) ]] ||
	fail "files left: $(find "$part_dir" -type f)"
run verify "$set"
tu_status 3 "verify of a removed pool"

# a libpmemobj pool of 16 MiB, master and replica, made by pmempool
om=$part_dir/obj.0
or=$part_dir/obj-remote.0
oset=$tmp/obj.set
printf 'PMEMPOOLSET\n16M %s\nREPLICA %s cli-obj.set\n' "$om" \
	"$HARNESS_TARGET" >"$oset"
printf 'PMEMPOOLSET\n16M %s\n' "$or" >"$poolset_dir/cli-obj.set"
oreplica1="replica 1 ($HARNESS_TARGET cli-obj.set)"
SKIP_OFF=6688			# pmemobj_skip.c: addr .. user_data
SKIP_END=7272
skip_line="  offset 0x1a20 length 0x248: libpmemobj run-time state (pool \
descriptor, addr .. user_data)"

# obj_diffs -- pool offsets at which the replica's data differs from
# the master's, one a line (the part uuids of the headers aside)
obj_diffs() {
	cmp -l -- "$om" "$or" | awk '$1 > 4096 { print $1 - 1 }' || :
}

# obj_diffs_skipped -- some bytes differ, and only skipped ones
obj_diffs_skipped() {
	local o n=0
	while read -r o; do
		((o >= SKIP_OFF && o < SKIP_END)) ||
			fail "byte $o of the replica differs, outside the skip"
		n=$((n + 1))
	done < <(obj_diffs)
	((n > 0)) || fail "no run-time byte of libpmemobj differs ($1)"
}

step "libpmemobj pool: every differing byte is skipped, verify says equal"
LD_LIBRARY_PATH=$top_builddir/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
	pmempool create obj --layout=cli "$oset" >"$tmp/err" 2>&1 ||
	fail "pmempool create obj through our librpmem"
obj_diffs_skipped "after pmempool create obj"
run verify "$oset"
tu_status 0 "verify of a fresh libpmemobj pool"
tu_line "skipped 584 bytes (--strict compares them):"
tu_line "$skip_line"
tu_line "$oreplica1: equal"
run verify --json "$oset"
tu_status 0 "verify --json of a fresh libpmemobj pool"
python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["result"] == "equal" and d["strict"] is False, d
assert d["skipped_bytes"] == 584, d
assert [(x["offset"], x["length"]) for x in d["skipped"]] == \
	[(6688, 584)], d["skipped"]
assert "libpmemobj" in d["skipped"][0]["what"]
assert d["replicas"][1]["status"] == "equal"
' <<<"$out" || fail "verify --json: unexpected content"
run verify "$oset" --strict
tu_status 3 "verify --strict of a fresh libpmemobj pool"
tu_line "$oreplica1: differs in 1 range(s), 4096 bytes"
tu_line "  offset 0x1000 length 0x1000"
grep -q '^skipped' <<<"$out" && fail "verify --strict skipped bytes"

step "libpmemobj pool: the bytes either side of the skip are compared"
printf 'X' | dd of="$or" bs=1 seek=$((SKIP_OFF - 1)) conv=notrunc \
	status=none
printf 'Y' | dd of="$or" bs=1 seek="$SKIP_END" conv=notrunc status=none
run verify "$oset"
tu_status 3 "verify of a replica damaged next to the skip"
tu_line "$oreplica1: differs in 2 range(s), 3512 bytes"
tu_line "  offset 0x1000 length 0xa20"
tu_line "  offset 0x1c68 length 0x398"
run sync "$oset"
tu_status 0 "sync of a replica damaged next to the skip"
tu_line "$oreplica1: 2 differing range(s) copied, 3512 bytes"
tu_line "skipped 584 bytes (--strict copies them):"
obj_diffs_skipped "sync left the run-time state as it was"
run verify "$oset"
tu_status 0 "verify after the sync"
tu_line "$oreplica1: equal"

step "libpmemobj pool: sync --strict copies the run-time state too"
run sync --strict "$oset"
tu_status 0 "sync --strict"
tu_line "$oreplica1: 1 differing range(s) copied, 4096 bytes"
[[ -z $(obj_diffs) ]] || fail "the replica still differs after --strict"
run verify --strict "$oset"
tu_status 0 "verify --strict after sync --strict"
tu_line "$oreplica1: equal"
run rm "$oset"
tu_status 0 "rm of the libpmemobj pool"

echo "cli.sh: all steps passed in $((SECONDS - start)) s"
