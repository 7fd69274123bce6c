/*
 * The path <<<>>> and hipLaunchKernelGGL take: a program registers its fat
 * binary and its kernels' host stubs, as a hipcc program's constructor
 * does, then launches by stub through hipLaunchKernel (or
 * hipLaunchKernel_spt) in a repeating step, for t-hip-stubs.sh to run
 * without and with graphshim.  graphshim finds the kernels' parameter
 * layouts in the AMDGPU metadata of the fat binary's code object: the fat
 * binary is the committed hipcc build tests/hip/data/kernels-gfx90a.elf
 * (kernels.hip: axpy, mixed, noargs, bigarg) wrapped here in a clang
 * offload bundle, as hipcc embeds it.  The simulator runs the CPU twins of
 * those kernels given in the wrapper's unused field (tests/sim/hip_fatbin.c).
 *
 * Each step: axpy (its scalar drifts, so replays patch it), mixed, noargs,
 * bigarg (a 132-byte struct argument, one field drifting), then "scale",
 * which the code object does not declare (no layout: a boundary), every
 * tenth step a stub nobody registered (the runtime's error, passed
 * through), a synchronize and the results copied back.  Halfway through,
 * between mixed and noargs, the fat binary is unregistered and a second
 * one registered whose "axpy" adds 1 more, under the same stubs: launches
 * graphshim still held, or a graph learned before, submitted after that
 * would run the wrong axpy and show as a wrong result.  Only hipLaunchKernel(_spt) launches are
 * sequence elements here, so whatever graphshim replays came through it.
 * Usage:
 *   t_hip_stubs [--steps N] [--spt] [--no-metadata] [--out FILE]
 * --spt: launch with hipLaunchKernel_spt, "scale" on its stream 0 (the
 * per-thread stream, which graphshim never holds); --no-metadata: a bundle without the amdgcn code object (no
 * layouts: every launch passes through).  Prints "launches N" (the
 * hipLaunchKernel calls made).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hip/hip_runtime_api.h>

#include "hipsim_test.h"
#include "gs_sim_kernel.h"

#define N 192


/* What clang emits and the runtime exports; no header declares them. */
void **__hipRegisterFatBinary(const void *data);
void __hipUnregisterFatBinary(void **modules);
void __hipRegisterFunction(void **modules, const void *hostFunction, char *deviceFunction,
			   const char *deviceName, unsigned int threadLimit, void *tid, void *bid,
			   void *blockDim, void *gridDim, int *wSize);

/* ---- the kernels of tests/hip/data/kernels.hip, for the simulator ---- */
#define ARG(T, i) (*(T *)params[i])
#define DEV(T, i) ((T *)(uintptr_t)ARG(uint64_t, i))

struct pair {
	double d;
	char c;
};
struct big {
	int v[33];
};
struct f4 {
	float x, y, z, w;
};

static unsigned threads(const gs_sim_dim_t *d)
{
	return d->grid[0] * d->block[0];
}

/* axpy(float a, const float *x, float *y, int n); `plus_one`: then y[i] += 1 */
static void axpy_plus(const gs_sim_dim_t *d, void **params, bool plus_one)
{
	float a = ARG(float, 0);
	const float *x = DEV(const float, 1);
	float *y = DEV(float, 2);
	int n = ARG(int, 3);
	for (unsigned i = 0; i < threads(d); i++)
		if ((int)i < n) {
			y[i] = a * x[i] + y[i];
			if (plus_one)
				y[i] += 1.0f;
		}
}

static void k_axpy(const gs_sim_dim_t *d, void **params)
{
	axpy_plus(d, params, false);
}

/* The second fat binary's axpy: one more. */
static void k_axpy2(const gs_sim_dim_t *d, void **params)
{
	axpy_plus(d, params, true);
}

/* mixed(char c, pair s, short h, long long q, const int *p, float4 v) */
static void k_mixed(const gs_sim_dim_t *d, void **params)
{
	char c = ARG(char, 0);
	struct pair s;
	memcpy(&s, params[1], sizeof(s));
	short h = ARG(short, 2);
	long long q = ARG(long long, 3);
	int *p = DEV(int, 4);
	struct f4 v;
	memcpy(&v, params[5], sizeof(v));
	if (c)
		*p = (int)(s.d + h + q + v.x + s.c);
}

static void k_noargs(const gs_sim_dim_t *d, void **params)
{
}

/* bigarg(char c, big b, double *out) */
static void k_bigarg(const gs_sim_dim_t *d, void **params)
{
	char c = ARG(char, 0);
	struct big b;
	memcpy(&b, params[1], sizeof(b));
	double *out = DEV(double, 2);
	if (c)
		out[0] = b.v[0] + b.v[32];
}

/* scale(float *y, int n): not in the code object. */
static void k_scale(const gs_sim_dim_t *d, void **params)
{
	float *y = DEV(float, 0);
	int n = ARG(int, 1);
	for (int i = 0; i < n; i++)
		y[i] *= 0.5f;
}

#define TWINS(AXPY)                                                    \
	{ { "axpy", AXPY, 4, { 4, 8, 8, 4 } },                         \
	  { "mixed", k_mixed, 6, { 1, 16, 2, 8, 8, 16 } },             \
	  { "noargs", k_noargs, 0, { 0 } },                            \
	  { "bigarg", k_bigarg, 3, { 1, 132, 8 } },                    \
	  { "scale", k_scale, 2, { 8, 4 } },                           \
	  { NULL, NULL, 0, { 0 } } }
static const gs_sim_kernel_t twins1[] = TWINS(k_axpy), twins2[] = TWINS(k_axpy2);

/* The host stubs: only their addresses matter. */
static char stub_axpy, stub_mixed, stub_noargs, stub_bigarg, stub_scale, stub_nobody;

/* ---- the fat binary ---- */
typedef struct {
	uint32_t magic, version;
	const void *binary;
	const void *unused; /* the simulator's twins */
} fatbin_wrapper_t;

static void put64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/*
 * A clang offload bundle as hipcc embeds it: the magic, the entry count,
 * then per entry offset, size, triple length and triple; the host entry is
 * empty and the code object sits at the next 4096 bytes.  Without the code
 * object (no_co), only the host entry.
 */
static unsigned char *bundle(const char *co_path, int no_co)
{
	FILE *f = fopen(co_path, "rb");
	if (!f) {
		perror(co_path);
		exit(2);
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	static const char magic[] = "__CLANG_OFFLOAD_BUNDLE__";
	static const char *const triple[2] = { "host-x86_64-unknown-linux-gnu", "hipv4-amdgcn-amd-amdhsa--gfx90a" };
	unsigned char *b = calloc(1, 4096 + (size_t)n);
	if (!b || n <= 0 || fread(b + 4096, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "cannot read %s\n", co_path);
		exit(2);
	}
	fclose(f);
	size_t at = sizeof(magic) - 1;
	memcpy(b, magic, at);
	put64(b + at, no_co ? 1 : 2);
	at += 8;
	for (int i = 0; i < (no_co ? 1 : 2); i++) {
		size_t tl = strlen(triple[i]);
		put64(b + at, 4096);
		put64(b + at + 8, i ? (uint64_t)n : 0);
		put64(b + at + 16, tl);
		memcpy(b + at + 24, triple[i], tl);
		at += 24 + tl;
	}
	return b;
}

static void **register_all(const fatbin_wrapper_t *w)
{
	void **m = __hipRegisterFatBinary(w);
	if (!m) {
		fprintf(stderr, "__hipRegisterFatBinary failed\n");
		exit(2);
	}
	static const struct { const char *stub; const char *name; } fn[] = {
		{ &stub_axpy, "axpy" }, { &stub_mixed, "mixed" }, { &stub_noargs, "noargs" },
		{ &stub_bigarg, "bigarg" }, { &stub_scale, "scale" },
	};
	for (size_t i = 0; i < sizeof(fn) / sizeof(fn[0]); i++)
		__hipRegisterFunction(m, fn[i].stub, (char *)fn[i].name, fn[i].name, (unsigned)-1, NULL, NULL,
				      NULL, NULL, NULL);
	return m;
}

static int spt;
static long nlaunch;

static hipError_t launch(const void *stub, unsigned grid, unsigned block, void **args, hipStream_t s)
{
	nlaunch++;
	dim3 g = { grid, 1, 1 }, b = { block, 1, 1 };
	return spt ? hipLaunchKernel_spt(stub, g, b, args, 0, s) : hipLaunchKernel(stub, g, b, args, 0, s);
}

int main(int argc, char **argv)
{
	long steps = 100;
	int no_co = 0;
	const char *out = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--steps") && i + 1 < argc)
			steps = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--spt"))
			spt = 1;
		else if (!strcmp(argv[i], "--no-metadata"))
			no_co = 1;
		else if (!strcmp(argv[i], "--out") && i + 1 < argc)
			out = argv[++i];
		else {
			fprintf(stderr, "usage: %s [--steps N] [--spt] [--no-metadata] [--out FILE]\n", argv[0]);
			return 1;
		}
	}
	FILE *f = out ? fopen(out, "wb") : NULL;
	if (out && !f)
		return 1;
	unsigned char *b = bundle(GS_HIP_CODEOBJ, no_co);
	fatbin_wrapper_t w1 = { 0x48495046u, 1, b, twins1 }, w2 = { 0x48495046u, 1, b, twins2 };
	void **mods = register_all(&w1);

	hipStream_t s;
	OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
	float *x, *y;
	int *ip;
	double *dp;
	OK(hipMalloc((void **)&x, N * sizeof(float)));
	OK(hipMalloc((void **)&y, N * sizeof(float)));
	OK(hipMalloc((void **)&ip, sizeof(int)));
	OK(hipMalloc((void **)&dp, sizeof(double)));
	float xs[N], ys[N];
	for (int i = 0; i < N; i++)
		xs[i] = (float)i / 8.0f, ys[i] = 1.0f;
	OK(hipMemcpy(x, xs, sizeof(xs), hipMemcpyHostToDevice));
	OK(hipMemcpy(y, ys, sizeof(ys), hipMemcpyHostToDevice));
	int n = N;
	for (long step = 0; step < steps; step++) {
		float a = 0.25f * (float)(1 + step % 3);
		void *axpy_args[] = { &a, &x, &y, &n };
		OK(launch(&stub_axpy, (N + 63) / 64, 64, axpy_args, s));
		char one = 1;
		struct pair pr = { 0.25 * (double)(step % 8), 2 };
		short h = 3;
		long long q = 1000;
		struct f4 v = { 0.5f, 0, 0, 0 };
		void *mixed_args[] = { &one, &pr, &h, &q, &ip, &v };
		OK(launch(&stub_mixed, 1, 1, mixed_args, s));
		if (step == steps / 2) {
			/*
			 * A library unloaded and another loaded, with axpy and
			 * mixed still queued (graphshim holds them): they must
			 * run the first fat binary's code; then the same stubs
			 * name the second's.
			 */
			__hipUnregisterFatBinary(mods);
			mods = register_all(&w2);
		}
		OK(launch(&stub_noargs, 1, 1, NULL, s));
		struct big bg;
		for (int i = 0; i < 33; i++)
			bg.v[i] = i;
		bg.v[32] = (int)(step % 4);
		void *big_args[] = { &one, &bg, &dp };
		OK(launch(&stub_bigarg, 1, 1, big_args, s));
		void *scale_args[] = { &y, &n };
		if (spt) {
			/* On stream 0 of the _spt form, the per-thread stream (never held). */
			OK(hipStreamSynchronize(s));
			OK(launch(&stub_scale, 1, 1, scale_args, NULL));
			OK(hipStreamSynchronize(hipStreamPerThread));
		} else {
			OK(launch(&stub_scale, 1, 1, scale_args, s));
		}
		int rc = 0;
		if (step % 10 == 0) {
			rc = (int)launch(&stub_nobody, 1, 1, NULL, s);
			if (rc != (int)hipGetLastError())
				return 3;
		}
		OK(hipStreamSynchronize(s));
		int iv;
		double dv;
		OK(hipMemcpy(ys, y, sizeof(ys), hipMemcpyDeviceToHost));
		OK(hipMemcpy(&iv, ip, sizeof(iv), hipMemcpyDeviceToHost));
		OK(hipMemcpy(&dv, dp, sizeof(dv), hipMemcpyDeviceToHost));
		if (f && (fwrite(ys, sizeof(ys), 1, f) != 1 || fwrite(&iv, sizeof(iv), 1, f) != 1 ||
			  fwrite(&dv, sizeof(dv), 1, f) != 1 || fwrite(&rc, sizeof(rc), 1, f) != 1))
			return 1;
	}
	OK(hipStreamDestroy(s));
	OK(hipFree(x));
	OK(hipFree(y));
	OK(hipFree(ip));
	OK(hipFree(dp));
	__hipUnregisterFatBinary(mods);
	free(b);
	printf("launches %ld\n", nlaunch);
	if (f && fclose(f))
		return 1;
	return 0;
}
