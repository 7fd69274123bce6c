#!/bin/sh
# Process lifecycle under graphshim (r_lifecycle.c): held work reaches the
# device at exit (return from main and exit()), before fork returns (and
# the child runs with graphshim off), before a module unload and a context
# destroy; every graph is destroyed at teardown; a stats file is written by
# the parent only.  Each mode also runs without graphshim as a control.
set -u
. "${top_srcdir:-.}/tests/reliability/r_lib.sh"
# The partial step must be held: armed sequences replay, untimed; and the
# program watches it for 200 ms with no call, which the idle watchdog would
# end by submitting it (the watchdog has tests of its own): off here.
export GRAPHSHIM_GATE=replay GRAPHSHIM_IDLE_US=0
for mode in exit exit-call fork unload ctx-destroy; do
	if ! timeout 60 "$r/r_lifecycle" "$mode" >"$tmp/e.log" 2>&1; then
		bad "$mode without graphshim"; cat "$tmp/e.log"; continue
	fi
	rm -f "$tmp"/s.*.json
	if ! GRAPHSHIM_STATS="$tmp/s.%p.json" R_TIMEOUT_S=60 shim "$r/r_lifecycle" "$mode" \
		>"$tmp/g.log" 2>&1; then
		bad "$mode under graphshim"; cat "$tmp/g.log"; continue
	fi
	n=$(ls "$tmp"/s.*.json 2>/dev/null | wc -l)
	if [ "$n" -ne 1 ]; then
		# The fork child must not write one (graphshim is off there).
		bad "$mode: $n statistics files, expected the parent's only"; cat "$tmp/g.log"; continue
	fi
	if ! grep -q '"replayed": *[1-9]' "$tmp"/s.*.json; then
		bad "$mode: nothing replayed"; cat "$tmp"/s.*.json; continue
	fi
	ok "$mode: $(grep '^ok' "$tmp/g.log" | tail -n 1)"
done
finish
