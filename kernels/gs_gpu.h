/*
 * The one place where the workloads meet a vendor API.  Host code is written
 * against the CUDA driver API names (cuLaunchKernel, cuStreamSynchronize...),
 * exactly as an ordinary CUDA driver program is; built with -DGS_USE_HIP the
 * same names map to the HIP module API (hipModuleLaunchKernel...), so a HIP
 * build differs from the CUDA one only here.  Every call goes through
 * GS_CHECK, which prints the call, its file:line and the error name and
 * exits with status 2: a workload that fails must never look like one whose
 * output merely differs.
 */
#ifndef GS_GPU_H
#define GS_GPU_H

#include <stdio.h>
#include <stdlib.h>

#ifdef GS_USE_HIP
#include <hip/hip_runtime_api.h>

typedef hipError_t CUresult;
typedef hipDeviceptr_t CUdeviceptr;
typedef hipModule_t CUmodule;
typedef hipFunction_t CUfunction;
typedef hipStream_t CUstream;
typedef hipEvent_t CUevent;
typedef hipGraph_t CUgraph;
typedef hipGraphExec_t CUgraphExec;
typedef int CUdevice;
typedef hipCtx_t CUcontext;

#define CUDA_SUCCESS hipSuccess
#define CUDA_ERROR_NOT_READY hipErrorNotReady
#define CU_STREAM_DEFAULT hipStreamDefault
#define CU_STREAM_NON_BLOCKING hipStreamNonBlocking
#define CU_EVENT_DISABLE_TIMING hipEventDisableTiming
#define CU_STREAM_CAPTURE_MODE_THREAD_LOCAL hipStreamCaptureModeThreadLocal
/* The module file HIP loads in place of a cubin (code object). */
#define GS_GPU_MODULE_EXT ".hsaco"

#define cuInit hipInit
#define cuDeviceGet hipDeviceGet
#define cuModuleLoad hipModuleLoad
#define cuModuleUnload hipModuleUnload
#define cuModuleGetFunction hipModuleGetFunction
#define cuMemAlloc(p, n) hipMalloc((p), (n))
#define cuMemFree hipFree
#define cuMemAllocAsync(p, n, s) hipMallocAsync((void **)(p), (n), (s))
#define cuMemFreeAsync(p, s) hipFreeAsync((void *)(uintptr_t)(p), (s))
#define CU_MEMHOSTALLOC_DEVICEMAP hipHostMallocMapped
#define cuMemHostAlloc hipHostMalloc
#define cuMemHostGetDevicePointer(d, h, f) hipHostGetDevicePointer((void **)(d), (h), (f))
#define cuMemFreeHost hipHostFree
/* hipMemcpyHtoD takes a non-const source. */
#define cuMemcpyHtoD(d, s, n) hipMemcpyHtoD((d), (void *)(s), (n))
#define cuMemcpyDtoH hipMemcpyDtoH
#define cuMemcpyDtoHAsync hipMemcpyDtoHAsync
#define cuMemcpyHtoDAsync(d, s, n, st) hipMemcpyHtoDAsync((d), (void *)(s), (n), (st))
#define cuMemcpyDtoDAsync hipMemcpyDtoDAsync
#define cuMemsetD32Async hipMemsetD32Async
#define cuStreamCreate hipStreamCreateWithFlags
#define cuStreamDestroy hipStreamDestroy
#define cuStreamSynchronize hipStreamSynchronize
#define cuEventCreate hipEventCreateWithFlags
#define cuEventDestroy hipEventDestroy
#define cuEventRecord hipEventRecord
#define cuEventQuery hipEventQuery
#define cuStreamWaitEvent hipStreamWaitEvent
#define cuLaunchKernel hipModuleLaunchKernel
#define cuStreamBeginCapture hipStreamBeginCapture
#define cuStreamEndCapture hipStreamEndCapture
#define cuGraphInstantiate hipGraphInstantiateWithFlags
#define cuGraphLaunch hipGraphLaunch
#define cuGraphExecDestroy hipGraphExecDestroy
#define cuGraphDestroy hipGraphDestroy
#define cuCtxSynchronize hipDeviceSynchronize

static inline const char *gs_gpu_error_name(CUresult r)
{
	return hipGetErrorName(r);
}

/* HIP keeps a current device per thread rather than a context to push. */
static inline CUresult gs_gpu_context(CUdevice dev, CUcontext *ctx)
{
	*ctx = NULL;
	return hipSetDevice(dev);
}

static inline CUresult gs_gpu_make_current(CUdevice dev, CUcontext ctx)
{
	(void)ctx;
	return hipSetDevice(dev);
}

#else /* CUDA driver API */
#include <cuda.h>

#define GS_GPU_MODULE_EXT ".cubin"

static inline const char *gs_gpu_error_name(CUresult r)
{
	const char *s = NULL;
	if (cuGetErrorName(r, &s) != CUDA_SUCCESS || s == NULL)
		return "unknown error";
	return s;
}

/*
 * The primary context is what the CUDA runtime (and so PyTorch) uses, so a
 * driver program that takes it behaves as most real programs do.
 */
static inline CUresult gs_gpu_context(CUdevice dev, CUcontext *ctx)
{
	CUresult r = cuDevicePrimaryCtxRetain(ctx, dev);
	if (r != CUDA_SUCCESS)
		return r;
	return cuCtxSetCurrent(*ctx);
}

/* Every host thread that calls the driver needs the context current. */
static inline CUresult gs_gpu_make_current(CUdevice dev, CUcontext ctx)
{
	(void)dev;
	return cuCtxSetCurrent(ctx);
}
#endif

/* Check a vendor call; on failure say which call, where and why, exit 2. */
#define GS_CHECK(call)                                                        \
	do {                                                                  \
		CUresult gs_check_r_ = (call);                                \
		if (gs_check_r_ != CUDA_SUCCESS) {                            \
			fprintf(stderr, "%s:%d: %s failed: %s (%d)\n",        \
				__FILE__, __LINE__, #call,                    \
				gs_gpu_error_name(gs_check_r_),               \
				(int)gs_check_r_);                            \
			exit(2);                                              \
		}                                                             \
	} while (0)

#endif /* GS_GPU_H */
