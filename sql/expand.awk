# Expands the per-type blocks of gpusort's SQL sources (POSIX awk):
#
#   -- @each int2 int4 date
#   CREATE FUNCTION f(a @T@[]) ...;
#   -- @end
#
# prints the lines between the markers once for each listed type, @T@
# replaced by the type's name; every other line is copied.  With the variable
# only set to a list of types (awk -v only="date timestamp"), the blocks are
# printed for those types instead and the lines outside blocks are left out:
# the upgrade script takes from gpusort.sql.in only what 1.0 lacked.  A
# variable assigned between file operands (only= file) applies to the files
# after it.

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
	if (only != "")
		ntypes = split(only, types, " ")
	else
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

only == "" {
	if (index($0, "@T@"))
		fail("@T@ outside an @each block")
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
