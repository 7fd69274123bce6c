#!/bin/bash
# Build and run updcost.c on the GPU machine: the updater node's host and
# GPU costs under a real program's conditions (cold caches, tiers in turn,
# the node toggled), beside host patches.
set -u
D=$(cd "$(dirname "$0")" && pwd)
W=${TMPDIR:-/tmp}/gs-updcost
mkdir -p "$W" && cd "$W" || exit 1
CU=${CUDA_HOME:-/usr/local/cuda}
"$CU/bin/nvcc" -arch=sm_90 -cubin "$D/work.cu" -o work.cubin &&
	"$CU/bin/nvcc" -arch=sm_90 -cubin "$D/tiers.cu" -o tiers.cubin &&
	gcc -O2 -std=c11 -I"$CU/include" "$D/updcost.c" -o updcost -L"$CU/lib64/stubs" -lcuda || exit 1
${GS_PIN-taskset -c 2-5} ./updcost work.cubin tiers.cubin
