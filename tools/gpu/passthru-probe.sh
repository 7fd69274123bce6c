#!/bin/bash
# Where graphshim's pass-through time goes on a GPU machine (diagnostic, not
# a benchmark): nrepeat (launches that never repeat) eager, with graphshim's
# hooks only (GRAPHSHIM_ENABLE=0) and with graphshim, under `perf stat`
# (instructions, cycles, cache misses), then a `perf record` profile of the
# graphshim run.  Needs a built tree (make) and perf; prints what it finds.
#   GS_PROBE_STEPS  nrepeat steps (default 400)
set -u
. "$(dirname "$0")/common.sh"
steps=${GS_PROBE_STEPS:-400}
out=${OUT:-$GS_WORK}
cmd="$GS_KBIN/nrepeat --steps $steps --time"
if ! command -v perf >/dev/null 2>&1; then
	echo "probe: no perf here; step times only"
	for r in 1 2 3; do
		echo "eager $($cmd | grep -o 'median_us=[0-9.]*')"
		echo "hooks $(GRAPHSHIM_ENABLE=0 LD_PRELOAD=$GS_LIB $cmd | grep -o 'median_us=[0-9.]*')"
		echo "shim  $(LD_PRELOAD=$GS_LIB $cmd | grep -o 'median_us=[0-9.]*')"
	done
	exit 0
fi
ev=instructions:u,cycles:u,cache-misses:u,L1-dcache-load-misses:u,LLC-load-misses:u
for r in 1 2; do
	for m in eager hooks shim; do
		case $m in
		eager) env=() ;;
		hooks) env=(GRAPHSHIM_ENABLE=0 LD_PRELOAD=$GS_LIB) ;;
		shim) env=(LD_PRELOAD=$GS_LIB) ;;
		esac
		echo "== $m (round $r): $(env "${env[@]}" perf stat -x, -e $ev -o "$out/stat.$m.$r" $cmd | grep -o 'median_us=[0-9.]*')"
		cut -d, -f1,3 "$out/stat.$m.$r" | grep -v '^#' | grep .
	done
done
LD_PRELOAD=$GS_LIB perf record -q -o "$out/perf.data" $cmd >/dev/null 2>&1
perf report -i "$out/perf.data" --stdio --sort dso,symbol 2>/dev/null | grep -v '^#' | grep . | head -40 | tee "$out/report.txt"
rm -f "$out/perf.data"
