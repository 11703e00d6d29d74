# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# gc.sh -- genclient driven by gens.sh, gensoak.sh, async_order.sh and
# async_link.sh: the master is a
# file ($tmp/m.pool) of $SIZE bytes (32 MiB unless the script sets it
# after sourcing) replicated to g.set at $target by $rpmemd_cmd, its
# records in $tmp/state, everything it says appended to $tmp/gc.out.
# Source it with `me` set, instead of common.sh (it sources common.sh);
# $gc_env (an array) adds the script's own environment to every run;
# MIB is 1 MiB.
#
#   gc_target [NETNS_TAG]              $tmp and its EXIT trap, a private
#                                      sshd ($target), the pool set dir
#                                      $psd, part $part, $rpmemd_cmd;
#                                      with a tag, the sshd in a network
#                                      namespace of its own
#   gc [VAR=VALUE...] CMD [ARG...]     genclient; its status, also in rc
#   gc_bg [VAR=VALUE...] CMD [ARG...]  the same in the background, its
#                                      pid (genclient's own) in app_pid
# shellcheck disable=SC2154 # me, tmp, libs, target: common.sh's, the script's
# shellcheck disable=SC2034 # app_pid is common.sh's (killed at exit)

# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
SIZE=$((32 << 20))
MIB=$((1 << 20))
gc=$top_builddir/tests/failover/genclient
[[ -x $gc ]] || { echo "$me: $gc not built" >&2; exit 1; }
gc_env=()

# gc_target [NETNS_TAG] -- the target every genclient test uses: a
# private sshd on loopback (with a tag, in a network namespace of its
# own behind a veth pair; exit 77 where none can be made), g.set's
# directory and part, and the rpmemd command serving it, which carries
# the sanitizer leg's options (sshd passes no environment, and rpmemd's
# reports must land where the leg looks)
gc_target() {
	if [[ -n ${1:-} ]]; then
		local rc=0
		harness_netns_start "$1" || rc=$?
		((rc == 77)) && { echo "$me: no network namespace; skipped"
			exit 77; }
		((rc == 0)) || { harness_netns_stop; exit 1; }
		export HARNESS_ADDR=$HARNESS_NETNS_ADDR
		fo_target harness_netns_stop
	else
		fo_target
	fi
	part=$tmp/parts/g.0
	local v
	for v in ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS IPATH_NO_BACKTRACE; do
		[[ -z ${!v:-} ]] ||
			rpmemd_cmd="$v=$(printf '%q' "${!v}") $rpmemd_cmd"
	done
}

# gc -- genclient in the foreground; its status in rc
gc() {
	rc=0
	(gc_exec "$@") >>"$tmp/gc.out" 2>&1 || rc=$?
	return "$rc"
}

# gc_bg -- genclient in the background; its pid in app_pid
gc_bg() {
	(gc_exec "$@") >>"$tmp/gc.out" 2>&1 &
	app_pid=$!
}

# gc_exec -- become genclient (so that a background one's pid is its own)
gc_exec() {
	local vars=()
	while [[ $1 == *=* ]]; do vars+=("$1"); shift; done
	exec env LD_LIBRARY_PATH="$libs" RPMEM_CMD="$rpmemd_cmd" \
		RPMEM_STATE_DIR="$tmp/state" RPMEM_LOG_LEVEL=notice \
		RPMEM_LOG_FILE="$tmp/client.log" RPMEM_RECONNECT_MIN_MS=100 \
		RPMEM_RECONNECT_MAX_MS=500 "${gc_env[@]}" "${vars[@]}" \
		"$gc" "$target" g.set "$SIZE" "$tmp/m.pool" "$@"
}
