/*
 * hostwork's kernel for the CPU simulator: the same math as hostwork.cu,
 * run over the whole grid in one call.
 */
#include "gs_sim_args.h"

static void k_spin(const gs_sim_dim_t *dim, void **params)
{
	float *x = GS_SIM_PTR(float, 0), *y = GS_SIM_PTR(float, 1);
	float c = GS_SIM_FLOAT(2), s = GS_SIM_FLOAT(3);
	int n = GS_SIM_INT(4), iters = GS_SIM_INT(5);
	long threads = (long)dim->grid[0] * dim->block[0];

	for (long i = 0; i < n && i < threads; i++) {
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

const gs_sim_kernel_t gs_sim_kernels[] = {
	{ "k_spin", k_spin, 6, { 8, 8, 4, 4, 4, 4 } },
	{ 0 }
};
