#!/bin/bash
# The demo on the CPU simulator of the CUDA driver (tests/sim), for machines
# without a GPU: the same tiny and (small) decode programs, eager vs
# graphshim vs a hand-written explicit graph, interleaved, outputs compared
# byte for byte.  The simulator models a launch cost of GS_SIM_LAUNCH_US
# microseconds (default 4, what a launch costs the host on an H100), so the
# table shows what replay saves in dispatch: it says nothing about GPU speed.
# Settings (environment): GS_SIM_DIR (the folder holding the simulator's
# libcuda.so.1; found under the build tree by default), GS_SIM_ROUNDS
# (default 3), and those of bench.sh and common.sh.
set -u
. "$(dirname "$0")/common.sh"

SIM=${GS_SIM_DIR:-}
if [ -z "$SIM" ]; then
	for d in "$GS_BUILD/tests/sim/lib" "$GS_BUILD/tests/sim/.libs" "$GS_BUILD/tests/sim"; do
		if [ -e "$d/libcuda.so.1" ]; then
			SIM=$d
			break
		fi
	done
fi
if [ -z "$SIM" ] || [ ! -e "$SIM/libcuda.so.1" ]; then
	echo "sim-demo: the CPU simulator ($GS_BUILD/tests/sim/lib/libcuda.so.1) is not built;"
	echo "sim-demo: build it with make, or point GS_SIM_DIR at it"
	exit 77
fi
export LD_LIBRARY_PATH=$SIM${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export GS_SIM_LAUNCH_US=${GS_SIM_LAUNCH_US:-4}
# The gate keeps a graph only where the GPU's clock says it is faster; the
# simulator models launch cost, not a GPU's timing (its "GPU" is a thread
# competing with the program for the CPU), so its verdicts follow the host's
# load.  The demo replays every learned sequence (GRAPHSHIM_GATE=auto to see
# the gate anyway); the gate is tested in tests/integ/t-gate.sh and measured
# on GPUs (docs/performance.md).
export GRAPHSHIM_GATE=${GRAPHSHIM_GATE:-replay}

echo "sim-demo: running on the CPU SIMULATOR ($SIM/libcuda.so.1), not a GPU;" \
	"modelled launch cost ${GS_SIM_LAUNCH_US} us; GRAPHSHIM_GATE=$GRAPHSHIM_GATE" \
	"(the gate times passes on a GPU's clock, which the simulator does not model)"
# The simulator's kernels against the double-precision reference, once.
if "$GS_KBIN/decode" --check >"$GS_WORK/sim-check.log" 2>&1 &&
	LD_PRELOAD=$GS_LIB "$GS_KBIN/decode" --check >>"$GS_WORK/sim-check.log" 2>&1; then
	echo "sim-demo: decode --check passed on the simulator, eager and under graphshim"
else
	echo "sim-demo: decode --check FAILED on the simulator:"
	tail -n 5 "$GS_WORK/sim-check.log"
	exit 1
fi

GS_NO_GPU_OK=1 GS_BENCH_ROUNDS=${GS_SIM_ROUNDS:-3} GS_BENCH_WORKLOADS="tiny decode" \
	GS_BENCH_TINY=${GS_SIM_TINY:-"--steps 200 --kernels 256"} \
	GS_BENCH_DECODE=${GS_SIM_DECODE:-"--layers 2 --dim 64 --ctx 32 --vocab 256 --steps 200"} \
	GS_BENCH_TITLE="CPU SIMULATOR, not a GPU (launch cost modelled: ${GS_SIM_LAUNCH_US} us)" \
	bash "$(dirname "$0")/bench.sh"
rc=$?
echo "sim-demo: these figures come from the CPU simulator of the CUDA driver, with a modelled"
echo "sim-demo: ${GS_SIM_LAUNCH_US} us launch cost; run tools/gpu/all.sh on a GPU machine for real figures."
exit $rc
