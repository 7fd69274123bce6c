/*
 * Helpers shared by the simulator's test programs (t_*.c): a CHECK macro
 * that reports the failing call and exits 1, and setup of a context plus
 * the test kernel module.
 */
#ifndef GS_SIM_T_COMMON_H
#define GS_SIM_T_COMMON_H

#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef GS_SIM_TESTKERN
#define GS_SIM_TESTKERN "tests/sim/testkern.cubin"
#endif

#define CHECK(call)                                                                 \
	do {                                                                        \
		CUresult r_ = (call);                                               \
		if (r_ != CUDA_SUCCESS) {                                           \
			const char *n_ = NULL;                                      \
			cuGetErrorName(r_, &n_);                                    \
			fprintf(stderr, "FAIL %s:%d: %s -> %s (%d)\n", __FILE__,    \
				__LINE__, #call, n_ ? n_ : "?", (int)r_);           \
			exit(1);                                                    \
		}                                                                   \
	} while (0)

#define EXPECT(cond)                                                                \
	do {                                                                        \
		if (!(cond)) {                                                      \
			fprintf(stderr, "FAIL %s:%d: expected %s\n", __FILE__,      \
				__LINE__, #cond);                                   \
			exit(1);                                                    \
		}                                                                   \
	} while (0)

#define EXPECT_ERR(call, code)                                                      \
	do {                                                                        \
		CUresult r_ = (call);                                               \
		if (r_ != (code)) {                                                 \
			fprintf(stderr, "FAIL %s:%d: %s -> %d, expected %s (%d)\n", \
				__FILE__, __LINE__, #call, (int)r_, #code, (int)(code)); \
			exit(1);                                                    \
		}                                                                   \
	} while (0)

static CUmodule t_mod;

/* cuInit, primary context current, test module loaded.  Fails unless the
 * simulator (not a real driver) was picked up. */
static inline CUcontext t_setup(void)
{
	CUcontext ctx;
	CUdevice dev;
	if (!dlsym(RTLD_DEFAULT, "gs_sim_is_simulator")) {
		fprintf(stderr, "FAIL: libcuda.so.1 is not the simulator\n");
		exit(1);
	}
	CHECK(cuInit(0));
	CHECK(cuDeviceGet(&dev, 0));
	CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CHECK(cuCtxSetCurrent(ctx));
	CHECK(cuModuleLoad(&t_mod, GS_SIM_TESTKERN));
	return ctx;
}

static inline CUfunction t_func(const char *name)
{
	CUfunction f;
	CHECK(cuModuleGetFunction(&f, t_mod, name));
	return f;
}

/* Launch fill(ptr, v, n) with one block. */
static inline CUresult t_fill(CUstream s, CUdeviceptr p, int v, unsigned n)
{
	void *args[] = { &p, &v, &n };
	return cuLaunchKernel(t_func("fill"), 1, 1, 1, 32, 1, 1, 0, s, args, NULL);
}

static inline CUresult t_add(CUstream s, CUdeviceptr p, int v, unsigned n)
{
	void *args[] = { &p, &v, &n };
	return cuLaunchKernel(t_func("add_scalar"), 1, 1, 1, 32, 1, 1, 0, s, args, NULL);
}

static inline int t_read_int(CUdeviceptr p, size_t i)
{
	int v;
	CHECK(cuMemcpyDtoH(&v, p + i * sizeof(int), sizeof(int)));
	return v;
}

#endif /* GS_SIM_T_COMMON_H */
