#!/bin/sh
# Threads and constructor order.  r_stress (seven threads, shared and own
# streams, syncs, events, legacy-stream steps, a drifting argument, a cold
# stream, and an eighth thread synchronizing the context) must
# print the same result with and without graphshim, with the background
# builder and without, replay from graphs, and finish (its watchdog and
# timeout catch a deadlock).  r_ctor: a library constructor that uses the
# driver before graphshim has initialised, in both preload orders.
set -u
. "${top_srcdir:-.}/tests/reliability/r_lib.sh"
iters=${R_STRESS_ITERS:-6000}
$sanitized && iters=1000 # sanitizers run it several times slower
if ! timeout ${R_TIMEOUT_S:-300} "$r/r_stress" $iters >"$tmp/e.out" 2>"$tmp/e.err"; then
	bad "stress without graphshim"; cat "$tmp/e.err"
fi
# Built in place with every sequence replayed; then with the builder thread
# and the gate timing sequences and re-checking them every 4 passes (its
# choice follows the simulator's timing: a launch it sends eagerly is
# counted as matched instead of replayed).
for async in 0 1; do
	gate=replay
	[ $async = 1 ] && gate=auto
	if ! GRAPHSHIM_ASYNC_BUILD=$async GRAPHSHIM_GATE=$gate GRAPHSHIM_GATE_AFTER=1 GRAPHSHIM_GATE_RECHECK=4 \
		GRAPHSHIM_STATS="$tmp/s.json" GRAPHSHIM_OVERWRITE=1 \
		shim "$r/r_stress" $iters >"$tmp/g.out" 2>"$tmp/g.err"; then
		bad "stress under graphshim (async build $async)"; cat "$tmp/g.err"; continue
	fi
	if ! cmp -s "$tmp/e.out" "$tmp/g.out"; then
		bad "stress (async build $async): results differ from the run without graphshim"; continue
	fi
	rep=$(sed -n 's/.*"replayed": *\([0-9]*\).*/\1/p' "$tmp/s.json" | head -n 1)
	gated=$(sed -n 's/.*"gated": *\([0-9]*\).*/\1/p' "$tmp/s.json" | head -n 1)
	mis=$(sed -n 's/.*"mismatches": *\([0-9]*\).*/\1/p' "$tmp/s.json" | head -n 1)
	if [ $(( ${rep:-0} + ${gated:-0} )) -lt 1000 ]; then
		bad "stress (async build $async): only ${rep:-0} launches replayed, ${gated:-0} gated"; continue
	fi
	# The seventh thread's stream went cold: its launches took the lane
	# while the eighth ended its segments from outside.
	cold=$(sed -n 's/.*"cold_passed": *\([0-9]*\).*/\1/p' "$tmp/s.json" | head -n 1)
	if [ "${cold:-0}" -lt "$iters" ]; then
		bad "stress (async build $async): only ${cold:-0} launches passed by a cold stream"; continue
	fi
	ok "stress (async build $async, gate $gate): identical, $rep launches replayed, ${gated:-0} sent eagerly by the gate, $mis mismatches, $cold passed cold"
done

if ! timeout 60 "$r/r_ctor" >"$tmp/c.log" 2>&1; then
	bad "ctor without graphshim"; cat "$tmp/c.log"
fi
for order in "$PRELOAD" "${GS_TEST_PRELOAD_PREFIX:+$GS_TEST_PRELOAD_PREFIX }$r/libr_ctor.so $lib"; do
	if ! GRAPHSHIM_STATS="$tmp/c.json" GRAPHSHIM_OVERWRITE=1 GRAPHSHIM_ASYNC_BUILD=0 \
		timeout 60 env LD_PRELOAD="$order" "$r/r_ctor" >"$tmp/c.log" 2>&1; then
		bad "ctor, LD_PRELOAD=$order"; cat "$tmp/c.log"; continue
	fi
	rep=$(sed -n 's/.*"replayed": *\([0-9]*\).*/\1/p' "$tmp/c.json" | head -n 1)
	if [ "${rep:-0}" -lt 1 ]; then
		bad "ctor, LD_PRELOAD=$order: nothing replayed"; continue
	fi
	ok "ctor, LD_PRELOAD=$order: right results, $rep launches replayed"
done
finish
