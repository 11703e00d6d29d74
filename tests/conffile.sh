#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# conffile.sh -- the commented rpmemd.conf shipped as /etc/rpmemd/rpmemd.conf
# lists every key rpmemd's parser knows (src/rpmemd/config.c) and no
# other, each with the default rpmemd.conf(5) gives; with every key
# uncommented, the built rpmemd accepts the file.
set -uo pipefail

: "${top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
# shellcheck source-path=SCRIPTDIR source=common/tu.sh
. "$(dirname "${BASH_SOURCE[0]}")/common/tu.sh"
conf=$top_srcdir/src/rpmemd/rpmemd.conf
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rpmem-conffile.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# the parser's keys, from its table of KEY("name", ...) entries
mapfile -t keys < <(sed -n 's/.*KEY("\([a-z-]*\)".*/\1/p' \
	"$top_srcdir/src/rpmemd/config.c" | sort)
# the file's keys: lines "#key = value", commented out
mapfile -t listed < <(sed -n 's/^#\([a-z-]*\) = .*/\1/p' "$conf" | sort)
if ((${#keys[@]} < 10)); then
	tu_fail "found only ${#keys[@]} keys in config.c: ${keys[*]}"
fi
if [[ ${keys[*]} != "${listed[*]}" ]]; then
	tu_fail "rpmemd.conf lists '${listed[*]}', the parser knows" \
		"'${keys[*]}'"
fi

# each value is the one of the DEFAULTS example in rpmemd.conf(5), where
# it names one; keys it leaves unset say so in the file
sed -n '/^\.SH DEFAULTS/,/^\.EE/{s/\\-/-/g;p;}' \
	"$top_srcdir/man/rpmemd.conf.5" >"$tmp/defaults"
for key in "${keys[@]}"; do
	val=$(sed -n "s/^#$key = \\([^[:space:]#]*\\).*/\\1/p" "$conf")
	if grep -q "^$key = " "$tmp/defaults"; then
		want=$(sed -n "s/^$key = //p" "$tmp/defaults")
		[[ $val == "$want" ]] && continue
		tu_fail "rpmemd.conf says $key = $val, rpmemd.conf(5) $want"
	elif ! grep -q "^#$key = .*# not set by default" "$conf"; then
		tu_fail "rpmemd.conf(5) has no default for $key and" \
			"rpmemd.conf does not say it is unset"
	fi
done

# uncommented (the log file moved here), rpmemd reads it and goes on to
# its remove request, which finds nothing to remove
sed -e 's/^#\([a-z-]* = \)/\1/' -e "s|^log-file = [^[:space:]]*|log-file = $tmp/log|" \
	"$conf" >"$tmp/rpmemd.conf"
chmod 600 "$tmp/rpmemd.conf"
mkdir "$tmp/poolsets"
"$top_builddir/rpmemd" -c "$tmp/rpmemd.conf" --poolset-dir="$tmp/poolsets" \
	--remove absent.set 2>"$tmp/err"
rc=$?
if ((rc == 0)) || ! grep -q "removing 'absent.set' failed" "$tmp/err"; then
	tu_fail "rpmemd did not accept rpmemd.conf with every key set" \
		"(exit $rc):"
	cat "$tmp/err"
fi
((TU_FAILED)) || echo "PASS: rpmemd.conf lists all ${#keys[@]} keys with defaults"
exit $((TU_FAILED != 0))
