/*
 * nrepeat: launches that never repeat.  The host draws each launch's kernel
 * among three of three parameter layouts, its grid and its scalar
 * arguments, so no sequence ever recurs (not even in structure) and
 * graphshim can only pass launches through; the workload measures what
 * that pass-through costs.  With --one-kernel only k_touch is launched: the
 * structure repeats and only the operands drift.  nrepeat_sim.c is the same
 * math for the simulator.
 */

/* x[i] = 0.5 x[i] + v + salt * 1e-3 for i < n (n is the grid's extent) */
extern "C" __global__ void k_touch(float *x, int n, float v, int salt)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = 0.5f * x[i] + v + (float)salt * 1e-3f;
}

/* The same with one more parameter (w = 1), so another layout. */
extern "C" __global__ void k_touch_w(float *x, int n, float v, int salt, int w)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = 0.5f * x[i] + v * (float)w + (float)salt * 1e-3f;
}

/* The same with v as a double: a third layout. */
extern "C" __global__ void k_touch_d(float *x, double v, int n, int salt)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = 0.5f * x[i] + (float)v + (float)salt * 1e-3f;
}
