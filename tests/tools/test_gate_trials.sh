#!/bin/sh
# tools/gpu/gate_trials.py on a trace written by hand: a sequence whose
# first trial went eager on samples a phase change made (its first passes
# slow) and whose second trial replayed, shown sample by sample in the
# order read; one whose decision a watched move kept (gate_kept); one with
# a single verdict of replay, shown only with --all;
# a killed process's .part whose last line is cut; a file that is not a
# trace.  Runs from `make check`; skipped (77) without python3.
set -u
: "${top_srcdir:=.}"
GT=$top_srcdir/tools/gpu/gate_trials.py
. "$top_srcdir/tests/tools/py_lib.sh"

ev() { # ts name args
	printf '{"name":"%s","cat":"sequence","ph":"i","ts":%s,"pid":1,"tid":16777216,"args":{"stream":"0x10",%s}},\n' "$2" "$1" "$3"
}
sample() { # ts id kind clock us
	ev "$1" gate_sample "\"id\":\"$2\",\"kind\":\"$3\",\"clock\":\"$4\",\"us\":$5"
}
gate() { # ts id choice eager_us replay_us
	ev "$1" gate "\"id\":\"$2\",\"length\":196,\"eager_us\":$4,\"replay_us\":$5,\"choice\":\"$3\",\"eager_host_us\":$4,\"replay_host_us\":$5"
}
A=0x00000000000000aa B=0x00000000000000bb C=0x00000000000000cc
{
	echo "["
	ev 1000 learned "\"id\":\"$A\",\"length\":196,\"how\":\"boundary\""
	sample 2000 $A eager gpu 6100
	sample 2100 $A replay gpu 6000
	sample 2200 $A replay gpu 6050
	sample 2300 $A eager gpu 700
	sample 2400 $A replay gpu 650
	sample 2500 $A eager gpu 710
	sample 2600 $A eager gpu 690
	sample 2700 $A replay gpu 640
	gate 2800 $A eager 705 3325
	sample 9000 $A eager gpu 700
	sample 9100 $A replay gpu 640
	gate 9200 $A replay 700 640
	sample 9300 $B eager gpu 90
	sample 9400 $B replay gpu 40
	gate 9500 $B replay 90 40
	sample 9550 $C eager gpu 50
	sample 9560 $C replay gpu 20
	gate 9570 $C replay 50 20
	ev 9600 gate_kept "\"id\":\"$B\",\"length\":196,\"was_us\":40.0,\"now_us\":15.0"
	printf '{"name":"gate_sample","cat":"seq'
} >"$tmp/t.json.1.part"

if python3 "$GT" "$tmp/t.json.1.part" >"$tmp/out" 2>&1; then
	check "the counts" "3 sequences decided by a trial; first decision eager: 1; two or more decisions: 1; kept by the watch: 1"
	check "the first trial's verdict" "trial 1 from 1.0 ms: eager: gpu 705/3325"
	check "its samples in the order read" "gpu : E6100 R6000 R6050 E700 R650 E710 E690 R640$"
	check "the second trial" "trial 2 from 8.0 ms: replay: gpu 700/640"
	check "a decision the watch kept is shown" "sequence 0x00000000000000bb (196 launches)"
	if grep -q "0x00000000000000cc" "$tmp/out"; then
		echo "FAIL: a sequence with one verdict of replay shown without --all"
		fail=1
	else
		echo "ok: one verdict of replay left out by default"
	fi
else
	echo "FAIL: gate_trials.py on a good trace exited non-zero"
	cat "$tmp/out"
	fail=1
fi
python3 "$GT" --all "$tmp/t.json.1.part" >"$tmp/out" 2>&1
check "--all shows it" "sequence 0x00000000000000cc (196 launches)"
check "a watched move that kept the decision" "kept at 8.6 ms: watched passes 15 us, were 40 us"

printf '[\n{"name":"gate",\n{"name":"pass"}\n' >"$tmp/bad.json"
refuses "a cut line inside the file is refused with its place" "bad.json:2: not a trace event line" \
	python3 "$GT" "$tmp/bad.json"

exit $fail
