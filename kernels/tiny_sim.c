/*
 * tiny's kernels for the CPU simulator: the same math as tiny.cu, run over
 * the whole grid in one call.
 */
#include "gs_sim_args.h"

static void k_rot(const gs_sim_dim_t *dim, void **params)
{
	float *x = GS_SIM_PTR(float, 0), *y = GS_SIM_PTR(float, 1);
	float c = GS_SIM_FLOAT(2), s = GS_SIM_FLOAT(3);
	int n = GS_SIM_INT(4);
	long threads = (long)dim->grid[0] * dim->block[0];

	for (long i = 0; i < n && i < threads; i++) {
		float a = x[i], b = y[i];
		x[i] = c * a - s * b;
		y[i] = s * a + c * b;
	}
}

static void k_addc(const gs_sim_dim_t *dim, void **params)
{
	float *x = GS_SIM_PTR(float, 0);
	float c = GS_SIM_FLOAT(1);
	int n = GS_SIM_INT(2);
	long threads = (long)dim->grid[0] * dim->block[0];

	for (long i = 0; i < n && i < threads; i++)
		x[i] += c;
}

const gs_sim_kernel_t gs_sim_kernels[] = {
	{ "k_rot", k_rot, 5, { 8, 8, 4, 4, 4 } },
	{ "k_addc", k_addc, 3, { 8, 4, 4 } },
	{ 0 }
};
