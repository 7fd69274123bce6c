/*
 * A repeating step that uses every launch and transfer form graphshim's
 * HIP backend turns into graph nodes, for t-hip-workloads.sh to run
 * without and with graphshim: hipModuleLaunchKernel with kernelParams and
 * with the packed `extra` buffer (its value drifts every step, so replays
 * patch it), hipExtModuleLaunchKernel with global sizes (a multiple: an
 * element; not a multiple: a boundary), hipMemsetD32Async, hipMemsetAsync,
 * hipMemcpyDtoDAsync and hipMemcpyAsync(hipMemcpyDefault) into pinned
 * memory, then a stream synchronize.  Usage:
 *   t_hip_forms [--steps N] [--out FILE]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hip/hip_runtime_api.h>

#include "hipsim_test.h"

#define N 256

int main(int argc, char **argv)
{
	long steps = 100;
	const char *out = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--steps") && i + 1 < argc)
			steps = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--out") && i + 1 < argc)
			out = argv[++i];
		else {
			fprintf(stderr, "usage: %s [--steps N] [--out FILE]\n", argv[0]);
			return 1;
		}
	}
	FILE *f = out ? fopen(out, "wb") : NULL;
	if (out && !f)
		return 1;
	hipModule_t mod;
	hipFunction_t fill, add, axpy;
	OK(hipModuleLoad(&mod, GS_HIP_TESTKERN_DIR "/testkern.hsaco"));
	OK(hipModuleGetFunction(&fill, mod, "fill"));
	OK(hipModuleGetFunction(&add, mod, "add_scalar"));
	OK(hipModuleGetFunction(&axpy, mod, "axpy"));
	hipStream_t s;
	OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
	void *a, *b, *x, *pin;
	OK(hipMalloc(&a, N * 4));
	OK(hipMalloc(&b, N * 4));
	OK(hipMalloc(&x, N * 4));
	OK(hipHostMalloc(&pin, 3 * N * 4, 0));
	float xs[N];
	for (int i = 0; i < N; i++)
		xs[i] = (float)i / 7.0f;
	OK(hipMemcpyHtoD(x, xs, sizeof(xs)));
	unsigned n = N;
	for (long step = 0; step < steps; step++) {
		int v = (int)(step % 5) + 1;
		OK(hipMemsetD32Async(a, (int)step, N, s));
		/* add_scalar(a, v, n) through the extra buffer: v drifts. */
		struct { void *p; int v; unsigned n; } pk = { a, v, n };
		size_t psz = sizeof(pk);
		void *extra[] = { HIP_LAUNCH_PARAM_BUFFER_POINTER, &pk, HIP_LAUNCH_PARAM_BUFFER_SIZE, &psz,
				  HIP_LAUNCH_PARAM_END };
		OK(hipModuleLaunchKernel(add, 2, 1, 1, 128, 1, 1, 0, s, NULL, extra));
		/* fill(b, 3, n), global sizes: 256 work-items in groups of 64. */
		int three = 3;
		void *fargs[] = { &b, &three, &n };
		OK(ext_launch(fill, N, 1, 1, 64, 1, 1, 0, s, fargs, NULL, NULL, NULL, 0));
		/* axpy(b, x, 0.5, n) with kernelParams. */
		float half = 0.5f;
		void *xargs[] = { &b, &x, &half, &n };
		OK(hipModuleLaunchKernel(axpy, 1, 1, 1, 256, 1, 1, 0, s, xargs, NULL));
		/* A global size that is not a multiple: never held, submitted in order. */
		int one = 1;
		void *aargs[] = { &a, &one, &n };
		if (step % 3 == 0)
			OK(ext_launch(add, 250, 1, 1, 64, 1, 1, 0, s, aargs, NULL, NULL, NULL, 0));
		OK(hipMemsetAsync((char *)a + 16, 0x40 + (int)(step & 1), 8, s));
		OK(hipMemcpyDtoDAsync(x, b, 64, s));
		OK(hipMemcpyAsync(pin, a, N * 4, hipMemcpyDefault, s));
		OK(hipMemcpyAsync((char *)pin + N * 4, b, N * 4, hipMemcpyDeviceToHost, s));
		OK(hipMemcpyAsync((char *)pin + 2 * N * 4, x, N * 4, hipMemcpyDefault, s));
		OK(hipStreamSynchronize(s));
		/* Every call succeeded: none may leave an error (graphshim's own
		 * failed calls, fault injected, must not either). */
		OK(hipGetLastError());
		if (f)
			fwrite(pin, 1, 3 * N * 4, f);
	}
	OK(hipStreamDestroy(s));
	OK(hipFree(a));
	OK(hipFree(b));
	OK(hipFree(x));
	OK(hipHostFree(pin));
	OK(hipModuleUnload(mod));
	if (f && fclose(f))
		return 1;
	return 0;
}
