/*
 * What the device-update probes (probe.c, setcost.c, updcost.c) share: a driver call
 * checked (CK: the failing call and the driver's name for its error, then
 * exit), a monotonic clock in ns, a comparison of doubles for qsort, a
 * kernel node's parameters on one block, a node made device-updatable
 * (its device handle), and the start: device 0's primary
 * context current and a non-blocking stream on it.  PROBE_NAME prefixes the message.
 */
#ifndef GS_PROBE_UTIL_H
#define GS_PROBE_UTIL_H

#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(x)                                                                                \
	do {                                                                                 \
		CUresult st_ = (x);                                                          \
		if (st_ != CUDA_SUCCESS) {                                                   \
			const char *s_ = "?";                                                \
			cuGetErrorName(st_, &s_);                                            \
			fprintf(stderr, "%s: %s:%d %s -> %s\n", PROBE_NAME, __FILE__, __LINE__, \
				#x, s_);                                                     \
			exit(1);                                                             \
		}                                                                            \
	} while (0)

static inline double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static inline int cmpd(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

/* Kernel node parameters: f on one block of bx threads, kernelParams kp. */
static inline CUDA_KERNEL_NODE_PARAMS knp(CUfunction f, unsigned bx, void **kp)
{
	CUDA_KERNEL_NODE_PARAMS k;
	memset(&k, 0, sizeof(k));
	k.func = f;
	k.gridDimX = k.gridDimY = k.gridDimZ = 1;
	k.blockDimX = bx;
	k.blockDimY = k.blockDimZ = 1;
	k.kernelParams = kp;
	return k;
}

/* Node n made device-updatable: its device handle (none: the probe cannot go on). */
static inline unsigned long long probe_devnode(CUgraphNode n)
{
	CUlaunchAttributeValue v;
	memset(&v, 0, sizeof(v));
	v.deviceUpdatableKernelNode.deviceUpdatable = 1;
	CK(cuGraphKernelNodeSetAttribute(n, CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE, &v));
	memset(&v, 0, sizeof(v));
	CK(cuGraphKernelNodeGetAttribute(n, CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE, &v));
	unsigned long long h = (unsigned long long)(uintptr_t)v.deviceUpdatableKernelNode.devNode;
	if (!h) {
		fprintf(stderr, "%s: no device node handle\n", PROBE_NAME);
		exit(1);
	}
	return h;
}

static inline CUstream probe_start(void)
{
	CUdevice dev;
	CUcontext ctx;
	CUstream s;
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	return s;
}

#endif /* GS_PROBE_UTIL_H */
