#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# degraded_hot.sh -- degraded.sh's D3 scenario alone: a librpmem client
# (hotrange, linked to the library, so built with ASan and UBSan in the
# sanitizer leg) rewrites one range while its replica is lost, comes
# back and is resynced; the replica read back equals its memory
SCENARIOS=hot exec bash "$(dirname "${BASH_SOURCE[0]}")/degraded.sh"
