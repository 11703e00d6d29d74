#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# selftest.sh -- the PMDK 1.12 stand-ins against each other, no ssh
#
#   top_builddir=BUILD_DIR tests/pmdk01/selftest.sh
#
# pmdk_client runs fake_rpmemd directly as its remote command (stdin,
# stdout, stderr on socket pairs) and the fabric goes over 127.0.0.1
# with libfabric's sockets provider.  Before either program checks
# anybody else's code, this shows that they speak the same 0.1 and that
# each edge case of the facts comes out as PMDK's would.  Exit 0 when
# every check passed, 1 otherwise.
set -uo pipefail

top_builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
bin=$top_builddir/tests/pmdk01
fake=$bin/fake_rpmemd
client=$bin/pmdk_client
for p in "$fake" "$client"; do
	[[ -x $p ]] || { echo "selftest: $p is not built" >&2; exit 1; }
done

# shellcheck source=../common/tu.sh
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/common/tu.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pmdk01-selftest.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
pools=$tmp/pools
mkdir "$pools"
log=$tmp/rpmemd.log
daemon="$fake --poolset-dir=$pools --log-file=$log --log-level=info"

TU_OUT=$tmp/out

# client_ok -- the session went through and the summary line says so
client_ok() {
	tu_run "$client" "$@" && grep -q "^pmdk_client: OK " "$TU_OUT"
}

# client_fails -- exit status 1 and every given line in the output:
# client_fails ARG... -- LINE...
client_fails() {
	tu_says 1 "$client" "$@"
}

# logged -- a line of the fake daemon's log
logged() {
	grep -qF -- "$1" "$log"
}

# u32 / u64 -- big-endian numbers as printf escapes
u32() { printf '\\x%02x' $(($1 >> 24 & 255)) $(($1 >> 16 & 255)) \
	$(($1 >> 8 & 255)) $(($1 & 255)); }
u64() { u32 $(($1 >> 32)); u32 $(($1 & 0xffffffff)); }

# raw_create -- a CREATE of protocol 0.$1 (major 0 and minor $1, u16
# each), provider $2, descriptor "a": 150 bytes
raw_create() {
	local esc
	esc="$(u32 1)$(u64 150)\\x00\\x00\\x00$(printf '\\x%02x' "$1")"
	esc+="$(u64 65536)$(u32 1)$(u32 "$2")$(u64 8192)"
	printf '%b' "$esc"
	head -c 104 /dev/zero
	printf '%b' "$(u32 2)a\\x00"
}

# stray_word -- feed a bad CREATE to the daemon: start-up status 0, then
# a non-zero 4-byte word instead of a 44-byte response, exit 255
stray_word() {
	raw_create "$1" "$2" | $daemon > "$tmp/raw" 2> "$tmp/raw.err"
	local rc=$? bytes
	bytes=$(od -An -tx1 -v "$tmp/raw" | tr -d ' \n')
	echo "    # exit $rc, stdout $bytes"
	[[ $rc -eq 255 && ${#bytes} -eq 16 && ${bytes:0:8} == 00000000 &&
		${bytes:8:8} != 00000000 ]]
}

# unknown_option -- PMDK's refusal: getopt's line, usage, 255, no stdout
unknown_option() {
	"$fake" --xyz > "$tmp/raw" 2> "$tmp/raw.err"
	local rc=$?
	sed 's/^/    # /' "$tmp/raw.err"
	[[ $rc -eq 255 && ! -s $tmp/raw ]] &&
		grep -qF "$fake: unrecognized option '--xyz'" "$tmp/raw.err" &&
		grep -qF "usage: $fake [--version] [--help] [<args>]" \
			"$tmp/raw.err"
}

# attr_is_b -- the side file holds SET_ATTR's signature "PMDK01\0B"
attr_is_b() {
	[[ $(head -c 8 "$pools/$1.attr" | od -An -tx1 | tr -d ' \n') == \
		504d444b30310042 ]]
}

# removed -- fake_rpmemd --remove: no status word, exit 0, then ENOENT
removed() {
	$daemon --remove "$1" > "$tmp/raw" < /dev/null
	local rc=$?
	[[ $rc -eq 0 && ! -s $tmp/raw && ! -e $pools/$1.pool ]] || return 1
	$daemon --remove "$1" > "$tmp/raw" < /dev/null
	[[ $? -eq 2 ]]
}

size=1048576
s="--size $size --timeout 60"

tu_check "create, every persist mode, read back, set_attr, close" \
	client_ok --cmd "$daemon" --desc p1 $s --lanes 4 --create
tu_check "the pool file has the requested size" \
	test "$(stat -c %s "$pools/p1.pool")" -eq $size
tu_check "the attributes of SET_ATTR are stored" attr_is_b p1
tu_check "the daemon logged the create request" \
	logged "create request: descriptor 'p1', pool size $size, nlanes 4"
tu_check "open returns them and the data of the first session" \
	client_ok --cmd "$daemon" --desc p1 $s --lanes 2 --open \
	--reverify 1 --seed 2
tu_check "a third session finds the second one's data" \
	client_ok --cmd "$daemon" --desc p1 $s --open --reverify 2 \
	--no-inline --seed 3
tu_check "a single lane" \
	client_ok --cmd "$daemon" --desc p1 $s --open --lanes 1 --seed 4

tu_check "create of an existing pool: Pool already exists" \
	client_fails --cmd "$daemon" --desc p1 $s --create -- \
	"pmdk_client: Pool already exists" "errno EEXIST"
exec 9< "$pools/p1.pool"
flock -x 9
tu_check "open of a pool another session holds: Pool already in use" \
	client_fails --cmd "$daemon" --desc p1 $s --open -- \
	"pmdk_client: Pool already in use" "errno EBUSY"
tu_check "create over a held pool is BUSY too" \
	client_fails --cmd "$daemon" --desc p1 $s --create -- \
	"pmdk_client: Pool already in use" "errno EBUSY"
exec 9<&-
tu_check "open of a missing pool: doesn't exist" \
	client_fails --cmd "$daemon" --desc nosuch $s --open -- \
	"pmdk_client: Pool set or its part doesn't exist or it is unavailable" \
	"errno ENOENT"
tu_check "open bigger than the pool: Invalid pool size" \
	client_fails --cmd "$daemon" --desc p1 --size $((2 * size)) --open -- \
	"pmdk_client: Invalid pool size" "errno EFBIG"
tu_check "an absolute descriptor: Invalid pool descriptor" \
	client_fails --cmd "$daemon" --desc /abs $s -- \
	"pmdk_client: Invalid pool descriptor" "errno EINVAL"

tu_check "unknown option: glibc's line, usage, 255, nothing on stdout" \
	unknown_option
tu_check "unknown option seen by the client: the stderr line, ECONNRESET" \
	client_fails --cmd "$daemon --xyz" --desc p2 $s -- \
	"pmdk_client: $fake: unrecognized option '--xyz'" \
	"out-of-band connection failed: Connection reset by peer" \
	"remote command exited with status 255" "errno ECONNRESET"
tu_check "a relative pool directory: start-up status EINVAL" \
	client_fails --cmd "$fake --poolset-dir=rel" --desc p2 $s -- \
	"127.0.0.1: unexpected status received -- '22'" "errno EINVAL"

tu_check "protocol 0.3: a stray status word, exit 255" stray_word 3 2
tu_check "the daemon logged the version" \
	logged "unsupported protocol version -- 0.3"
tu_check "protocol 0.3 seen by the client: ECONNRESET" \
	client_fails --cmd "$daemon" --desc p2 $s --minor 3 -- \
	"receiving create request response failed: Connection reset by peer" \
	"remote command exited with status 255" "errno ECONNRESET"
tu_check "provider tcp (3): a stray status word, exit 255" stray_word 1 3
tu_check "the daemon logged the provider" logged "invalid provider -- 3"
tu_check "provider verbs where there is none: Invalid provider" \
	client_fails --cmd "$daemon" --desc p2 $s --provider-id 1 -- \
	"pmdk_client: Invalid provider" "errno EINVAL"
tu_check "no pool was left behind by the refusals" test ! -e "$pools/p2.pool"

tu_check "a lane number past the last lane goes unanswered" \
	client_ok --cmd "$daemon" --desc p3 $s --bad-persist lane \
	--timeout 3 --remove-on-close
tu_check "the other lanes still answer" \
	grep -qF "lane 1 after it: persist answered" "$tmp/out"
tu_check "the daemon logged the lane" logged "invalid lane number -- 4"
tu_check "close with the remove flag deleted the pool" \
	test ! -e "$pools/p3.pool"
tu_check "a range past the pool goes unanswered" \
	client_ok --cmd "$daemon" --desc p4 $s --bad-persist range \
	--timeout 3 --lanes 1
tu_check "--remove deletes a pool, exit 0, then exit ENOENT" removed p4

tu_summary
