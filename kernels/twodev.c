/*
 * One process driving every device it finds (at most 4): a context per
 * device, a stream per context, the same chained tiny kernels issued to all
 * of them step by step, with a per-step read-back from each.  graphshim's
 * state is keyed by context, so each device's step is learned and replayed
 * on its own; the outputs must not change.  Writes every device's final
 * buffers to --out.
 *
 *   twodev [--steps N] [--kernels K] [--out FILE]
 */
#include "gs_wl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXDEV 4
#define N 4096

int main(int argc, char **argv)
{
	long steps = 200, kernels = 64;
	const char *out = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--steps") && i + 1 < argc)
			steps = atol(argv[++i]);
		else if (!strcmp(argv[i], "--kernels") && i + 1 < argc)
			kernels = atol(argv[++i]);
		else if (!strcmp(argv[i], "--out") && i + 1 < argc)
			out = argv[++i];
		else {
			fprintf(stderr, "usage: twodev [--steps N] [--kernels K] [--out FILE]\n");
			return 2;
		}
	}
	GS_CHECK(cuInit(0));
	int ndev = 0;
	GS_CHECK(cuDeviceGetCount(&ndev));
	if (ndev > MAXDEV)
		ndev = MAXDEV;
	CUcontext ctx[MAXDEV];
	CUstream s[MAXDEV];
	CUfunction rot[MAXDEV];
	CUdeviceptr x[MAXDEV], y[MAXDEV];
	float *init = malloc(N * sizeof(float)), *host = malloc(N * sizeof(float));
	gs_wl_rng_t rng = { 7 };
	for (int i = 0; i < N; i++)
		init[i] = gs_wl_rng_float(&rng, 1.0f);
	for (int d = 0; d < ndev; d++) {
		CUdevice dev;
		CUmodule mod;
		GS_CHECK(cuDeviceGet(&dev, d));
		GS_CHECK(cuDevicePrimaryCtxRetain(&ctx[d], dev));
		GS_CHECK(cuCtxSetCurrent(ctx[d]));
		gs_wl_module_load(&mod, "tiny");
		rot[d] = gs_wl_function(mod, "k_rot");
		GS_CHECK(cuStreamCreate(&s[d], CU_STREAM_NON_BLOCKING));
		x[d] = gs_wl_alloc(N * sizeof(float));
		y[d] = gs_wl_alloc(N * sizeof(float));
		GS_CHECK(cuMemcpyHtoD(x[d], init, N * sizeof(float)));
		GS_CHECK(cuMemcpyHtoD(y[d], init, N * sizeof(float)));
	}
	int n = N;
	for (long st = 0; st < steps; st++) {
		for (int d = 0; d < ndev; d++) {
			GS_CHECK(cuCtxSetCurrent(ctx[d]));
			for (long k = 0; k < kernels; k++) {
				float c = 0.8f + 0.001f * (float)(k + d), sn = 0.6f;
				void *p[] = { &x[d], &y[d], &c, &sn, &n };
				GS_CHECK(cuLaunchKernel(rot[d], N / 256, 1, 1, 256, 1, 1, 0, s[d], p, NULL));
			}
		}
		for (int d = 0; d < ndev; d++) { /* the per-step read-back of each device */
			GS_CHECK(cuCtxSetCurrent(ctx[d]));
			GS_CHECK(cuMemcpyDtoHAsync(host, x[d], sizeof(float), s[d]));
			GS_CHECK(cuStreamSynchronize(s[d]));
		}
	}
	FILE *f = out ? fopen(out, "wb") : NULL;
	for (int d = 0; d < ndev; d++) {
		GS_CHECK(cuCtxSetCurrent(ctx[d]));
		GS_CHECK(cuMemcpyDtoH(host, x[d], N * sizeof(float)));
		if (f)
			fwrite(host, sizeof(float), N, f);
		GS_CHECK(cuMemcpyDtoH(host, y[d], N * sizeof(float)));
		if (f)
			fwrite(host, sizeof(float), N, f);
	}
	if (f)
		fclose(f);
	printf("twodev: %d devices, %ld steps of %ld kernels\n", ndev, steps, kernels);
	free(init);
	free(host);
	return 0;
}
