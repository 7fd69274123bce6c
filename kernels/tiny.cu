/*
 * tiny: the kernels of the dispatch-bound workload.  Each launch touches a
 * few hundred floats, so the GPU finishes it long before the host can issue
 * the next one: the step time is launch overhead and nothing else.  Each
 * element pair (x[i], y[i]) is rotated and shifted: a rotation keeps values
 * bounded over any number of steps yet never forgets the initial data (a
 * contraction would converge to one fixed point and hide a lost step), and
 * rotations do not commute with the shifts, so any change of order, any lost
 * or repeated launch changes the output.  tiny_sim.c is the same math for
 * the simulator.
 */

/* (x, y) = (c x - s y, s x + c y) */
extern "C" __global__ void k_rot(float *x, float *y, float c, float s, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		float a = x[i], b = y[i];
		x[i] = c * a - s * b;
		y[i] = s * a + c * b;
	}
}

/* x += c */
extern "C" __global__ void k_addc(float *x, float c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] += c;
}
