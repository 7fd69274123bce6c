// The device-update probe's updater (probe.c): each thread writes one
// parameter word of one device-updatable node of an instantiated graph.
#include <cuda_runtime.h>

struct gs_du_entry {
	unsigned long long node; /* cudaGraphDeviceNode_t */
	unsigned offset, size;   /* bytes into the node's parameters; 1-8 */
	unsigned long long value;
};
#define GS_DU_MAX 160
struct gs_du_args {
	unsigned n, pad;
	struct gs_du_entry e[GS_DU_MAX];
};

extern "C" __global__ void gs_du_apply(struct gs_du_args a)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= a.n)
		return;
	cudaGraphKernelNodeSetParam((cudaGraphDeviceNode_t)a.e[i].node, a.e[i].offset,
				    &a.e[i].value, a.e[i].size);
}
