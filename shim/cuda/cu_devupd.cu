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
	unsigned off, size;      /* bytes of its parameters; size 0: the grid, x in off */
	unsigned long long value; /* size 1-8: the bytes; more (a run of words, up to
				   * cu_devupd.c's GS_DU_SPAN): where they are, past the entries */
};

/* Entries, then the runs' bytes: e[n] on, each run 8-byte aligned. */
template <unsigned CAP> struct gs_du_args {
	unsigned n, pad;
	gs_du_entry e[CAP];
};

template <unsigned CAP> __device__ void gs_du_node(const gs_du_args<CAP> &a, unsigned i)
{
	const unsigned long long *runs = (const unsigned long long *)&a.e[a.n];
	for (unsigned k = i; k < a.n && a.e[k].node == a.e[i].node; k++) {
		/* Before the parameters were a grid constant, taking an
		 * entry's address copied all of them (3 KB) to the thread's
		 * stack, past the context's stack limit (1 KB) where no eager
		 * launch of this kernel raised it (a stack overflow on an
		 * H200, which the driver reports as an illegal address); a
		 * value of 8 bytes or fewer still goes through a copy of its
		 * own.  A run is read where it lies (ptxas -v: an 8-byte frame,
		 * the small value's; identical on an H200, check-gpu's
		 * fwstep-wide), and one call writes it, where a call a word
		 * cost the GPU about 2 us each, one after another
		 * (tools/gpu/devupd/updcost.c). */
		cudaGraphDeviceNode_t nd = (cudaGraphDeviceNode_t)a.e[k].node;
		unsigned size = a.e[k].size;
		unsigned long long v = a.e[k].value;
		if (size > 8)
			cudaGraphKernelNodeSetParam(nd, a.e[k].off, runs + v / 8, size);
		else if (size)
			cudaGraphKernelNodeSetParam(nd, a.e[k].off, &v, size);
		else
			cudaGraphKernelNodeSetGridDim(nd, dim3(a.e[k].off, (unsigned)v, (unsigned)(v >> 32)));
	}
}

template <unsigned CAP> __device__ void gs_du_run(const gs_du_args<CAP> &a)
{
	/* One thread a node (its first entry's), the block striding over them
	 * where there are more entries than threads (1,024 at most). */
	for (unsigned i = threadIdx.x; i < a.n; i += blockDim.x) {
		if (i && a.e[i - 1].node == a.e[i].node)
			continue;
		gs_du_node(a, i);
	}
}

/* 776, 12,296 and 32,648 bytes of parameters (past 4 KB: CUDA 12.1 and
 * Volta on; 32,764 at most). */
extern "C" __global__ void gs_du_apply32(const __grid_constant__ gs_du_args<32> a)
{
	gs_du_run(a);
}

extern "C" __global__ void gs_du_apply512(const __grid_constant__ gs_du_args<512> a)
{
	gs_du_run(a);
}

extern "C" __global__ void gs_du_apply1360(const __grid_constant__ gs_du_args<1360> a)
{
	gs_du_run(a);
}
