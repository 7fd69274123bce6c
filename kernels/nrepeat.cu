/*
 * nrepeat: a kernel whose launches never repeat.  The host changes its grid
 * and its scalar arguments on every launch, so no sequence ever recurs and
 * graphshim can only pass launches through; the workload measures what that
 * pass-through costs.  nrepeat_sim.c is the same math for the simulator.
 */

/* x[i] = 0.5 x[i] + v + salt * 1e-3 for i < n (n is the grid's extent) */
extern "C" __global__ void k_touch(float *x, int n, float v, int salt)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = 0.5f * x[i] + v + (float)salt * 1e-3f;
}
