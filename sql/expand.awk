# Expands the per-type blocks of gpusort's SQL fragments (POSIX awk):
#
#   -- @each int2 int4 anyelement
#   CREATE FUNCTION f(a @A@) RETURNS @T@ ...;
#   -- @end
#
# prints the lines between the markers once for each listed type, @T@
# replaced by the type's name and @A@ by its array type (@T@[], and anyarray
# for anyelement); every other line is copied.

# a block ends in the file that opened it
FNR == 1 && inblock {
	printf "%s:%d: @each without @end\n", blockfile, blockstart > "/dev/stderr"
	failed = 1
	exit 1
}

/^-- @each[ \t]/ {
	if (inblock)
		fail("@each inside an @each block")
	ntypes = 0
	for (i = 3; i <= NF; i++)
		types[++ntypes] = $i
	nlines = 0
	inblock = 1
	blockstart = FNR
	blockfile = FILENAME
	next
}

/^-- @end[ \t]*$/ {
	if (!inblock)
		fail("@end without @each")
	for (t = 1; t <= ntypes; t++)
		for (i = 1; i <= nlines; i++) {
			line = lines[i]
			gsub(/@A@/, (types[t] == "anyelement") ? "anyarray" : (types[t] "[]"), line)
			gsub(/@T@/, types[t], line)
			print line
		}
	inblock = 0
	next
}

inblock {
	lines[++nlines] = $0
	next
}

{
	if (index($0, "@T@") || index($0, "@A@"))
		fail("@T@ or @A@ outside an @each block")
	print
}

function fail(msg) {
	printf "%s:%d: %s\n", FILENAME, FNR, msg > "/dev/stderr"
	failed = 1
	exit 1
}

END {
	if (!failed && inblock) {
		printf "%s:%d: @each without @end\n", blockfile, blockstart > "/dev/stderr"
		exit 1
	}
}
