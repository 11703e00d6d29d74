#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# setup.sh -- install what a fresh Debian 12 machine lacks, then build.
#
#   scripts/setup.sh [configure options...]
#
# Installs the Debian packages below when any is missing (as root, or
# through sudo), then runs autoreconf, configure (--enable-werror) and
# make in the source tree.  Safe to run again: it only does what is left.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

packages=(
	gcc make autoconf automake libtool pkg-config
	libfabric-dev libfabric-bin
	libpmem-dev libpmemobj-dev libpmempool-dev pmdk-tools
	libiniparser-dev libssl-dev check lcov
	openssh-server openssh-client
	iproute2 procps strace
	debhelper dpkg-dev lintian
	valgrind liblsan0
	# the cluster tests, and what the rpmem-ocf package depends on
	pacemaker corosync pacemaker-cli-utils resource-agents libxml2-utils jq
	# the metrics test: a real node-exporter, scraped on 127.0.0.1
	prometheus-node-exporter curl
	# the cluster manual's two shells, loaded into a CIB file (manual.sh)
	crmsh pcs
)

missing=()
for p in "${packages[@]}"; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[ "$status" = "install ok installed" ] || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
	echo "setup: installing ${missing[*]}"
	sudo=()
	[ "$(id -u)" -eq 0 ] || sudo=(sudo)
	export DEBIAN_FRONTEND=noninteractive
	"${sudo[@]}" apt-get update -q
	"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if [ ! -x configure ] || [ configure.ac -nt configure ] ||
		[ Makefile.am -nt Makefile.in ]; then
	autoreconf -fi
fi
if [ ! -f Makefile ] || [ configure -nt config.status ] || [ $# -gt 0 ]; then
	./configure --enable-werror "$@"
fi
make -j"$(nproc)"
