/*
 * nrepeat: launches that never repeat (each launch's kernel, drawn among
 * three of three parameter layouts, its grid and its scalar arguments
 * change on every launch), with a stream synchronize per step.  Under
 * graphshim no sequence can be learned, not even by structure, so the
 * difference from an eager run is the cost of passing launches through.
 * --one-kernel launches k_touch alone: the step's structure then repeats
 * and only the operands (grid, arguments) drift on every launch, which
 * graphshim replays with every node patched (what a framework that moves
 * every buffer every step looks like).  --time also reports launch_ns: the median
 * over steps of the host time to issue a step's launches (before its sync),
 * per launch -- the cost of a launch call, apart from the GPU's time.
 *
 * --direct (CUDA only) measures what a preloaded library adds to a launch
 * call inside one process, where separate processes differ by more than
 * that (the driver's launch cost varied 2.7-4.3 us from one process to
 * the next on an H100 host): every step is issued twice, alternately
 * first, once through cuLaunchKernel as linked (a preloaded library's
 * wrapper) and once through the driver's own entry point (libcuda.so.1's
 * cuLaunchKernel, looked up with glibc's dlsym past any override), each on
 * its own stream.  It reports direct_ns (the driver's path per launch) and
 * added_ns (the median over steps of the difference, per launch); bypass=
 * says whether the two entry points differ (no: nothing is preloaded, and
 * added_ns measures the method's own noise).
 *
 * --legacy issues every launch on the legacy default stream (stream 0)
 * instead of streams of its own, both entry points' with --direct.
 *
 *   nrepeat [--kernels K] [--steps N] [--seed S] [--out FILE] [--time] [--direct]
 *           [--legacy]
 */
#include <string.h>

#include "gs_wl.h"

#ifndef GS_USE_HIP
#include <dlfcn.h>
#endif

#define NR_BLOCK 128
#define NR_MAX_GRID 64

typedef CUresult (*nr_launch_t)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
				unsigned, unsigned, CUstream, void **, void **);

/* The three kernels: k_touch (x, n, v, salt), k_touch_w (.., w), k_touch_d (x, (double)v, n, salt). */
typedef struct nr_fns {
	CUfunction f[3];
} nr_fns_t;

/* A step's launches through `launch` on s; the host time to issue them. */
static uint64_t nr_issue(nr_launch_t launch, const nr_fns_t *fn, CUstream s, CUdeviceptr *x,
			 const unsigned *grid, const float *v, const unsigned char *which,
			 long kernels, int *salt)
{
	uint64_t t0 = gs_wl_now_ns();
	for (long k = 0; k < kernels; k++, (*salt)++) {
		int n = (int)(grid[k] * NR_BLOCK), w = 1;
		float vk = v[k];
		double vd = vk;
		void *p0[] = { x, &n, &vk, salt }, *p1[] = { x, &n, &vk, salt, &w },
		     *p2[] = { x, &vd, &n, salt };
		void **p = which[k] == 0 ? p0 : which[k] == 1 ? p1 : p2;
		GS_CHECK(launch(fn->f[which[k]], grid[k], 1, 1, NR_BLOCK, 1, 1, 0, s, p, NULL));
	}
	return gs_wl_now_ns() - t0;
}

/* The driver's own cuLaunchKernel: glibc's dlsym (a preloaded library may
 * override dlsym, but not dlvsym) on the loaded libcuda.so.1. */
static nr_launch_t nr_driver_launch(void)
{
#ifdef GS_USE_HIP
	return NULL; /* refused at the command line */
#else
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	void *ds = libc ? dlvsym(libc, "dlsym", "GLIBC_2.34") : NULL;
	if (libc && !ds)
		ds = dlvsym(libc, "dlsym", "GLIBC_2.2.5");
	void *(*sym)(void *, const char *) = NULL;
	nr_launch_t f = NULL;
	if (ds)
		memcpy(&sym, &ds, sizeof(sym));
	void *fp = sym && cuda ? sym(cuda, "cuLaunchKernel") : NULL;
	if (!fp) {
		fprintf(stderr, "nrepeat: --direct: cannot find libcuda.so.1's cuLaunchKernel\n");
		exit(2);
	}
	memcpy(&f, &fp, sizeof(f));
	return f;
#endif
}

static int nr_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	long kernels = 256, steps = 1000, seed = 1;
	const char *outp = NULL;
	bool time = false, direct = false, legacy = false, one = false;

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
		else if (strcmp(argv[i], "--direct") == 0)
			direct = true;
		else if (strcmp(argv[i], "--legacy") == 0)
			legacy = true;
		else if (strcmp(argv[i], "--one-kernel") == 0)
			one = true;
		else {
			fprintf(stderr, "usage: nrepeat [--kernels K] [--steps N] [--seed S] "
					"[--out FILE] [--time] [--direct] [--legacy] [--one-kernel]\n");
			return 1;
		}
	}

#ifdef GS_USE_HIP
	if (direct) {
		fprintf(stderr, "nrepeat: --direct is for the CUDA driver only\n");
		return 1;
	}
#endif

	gs_wl_dev_t dev;
	CUmodule mod;
	gs_wl_dev_init(&dev);
	gs_wl_module_load(&mod, "nrepeat");
	nr_fns_t fns = { { gs_wl_function(mod, "k_touch"), gs_wl_function(mod, "k_touch_w"),
			   gs_wl_function(mod, "k_touch_d") } };

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

	CUstream s2 = NULL;
	nr_launch_t linked = cuLaunchKernel, drv = NULL;
	if (direct) {
		drv = nr_driver_launch();
		GS_CHECK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
	}
	unsigned *grid = malloc((size_t)kernels * sizeof(*grid));
	float *v = malloc((size_t)kernels * sizeof(*v));
	unsigned char *which = malloc((size_t)kernels);
	int64_t *diff = malloc((size_t)steps * sizeof(*diff));
	if (!grid || !v || !which || !diff) {
		perror("malloc");
		return 2;
	}

	gs_wl_timer_t tm, issue, dissue;
	gs_wl_timer_init(&tm, (size_t)steps);
	gs_wl_timer_init(&issue, (size_t)steps);
	gs_wl_timer_init(&dissue, (size_t)steps);
	uint64_t t0 = gs_wl_now_ns();
	/* salt counts launches: no two launches ever carry the same bytes. */
	int salt = 0;
	for (long step = 0; step < steps; step++) {
		for (long k = 0; k < kernels; k++) {
			grid[k] = 1 + (unsigned)(gs_wl_rng_next(&rng) % NR_MAX_GRID);
			v[k] = gs_wl_rng_float(&rng, 0.25f);
			which[k] = one ? 0 : (unsigned char)(gs_wl_rng_next(&rng) % 3);
		}
		gs_wl_timer_start(&tm);
		/* ns[0]: through the linked entry point; ns[1]: the driver's own. */
		uint64_t ns[2] = { 0, 0 };
		for (int pass = 0; pass < (direct ? 2 : 1); pass++) {
			int via = direct ? (pass + (int)(step % 2)) % 2 : 0; /* alternately first */
			CUstream on = legacy ? NULL : via ? s2 : s;
			ns[via] = nr_issue(via ? drv : linked, &fns, on, &x, grid, v, which, kernels,
					   &salt);
			GS_CHECK(cuStreamSynchronize(on));
		}
		gs_wl_timer_stop(&tm);
		gs_wl_timer_add(&issue, ns[0]);
		if (direct) {
			gs_wl_timer_add(&dissue, ns[1]);
			diff[step] = (int64_t)ns[0] - (int64_t)ns[1];
		}
	}
	gs_wl_timer_wall(&tm, gs_wl_now_ns() - t0);
	if (time) {
		char label[256];
		int len = snprintf(label, sizeof(label),
				   "nrepeat mode=eager kernels=%ld stream=%s%s launch_ns=%.1f", kernels,
				   legacy ? "legacy" : "own", one ? " one-kernel" : "",
				   gs_wl_timer_median_ns(&issue) / (double)kernels);
		if (direct) {
			qsort(diff, (size_t)steps, sizeof(*diff), nr_cmp_i64);
			double d = steps % 2 ? (double)diff[steps / 2]
					     : (diff[steps / 2 - 1] + diff[steps / 2]) / 2.0;
			snprintf(label + len, sizeof(label) - (size_t)len,
				 " direct_ns=%.1f added_ns=%.1f bypass=%s",
				 gs_wl_timer_median_ns(&dissue) / (double)kernels,
				 d / (double)kernels, drv != linked ? "yes" : "no");
		}
		gs_wl_timer_report(&tm, label);
	}

	gs_wl_out_t out;
	gs_wl_out_open(&out, outp);
	gs_wl_out_device(&out, x, bytes);
	gs_wl_out_close(&out);
	GS_CHECK(cuStreamDestroy(s));
	if (s2)
		GS_CHECK(cuStreamDestroy(s2));
	GS_CHECK(cuMemFree(x));
	GS_CHECK(cuModuleUnload(mod));
	gs_wl_timer_free(&tm);
	gs_wl_timer_free(&issue);
	gs_wl_timer_free(&dissue);
	free(grid);
	free(v);
	free(which);
	free(diff);
	free(h);
	return 0;
}
