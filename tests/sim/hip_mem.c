/*
 * HIP front: allocation, pointer attributes, copies and memsets.
 *
 * As on AMD hardware, the direction of a copy follows from the pointers
 * themselves (the simulator classifies every address as device, pinned
 * host or pageable host); hipMemcpyKind is only checked to be a known
 * value.  Timing follows the CUDA front, which graphshim's correctness
 * depends on: synchronous copies run on the null (or per-thread) stream and
 * are complete on return; an async copy FROM pageable memory reads it at
 * call time (staged); an async copy TO pageable memory completes before
 * return; copies between device and pinned memory happen when the stream
 * reaches them.  Synchronous memsets complete before return.
 */
#include <stdlib.h>
#include <string.h>

#include "hip_front.h"

/* ---- allocation ---- */
hipError_t hipMalloc(void **ptr, size_t size)
{
	if (!ptr)
		GS_HIP_RET(hipErrorInvalidValue);
	gs_sim_ctx_t *ctx = gs_hip_ctx();
	if (!ctx)
		GS_HIP_RET(hipErrorOutOfMemory);
	/* HIP: a zero-byte request succeeds with a null pointer. */
	if (!size) {
		*ptr = NULL;
		return hipSuccess;
	}
	GS_HIP_RET(gs_hip_err(gs_sim_mem_alloc(ptr, size, ctx)));
}

hipError_t hipExtMallocWithFlags(void **ptr, size_t sizeBytes, unsigned int flags)
{
	return hipMalloc(ptr, sizeBytes);
}

/* Frees wait for the device's work first (core: gs_sim_mem_free); a pool's
 * block leaves the pool. */
hipError_t hipFree(void *ptr)
{
	if (!ptr)
		return hipSuccess;
	if (gs_sim_pool_owns(ptr))
		GS_HIP_RET(gs_hip_err(gs_sim_pool_free_now(ptr)));
	GS_HIP_RET(gs_hip_err(gs_sim_mem_free(ptr)));
}

/* Stream-ordered allocation from the device's pool (gs_sim_pool_alloc). */
hipError_t hipMallocAsync(void **ptr, size_t size, hipStream_t stream)
{
	gs_sim_stream_t *s;
	hipError_t r = gs_hip_stream_out(stream, GS_HIP_NULL, ptr, &s);
	if (r)
		GS_HIP_RET(r);
	if (!size) {
		*ptr = NULL;
		return hipSuccess;
	}
	GS_HIP_RET(gs_hip_err(gs_sim_pool_alloc(ptr, size, gs_hip_ctx(), s)));
}

hipError_t hipFreeAsync(void *ptr, hipStream_t stream)
{
	gs_sim_stream_t *s;
	hipError_t r = gs_hip_stream(stream, GS_HIP_NULL, &s);
	if (r)
		GS_HIP_RET(r);
	if (!ptr)
		return hipSuccess;
	GS_HIP_RET(gs_hip_err(gs_sim_pool_free(ptr, s)));
}

hipError_t hipHostMalloc(void **ptr, size_t size, unsigned int flags)
{
	const unsigned known = hipHostMallocPortable | hipHostMallocMapped |
			       hipHostMallocWriteCombined | hipHostMallocNumaUser |
			       hipHostMallocCoherent | hipHostMallocNonCoherent;
	if (!ptr || (flags & ~known))
		GS_HIP_RET(hipErrorInvalidValue);
	if (!size) {
		*ptr = NULL;
		return hipSuccess;
	}
	if (!gs_hip_ctx())
		GS_HIP_RET(hipErrorOutOfMemory);
	GS_HIP_RET(gs_hip_err(gs_sim_host_alloc(ptr, size, flags)));
}

hipError_t hipMallocHost(void **ptr, size_t size)
{
	return hipHostMalloc(ptr, size, 0);
}

hipError_t hipHostAlloc(void **ptr, size_t size, unsigned int flags)
{
	return hipHostMalloc(ptr, size, flags);
}

/* The runtime waits for the device before releasing pinned memory a copy
 * may still read. */
hipError_t hipHostFree(void *ptr)
{
	if (!ptr)
		return hipSuccess;
	if (gs_sim_mem_kind(ptr, NULL, NULL, NULL, NULL) != GS_SIM_M_PINNED)
		GS_HIP_RET(hipErrorInvalidValue);
	gs_sim_ctx_t *ctx = gs_hip_ctx();
	if (ctx)
		gs_sim_ctx_sync(ctx);
	GS_HIP_RET(gs_hip_err(gs_sim_host_free(ptr)));
}

hipError_t hipFreeHost(void *ptr)
{
	return hipHostFree(ptr);
}

hipError_t hipHostRegister(void *hostPtr, size_t sizeBytes, unsigned int flags)
{
	gs_sim_err_t e = gs_sim_host_register(hostPtr, sizeBytes, flags);
	GS_HIP_RET(e == GS_SIM_EINVAL && hostPtr && sizeBytes ? hipErrorHostMemoryAlreadyRegistered
							       : gs_hip_err(e));
}

hipError_t hipHostUnregister(void *hostPtr)
{
	GS_HIP_RET(gs_sim_host_unregister(hostPtr) ? hipErrorHostMemoryNotRegistered : hipSuccess);
}

hipError_t hipHostGetDevicePointer(void **devPtr, void *hstPtr, unsigned int flags)
{
	if (!devPtr || flags || gs_sim_mem_kind(hstPtr, NULL, NULL, NULL, NULL) != GS_SIM_M_PINNED)
		GS_HIP_RET(hipErrorInvalidValue);
	*devPtr = hstPtr;
	return hipSuccess;
}

hipError_t hipHostGetFlags(unsigned int *flagsPtr, void *hostPtr)
{
	unsigned flags;
	if (!flagsPtr || gs_sim_mem_kind(hostPtr, NULL, NULL, NULL, &flags) != GS_SIM_M_PINNED)
		GS_HIP_RET(hipErrorInvalidValue);
	*flagsPtr = flags;
	return hipSuccess;
}

hipError_t hipMemGetInfo(size_t *free_b, size_t *total_b)
{
	gs_sim_mem_info(free_b, total_b);
	return hipSuccess;
}

hipError_t hipMemGetAddressRange(hipDeviceptr_t *pbase, size_t *psize, hipDeviceptr_t dptr)
{
	if (!gs_sim_front_range(dptr, pbase, psize))
		GS_HIP_RET(hipErrorNotFound);
	return hipSuccess;
}

/* Device memory, pinned host memory, or (5.2's answer for memory the
 * runtime does not know) hipErrorInvalidValue for pageable memory. */
hipError_t hipPointerGetAttributes(hipPointerAttribute_t *attributes, const void *ptr)
{
	void *base;
	size_t size;
	unsigned flags;
	if (!attributes || !ptr)
		GS_HIP_RET(hipErrorInvalidValue);
	int kind = gs_sim_mem_kind(ptr, &base, &size, NULL, &flags);
	if (kind == GS_SIM_M_PAGEABLE)
		GS_HIP_RET(hipErrorInvalidValue);
	memset(attributes, 0, sizeof(*attributes));
	attributes->device = 0;
	attributes->isManaged = 0;
	attributes->devicePointer = (void *)ptr;
	if (kind == GS_SIM_M_DEVICE) {
		attributes->memoryType = hipMemoryTypeDevice;
		attributes->hostPointer = NULL;
		attributes->allocationFlags = 0;
	} else {
		attributes->memoryType = hipMemoryTypeHost;
		attributes->hostPointer = (void *)ptr;
		attributes->allocationFlags = flags;
	}
	return hipSuccess;
}

/* ---- copies ---- */
hipError_t gs_hip_copy_work(gs_sim_work_t *w, void *dst, const void *src, size_t n,
			    hipMemcpyKind kind)
{
	if ((unsigned)kind > (unsigned)hipMemcpyDefault)
		return hipErrorInvalidMemcpyDirection;
	return gs_hip_err(gs_sim_front_copy_work(w, dst, src, n));
}

enum { SYNC, ASYNC };

/* The core of every 1D copy: the pointers' kinds decide staging and waiting. */
static hipError_t copy1d(void *dst, const void *src, size_t n, hipMemcpyKind kind, hipStream_t h,
			 gs_hip_dflt_t d, int mode)
{
	gs_sim_stream_t *s;
	gs_sim_work_t w;
	hipError_t r = gs_hip_stream(h, d, &s);
	if (r)
		return r;
	if (!n)
		return (unsigned)kind > (unsigned)hipMemcpyDefault ? hipErrorInvalidMemcpyDirection
								   : hipSuccess;
	if ((r = gs_hip_copy_work(&w, dst, src, n, kind)))
		return r;
	return gs_hip_err(gs_sim_front_copy(s, &w, mode == SYNC));
}

#define X(d) gs_hip_ret(copy1d(dst, src, sizeBytes, kind, NULL, d, SYNC))
GS_HIP_PAIR(hipMemcpy, (void *dst, const void *src, size_t sizeBytes, hipMemcpyKind kind), X)
#undef X

#define X(d) gs_hip_ret(copy1d(dst, src, sizeBytes, kind, stream, d, ASYNC))
GS_HIP_PAIR(hipMemcpyAsync, (void *dst, const void *src, size_t sizeBytes, hipMemcpyKind kind,
			     hipStream_t stream), X)
#undef X

/* The typed copies insist that their device side is device memory. */
static hipError_t typed_copy(void *dst, bool dst_dev, const void *src, bool src_dev, size_t n,
			     hipMemcpyKind kind, hipStream_t h, int mode)
{
	hipError_t r = gs_hip_err(gs_sim_front_typed(dst, dst_dev, src, src_dev, n));
	return r ? r : copy1d(dst, src, n, kind, h, GS_HIP_NULL, mode);
}

hipError_t hipMemcpyHtoD(hipDeviceptr_t dst, void *src, size_t sizeBytes)
{
	GS_HIP_RET(typed_copy(dst, true, src, false, sizeBytes, hipMemcpyHostToDevice, NULL, SYNC));
}

hipError_t hipMemcpyDtoH(void *dst, hipDeviceptr_t src, size_t sizeBytes)
{
	GS_HIP_RET(typed_copy(dst, false, src, true, sizeBytes, hipMemcpyDeviceToHost, NULL, SYNC));
}

hipError_t hipMemcpyDtoD(hipDeviceptr_t dst, hipDeviceptr_t src, size_t sizeBytes)
{
	GS_HIP_RET(typed_copy(dst, true, src, true, sizeBytes, hipMemcpyDeviceToDevice, NULL, SYNC));
}

hipError_t hipMemcpyHtoDAsync(hipDeviceptr_t dst, void *src, size_t sizeBytes, hipStream_t stream)
{
	GS_HIP_RET(typed_copy(dst, true, src, false, sizeBytes, hipMemcpyHostToDevice, stream, ASYNC));
}

hipError_t hipMemcpyDtoHAsync(void *dst, hipDeviceptr_t src, size_t sizeBytes, hipStream_t stream)
{
	GS_HIP_RET(typed_copy(dst, false, src, true, sizeBytes, hipMemcpyDeviceToHost, stream, ASYNC));
}

hipError_t hipMemcpyDtoDAsync(hipDeviceptr_t dst, hipDeviceptr_t src, size_t sizeBytes,
			      hipStream_t stream)
{
	GS_HIP_RET(typed_copy(dst, true, src, true, sizeBytes, hipMemcpyDeviceToDevice, stream, ASYNC));
}

/* ---- memsets ---- */
hipError_t gs_hip_memset_work(gs_sim_work_t *w, void *dst, size_t pitch, unsigned value,
			      unsigned elsize, size_t width, size_t height)
{
	return gs_hip_err(gs_sim_front_memset_work(w, dst, pitch, value, elsize, width, height));
}

static hipError_t memset_impl(void *dst, unsigned value, unsigned elsize, size_t count,
			      hipStream_t h, gs_hip_dflt_t d, int mode)
{
	gs_sim_stream_t *s;
	gs_sim_work_t w;
	hipError_t r = gs_hip_stream(h, d, &s);
	if (r)
		return r;
	if (!count)
		return hipSuccess;
	if ((r = gs_hip_memset_work(&w, dst, 0, value, elsize, count, 1)))
		return r;
	return gs_hip_err(gs_sim_front_submit(s, &w, mode == SYNC));
}

/* hipMemset sets bytes to (unsigned char)value. */
#define X(d) gs_hip_ret(memset_impl(dst, (unsigned char)value, 1, sizeBytes, NULL, d, SYNC))
GS_HIP_PAIR(hipMemset, (void *dst, int value, size_t sizeBytes), X)
#undef X

hipError_t hipMemsetAsync(void *dst, int value, size_t sizeBytes, hipStream_t stream)
{
	GS_HIP_RET(memset_impl(dst, (unsigned char)value, 1, sizeBytes, stream, GS_HIP_NULL, ASYNC));
}

hipError_t hipMemsetD8(hipDeviceptr_t dest, unsigned char value, size_t count)
{
	GS_HIP_RET(memset_impl(dest, value, 1, count, NULL, GS_HIP_NULL, SYNC));
}

hipError_t hipMemsetD16(hipDeviceptr_t dest, unsigned short value, size_t count)
{
	GS_HIP_RET(memset_impl(dest, value, 2, count, NULL, GS_HIP_NULL, SYNC));
}

hipError_t hipMemsetD32(hipDeviceptr_t dest, int value, size_t count)
{
	GS_HIP_RET(memset_impl(dest, (unsigned)value, 4, count, NULL, GS_HIP_NULL, SYNC));
}

hipError_t hipMemsetD8Async(hipDeviceptr_t dest, unsigned char value, size_t count,
			    hipStream_t stream)
{
	GS_HIP_RET(memset_impl(dest, value, 1, count, stream, GS_HIP_NULL, ASYNC));
}

hipError_t hipMemsetD16Async(hipDeviceptr_t dest, unsigned short value, size_t count,
			     hipStream_t stream)
{
	GS_HIP_RET(memset_impl(dest, value, 2, count, stream, GS_HIP_NULL, ASYNC));
}

hipError_t hipMemsetD32Async(hipDeviceptr_t dst, int value, size_t count, hipStream_t stream)
{
	GS_HIP_RET(memset_impl(dst, (unsigned)value, 4, count, stream, GS_HIP_NULL, ASYNC));
}
