#!/bin/sh
# graphshim short of memory: its own allocations fail (from the Nth on,
# every Mth; tests/reliability/r_failmalloc.c fails only allocations made by
# libgraphshim.so), while the program and the driver keep theirs.  The
# program must run to the end with byte-identical results: every failure
# inside graphshim turns into eager submission.  Skipped in sanitizer
# builds (their runtime owns malloc).
set -u
b=${top_builddir:-.}
lib="$b/.libs/libgraphshim.so"
fm="$b/tests/reliability/libr_failmalloc.so"
k="$b/kernels"
[ -n "${GS_TEST_PRELOAD_PREFIX:-}" ] && { echo "SKIP: sanitizer build (malloc is the sanitizer's)"; exit 77; }
for f in "$lib" "$fm" "$k/decode" "$k/tiny" "$b/tests/sim/lib/libcuda.so.1"; do
	[ -e "$f" ] || { echo "SKIP: $f not built"; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export LD_LIBRARY_PATH="$b/tests/sim/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fails=0 runs=0
check() { # check NAME ASYNC PROGRAM ARGS...
	name=$1 async=$2
	shift 2
	timeout 120 "$@" --out "$tmp/e.bin" >/dev/null 2>&1 || { echo "FAIL $name: eager run failed"; fails=$((fails + 1)); return; }
	for spec in "1 1" "1 2" "3 3" "5 3" "7 2" "10 4" "20 1" "50 7" "100 1" "200 5" "500 9"; do
		runs=$((runs + 1))
		R_FAILMALLOC="$spec" GRAPHSHIM_ASYNC_BUILD=$async LD_PRELOAD="$fm $lib" \
			timeout 120 "$@" --out "$tmp/g.bin" >"$tmp/g.log" 2>&1
		rc=$?
		if [ $rc -ne 0 ]; then
			echo "FAIL $name [R_FAILMALLOC=$spec]: exit status $rc"; tail -n 3 "$tmp/g.log"
			fails=$((fails + 1))
		elif ! cmp -s "$tmp/e.bin" "$tmp/g.bin"; then
			echo "FAIL $name [R_FAILMALLOC=$spec]: outputs differ"; fails=$((fails + 1))
		fi
	done
	echo "ok   $name"
}
D="$k/decode --layers 2 --dim 64 --ctx 64 --vocab 256 --steps 60"
check decode 0 $D
check decode-async 1 $D
check decode-threads 1 $D --threads 2
check tiny 1 "$k/tiny" --kernels 32 --steps 60
[ "$fails" -eq 0 ] && echo "$runs runs short of memory: all identical" && exit 0
echo "$fails of $runs failed"
exit 1
