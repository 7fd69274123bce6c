/*
 * CUDA front: memory allocation, pointer queries, copies and memsets.
 *
 * Copy semantics follow the real driver, since graphshim's correctness
 * depends on them: synchronous copies run on the default stream (legacy or
 * per-thread) and are complete on return; an async copy FROM pageable host
 * memory reads the buffer at call time (staged); an async copy TO pageable
 * host memory completes before return; copies between device and pinned
 * memory happen when the stream reaches them.
 */
#include <stdlib.h>
#include <string.h>

#include "cuda_front.h"

/* ---- allocation ---- */
CUresult cuMemAlloc(CUdeviceptr *dptr, size_t bytesize)
{
	void *p;
	GS_CU_CHECK_INIT();
	gs_sim_ctx_t *ctx = gs_cu_ctx();
	if (!ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!dptr || !bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = gs_cu_err(gs_sim_mem_alloc(&p, bytesize, ctx));
	if (!r)
		*dptr = (CUdeviceptr)(uintptr_t)p;
	return r;
}

CUresult cuMemFree(CUdeviceptr dptr)
{
	GS_CU_CHECK_INIT();
	if (!dptr)
		return CUDA_SUCCESS;
	if (gs_sim_pool_owns((void *)(uintptr_t)dptr))
		return gs_cu_err(gs_sim_pool_free_now((void *)(uintptr_t)dptr));
	return gs_cu_err(gs_sim_mem_free((void *)(uintptr_t)dptr));
}

/* Stream-ordered allocation from the context's pool (gs_sim_pool_alloc). */
static CUresult mem_alloc_async(CUdeviceptr *dptr, size_t n, CUstream h, gs_cu_dflt_t d)
{
	gs_sim_stream_t *s;
	CUresult r = gs_cu_stream_out(h, d, dptr, &s);
	if (r)
		return r;
	if (!n)
		return CUDA_ERROR_INVALID_VALUE;
	void *p;
	r = gs_cu_err(gs_sim_pool_alloc(&p, n, gs_cu_ctx(), s));
	if (!r)
		*dptr = (CUdeviceptr)(uintptr_t)p;
	return r;
}
#define X(d) mem_alloc_async(dptr, bytesize, hStream, d)
GS_CU_PAIR_SZ(CUresult, cuMemAllocAsync, (CUdeviceptr *dptr, size_t bytesize, CUstream hStream), X)
#undef X

static CUresult mem_free_async(CUdeviceptr p, CUstream h, gs_cu_dflt_t d)
{
	gs_sim_stream_t *s;
	CUresult r = gs_cu_stream(h, d, &s);
	if (r)
		return r;
	if (!p)
		return CUDA_SUCCESS;
	return gs_cu_err(gs_sim_pool_free((void *)(uintptr_t)p, s));
}
#define X(d) mem_free_async(dptr, hStream, d)
GS_CU_PAIR_SZ(CUresult, cuMemFreeAsync, (CUdeviceptr dptr, CUstream hStream), X)
#undef X

CUresult cuMemAllocHost(void **pp, size_t bytesize)
{
	GS_CU_CHECK_INIT();
	if (!pp)
		return CUDA_ERROR_INVALID_VALUE;
	if (!gs_cu_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	return gs_cu_err(gs_sim_host_alloc(pp, bytesize, 0));
}

CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
	GS_CU_CHECK_INIT();
	if (!pp || (Flags & ~(unsigned)(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP |
					 CU_MEMHOSTALLOC_WRITECOMBINED)))
		return CUDA_ERROR_INVALID_VALUE;
	if (!gs_cu_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	return gs_cu_err(gs_sim_host_alloc(pp, bytesize, Flags));
}

CUresult cuMemFreeHost(void *p)
{
	GS_CU_CHECK_INIT();
	return gs_cu_err(gs_sim_host_free(p));
}

CUresult cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags)
{
	GS_CU_CHECK_INIT();
	gs_sim_err_t e = gs_sim_host_register(p, bytesize, Flags);
	return e == GS_SIM_EINVAL && p && bytesize ? CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED
						   : gs_cu_err(e);
}

CUresult cuMemHostUnregister(void *p)
{
	GS_CU_CHECK_INIT();
	return gs_sim_host_unregister(p) ? CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED : CUDA_SUCCESS;
}

CUresult cuMemHostGetFlags(unsigned int *pFlags, void *p)
{
	unsigned flags;
	GS_CU_CHECK_INIT();
	if (!pFlags || gs_sim_mem_kind(p, NULL, NULL, NULL, &flags) != GS_SIM_M_PINNED)
		return CUDA_ERROR_INVALID_VALUE;
	*pFlags = flags;
	return CUDA_SUCCESS;
}

CUresult cuMemHostGetDevicePointer(CUdeviceptr *pdptr, void *p, unsigned int Flags)
{
	GS_CU_CHECK_INIT();
	if (!pdptr || Flags || gs_sim_mem_kind(p, NULL, NULL, NULL, NULL) != GS_SIM_M_PINNED)
		return CUDA_ERROR_INVALID_VALUE;
	*pdptr = (CUdeviceptr)(uintptr_t)p;
	return CUDA_SUCCESS;
}

CUresult cuMemGetInfo(size_t *free_b, size_t *total_b)
{
	GS_CU_CHECK_INIT();
	if (!gs_cu_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	gs_sim_mem_info(free_b, total_b);
	return CUDA_SUCCESS;
}

CUresult cuMemGetAddressRange(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
	void *base;
	GS_CU_CHECK_INIT();
	if (!gs_sim_front_range((void *)(uintptr_t)dptr, &base, psize))
		return CUDA_ERROR_NOT_FOUND;
	if (pbase)
		*pbase = (CUdeviceptr)(uintptr_t)base;
	return CUDA_SUCCESS;
}

/* The attributes a copy classifier needs; pageable memory is unknown to
 * the driver and yields CUDA_ERROR_INVALID_VALUE, as on a GPU. */
CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
	void *base;
	size_t size;
	gs_sim_ctx_t *ctx;
	unsigned flags;
	GS_CU_CHECK_INIT();
	if (!data)
		return CUDA_ERROR_INVALID_VALUE;
	int kind = gs_sim_mem_kind((void *)(uintptr_t)ptr, &base, &size, &ctx, &flags);
	if (kind == GS_SIM_M_PAGEABLE)
		return CUDA_ERROR_INVALID_VALUE;
	switch (attribute) {
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		*(unsigned *)data = kind == GS_SIM_M_DEVICE ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
		break;
	case CU_POINTER_ATTRIBUTE_CONTEXT:
		*(CUcontext *)data = (CUcontext)(ctx ? ctx : gs_cu_ctx());
		break;
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
		*(CUdeviceptr *)data = ptr;
		break;
	case CU_POINTER_ATTRIBUTE_HOST_POINTER:
		if (kind == GS_SIM_M_DEVICE)
			return CUDA_ERROR_INVALID_VALUE;
		*(void **)data = (void *)(uintptr_t)ptr;
		break;
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
		*(unsigned *)data = 0;
		break;
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
		*(int *)data = 0;
		break;
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
		*(CUdeviceptr *)data = (CUdeviceptr)(uintptr_t)base;
		break;
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
		*(size_t *)data = size;
		break;
	case CU_POINTER_ATTRIBUTE_MAPPED:
		*(unsigned *)data = 1;
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}

/* ---- copies ---- */
enum { SYNC, ASYNC };

/* The core of every 1D copy (the shared checks and submission, sim_front.h). */
static CUresult copy1d(void *dst, const void *src, size_t n, CUstream h, gs_cu_dflt_t d, int mode)
{
	gs_sim_stream_t *s;
	gs_sim_work_t w;
	CUresult r = gs_cu_stream(h, d, &s);
	if (r)
		return r;
	if (!n)
		return CUDA_SUCCESS;
	if ((r = gs_cu_err(gs_sim_front_copy_work(&w, dst, src, n))))
		return r;
	return gs_cu_err(gs_sim_front_copy(s, &w, mode == SYNC));
}

#define P(x) ((void *)(uintptr_t)(x))
#define CP(x) ((const void *)(uintptr_t)(x))

static CUresult typed_copy(void *dst, bool dst_dev, const void *src, bool src_dev, size_t n,
			   CUstream h, gs_cu_dflt_t d, int mode)
{
	GS_CU_CHECK_INIT();
	CUresult r = gs_cu_err(gs_sim_front_typed(dst, dst_dev, src, src_dev, n));
	return r ? r : copy1d(dst, src, n, h, d, mode);
}

static CUresult memcpy_impl(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, gs_cu_dflt_t d)
{
	GS_CU_CHECK_INIT();
	return copy1d(P(dst), CP(src), ByteCount, NULL, d, SYNC);
}
#define X(d) memcpy_impl(dst, src, ByteCount, d)
GS_CU_PAIR_DS(CUresult, cuMemcpy, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount), X)
#undef X

static CUresult memcpy_async_impl(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h, gs_cu_dflt_t d)
{
	GS_CU_CHECK_INIT();
	return copy1d(P(dst), CP(src), n, h, d, ASYNC);
}
#define X(d) memcpy_async_impl(dst, src, ByteCount, hStream, d)
GS_CU_PAIR_SZ(CUresult, cuMemcpyAsync, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream), X)
#undef X

#define X(d) typed_copy(P(dstDevice), true, srcHost, false, ByteCount, NULL, d, SYNC)
GS_CU_PAIR_DS(CUresult, cuMemcpyHtoD_v2, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount), X)
#undef X
#define X(d) typed_copy(dstHost, false, CP(srcDevice), true, ByteCount, NULL, d, SYNC)
GS_CU_PAIR_DS(CUresult, cuMemcpyDtoH_v2, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount), X)
#undef X
#define X(d) typed_copy(P(dstDevice), true, CP(srcDevice), true, ByteCount, NULL, d, SYNC)
GS_CU_PAIR_DS(CUresult, cuMemcpyDtoD_v2, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount), X)
#undef X
#define X(d) typed_copy(P(dstDevice), true, srcHost, false, ByteCount, hStream, d, ASYNC)
GS_CU_PAIR_SZ(CUresult, cuMemcpyHtoDAsync_v2,
	      (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream), X)
#undef X
#define X(d) typed_copy(dstHost, false, CP(srcDevice), true, ByteCount, hStream, d, ASYNC)
GS_CU_PAIR_SZ(CUresult, cuMemcpyDtoHAsync_v2,
	      (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream), X)
#undef X
#define X(d) typed_copy(P(dstDevice), true, CP(srcDevice), true, ByteCount, hStream, d, ASYNC)
GS_CU_PAIR_SZ(CUresult, cuMemcpyDtoDAsync_v2,
	      (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream), X)
#undef X

/* CUDA_MEMCPY3D (graph memcpy nodes) to a copy work item.  Arrays are not
 * modelled. */
CUresult gs_cu_copy3d(gs_sim_work_t *w, const CUDA_MEMCPY3D *p)
{
	if (!p || p->srcMemoryType == CU_MEMORYTYPE_ARRAY || p->dstMemoryType == CU_MEMORYTYPE_ARRAY)
		return CUDA_ERROR_INVALID_VALUE;
	const unsigned char *src = p->srcMemoryType == CU_MEMORYTYPE_HOST
		? p->srcHost : CP(p->srcDevice);
	unsigned char *dst = p->dstMemoryType == CU_MEMORYTYPE_HOST ? p->dstHost : P(p->dstDevice);
	size_t width = p->WidthInBytes, height = p->Height ? p->Height : 1;
	size_t depth = p->Depth ? p->Depth : 1;
	size_t spitch = p->srcPitch ? p->srcPitch : width, dpitch = p->dstPitch ? p->dstPitch : width;
	size_t sh = p->srcHeight ? p->srcHeight : height, dh = p->dstHeight ? p->dstHeight : height;
	if (!src || !dst || spitch < width || dpitch < width)
		return CUDA_ERROR_INVALID_VALUE;
	src += p->srcXInBytes + p->srcY * spitch + p->srcZ * spitch * sh;
	dst += p->dstXInBytes + p->dstY * dpitch + p->dstZ * dpitch * dh;
	size_t sext = (depth - 1) * spitch * sh + (height - 1) * spitch + width;
	size_t dext = (depth - 1) * dpitch * dh + (height - 1) * dpitch + width;
	if (gs_sim_front_overruns(src, sext) || gs_sim_front_overruns(dst, dext))
		return CUDA_ERROR_INVALID_VALUE;
	*w = (gs_sim_work_t){ .kind = GS_SIM_W_COPY,
			      .u.copy = { dst, src, width, height, depth, dpitch, spitch,
					  dpitch * dh, spitch * sh } };
	return CUDA_SUCCESS;
}

/* ---- memsets ---- */
CUresult gs_cu_memset_work(gs_sim_work_t *w, CUdeviceptr dst, size_t pitch, unsigned value,
			   unsigned elsize, size_t width, size_t height)
{
	return gs_cu_err(gs_sim_front_memset_work(w, P(dst), pitch, value, elsize, width, height));
}

/* Synchronous memsets complete before return (stronger than the driver's
 * "may be asynchronous" for device memory; results are the same). */
static CUresult memset_impl(CUdeviceptr dst, size_t pitch, unsigned value, unsigned elsize,
			    size_t width, size_t height, CUstream h, gs_cu_dflt_t d, int mode)
{
	gs_sim_stream_t *s;
	gs_sim_work_t w;
	GS_CU_CHECK_INIT();
	CUresult r = gs_cu_stream(h, d, &s);
	if (r)
		return r;
	if (!width || !height)
		return CUDA_SUCCESS;
	if ((r = gs_cu_memset_work(&w, dst, pitch, value, elsize, width, height)))
		return r;
	return gs_cu_err(gs_sim_front_submit(s, &w, mode == SYNC));
}

#define X(d) memset_impl(dstDevice, 0, uc, 1, N, 1, NULL, d, SYNC)
GS_CU_PAIR_DS(CUresult, cuMemsetD8_v2, (CUdeviceptr dstDevice, unsigned char uc, size_t N), X)
#undef X
#define X(d) memset_impl(dstDevice, 0, us, 2, N, 1, NULL, d, SYNC)
GS_CU_PAIR_DS(CUresult, cuMemsetD16_v2, (CUdeviceptr dstDevice, unsigned short us, size_t N), X)
#undef X
#define X(d) memset_impl(dstDevice, 0, ui, 4, N, 1, NULL, d, SYNC)
GS_CU_PAIR_DS(CUresult, cuMemsetD32_v2, (CUdeviceptr dstDevice, unsigned int ui, size_t N), X)
#undef X
#define X(d) memset_impl(dstDevice, dstPitch, uc, 1, Width, Height, NULL, d, SYNC)
GS_CU_PAIR_DS(CUresult, cuMemsetD2D8_v2,
	      (CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height), X)
#undef X
#define X(d) memset_impl(dstDevice, dstPitch, us, 2, Width, Height, NULL, d, SYNC)
GS_CU_PAIR_DS(CUresult, cuMemsetD2D16_v2,
	      (CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height), X)
#undef X
#define X(d) memset_impl(dstDevice, dstPitch, ui, 4, Width, Height, NULL, d, SYNC)
GS_CU_PAIR_DS(CUresult, cuMemsetD2D32_v2,
	      (CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height), X)
#undef X
#define X(d) memset_impl(dstDevice, 0, uc, 1, N, 1, hStream, d, ASYNC)
GS_CU_PAIR_SZ(CUresult, cuMemsetD8Async, (CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream), X)
#undef X
#define X(d) memset_impl(dstDevice, 0, us, 2, N, 1, hStream, d, ASYNC)
GS_CU_PAIR_SZ(CUresult, cuMemsetD16Async, (CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream), X)
#undef X
#define X(d) memset_impl(dstDevice, 0, ui, 4, N, 1, hStream, d, ASYNC)
GS_CU_PAIR_SZ(CUresult, cuMemsetD32Async, (CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream), X)
#undef X
#define X(d) memset_impl(dstDevice, dstPitch, uc, 1, Width, Height, hStream, d, ASYNC)
GS_CU_PAIR_SZ(CUresult, cuMemsetD2D8Async,
	      (CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height, CUstream hStream), X)
#undef X
#define X(d) memset_impl(dstDevice, dstPitch, us, 2, Width, Height, hStream, d, ASYNC)
GS_CU_PAIR_SZ(CUresult, cuMemsetD2D16Async,
	      (CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height, CUstream hStream), X)
#undef X
#define X(d) memset_impl(dstDevice, dstPitch, ui, 4, Width, Height, hStream, d, ASYNC)
GS_CU_PAIR_SZ(CUresult, cuMemsetD2D32Async,
	      (CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height, CUstream hStream), X)
#undef X
