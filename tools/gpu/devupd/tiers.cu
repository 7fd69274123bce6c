// graphshim's updater (shim/cuda/cu_devupd.cu) at more parameter sizes than
// it ships, for setcost.c: what setting the updater node's parameters costs
// the host by the size of those parameters.
#include "../../../shim/cuda/cu_devupd.cu"

#define GS_TIER(n) \
	extern "C" __global__ void gs_du_tier##n(const __grid_constant__ gs_du_args<n> a) { gs_du_run(a); }
GS_TIER(64)
GS_TIER(128)
GS_TIER(168)
GS_TIER(256)
GS_TIER(340)
