/*
 * Internal header of the simulator's CUDA driver front (libcuda.so.1).
 * Built against the real cuda.h: a function written under its cuda.h name
 * gets the versioned symbol the real driver exports (cuMemAlloc ->
 * cuMemAlloc_v2).  The per-thread-default-stream variants (_ptsz/_ptds) are
 * only declared by cuda.h in per-thread mode, so they are declared here;
 * each is a thin export over the same static implementation as its legacy
 * twin, with a flag saying what stream 0 means.
 */
#ifndef GS_CUDA_FRONT_H
#define GS_CUDA_FRONT_H

#include <cuda.h>

#include "sim_front.h"

/* Where stream handle 0 goes: the legacy stream, or the calling thread's
 * per-thread default stream (the _ptsz/_ptds exports). */
typedef enum { GS_CU_LEGACY = 0, GS_CU_PTDS = 1 } gs_cu_dflt_t;

/* An export and its _ptsz (streams) or _ptds (synchronous copies, memsets) twin. */
#define GS_CU_PAIR(ret, name, params, impl) \
	GS_SIM_PAIR(ret, name, _ptsz, params, impl, GS_CU_LEGACY, GS_CU_PTDS)
#define GS_CU_PAIR_SZ GS_CU_PAIR
#define GS_CU_PAIR_DS(ret, name, params, impl) \
	GS_SIM_PAIR(ret, name, _ptds, params, impl, GS_CU_LEGACY, GS_CU_PTDS)

CUresult gs_cu_err(gs_sim_err_t e);
bool gs_cu_initialized(void);
/* The calling thread's current context, NULL if none. */
gs_sim_ctx_t *gs_cu_ctx(void);
/* Resolve a stream handle (0, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD or a
 * created stream) against the current context. */
CUresult gs_cu_stream(CUstream h, gs_cu_dflt_t d, gs_sim_stream_t **out);
/* gs_cu_stream for a call that writes through `out`: CUDA_ERROR_INVALID_VALUE when it is NULL. */
CUresult gs_cu_stream_out(CUstream h, gs_cu_dflt_t d, const void *out, gs_sim_stream_t **s);
/* The handle an application sees for s (callbacks receive it). */
CUstream gs_cu_stream_handle(gs_sim_stream_t *s);
/* Function behind a CUfunction or a CUkernel cast to CUfunction. */
gs_sim_func_t *gs_cu_func(CUfunction f);
/* Apply one launch attribute to a kernel's dimensions (launch: a launch,
 * else a graph node); the driver's answer for one it refuses. */
CUresult gs_cu_kernel_attr(gs_sim_dim_t *dim, CUlaunchAttributeID id, const CUlaunchAttributeValue *v,
			   bool launch);
/* Build the kernel work item of a launch (validates dims and params). */
CUresult gs_cu_kernel_work(gs_sim_work_t *w, gs_sim_func_t *fn, const unsigned grid[3],
			   const unsigned block[3], unsigned shmem, void **params, void **extra);
/* The simulated device's multiprocessors (its attribute, and the cooperative launch limit). */
#define GS_CU_SIM_SMS 132
/* Translate a CUDA_MEMCPY3D into a copy work item. */
CUresult gs_cu_copy3d(gs_sim_work_t *w, const CUDA_MEMCPY3D *p);
CUresult gs_cu_memset_work(gs_sim_work_t *w, CUdeviceptr dst, size_t pitch, unsigned value,
			   unsigned elsize, size_t width, size_t height);

#define GS_CU_CHECK_INIT()                                  \
	do {                                                \
		if (!gs_cu_initialized())                   \
			return CUDA_ERROR_NOT_INITIALIZED;  \
	} while (0)

/* ---- exports cuda.h declares only in other modes ---- */
CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);
CUresult CUDAAPI cuGetProcAddress_v1(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
	__asm__("cuGetProcAddress");
CUresult CUDAAPI cuGraphAddKernelNode_v1(CUgraphNode *phGraphNode, CUgraph hGraph,
	const CUgraphNode *dependencies, size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)
	__asm__("cuGraphAddKernelNode");
CUresult CUDAAPI cuGraphExecKernelNodeSetParams_v1(CUgraphExec hGraphExec, CUgraphNode hNode,
	const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams) __asm__("cuGraphExecKernelNodeSetParams");
CUresult CUDAAPI cuGraphAddDependencies_v1(CUgraph hGraph, const CUgraphNode *from,
	const CUgraphNode *to, size_t numDependencies) __asm__("cuGraphAddDependencies");
CUresult CUDAAPI cuEventElapsedTime_v1(float *pMilliseconds, CUevent hStart, CUevent hEnd)
	__asm__("cuEventElapsedTime");
CUresult CUDAAPI cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
	cuuint64_t *id_out, CUgraph *graph_out, const CUgraphNode **dependencies_out, size_t *numDependencies_out);
CUresult CUDAAPI cuStreamGetCaptureInfo_v2_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
	cuuint64_t *id_out, CUgraph *graph_out, const CUgraphNode **dependencies_out, size_t *numDependencies_out);

CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream hStream);
CUresult CUDAAPI cuStreamQuery_ptsz(CUstream hStream);
CUresult CUDAAPI cuStreamGetFlags_ptsz(CUstream hStream, unsigned int *flags);
CUresult CUDAAPI cuStreamGetPriority_ptsz(CUstream hStream, int *priority);
CUresult CUDAAPI cuStreamGetCtx_ptsz(CUstream hStream, CUcontext *pctx);
CUresult CUDAAPI cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags);
CUresult CUDAAPI cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback, void *userData, unsigned int flags);
CUresult CUDAAPI cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData);
CUresult CUDAAPI cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode);
CUresult CUDAAPI cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph);
CUresult CUDAAPI cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus);
CUresult CUDAAPI cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
	cuuint64_t *id_out, CUgraph *graph_out, const CUgraphNode **dependencies_out,
	const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out);
CUresult CUDAAPI cuEventRecord_ptsz(CUevent hEvent, CUstream hStream);
CUresult CUDAAPI cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream, unsigned int flags);
CUresult CUDAAPI cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount);
CUresult CUDAAPI cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream);
CUresult CUDAAPI cuMemcpyHtoD_v2_ptds(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount);
CUresult CUDAAPI cuMemcpyDtoH_v2_ptds(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount);
CUresult CUDAAPI cuMemcpyDtoD_v2_ptds(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount);
CUresult CUDAAPI cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream);
CUresult CUDAAPI cuMemcpyDtoHAsync_v2_ptsz(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream);
CUresult CUDAAPI cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream);
CUresult CUDAAPI cuMemsetD8_v2_ptds(CUdeviceptr dstDevice, unsigned char uc, size_t N);
CUresult CUDAAPI cuMemsetD16_v2_ptds(CUdeviceptr dstDevice, unsigned short us, size_t N);
CUresult CUDAAPI cuMemsetD32_v2_ptds(CUdeviceptr dstDevice, unsigned int ui, size_t N);
CUresult CUDAAPI cuMemsetD2D8_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height);
CUresult CUDAAPI cuMemsetD2D16_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height);
CUresult CUDAAPI cuMemsetD2D32_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height);
CUresult CUDAAPI cuMemsetD8Async_ptsz(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream);
CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream);
CUresult CUDAAPI cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream);
CUresult CUDAAPI cuMemsetD16Async_ptsz(CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream);
CUresult CUDAAPI cuMemsetD32Async_ptsz(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream);
CUresult CUDAAPI cuMemsetD2D8Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height, CUstream hStream);
CUresult CUDAAPI cuMemsetD2D16Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height, CUstream hStream);
CUresult CUDAAPI cuMemsetD2D32Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height, CUstream hStream);
CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
	unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes,
	CUstream hStream, void **kernelParams, void **extra);
CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra);
CUresult CUDAAPI cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
						unsigned int gridDimZ, unsigned int blockDimX,
						unsigned int blockDimY, unsigned int blockDimZ,
						unsigned int sharedMemBytes, CUstream hStream,
						void **kernelParams);
CUresult CUDAAPI cuGraphInstantiateWithParams_ptsz(CUgraphExec *phGraphExec, CUgraph hGraph,
	CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams);
CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream);
CUresult CUDAAPI cuGraphUpload_ptsz(CUgraphExec hGraphExec, CUstream hStream);

/* Marker a test can dlsym to make sure it runs on the simulator. */
int gs_sim_is_simulator(void);

#endif /* GS_CUDA_FRONT_H */
