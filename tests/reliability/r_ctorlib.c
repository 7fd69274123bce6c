/*
 * A shared library whose constructor uses the driver (built as
 * libr_ctor.so, linked into r_ctor): under LD_PRELOAD=libgraphshim.so it
 * runs before graphshim has seen any call, possibly before graphshim's own
 * initialisers, so graphshim must start from inside it.  The constructor
 * learns a step (enough repetitions to be replayed) and checks the result;
 * r_ctor reads what it found.
 */
#include "r_common.h"

int r_ctor_status = -1;    /* 0: the constructor's work gave the right result */
CUdeviceptr r_ctor_buf;
CUstream r_ctor_stream;
CUfunction r_ctor_add;

__attribute__((constructor)) static void r_ctor(void)
{
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) ||
	    cuCtxSetCurrent(ctx) || cuModuleLoad(&mod, GS_SIM_TESTKERN) ||
	    cuModuleGetFunction(&r_ctor_add, mod, "add_scalar") ||
	    cuStreamCreate(&r_ctor_stream, CU_STREAM_NON_BLOCKING) || cuMemAlloc(&r_ctor_buf, 64) ||
	    cuMemsetD32(r_ctor_buf, 0, 16)) {
		r_ctor_status = 1;
		return;
	}
	for (int i = 0; i < 10; i++) {
		r_launches(r_ctor_add, r_ctor_stream, r_ctor_buf, 4, R_STEP);
		if (cuStreamSynchronize(r_ctor_stream)) {
			r_ctor_status = 2;
			return;
		}
	}
	int v[4];
	if (cuMemcpyDtoH(v, r_ctor_buf, sizeof(v)) || v[0] != 10 * R_STEP || v[3] != 10 * R_STEP) {
		r_ctor_status = 3;
		return;
	}
	r_ctor_status = 0;
}
