/*
 * Every entry point the simulator exports, once: the name the CUDA
 * runtime asks cuGetProcAddress for (no version suffix), the lowest
 * cudaVersion that gets this implementation, the versioned symbol, and its
 * per-thread-default-stream variant (the same symbol when none exists).
 * A name appears again only for an older ABI version of it.
 */
#ifndef GS_CUDA_SYMS_H
#define GS_CUDA_SYMS_H

#define GS_CU_SYMS(X) \
	X(cuInit, 2000, cuInit, cuInit) \
	X(cuDriverGetVersion, 2020, cuDriverGetVersion, cuDriverGetVersion) \
	X(cuGetErrorName, 6000, cuGetErrorName, cuGetErrorName) \
	X(cuGetErrorString, 6000, cuGetErrorString, cuGetErrorString) \
	X(cuGetProcAddress, 11030, cuGetProcAddress_v1, cuGetProcAddress_v1) \
	X(cuGetProcAddress, 12000, cuGetProcAddress_v2, cuGetProcAddress_v2) \
	X(cuDeviceGet, 2000, cuDeviceGet, cuDeviceGet) \
	X(cuDeviceGetCount, 2000, cuDeviceGetCount, cuDeviceGetCount) \
	X(cuDeviceGetName, 2000, cuDeviceGetName, cuDeviceGetName) \
	X(cuDeviceGetAttribute, 2000, cuDeviceGetAttribute, cuDeviceGetAttribute) \
	X(cuDeviceTotalMem, 3020, cuDeviceTotalMem_v2, cuDeviceTotalMem_v2) \
	X(cuDevicePrimaryCtxRetain, 7000, cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain) \
	X(cuDevicePrimaryCtxRelease, 11000, cuDevicePrimaryCtxRelease_v2, cuDevicePrimaryCtxRelease_v2) \
	X(cuDevicePrimaryCtxGetState, 7000, cuDevicePrimaryCtxGetState, cuDevicePrimaryCtxGetState) \
	X(cuDevicePrimaryCtxSetFlags, 11000, cuDevicePrimaryCtxSetFlags_v2, cuDevicePrimaryCtxSetFlags_v2) \
	X(cuCtxCreate, 3020, cuCtxCreate_v2, cuCtxCreate_v2) \
	X(cuCtxCreate, 12050, cuCtxCreate_v4, cuCtxCreate_v4) \
	X(cuCtxDestroy, 4000, cuCtxDestroy_v2, cuCtxDestroy_v2) \
	X(cuCtxSetCurrent, 4000, cuCtxSetCurrent, cuCtxSetCurrent) \
	X(cuCtxGetCurrent, 4000, cuCtxGetCurrent, cuCtxGetCurrent) \
	X(cuCtxPushCurrent, 4000, cuCtxPushCurrent_v2, cuCtxPushCurrent_v2) \
	X(cuCtxPopCurrent, 4000, cuCtxPopCurrent_v2, cuCtxPopCurrent_v2) \
	X(cuCtxSynchronize, 2000, cuCtxSynchronize, cuCtxSynchronize) \
	X(cuCtxSynchronize, 13000, cuCtxSynchronize_v2, cuCtxSynchronize_v2) \
	X(cuCtxGetDevice, 2000, cuCtxGetDevice, cuCtxGetDevice) \
	X(cuCtxGetDevice, 13000, cuCtxGetDevice_v2, cuCtxGetDevice_v2) \
	X(cuCtxGetFlags, 7000, cuCtxGetFlags, cuCtxGetFlags) \
	X(cuCtxGetApiVersion, 3020, cuCtxGetApiVersion, cuCtxGetApiVersion) \
	X(cuStreamCreate, 2000, cuStreamCreate, cuStreamCreate) \
	X(cuStreamCreateWithPriority, 5050, cuStreamCreateWithPriority, cuStreamCreateWithPriority) \
	X(cuStreamDestroy, 4000, cuStreamDestroy_v2, cuStreamDestroy_v2) \
	X(cuStreamSynchronize, 2000, cuStreamSynchronize, cuStreamSynchronize_ptsz) \
	X(cuStreamQuery, 2000, cuStreamQuery, cuStreamQuery_ptsz) \
	X(cuStreamGetFlags, 5050, cuStreamGetFlags, cuStreamGetFlags_ptsz) \
	X(cuStreamGetPriority, 5050, cuStreamGetPriority, cuStreamGetPriority_ptsz) \
	X(cuStreamGetCtx, 9020, cuStreamGetCtx, cuStreamGetCtx_ptsz) \
	X(cuStreamWaitEvent, 3020, cuStreamWaitEvent, cuStreamWaitEvent_ptsz) \
	X(cuStreamAddCallback, 5000, cuStreamAddCallback, cuStreamAddCallback_ptsz) \
	X(cuLaunchHostFunc, 10000, cuLaunchHostFunc, cuLaunchHostFunc_ptsz) \
	X(cuStreamBeginCapture, 10010, cuStreamBeginCapture_v2, cuStreamBeginCapture_v2_ptsz) \
	X(cuStreamEndCapture, 10000, cuStreamEndCapture, cuStreamEndCapture_ptsz) \
	X(cuStreamIsCapturing, 10000, cuStreamIsCapturing, cuStreamIsCapturing_ptsz) \
	X(cuStreamGetCaptureInfo, 11030, cuStreamGetCaptureInfo_v2, cuStreamGetCaptureInfo_v2_ptsz) \
	X(cuStreamGetCaptureInfo, 12030, cuStreamGetCaptureInfo_v3, cuStreamGetCaptureInfo_v3_ptsz) \
	X(cuEventCreate, 2000, cuEventCreate, cuEventCreate) \
	X(cuEventDestroy, 4000, cuEventDestroy_v2, cuEventDestroy_v2) \
	X(cuEventRecord, 2000, cuEventRecord, cuEventRecord_ptsz) \
	X(cuEventRecordWithFlags, 11010, cuEventRecordWithFlags, cuEventRecordWithFlags_ptsz) \
	X(cuEventQuery, 2000, cuEventQuery, cuEventQuery) \
	X(cuEventSynchronize, 2000, cuEventSynchronize, cuEventSynchronize) \
	X(cuEventElapsedTime, 2000, cuEventElapsedTime_v1, cuEventElapsedTime_v1) \
	X(cuEventElapsedTime, 12080, cuEventElapsedTime_v2, cuEventElapsedTime_v2) \
	X(cuMemAlloc, 3020, cuMemAlloc_v2, cuMemAlloc_v2) \
	X(cuMemFree, 3020, cuMemFree_v2, cuMemFree_v2) \
	X(cuMemAllocAsync, 11020, cuMemAllocAsync, cuMemAllocAsync_ptsz) \
	X(cuMemFreeAsync, 11020, cuMemFreeAsync, cuMemFreeAsync_ptsz) \
	X(cuMemAllocHost, 3020, cuMemAllocHost_v2, cuMemAllocHost_v2) \
	X(cuMemHostAlloc, 2020, cuMemHostAlloc, cuMemHostAlloc) \
	X(cuMemFreeHost, 2000, cuMemFreeHost, cuMemFreeHost) \
	X(cuMemHostRegister, 6050, cuMemHostRegister_v2, cuMemHostRegister_v2) \
	X(cuMemHostUnregister, 4000, cuMemHostUnregister, cuMemHostUnregister) \
	X(cuMemHostGetFlags, 2030, cuMemHostGetFlags, cuMemHostGetFlags) \
	X(cuMemHostGetDevicePointer, 3020, cuMemHostGetDevicePointer_v2, cuMemHostGetDevicePointer_v2) \
	X(cuMemGetInfo, 3020, cuMemGetInfo_v2, cuMemGetInfo_v2) \
	X(cuMemGetAddressRange, 3020, cuMemGetAddressRange_v2, cuMemGetAddressRange_v2) \
	X(cuPointerGetAttribute, 4000, cuPointerGetAttribute, cuPointerGetAttribute) \
	X(cuMemcpy, 4000, cuMemcpy, cuMemcpy_ptds) \
	X(cuMemcpyAsync, 4000, cuMemcpyAsync, cuMemcpyAsync_ptsz) \
	X(cuMemcpyHtoD, 3020, cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds) \
	X(cuMemcpyDtoH, 3020, cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds) \
	X(cuMemcpyDtoD, 3020, cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_ptds) \
	X(cuMemcpyHtoDAsync, 3020, cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz) \
	X(cuMemcpyDtoHAsync, 3020, cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz) \
	X(cuMemcpyDtoDAsync, 3020, cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_ptsz) \
	X(cuMemsetD8, 3020, cuMemsetD8_v2, cuMemsetD8_v2_ptds) \
	X(cuMemsetD16, 3020, cuMemsetD16_v2, cuMemsetD16_v2_ptds) \
	X(cuMemsetD32, 3020, cuMemsetD32_v2, cuMemsetD32_v2_ptds) \
	X(cuMemsetD2D8, 3020, cuMemsetD2D8_v2, cuMemsetD2D8_v2_ptds) \
	X(cuMemsetD2D16, 3020, cuMemsetD2D16_v2, cuMemsetD2D16_v2_ptds) \
	X(cuMemsetD2D32, 3020, cuMemsetD2D32_v2, cuMemsetD2D32_v2_ptds) \
	X(cuMemsetD8Async, 3020, cuMemsetD8Async, cuMemsetD8Async_ptsz) \
	X(cuMemsetD16Async, 3020, cuMemsetD16Async, cuMemsetD16Async_ptsz) \
	X(cuMemsetD32Async, 3020, cuMemsetD32Async, cuMemsetD32Async_ptsz) \
	X(cuMemsetD2D8Async, 3020, cuMemsetD2D8Async, cuMemsetD2D8Async_ptsz) \
	X(cuMemsetD2D16Async, 3020, cuMemsetD2D16Async, cuMemsetD2D16Async_ptsz) \
	X(cuMemsetD2D32Async, 3020, cuMemsetD2D32Async, cuMemsetD2D32Async_ptsz) \
	X(cuModuleLoad, 2000, cuModuleLoad, cuModuleLoad) \
	X(cuModuleLoadData, 2000, cuModuleLoadData, cuModuleLoadData) \
	X(cuModuleLoadDataEx, 2010, cuModuleLoadDataEx, cuModuleLoadDataEx) \
	X(cuModuleGetFunction, 2000, cuModuleGetFunction, cuModuleGetFunction) \
	X(cuModuleUnload, 2000, cuModuleUnload, cuModuleUnload) \
	X(cuLibraryLoadFromFile, 12000, cuLibraryLoadFromFile, cuLibraryLoadFromFile) \
	X(cuLibraryLoadData, 12000, cuLibraryLoadData, cuLibraryLoadData) \
	X(cuLibraryUnload, 12000, cuLibraryUnload, cuLibraryUnload) \
	X(cuLibraryGetKernel, 12000, cuLibraryGetKernel, cuLibraryGetKernel) \
	X(cuLibraryGetKernelCount, 12040, cuLibraryGetKernelCount, cuLibraryGetKernelCount) \
	X(cuKernelGetFunction, 12000, cuKernelGetFunction, cuKernelGetFunction) \
	X(cuKernelGetParamInfo, 12040, cuKernelGetParamInfo, cuKernelGetParamInfo) \
	X(cuKernelGetName, 12030, cuKernelGetName, cuKernelGetName) \
	X(cuFuncGetParamInfo, 12040, cuFuncGetParamInfo, cuFuncGetParamInfo) \
	X(cuFuncGetName, 12030, cuFuncGetName, cuFuncGetName) \
	X(cuFuncGetAttribute, 2020, cuFuncGetAttribute, cuFuncGetAttribute) \
	X(cuFuncSetAttribute, 9000, cuFuncSetAttribute, cuFuncSetAttribute) \
	X(cuFuncSetCacheConfig, 3000, cuFuncSetCacheConfig, cuFuncSetCacheConfig) \
	X(cuLaunchKernel, 4000, cuLaunchKernel, cuLaunchKernel_ptsz) \
	X(cuLaunchKernelEx, 11060, cuLaunchKernelEx, cuLaunchKernelEx_ptsz) \
	X(cuLaunchCooperativeKernel, 9000, cuLaunchCooperativeKernel, cuLaunchCooperativeKernel_ptsz) \
	X(cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050, cuOccupancyMaxActiveBlocksPerMultiprocessor, cuOccupancyMaxActiveBlocksPerMultiprocessor) \
	X(cuGraphCreate, 10000, cuGraphCreate, cuGraphCreate) \
	X(cuGraphDestroy, 10000, cuGraphDestroy, cuGraphDestroy) \
	X(cuGraphAddKernelNode, 10000, cuGraphAddKernelNode_v1, cuGraphAddKernelNode_v1) \
	X(cuGraphAddKernelNode, 12000, cuGraphAddKernelNode_v2, cuGraphAddKernelNode_v2) \
	X(cuGraphAddMemcpyNode, 10000, cuGraphAddMemcpyNode, cuGraphAddMemcpyNode) \
	X(cuGraphAddMemsetNode, 10000, cuGraphAddMemsetNode, cuGraphAddMemsetNode) \
	X(cuGraphAddEmptyNode, 10000, cuGraphAddEmptyNode, cuGraphAddEmptyNode) \
	X(cuGraphAddHostNode, 10000, cuGraphAddHostNode, cuGraphAddHostNode) \
	X(cuGraphAddDependencies, 10000, cuGraphAddDependencies_v1, cuGraphAddDependencies_v1) \
	X(cuGraphAddDependencies, 12030, cuGraphAddDependencies_v2, cuGraphAddDependencies_v2) \
	X(cuGraphKernelNodeSetAttribute, 11000, cuGraphKernelNodeSetAttribute, cuGraphKernelNodeSetAttribute) \
	X(cuGraphKernelNodeGetAttribute, 11000, cuGraphKernelNodeGetAttribute, cuGraphKernelNodeGetAttribute) \
	X(cuGraphNodeSetEnabled, 11060, cuGraphNodeSetEnabled, cuGraphNodeSetEnabled) \
	X(cuGraphGetNodes, 10000, cuGraphGetNodes, cuGraphGetNodes) \
	X(cuGraphNodeGetType, 10000, cuGraphNodeGetType, cuGraphNodeGetType) \
	X(cuGraphInstantiateWithFlags, 11040, cuGraphInstantiateWithFlags, cuGraphInstantiateWithFlags) \
	X(cuGraphInstantiate, 12000, cuGraphInstantiateWithFlags, cuGraphInstantiateWithFlags) \
	X(cuGraphInstantiateWithParams, 12000, cuGraphInstantiateWithParams, cuGraphInstantiateWithParams_ptsz) \
	X(cuGraphLaunch, 10000, cuGraphLaunch, cuGraphLaunch_ptsz) \
	X(cuGraphUpload, 11010, cuGraphUpload, cuGraphUpload_ptsz) \
	X(cuGraphExecDestroy, 10000, cuGraphExecDestroy, cuGraphExecDestroy) \
	X(cuGraphExecKernelNodeSetParams, 10010, cuGraphExecKernelNodeSetParams_v1, cuGraphExecKernelNodeSetParams_v1) \
	X(cuGraphExecKernelNodeSetParams, 12000, cuGraphExecKernelNodeSetParams_v2, cuGraphExecKernelNodeSetParams_v2) \
	X(cuGraphExecMemcpyNodeSetParams, 10020, cuGraphExecMemcpyNodeSetParams, cuGraphExecMemcpyNodeSetParams) \
	X(cuGraphExecMemsetNodeSetParams, 10020, cuGraphExecMemsetNodeSetParams, cuGraphExecMemsetNodeSetParams) \
	X(cuGraphExecHostNodeSetParams, 10020, cuGraphExecHostNodeSetParams, cuGraphExecHostNodeSetParams) \
	X(cuGraphExecUpdate, 12000, cuGraphExecUpdate_v2, cuGraphExecUpdate_v2)

#endif /* GS_CUDA_SYMS_H */
