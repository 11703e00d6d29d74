#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# promote_crash.sh -- rpmem promote stopped after each of its writes
# (scenario F2), and promote of a promoted pool or a master (F5)
#
# No network: the replica is one that Debian's pmempool and libpmemobj
# made themselves, the second replica of a local two-replica pool set
# (its headers link it to the master exactly as a remote replica's do).
# txlog (Debian's libpmemobj only) runs transactions on the pair first.
# For each shape of pool in the table, and each write N of the promote
# (the copy's generations, the marker, then each header), a fresh copy
# of the replica is promoted with RPMEM_PROMOTE_STOP_AFTER=N, which
# SIGKILLs it right after write N.
# Then:
#   - the pool set is either the promoted pool (libpmemobj opens it) or
#     still the replica (libpmemobj refuses it, its headers still verify
#     so that promote opens it): never neither;
#   - promote run again exits 0 and libpmemobj, pmempool info and
#     pmempool check accept the pool, with every transaction whole;
#   - not one byte outside the headers changed.
# And a power loss within a header's own write (half of it new, the
# checksum old): the rerun finishes that header too, while the same damage
# without a promote under way is refused.
# Exit status 0 pass, 1 fail.
set -uo pipefail
me=promote_crash.sh
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
command -v pmempool >/dev/null || {
	echo "promote_crash.sh: pmempool not found (pmdk-tools)" >&2
	exit 1
}
fo_tmp
trap fo_rmtmp EXIT

# cases: name, parts per replica, pool set option line
CASES=(
	"one-part 1 -"
	"two-parts 2 -"
	"singlehdr 2 OPTION_SINGLEHDR"
)

# make_sets DIR NPARTS OPTION -- two.set (master a*, replica b*), b.set,
# solo.set (c*, a pool without replicas)
make_sets() {
	local d=$1 n=$2 opt=${3//_/ } k
	{
		echo PMEMPOOLSET
		[[ $opt == - ]] || echo "$opt"
		for ((k = 0; k < n; k++)); do echo "16M $d/a$k"; done
		echo REPLICA
		for ((k = 0; k < n; k++)); do echo "16M $d/b$k"; done
	} >"$d/two.set"
	{
		echo PMEMPOOLSET
		[[ $opt == - ]] || echo "$opt"
		for ((k = 0; k < n; k++)); do echo "16M $d/b$k"; done
	} >"$d/b.set"
	{
		echo PMEMPOOLSET
		[[ $opt == - ]] || echo "$opt"
		for ((k = 0; k < n; k++)); do echo "16M $d/c$k"; done
	} >"$d/solo.set"
}

# same_data D1 D2 NPARTS HDRS -- parts of b equal but for their headers
same_data() {
	local k skip
	for ((k = 0; k < $3; k++)); do
		skip=0
		[[ $4 == all || $k == 0 ]] && skip=4096
		cmp -s -i "$skip" "$1/b$k" "$2/b$k" || return 1
	done
}

# tear PART -- the first half of the new prev replica link (its part 0
# uuid, at 40) over the old one (at 88), the checksum left as it was
tear() {
	dd if="$1" of="$1" bs=1 skip=40 seek=88 count=8 conv=notrunc \
		status=none
}

for row in "${CASES[@]}"; do
	read -r case nparts opt <<<"$row"
	d=$tmp/$case
	mkdir -p "$d/orig"
	make_sets "$d" "$nparts" "$opt"
	hdrs=all
	[[ $opt == - ]] || hdrs=first
	if ! "$txlog" create "$d/two.set" >/dev/null ||
			! "$txlog" run "$d/two.set" "$d/log" 200 >/dev/null; then
		tu_fail "$case: making the pool"
		continue
	fi
	cp "$d"/b[0-9] "$d/orig/"
	if "$txlog" open "$d/b.set" 2>/dev/null; then
		tu_fail "$case: libpmemobj opens the replica before any promote"
	fi
	nhdrs=$nparts
	[[ $hdrs == all ]] || nhdrs=1
	writes=$((2 + nhdrs))
	for ((stop = 1; stop <= writes; stop++)); do
		cp "$d"/orig/b[0-9] "$d/"
		rm -f "$d/b.set.promoted"
		# in a subshell whose "Killed" line goes nowhere
		(RPMEM_PROMOTE_STOP_AFTER=$stop "$rpmem" promote "$d/b.set" \
			>"$d/out" 2>&1; echo $? >"$d/rc") 2>/dev/null
		rc=$(<"$d/rc")
		((rc == 137)) || tu_fail "$case: stop after write $stop: status $rc" \
			"instead of SIGKILL: $(<"$d/out")"
		if "$txlog" open "$d/b.set" 2>"$d/err"; then
			state=promoted
		elif "$rpmem" info "$d/b.set" >/dev/null 2>&1; then
			state=replica
			grep -q "wrong replica UUID" "$d/err" ||
				tu_fail "$case: stop $stop: libpmemobj: $(<"$d/err")"
		else
			tu_fail "$case: stop after write $stop: neither libpmemobj nor" \
				"rpmem opens the set"
			continue
		fi
		if { [[ $state == promoted ]] && ((stop != writes)); } ||
				{ [[ $state == replica ]] &&
				((stop == writes)); }; then
			tu_fail "$case: stop after write $stop of $writes: $state"
		fi
		"$rpmem" promote "$d/b.set" >"$d/out" 2>&1 ||
			tu_fail "$case: rerun after stop $stop: $(<"$d/out")"
		# after the generations alone, a promote of its own
		want="finished"
		((stop == 1)) && want="promoted to a master"
		((stop == writes)) && want="already promoted"
		grep -q "$want" "$d/out" ||
			tu_fail "$case: rerun after stop $stop says: $(<"$d/out")"
		"$txlog" check "$d/b.set" "$d/log" >"$d/out" 2>&1 ||
			tu_fail "$case: after stop $stop: $(<"$d/out")"
		pmempool info "$d/b.set" >/dev/null 2>&1 ||
			tu_fail "$case: after stop $stop: pmempool info fails"
		pmempool check "$d/b.set" >"$d/out" 2>&1 ||
			tu_fail "$case: after stop $stop: pmempool check: $(<"$d/out")"
		echo "--- $case: stopped after write $stop of $writes:" \
			"$state; rerun finished it; libpmemobj, pmempool ok"
	done
	# a power loss within the write of part 0's header: half of the new
	# replica link there, the checksum old
	cp "$d"/orig/b[0-9] "$d/"
	rm -f "$d/b.set.promoted"
	(RPMEM_PROMOTE_STOP_AFTER=2 "$rpmem" promote "$d/b.set" \
		>/dev/null 2>&1 || :) 2>/dev/null
	tear "$d/b0"
	"$txlog" open "$d/b.set" 2>/dev/null && tu_fail "$case: torn header opens"
	"$rpmem" promote "$d/b.set" >"$d/out" 2>&1 ||
		tu_fail "$case: promote after a torn header write: $(<"$d/out")"
	grep -q "torn by an interrupted promote" "$d/out" ||
		tu_fail "$case: the torn header was not named: $(<"$d/out")"
	"$txlog" check "$d/b.set" "$d/log" >"$d/out" 2>&1 ||
		tu_fail "$case: after the torn header: $(<"$d/out")"
	# the same damage without a promote under way is not for promote
	cp "$d"/orig/b[0-9] "$d/"
	rm -f "$d/b.set.promoted"
	tear "$d/b0"
	"$rpmem" promote "$d/b.set" >"$d/out" 2>&1 &&
		tu_fail "$case: promote took a damaged replica header"
	[[ -e $d/b.set.promoted ]] && tu_fail "$case: marker left by a refusal"
	echo "--- $case: a header torn within its write is finished; the" \
		"same damage without a promote under way is refused"
	# the txlog runs above changed the data: compare a fresh promote
	cp "$d"/orig/b[0-9] "$d/"
	rm -f "$d/b.set.promoted"
	"$rpmem" promote "$d/b.set" >/dev/null 2>&1 || tu_fail "$case: clean promote"
	same_data "$d" "$d/orig" "$nparts" "$hdrs" ||
		tu_fail "$case: bytes outside the headers changed"
	# F5: again, and a master
	sums=$(cat "$d"/b[0-9] "$d/b.set.promoted" | md5sum)
	"$rpmem" promote --json "$d/b.set" >"$d/out" 2>&1 ||
		tu_fail "$case: second promote: $(<"$d/out")"
	grep -q '"outcome": "already-promoted"' "$d/out" ||
		tu_fail "$case: second promote says: $(<"$d/out")"
	[[ $(cat "$d"/b[0-9] "$d/b.set.promoted" | md5sum) == "$sums" ]] ||
		tu_fail "$case: a second promote changed the pool"
	"$txlog" create "$d/solo.set" >/dev/null || tu_fail "$case: making solo.set"
	sums=$(cat "$d"/c[0-9] | md5sum)
	"$rpmem" promote "$d/solo.set" >"$d/out" 2>&1 ||
		tu_fail "$case: promote of a master: $(<"$d/out")"
	grep -q "already a master" "$d/out" ||
		tu_fail "$case: promote of a master says: $(<"$d/out")"
	[[ $(cat "$d"/c[0-9] | md5sum) == "$sums" &&
		! -e $d/solo.set.promoted ]] ||
		tu_fail "$case: promote of a master changed it"
	"$rpmem" promote "$d/two.set" >"$d/out" 2>&1 &&
		tu_fail "$case: promote of a set with REPLICA lines succeeded"
	echo "--- $case: promote again and of a master: no change, exit 0"
done

tu_end "F2, F5 passed"
