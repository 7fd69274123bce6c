/*
 * tiny: the kernels of the dispatch-bound workload.  Each launch touches a
 * few hundred floats, so the GPU finishes it long before the host can issue
 * the next one: the step time is launch overhead and nothing else.  The mix
 * is a contraction (a + b < 1), so values stay bounded over any number of
 * steps, and consecutive kernels read each other's results, so any change of
 * order changes the output.  tiny_sim.c is the same math for the simulator.
 */

/* y = a*x + b*y */
extern "C" __global__ void k_mix(float *y, const float *x, float a, float b, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = a * x[i] + b * y[i];
}

/* x += c */
extern "C" __global__ void k_addc(float *x, float c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] += c;
}
