/*
 * The runner's one meeting point with a vendor API.  fuzz_run.c is written
 * against the CUDA driver API; built with -DFZ_HIP the same names map to
 * the HIP runtime (the simulator's libamdhip64.so.5), as kernels/gs_gpu.h
 * does for the workloads.  Device pointers stay integers (uintptr_t) so the
 * runner's arithmetic is the same in both builds; the macros cast them at
 * each call.  What HIP lacks (CUkernel handles, cuGetProcAddress tables,
 * per-thread entry points, cuLaunchKernelEx, CU_STREAM_LEGACY) the HIP
 * generator never emits (fz_hip, fuzz_gen.c); FZ_HIP guards its code.
 */
#ifndef FUZZ_API_H
#define FUZZ_API_H

#ifndef FZ_HIP
#include <cuda.h>
#define FZ_FLAVOUR_HIP 0
#else
#include <hip/hip_runtime_api.h>
#include <stdint.h>
#define FZ_FLAVOUR_HIP 1

typedef hipError_t CUresult;
typedef uintptr_t CUdeviceptr;
typedef hipModule_t CUmodule;
typedef hipFunction_t CUfunction;
typedef hipStream_t CUstream;
typedef hipEvent_t CUevent;
typedef int CUdevice;
typedef int CUcontext; /* the simulator has no hipCtxCreate: device 0's primary context */
typedef hipHostFn_t CUhostFn;
typedef hipGraph_t CUgraph;
typedef hipGraphExec_t CUgraphExec;

#define CUDA_SUCCESS hipSuccess
#define CUDA_ERROR_NOT_READY hipErrorNotReady
#define CU_STREAM_NON_BLOCKING hipStreamNonBlocking
#define CU_EVENT_DISABLE_TIMING hipEventDisableTiming
#define CU_STREAM_LEGACY ((hipStream_t)0)
#define CU_STREAM_PER_THREAD hipStreamPerThread
#define CU_LAUNCH_PARAM_BUFFER_POINTER HIP_LAUNCH_PARAM_BUFFER_POINTER
#define CU_LAUNCH_PARAM_BUFFER_SIZE HIP_LAUNCH_PARAM_BUFFER_SIZE
#define CU_LAUNCH_PARAM_END HIP_LAUNCH_PARAM_END

#define FZ_D(x) ((hipDeviceptr_t)(uintptr_t)(x))
#define FZ_V(x) ((void *)(uintptr_t)(x))

#define cuInit hipInit
#define cuDeviceGet hipDeviceGet
#define cuCtxCreate(c, params, flags, dev) (*(c) = (dev), hipSetDevice(dev))
#define cuCtxSetCurrent(c) hipSetDevice(c)
#define cuCtxDestroy(c) hipSuccess
#define cuCtxSynchronize hipDeviceSynchronize
#define cuModuleLoad hipModuleLoad
#define cuModuleUnload hipModuleUnload
#define cuModuleGetFunction hipModuleGetFunction
#define cuLaunchKernel hipModuleLaunchKernel
#define cuMemAlloc(p, n) hipMalloc((void **)(p), (n))
#define cuMemFree(d) hipFree(FZ_V(d))
#define cuMemAllocAsync(p, n, h) hipMallocAsync((void **)(p), (n), (h))
#define cuMemFreeAsync(d, h) hipFreeAsync(FZ_V(d), (h))
#define cuMemAllocHost(p, n) hipHostMalloc((p), (n), 0)
#define cuMemFreeHost hipHostFree
#define cuMemcpyHtoDAsync(d, s, n, h) hipMemcpyHtoDAsync(FZ_D(d), (void *)(s), (n), (h))
#define cuMemcpyDtoHAsync(d, s, n, h) hipMemcpyDtoHAsync((d), FZ_D(s), (n), (h))
#define cuMemcpyDtoDAsync(d, s, n, h) hipMemcpyDtoDAsync(FZ_D(d), FZ_D(s), (n), (h))
#define cuMemcpyAsync(d, s, n, h) hipMemcpyAsync(FZ_V(d), FZ_V(s), (n), hipMemcpyDefault, (h))
#define cuMemcpyHtoD(d, s, n) hipMemcpyHtoD(FZ_D(d), (void *)(s), (n))
#define cuMemcpyDtoH(d, s, n) hipMemcpyDtoH((d), FZ_D(s), (n))
#define cuMemcpyDtoD(d, s, n) hipMemcpyDtoD(FZ_D(d), FZ_D(s), (n))
#define cuMemcpy(d, s, n) hipMemcpy(FZ_V(d), FZ_V(s), (n), hipMemcpyDefault)
#define cuMemsetD8(d, v, n) hipMemsetD8(FZ_D(d), (v), (n))
#define cuMemsetD16(d, v, n) hipMemsetD16(FZ_D(d), (v), (n))
#define cuMemsetD32(d, v, n) hipMemsetD32(FZ_D(d), (int)(v), (n))
#define cuMemsetD8Async(d, v, n, h) hipMemsetD8Async(FZ_D(d), (v), (n), (h))
#define cuMemsetD16Async(d, v, n, h) hipMemsetD16Async(FZ_D(d), (v), (n), (h))
#define cuMemsetD32Async(d, v, n, h) hipMemsetD32Async(FZ_D(d), (int)(v), (n), (h))
#define cuLaunchHostFunc hipLaunchHostFunc
#define cuStreamCreate hipStreamCreateWithFlags
#define cuStreamDestroy hipStreamDestroy
#define cuStreamSynchronize hipStreamSynchronize
#define cuStreamQuery hipStreamQuery
#define cuStreamWaitEvent hipStreamWaitEvent
#define cuEventCreate hipEventCreateWithFlags
#define cuEventDestroy hipEventDestroy
#define cuEventRecord hipEventRecord
#define cuEventQuery hipEventQuery
#define cuEventSynchronize hipEventSynchronize
#define CU_STREAM_CAPTURE_MODE_RELAXED hipStreamCaptureModeRelaxed
#define cuStreamBeginCapture hipStreamBeginCapture
#define cuStreamEndCapture hipStreamEndCapture
#define cuGraphInstantiate(x, g, flags) hipGraphInstantiate((x), (g), NULL, NULL, 0)
#define cuGraphLaunch hipGraphLaunch
#define cuGraphExecDestroy hipGraphExecDestroy
#define cuGraphDestroy hipGraphDestroy
#endif

#endif /* FUZZ_API_H */
