#!/bin/bash
# Which image of graphshim's own updater (shim/cuda/cu_devupd.cu) runs right
# on this GPU: its PTX (as cu_devupd_ptx.h embeds it), PTX for sm_90, a
# cubin; with one entry a node and with three (two halves and a grid).
set -u
D=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$D/../../.." && pwd)
W=${TMPDIR:-/tmp}/gs-devupd2
mkdir -p "$W" && cd "$W" || exit 1
CU=${CUDA_HOME:-/usr/local/cuda}
nvcc -arch=sm_90 -cubin "$D/work.cu" -o work.cubin &&
nvcc -arch=sm_90 -cubin "$TOP/shim/cuda/cu_devupd.cu" -o gs90.cubin &&
nvcc -arch=compute_80 -ptx "$TOP/shim/cuda/cu_devupd.cu" -o gs80.ptx &&
nvcc -arch=sm_90 -ptx "$TOP/shim/cuda/cu_devupd.cu" -o gs90.ptx &&
nvcc -arch=sm_90 -cubin "$D/upd.cu" -o probe.cubin &&
nvcc -arch=compute_80 -ptx "$D/upd.cu" -o probe80.ptx &&
gcc -O2 -std=c11 -I"$CU/include" "$D/probe.c" -o probe -L"$CU/lib64/stubs" -lcuda || exit 1
for img in gs90.cubin gs80.ptx gs90.ptx; do
	for sp in 0 1; do
		echo "== $img split=$sp"
		GS_PROBE_FN=gs_du_apply128 GS_PROBE_SPLIT=$sp GS_PROBE_QUICK=1 timeout 60 ./probe work.cubin $img 2>&1 | grep -E "image|check dev|check in|mixing|probe:" 
	done
done
for img in probe.cubin probe80.ptx; do
	echo "== $img (the probe's own updater)"
	GS_PROBE_QUICK=1 timeout 60 ./probe work.cubin $img 2>&1 | grep -E "image|check dev|check in|probe:"
done
