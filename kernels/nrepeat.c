/*
 * nrepeat: launches that never repeat (grid size and scalar arguments change
 * on every launch), with a stream synchronize per step.  Under graphshim no
 * sequence can be learned, so the difference from an eager run is the cost
 * of passing launches through.
 *
 *   nrepeat [--kernels K] [--steps N] [--seed S] [--out FILE] [--time]
 */
#include <string.h>

#include "gs_wl.h"

#define NR_BLOCK 128
#define NR_MAX_GRID 64

int main(int argc, char **argv)
{
	long kernels = 256, steps = 1000, seed = 1;
	const char *outp = NULL;
	bool time = false;

	for (int i = 1; i < argc; i++) {
		const char *v;
		if (gs_wl_opt(argc, argv, &i, "--kernels", &v))
			kernels = gs_wl_arg_long("--kernels", v, 1, 1000000);
		else if (gs_wl_opt(argc, argv, &i, "--steps", &v))
			steps = gs_wl_arg_long("--steps", v, 1, 100000000);
		else if (gs_wl_opt(argc, argv, &i, "--seed", &v))
			seed = gs_wl_arg_long("--seed", v, 0, 0x7fffffff);
		else if (gs_wl_opt(argc, argv, &i, "--out", &v))
			outp = v;
		else if (strcmp(argv[i], "--time") == 0)
			time = true;
		else {
			fprintf(stderr, "usage: nrepeat [--kernels K] [--steps N] [--seed S] "
					"[--out FILE] [--time]\n");
			return 1;
		}
	}

	gs_wl_dev_t dev;
	CUmodule mod;
	gs_wl_dev_init(&dev);
	gs_wl_module_load(&mod, "nrepeat");
	CUfunction touch = gs_wl_function(mod, "k_touch");

	size_t bytes = NR_BLOCK * NR_MAX_GRID * sizeof(float);
	float *h = malloc(bytes);
	gs_wl_rng_t rng;
	if (h == NULL) {
		perror("malloc");
		return 2;
	}
	gs_wl_rng_seed(&rng, (uint64_t)seed, 3);
	gs_wl_rng_fill(&rng, h, NR_BLOCK * NR_MAX_GRID, 1.0f);
	CUdeviceptr x = gs_wl_alloc(bytes);
	GS_CHECK(cuMemcpyHtoD(x, h, bytes));
	CUstream s;
	GS_CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));

	gs_wl_timer_t tm;
	gs_wl_timer_init(&tm, (size_t)steps);
	uint64_t t0 = gs_wl_now_ns();
	/* salt counts launches: no two launches ever carry the same bytes. */
	int salt = 0;
	for (long step = 0; step < steps; step++) {
		gs_wl_timer_start(&tm);
		for (long k = 0; k < kernels; k++, salt++) {
			unsigned grid = 1 + (unsigned)(gs_wl_rng_next(&rng) % NR_MAX_GRID);
			int n = (int)(grid * NR_BLOCK);
			float v = gs_wl_rng_float(&rng, 0.25f);
			void *p[] = { &x, &n, &v, &salt };
			GS_CHECK(cuLaunchKernel(touch, grid, 1, 1, NR_BLOCK, 1, 1, 0, s, p, NULL));
		}
		GS_CHECK(cuStreamSynchronize(s));
		gs_wl_timer_stop(&tm);
	}
	gs_wl_timer_wall(&tm, gs_wl_now_ns() - t0);
	if (time) {
		char label[96];
		snprintf(label, sizeof(label), "nrepeat mode=eager kernels=%ld", kernels);
		gs_wl_timer_report(&tm, label);
	}

	gs_wl_out_t out;
	gs_wl_out_open(&out, outp);
	gs_wl_out_device(&out, x, bytes);
	gs_wl_out_close(&out);
	GS_CHECK(cuStreamDestroy(s));
	GS_CHECK(cuMemFree(x));
	GS_CHECK(cuModuleUnload(mod));
	gs_wl_timer_free(&tm);
	free(h);
	return 0;
}
