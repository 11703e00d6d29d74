#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# without-kallsyms.sh -- run a command in a mount namespace of its own in
# which /proc/kallsyms is empty, when that changes nothing libfabric
# learns from it; else run it as it is
#
#   scripts/without-kallsyms.sh COMMAND [ARG...]
#
# Every process that calls fi_getinfo runs libfabric 1.17's verbs
# provider init, whatever FI_PROVIDER says, and that init reads all of
# /proc/kallsyms twice (prov/verbs/src/fi_verbs.c, vrb_set_peer_mem_support
# and vrb_set_dmabuf_support), looking for two symbols of the kernel's
# RDMA core: about 0.1 s of CPU a process, on the client and on rpmemd,
# for every session a test opens.  Where the kernel has neither symbol
# (no RDMA core, as on these machines) an empty file gives libfabric the
# same answer, no peer memory and no dma-buf, so the test suite runs
# the same code at less cost.  Root only (a bind mount in a new mount
# namespace); the namespace ends with COMMAND.  The benchmarks do not
# use it: a session's set-up figure is the one users see.
set -euo pipefail

(($# >= 1)) || { echo "usage: $0 COMMAND [ARG...]" >&2; exit 2; }

# usable -- root, unshare(1), and a kernel without the symbols sought
usable() {
	[[ $(id -u) == 0 ]] && [[ -r /proc/kallsyms ]] &&
		unshare -m --propagation private true 2>/dev/null &&
		! grep -qE 'ib_register_peer_memory_client|ib_umem_dmabuf_get' \
			/proc/kallsyms
}

if ! usable; then
	exec "$@"
fi
empty=$(mktemp "${TMPDIR:-/tmp}/kallsyms.XXXXXX")
# the mount holds the empty file; its name goes once it is mounted
exec unshare -m --propagation private bash -c '
	mount --bind "$1" /proc/kallsyms ||
		echo "without-kallsyms.sh: /proc/kallsyms left as it is" >&2
	rm -f "$1"
	shift
	exec "$@"' without-kallsyms "$empty" "$@"
