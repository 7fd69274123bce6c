#!/bin/sh
# tools/gpu/losses.py on events written by hand (as real.sh keeps them:
# no launch events).  A run of 20 steps, each a 6-launch step and a
# 10-launch step between syncs, plus a 4-launch step sent eagerly: in the
# second half the 6-launch step replays (one pass sent eagerly by the
# gate), the 10-launch one retires after three mismatches and goes
# eagerly; the 4-launch segments replay through a periodic sequence of 2
# inside them.  A cut line (a killed process's .part) ends the file; a
# file that is not a trace is refused.  Runs from `make check`; skipped
# (77) without python3.
set -u
: "${top_srcdir:=.}"
LO=$top_srcdir/tools/gpu/losses.py
. "$top_srcdir/tests/tools/py_lib.sh"

A=0x00000000000000aa B=0x00000000000000bb P=0x00000000000000cc
ev() { # cat name args
	printf '{"name":"%s","cat":"%s","ph":"i","ts":1,"pid":1,"tid":16777216,"args":{"stream":"0x10",%s}},\n' "$2" "$1" "$3"
}
seg() { ev segment segment "\"length\":$1,\"marks\":0,\"reason\":\"SYNC\",\"api\":\"cuStreamSynchronize\""; }
rep() { ev replay replay "\"id\":\"$1\",\"seq_length\":$2,\"length\":$2,\"patches\":0,\"chunk\":0,\"chunks\":1,\"variant\":false,\"shared\":false"; }
pass() { ev sequence pass "\"id\":\"$1\",\"length\":$2,\"how\":\"$3\""; }
{
	echo "["
	ev sequence learned "\"id\":\"$A\",\"length\":6,\"how\":\"boundary\""
	ev sequence learned "\"id\":\"$B\",\"length\":10,\"how\":\"boundary\""
	ev sequence learned "\"id\":\"$P\",\"length\":2,\"how\":\"period\""
	for i in $(seq 1 20); do
		if [ "$i" = 14 ]; then
			pass $A 6 eager
			ev sequence gate_sample "\"id\":\"$A\",\"kind\":\"eager\",\"clock\":\"gpu\",\"us\":5"
		else
			rep $A 6
			pass $A 6 replayed
		fi
		seg 6
		if [ "$i" -le 12 ]; then
			rep $B 10
			pass $B 10 replayed
		elif [ "$i" -le 15 ]; then
			ev mismatch mismatch "\"id\":\"$B\",\"position\":4,\"reason\":\"STRUCTURE\",\"field\":\"layout\",\"expected\":null,\"got\":\"1\",\"kernel\":null"
		fi
		[ "$i" = 15 ] && ev sequence retired "\"id\":\"$B\",\"mismatches\":3"
		seg 10
		rep $P 2
		rep $P 2
		seg 4
	done
	printf '{"name":"replay","cat":"rep'
} >"$tmp/t.json.1.part"

if python3 "$LO" "$tmp/t.json.1.part" >"$tmp/out" 2>&1; then
	# 400 launches; the second half from step 11 on: 10 steps of 20.
	check "the steady state's counts" "steady state (the second half of 400 launches): 200 launches, 114 replayed (0.570)"
	check "the retired step's launches lost first" "^ *10 SYNC *10 *100 *20 *80$"
	check "the step the gate sent eagerly once" "^ *6 SYNC *10 *60 *54 *6$"
	check "a periodic sequence replayed inside longer segments" "^ *2 - .* 40 .*inside longer segments"
	check "whose segments count as lost by length (the periodic row says where they went)" "^ *4 SYNC *10 *40 *0 *40$"
	check "the retired sequence, its mismatches" "0x00000000000000bb *10 launches: passes 2 replayed, 0 eager (gate samples 0); replayed 20 launches; mismatches 3 (STRUCTURE@4 layout x3), forgiven 0, retired 1"
	check "the gated pass and its sample" "0x00000000000000aa *6 launches: passes 9 replayed, 1 eager (gate samples 1)"
else
	echo "FAIL: losses.py on a good trace exited non-zero"
	cat "$tmp/out"
	fail=1
fi

printf '[\n{"name":"segment",\n{"name":"pass"}\n' >"$tmp/bad.json"
refuses "a cut line inside the file is refused with its place" "bad.json:2: not a trace event line" \
	python3 "$LO" "$tmp/bad.json"
printf '[\n]\n' >"$tmp/empty.json"
refuses "a trace without segments is refused" "no segment events" python3 "$LO" "$tmp/empty.json"
refuses "a missing file is refused" "nosuch.json: No such file" python3 "$LO" "$tmp/nosuch.json"
exit $fail
