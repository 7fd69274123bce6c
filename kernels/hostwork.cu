/*
 * hostwork: the kernels of the workload where a graph loses.  Each launch
 * runs long enough (tens of microseconds) that the GPU is busy while the
 * host prepares the next launch.  Each thread rotates its element pair
 * (x[i], y[i]) `iters` times by one small angle: a chain of dependent
 * multiply-adds whose length sets the kernel's time, bounded over any number
 * of steps and never forgetting the data (see tiny.cu).  hostwork_sim.c is
 * the same math for the simulator.
 */
extern "C" __global__ void k_spin(float *x, float *y, float c, float s, int n, int iters)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		float a = x[i], b = y[i];
		for (int k = 0; k < iters; k++) {
			float t = c * a - s * b;
			b = s * a + c * b;
			a = t;
		}
		x[i] = a;
		y[i] = b;
	}
}
