/*
 * How much host time graphshim adds to a launch it passes straight
 * through: launches that never repeat (a new argument value each time)
 * against the fake driver of tests/cuda, whose launch costs almost nothing,
 * with and without LD_PRELOAD.  Prints the median ns per launch of 21
 * batches.  Run by tools/bench-hook.sh; not a test.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
			      unsigned, unsigned, CUstream, void **, void **);

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	/* "r": the same launch every time; "n": like kernels/nrepeat (each
	 * launch's kernel drawn among three of three parameter layouts, a new
	 * grid and arguments each launch, a stream synchronize every 256: no
	 * structure repeats, so nothing can be learned);
	 * "l": "n" on the legacy default stream; "s": a step of 64 launches,
	 * each with its own argument, and a synchronize: learned and replayed
	 * (the host time of a replayed launch). */
	int repeat = argc > 1 && argv[1][0] == 'r';
	int step = argc > 1 && argv[1][0] == 's';
	int legacy = argc > 1 && argv[1][0] == 'l';
	int nrep = (argc > 1 && argv[1][0] == 'n') || legacy;
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	if (!h) {
		fprintf(stderr, "bench_hook: %s\n", dlerror());
		return 2;
	}
	launch_fn launch = (launch_fn)dlsym(h, "cuLaunchKernel");
	CUresult (*sync)(CUstream) = (CUresult(*)(CUstream))dlsym(h, "cuStreamSynchronize");
	if (!launch || !sync) {
		fprintf(stderr, "bench_hook: %s\n", dlerror());
		return 2;
	}
	CUstream s = legacy ? NULL : (CUstream)0x5000;
	enum { BATCH = 4000, NB = 21 };
	double per[NB];
	int v = 0;
	void *kp[] = { &v, &v, &v };
	for (int b = 0; b < NB; b++) {
		double t0 = now_ns();
		for (int i = 0; i < BATCH; i++) {
			v = repeat ? 7 : step ? i % 64 : b * BATCH + i;
			unsigned mix = (unsigned)v * 2654435761u;
			unsigned grid = nrep ? 1 + (mix >> 26) : 1;
			uintptr_t fn = 0x100 + (nrep ? (mix >> 8) % 3 : 0);
			if (launch((CUfunction)fn, grid, 1, 1, 32, 1, 1, 0, s, kp, NULL) != CUDA_SUCCESS)
				return 1;
			if (((nrep && i % 256 == 255) || (step && i % 64 == 63)) && sync(s) != CUDA_SUCCESS)
				return 1;
		}
		per[b] = (now_ns() - t0) / BATCH;
	}
	qsort(per, NB, sizeof(per[0]), cmp);
	printf("%.1f\n", per[NB / 2]);
	return 0;
}
