# SPDX-License-Identifier: BSD-3-Clause
# help2c.awk -- cli_text.c from help.txt: each "[NAME]" section becomes
# one entry of Cli_texts, its lines a C string, blank lines at its end
# dropped.  A line before the first section, a name given twice or a
# section without text is an error (exit 1).
#
#   awk -f help2c.awk help.txt > cli_text.c

function fail(msg) {
	printf "%s:%d: %s\n", FILENAME, FNR, msg > "/dev/stderr"
	failed = 1
	exit 1
}

# cstr -- `s` as the inside of a C string: \ and " escaped (awks differ
# in what gsub makes of backslashes, so one character at a time)
function cstr(s,   out, i, c) {
	out = ""
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c == "\\" || c == "\"")
			out = out "\\"
		out = out c
	}
	return out
}

# finish -- end the open section, the blank lines it ended with dropped
function finish() {
	if (name == "")
		return
	if (nlines == 0)
		fail("[" name "] has no text")
	printf "\t{ \"%s\",\n", name
	for (i = 1; i <= nlines; i++)
		printf "\t\t\"%s\\n\"%s\n", lines[i], i == nlines ? " }," : ""
	nlines = 0
	pending = 0
}

BEGIN {
	print "/* cli_text.c -- made from help.txt by help2c.awk: do not edit */"
	print "#include <stddef.h>"
	print "#include \"cli.h\""
	print ""
	print "const struct cli_text Cli_texts[] = {"
}

/^#/ { next }

/^\[[a-z][-a-z]*\]$/ {
	finish()
	name = substr($0, 2, length($0) - 2)
	if (name in seen)
		fail("[" name "] given twice")
	seen[name] = 1
	next
}

{
	if (name == "") {
		if ($0 == "")
			next
		fail("text before the first [NAME]")
	}
	if ($0 == "") {		# kept only if text follows
		pending++
		next
	}
	line = cstr($0)
	for (; pending > 0; pending--)
		lines[++nlines] = ""
	lines[++nlines] = line
}

END {
	if (failed)
		exit 1
	finish()
	print "\t{ NULL, NULL },"
	print "};"
}
