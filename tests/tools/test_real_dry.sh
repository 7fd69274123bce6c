#!/bin/sh
# tools/gpu/real.sh end to end without a GPU: a stand-in interpreter runs
# kernels/fwstep on the simulator for a suite entry's Python program, so that
# the script's modes (eager, graphshim, and the two alternatives before and
# before2 in the same rounds), the byte comparison, the table and the notes
# under it run as they do on the GPU machine.  Runs from `make check`;
# skipped (77) without python3 or bash, without the workloads or the
# simulator, and under the sanitizers (the library would need their runtime
# preloaded first).
set -u
: "${top_srcdir:=.}" "${top_builddir:=.}"
. "$top_srcdir/tests/tools/py_lib.sh"
command -v bash >/dev/null 2>&1 || { echo "SKIP: no bash"; exit 77; }
[ -z "${GS_TEST_SANITIZERS:-}" ] || { echo "SKIP: sanitizer build"; exit 77; }
b=$(cd "$top_builddir" && pwd) s=$(cd "$top_srcdir" && pwd)
if [ ! -x "$b/kernels/fwstep" ] || [ ! -e "$b/tests/sim/lib/libcuda.so.1" ]; then
	echo "SKIP: no workloads or simulator built"
	exit 77
fi

# The stand-in: python3 for the script's own Python, "torch" imports fine,
# and a program of kernels/real/ is fwstep on the simulator writing --out.
{
	echo '#!/bin/sh'
	echo 'case "$1" in'
	echo '-c) case "$2" in *"import torch"*) echo "torch 0.sim"; exit 0 ;; esac; exec python3 "$@" ;;'
	echo '*/kernels/real/*.py) ;;'
	echo '*) exec python3 "$@" ;;'
	echo 'esac'
	echo 'out=""'
	echo 'while [ $# -gt 0 ]; do case $1 in --out) out=$2; shift ;; esac; shift; done'
	echo "LD_LIBRARY_PATH='$b/tests/sim/lib' exec '$b/kernels/fwstep' --layers 2 --dim 16 --ctx 32 --tokens 60 --time --out \"\$out\""
} >"$tmp/py"
chmod +x "$tmp/py"

GS_PY="$tmp/py" GS_SRC="$s" GS_BUILD="$b" GS_WORK="$tmp/w" GS_NO_GPU_OK=1 GS_PIN= \
	GS_REAL_ROUNDS=2 GS_REAL_COUNT=0 GS_REAL_PROGRAMS=nn-dynamic \
	GS_REAL_EXTRA_ENV=GRAPHSHIM_CHUNK_SHORT=1 GS_REAL_EXTRA_ENV2=GRAPHSHIM_GATE_MARGIN=0.03 \
	GS_REAL_SHIM_ENV=GRAPHSHIM_SELFTIME=1 timeout 300 bash "$s/tools/gpu/real.sh" >"$tmp/out" 2>&1
echo "real.sh: exit $?"
check "every mode ran" '^real: nn-dynamic (eager graphshim before before2)'
check "the table's row: outputs identical" '^nn-dynamic  *2 .* yes *$'
check "graphshim's statistics line" '^nn-dynamic: graphshim (main process, last run): boundary_launches 0'
check "graphshim's own time" '^nn-dynamic: graphshim: host ns a call (GRAPHSHIM_SELFTIME): held [0-9]'
check "mode before" '^nn-dynamic: before ( GRAPHSHIM_CHUNK_SHORT=1; both under GRAPHSHIM_SELFTIME=1) [0-9.]*us; eager/before [0-9.]*; before/graphshim [0-9.]*; cov 0\.[0-9]*'
check "mode before2" '^nn-dynamic: before2 (GRAPHSHIM_GATE_MARGIN=0.03; both under GRAPHSHIM_SELFTIME=1) [0-9.]*us; eager/before2 [0-9.]*; before2/graphshim [0-9.]*; cov 0\.[0-9]*'
check "before2's own time" '^nn-dynamic: before2: host ns a call (GRAPHSHIM_SELFTIME)'
check "each mode's rounds" '^nn-dynamic: rounds (us, in the order run): eager [0-9.]* [0-9.]*; graphshim [0-9.]* [0-9.]*; before [0-9.]* [0-9.]*; before2 [0-9.]* [0-9.]*$'
if grep -q 'differs' "$tmp/out"; then
	echo "FAIL: an output differs"
	grep differs "$tmp/out"
	fail=1
fi
exit $fail
