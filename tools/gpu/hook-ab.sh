#!/bin/sh
# What graphshim's own code costs a launch call on this machine's host, two
# builds against each other in one process's lifetime each, alternating:
# tests/cuda/bench_hook against the fake driver of tests/cuda (no GPU), mode
# c (a replayed 656-byte step with the caches stirred between launches, as an
# interpreter stirs them) and s (the same step, warm).  The host of the GPU
# machine is what real programs run on; the development machine is another
# CPU.  Prints each mode's median ns a launch call of each build, its range,
# and B/A.
#   hook-ab.sh LIB_A LIB_B [PAIRS]    (default 8 pairs; top_builddir as bench-hook.sh)
set -eu
a=$1 bl=$2 pairs=${3:-8}
b=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
fake=$b/tests/cuda/.libs/libfakecuda.so
[ -f "$fake" ] || make -C "$b" tests/cuda/libfakecuda.la >/dev/null
[ -x "$b/tests/cuda/bench_hook" ] || make -C "$b" tests/cuda/bench_hook >/dev/null
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
ln -s "$fake" "$dir/libcuda.so.1"
export LD_LIBRARY_PATH=$dir
for m in c s; do
	i=0
	while [ "$i" -lt "$pairs" ]; do
		echo "A $(LD_PRELOAD=$a "$b/tests/cuda/bench_hook" $m)" >>"$dir/$m"
		echo "B $(LD_PRELOAD=$bl "$b/tests/cuda/bench_hook" $m)" >>"$dir/$m"
		i=$((i + 1))
	done
	awk -v m=$m 'function med(x, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
			if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
			return n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2 }
		$1 == "A" { a[++na] = $2 } $1 == "B" { b[++nb] = $2 }
		END { ma = med(a, na); mb = med(b, nb)
			printf "hook-ab: %s: A %.1f ns (%.1f-%.1f), B %.1f ns (%.1f-%.1f), B/A %.3f, %d pairs\n",
				m, ma, a[1], a[na], mb, b[1], b[nb], mb / ma, na }' "$dir/$m"
done
