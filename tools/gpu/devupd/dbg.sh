cd $1
L=$PWD/.libs/libgraphshim.so
K=kernels/decode
echo "== decode --pos-arg, device patch, debug"
GRAPHSHIM_DEVICE_PATCH=1 GRAPHSHIM_LOG=debug LD_PRELOAD=$L timeout 30 $K --pos-arg --steps 20 > /tmp/d1.log 2>&1; echo rc=$?
grep -E "device update|warn|error|fail" /tmp/d1.log | head -30
grep -c "device update" /tmp/d1.log
echo "== sync build"
GRAPHSHIM_DEVICE_PATCH=1 GRAPHSHIM_ASYNC_BUILD=0 GRAPHSHIM_GATE=replay LD_PRELOAD=$L timeout 30 $K --pos-arg --steps 20 2>&1 | tail -3; echo rc=$?
echo "== memcheck"
GRAPHSHIM_DEVICE_PATCH=1 GRAPHSHIM_ASYNC_BUILD=0 GRAPHSHIM_GATE=replay timeout 150 compute-sanitizer --tool memcheck --print-limit 5 env LD_PRELOAD=$L $K --pos-arg --steps 12 2>&1 | head -60
