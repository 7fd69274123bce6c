/*
 * Run under LD_PRELOAD=libgraphshim.so with the fake libcuda.so.1 first on
 * LD_LIBRARY_PATH (test-cu-preload).  Does what the CUDA runtime does --
 * dlopen libcuda, dlsym cuGetProcAddress_v2, fetch entry points through it,
 * default and per-thread -- and checks that each is graphshim's wrapper,
 * that dlsym(RTLD_NEXT) still resolves relative to the caller, and that
 * every launch reaches the driver exactly once and in order, eagerly or
 * through a graph.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <cuda.h>

static int failures;
#define CHECK(c, ...)                                                       \
	do {                                                                \
		if (!(c)) {                                                 \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);                       \
			fputc('\n', stderr);                                \
			failures++;                                         \
		}                                                           \
	} while (0)

static const char *lib_of(void *p)
{
	Dl_info di;
	return p && dladdr(p, &di) && di.dli_fname ? di.dli_fname : "?";
}

typedef CUresult (*gpa_t)(const char *, void **, int, cuuint64_t,
			  CUdriverProcAddressQueryResult *);
typedef CUresult (*launch_t)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
			     unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*sync_t)(void);

int main(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	CHECK(h, "dlopen libcuda.so.1: %s", dlerror());
	if (!h)
		return 1;
	CHECK(strstr(lib_of(dlsym(h, "fake_log_count")), "libcuda"),
	      "a non-cu name is the library's own: %s", lib_of(dlsym(h, "fake_log_count")));

	gpa_t gpa = (gpa_t)dlsym(h, "cuGetProcAddress_v2");
	CHECK(strstr(lib_of((void *)gpa), "graphshim"), "dlsym gave %s", lib_of((void *)gpa));

	void *p = NULL, *ppt = NULL, *pself = NULL, *psync = NULL;
	CUdriverProcAddressQueryResult st;
	CHECK(gpa("cuLaunchKernel", &p, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &st) == 0, "gpa");
	CHECK(gpa("cuLaunchKernel", &ppt, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
		  &st) == 0, "gpa ptsz");
	CHECK(gpa("cuGetProcAddress", &pself, 13000, 0, &st) == 0, "gpa self");
	CHECK(gpa("cuCtxSynchronize", &psync, 13000, 0, &st) == 0, "gpa sync");
	CHECK(strstr(lib_of(p), "graphshim"), "cuLaunchKernel from %s", lib_of(p));
	CHECK(strstr(lib_of(ppt), "graphshim"), "cuLaunchKernel_ptsz from %s", lib_of(ppt));
	CHECK(p != ppt, "per-thread and default variants differ");
	CHECK(pself == (void *)gpa, "cuGetProcAddress returns our own wrapper");
	CHECK(strstr(lib_of(psync), "graphshim"), "cuCtxSynchronize from %s", lib_of(psync));

	/* RTLD_NEXT from the program finds the first puts after it, as the
	 * global lookup does (libc's, or a sanitizer runtime's interceptor),
	 * not something after us. */
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	CHECK(libc && dlsym(RTLD_NEXT, "puts") == dlsym(RTLD_DEFAULT, "puts"), "RTLD_NEXT puts");

	/* dlvsym is interposed the same way: a driver name gives the wrapper,
	 * anything else (and RTLD_NEXT) what the C library would give. */
	void *pv = dlvsym(h, "cuLaunchKernel", "FAKECUDA_1");
	CHECK(pv == p, "dlvsym cuLaunchKernel from %s", lib_of(pv));
	CHECK(strstr(lib_of(dlvsym(h, "fake_log_count", "FAKECUDA_1")), "libcuda"),
	      "dlvsym of a non-cu name");
	/* (A versioned lookup skips a sanitizer's unversioned interceptor.) */
	CHECK(libc && dlvsym(RTLD_NEXT, "puts", "GLIBC_2.2.5") == dlvsym(libc, "puts", "GLIBC_2.2.5"),
	      "RTLD_NEXT dlvsym puts");
	CHECK(dlsym(RTLD_DEFAULT, "cuLaunchKernelEx") &&
	      strstr(lib_of(dlsym(RTLD_DEFAULT, "cuLaunchKernelEx")), "graphshim"),
	      "RTLD_DEFAULT finds the wrapper");

	int (*count)(void) = (int (*)(void))dlsym(h, "fake_log_count");
	const int *(*entry)(int) = (const int *(*)(int))dlsym(h, "fake_log_entry");
	launch_t launch = (launch_t)p, launch_pt = (launch_t)ppt;
	sync_t sync = (sync_t)psync;

	/* The per-thread variant reaches the driver's _ptsz entry point. */
	int v = -7;
	void *kp[] = { &v };
	launch_pt((CUfunction)0x100, 1, 1, 1, 32, 1, 1, 0, NULL, kp, NULL);
	sync();
	CHECK(count() == 1 && entry(0)[0] == -7 && entry(0)[1] == 1, "ptsz launch reached");

	/* A repeating step: 8 launches with drifting arguments, then a sync. */
	const int steps = 40, per = 8;
	for (int s = 0; s < steps; s++) {
		for (int k = 0; k < per; k++) {
			v = 1000 + s * per + k;
			launch((CUfunction)0x100, 1, 1, 1, 32, 1, 1, 0, NULL, kp, NULL);
			v = -1; /* the caller reuses its parameter memory */
		}
		sync();
	}
	int n = count(), graphed = 0;
	CHECK(n == 1 + steps * per, "%d kernel runs, want %d", n, 1 + steps * per);
	for (int i = 1; i < n && i <= steps * per; i++) {
		CHECK(entry(i)[0] == 1000 + i - 1, "run %d has %d, want %d", i, entry(i)[0],
		      1000 + i - 1);
		graphed += entry(i)[1] == 2;
	}
	printf("%d launches, %d ran as graph nodes\n", steps * per, graphed);
	return failures ? 1 : 0;
}
