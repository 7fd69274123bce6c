#!/bin/sh
# Bounded memory: r_memory drives one stream through 25,000 distinct
# sequences (100,000 steps, each sequence learned, built and evicted).
# graphshim's share of the resident set (its run minus a run without it)
# must stay under the per-stream cap documented in docs/reliability.md,
# computed here from the GRAPHSHIM_MAX_* defaults, and must not grow once
# the caches are full (after the warm-up): growth there is a leak.
set -u
. "${top_srcdir:-.}/tests/reliability/r_lib.sh"
if $sanitized; then
	# ASan's quarantine and shadow memory swamp the numbers; run the same
	# churn (for its leak and error checks) without judging the RSS.
	GRAPHSHIM_ASYNC_BUILD=1 shim "$r/r_memory" 20000 2000 >"$tmp/g" 2>&1 ||
		{ bad "r_memory under graphshim"; cat "$tmp/g"; finish; }
	echo "SKIP the RSS limits under sanitizers (ran the churn only): $(cat "$tmp/g")"
	finish
fi
field() { sed -n "s/.*$1=\([0-9]*\).*/\1/p" "$2"; }
timeout 300 "$r/r_memory" >"$tmp/e" 2>&1 || { bad "r_memory without graphshim"; cat "$tmp/e"; finish; }
GRAPHSHIM_ASYNC_BUILD=1 GRAPHSHIM_STATS="$tmp/s.json" shim "$r/r_memory" >"$tmp/g" 2>&1 ||
	{ bad "r_memory under graphshim"; cat "$tmp/g"; finish; }
grow_e=$(( $(field end "$tmp/e") - $(field start "$tmp/e") ))
grow_g=$(( $(field end "$tmp/g") - $(field start "$tmp/g") ))
late=$(( $(field end "$tmp/g") - $(field warm "$tmp/g") ))
shim_kb=$(( grow_g - grow_e ))
# The documented per-stream cap (docs/reliability.md), in KiB, for
# launches of A argument bytes (the test kernel: 16):
#   ring    (MAX_SEQ+1) x (8 + 128 + max(64, A) + 16)
#   period  (MAX_SEQ+1) x (8 + 4) + 16 x pow2 >= 2 (MAX_SEQ+1)
#   seqs    MAX_SEQS x 512
#   baked   MAX_NODES x (8 + 128 + A + 32)
#   graphs  MAX_NODES x 512 (the simulator's graph and exec nodes)
ms=4097 seqs=64 nodes=65536 A=16 t=16
while [ "$t" -lt $((2 * ms)) ]; do t=$((t * 2)); done
cap=$(( (ms * (8 + 128 + 64 + 16) + ms * 12 + 16 * t + seqs * 512 + nodes * (8 + 128 + A + 32) +
	nodes * 512) / 1024 ))
graphs=$(sed -n 's/.*"graphs": *\([0-9]*\).*/\1/p' "$tmp/s.json" | head -n 1)
evict=$(sed -n 's/.*"evictions": *\([0-9]*\).*/\1/p' "$tmp/s.json" | head -n 1)
echo "rss growth: without graphshim ${grow_e} KiB, with ${grow_g} KiB; graphshim's ${shim_kb} KiB" \
	"(cap ${cap} KiB); after the warm-up ${late} KiB; ${graphs} graphs built, ${evict} evictions"
[ "${graphs:-0}" -ge 10000 ] || bad "only ${graphs:-0} graphs built: the churn did not happen"
[ "$shim_kb" -le "$cap" ] || bad "graphshim's memory ${shim_kb} KiB exceeds the cap ${cap} KiB"
[ "$late" -le 1024 ] || bad "memory grew by ${late} KiB after the caches were full (a leak?)"
[ "$fails" -eq 0 ] && ok "memory bounded"
finish
