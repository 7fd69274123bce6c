/*
 * CUDA front: initialization, the one simulated device, contexts (primary
 * and created, with a per-thread current-context stack), handle resolution
 * shared by the other cuda_*.c files, and error names.
 */
#include <stdio.h>
#include <string.h>

#include "cuda_errors.h"
#include "cuda_front.h"

#define GS_CU_STACK 16

static atomic_bool inited;
static pthread_mutex_t primary_mu = PTHREAD_MUTEX_INITIALIZER;
static gs_sim_ctx_t *primary;
static int primary_refs;
static unsigned primary_flags;

static _Thread_local gs_sim_ctx_t *ctx_stack[GS_CU_STACK];
static _Thread_local int ctx_depth;

int gs_sim_is_simulator(void)
{
	return 1;
}

CUresult gs_cu_err(gs_sim_err_t e)
{
	switch (e) {
	case GS_SIM_OK: return CUDA_SUCCESS;
	case GS_SIM_EINVAL: return CUDA_ERROR_INVALID_VALUE;
	case GS_SIM_EHANDLE: return CUDA_ERROR_INVALID_HANDLE;
	case GS_SIM_ENOMEM: return CUDA_ERROR_OUT_OF_MEMORY;
	case GS_SIM_ENOTREADY: return CUDA_ERROR_NOT_READY;
	case GS_SIM_ENOTFOUND: return CUDA_ERROR_FILE_NOT_FOUND;
	case GS_SIM_EIMAGE: return CUDA_ERROR_INVALID_IMAGE;
	case GS_SIM_ECTX: return CUDA_ERROR_INVALID_CONTEXT;
	case GS_SIM_ECAP_UNSUPPORTED: return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	case GS_SIM_ECAP_IMPLICIT: return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
	case GS_SIM_ECAP_INVALIDATED: return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
	case GS_SIM_ECAP_UNMATCHED: return CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
	case GS_SIM_EUPDATE: return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
	case GS_SIM_ETIMING: return CUDA_ERROR_INVALID_HANDLE;
	case GS_SIM_EUNSUPPORTED: return CUDA_ERROR_NOT_SUPPORTED;
	}
	return CUDA_ERROR_UNKNOWN;
}

bool gs_cu_initialized(void)
{
	return atomic_load(&inited);
}

gs_sim_ctx_t *gs_cu_ctx(void)
{
	return ctx_depth ? ctx_stack[ctx_depth - 1] : NULL;
}

CUresult gs_cu_stream(CUstream h, gs_cu_dflt_t d, gs_sim_stream_t **out)
{
	if (!gs_cu_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	bool dflt = h == NULL || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD;
	gs_sim_ctx_t *ctx = dflt ? gs_cu_ctx() : NULL;
	if (dflt && !ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	bool ptds = h == CU_STREAM_PER_THREAD || (h == NULL && d == GS_CU_PTDS);
	return gs_cu_err(gs_sim_front_stream(ctx, h, dflt, ptds, out));
}

CUresult gs_cu_stream_out(CUstream h, gs_cu_dflt_t d, const void *out, gs_sim_stream_t **s)
{
	CUresult r = gs_cu_stream(h, d, s);
	return r ? r : out ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUstream gs_cu_stream_handle(gs_sim_stream_t *s)
{
	return (CUstream)gs_sim_front_handle(s, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD);
}

/* ---- init, version, device ---- */
CUresult cuInit(unsigned int Flags)
{
	if (Flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	atomic_store(&inited, true);
	return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *driverVersion)
{
	if (!driverVersion)
		return CUDA_ERROR_INVALID_VALUE;
	*driverVersion = 13000;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *count)
{
	GS_CU_CHECK_INIT();
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	*count = 1;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
	GS_CU_CHECK_INIT();
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	if (ordinal != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	*device = 0;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
	GS_CU_CHECK_INIT();
	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	snprintf(name, (size_t)len, "%s", "graphshim CPU simulator");
	return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem(size_t *bytes, CUdevice dev)
{
	size_t f;
	GS_CU_CHECK_INIT();
	if (!bytes)
		return CUDA_ERROR_INVALID_VALUE;
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	gs_sim_mem_info(&f, bytes);
	return CUDA_SUCCESS;
}

/* A few attributes, with H100-like values. */
CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
	GS_CU_CHECK_INIT();
	if (!pi)
		return CUDA_ERROR_INVALID_VALUE;
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	switch (attrib) {
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; break;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: *pi = 1024; break;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: *pi = 1024; break;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: *pi = 64; break;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *pi = 2147483647; break;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: *pi = 65535; break;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *pi = 65535; break;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *pi = 49152; break;
	case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *pi = 32; break;
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *pi = GS_CU_SIM_SMS; break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *pi = 9; break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *pi = 0; break;
	case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: *pi = 1; break;
	case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: *pi = 1; break;
	case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: *pi = 2; break;
	case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: *pi = 1; break;
	case CU_DEVICE_ATTRIBUTE_INTEGRATED: *pi = 0; break;
	case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: *pi = 0; break;
	case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: *pi = 0; break;
	case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: *pi = 0; break;
	default: *pi = 0; break;
	}
	return CUDA_SUCCESS;
}

/* ---- contexts ---- */
static void ctx_set_top(gs_sim_ctx_t *ctx)
{
	if (ctx_depth == 0)
		ctx_stack[ctx_depth++] = ctx;
	else
		ctx_stack[ctx_depth - 1] = ctx;
}

/* The primary context lives until process exit even when its count drops
 * to zero (the real driver resets it; keeping it avoids tearing down
 * streams under a preloaded library). */
CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	CUresult r = CUDA_SUCCESS;
	GS_CU_CHECK_INIT();
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	GS_SIM_PT(pthread_mutex_lock(&primary_mu));
	if (!primary)
		r = gs_cu_err(gs_sim_ctx_create(&primary, 0, primary_flags, true));
	if (!r) {
		primary_refs++;
		*pctx = (CUcontext)primary;
	}
	GS_SIM_PT(pthread_mutex_unlock(&primary_mu));
	return r;
}

CUresult cuDevicePrimaryCtxRelease(CUdevice dev)
{
	CUresult r = CUDA_SUCCESS;
	GS_CU_CHECK_INIT();
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	GS_SIM_PT(pthread_mutex_lock(&primary_mu));
	if (primary_refs <= 0)
		r = CUDA_ERROR_INVALID_CONTEXT;
	else
		primary_refs--;
	GS_SIM_PT(pthread_mutex_unlock(&primary_mu));
	return r;
}

CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
	GS_CU_CHECK_INIT();
	if (!flags || !active)
		return CUDA_ERROR_INVALID_VALUE;
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	GS_SIM_PT(pthread_mutex_lock(&primary_mu));
	*flags = primary_flags;
	*active = primary_refs > 0;
	GS_SIM_PT(pthread_mutex_unlock(&primary_mu));
	return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags)
{
	GS_CU_CHECK_INIT();
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	GS_SIM_PT(pthread_mutex_lock(&primary_mu));
	primary_flags = flags;
	GS_SIM_PT(pthread_mutex_unlock(&primary_mu));
	return CUDA_SUCCESS;
}

static CUresult ctx_create(CUcontext *pctx, unsigned flags, CUdevice dev)
{
	gs_sim_ctx_t *ctx;
	GS_CU_CHECK_INIT();
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	if (ctx_depth == GS_CU_STACK)
		return CUDA_ERROR_OUT_OF_MEMORY;
	CUresult r = gs_cu_err(gs_sim_ctx_create(&ctx, 0, flags, false));
	if (r)
		return r;
	ctx_stack[ctx_depth++] = ctx; /* a new context is pushed as current */
	*pctx = (CUcontext)ctx;
	return CUDA_SUCCESS;
}

CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	return ctx_create(pctx, flags, dev);
}

CUresult cuCtxCreate(CUcontext *pctx, CUctxCreateParams *params, unsigned int flags, CUdevice dev)
{
	return ctx_create(pctx, flags, dev);
}

CUresult cuCtxDestroy(CUcontext ctx)
{
	GS_CU_CHECK_INIT();
	gs_sim_ctx_t *c = (gs_sim_ctx_t *)ctx;
	if (!gs_sim_reg_is(c, GS_SIM_H_CTX) || c->primary)
		return CUDA_ERROR_INVALID_CONTEXT;
	/* Unbind it from this thread's stack. */
	for (int i = 0; i < ctx_depth; i++)
		if (ctx_stack[i] == c) {
			memmove(ctx_stack + i, ctx_stack + i + 1,
				(size_t)(ctx_depth - i - 1) * sizeof(*ctx_stack));
			ctx_depth--;
			i--;
		}
	gs_sim_ctx_sync(c);
	gs_sim_ctx_destroy(c);
	return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext ctx)
{
	GS_CU_CHECK_INIT();
	if (!ctx) {
		if (ctx_depth)
			ctx_depth--;
		return CUDA_SUCCESS;
	}
	if (!gs_sim_reg_is(ctx, GS_SIM_H_CTX))
		return CUDA_ERROR_INVALID_CONTEXT;
	ctx_set_top((gs_sim_ctx_t *)ctx);
	return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *pctx)
{
	GS_CU_CHECK_INIT();
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	*pctx = (CUcontext)gs_cu_ctx();
	return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent(CUcontext ctx)
{
	GS_CU_CHECK_INIT();
	if (!gs_sim_reg_is(ctx, GS_SIM_H_CTX))
		return CUDA_ERROR_INVALID_CONTEXT;
	if (ctx_depth == GS_CU_STACK)
		return CUDA_ERROR_OUT_OF_MEMORY;
	ctx_stack[ctx_depth++] = (gs_sim_ctx_t *)ctx;
	return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent(CUcontext *pctx)
{
	GS_CU_CHECK_INIT();
	if (!ctx_depth)
		return CUDA_ERROR_INVALID_CONTEXT;
	gs_sim_ctx_t *c = ctx_stack[--ctx_depth];
	if (pctx)
		*pctx = (CUcontext)c;
	return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize(void)
{
	GS_CU_CHECK_INIT();
	gs_sim_ctx_t *c = gs_cu_ctx();
	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	gs_sim_ctx_sync(c);
	return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
	GS_CU_CHECK_INIT();
	gs_sim_ctx_t *c = ctx ? (gs_sim_ctx_t *)ctx : gs_cu_ctx();
	if (!c || !gs_sim_reg_is(c, GS_SIM_H_CTX))
		return CUDA_ERROR_INVALID_CONTEXT;
	gs_sim_ctx_sync(c);
	return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *device)
{
	GS_CU_CHECK_INIT();
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	if (!gs_cu_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	*device = 0;
	return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
	GS_CU_CHECK_INIT();
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	if (ctx ? !gs_sim_reg_is(ctx, GS_SIM_H_CTX) : !gs_cu_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	*device = 0;
	return CUDA_SUCCESS;
}

CUresult cuCtxGetFlags(unsigned int *flags)
{
	GS_CU_CHECK_INIT();
	gs_sim_ctx_t *c = gs_cu_ctx();
	if (!flags)
		return CUDA_ERROR_INVALID_VALUE;
	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	*flags = c->flags;
	return CUDA_SUCCESS;
}

CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
	GS_CU_CHECK_INIT();
	if (!version)
		return CUDA_ERROR_INVALID_VALUE;
	if (ctx ? !gs_sim_reg_is(ctx, GS_SIM_H_CTX) : !gs_cu_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	*version = 3020;
	return CUDA_SUCCESS;
}

/* ---- error names ---- */
CUresult cuGetErrorName(CUresult error, const char **pStr)
{
	if (!pStr)
		return CUDA_ERROR_INVALID_VALUE;
	switch (error) {
#define GS_CU_ERR(code, desc) case code: *pStr = #code; return CUDA_SUCCESS;
	GS_CU_ERRORS
#undef GS_CU_ERR
	default:
		break;
	}
	*pStr = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult error, const char **pStr)
{
	if (!pStr)
		return CUDA_ERROR_INVALID_VALUE;
	switch (error) {
#define GS_CU_ERR(code, desc) case code: *pStr = desc; return CUDA_SUCCESS;
	GS_CU_ERRORS
#undef GS_CU_ERR
	default:
		break;
	}
	*pStr = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}
