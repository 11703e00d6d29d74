# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=sh
# build_kind.sh -- what kind of build a tree is, and whether its figures
# mean anything (sourced)
#
# One word for a build: optimised, coverage (gcov or clang profile
# counters), sanitizers (-fsanitize) or unoptimised (-O0, -Og or no -O;
# the last -O given wins, as with gcc).  It is read from the flags the
# build records: configure sources this file to define RPMEM_BUILD_KIND
# for the C code (src/tools/build_kind.c, what `rpmem bench` refuses),
# and the scripts read the CFLAGS, WARN_CFLAGS and LDFLAGS that configure
# wrote into the tree's Makefile.  Flags given to make alone
# (`make CFLAGS=-O0`) are recorded nowhere, so the scripts cannot see
# them; the C side sees -O0 through __OPTIMIZE__.
#
#   build_kind_of FLAGS          the word for these compiler and linker flags
#   build_kind_tree DIR          the word for a configured tree DIR, or
#                                "unconfigured" when DIR has no Makefile
#   build_kind_refuse ME DIR     0 for an optimised tree; otherwise the
#                                reason on stderr, prefixed "ME: ", and 1
#   build_kind_why KIND, build_kind_message SUBJECT KIND  its words

# POSIX sh: configure (dash on Debian) sources it too.  Each function
# runs in a subshell of its own, so that it sets nothing in the caller.

# build_kind_of -- the kind of a build compiled and linked with FLAGS
build_kind_of() (
	set -f
	opt=none kind=
	# shellcheck disable=SC2048 # words of one or more strings of flags
	for f in $*; do
		case $f in
		--coverage | -fprofile-arcs | -ftest-coverage | \
			-fprofile-instr-generate*) kind=coverage ;;
		-fsanitize=*) [ -n "$kind" ] || kind=sanitizers ;;
		-O | -O[1-9s] | -Ofast | -Oz) opt=on ;;
		-O0 | -Og) opt=off ;;
		esac
	done
	if [ -n "$kind" ]; then
		echo "$kind"
	elif [ "$opt" = on ]; then
		echo optimised
	else
		echo unoptimised
	fi
)

# build_kind_tree -- the kind of the configured tree $1, from the flags
# configure wrote into its Makefile
build_kind_tree() (
	mk=$1/Makefile
	[ -f "$mk" ] || { echo unconfigured; exit 0; }
	build_kind_of "$(sed -n 's/^\(CFLAGS\|WARN_CFLAGS\|LDFLAGS\) = //p' \
		"$mk")"
)

# build_kind_why -- what a build of kind $1 is
build_kind_why() {
	case $1 in
	coverage) echo "built with coverage counters" \
		"(./scripts/test.sh builds so)" ;;
	sanitizers) echo "built with sanitizers" \
		"(configure --enable-sanitizers, tests/sanitize/run.sh)" ;;
	unoptimised) echo "built without optimisation (-O0, -Og or no -O)" ;;
	*) echo "not configured" ;;
	esac
}

# build_kind_message -- what is said of $1 (a tree, "this rpmem") built
# as kind $2, the words of src/tools/build_kind.c
build_kind_message() {
	echo "$1 is $(build_kind_why "$2"): figures from it mean nothing;" \
		"run ./scripts/setup.sh on a fresh checkout, or" \
		"\`make clean && ./configure && make\`"
}

# build_kind_refuse -- refuse, for $1, a tree $2 whose figures mean nothing
build_kind_refuse() (
	kind=$(build_kind_tree "$2")
	[ "$kind" = optimised ] && exit 0
	echo "$1: $(build_kind_message "$2" "$kind")" >&2
	exit 1
)
