#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# objverify.sh -- rpmem verify says equal on a libpmemobj pool after a
# clean run, and still finds every byte that matters (scenarios F1, D2:
# "the replica equals the master" is what they check)
#
#   top_builddir=BUILD_DIR tests/integration/objverify.sh
#
# Debian's libpmemobj runs objheap (objheap.c: objects of 64 bytes to 4
# MiB, atomic and transactional, freed, reallocated, 4 MiB snapshots;
# twice, so the second open frees the first's undo logs) on a pool with a
# replica behind a private sshd on 127.0.0.1.  Then:
#
#   - the part files differ (libpmemobj writes bytes it never persists),
#     but only in ranges `rpmem verify --json` lists as skipped; verify
#     says equal, exit 0, and names each kind; --strict says differs;
#   - a byte damaged on the replica next to a skipped range (a huge
#     block's first chunk header, a free chunk's data after its head) or
#     inside an object is reported, each exactly, and `rpmem sync` copies
#     it back, leaving the skipped bytes as they were; a byte damaged in a
#     skipped range is not reported, except by --strict.
#
# Exit status 0 pass, 1 fail.
set -uo pipefail

# harness.sh sets and exports top_srcdir and top_builddir (default: this
# script's tree)
# shellcheck source-path=SCRIPTDIR source=../common/harness.sh
. "$(dirname "${BASH_SOURCE[0]}")/../common/harness.sh"

objheap=$top_builddir/tests/integration/objheap
rpmem=$top_builddir/rpmem
tu_need_built "$objheap" "$rpmem" "$top_builddir/rpmemd" \
	"$top_builddir/.libs/librpmem.so.1"
command -v python3 >/dev/null ||
	{ echo "objverify.sh: no python3" >&2; exit 1; }
base=${TMPDIR:-/dev/shm}
[[ -d $base && -w $base ]] || base=/tmp
tmp=$(mktemp -d "$base/rpmem-objverify.XXXXXX")
harness_exit_trap "$tmp" 40 "$tmp/rpmemd.log" "$tmp/out"
harness_start_sshd "$tmp" || exit 1
mkdir -p "$tmp/psd" "$tmp/parts"
TU_OUT=$tmp/out

size=$((64 << 20))
master=$tmp/parts/obj.0
replica=$tmp/parts/obj-remote.0
set=$tmp/obj.set
printf 'PMEMPOOLSET\n%s %s\n' "$size" "$replica" >"$tmp/psd/obj.set"
printf 'PMEMPOOLSET\n%s %s\nREPLICA %s obj.set\n' "$size" "$master" \
	"$HARNESS_TARGET" >"$set"
rep1="replica 1 ($HARNESS_TARGET obj.set)"
export RPMEM_CMD
RPMEM_CMD=$(harness_rpmemd_cmd "$tmp/psd" "$tmp/rpmemd.log")
export RPMEM_STATE_DIR=$tmp/state

# app -- objheap through our librpmem (libpmemobj dlopen()s it)
app() {
	local libs=$top_builddir/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	LD_LIBRARY_PATH=$libs tu_run "$objheap" "$@"
}

# verify_json -- rpmem verify --json into $tmp/verify.json; its status
verify_json() {
	"$rpmem" verify --json "$set" >"$tmp/verify.json" 2>"$tmp/err"
}

# check_py -- run python code $1 with the report, the parts and "$@"
check_py() {
	local code=$1
	shift
	python3 - "$tmp/verify.json" "$master" "$replica" "$@" <<EOF
import json, sys
report = json.load(open(sys.argv[1]))
skips = [(s["offset"], s["offset"] + s["length"], s["what"])
	for s in report["skipped"]]
master = open(sys.argv[2], "rb").read()
replica = open(sys.argv[3], "rb").read()
args = sys.argv[4:]
def skipped(off):
	return any(b <= off < e for b, e, w in skips)
def differing():
	d = []
	for b in range(4096, len(master), 4096):
		if master[b:b + 4096] != replica[b:b + 4096]:
			d += [i for i in range(b, min(b + 4096, len(master)))
				if master[i] != replica[i]]
	return d
$code
EOF
}

# only_skipped_differ -- the parts differ past the header, and only in
# skipped bytes; the ranges are in order and none overlaps another
only_skipped_differ() {
	check_py '
d = differing()
assert d, "no byte differs: nothing was exercised"
out = [hex(i) for i in d if not skipped(i)]
assert not out, "differing bytes not skipped: %s" % out[:10]
assert all(a[1] <= b[0] for a, b in zip(skips, skips[1:])), "ranges overlap"
kinds = sorted(set(w for b, e, w in skips))
print("%d differing bytes, all in %d skipped ranges of %d kinds: %s" %
	(len(d), len(skips), len(kinds), kinds))
'
}

# skip_of KIND -- "OFFSET LENGTH" of the first skipped range whose kind
# starts with KIND and whose next byte is not skipped
skip_of() {
	check_py '
for b, e, w in skips:
	if w.startswith(args[0]) and not skipped(e):
		print(b, e - b)
		break
else:
	raise SystemExit("no skipped range of kind %s" % args[0])
' "$1"
}

# damage OFFSET -- flip the byte at OFFSET of the replica's part
damage() {
	python3 -c '
import sys
f = open(sys.argv[1], "r+b")
f.seek(int(sys.argv[2]))
b = f.read(1)
f.seek(int(sys.argv[2]))
f.write(bytes([b[0] ^ 0x5a]))
' "$replica" "$1"
}

# reported OFFSET -- verify exits 3 and names the 4 KiB block of OFFSET
# (or its part between skipped ranges), one range only
reported() {
	local off=$1
	verify_json
	local rc=$?
	((rc == 3)) || { echo "    # verify: exit $rc, not 3"; return 1; }
	check_py '
off = int(args[0])
r = report["replicas"][1]
assert r["status"] == "differs", r
assert r["ranges_total"] == 1, r["ranges"]
g = r["ranges"][0]
assert g["offset"] <= off < g["offset"] + g["length"], (off, g)
assert g["length"] <= 4096, g
assert not any(skipped(i) for i in range(g["offset"], g["offset"] +
	g["length"])), ("a skipped byte reported", g)
print("reported: offset %#x length %#x" % (g["offset"], g["length"]))
' "$off"
}

# synced -- sync copies the damage back, verify says equal again, and
# the skipped bytes of the replica are as they were (saved in $tmp/before)
synced() {
	tu_run "$rpmem" sync "$set" || return 1
	grep -qF "$rep1: 1 differing range(s) copied" "$TU_OUT" ||
		{ echo "    # sync did not copy one range"; return 1; }
	verify_json || { echo "    # verify after sync: exit $?"; return 1; }
	check_py '
before = open(args[0], "rb").read()
moved = [hex(b) for b, e, w in skips if before[b:e] != replica[b:e]]
assert not moved, "sync changed skipped ranges at %s" % moved[:10]
' "$tmp/before"
}

tu_check "objheap creates the pool and runs, reopened (F1)" \
	app create "$set"
tu_check "objheap: 300 rounds" app run "$set" 300 3
tu_check "objheap: 200 more rounds after a reopen" app run "$set" 200 5
tu_check "objheap: every object whole" app check "$set"
tu_check "verify: equal, exit 0, and it says what it skipped" \
	tu_says 0 "$rpmem" verify "$set" -- "$rep1: equal" \
	"replica 0 (local): master" \
	"libpmemobj run-time state (pool descriptor, addr .. user_data)" \
	"heap: chunk headers inside a huge block" \
	"heap: the head of a free chunk" \
	"heap: a free unit's undo log generation number"
tu_check "verify --json: result equal" verify_json
tu_check "the parts differ only in skipped bytes" only_skipped_differ
tu_check "verify --strict: differs, exit 3" \
	tu_says 3 "$rpmem" verify --strict "$set" -- "$rep1: differs in"
cp -- "$replica" "$tmp/before"

# a huge block's first chunk header: just before its skipped footers
read -r off len < <(skip_of "heap: chunk headers inside")
damage $((off - 1))
tu_check "a damaged chunk header before a huge block's footers is found" \
	reported $((off - 1))
tu_check "sync copies it back, the skipped bytes left as they were" synced

# a free chunk's data right after its head
read -r off len < <(skip_of "heap: the head of a free chunk")
damage $((off + len))
tu_check "a damaged byte right after a free chunk's head is found" \
	reported $((off + len))
tu_check "sync copies it back, the skipped bytes left as they were" synced

# the middle of an object
app where "$set"
read -r _ _ _ ooff _ olen < <(grep -m1 '^slot' "$TU_OUT")
damage $((ooff + olen / 2))
tu_check "a damaged byte inside an object is found" \
	reported $((ooff + olen / 2))
tu_check "sync copies it back, the skipped bytes left as they were" synced

# inside a skipped range: only --strict sees it
read -r off len < <(skip_of "heap: the head of a free chunk")
damage $((off + len / 2))
tu_check "a damaged byte inside a skipped range: verify still equal" \
	tu_says 0 "$rpmem" verify "$set" -- "$rep1: equal"
tu_check "... and --strict reports it" \
	tu_says 3 "$rpmem" verify --strict "$set" -- "$rep1: differs in"
tu_check "objheap: every object whole after the syncs" app check "$set"
tu_summary
