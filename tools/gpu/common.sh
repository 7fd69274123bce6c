# Shared by the GPU scripts (sourced, not run).  Finds the source and build
# trees, the workloads and libgraphshim.so, and provides the small helpers
# the scripts have in common.  Every setting comes from the environment:
#   GS_SRC    source tree (default: two levels above this file)
#   GS_BUILD  build tree (default: GS_SRC)
#   GS_LIB    the library to preload (default: libtool's GS_BUILD/.libs or
#             GS_BUILD/shim/.libs/libgraphshim.so, whichever exists)
#   GS_WORK   scratch directory for outputs and logs (default: a new temp dir)

GS_SRC=${GS_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
GS_BUILD=${GS_BUILD:-$GS_SRC}
if [ -z "${GS_LIB:-}" ]; then
	GS_LIB=$GS_BUILD/.libs/libgraphshim.so
	[ -f "$GS_LIB" ] || GS_LIB=$GS_BUILD/shim/.libs/libgraphshim.so
fi
GS_KBIN=$GS_BUILD/kernels
GS_PY=${GS_PY:-python3}
if [ -z "${GS_WORK:-}" ]; then
	GS_WORK=$(mktemp -d "${TMPDIR:-/tmp}/gs-gpu.XXXXXX")
fi
mkdir -p "$GS_WORK"

# True when an NVIDIA GPU is visible.
gs_gpu_present() {
	command -v nvidia-smi >/dev/null 2>&1 || return 1
	nvidia-smi -L 2>/dev/null | grep -q '^GPU '
}

# True when PyTorch imports and sees a GPU (GS_PY_DEVICE=cpu accepts a CPU).
gs_torch_present() {
	if [ "${GS_PY_DEVICE:-cuda}" = cpu ]; then
		"$GS_PY" -c 'import torch' >/dev/null 2>&1
	else
		"$GS_PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' \
			>/dev/null 2>&1
	fi
}

# gs_field KEY FILE: the value of KEY=VALUE on the last "gs-wl:" line.
gs_field() {
	grep '^gs-wl:' "$2" 2>/dev/null | tail -n 1 | tr ' ' '\n' |
		sed -n "s/^$1=//p" | tail -n 1
}

# gs_median: the median of the numbers on stdin, one a line ("-" if none).
gs_median() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "-"; exit }
		if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# gs_ratio A B: A / B with two decimals ("-" when either is missing).
gs_ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (a == "" || b == "" || a == "-" || b == "-" || b + 0 == 0) print "-";
		else printf "%.2f\n", a / b }'
}

# gs_interval A B: median(A) / median(B) of two files of per-run times, with
# a bootstrap 95% interval ("ratio (lo-hi)"; runs resampled independently,
# since the spread is between processes; fixed seed, so a rerun on the same
# numbers prints the same).  "-" with fewer than 5 runs in either.
gs_interval() {
	"$GS_PY" - "$1" "$2" <<'PYEOF' 2>/dev/null || echo "-"
import random, statistics, sys
a, b = ([float(x) for x in open(f) if x.strip()] for f in sys.argv[1:3])
if len(a) < 5 or len(b) < 5:
    print("-"); sys.exit(0)
rng = random.Random(1)
boot = sorted(statistics.median(rng.choices(a, k=len(a))) /
              statistics.median(rng.choices(b, k=len(b))) for _ in range(4000))
print("%.3f (%.3f-%.3f)" % (statistics.median(a) / statistics.median(b),
                            boot[len(boot) // 40], boot[len(boot) * 39 // 40]))
PYEOF
}

# gs_stats FILE: "launches replayed coverage" from graphshim's statistics
# JSON (the counters may sit at the top level or in a nested object).
gs_stats() {
	"$GS_PY" - "$1" <<'PYEOF' 2>/dev/null || echo "- - -"
import json, sys
try:
    doc = json.load(open(sys.argv[1]))
except Exception:
    print("- - -"); sys.exit(0)
todo = [doc]
while todo:
    d = todo.pop(0)
    if isinstance(d, dict):
        if "launches" in d and "replayed" in d:
            l, r = int(d["launches"]), int(d["replayed"])
            print(l, r, "%.3f" % (r / l if l else 0.0)); sys.exit(0)
        todo.extend(d.values())
    elif isinstance(d, list):
        todo.extend(d)
print("- - -")
PYEOF
}

# gs_ge A B: true when the number A >= B.
gs_ge() {
	awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "-" && a + 0 >= b + 0) }'
}

# gs_find_cupti: "INCLUDE_DIR LIBRARY" of CUPTI: the pip package's (the one
# PyTorch and JAX load) where it has both header and library, else the CUDA
# toolkit's; status 1 where neither is found.
gs_find_cupti() {
	local d sub inc lib
	local dirs=() # "INCLUDE_DIR LIBRARY_DIR", in the order searched
	for d in $("$GS_PY" -c 'import nvidia, sys; print(" ".join(nvidia.__path__))' 2>/dev/null); do
		for sub in cu13 cuda_cupti cu12; do
			dirs+=("$d/$sub/include $d/$sub/lib")
		done
	done
	dirs+=("/usr/local/cuda/include /usr/local/cuda/lib64"
		"/usr/local/cuda/extras/CUPTI/include /usr/local/cuda/extras/CUPTI/lib64")
	for d in "${dirs[@]}"; do
		read -r inc lib <<<"$d"
		if [ -f "$inc/cupti.h" ] && ls "$lib"/libcupti.so* >/dev/null 2>&1; then
			echo "$inc $(ls "$lib"/libcupti.so* | sort | tail -n 1)"
			return 0
		fi
	done
	return 1
}
