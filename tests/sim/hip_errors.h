/*
 * hipError_t names and descriptions for hipGetErrorName/hipGetErrorString,
 * taken once from the hipError_t enum of hip_runtime_api.h (HIP 5.2; the
 * first name of each value, deprecated aliases left out).  Descriptions
 * follow the runtime's for the codes the simulator returns; the others
 * repeat the name.  An X-macro list: GS_HIP_ERR(code, description).
 */
#ifndef GS_HIP_ERRORS_H
#define GS_HIP_ERRORS_H

#define GS_HIP_ERRORS \
	GS_HIP_ERR(hipSuccess, "no error") \
	GS_HIP_ERR(hipErrorInvalidValue, "invalid argument") \
	GS_HIP_ERR(hipErrorOutOfMemory, "out of memory") \
	GS_HIP_ERR(hipErrorNotInitialized, "initialization error") \
	GS_HIP_ERR(hipErrorDeinitialized, "hipErrorDeinitialized") \
	GS_HIP_ERR(hipErrorProfilerDisabled, "hipErrorProfilerDisabled") \
	GS_HIP_ERR(hipErrorProfilerNotInitialized, "hipErrorProfilerNotInitialized") \
	GS_HIP_ERR(hipErrorProfilerAlreadyStarted, "hipErrorProfilerAlreadyStarted") \
	GS_HIP_ERR(hipErrorProfilerAlreadyStopped, "hipErrorProfilerAlreadyStopped") \
	GS_HIP_ERR(hipErrorInvalidConfiguration, "invalid configuration argument") \
	GS_HIP_ERR(hipErrorInvalidPitchValue, "hipErrorInvalidPitchValue") \
	GS_HIP_ERR(hipErrorInvalidSymbol, "hipErrorInvalidSymbol") \
	GS_HIP_ERR(hipErrorInvalidDevicePointer, "invalid device pointer") \
	GS_HIP_ERR(hipErrorInvalidMemcpyDirection, "invalid copy direction for memcpy") \
	GS_HIP_ERR(hipErrorInsufficientDriver, "hipErrorInsufficientDriver") \
	GS_HIP_ERR(hipErrorMissingConfiguration, "hipErrorMissingConfiguration") \
	GS_HIP_ERR(hipErrorPriorLaunchFailure, "hipErrorPriorLaunchFailure") \
	GS_HIP_ERR(hipErrorInvalidDeviceFunction, "invalid device function") \
	GS_HIP_ERR(hipErrorNoDevice, "no ROCm-capable device is detected") \
	GS_HIP_ERR(hipErrorInvalidDevice, "invalid device ordinal") \
	GS_HIP_ERR(hipErrorInvalidImage, "device kernel image is invalid") \
	GS_HIP_ERR(hipErrorInvalidContext, "invalid device context") \
	GS_HIP_ERR(hipErrorContextAlreadyCurrent, "hipErrorContextAlreadyCurrent") \
	GS_HIP_ERR(hipErrorMapFailed, "hipErrorMapFailed") \
	GS_HIP_ERR(hipErrorUnmapFailed, "hipErrorUnmapFailed") \
	GS_HIP_ERR(hipErrorArrayIsMapped, "hipErrorArrayIsMapped") \
	GS_HIP_ERR(hipErrorAlreadyMapped, "hipErrorAlreadyMapped") \
	GS_HIP_ERR(hipErrorNoBinaryForGpu, "hipErrorNoBinaryForGpu") \
	GS_HIP_ERR(hipErrorAlreadyAcquired, "hipErrorAlreadyAcquired") \
	GS_HIP_ERR(hipErrorNotMapped, "hipErrorNotMapped") \
	GS_HIP_ERR(hipErrorNotMappedAsArray, "hipErrorNotMappedAsArray") \
	GS_HIP_ERR(hipErrorNotMappedAsPointer, "hipErrorNotMappedAsPointer") \
	GS_HIP_ERR(hipErrorECCNotCorrectable, "hipErrorECCNotCorrectable") \
	GS_HIP_ERR(hipErrorUnsupportedLimit, "hipErrorUnsupportedLimit") \
	GS_HIP_ERR(hipErrorContextAlreadyInUse, "hipErrorContextAlreadyInUse") \
	GS_HIP_ERR(hipErrorPeerAccessUnsupported, "hipErrorPeerAccessUnsupported") \
	GS_HIP_ERR(hipErrorInvalidKernelFile, "hipErrorInvalidKernelFile") \
	GS_HIP_ERR(hipErrorInvalidGraphicsContext, "hipErrorInvalidGraphicsContext") \
	GS_HIP_ERR(hipErrorInvalidSource, "hipErrorInvalidSource") \
	GS_HIP_ERR(hipErrorFileNotFound, "file not found") \
	GS_HIP_ERR(hipErrorSharedObjectSymbolNotFound, "hipErrorSharedObjectSymbolNotFound") \
	GS_HIP_ERR(hipErrorSharedObjectInitFailed, "hipErrorSharedObjectInitFailed") \
	GS_HIP_ERR(hipErrorOperatingSystem, "hipErrorOperatingSystem") \
	GS_HIP_ERR(hipErrorInvalidHandle, "invalid resource handle") \
	GS_HIP_ERR(hipErrorIllegalState, "the operation cannot be performed in the present state") \
	GS_HIP_ERR(hipErrorNotFound, "named symbol not found") \
	GS_HIP_ERR(hipErrorNotReady, "device not ready") \
	GS_HIP_ERR(hipErrorIllegalAddress, "hipErrorIllegalAddress") \
	GS_HIP_ERR(hipErrorLaunchOutOfResources, "hipErrorLaunchOutOfResources") \
	GS_HIP_ERR(hipErrorLaunchTimeOut, "hipErrorLaunchTimeOut") \
	GS_HIP_ERR(hipErrorPeerAccessAlreadyEnabled, "hipErrorPeerAccessAlreadyEnabled") \
	GS_HIP_ERR(hipErrorPeerAccessNotEnabled, "hipErrorPeerAccessNotEnabled") \
	GS_HIP_ERR(hipErrorSetOnActiveProcess, "hipErrorSetOnActiveProcess") \
	GS_HIP_ERR(hipErrorContextIsDestroyed, "hipErrorContextIsDestroyed") \
	GS_HIP_ERR(hipErrorAssert, "hipErrorAssert") \
	GS_HIP_ERR(hipErrorHostMemoryAlreadyRegistered, "part or all of the requested memory range is already mapped") \
	GS_HIP_ERR(hipErrorHostMemoryNotRegistered, "pointer does not correspond to a registered memory region") \
	GS_HIP_ERR(hipErrorLaunchFailure, "hipErrorLaunchFailure") \
	GS_HIP_ERR(hipErrorCooperativeLaunchTooLarge, "hipErrorCooperativeLaunchTooLarge") \
	GS_HIP_ERR(hipErrorNotSupported, "operation not supported") \
	GS_HIP_ERR(hipErrorStreamCaptureUnsupported, "operation not permitted when stream is capturing") \
	GS_HIP_ERR(hipErrorStreamCaptureInvalidated, "operation failed due to a previous error during capture") \
	GS_HIP_ERR(hipErrorStreamCaptureMerge, "hipErrorStreamCaptureMerge") \
	GS_HIP_ERR(hipErrorStreamCaptureUnmatched, "capture was not initiated in this stream") \
	GS_HIP_ERR(hipErrorStreamCaptureUnjoined, "hipErrorStreamCaptureUnjoined") \
	GS_HIP_ERR(hipErrorStreamCaptureIsolation, "hipErrorStreamCaptureIsolation") \
	GS_HIP_ERR(hipErrorStreamCaptureImplicit, "operation would make the legacy stream depend on a capturing blocking stream") \
	GS_HIP_ERR(hipErrorCapturedEvent, "hipErrorCapturedEvent") \
	GS_HIP_ERR(hipErrorStreamCaptureWrongThread, "hipErrorStreamCaptureWrongThread") \
	GS_HIP_ERR(hipErrorGraphExecUpdateFailure, "hipErrorGraphExecUpdateFailure") \
	GS_HIP_ERR(hipErrorUnknown, "unknown error") \
	GS_HIP_ERR(hipErrorRuntimeMemory, "hipErrorRuntimeMemory") \
	GS_HIP_ERR(hipErrorRuntimeOther, "hipErrorRuntimeOther") \

#endif /* GS_HIP_ERRORS_H */
