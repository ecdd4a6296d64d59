#!/bin/sh
# run.sh — run each libFuzzer target for a fixed time (make fuzz-run;
# HACKING.md, "Fuzzing").
#
#   tests/fuzz/run.sh SECONDS SEEDS WORK TARGET...
#
# TARGET is a built fuzz_NAME; its seed corpus is SEEDS/NAME (read only)
# and what it adds goes to WORK/corpus/NAME, kept between runs in the
# build tree.  A crash, leak, sanitizer report, timeout or broken
# invariant fails the run: the reproducer is saved under
# WORK/artifacts/NAME/, printed (as od -c) with the command that replays
# it, and the exit status is 1.  The last line is "N passed, M failed".

secs=${1:?usage: run.sh SECONDS SEEDS WORK TARGET...}
seeds=${2:?}
work=${3:?}
shift 3
passed=0
failed=0
mkdir -p "$work" || exit 2
for t in "$@"; do
	name=${t##*/fuzz_}
	corpus=$work/corpus/$name
	art=$work/artifacts/$name
	log=$work/$name.log
	mkdir -p "$corpus" "$art" || exit 2
	# No standard input: a reader must never wait on one (/dev/stdin).
	# -timeout: one input may take 10 s at most; -rss_limit_mb: 2 GiB.
	"$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
	    -max_len=16384 -print_final_stats=1 -artifact_prefix="$art/" \
	    "$corpus" "$seeds/$name" </dev/null >"$log" 2>&1
	st=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" |
	    tail -n 1)
	nseeds=$(find "$seeds/$name" -type f | wc -l)
	ncorpus=$(find "$corpus" -type f | wc -l)
	if [ "$st" = 0 ]; then
		echo "ok fuzz_$name: ${execs:-?} executions in $secs s," \
		    "corpus $ncorpus inputs (seeds $nseeds)"
		passed=$((passed + 1))
		continue
	fi
	echo "FAIL fuzz_$name: exit status $st after ${execs:-?} executions" \
	    "(log: $log)"
	sed -n '/ERROR\|==[0-9]*==\|fuzz: \|SUMMARY\|runtime error/,$p' \
	    "$log" | head -n 60 | sed 's/^/    /'
	for f in "$art"/*; do
		[ -f "$f" ] || continue
		echo "    reproducer $f ($(wc -c <"$f") bytes):"
		od -c "$f" | head -n 40 | sed 's/^/      /'
		echo "    replay: $t $f"
	done
	failed=$((failed + 1))
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" = 0 ]
