#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# alloc.sh -- scenario R17: allocation failure at every step of each
# init path: rpmem_create and rpmem_open in the client (library load,
# ssh start, lanes), and rpmemd's start-up, config load, session open
# and lane set-up behind them
#
#   [ALLOC_PATHS='client-create ...'] [ALLOC_DEEP=N|all] [ALLOC_EVERY=1] \
#   [ALLOC_JOBS=N] [ALLOC_SHIFT=S] \
#   top_builddir=BUILD_DIR tests/alloc/alloc.sh
#
# A first run counts the allocations of a path; then for N = 1 .. count
# the Nth fails (failalloc.so, preloaded with LeakSanitizer), and a last
# run past the count (a tenth past it in scope "deep", whose counts move
# by a few from run to run) must complete.  Every run must end cleanly: the
# call fails with an errno the path documents (or the failure was
# recovered from), nothing crashed, LeakSanitizer found no leak, no
# process of the run is left, a failed create left no part file and a
# failed open left the pool as it was.
#
# Scope "ours" counts what the project's code asks for itself (see
# failalloc.c); every N is run, but of a row of allocations from one
# call site (a loop) only the first and the last (ALLOC_EVERY=1: all).  Scope "deep" counts every allocation
# made while the project's code is on the stack, libfabric's, OpenSSL's,
# iniparser's and libc's included: some 9000 per path, so ALLOC_DEEP
# (default 8) values of N evenly spread over the count are run
# (ALLOC_SHIFT allocations on, default 0), all of them with
# ALLOC_DEEP=all.  A few failures inside other projects' code end badly
# whatever we do; they are listed below (`known`) or in lsan.supp, each
# with the reason, and reported without failing the test.
#
# ssh is not what R17 tests: RPMEM_SSH is local_ssh, which runs rpmemd on
# this host without a login (a login costs about a second, and the loops
# make hundreds of sessions).  ALLOC_JOBS runs (default 2) go at once,
# each with its own pool set.
set -uo pipefail

self=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$self/../.." && pwd)}
top_builddir=$(cd "${top_builddir:-$top_srcdir}" && pwd)
# shellcheck source-path=SCRIPTDIR source=../common/tu.sh
. "$self/../common/tu.sh"

shim=$top_builddir/tests/alloc/.libs/failalloc.so
client=$top_builddir/tests/alloc/alloc_client
rpmemd=$top_builddir/rpmemd
tu_need_built "$shim" "$client" "$top_builddir/tests/alloc/local_ssh" \
	"$rpmemd"
lsan=$(ldconfig -p | sed -n 's/^\tliblsan\.so\.0 (libc6,x86-64) => //p' |
	head -n 1)
if [[ -z $lsan || ! -e $lsan ]]; then
	echo "alloc.sh: liblsan.so.0 not found (install liblsan0)" >&2
	exit 1
fi

# the paths: name, the process whose allocations fail, the call, scope,
# and the errnos a failure may end in (rpmem_create(3)): the client's
# own ENOMEM, EAGAIN for a thread it could not start; rpmemd's ENOMEM in
# its start-up status, EREMOTEIO for its fatal errors, ECONNABORTED for
# lanes it could not set up
paths=(
	"client-create client create ours ENOMEM EAGAIN"
	"client-open client open ours ENOMEM EAGAIN"
	"rpmemd-create rpmemd create ours ENOMEM EREMOTEIO ECONNABORTED"
	"rpmemd-open rpmemd open ours ENOMEM EREMOTEIO ECONNABORTED"
	"client-create-deep client create deep ENOMEM EAGAIN"
	"client-open-deep client open deep ENOMEM EAGAIN"
	"rpmemd-create-deep rpmemd create deep ENOMEM EREMOTEIO ECONNABORTED"
	"rpmemd-open-deep rpmemd open deep ENOMEM EREMOTEIO ECONNABORTED"
)

# allocation failures that end badly inside other projects' code: a run
# whose failed allocation came through one of these is not held to the
# rules (only to leaving nothing behind)
known=(
	# iniparser 4.1: dictionary_new does not check the callocs of its
	# tables, and dictionary_set then writes through NULL (SIGSEGV)
	"calloc from dictionary_new+"
	# libfabric 1.17.0 (Debian 12): when the asprintf() fi_param_define
	# makes at +0x146 (the variable's environment name) fails, a pointer
	# no allocator handed out is freed (LeakSanitizer: "bad pointer");
	# its other allocations fail cleanly
	"fi_param_define+0x146(libfabric"
	# OpenSSL 3.0 (libssl3 of Debian 12): when an allocation of the
	# default library context's one-time set-up fails, the context is
	# left without its lock, and the next RAND_bytes locks through NULL
	# (SIGSEGV); nothing the caller sees tells it so
	"< OSSL_LIB_CTX_get0_global_default+"
	# OpenSSL 3.0: some allocations failing while EVP_KDF_fetch builds
	# its method (CRYPTO_zalloc) leave no malloc failure in the error
	# queue, only "unsupported": the caller cannot tell ENOMEM and says
	# EIO (those that do leave one end in ENOMEM, lanesec's ossl_fail)
	"< EVP_KDF_fetch+"
	# libfabric 1.17: fi_getinfo uses the result of the strdup() it
	# makes at +0x988 without checking it (SIGSEGV)
	"strdup+0x1a(libc.so.6) < fi_getinfo+0x988(libfabric"
)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rpmem-alloc.XXXXXX")
# cleanup -- end the slots still running (ours: started here), then
# what their runs left, then the temp dir
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	local running pids
	trap - EXIT
	running=$(jobs -p)
	# shellcheck disable=SC2086 # one pid a word
	[[ -z $running ]] || kill $running 2>/dev/null
	wait
	mapfile -t pids < <(leftovers "$tmp")
	((${#pids[@]} == 0)) || kill -KILL "${pids[@]}" 2>/dev/null
	rm -rf -- "$tmp"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
SIZE=$((8 << 20))
export RPMEM_SSH=$top_builddir/tests/alloc/local_ssh RPMEM_TIMEOUT=10
# librpmem's records of replicas: this run's (each pool set its own)
mkdir -m 700 "$tmp/state"
export RPMEM_STATE_DIR=$tmp/state
# libinfinipath (libfabric's psm) turns a crash into exit status 1 with a
# backtrace: keep crashes crashes
export IPATH_NO_BACKTRACE=1
preload="$shim $lsan"
# whole stacks (not the fast unwinder's few frames): lsan.supp matches
# functions deep in other libraries
supp="print_suppressions=0:suppressions=$top_srcdir/tests/alloc/lsan.supp"
supp+=":fast_unwind_on_malloc=0:malloc_context_size=40"

# setup_slot -- workspace $1: a pool set and an rpmemd config of its own
setup_slot() {
	local d=$tmp/$1
	mkdir -p "$d/poolsets" "$d/parts" "$d/lsan"
	printf 'PMEMPOOLSET\n8M %s/parts/r17.part0\n' "$d" \
		>"$d/poolsets/r17.set"
	# every key rpmemd knows: loading the config allocates for them all
	cat >"$d/rpmemd.conf" <<-EOF
		# alloc.sh: rpmemd reads only this file
		poolset-dir = $d/poolsets
		log-file = $d/rpmemd.log
		log-level = debug
		use-syslog = no
		persist-apm = no
		persist-general = yes
		nthreads = 2
		max-lanes = 8
	EOF
	chmod 600 "$d/rpmemd.conf"
}

# leftovers -- processes whose argv names directory $1: one grep over
# every cmdline (a fork per process costs seconds a run on a busy host);
# its last character in brackets, so that grep's own argv does not match
leftovers() {
	local pat="${1%?}[${1: -1}]/" pid
	grep -l -a -- "$pat" /proc/[0-9]*/cmdline 2>/dev/null |
		while IFS=/ read -r _ _ pid _; do
			[[ $pid != "$$" ]] && printf '%s\n' "$pid"
		done
	return 0
}

# run -- in workspace $1, path $2 (process $3, call $4, scope $5), the
# $6th allocation failing (0: none); prints "FAIL: ..." lines (tu_fail;
# counted from the output, as this runs in the background), sets $out,
# $failed_at and $known_site
run() {
	local slot=$1 name=$2 proc=$3 op=$4 scope=$5 n=$6 rc st k
	local d=$tmp/$slot pids
	local daemon
	daemon="exec $(printf '%q' "$rpmemd") -c $(printf '%q' \
		"$d/rpmemd.conf")"
	local -a env=(FAILALLOC_SCOPE="$scope" FAILALLOC_NTH="$n"
		FAILALLOC_LOG="$d/fa.log" ALLOC_STATUS="$d/status"
		LSAN_OPTIONS="log_path=$d/lsan/lsan:exitcode=23:$supp")
	rm -f -- "$d/fa.log" "$d/status" "$d"/lsan/*
	if [[ $proc == client ]]; then
		env+=(LD_PRELOAD="$preload" FAILALLOC_EXE=alloc_client
			FAILALLOC_OBJS=librpmem.so RPMEM_CMD="$daemon")
	else
		env+=(FAILALLOC_EXE=rpmemd FAILALLOC_OBJS=@exe
			RPMEM_CMD="LD_PRELOAD='$preload' $daemon")
	fi
	out=$(env "${env[@]}" "$client" "$op" 127.0.0.1 r17.set "$SIZE" \
		2>"$d/client.err")
	rc=$?
	failed_at=$(sed -n 's/^fail [0-9]* \(.*\) pid.*/\1/p' "$d/fa.log" \
		2>/dev/null | head -n 1)
	known_site=
	for k in "${known[@]}"; do
		[[ -n $failed_at && $failed_at == *"$k"* ]] &&
			known_site=$k
	done
	# the whole trail is matched against `known`; its start is shown
	local site=$failed_at
	((${#site} <= 240)) || site="${site:0:240}..."
	local what="$name N=$n${site:+ ($site)}"
	# a client that gave up ends its ssh (SIGTERM), and rpmemd, no child
	# of ours, ends on the end of its input a moment later: up to 10 s
	local try
	for ((try = 0; try < 100; try++)); do
		mapfile -t pids < <(leftovers "$d")
		((${#pids[@]})) || break
		tu_nap 0.1
	done
	if ((${#pids[@]})); then
		tu_fail "$what: processes left 10 s after: ${pids[*]}"
		kill -KILL "${pids[@]}" 2>/dev/null
	fi
	if [[ $op == create && $out != ok && -e $d/parts/r17.part0 ]]; then
		tu_fail "$what: a failed create left its part behind"
	fi
	if [[ $op == open && -e $d/pool.copy ]] &&
			! cmp -s -- "$d/parts/r17.part0" "$d/pool.copy"; then
		tu_fail "$what: the pool changed"
	fi
	if [[ -n $known_site ]]; then
		echo "known $what: outside the project (${known_site#< })"
		return 0
	fi
	if ((rc != 0)); then
		tu_fail "$what: the client ended with status $rc: $out"
		sed 's/^/  client: /' "$d/client.err" | head -n 20
	fi
	while read -r st; do
		((st < 128)) || tu_fail "$what: rpmemd died of signal" \
			"$((st - 128))"
		((st != 23)) || tu_fail "$what: rpmemd leaked memory"
	done < <(cat -- "$d/status" 2>/dev/null)
	if compgen -G "$d/lsan/*" >/dev/null; then
		tu_fail "$what: LeakSanitizer:"
		grep -h -E '^(Direct|Indirect)|#[0-9]+ |bad pointer|CHECK' \
			"$d"/lsan/* | head -n 30
	fi
	return 0
}

# slot -- workspace $1 runs path $2..$6 for each N that follows
slot() {
	local s=$1 name=$2 proc=$3 op=$4 scope=$5 allowed=" $6 " n err
	shift 6
	setup_slot "$s"
	if [[ $op == open ]]; then
		# a pool to open, and its bytes to compare each run with
		run "$s" "$name" "$proc" create "$scope" 0
		run "$s" "$name" "$proc" open "$scope" 0
		[[ $out == ok ]] || { tu_fail "$name: no pool: $out"; return; }
		cp -- "$tmp/$s/parts/r17.part0" "$tmp/$s/pool.copy"
	fi
	for n in "$@"; do
		run "$s" "$name" "$proc" "$op" "$scope" "$n"
		[[ $op == create ]] && rm -f -- "$tmp/$s/parts/r17.part0"
		[[ -z $known_site ]] || continue
		if [[ -z $failed_at ]]; then
			# no Nth allocation: the path ran to its end
			# shellcheck disable=SC2015 # echo does not fail
			[[ $out == ok ]] && echo "complete $n" ||
				tu_fail "$name N=$n: nothing failed, yet: $out"
		elif [[ $out == ok ]]; then
			echo "recovered $name N=$n (${failed_at:0:240})"
		else
			err=$(awk '{print $3}' <<<"$out")
			# shellcheck disable=SC2015 # echo does not fail
			[[ $allowed == *" $err "* ]] && echo "clean $err" ||
				tu_fail "$name N=$n (${failed_at:0:240}): errno" \
					"$err, expected one of$allowed: $out"
		fi
	done
}

# site_ends -- of count log $1, the Ns to fail in scope "ours": each
# allocation, but of a row of them asked for at one call site (a loop:
# getline over /proc/self/maps, 55 of client-create's 93) the first and
# the last only, whose failures leave the loop before and after it built
# anything; the rows of the process that counted the most
site_ends() {
	awk '$1 == "count" && $2 + 0 >= max { max = $2 + 0; pid = $4 }
		$1 == "site" { at[$NF, $2] = $3 }
		END {
			for (i = 1; i <= max; i++)
				if (at[pid, i] != at[pid, i - 1] ||
						at[pid, i] != at[pid, i + 1])
					print i
		}' "$1"
}

# loop -- path $1..$4 ($5: the errnos): count, then every N over slots
loop() {
	local name=$1 proc=$2 op=$3 scope=$4 allowed="${*:5}" total t0=$SECONDS
	local jobs=${ALLOC_JOBS:-2} k=${ALLOC_DEEP:-8} i j
	local -a ns=() list=()
	setup_slot "$name.count"
	if [[ $op == open ]]; then
		run "$name.count" "$name" "$proc" create "$scope" 0
	fi
	run "$name.count" "$name" "$proc" "$op" "$scope" 0
	rm -rf -- "$tmp/$name.count/parts"
	total=$(sed -n 's/^count \([0-9]*\) .*/\1/p' "$tmp/$name.count/fa.log" \
		2>/dev/null | sort -n | tail -n 1)
	if [[ $out != ok || -z $total ]]; then
		tu_fail "$name: the path does not work without failures: $out"
		return
	fi
	if [[ $scope == ours && -z ${ALLOC_EVERY:-} ]]; then
		mapfile -t ns < <(site_ends "$tmp/$name.count/fa.log")
	elif [[ $scope == ours || $k == all ]]; then
		mapfile -t ns < <(seq 1 "$total")
	else
		for ((i = 0; i < k; i++)); do
			# evenly spaced and the same every run, so that CI's
			# results do not move; ALLOC_SHIFT=S moves them on
			ns+=($((1 + i * total / k +
				${ALLOC_SHIFT:-0} % (total / k + 1))))
		done
	fi
	# past the count: deep counts differ by a few from run to run (the
	# threads), so a tenth more there
	if [[ $scope == ours ]]; then
		ns+=($((total + 1)))
	else
		ns+=($((total + total / 10 + 1)))
	fi
	for ((j = 0; j < jobs; j++)); do
		list=()
		for ((i = j; i < ${#ns[@]}; i += jobs)); do
			list+=("${ns[i]}")
		done
		((${#list[@]})) || continue
		slot "$name.$j" "$name" "$proc" "$op" "$scope" "$allowed" \
			"${list[@]}" >"$tmp/$name.$j.out" &
	done
	wait
	cat -- "$tmp/$name".*.out | grep -E '^(FAIL|  |known|recovered)' |
		head -n 60
	local clean recovered known errs
	clean=$(cat -- "$tmp/$name".*.out | grep -c '^clean ')
	recovered=$(cat -- "$tmp/$name".*.out | grep -c '^recovered ')
	known=$(cat -- "$tmp/$name".*.out | grep -c '^known ')
	errs=$(cat -- "$tmp/$name".*.out | sed -n 's/^clean //p' | sort -u |
		tr '\n' ' ')
	grep -q '^complete ' "$tmp/$name".*.out ||
		tu_fail "$name: no run past the last allocation completed"
	echo "alloc.sh: $name: $total allocations, ${#ns[@]} runs:" \
		"$clean clean errors (${errs% }), $recovered recovered," \
		"$known outside the project, $((SECONDS - t0)) s"
}

failures=0
[[ -z ${ALLOC_NO_KNOWN:-} ]] || known=()
for p in "${paths[@]}"; do
	read -r -a f <<<"$p"
	if [[ -n ${ALLOC_PATHS:-} && " $ALLOC_PATHS " != *" ${f[0]} "* ]]; then
		continue
	fi
	loop "${f[@]}" | tee "$tmp/${f[0]}.report"
	n=$(grep -c '^FAIL' "$tmp/${f[0]}.report")
	failures=$((failures + n))
done
if ((failures)); then
	echo "alloc.sh: $failures failures"
	exit 1
fi
echo "alloc.sh: every path ended cleanly at every allocation tried"
