/*
 * graphshim's device updater (shim/cuda/cu_devupd.c; docs/how-it-works.md,
 * "Patches made on the GPU").  The first node of a graph whose kernel nodes
 * are device-updatable: at each launch that needs it, it writes the
 * arguments and grids the host patched since the graph's last launch into
 * the nodes after it, before they run.  Entries of one node are consecutive
 * and written in order by one thread; different nodes in parallel.
 *
 * Not compiled at build time: tools/gen-devupd-ptx.sh turns it into the PTX
 * of cu_devupd_ptx.h (the driver compiles that for the GPU it runs on).
 */
#include <cuda_runtime.h>

struct gs_du_entry {
	unsigned long long node; /* cudaGraphDeviceNode_t */
	unsigned off, size;      /* bytes of its parameters (size 1-8); size 0: the grid, x in off */
	unsigned long long value;
};

template <unsigned CAP> struct gs_du_args {
	unsigned n, pad;
	gs_du_entry e[CAP];
};

template <unsigned CAP> __device__ void gs_du_run(const gs_du_args<CAP> &a)
{
	unsigned i = threadIdx.x;
	if (i >= a.n || (i && a.e[i - 1].node == a.e[i].node))
		return;
	for (unsigned k = i; k < a.n && a.e[k].node == a.e[i].node; k++) {
		cudaGraphDeviceNode_t nd = (cudaGraphDeviceNode_t)a.e[k].node;
		if (a.e[k].size)
			cudaGraphKernelNodeSetParam(nd, a.e[k].off, &a.e[k].value, a.e[k].size);
		else
			cudaGraphKernelNodeSetGridDim(nd, dim3(a.e[k].off, (unsigned)a.e[k].value,
							       (unsigned)(a.e[k].value >> 32)));
	}
}

extern "C" __global__ void gs_du_apply16(gs_du_args<16> a)
{
	gs_du_run(a);
}

extern "C" __global__ void gs_du_apply128(gs_du_args<128> a)
{
	gs_du_run(a);
}
