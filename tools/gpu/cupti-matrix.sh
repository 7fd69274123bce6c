#!/bin/bash
# graphshim under a CUPTI subscriber, on every way solver_hostfn gets its
# scratch grid (kernels/real/solver_hostfn.cu --scratch): each mode runs
# eagerly, then under graphshim with the suite's CUPTI counter injected
# (CUDA_INJECTION64_PATH=libgscupti.so), then under graphshim alone; one
# line a mode: exit status, outputs against the eager run's, CUPTI's counts,
# graphshim's device patches and launches replayed.  The fifty-fifth
# session's crash inside CUPTI's callback (docs/performance.md) came back as
# rc=139 here.  Run on the GPU machine after tools/gpu/real.sh has built
# kernels/real-bin (solver_hostfn, libgscupti.so) and the tree is built:
#   bash tools/gpu/cupti-matrix.sh
# Settings: common.sh's (GS_BUILD, GS_LIB, GS_PY), GS_CUPTI_LIB (libcupti.so's
# path; default: the one real.sh finds, gs_find_cupti), GS_MATRIX_MODES (the
# solver_hostfn arguments of each row, ';'-separated).
set -u
. "$(dirname "$0")/common.sh"
B=$GS_BUILD/kernels/real-bin
L=$GS_LIB
CL=${GS_CUPTI_LIB:-$(gs_find_cupti | cut -d' ' -f2)}
for f in "$B/solver_hostfn" "$B/libgscupti.so" "$L" "$CL"; do
	[ -n "$f" ] && [ -e "$f" ] || { echo "cupti-matrix: ${f:-libcupti.so} not found (build first; GS_CUPTI_LIB)"; exit 77; }
done
W=$GS_WORK/cupti-matrix
mkdir -p "$W"
counters() { # counters STATS.json -> "devpatched N replayed R / L"
	"$GS_PY" -c "import json,sys; c=json.load(open(sys.argv[1]))['counters']; print('devpatched', c['device_patched'], 'replayed', c['replayed'], '/', c['launches'])" "$1" 2>/dev/null
}
fails=0
IFS=';' read -r -a modes <<<"${GS_MATRIX_MODES:---scratch async;--scratch malloc;--scratch fixed;--scratch pool-fixed;--scratch rotate;--scratch async --scratch-fill copy;--scratch async --hostfn --managed}"
for m in "${modes[@]}"; do
	read -r -a a <<<"$m"
	"$B/solver_hostfn" --check 4 --out "$W/e" "${a[@]}" >/dev/null 2>&1 || { echo "cupti-matrix: $m: eager run failed"; fails=$((fails + 1)); continue; }
	rm -f "$W/c" "$W/s.json" "$W/t.json"
	env CUDA_INJECTION64_PATH="$B/libgscupti.so" GS_CUPTI_OUT="$W/c" GS_CUPTI_LIB="$CL" LD_PRELOAD="$L" \
		GRAPHSHIM_STATS="$W/s.json" "$B/solver_hostfn" --check 4 --out "$W/g" "${a[@]}" >"$W/log" 2>&1
	rc=$?
	env LD_PRELOAD="$L" GRAPHSHIM_STATS="$W/t.json" "$B/solver_hostfn" --check 4 --out "$W/h" "${a[@]}" >/dev/null 2>&1
	rc2=$?
	same=$(cmp -s "$W/e" "$W/g" && echo same || echo DIFFERS)
	same2=$(cmp -s "$W/e" "$W/h" && echo same || echo DIFFERS)
	[ $rc = 0 ] && [ $rc2 = 0 ] && [ "$same" = same ] && [ "$same2" = same ] || fails=$((fails + 1))
	echo "cupti-matrix: $m: under CUPTI rc=$rc $same $(tail -n 1 "$W/c" 2>/dev/null | cut -d' ' -f3-5) $(counters "$W/s.json");" \
		"without rc=$rc2 $same2 $(counters "$W/t.json")"
done
echo "cupti-matrix: $fails of ${#modes[@]} modes failed"
[ $fails = 0 ]
