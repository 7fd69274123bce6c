#!/bin/sh
# tools/gpu/timeline.py on a timeline written by hand (libgscupti's
# GS_CUPTI_TIMELINE format): the steps between device-to-host copies, the
# busy and idle time in them, what the GPU waited for, and its refusals of
# a file that is not a timeline.  Runs from `make check`; skipped (77)
# without python3.
set -u
: "${top_srcdir:=.}"
TL=$top_srcdir/tools/gpu/timeline.py
. "$top_srcdir/tests/tools/py_lib.sh"

# Eight records a step, four steps; the timeline keeps the second half
# (two steps).  A step: a kernel of 10 us on stream 7, 40 us idle, two
# kernels of 5 us side by side on streams 9 and 11, a copy of 1 us (DtoH):
# span 10 + 40 + 5 + 1 = 56 us, busy 16 us, idle 40 us.
: >"$tmp/a.txt"
for step in 0 1 2 3; do
	t=$((step * 1000000))
	{
		echo "K $t $((t + 10000)) 7 0 head_kernel"
		echo "K $((t + 50000)) $((t + 55000)) 9 0 side_kernel"
		echo "K $((t + 50000)) $((t + 55000)) 11 3 side_kernel"
		echo "C $((t + 55000)) $((t + 56000)) 7 0 2 16"
	} >>"$tmp/a.txt"
done

if python3 "$TL" "$tmp/a.txt" >"$tmp/out" 2>&1; then
	check "records of the second half" "8 records in the second half, 2 of them in graphs"
	check "step span, busy, idle" "steps (between DtoH copies): 2; median span 56.0 us, busy 16.0 us, idle 40.0 us"
	check "what the GPU waited for" "40.00  side_kernel"
	check "per stream, graph records apart" "stream 11 graph"
else
	echo "FAIL: timeline.py on a good timeline exited non-zero"
	cat "$tmp/out"
	fail=1
fi

echo "X 1 2 3 4" >"$tmp/bad.txt"
refuses "a bad line is refused with its place" "bad.txt:1: not a timeline line" \
	python3 "$TL" "$tmp/bad.txt"

exit $fail
