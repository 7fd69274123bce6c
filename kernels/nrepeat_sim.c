/*
 * nrepeat's kernel for the CPU simulator: the same math as nrepeat.cu.
 */
#include "gs_sim_args.h"

static void k_touch(const gs_sim_dim_t *dim, void **params)
{
	float *x = GS_SIM_PTR(float, 0);
	int n = GS_SIM_INT(1);
	float v = GS_SIM_FLOAT(2);
	int salt = GS_SIM_INT(3);
	long threads = (long)dim->grid[0] * dim->block[0];

	for (long i = 0; i < n && i < threads; i++)
		x[i] = 0.5f * x[i] + v + (float)salt * 1e-3f;
}

static void k_touch_w(const gs_sim_dim_t *dim, void **params)
{
	float *x = GS_SIM_PTR(float, 0);
	int n = GS_SIM_INT(1);
	float v = GS_SIM_FLOAT(2);
	int salt = GS_SIM_INT(3);
	int w = GS_SIM_INT(4);
	long threads = (long)dim->grid[0] * dim->block[0];

	for (long i = 0; i < n && i < threads; i++)
		x[i] = 0.5f * x[i] + v * (float)w + (float)salt * 1e-3f;
}

static void k_touch_d(const gs_sim_dim_t *dim, void **params)
{
	float *x = GS_SIM_PTR(float, 0);
	double v = *(const double *)params[1];
	int n = GS_SIM_INT(2);
	int salt = GS_SIM_INT(3);
	long threads = (long)dim->grid[0] * dim->block[0];

	for (long i = 0; i < n && i < threads; i++)
		x[i] = 0.5f * x[i] + (float)v + (float)salt * 1e-3f;
}

const gs_sim_kernel_t gs_sim_kernels[] = {
	{ "k_touch", k_touch, 4, { 8, 4, 4, 4 } },
	{ "k_touch_w", k_touch_w, 5, { 8, 4, 4, 4, 4 } },
	{ "k_touch_d", k_touch_d, 4, { 8, 8, 4, 4 } },
	{ 0 }
};
