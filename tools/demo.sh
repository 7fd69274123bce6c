#!/usr/bin/env bash
# Set up, build, and run the demo: a dispatch-bound workload eager, under
# graphshim, and as a hand-written explicit graph, with the speed-up.  On a
# machine with an NVIDIA GPU it runs there; otherwise it runs on graphshim's
# CPU simulator of the CUDA driver and says so.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
	echo "demo: NVIDIA GPU found: running on the GPU"
	exec tools/gpu/bench.sh
fi
echo "demo: no GPU here: running on the CPU simulator of the CUDA driver (tests/sim)"
exec tools/gpu/sim-demo.sh
