#!/bin/bash
# Two processes, one GPU each, NCCL all-reduce every layer (torchrun):
# tokens must be identical with and without graphshim.  NVLink multicast
# stays off (the machine's NCCL_NVLS_ENABLE=0 and friends are kept).
# Needs a built tree (libgraphshim.so) and 2 GPUs.
set -u
SRC=$(cd "$(dirname "$0")/../.." && pwd)
LIB=${GS_LIB:-$SRC/.libs/libgraphshim.so}
OUTD=${OUT:-/tmp}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
n=$(nvidia-smi -L 2>/dev/null | wc -l)
[ "$n" -ge 2 ] || { echo "two-gpu: needs 2 GPUs, found $n: skipped"; exit 77; }
run() { # run MODE
	local pre=""
	[ "$1" = graphshim ] && pre="$LIB"
	LD_PRELOAD=$pre GRAPHSHIM_STATS="$OUTD/tp-$1-%p.json" GRAPHSHIM_OVERWRITE=1 \
		timeout 300 torchrun --standalone --nproc_per_node=2 "$SRC/kernels/python/tp_decode.py" \
		--tokens ${GS_TP_TOKENS:-64} --out "$OUTD/tp-$1.tok" 2>&1 | grep -v "^W1\|OMP_NUM_THREADS\|^\*\*\*" | tail -5
}
nvidia-smi -L
# One process driving both devices (a context each): same outputs.
K=${GS_BUILD:-$SRC}/kernels
"$K/twodev" --steps 200 --out "$OUTD/twodev-eager.bin" &&
	LD_PRELOAD=$LIB GRAPHSHIM_STATS="$OUTD/twodev.json" GRAPHSHIM_OVERWRITE=1 \
		"$K/twodev" --steps 200 --out "$OUTD/twodev-shim.bin" || { echo "two-gpu: twodev failed"; exit 1; }
if cmp -s "$OUTD/twodev-eager.bin" "$OUTD/twodev-shim.bin"; then
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); c=d['counters']; print('two-gpu: twodev identical; launches', c['launches'], 'replayed', c['replayed'], 'sequences', len(d.get('sequences', [])), 'streams', sorted({q['stream'] for q in d.get('sequences', [])}))" "$OUTD/twodev.json"
else
	echo "two-gpu: twodev OUTPUTS DIFFER"; exit 1
fi
[ "${GS_TWO_ONLY:-}" = twodev ] && exit 0
for r in 1 2 3; do run eager; run graphshim; done
if cmp -s "$OUTD/tp-eager.tok" "$OUTD/tp-graphshim.tok"; then
	echo "two-gpu: tokens identical with and without graphshim"
else
	echo "two-gpu: TOKENS DIFFER"; exit 1
fi
for f in "$OUTD"/tp-graphshim-*.json; do
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); c=d['counters']; print(sys.argv[1].split('/')[-1], 'launches', c['launches'], 'replayed', c['replayed'], 'coverage %.3f' % d['coverage'], 'fallbacks', c['fallbacks'])" "$f"
done
