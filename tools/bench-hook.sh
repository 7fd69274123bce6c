#!/bin/sh
# The host time graphshim adds to a launch it passes straight through, on
# the CPU: launches that never repeat against a fake driver whose launch is
# almost free (tests/cuda/bench_hook.c), without and with LD_PRELOAD.
set -eu
b=${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}
fake=$b/tests/cuda/.libs/libfakecuda.so
[ -f "$fake" ] || make -C "$b" tests/cuda/libfakecuda.la >/dev/null
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
ln -s "$fake" "$dir/libcuda.so.1"
export LD_LIBRARY_PATH=$dir
base=$("$b/tests/cuda/bench_hook")
shim=$(LD_PRELOAD=$b/.libs/libgraphshim.so "$b/tests/cuda/bench_hook")
nb=$("$b/tests/cuda/bench_hook" n)
ns=$(LD_PRELOAD=$b/.libs/libgraphshim.so "$b/tests/cuda/bench_hook" n)
nw=$(GRAPHSHIM_COLD_AFTER=0 LD_PRELOAD=$b/.libs/libgraphshim.so "$b/tests/cuda/bench_hook" n)
rep=$(GRAPHSHIM_PERIOD=0 LD_PRELOAD=$b/.libs/libgraphshim.so "$b/tests/cuda/bench_hook" r)
ab=$("$b/tests/cuda/bench_hook" a)
as=$(LD_PRELOAD=$b/.libs/libgraphshim.so "$b/tests/cuda/bench_hook" a)
an=$(GRAPHSHIM_SHARE=0 LD_PRELOAD=$b/.libs/libgraphshim.so "$b/tests/cuda/bench_hook" a)
eb=$("$b/tests/cuda/bench_hook" e)
es=$(LD_PRELOAD=$b/.libs/libgraphshim.so "$b/tests/cuda/bench_hook" e)
sb=$("$b/tests/cuda/bench_hook" s)
ss=$(LD_PRELOAD=$b/.libs/libgraphshim.so "$b/tests/cuda/bench_hook" s)
tb=$("$b/tests/cuda/bench_hook" t)
ts=$(LD_PRELOAD=$b/.libs/libgraphshim.so "$b/tests/cuda/bench_hook" t)
pb=$("$b/tests/cuda/bench_hook" p)
ps=$(LD_PRELOAD=$b/.libs/libgraphshim.so "$b/tests/cuda/bench_hook" p)
cb=$("$b/tests/cuda/bench_hook" c)
cs=$(LD_PRELOAD=$b/.libs/libgraphshim.so "$b/tests/cuda/bench_hook" c)
ce=$(GRAPHSHIM_GATE=eager LD_PRELOAD=$b/.libs/libgraphshim.so "$b/tests/cuda/bench_hook" c)
cm=$(GRAPHSHIM_GATE=eager GRAPHSHIM_COLD_EAGER=0 LD_PRELOAD=$b/.libs/libgraphshim.so "$b/tests/cuda/bench_hook" c)
kb=$("$b/tests/cuda/bench_hook" k)
ks=$(LD_PRELOAD=$b/.libs/libgraphshim.so "$b/tests/cuda/bench_hook" k)
db=$("$b/tests/cuda/bench_hook" d)
dh=$(GRAPHSHIM_DEVICE_PATCH=0 LD_PRELOAD=$b/.libs/libgraphshim.so "$b/tests/cuda/bench_hook" d)
dd=$(FAKE_DEVUPD=1 LD_PRELOAD=$b/.libs/libgraphshim.so "$b/tests/cuda/bench_hook" d)
mb=$("$b/tests/cuda/bench_hook" m)
ms=$(LD_PRELOAD=$b/.libs/libgraphshim.so "$b/tests/cuda/bench_hook" m)
mc=$(GRAPHSHIM_COLD_REPLAY=0 LD_PRELOAD=$b/.libs/libgraphshim.so "$b/tests/cuda/bench_hook" m)
echo "ns per launch: driver alone $base, through graphshim (never repeating) $shim, added $(awk "BEGIN {print $shim - $base}")"
echo "ns per launch, nrepeat's pattern (a sync every 256): driver alone $nb, through graphshim $ns (cold stream), never cold $nw"
echo "ns per launch: same launch repeated (held and matched, no graph: period off) $rep"
echo "ns per launch, a step of 64 launches and a sync (learned, replayed from graphs): driver alone $sb, through graphshim $ss"
echo "ns per launch, the same step of a kernel with a 656-byte parameter (a PyTorch elementwise kernel's): driver alone $pb, through graphshim $ps"
echo "ns per launch call, the 656-byte step with the caches stirred between launches (4 MB, as an interpreter's work between a framework's launches): driver alone $cb, through graphshim $cs"
echo "ns per launch call, the same stirred step kept eager (GRAPHSHIM_GATE=eager, as a step the gate keeps eager): its stream quiet, through the cold lane $ce; matched launch by launch (GRAPHSHIM_COLD_EAGER=0) $cm; stirred launches that never repeat (the stream goes cold, the cold lane): driver alone $kb, through graphshim $ks"
echo "ns per launch call, the same with two pointers of every launch moving every step (every node patched): driver alone $db, through graphshim patching from the host $dh, on the (fake) GPU $dd"
echo "ns per launch, two kinds of 64-launch step in turn, alike but for the last launch: driver alone $ab, through graphshim $as (shared chunks), with GRAPHSHIM_SHARE=0 $an"
echo "ns per call, Thrust's default policy (a synchronize after every algorithm, temporary storage allocated and freed around each reduction): driver alone $tb, through graphshim $ts"
echo "ns per launch, a 64-launch step that replays, then three 32-launch segments that never repeat (a training step after a per-image augmentation): driver alone $mb, through graphshim $ms, with GRAPHSHIM_COLD_REPLAY=0 $mc"
echo "ns per call, cuDNN RNN's pattern (13 streams joined by event records and waits every token): driver alone $eb, through graphshim $es"
