#!/bin/sh
# Tests of the `graphshim` command: exit codes and output of run, trace
# summarize and compare on good, regressed, malformed, missing and empty
# inputs; runs of different lengths, coverage lost to the gate, runs of
# several processes; run's checks of its outputs, relative names and
# signals.  Runs from `make check` (top_builddir/top_srcdir exported).
# The library end to end on the simulator: t-outputs.sh.
set -u
: "${top_builddir:=.}" "${top_srcdir:=.}"
GS=$top_builddir/tools/graphshim
GEN=$top_builddir/tests/tools/gen_trace
DATA=$top_srcdir/tests/tools/data
[ -x "$GS" ] || { echo "SKIP: $GS not built (jansson missing?)"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gs-cli.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0

# expect STATUS COMMAND...: run it, keep stdout/stderr in $tmp/out, $tmp/err.
expect() {
	want=$1
	shift
	"$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	if [ "$got" -ne "$want" ]; then
		echo "FAIL: $* -> exit $got, expected $want"
		sed 's/^/  out: /' "$tmp/out"
		sed 's/^/  err: /' "$tmp/err"
		fail=1
	else
		echo "ok: exit $got: $*"
	fi
}

# has FILE PATTERN: the last command's stdout or stderr matches.
has() {
	if ! grep -q -e "$2" "$tmp/$1"; then
		echo "FAIL: $1 of the last command lacks: $2"
		sed "s/^/  $1: /" "$tmp/$1"
		fail=1
	fi
}

# --- general
expect 0 "$GS" --version
has out "^graphshim [0-9]"
expect 0 "$GS" --help
has out "compare"
expect 2 "$GS"
expect 2 "$GS" frobnicate
has err "unknown command"
for c in run trace compare; do
	expect 0 "$GS" $c --help
	has out "^Usage: graphshim $c"
done

# --- compare
expect 0 "$GS" compare "$DATA/base.json" "$DATA/same.json"
has out "verdict: ok"
expect 0 "$GS" compare "$DATA/base.json" "$DATA/base.json"
expect 1 "$GS" compare "$DATA/base.json" "$DATA/regress.json"
has out "verdict: REGRESSION (3 limits exceeded)"
has out "coverage.*REGRESSION"
has out "mismatches.*REGRESSION"
expect 0 "$GS" compare --max-coverage-drop 10 --max-launches-increase 20 \
	--max-mismatch-increase 7 "$DATA/base.json" "$DATA/regress.json"
expect 1 "$GS" compare "$DATA/base.json" "$DATA/regress.json" --max-coverage-drop=10 \
	--max-launches-increase=20 --max-mismatch-increase=6
has out "mismatches.*REGRESSION"
# A record sent out of its stream's order or twice is a regression whatever the limits.
expect 1 "$GS" compare --max-coverage-drop 100 "$DATA/base.json" "$DATA/order_errors.json"
has out "order errors.*REGRESSION"
expect 0 "$GS" compare "$DATA/order_errors.json" "$DATA/base.json"
# An improvement is never a regression.
expect 0 "$GS" compare "$DATA/regress.json" "$DATA/base.json"
# Launches per step: 100 -> 110 per step is +10%.
expect 1 "$GS" compare "$DATA/steps_base.json" "$DATA/steps_new.json"
has out "launches/step.*REGRESSION"
expect 0 "$GS" compare "$DATA/steps_base.json" "$DATA/steps_new.json" --max-launches-increase 10
for bad in malformed empty missing_key wrong_type does_not_exist; do
	expect 2 "$GS" compare "$DATA/base.json" "$DATA/$bad.json"
	has err "$bad.json"
	expect 2 "$GS" compare "$DATA/$bad.json" "$DATA/base.json"
done
expect 2 "$GS" compare "$DATA/base.json" "$DATA/missing_key.json"
has err "missing key counters.graphs"
expect 2 "$GS" compare "$DATA/base.json" "$DATA/wrong_type.json"
has err "counters.launches: expected"
expect 2 "$GS" compare "$DATA/base.json" "$DATA/empty.json"
has err "empty"
printf '[1, 2]\n' >"$tmp/array.json"
expect 2 "$GS" compare "$DATA/base.json" "$tmp/array.json"
has err "expected a JSON object"
expect 2 "$GS" compare "$DATA/base.json"
expect 2 "$GS" compare "$DATA/base.json" "$DATA/same.json" "$DATA/same.json"
expect 2 "$GS" compare "$DATA/base.json" "$DATA/same.json" --max-coverage-drop -1
expect 2 "$GS" compare "$DATA/base.json" "$DATA/same.json" --max-mismatch-increase 1.5
expect 2 "$GS" compare "$DATA/base.json" "$DATA/same.json" --max-launches-increase
expect 2 "$GS" compare "$DATA/base.json" "$DATA/same.json" --bogus
# A run twice as long is no regression: steps estimated from the main
# sequence's sightings (and said so); mismatches scaled to them.
expect 0 "$GS" compare "$DATA/steps200.json" "$DATA/steps400.json"
has out "launches/step .* 198.0 .* 198.0 .*ok"
has out "estimated: the sightings of each run's main sequence"
has out "mismatches .*ok (limit +0 over 2.0"
# The gate's eager launches per step: twice the steps, twice as many, is no news.
sed 's/"gated": 594/"gated": 1188/' "$DATA/steps400.json" >"$tmp/g400.json"
expect 0 "$GS" compare "$DATA/steps200.json" "$tmp/g400.json"
if grep -q "sent .* launches eagerly" "$tmp/out"; then
	echo "FAIL: compare calls the gate's launches more where per step they are not"; fail=1
fi
sed 's/"gated": 594/"gated": 1500/' "$DATA/steps400.json" >"$tmp/g400.json"
expect 0 "$GS" compare "$DATA/steps200.json" "$tmp/g400.json"
has out "sent 1500 of the new run's launches eagerly (base: 594)"
# Variables that change what runs are named; those that only shape the
# outputs (a base made without --overwrite, another log level) are not.
sed -e 's/"GRAPHSHIM_LEARN_REPS": 2/"GRAPHSHIM_LEARN_REPS": 3/' \
	-e 's/"GRAPHSHIM_GATE": "auto"/&, "GRAPHSHIM_OVERWRITE": true, "GRAPHSHIM_LOG": "debug"/' \
	"$DATA/steps200.json" >"$tmp/cfg.json"
expect 0 "$GS" compare "$DATA/steps200.json" "$tmp/cfg.json"
has out "configuration differs: GRAPHSHIM_LEARN_REPS 2 -> 3"
has out "coverage .* +0.0 pp  ok"
if grep -q -e OVERWRITE -e GRAPHSHIM_LOG "$tmp/out"; then
	echo "FAIL: compare names a variable that only shapes the outputs"; sed 's/^/  out: /' "$tmp/out"; fail=1
fi
# Totals when nothing says the steps: the same pair is then a change.
expect 1 "$GS" compare "$DATA/base.json" "$DATA/steps400.json"
has out "steps: unknown"
# Coverage lost to the gate's choice is named, with the timings behind it.
expect 1 "$GS" compare "$DATA/steps400.json" "$DATA/gate_new.json"
has out "coverage .*REGRESSION .*the gate chose eager"
has out "matched .* 99.0% .* 99.5%"
has out "sequence 0x00000000000000aa (198 launches): eager 86061.4 us, replay 116594.0 us"
has out "pin GRAPHSHIM_GATE=replay"
has out "the coverage change comes from the gate"
# A run of several processes is read whole: the first file notes the others.
expect 0 "$GS" compare "$DATA/procs.json" "$DATA/procs.json"
has out "base: 2 processes: .*procs.json, .*procs.4242.json"
has out "launches .* 59400 .* 59400"
# Steps over the processes that step the same main sequence: 200 + 100.
has out "launches/step .* 198.0 .* 198.0"
has out "steps: 300 and 300, estimated: .*198 launches, in 2 processes"
expect 0 "$GS" compare --single "$DATA/procs.json" "$DATA/procs.json"
has out "launches .* 39600 .* 39600"
# A pattern is one run.
expect 0 "$GS" compare "$DATA/procs.json" "$DATA/procs*.json"
has out "new: 2 processes"
expect 2 "$GS" compare "$DATA/procs.json" "$DATA/nothing-*.json"

# --- trace summarize
if [ -x "$GEN" ]; then
	"$GEN" "$tmp/t.json" || fail=1
	expect 0 "$GS" trace summarize "$tmp/t.json"
	has out "0x000000000000aaaa  0x1000 .* 8  boundary  built  *2.000  *10  *0  *1  *1  *42.8%"
	# Two chunks: the length is the sequence's, not its last replay's chunk.
	has out "0x000000000000cccc  0x3000 .* 12  boundary  built  *1.000  *3  *0  *1  *0  *23.5%"
	has out "0x000000000000bbbb  0x2000 .* 4  period    retired .* 2 "
	has out "^  DRIFT .* 3  arg 2 (3)"
	has out "^  STRUCTURE .* 1  grid (1)"
	has out "^  SYNC .* 12 .* cuStreamSynchronize (12)"
	has out "^  EVENT .* 3 .* cuEventRecord (3)"
	has out "^  graph_instantiate .* 1  2"
	has out "events 260 (cap 1000000, dropped 0)"
	has out "variants 1 built, 4 of the graph launches were of one"
	has out "launches 187 (eager 48, held 139, released 7)"
	# A trace left by a killed process: no "]" and a trailing comma, in NAME.PID.part.
	"$GEN" -k "$tmp/killed.json" 2>/dev/null
	killed=$(ls "$tmp"/killed.json.*.part 2>/dev/null | head -n 1)
	[ ! -e "$tmp/killed.json" ] && [ -n "$killed" ] || {
		echo "FAIL: a killed trace is at its name, or has no .part"; fail=1; killed=$tmp/killed.json; }
	tail -c 3 "$killed" | od -c | grep -q '}   ,  \\n' || {
		echo "FAIL: the killed trace does not end at a whole event"; fail=1; }
	expect 0 "$GS" trace summarize "$killed"
	has out "not closed"
	has out "0x000000000000aaaa"
	# The same, cut after a comma by hand, and after a brace without one.
	head -n 40 "$tmp/t.json" >"$tmp/cut.json"
	expect 0 "$GS" trace summarize "$tmp/cut.json"
	head -n 40 "$tmp/t.json" | sed '$ s/,$//' >"$tmp/cut2.json"
	expect 0 "$GS" trace summarize "$tmp/cut2.json"
	# Cut in the middle of an event: a clear error, not a crash.
	head -c 3000 "$tmp/t.json" >"$tmp/mid.json"
	expect 2 "$GS" trace summarize "$tmp/mid.json"
	has err "mid.json: not valid JSON"
else
	echo "SKIP: $GEN not built"
fi
expect 0 "$GS" trace summarize "$DATA/object_form.json"
has out "^  SYNC .* 2 .* cuCtxSynchronize (2)"
# A mismatch whose segment was a step of its own is counted, and said to be forgiven.
expect 0 "$GS" trace summarize "$DATA/forgiven.json"
has out "STRUCTURE  *2  layout (2)"
has out "(1 not charged toward retirement: the segment they ended was a step of its own)"
# A watched move that kept the gate's choice is counted.
expect 0 "$GS" trace summarize "$DATA/gate_kept.json"
has out "replay 62343/61516"
has out "(1 time(s) the gate kept its choice when replayed passes got over twice as short"
has out "(1 sequence(s) took a like sequence's verdict of replay on their stream"
expect 2 "$GS" trace summarize "$DATA/bad_trace.json"
has err "bad_trace.json: not valid JSON .*line 3"
expect 2 "$GS" trace summarize "$DATA/empty.json"
has err "empty"
expect 2 "$GS" trace summarize "$DATA/does_not_exist.json"
has err "does_not_exist.json: No such file"
expect 2 "$GS" trace summarize "$DATA/base.json"
has err "not a trace"
expect 2 "$GS" trace summarize
expect 2 "$GS" trace
expect 2 "$GS" trace frobnicate x

# trace summarize --check: the figures the trace and the statistics share.
if [ -x "$GEN" ]; then
	cat >"$tmp/gen-stats.json" <<-EOF
	{"pid": $(sed -n 's/.*"process_name".*"pid":\([0-9]*\).*/\1/p' "$tmp/t.json" | head -n 1),
	 "counters": {"launches": 187, "passed": 48, "held": 139, "released": 7, "gated": 0,
	  "replayed": 132, "replays": 19, "variants": 1, "variant_replays": 4, "mismatches": 6,
	  "flushes": 16},
	 "coverage": 0.705882, "sequences_truncated": false,
	 "sequences": [{"id": "0x000000000000aaaa", "stream": "0x1000", "length": 8, "replays": 10,
	  "eager_passes": 0, "mismatches": 1, "patches": 1, "gate": "replay"},
	  {"id": "0x000000000000cccc", "stream": "0x3000", "length": 12, "replays": 3,
	  "eager_passes": 0, "mismatches": 1, "patches": 0, "gate": "replay"}],
	 "process_files": []}
	EOF
	expect 0 "$GS" trace summarize "$tmp/t.json" --check "$tmp/gen-stats.json"
	has out "check: all 22 figures agree (totals, and 2 sequences)"
	sed 's/"launches": 187/"launches": 188/; s/"replays": 10/"replays": 11/; s/"variants": 1/"variants": 2/; s/"variant_replays": 4/"variant_replays": 3/' \
		"$tmp/gen-stats.json" >"$tmp/gen-bad.json"
	expect 1 "$GS" trace summarize "$tmp/t.json" --check "$tmp/gen-bad.json"
	has out "DIFFERS  launches .* trace 187, statistics 188"
	has out "DIFFERS  variants .* trace 1, statistics 2"
	has out "DIFFERS  variant_replays .* trace 4, statistics 3"
	has out "DIFFERS  sequence 0x000000000000aaaa 0x1000: replays: trace 10, statistics 11"
	expect 2 "$GS" trace summarize "$killed" --check "$tmp/gen-stats.json"
	has err "not finished"
	expect 2 "$GS" trace summarize "$tmp/t.json" --check "$DATA/base.json"
	has err "not of the same processes"
fi

# --- run
# Most checks preload a stand-in that is not a shared object: ld.so reports
# it and runs the program anyway, so they do not depend on what the real
# library does when loaded (sanitizer builds cannot be preloaded into
# uninstrumented programs).
fake=$tmp/libfake.so
echo "not a library" >"$fake"
expect 0 env GRAPHSHIM_LIB="$fake" "$GS" run --stats "$tmp/s-%p.json" --trace "$tmp/t-%p.json" \
	--trace-max 50 --log debug --summary --overwrite --disable -- env
has out "^GRAPHSHIM_STATS=$tmp/s-%p.json\$"
has out "^GRAPHSHIM_TRACE=$tmp/t-%p.json\$"
has out "^GRAPHSHIM_TRACE_MAX=50\$"
has out "^GRAPHSHIM_LOG=debug\$"
has out "^GRAPHSHIM_SUMMARY=1\$"
has out "^GRAPHSHIM_OVERWRITE=1\$"
has out "^GRAPHSHIM_ENABLE=0\$"
has out "^LD_PRELOAD=$fake\$"
# An existing LD_PRELOAD is kept after the shim; a second copy is not added.
expect 0 env LD_PRELOAD="$fake" "$GS" run --lib "$fake" -- env
has out "^LD_PRELOAD=$fake\$"
other=$tmp/libother.so
echo "not a library" >"$other"
expect 0 env LD_PRELOAD="$other $fake" "$GS" run --lib "$fake" -- env
has out "^LD_PRELOAD=$fake:$other\$"
expect 0 env GRAPHSHIM_LIB="$fake" "$GS" run -- sh -c 'echo "args:$0:$1"' a b
has out "^args:a:b\$"
# Options after the program belong to the program.
expect 0 env GRAPHSHIM_LIB="$fake" "$GS" run sh -c 'echo "$0 $LD_PRELOAD"' --stats
has out "^--stats $fake\$"
# The program's own exit status comes back.
expect 3 env GRAPHSHIM_LIB="$fake" "$GS" run -- sh -c 'exit 3'
expect 127 env GRAPHSHIM_LIB="$fake" "$GS" run -- /nonexistent/program
has err "command not found"
expect 127 env GRAPHSHIM_LIB="$fake" "$GS" run -- graphshim-no-such-command
expect 126 env GRAPHSHIM_LIB="$fake" "$GS" run -- "$fake"
expect 2 env GRAPHSHIM_LIB="$tmp/nope.so" "$GS" run -- true
has err "nope.so"
expect 2 "$GS" run --lib "$tmp/nope.so" -- true
expect 2 "$GS" run --log loud -- true
expect 2 "$GS" run --trace-max 0 -- true
expect 2 "$GS" run --stats
expect 2 "$GS" run --bogus -- true
expect 2 "$GS" run --

# Outputs are checked before the program starts (it must not run at all).
cd "$tmp" || exit 99
mkdir -p o adir
echo old >o/stale.json
expect 2 env GRAPHSHIM_LIB="$fake" "$GS" run --stats o/stale.json -- sh -c 'touch ran'
has err "o/stale.json: exists: the statistics of an earlier run would pass for this run's"
[ ! -e ran ] || { echo "FAIL: the program ran although its output was refused"; fail=1; }
[ "$(cat o/stale.json)" = old ] || { echo "FAIL: a refused output was touched"; fail=1; }
expect 2 env GRAPHSHIM_LIB="$fake" "$GS" run --trace nodir/t.json -- sh -c 'touch ran'
has err "nodir/t.json: the directory .*/nodir does not exist"
expect 2 env GRAPHSHIM_LIB="$fake" "$GS" run --stats adir -- sh -c 'touch ran'
has err "adir: is a directory"
ln -s "$tmp/o/elsewhere.json" o/link.json
expect 2 env GRAPHSHIM_LIB="$fake" "$GS" run --stats o/link.json -- sh -c 'touch ran'
has err "is a symbolic link"
# The environment's outputs are checked too.
expect 2 env GRAPHSHIM_LIB="$fake" GRAPHSHIM_STATS=o/stale.json "$GS" run -- sh -c 'touch ran'
has err "GRAPHSHIM_STATS .*stale.json: exists"
[ ! -e ran ] || { echo "FAIL: the program ran although its output was refused"; fail=1; }
# --overwrite removes the earlier run's file and the files it notes, first.
printf '{"process_files": ["stale.77.json"]}\n' >o/stale.json
echo old >o/stale.77.json
expect 0 env GRAPHSHIM_LIB="$fake" "$GS" run --overwrite --stats o/stale.json -- \
	sh -c 'test ! -e o/stale.json && test ! -e o/stale.77.json && echo gone'
has out "^gone\$"
has err "no statistics at .*/o/stale.json: no process made a GPU call"
# Relative names are made absolute where run starts (a program may move).
expect 0 env GRAPHSHIM_LIB="$fake" "$GS" run --stats rel.json --trace ./t-%p.json -- sh -c 'cd / && env'
has out "^GRAPHSHIM_STATS=$tmp/rel.json\$"
has out "^GRAPHSHIM_TRACE=$tmp/t-%p.json\$"
has err "no trace were written (.*t-%p.json): no process made a GPU call"
# --steps; --disable says what it means.
expect 0 env GRAPHSHIM_LIB="$fake" "$GS" run --steps 200 -- env
has out "^GRAPHSHIM_STEPS=200\$"
expect 2 env GRAPHSHIM_LIB="$fake" "$GS" run --steps 0 -- true
expect 0 env GRAPHSHIM_LIB="$fake" "$GS" run --disable --stats d.json -- true
has err "disable: the shim passes every call through and writes no statistics"
# Signals: passed on to the program (here sent to run by another process),
# and the program's end by a signal is run's.
expect 3 env GRAPHSHIM_LIB="$fake" "$GS" run -- sh -c 'trap "echo got TERM; exit 3" TERM; sh -c "kill -TERM $PPID"; sleep 5 & wait'
has out "^got TERM\$"
# Not SIGINT where this test was started with it ignored (a background job
# of a shell, as under nohup ... &): then run passes it on to nothing, and
# the program, which inherits the same, cannot trap it.
sigign=$(sed -n 's/^SigIgn:[[:space:]]*//p' /proc/$$/status 2>/dev/null)
if [ -n "$sigign" ] && [ $((0x$sigign & 2)) -ne 0 ]; then
	echo "skip: SIGINT is ignored here (started as a background job)"
else
	expect 3 env GRAPHSHIM_LIB="$fake" "$GS" run -- sh -c 'trap "echo got INT; exit 3" INT; sh -c "kill -INT $PPID"; sleep 5 & wait'
	has out "^got INT\$"
fi
expect 143 env GRAPHSHIM_LIB="$fake" "$GS" run -- sh -c 'kill -TERM $$'
cd - >/dev/null || exit 99

# The search finds the library built next to the command.  Loading it into
# a plain program is skipped for sanitizer builds, which cannot be preloaded
# into an uninstrumented program.
built=$top_builddir/.libs/libgraphshim.so
[ -f "$built" ] || built=$top_builddir/shim/.libs/libgraphshim.so
if [ -f "$built" ] && ! ldd "$built" 2>/dev/null | grep -q -e libasan -e libubsan -e libtsan; then
	expect 0 env -u GRAPHSHIM_LIB "$GS" run --disable -- sh -c 'echo "$LD_PRELOAD"'
	has out "^/.*libgraphshim\.so\$"
else
	echo "SKIP: the built library is absent or sanitized: search not exercised"
fi

exit $fail
