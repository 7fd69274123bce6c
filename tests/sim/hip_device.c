/*
 * HIP front: the one simulated device and its primary context, the
 * per-thread current device, the last error, versions, device
 * synchronization, handle resolution shared by the other hip_*.c files and
 * error names.
 *
 * Last error: an API call that fails (hipErrorNotReady excepted) stores its
 * code per thread; hipGetLastError returns it and resets it to hipSuccess,
 * hipPeekAtLastError returns it only.  That is the CUDA rule, which ROCm 6
 * adopted; 5.2 also stored successes, so a program cannot tell the two
 * apart unless it peeks after a success that followed a failure.
 */
#include <stdio.h>
#include <string.h>

#include <hip/hip_version.h>

#include "hip_errors.h"
#include "hip_front.h"

static pthread_once_t primary_once = PTHREAD_ONCE_INIT;
static gs_sim_ctx_t *primary;
static _Thread_local hipError_t last_err;
static _Thread_local int cur_dev;

int gs_sim_is_simulator(void)
{
	return 1;
}

hipError_t gs_hip_err(gs_sim_err_t e)
{
	switch (e) {
	case GS_SIM_OK: return hipSuccess;
	case GS_SIM_EINVAL: return hipErrorInvalidValue;
	case GS_SIM_EHANDLE: return hipErrorInvalidHandle;
	case GS_SIM_ENOMEM: return hipErrorOutOfMemory;
	case GS_SIM_ENOTREADY: return hipErrorNotReady;
	case GS_SIM_ENOTFOUND: return hipErrorFileNotFound;
	case GS_SIM_EIMAGE: return hipErrorInvalidImage;
	case GS_SIM_ECTX: return hipErrorInvalidContext;
	case GS_SIM_ECAP_UNSUPPORTED: return hipErrorStreamCaptureUnsupported;
	case GS_SIM_ECAP_IMPLICIT: return hipErrorStreamCaptureImplicit;
	case GS_SIM_ECAP_INVALIDATED: return hipErrorStreamCaptureInvalidated;
	case GS_SIM_ECAP_UNMATCHED: return hipErrorStreamCaptureUnmatched;
	case GS_SIM_EUPDATE: return hipErrorGraphExecUpdateFailure;
	case GS_SIM_ETIMING: return hipErrorInvalidHandle;
	case GS_SIM_EUNSUPPORTED: return hipErrorNotSupported;
	}
	return hipErrorUnknown;
}

hipError_t gs_hip_ret(hipError_t e)
{
	if (e != hipSuccess && e != hipErrorNotReady)
		last_err = e;
	return e;
}

static void primary_create(void)
{
	if (gs_sim_ctx_create(&primary, 0, 0, true))
		primary = NULL;
}

gs_sim_ctx_t *gs_hip_ctx(void)
{
	GS_SIM_PT(pthread_once(&primary_once, primary_create));
	return primary;
}

hipError_t gs_hip_stream(hipStream_t h, gs_hip_dflt_t d, gs_sim_stream_t **out)
{
	bool dflt = h == NULL || h == hipStreamPerThread;
	gs_sim_ctx_t *ctx = dflt ? gs_hip_ctx() : NULL;
	if (dflt && !ctx)
		return hipErrorOutOfMemory;
	bool ptds = h == hipStreamPerThread || d == GS_HIP_PTDS;
	return gs_hip_err(gs_sim_front_stream(ctx, h, dflt, ptds, out));
}

hipError_t gs_hip_stream_out(hipStream_t h, gs_hip_dflt_t d, const void *out, gs_sim_stream_t **s)
{
	hipError_t r = gs_hip_stream(h, d, s);
	return r ? r : out ? hipSuccess : hipErrorInvalidValue;
}

hipStream_t gs_hip_stream_handle(gs_sim_stream_t *s)
{
	return (hipStream_t)gs_sim_front_handle(s, NULL, hipStreamPerThread);
}

bool gs_hip_capturing(gs_sim_stream_t *s)
{
	return gs_sim_front_capturing(s);
}

/* ---- init, versions, devices ---- */
hipError_t hipInit(unsigned int flags)
{
	if (flags != 0)
		GS_HIP_RET(hipErrorInvalidValue);
	GS_HIP_RET(gs_hip_ctx() ? hipSuccess : hipErrorOutOfMemory);
}

hipError_t hipDriverGetVersion(int *driverVersion)
{
	if (!driverVersion)
		GS_HIP_RET(hipErrorInvalidValue);
	*driverVersion = HIP_VERSION;
	return hipSuccess;
}

hipError_t hipRuntimeGetVersion(int *runtimeVersion)
{
	if (!runtimeVersion)
		GS_HIP_RET(hipErrorInvalidValue);
	*runtimeVersion = HIP_VERSION;
	return hipSuccess;
}

hipError_t hipGetDeviceCount(int *count)
{
	if (!count)
		GS_HIP_RET(hipErrorInvalidValue);
	*count = 1;
	return hipSuccess;
}

hipError_t hipSetDevice(int deviceId)
{
	if (deviceId != 0)
		GS_HIP_RET(hipErrorInvalidDevice);
	if (!gs_hip_ctx())
		GS_HIP_RET(hipErrorOutOfMemory);
	cur_dev = deviceId;
	return hipSuccess;
}

hipError_t hipGetDevice(int *deviceId)
{
	if (!deviceId)
		GS_HIP_RET(hipErrorInvalidValue);
	*deviceId = cur_dev;
	return hipSuccess;
}

hipError_t hipDeviceGet(hipDevice_t *device, int ordinal)
{
	if (!device)
		GS_HIP_RET(hipErrorInvalidValue);
	if (ordinal != 0)
		GS_HIP_RET(hipErrorInvalidDevice);
	*device = 0;
	return hipSuccess;
}

hipError_t hipDeviceGetName(char *name, int len, hipDevice_t device)
{
	if (!name || len <= 0)
		GS_HIP_RET(hipErrorInvalidValue);
	if (device != 0)
		GS_HIP_RET(hipErrorInvalidDevice);
	snprintf(name, (size_t)len, "%s", "graphshim CPU simulator");
	return hipSuccess;
}

hipError_t hipDeviceTotalMem(size_t *bytes, hipDevice_t device)
{
	size_t f;
	if (!bytes)
		GS_HIP_RET(hipErrorInvalidValue);
	if (device != 0)
		GS_HIP_RET(hipErrorInvalidDevice);
	gs_sim_mem_info(&f, bytes);
	return hipSuccess;
}

/* A few attributes, with MI200-like values. */
hipError_t hipDeviceGetAttribute(int *pi, hipDeviceAttribute_t attr, int deviceId)
{
	if (!pi)
		GS_HIP_RET(hipErrorInvalidValue);
	if (deviceId != 0)
		GS_HIP_RET(hipErrorInvalidDevice);
	switch (attr) {
	case hipDeviceAttributeMaxThreadsPerBlock: *pi = 1024; break;
	case hipDeviceAttributeMaxBlockDimX: *pi = 1024; break;
	case hipDeviceAttributeMaxBlockDimY: *pi = 1024; break;
	case hipDeviceAttributeMaxBlockDimZ: *pi = 1024; break;
	case hipDeviceAttributeMaxGridDimX: *pi = 2147483647; break;
	case hipDeviceAttributeMaxGridDimY: *pi = 2147483647; break;
	case hipDeviceAttributeMaxGridDimZ: *pi = 2147483647; break;
	case hipDeviceAttributeMaxSharedMemoryPerBlock: *pi = 65536; break;
	case hipDeviceAttributeWarpSize: *pi = 64; break;
	case hipDeviceAttributeMultiprocessorCount: *pi = 110; break;
	case hipDeviceAttributeComputeCapabilityMajor: *pi = 9; break;
	case hipDeviceAttributeComputeCapabilityMinor: *pi = 0; break;
	case hipDeviceAttributeConcurrentKernels: *pi = 1; break;
	case hipDeviceAttributeCanMapHostMemory: *pi = 1; break;
	case hipDeviceAttributeIntegrated: *pi = 0; break;
	default: *pi = 0; break;
	}
	return hipSuccess;
}

hipError_t hipDeviceSynchronize(void)
{
	gs_sim_ctx_t *c = gs_hip_ctx();
	if (!c)
		GS_HIP_RET(hipErrorOutOfMemory);
	gs_sim_ctx_sync(c);
	return hipSuccess;
}

hipError_t hipCtxSynchronize(void)
{
	return hipDeviceSynchronize();
}

/* ---- last error and names ---- */
hipError_t hipGetLastError(void)
{
	hipError_t e = last_err;
	last_err = hipSuccess;
	return e;
}

hipError_t hipPeekAtLastError(void)
{
	return last_err;
}

const char *hipGetErrorName(hipError_t hip_error)
{
	switch (hip_error) {
#define GS_HIP_ERR(code, desc) case code: return #code;
	GS_HIP_ERRORS
#undef GS_HIP_ERR
	default:
		break;
	}
	return "hipErrorUnknown";
}

const char *hipGetErrorString(hipError_t hipError)
{
	switch (hipError) {
#define GS_HIP_ERR(code, desc) case code: return desc;
	GS_HIP_ERRORS
#undef GS_HIP_ERR
	default:
		break;
	}
	return "unknown error";
}
