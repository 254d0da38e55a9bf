#!/usr/bin/perl
# scripts/pg-regress-compare.pl: compares two runs of PostgreSQL's regression
# suite (scripts/pg-regress-suite.sh runs them: A without gpusort, B with it)
# statement by statement, and classifies every statement whose output differs:
#
#   plan     plan text: an EXPLAIN, a call of a function named explain*, or a
#            result whose column is QUERY PLAN
#   order    the same lines in another order (rows of equal keys)
#   ties     a result difference of a statement listed in the --allowed file:
#            its result depends on the order of rows with equal sort keys
#            (first_value over peers, DISTINCT ON); listed, allowed
#   result   anything else, and any error or lost connection one run has and
#            the other has not, and a test whose output is missing in one run
#
# usage: pg-regress-compare.pl --sql DIR --a DIR --b DIR [--a-log FILE --b-log FILE]
#            [--server-log FILE] [--report FILE] [--label TEXT] [--notes FILE]
#            [--allowed FILE]
#   --sql       the suite's sql/ folder (each results NAME.out echoes sql/NAME.sql)
#   --a, --b    the two runs' results/ folders
#   --a-log, --b-log   pg_regress's output of each run (test process exit codes)
#   --server-log       run B's server log (a crashed backend)
#   --notes     markdown put at the head of the report
#   --allowed   lines "TEST<tab>STATEMENT<tab>WHY": a result difference of a
#               statement of TEST that begins with STATEMENT (blanks squeezed,
#               case ignored) is of the class ties
# Prints a table (test, class, blocks) and a last line "pg-regress-suite
# LABEL: N tests, N plan-text, N order, N ties, N result differences"
# (tests with at least one block of that class); exits 1 when a result differs.
#
# Statement blocks: psql -a echoes every line of the script it reads, so the
# echoed lines of an output file are the lines it has in common with its
# sql/NAME.sql (diff(1) finds them; COPY data and \i'd files are not echoed
# or not in the script), and the output printed after script line k belongs
# to the statement ending at line k.
use strict;
use warnings;
use File::Temp qw(tempdir);
use Getopt::Long;

my %opt = (label => '', report => '');
GetOptions(\%opt, 'sql=s', 'a=s', 'b=s', 'a-log=s', 'b-log=s', 'server-log=s',
	'report=s', 'label=s', 'notes=s', 'allowed=s') or die "bad arguments\n";
defined $opt{$_} or die "--$_ is required\n" for qw(sql a b);

my $tmp = tempdir(CLEANUP => 1);
my $error_re = qr/^(?:ERROR|FATAL|PANIC):|server closed the connection|connection to server was lost|could not connect to server/;

sub read_lines
{
	my ($file) = @_;
	open(my $fh, '<', $file) or return undef;
	my @lines = <$fh>;
	close $fh;
	chomp @lines;
	return \@lines;
}

# The output lines of $out keyed by the number of the last script line echoed
# before them (0: none), through diff's line formats: E echoed, S script only,
# O output.  The output's empty lines (psql's after each result) are kept out
# of the matching, lest one stand for an empty script line and the next
# echoed line pass for output.
sub output_by_line
{
	my ($sql, $out) = @_;
	my $lines = read_lines($out);
	my %by_line;
	my ($k, $echoed) = (0, 0);
	my $masked = "$tmp/out";
	open(my $fh, '>', $masked) or die "$masked: $!\n";
	print $fh map { $_ eq '' ? "\001\n" : "$_\n" } @$lines;
	close $fh;
	open(my $diff, '-|', 'diff', '--old-line-format=S%c\'\012\'', '--new-line-format=O%L',
		'--unchanged-line-format=E%c\'\012\'', $sql, $masked) or die "diff: $!\n";
	while (my $line = <$diff>)
	{
		chomp $line;
		my $kind = substr($line, 0, 1, '');
		$k++ if $kind ne 'O';
		$echoed = $k if $kind eq 'E';
		push @{ $by_line{$echoed} }, $line eq "\001" ? '' : $line if $kind eq 'O';
	}
	close $diff;
	return \%by_line;
}

# The text of the statement that ends at script line $k (1-based): back to the
# line after the previous one that ends with a semicolon or is a backslash command.
sub statement_at
{
	my ($script, $k, $from) = @_;
	my $start = $k;
	while ($start > $from + 1 && $start > 1)
	{
		my $prev = $script->[$start - 2];
		last if $prev =~ /;\s*(--.*)?$/ || $prev =~ /^\s*\\/;
		$start--;
	}
	$start++ while $start < $k && $script->[$start - 1] =~ /^\s*(--.*)?$/;
	return [ @{$script}[ $start - 1 .. $k - 1 ] ];
}

sub error_lines { return sort grep { $_ =~ $error_re } @{ $_[0] }; }

# the --allowed file: [test, lower-case statement prefix, why]
my @allowed;
if (defined $opt{allowed})
{
	for (@{ read_lines($opt{allowed}) || die "$opt{allowed}: $!\n" })
	{
		next if /^\s*(#|$)/;
		my ($test, $prefix, $why) = split /\t+/;
		push @allowed, [ $test, squeeze($prefix), $why // '' ];
	}
}

sub squeeze { my $t = lc($_[0] // ''); $t =~ s/\s+/ /g; $t =~ s/^ | $//g; return $t; }

# why the --allowed file allows a result difference of $test's $stmt, or undef
sub allowed_why
{
	my ($test, $stmt) = @_;
	my $text = squeeze(join(' ', grep { !/^\s*--/ } @$stmt));
	for (@allowed)
	{
		return $_->[2] if $_->[0] eq $test && substr($text, 0, length $_->[1]) eq $_->[1];
	}
	return undef;
}

sub classify
{
	my ($test, $stmt, $a, $b) = @_;
	my $text = join("\n", map { (my $l = $_) =~ s/--.*$//; $l } @$stmt);
	return 'result' if join("\n", error_lines($a)) ne join("\n", error_lines($b));
	return 'plan' if $text =~ /^\s*explain\b/i || $text =~ /\bexplain\w*\s*\(/i;
	return 'plan' if grep { /^\s*QUERY PLAN\s*$/ } (@$a, @$b);
	return 'order' if join("\n", sort @$a) eq join("\n", sort @$b);
	return 'ties' if defined allowed_why($test, $stmt);
	return 'result';
}

sub unified_diff
{
	my ($a, $b) = @_;
	my ($fa, $fb) = ("$tmp/a", "$tmp/b");
	for ([ $fa, $a ], [ $fb, $b ])
	{
		open(my $fh, '>', $_->[0]) or die "$_->[0]: $!\n";
		print $fh map { "$_\n" } @{ $_->[1] };
		close $fh;
	}
	my @d = `diff -U 2 --label without --label with '$fa' '$fb'`;
	return join('', @d);
}

# the tests whose psql ended abnormally in a run (pg_regress says "exit code")
sub abnormal_exits
{
	my ($log) = @_;
	my (%bad, $test);
	my $lines = defined $log ? read_lines($log) : undef;
	for (@{ $lines || [] })
	{
		# up to 15 "test NAME ... ok" (or indented in a group), from 16 on "ok N + NAME"
		$test = $1 if /^\s*(?:test\s+)?(\S+)\s+\.\.\./ || /^(?:not )?ok\s+\d+\s+[+-]?\s*(\S+)/;
		$bad{$test} = 1 if defined $test && /test process exited with exit code|terminated by signal/;
	}
	return \%bad;
}

sub out_names
{
	my ($dir) = @_;
	opendir(my $dh, $dir) or return ();
	my @n = map { s/\.out$//r } grep { /\.out$/ } readdir $dh;
	closedir $dh;
	return @n;
}

my %names = map { $_ => 1 } (out_names($opt{a}), out_names($opt{b}));
my @tests = sort keys %names;
my $exit_a = abnormal_exits($opt{'a-log'});
my $exit_b = abnormal_exits($opt{'b-log'});
my (@rows, @details, %tests_with);

foreach my $test (@tests)
{
	my ($fa, $fb, $fs) = ("$opt{a}/$test.out", "$opt{b}/$test.out", "$opt{sql}/$test.sql");
	my %count;
	my @blocks;

	if (!-f $fa || !-f $fb)
	{
		push @blocks, { class => 'result', stmt => ["(no output in the run " . (-f $fa ? 'with' : 'without') . " gpusort)"],
			diff => '' };
	}
	elsif ($exit_b->{$test} && !$exit_a->{$test})
	{
		push @blocks, { class => 'result', stmt => ['(psql ended abnormally in the run with gpusort)'], diff => '' };
	}
	if (-f $fa && -f $fb && system('cmp', '-s', $fa, $fb) != 0)
	{
		my $sqlfile = -f $fs ? $fs : '/dev/null';
		my $script = read_lines($sqlfile);
		my $oa = output_by_line($sqlfile, $fa);
		my $ob = output_by_line($sqlfile, $fb);
		my %keys = map { $_ => 1 } (keys %$oa, keys %$ob);
		my $prev = 0;
		foreach my $k (sort { $a <=> $b } keys %keys)
		{
			my ($la, $lb) = ($oa->{$k} || [], $ob->{$k} || []);
			if (join("\n", @$la) ne join("\n", @$lb))
			{
				my $stmt = statement_at($script, $k, $prev);
				push @blocks, { class => classify($test, $stmt, $la, $lb), stmt => $stmt, line => $k,
					diff => unified_diff($la, $lb) };
			}
			$prev = $k;
		}
	}
	next unless @blocks;
	$count{ $_->{class} }++ for @blocks;
	foreach my $class (qw(plan order ties result))
	{
		next unless $count{$class};
		push @rows, [ $test, $class, $count{$class} ];
		$tests_with{$class}++;
	}
	push @details, [ $test, \@blocks ];
}

if (defined $opt{'server-log'} && (my $log = read_lines($opt{'server-log'})))
{
	my @crash = grep { /terminated by signal|was terminated by exception|PANIC:|server process .* exited with exit code [^0]/ } @$log;
	if (@crash)
	{
		push @rows, [ '(server)', 'result', scalar @crash ];
		$tests_with{result}++;
		push @details, [ '(server)', [ { class => 'result', stmt => ['(the server log of the run with gpusort)'],
			diff => join("\n", @crash) . "\n" } ] ];
	}
}

my %class_name = (plan => 'plan text', order => 'order', ties => 'ties', result => 'RESULT');
printf "%-28s %-10s %s\n", 'test', 'class', 'blocks';
printf "%-28s %-10s %d\n", $_->[0], $class_name{ $_->[1] }, $_->[2] for @rows;
my $summary = sprintf "pg-regress-suite %s: %d tests, %d plan-text, %d order, %d ties, %d result differences",
	$opt{label}, scalar @tests, map { $tests_with{$_} || 0 } qw(plan order ties result);

if ($opt{report} ne '')
{
	open(my $r, '>', $opt{report}) or die "$opt{report}: $!\n";
	print $r "# PostgreSQL's regression suite with and without gpusort ($opt{label})\n\n";
	if (defined $opt{notes} && (my $notes = read_lines($opt{notes}))) { print $r map { "$_\n" } @$notes; print $r "\n"; }
	print $r "$summary\n\n";
	print $r "Classes: plan text (EXPLAIN output), order (the same lines in another order), ",
		"ties (a statement of the allowed list: its result depends on the order of rows with equal ",
		"sort keys), result (anything else: these fail). The counts are of tests.\n\n";
	print $r "| test | class | blocks |\n| --- | --- | --- |\n";
	print $r "| $_->[0] | $class_name{$_->[1]} | $_->[2] |\n" for @rows;
	foreach my $d (@details)
	{
		my ($test, $blocks) = @$d;
		my @shown = grep { $_->{class} ne 'plan' } @$blocks;
		next unless @shown;
		print $r "\n## $test\n";
		foreach my $blk (@shown)
		{
			my $where = defined $blk->{line} ? " (sql/$test.sql line $blk->{line})" : '';
			print $r "\n### $class_name{$blk->{class}}$where\n\n";
			print $r "Allowed: ", allowed_why($test, $blk->{stmt}), "\n\n" if $blk->{class} eq 'ties';
			print $r "```sql\n", join("\n", @{ $blk->{stmt} }), "\n```\n";
			print $r "\n```diff\n$blk->{diff}```\n" if $blk->{diff} ne '';
		}
	}
	my @plan_only = map { $_->[0] } grep { !grep { $_->{class} ne 'plan' } @{ $_->[1] } } @details;
	print $r "\n## Plan text\n\nTests whose only differences are plan text: ",
		(@plan_only ? join(', ', @plan_only) : 'none'), ". The statements (sql/NAME.sql line):\n\n";
	foreach my $d (@details)
	{
		foreach my $blk (grep { $_->{class} eq 'plan' } @{ $d->[1] })
		{
			my ($first) = grep { /\S/ } @{ $blk->{stmt} };
			printf $r "- %s %d: `%s`\n", $d->[0], $blk->{line}, substr($first // '', 0, 100);
		}
	}
	close $r;
}
print "$summary\n";
exit(($tests_with{result} || 0) > 0 ? 1 : 0);
