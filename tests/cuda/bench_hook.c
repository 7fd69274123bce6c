/*
 * How much host time graphshim adds to a launch it passes straight
 * through: launches that never repeat (a new argument value each time)
 * against the fake driver of tests/cuda, whose launch costs almost nothing,
 * with and without LD_PRELOAD.  Prints the median ns per launch of 21
 * batches.  Run by tools/bench-hook.sh; not a test.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
			      unsigned, unsigned, CUstream, void **, void **);

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

#define FAKE_FN ((CUfunction)0x100)

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The driver's entry point `name` (libcuda.so.1, opened once); NULL, said on stderr, when missing. */
static void *drv(const char *name)
{
	static void *h;
	if (!h && !(h = dlopen("libcuda.so.1", RTLD_NOW))) {
		fprintf(stderr, "bench_hook: %s\n", dlerror());
		return NULL;
	}
	void *f = dlsym(h, name);
	if (!f)
		fprintf(stderr, "bench_hook: no %s\n", name);
	return f;
}

/* The stream a pattern launches on: a stream of its own, or the legacy
 * default stream (PyTorch's) where `legacy` or BENCH_HOOK_LEGACY=1 says so. */
static CUstream bench_stream(int legacy)
{
	const char *lg = getenv("BENCH_HOOK_LEGACY");
	return legacy || (lg && *lg == '1') ? NULL : (CUstream)0x5000;
}

/* One driver call of a pattern below, counted; the pattern fails (1) where it fails. */
#define CALL(x)                                                               \
	do {                                                                  \
		if ((x) != CUDA_SUCCESS)                                      \
			return 1;                                             \
		calls++;                                                      \
	} while (0)

/* Mode "t" (see main): Thrust's default policy on a stream of its own. */
static int thrust_pattern(void)
{
	launch_fn launch = (launch_fn)drv("cuLaunchKernel");
	CUresult (*sync)(CUstream) = (CUresult(*)(CUstream))drv("cuStreamSynchronize");
	CUresult (*alloc)(CUdeviceptr *, size_t) = (CUresult(*)(CUdeviceptr *, size_t))drv("cuMemAlloc_v2");
	CUresult (*mfree)(CUdeviceptr) = (CUresult(*)(CUdeviceptr))drv("cuMemFree_v2");
	CUresult (*d2h)(void *, CUdeviceptr, size_t, CUstream) =
		(CUresult(*)(void *, CUdeviceptr, size_t, CUstream))drv("cuMemcpyDtoHAsync_v2");
	if (!launch || !sync || !alloc || !mfree || !d2h)
		return 2;
	enum { STEPS = 2000, NB = 21 };
	CUstream s = (CUstream)0x5000;
	int v = 0;
	void *kp[] = { &v, &v, &v };
	double per[NB], result = 0;
	long calls = 0;
#define TK(f) CALL(launch((CUfunction)((uintptr_t)FAKE_FN + (f)), 1, 1, 1, 32, 1, 1, 0, s, kp, NULL))
	for (int b = 0; b < NB; b++) {
		calls = 0;
		double t0 = now_ns();
		for (int i = 0; i < STEPS; i++) {
			v = i;
			TK(0); /* a transform, then the policy's synchronize */
			CALL(sync(s));
			for (int r = 0; r < 2; r++) { /* two inner products */
				CUdeviceptr tmp;
				CALL(alloc(&tmp, 4096));
				TK(1); /* the reduction's two kernels */
				TK(2);
				CALL(d2h(&result, tmp, sizeof(result), s));
				CALL(sync(s));
				CALL(mfree(tmp));
				TK(0); /* an axpy */
				CALL(sync(s));
			}
		}
		per[b] = (now_ns() - t0) / calls;
	}
#undef TK
	qsort(per, NB, sizeof(per[0]), cmp);
	printf("%.1f\n", per[NB / 2]);
	return 0;
}

/* Mode "e" (see main). */
static int rnn_pattern(void)
{
	launch_fn launch = (launch_fn)drv("cuLaunchKernel");
	CUresult (*sync)(CUstream) = (CUresult(*)(CUstream))drv("cuStreamSynchronize");
	CUresult (*rec)(CUevent, CUstream) = (CUresult(*)(CUevent, CUstream))drv("cuEventRecord");
	CUresult (*wait)(CUstream, CUevent, unsigned) =
		(CUresult(*)(CUstream, CUevent, unsigned))drv("cuStreamWaitEvent");
	if (!launch || !sync || !rec || !wait)
		return 2;
	enum { SIDES = 12, TOKENS = 200, NB = 21 };
	CUstream main_s = NULL, side[SIDES];
	for (int i = 0; i < SIDES; i++)
		side[i] = (CUstream)(uintptr_t)(0x6000 + 0x100 * i);
	CUevent join = (CUevent)0x7000, link = (CUevent)0x7100;
	int v = 0;
	void *kp[] = { &v };
	double per[NB];
	long calls = 0;
#define K(stream) CALL(launch(FAKE_FN, 1, 1, 1, 32, 1, 1, 0, (stream), kp, NULL))
	for (int b = 0; b < NB; b++) {
		calls = 0;
		double t0 = now_ns();
		for (int t = 0; t < TOKENS; t++) {
			v = b * TOKENS + t; /* the lookup's index: new every token */
			K(main_s);
			CALL(rec(join, main_s));
			for (int i = 0; i < SIDES; i++)
				CALL(wait(side[i], join, 0));
			v = 1;
			for (int l = 0; l < 2; l++) {
				K(side[l]);
				CALL(rec(link, side[l]));
				K(side[8 + l]);
				CALL(wait(side[8 + l], link, 0));
				K(side[8 + l]);
			}
			for (int i = 0; i < SIDES; i++) {
				CALL(rec(join, side[i]));
				CALL(wait(main_s, join, 0));
			}
			K(main_s);
			K(main_s);
			CALL(sync(main_s));
		}
		per[b] = (now_ns() - t0) / (double)calls;
	}
#undef K
	qsort(per, NB, sizeof(per[0]), cmp);
	printf("%.1f\n", per[NB / 2]);
	return 0;
}

/* Mode "c": "p" (a 64-launch step of a 656-byte parameter kernel, learned
 * and replayed) with the caches stirred between launches, as an interpreter
 * between a framework's launches stirs them (PyTorch's dispatch): 4 MB
 * (larger than a core's L2) read and written before each launch, only the
 * launch call timed.  Prints the median ns of a launch call of 11 batches
 * of 10 steps: what a held launch costs when little of graphshim's code and
 * data is still near the core.  Mode "d" (drift): each launch's words 1
 * and 2 (two pointers, as a framework's tensors that moved) change every
 * step, so every node of the replayed step is patched every step (from
 * the host, or on the GPU under FAKE_DEVUPD=1).  Mode "k" (fresh): the
 * same stirred loop, but no launch repeats (its grid and its image's first
 * word new every launch, as kernels/nrepeat's), so the stream goes cold:
 * what the cold lane costs a launch when little of graphshim is near the
 * core, against "c" under GRAPHSHIM_GATE=eager (a learned step matched
 * launch by launch and submitted eagerly). */
static int cold_pattern(int drift, int fresh)
{
	launch_fn launch = (launch_fn)drv("cuLaunchKernel");
	CUresult (*sync)(CUstream) = (CUresult(*)(CUstream))drv("cuStreamSynchronize");
	if (!launch || !sync)
		return 2;
	enum { BATCH = 640, STIR = 4 << 20 };
	/* BENCH_HOOK_BATCHES: fewer batches (under callgrind's cache model). */
	const char *nb_env = getenv("BENCH_HOOK_BATCHES");
	int NB = nb_env && atoi(nb_env) > 0 && atoi(nb_env) < 11 ? atoi(nb_env) : 11;
	unsigned char *stir = malloc(STIR);
	if (!stir)
		return 2;
	memset(stir, 1, STIR);
	CUstream s = bench_stream(0);
	static unsigned char image[656];
	void *kbig[] = { image };
	int word = 0;
	void *ksmall[] = { &word };
	double per[11];
	unsigned sum = 0;
	for (int b = 0; b < NB; b++) {
		double spent = 0;
		for (int i = 0; i < BATCH; i++) {
			for (size_t k = 0; k < STIR; k += 64)
				sum += stir[k]++;
			int v = fresh ? b * BATCH + i : i % 64;
			memcpy(image, &v, sizeof(v));
			unsigned mix = (unsigned)v * 2654435761u;
			unsigned grid = fresh ? 1 + (mix >> 26) : 1;
			/* fresh: one launch in two, drawn, of a kernel of another
			 * parameter layout, so no segment's structure repeats */
			int small = fresh && (mix >> 9) % 2;
			if (drift) {
				uint64_t p[2] = { 0x7f0000000000ull + (uint64_t)(b * BATCH + i) / 64 * 4096,
						  0x7f1000000000ull + (uint64_t)(b * BATCH + i) / 64 * 8192 };
				memcpy(image + 8, p, sizeof(p));
			}
			double t0 = now_ns();
			if (launch((CUfunction)((uintptr_t)FAKE_FN + (small ? 0 : 3)), grid, 1, 1, 32, 1, 1, 0,
				   s, small ? ksmall : kbig, NULL) != CUDA_SUCCESS)
				return 1;
			spent += now_ns() - t0;
			if (i % 64 == 63 && sync(s) != CUDA_SUCCESS)
				return 1;
		}
		per[b] = spent / BATCH;
	}
	free(stir);
	qsort(per, NB, sizeof(per[0]), cmp);
	printf("%.1f\n", per[NB / 2] + (sum == 1 ? 1e-9 : 0));
	return 0;
}

/* Mode "m" (see main): a step that replays between work that never repeats. */
static int mixed_pattern(void)
{
	launch_fn launch = (launch_fn)drv("cuLaunchKernel");
	CUresult (*sync)(CUstream) = (CUresult(*)(CUstream))drv("cuStreamSynchronize");
	if (!launch || !sync)
		return 2;
	enum { STEPS = 100, NEW = 3, NEWLEN = 32, NB = 21 };
	CUstream s = (CUstream)0x5000;
	int v = 0;
	void *kp[] = { &v, &v, &v };
	double per[NB];
	long calls = 0;
	unsigned k = 0;
	for (int b = 0; b < NB; b++) {
		calls = 0;
		double t0 = now_ns();
		for (int i = 0; i < STEPS; i++) {
			for (int j = 0; j < 64; j++) { /* the step: learned, replayed */
				v = j;
				CALL(launch(FAKE_FN, 1, 1, 1, 32, 1, 1, 0, s, kp, NULL));
			}
			CALL(sync(s));
			for (int n = 0; n < NEW; n++) { /* segments whose shapes never repeat */
				for (int j = 0; j < NEWLEN; j++) {
					unsigned mix = ++k * 2654435761u;
					v = (int)k;
					CALL(launch((CUfunction)((uintptr_t)FAKE_FN + (mix >> 8) % 3), 2 + (mix >> 26),
						    1, 1, 32, 1, 1, 0, s, kp, NULL));
				}
				CALL(sync(s));
			}
		}
		per[b] = (now_ns() - t0) / (double)calls;
	}
	qsort(per, NB, sizeof(per[0]), cmp);
	printf("%.1f\n", per[NB / 2]);
	return 0;
}

int main(int argc, char **argv)
{
	/* "r": the same launch every time; "n": like kernels/nrepeat (each
	 * launch's kernel drawn among three of three parameter layouts, a new
	 * grid and arguments each launch, a stream synchronize every 256: no
	 * structure repeats, so nothing can be learned);
	 * "l": "n" on the legacy default stream; "s": a step of 64 launches,
	 * each with its own argument, and a synchronize: learned and replayed
	 * (the host time of a replayed launch); "e": cuDNN's RNN as PyTorch
	 * calls it (rnn-lstm on the H100), a token a step: on the legacy
	 * stream a launch and an event record, twelve non-blocking side streams
	 * wait on it, four of them launch one or two kernels joined by
	 * events, all twelve record and the legacy stream waits on each, then
	 * two launches and a synchronize there (ns per call, launches, records
	 * and waits alike). */
	/* "a": steps of 64 launches that alternate between two kinds, alike
	 * but for their last launch's kernel, and a synchronize (both learned:
	 * shared chunks while both match, GRAPHSHIM_SHARE). */
	/* "p": "s" with a kernel of one 656-byte parameter (a PyTorch
	 * elementwise kernel's), its first word the step's argument. */
	/* "t": Thrust's default policy on a stream of its own (thrust-cg-stream
	 * on the H200): every algorithm synchronises; each inner product
	 * allocates its temporary storage, launches two kernels, reads its
	 * result back and frees (ns per call, launches and the rest alike). */
	/* "m": a 64-launch step that replays, then three segments of 32
	 * launches whose shapes never repeat, each synchronized (a training
	 * step after a per-image augmentation; GRAPHSHIM_COLD_REPLAY). */
	int big = argc > 1 && argv[1][0] == 'p';
	int alike = argc > 1 && argv[1][0] == 'a';
	int repeat = argc > 1 && argv[1][0] == 'r';
	int step = argc > 1 && (argv[1][0] == 's' || alike || big);
	int legacy = argc > 1 && argv[1][0] == 'l';
	int nrep = (argc > 1 && argv[1][0] == 'n') || legacy;
	if (argc > 1 && argv[1][0] == 'e')
		return rnn_pattern();
	if (argc > 1 && argv[1][0] == 't')
		return thrust_pattern();
	if (argc > 1 && argv[1][0] == 'm')
		return mixed_pattern();
	if (argc > 1 && (argv[1][0] == 'c' || argv[1][0] == 'd' || argv[1][0] == 'k'))
		return cold_pattern(argv[1][0] == 'd', argv[1][0] == 'k');
	launch_fn launch = (launch_fn)drv("cuLaunchKernel");
	CUresult (*sync)(CUstream) = (CUresult(*)(CUstream))drv("cuStreamSynchronize");
	if (!launch || !sync)
		return 2;
	CUstream s = bench_stream(legacy);
	enum { BATCH = 4000, NB = 21 };
	double per[NB];
	int v = 0;
	void *kp[] = { &v, &v, &v };
	static unsigned char image[656];
	void *kbig[] = { image };
	for (int b = 0; b < NB; b++) {
		double t0 = now_ns();
		for (int i = 0; i < BATCH; i++) {
			v = repeat ? 7 : step ? i % 64 : b * BATCH + i;
			unsigned mix = (unsigned)v * 2654435761u;
			unsigned grid = nrep ? 1 + (mix >> 26) : 1;
			uintptr_t fn = (uintptr_t)FAKE_FN + (nrep ? (mix >> 8) % 3 : 0);
			if (alike && i % 64 == 63 && (i / 64) % 2)
				fn = (uintptr_t)FAKE_FN + 1; /* the other kind of step */
			if (big) {
				fn = (uintptr_t)FAKE_FN + 3;
				memcpy(image, &v, sizeof(v));
			}
			if (launch((CUfunction)fn, grid, 1, 1, 32, 1, 1, 0, s, big ? kbig : kp, NULL) !=
			    CUDA_SUCCESS)
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
