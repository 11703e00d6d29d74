#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# many.sh -- scenario L2: 32 sessions of 4 lanes at once on one target,
# then sessions killed and reopened at random; the "many" profile of
# tests/soak/soak.sh, which says what is checked and printed
set -euo pipefail
top_srcdir=${top_srcdir:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
export top_srcdir
SOAK_PROFILE=many exec "$top_srcdir/tests/soak/soak.sh"
