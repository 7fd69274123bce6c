/*
 * Internal header of the simulator's HIP runtime front (libamdhip64.so.5),
 * compiled against the real HIP headers of libamdhip64-dev (5.2) over the
 * same vendor-neutral core as the CUDA front (sim_core.h).  One device, its
 * primary context created on first use (the HIP runtime initializes
 * itself; hipInit is optional).  Every exported function returns through
 * GS_HIP_RET, which keeps the per-thread last error that hipGetLastError
 * and hipPeekAtLastError report.
 */
#ifndef GS_HIP_FRONT_H
#define GS_HIP_FRONT_H

#include <hip/hip_runtime_api.h>

#include "sim_front.h"

/* Where stream handle 0 goes: the null (legacy) stream, or the calling
 * thread's per-thread stream (the _spt exports). */
typedef enum { GS_HIP_NULL = 0, GS_HIP_PTDS = 1 } gs_hip_dflt_t;

/* An export and its _spt twin (stream 0 is then the per-thread stream). */
#define GS_HIP_PAIR(name, params, impl) \
	GS_SIM_PAIR(hipError_t, name, _spt, params, impl, GS_HIP_NULL, GS_HIP_PTDS)

hipError_t gs_hip_err(gs_sim_err_t e);
/* Record e as the thread's last error (unless success or hipErrorNotReady)
 * and return it. */
hipError_t gs_hip_ret(hipError_t e);
#define GS_HIP_RET(e) return gs_hip_ret(e)

/* The device's primary context, created on first use; NULL if that fails. */
gs_sim_ctx_t *gs_hip_ctx(void);
/* Resolve a stream handle (0, hipStreamPerThread or a created stream). */
hipError_t gs_hip_stream(hipStream_t h, gs_hip_dflt_t d, gs_sim_stream_t **out);
/* gs_hip_stream for a call that writes through `out`: hipErrorInvalidValue when it is NULL. */
hipError_t gs_hip_stream_out(hipStream_t h, gs_hip_dflt_t d, const void *out, gs_sim_stream_t **s);
/* The handle an application sees for s (callbacks receive it). */
hipStream_t gs_hip_stream_handle(gs_sim_stream_t *s);
/* The function behind a hipFunction_t, NULL if it is not one. */
gs_sim_func_t *gs_hip_func(const void *f);
/* The function a host stub was registered to (hip_fatbin.c), NULL if none. */
gs_sim_func_t *gs_hip_stub_func(const void *stub);
/* The kernel work item of a launch (validates dims and arguments). */
hipError_t gs_hip_kernel_work(gs_sim_work_t *w, gs_sim_func_t *fn, const unsigned grid[3],
			      const unsigned block[3], unsigned shmem, void **params, void **extra);
/* A 1D copy work item, checked against device allocation bounds. */
hipError_t gs_hip_copy_work(gs_sim_work_t *w, void *dst, const void *src, size_t n,
			    hipMemcpyKind kind);
/* A memset work item (elsize 1, 2 or 4). */
hipError_t gs_hip_memset_work(gs_sim_work_t *w, void *dst, size_t pitch, unsigned value,
			      unsigned elsize, size_t width, size_t height);
/* Is the stream capturing (active or invalidated)? */
bool gs_hip_capturing(gs_sim_stream_t *s);

/* Marker a test can dlsym to make sure it runs on the simulator. */
int gs_sim_is_simulator(void);

/*
 * Exports hip_runtime_api.h does not declare in C: the fat-binary
 * registration clang emits calls to, the hip_ext.h launches
 * (C++ only there; 5.2 exports them under their C++ names, defined by
 * aliases in hip_launch.c) and the parameter-layout queries of newer
 * runtimes that this simulator offers so graphshim can graph kernelParams
 * launches (see README).
 */
hipError_t hipExtModuleLaunchKernel(hipFunction_t f, uint32_t globalWorkSizeX,
				    uint32_t globalWorkSizeY, uint32_t globalWorkSizeZ,
				    uint32_t localWorkSizeX, uint32_t localWorkSizeY,
				    uint32_t localWorkSizeZ, size_t sharedMemBytes, hipStream_t hStream,
				    void **kernelParams, void **extra, hipEvent_t startEvent,
				    hipEvent_t stopEvent, uint32_t flags);
hipError_t hipHccModuleLaunchKernel(hipFunction_t f, uint32_t globalWorkSizeX,
				    uint32_t globalWorkSizeY, uint32_t globalWorkSizeZ,
				    uint32_t localWorkSizeX, uint32_t localWorkSizeY,
				    uint32_t localWorkSizeZ, size_t sharedMemBytes, hipStream_t hStream,
				    void **kernelParams, void **extra, hipEvent_t startEvent,
				    hipEvent_t stopEvent);
/* The registration calls clang emits for a program's kernels (hip_fatbin.c). */
void **__hipRegisterFatBinary(const void *data);
void __hipRegisterFunction(void **modules, const void *hostFunction, char *deviceFunction,
			   const char *deviceName, unsigned int threadLimit, void *tid, void *bid,
			   void *blockDim, void *gridDim, int *wSize);
void __hipUnregisterFatBinary(void **modules);
hipError_t hipFuncGetParamInfo(hipFunction_t func, size_t paramIndex, size_t *paramOffset,
			       size_t *paramSize);
hipError_t hipKernelGetParamInfo(hipFunction_t kernel, size_t paramIndex, size_t *paramOffset,
				 size_t *paramSize);

#endif /* GS_HIP_FRONT_H */
