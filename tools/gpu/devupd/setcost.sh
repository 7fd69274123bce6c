#!/bin/bash
# Build and run setcost.c on the GPU machine: the updater's set-up cost by
# the size of its parameters.
set -u
D=$(cd "$(dirname "$0")" && pwd)
W=${TMPDIR:-/tmp}/gs-setcost
mkdir -p "$W" && cd "$W" || exit 1
CU=${CUDA_HOME:-/usr/local/cuda}
"$CU/bin/nvcc" -arch=sm_90 -cubin "$D/work.cu" -o work.cubin &&
	"$CU/bin/nvcc" -arch=sm_90 -cubin "$D/tiers.cu" -o tiers.cubin &&
	gcc -O2 -std=c11 -I"$CU/include" "$D/setcost.c" -o setcost -L"$CU/lib64/stubs" -lcuda || exit 1
./setcost work.cubin tiers.cubin
