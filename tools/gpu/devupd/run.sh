#!/bin/bash
# Build and run the device-update probe on the GPU machine (nvcc, libcuda).
set -u
D=$(cd "$(dirname "$0")" && pwd)
W=${TMPDIR:-/tmp}/gs-devupd
mkdir -p "$W"
cd "$W" || exit 1
CU=${CUDA_HOME:-/usr/local/cuda}
nvcc -arch=sm_90 -cubin "$D/work.cu" -o work.cubin &&
nvcc -arch=sm_90 -cubin "$D/upd.cu" -o plain.cubin &&
nvcc -arch=sm_90 -rdc=true -cubin "$D/upd.cu" -o rdc.cubin &&
nvcc -arch=sm_90 -rdc=true -dlink -cubin rdc.cubin -L"$CU/lib64" -lcudadevrt -o linked.cubin &&
nvcc -arch=sm_90 -rdc=true -ptx "$D/upd.cu" -o upd.ptx &&
nvcc -arch=sm_90 -rdc=true -fatbin "$D/upd.cu" -o rdc.fatbin &&
gcc -O2 -std=c11 -I"$CU/include" "$D/probe.c" -o probe -L"$CU/lib64/stubs" -lcuda || exit 1
ls -la
./probe work.cubin plain.cubin rdc.cubin linked.cubin upd.ptx rdc.fatbin --devrt "$CU/lib64/libcudadevrt.a" upd.ptx
