/*
 * The element hooks: kernel launches, asynchronous copies and memsets.
 * Each fills the per-thread scratch record (arguments copied now, since
 * callers reuse their arrays) and hands it to the engine, which holds it,
 * replays it from a graph, or submits it at once through gs_hip_ops.submit
 * with the caller's own arguments (rec->orig), so a pass-through is exactly
 * the call the application made.  What cannot be a graph node (no layout,
 * launch events, ext flags, global sizes that are not multiples of the
 * local size, pageable or managed host memory) is a boundary: its stream is
 * submitted first and the real function is called with the same arguments.
 */
#include "gs_config.h"
#include "hip_internal.h"
#include "gs_submit.h"
#include "gs_self.h"

static hipError_t gs_hip_boundary_why(const gs_hip_orig_t *o, gs_hip_skey_t k,
				     gs_flush_reason_t why, const char *api)
{
	gs_engine_flush_stream(k.handle, k.ctx, k.flags, why, api);
	return gs_hip_call_orig(o);
}

/* An element the record cannot express: a boundary of its stream. */
static hipError_t gs_hip_boundary(const gs_hip_orig_t *o, gs_hip_skey_t k, const char *api)
{
	return gs_hip_boundary_why(o, k, GS_FLUSH_ATTR, api);
}

/* Hand a filled record to the engine, with the caller's own arguments. */
static hipError_t gs_hip_hold(gs_rec_t *r, const gs_hip_orig_t *o, gs_hip_skey_t k, const char *api)
{
	r->ctx = k.ctx;
	r->orig = o;
	gs_rec_seal(r);
	return (hipError_t)gs_engine_launch(k.handle, k.ctx, k.flags, r, api);
}

/* A kernel launch of any of the three forms. */
static hipError_t gs_hip_kernel_raw(const gs_hip_orig_t *o, const void *func, unsigned api,
				const uint32_t grid[3], const uint32_t block[3], size_t shmem,
				hipStream_t stream, int spt, void **params, void **extra,
				const char *name)
{
	gs_hip_skey_t k = gs_hip_stream_key(stream, spt);
	const gs_layout_t *l = NULL;
	const void *img = NULL;
	size_t n = 0;
	unsigned fl = api;
	if (params && extra)
		return gs_hip_boundary(o, k, name);
	if (params) {
		if (!(l = gs_hip_layout_of(func)))
			return gs_hip_boundary(o, k, name);
		n = l->total;
	} else if (extra) {
		if (gs_hip_extra_parse(extra, &img, &n))
			return gs_hip_boundary(o, k, name);
		fl |= GS_HIP_F_EXTRA;
	} else {
		fl |= GS_HIP_F_NOARGS;
	}
	gs_rec_t *r;
	if (shmem > UINT32_MAX || n > (1u << 20) || !(r = gs_rec_scratch((uint32_t)n)))
		return gs_hip_boundary(o, k, name);
	r->kind = GS_REC_KERNEL;
	r->nbytes = (uint32_t)n;
	r->shmem = (uint32_t)shmem;
	memcpy(r->grid, grid, sizeof(r->grid));
	memcpy(r->block, block, sizeof(r->block));
	r->flags = fl;
	r->func = (void *)func;
	r->layout = l;
	if (l) {
		for (uint32_t i = 0; i < l->nargs; i++) {
			if (!params[i])
				return gs_hip_boundary(o, k, name); /* the runtime will say why */
			memcpy(r->args + l->arg[i].off, params[i], l->arg[i].size);
		}
	} else if (n) {
		memcpy(r->args, img, n);
	}
	gs_hip_fn_held(func, shmem);
	return gs_hip_hold(r, o, k, name);
}

/* The same, timed (GRAPHSHIM_SELFTIME, gs_self.h). */
static hipError_t gs_hip_kernel(const gs_hip_orig_t *o, const void *func, unsigned api,
				const uint32_t grid[3], const uint32_t block[3], size_t shmem,
				hipStream_t stream, int spt, void **params, void **extra,
				const char *name)
{
	gs_self_call_t sc;
	gs_self_call_begin(&sc);
	hipError_t rc = gs_hip_kernel_raw(o, func, api, grid, block, shmem, stream, spt, params,
					  extra, name);
	gs_self_call_end(&sc);
	return rc;
}

GS_EXPORT hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gridDimX, unsigned int gridDimY,
					   unsigned int gridDimZ, unsigned int blockDimX,
					   unsigned int blockDimY, unsigned int blockDimZ,
					   unsigned int sharedMemBytes, hipStream_t stream,
					   void **kernelParams, void **extra)
{
	gs_hip_orig_t o = {.api = GS_HIP_API_MODULE, .stream = stream};
	o.k.f = f;
	o.k.g[0] = gridDimX, o.k.g[1] = gridDimY, o.k.g[2] = gridDimZ;
	o.k.b[0] = blockDimX, o.k.b[1] = blockDimY, o.k.b[2] = blockDimZ;
	o.k.shmem = sharedMemBytes;
	o.k.params = kernelParams;
	o.k.extra = extra;
	GS_HIP_ADOPT_SCOPE_OF(o.stream, 0, true);
	if (gs_hip_bypass() || !gs_engine_active())
		return gs_hip_call_orig(&o);
	return gs_hip_kernel(&o, f, GS_HIP_F_MODULE, o.k.g, o.k.b, sharedMemBytes, o.stream, 0,
			     kernelParams, extra, "hipModuleLaunchKernel");
}

/*
 * The events a launch records: a stream holding a record of either (or a
 * wait on it) submits first (gs_event.h), else that older record would
 * reach the driver after this launch's and become the event's last.
 */
static void gs_hip_launch_events_use(hipEvent_t start, hipEvent_t stop, const char *name)
{
	if (start)
		gs_engine_event_use((uintptr_t)start, name);
	if (stop)
		gs_engine_event_use((uintptr_t)stop, name);
}

static hipError_t gs_hip_ext_launch(const gs_hip_orig_t *o, const char *name)
{
	if (gs_hip_bypass() || !gs_engine_active())
		return gs_hip_call_orig(o);
	uint32_t grid[3];
	if (o->k.start || o->k.stop || o->k.flags || gs_hip_ext_grid(o->k.g, o->k.b, grid)) {
		gs_hip_launch_events_use(o->k.start, o->k.stop, name);
		return gs_hip_boundary(o, gs_hip_stream_key(o->stream, 0), name);
	}
	return gs_hip_kernel(o, o->k.f, GS_HIP_F_EXT, grid, o->k.b, o->k.shmem, o->stream, 0,
			     o->k.params, o->k.extra, name);
}

GS_EXPORT hipError_t hipExtModuleLaunchKernel(hipFunction_t f, uint32_t globalWorkSizeX,
					      uint32_t globalWorkSizeY, uint32_t globalWorkSizeZ,
					      uint32_t localWorkSizeX, uint32_t localWorkSizeY,
					      uint32_t localWorkSizeZ, size_t sharedMemBytes,
					      hipStream_t hStream, void **kernelParams, void **extra,
					      hipEvent_t startEvent, hipEvent_t stopEvent, uint32_t flags)
{
	gs_hip_orig_t o = {.api = GS_HIP_API_EXT, .stream = hStream};
	o.k.f = f;
	o.k.g[0] = globalWorkSizeX, o.k.g[1] = globalWorkSizeY, o.k.g[2] = globalWorkSizeZ;
	o.k.b[0] = localWorkSizeX, o.k.b[1] = localWorkSizeY, o.k.b[2] = localWorkSizeZ;
	o.k.shmem = sharedMemBytes;
	o.k.params = kernelParams;
	o.k.extra = extra;
	o.k.start = startEvent;
	o.k.stop = stopEvent;
	o.k.flags = flags;
	GS_HIP_ADOPT_SCOPE_OF(o.stream, 0, true);
	return gs_hip_ext_launch(&o, "hipExtModuleLaunchKernel");
}

/* The C++ spelling libamdhip64 5.x exports (hip_ext.h has no extern "C"). */
hipError_t gs_hip_ext_mangled(hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t,
			      uint32_t, size_t, hipStream_t, void **, void **, hipEvent_t,
			      hipEvent_t, uint32_t)
	__asm__("_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j")
	__attribute__((alias("hipExtModuleLaunchKernel"), visibility("default")));

/* A launch that records events and is never held (ATTR): their holders, then its own stream. */
static void gs_hip_event_launch_flush(hipStream_t stream, hipEvent_t start, hipEvent_t stop,
				      const char *name)
{
	gs_hip_launch_events_use(start, stop, name);
	gs_hip_skey_t k = gs_hip_stream_key(stream, 0);
	gs_engine_flush_stream(k.handle, k.ctx, k.flags, GS_FLUSH_ATTR, name);
}

GS_EXPORT hipError_t hipExtLaunchKernel(const void *function_address, dim3 numBlocks, dim3 dimBlocks,
					void **args, size_t sharedMemBytes, hipStream_t stream,
					hipEvent_t startEvent, hipEvent_t stopEvent, int flags)
{
	bool bypass = gs_hip_bypass();
	if (!gs_hip_real.hipExtLaunchKernel)
		return hipErrorNotSupported;
	GS_HIP_ADOPT_SCOPE_OF(stream, 0, true);
	if (!bypass)
		gs_hip_event_launch_flush(stream, startEvent, stopEvent, "hipExtLaunchKernel");
	return gs_hip_real.hipExtLaunchKernel(function_address, numBlocks, dimBlocks, args,
					      sharedMemBytes, stream, startEvent, stopEvent, flags);
}

/* The deprecated twin: stream-ordered and never held (ATTR), with its own spelling too. */
GS_EXPORT hipError_t hipHccModuleLaunchKernel(hipFunction_t f, uint32_t globalWorkSizeX,
					      uint32_t globalWorkSizeY, uint32_t globalWorkSizeZ,
					      uint32_t localWorkSizeX, uint32_t localWorkSizeY,
					      uint32_t localWorkSizeZ, size_t sharedMemBytes,
					      hipStream_t hStream, void **kernelParams, void **extra,
					      hipEvent_t startEvent, hipEvent_t stopEvent)
{
	bool bypass = gs_hip_bypass();
	if (!gs_hip_real.hipHccModuleLaunchKernel)
		return hipErrorNotSupported;
	GS_HIP_ADOPT_SCOPE_OF(hStream, 0, true);
	if (!bypass)
		gs_hip_event_launch_flush(hStream, startEvent, stopEvent, "hipHccModuleLaunchKernel");
	return gs_hip_real.hipHccModuleLaunchKernel(f, globalWorkSizeX, globalWorkSizeY, globalWorkSizeZ,
						    localWorkSizeX, localWorkSizeY, localWorkSizeZ,
						    sharedMemBytes, hStream, kernelParams, extra,
						    startEvent, stopEvent);
}

hipError_t gs_hip_hcc_mangled(hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t,
			      uint32_t, size_t, hipStream_t, void **, void **, hipEvent_t, hipEvent_t)
	__asm__("_Z24hipHccModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_")
	__attribute__((alias("hipHccModuleLaunchKernel"), visibility("default")));

static hipError_t gs_hip_launch(const void *function_address, dim3 numBlocks, dim3 dimBlocks,
				void **args, size_t sharedMemBytes, hipStream_t stream, int spt)
{
	gs_hip_orig_t o = {.api = spt ? GS_HIP_API_LAUNCH_SPT : GS_HIP_API_LAUNCH, .stream = stream};
	o.l.f = function_address;
	o.l.grid = numBlocks;
	o.l.block = dimBlocks;
	o.l.args = args;
	o.l.shmem = sharedMemBytes;
	GS_HIP_ADOPT_SCOPE_OF(o.stream, spt, true);
	stream = o.stream;
	if (gs_hip_bypass() || !gs_engine_active())
		return gs_hip_call_orig(&o);
	const char *name = spt ? "hipLaunchKernel_spt" : "hipLaunchKernel";
	const gs_layout_t *l = gs_hip_layout_of(function_address);
	if (!l || (!args && l->nargs))
		return gs_hip_boundary(&o, gs_hip_stream_key(stream, spt), name);
	uint32_t g[3] = {numBlocks.x, numBlocks.y, numBlocks.z};
	uint32_t b[3] = {dimBlocks.x, dimBlocks.y, dimBlocks.z};
	/* A kernel without parameters still goes by its (empty) layout. */
	void *none[1] = {NULL};
	return gs_hip_kernel(&o, function_address, GS_HIP_F_STUB, g, b, sharedMemBytes, stream, spt,
			     args ? args : none, NULL, name);
}

GS_EXPORT hipError_t hipLaunchKernel(const void *function_address, dim3 numBlocks, dim3 dimBlocks,
				     void **args, size_t sharedMemBytes, hipStream_t stream)
{
	return gs_hip_launch(function_address, numBlocks, dimBlocks, args, sharedMemBytes, stream, 0);
}

GS_EXPORT hipError_t hipLaunchKernel_spt(const void *function_address, dim3 numBlocks, dim3 dimBlocks,
					 void **args, size_t sharedMemBytes, hipStream_t stream)
{
	return gs_hip_launch(function_address, numBlocks, dimBlocks, args, sharedMemBytes, stream, 1);
}

/* 2: device (or pinned, device-visible) memory a graph node may name; 1: pinned host; 0: neither. */
static int gs_hip_ptr_kind(const void *p)
{
	/*
	 * A failed probe sets the runtime's last error, which the application
	 * may read: probe only when no error is pending, and clear what the
	 * probe left, so hipGetLastError answers as it would without us.
	 */
	if (!gs_hip_real.hipPeekAtLastError || !gs_hip_real.hipGetLastError ||
	    GS_HIP_REAL(gs_hip_real.hipPeekAtLastError()) != hipSuccess)
		return 0;
	hipPointerAttribute_t a;
	memset(&a, 0, sizeof(a));
	if (GS_HIP_REAL(gs_hip_real.hipPointerGetAttributes(&a, p)) != hipSuccess) {
		GS_HIP_REAL(gs_hip_real.hipGetLastError());
		return 0;
	}
	if (a.isManaged)
		return 0; /* migrations and host access make these boundaries */
#if HIP_VERSION_MAJOR >= 6
	int type = (int)a.type;
#else
	int type = (int)a.memoryType;
#endif
	return type == hipMemoryTypeDevice ? 2 : type == hipMemoryTypeHost ? 1 : 0;
}

/*
 * The kind of [p, p+n) (as gs_hip_ptr_kind) when one allocation holds all
 * of it, or 0.  graphshim holds a copy or a memset only when the runtime
 * would accept it: a held operation returns success at once, and its size
 * and pointers are operands that drift from one pass to the next.
 */
static int gs_hip_span(const void *p, size_t n)
{
	int kind = n ? gs_hip_ptr_kind(p) : 0;
	hipDeviceptr_t base = NULL;
	size_t size = 0;
	if (!kind)
		return 0;
	if (gs_hip_real.hipMemGetAddressRange &&
	    GS_HIP_REAL(gs_hip_real.hipMemGetAddressRange(&base, &size, (hipDeviceptr_t)p)) ==
		    hipSuccess) {
		uintptr_t b = (uintptr_t)base, a = (uintptr_t)p;
		return a >= b && n <= size && a - b <= size - n ? kind : 0;
	}
	GS_HIP_REAL(gs_hip_real.hipGetLastError()); /* what the failed probe left */
	/* No range to be had: pinned memory at both ends, as much as can be said. */
	return kind == 1 && gs_hip_ptr_kind((const char *)p + n - 1) == 1 ? kind : 0;
}

static hipError_t gs_hip_copy(const gs_hip_orig_t *o, int spt, const char *name)
{
	if (gs_hip_bypass() || !gs_engine_active())
		return gs_hip_call_orig(o);
	gs_hip_skey_t k = gs_hip_stream_key(o->stream, spt);
	hipMemcpyKind kind = o->c.kind;
	int ks = gs_hip_span(o->c.src, o->c.bytes), kd = gs_hip_span(o->c.dst, o->c.bytes);
	bool ok;
	switch (kind) {
	case hipMemcpyDeviceToDevice:
		ok = ks == 2 && kd == 2;
		break;
	case hipMemcpyHostToDevice:
		ok = ks == 1 && kd;
		break;
	case hipMemcpyDeviceToHost:
		ok = ks && kd == 1;
		break;
	case hipMemcpyDefault:
		ok = ks && kd;
		break;
	default:
		ok = false;
	}
	gs_rec_t *r;
	if (!ok || !o->c.bytes || !(r = gs_rec_scratch(16)))
		return gs_hip_boundary(o, k, name);
	r->kind = GS_REC_COPY;
	r->nbytes = 16;
	r->flags = GS_HIP_F_COPY;
	r->aux[0] = o->c.bytes;
	r->aux[1] = (uint64_t)kind;
	uint64_t d = (uintptr_t)o->c.dst, s = (uintptr_t)o->c.src;
	memcpy(r->args, &d, 8);
	memcpy(r->args + 8, &s, 8);
	return gs_hip_hold(r, o, k, name);
}

/* The caller's copy, its stream redirected where an adopted stream's work goes. */
#define GS_HIP_COPY_ORIG(API, D, S, N, K, STREAM, SPT)                         \
	gs_hip_orig_t o = {.api = (API), .stream = (STREAM)};                 \
	o.c.dst = (D), o.c.src = (S), o.c.bytes = (N), o.c.kind = (K);        \
	GS_HIP_ADOPT_SCOPE_OF(o.stream, (SPT), true)

GS_EXPORT hipError_t hipMemcpyAsync(void *dst, const void *src, size_t sizeBytes, hipMemcpyKind kind,
				    hipStream_t stream)
{
	GS_HIP_COPY_ORIG(GS_HIP_API_MEMCPY, dst, src, sizeBytes, kind, stream, 0);
	return gs_hip_copy(&o, 0, "hipMemcpyAsync");
}

GS_EXPORT hipError_t hipMemcpyAsync_spt(void *dst, const void *src, size_t sizeBytes,
					hipMemcpyKind kind, hipStream_t stream)
{
	GS_HIP_COPY_ORIG(GS_HIP_API_MEMCPY_SPT, dst, src, sizeBytes, kind, stream, 1);
	return gs_hip_copy(&o, 1, "hipMemcpyAsync_spt");
}

GS_EXPORT hipError_t hipMemcpyHtoDAsync(hipDeviceptr_t dst, void *src, size_t sizeBytes,
					hipStream_t stream)
{
	GS_HIP_COPY_ORIG(GS_HIP_API_HTOD, dst, src, sizeBytes, hipMemcpyHostToDevice, stream, 0);
	return gs_hip_copy(&o, 0, "hipMemcpyHtoDAsync");
}

GS_EXPORT hipError_t hipMemcpyDtoHAsync(void *dst, hipDeviceptr_t src, size_t sizeBytes,
					hipStream_t stream)
{
	GS_HIP_COPY_ORIG(GS_HIP_API_DTOH, dst, src, sizeBytes, hipMemcpyDeviceToHost, stream, 0);
	return gs_hip_copy(&o, 0, "hipMemcpyDtoHAsync");
}

GS_EXPORT hipError_t hipMemcpyDtoDAsync(hipDeviceptr_t dst, hipDeviceptr_t src, size_t sizeBytes,
					hipStream_t stream)
{
	GS_HIP_COPY_ORIG(GS_HIP_API_DTOD, dst, src, sizeBytes, hipMemcpyDeviceToDevice, stream, 0);
	return gs_hip_copy(&o, 0, "hipMemcpyDtoDAsync");
}

static hipError_t gs_hip_set(const gs_hip_orig_t *o, unsigned flag, unsigned esize, const char *name)
{
	if (gs_hip_bypass() || !gs_engine_active())
		return gs_hip_call_orig(o);
	gs_hip_skey_t k = gs_hip_stream_key(o->stream, 0);
	gs_rec_t *r;
	if (!o->s.count || o->s.count > SIZE_MAX / esize ||
	    gs_hip_span(o->s.dst, o->s.count * esize) != 2 || !(r = gs_rec_scratch(16)))
		return gs_hip_boundary(o, k, name);
	r->kind = GS_REC_SET;
	r->nbytes = 16;
	r->flags = flag;
	r->aux[0] = o->s.count;
	r->aux[1] = esize;
	uint64_t d = (uintptr_t)o->s.dst, v = o->s.value;
	memcpy(r->args, &d, 8);
	memcpy(r->args + 8, &v, 8);
	return gs_hip_hold(r, o, k, name);
}

#define GS_HIP_SET_ORIG(API, D, V, N, STREAM)                                  \
	gs_hip_orig_t o = {.api = (API), .stream = (STREAM)};                 \
	o.s.dst = (D), o.s.value = (V), o.s.count = (N);                      \
	GS_HIP_ADOPT_SCOPE_OF(o.stream, 0, true)

GS_EXPORT hipError_t hipMemsetAsync(void *dst, int value, size_t sizeBytes, hipStream_t stream)
{
	/* The runtime sets bytes to (unsigned char)value; the record keeps the int for exactness. */
	GS_HIP_SET_ORIG(GS_HIP_API_MEMSET, dst, (uint32_t)value, sizeBytes, stream);
	return gs_hip_set(&o, GS_HIP_F_SETB, 1, "hipMemsetAsync");
}

GS_EXPORT hipError_t hipMemsetD8Async(hipDeviceptr_t dest, unsigned char value, size_t count,
				      hipStream_t stream)
{
	GS_HIP_SET_ORIG(GS_HIP_API_MEMSET8, dest, value, count, stream);
	return gs_hip_set(&o, GS_HIP_F_SET8, 1, "hipMemsetD8Async");
}

GS_EXPORT hipError_t hipMemsetD16Async(hipDeviceptr_t dest, unsigned short value, size_t count,
				       hipStream_t stream)
{
	GS_HIP_SET_ORIG(GS_HIP_API_MEMSET16, dest, value, count, stream);
	return gs_hip_set(&o, GS_HIP_F_SET16, 2, "hipMemsetD16Async");
}

GS_EXPORT hipError_t hipMemsetD32Async(hipDeviceptr_t dst, int value, size_t count, hipStream_t stream)
{
	GS_HIP_SET_ORIG(GS_HIP_API_MEMSET32, dst, (uint32_t)value, count, stream);
	return gs_hip_set(&o, GS_HIP_F_SET32, 4, "hipMemsetD32Async");
}

/*
 * hipFuncSetAttribute: held launches of func were accepted with the limits
 * in force when they were first launched, and must run with them.  Raising
 * or keeping the dynamic shared memory limit at or above what every held
 * launch of func asks for changes nothing they depend on (frameworks set it
 * before every launch); anything else submits all held work first.
 */
GS_EXPORT hipError_t hipFuncSetAttribute(const void *func, hipFuncAttribute attr, int value)
{
	bool bypass = gs_hip_bypass();
	if (GS_UNLIKELY(!gs_hip_real.hipFuncSetAttribute))
		return hipErrorNotSupported;
	if (!bypass && !(attr == hipFuncAttributeMaxDynamicSharedMemorySize && value >= 0 &&
			 (uint64_t)value >= gs_hip_fn_held_shmem(func)))
		gs_engine_flush_all(GS_FLUSH_CONTEXT, "hipFuncSetAttribute");
	return gs_hip_real.hipFuncSetAttribute(func, attr, value);
}

/*
 * An event record or a wait on an event: a mark of the stream's step
 * (gs_rec.h), submitted at its own call after the stream's held work, so
 * it ends no step and no record is ever held (see cu_launch.c).  Streams
 * the engine does not hold on, and calls with no event, are boundaries.
 * A wait may first adopt its stream into the one the event was recorded on
 * (hip_adopt.c); either mark is then made where its stream's work goes.
 */
static hipError_t gs_hip_mark(gs_hip_orig_t *o, int spt, unsigned which, const char *name)
{
	if (which == GS_HIP_MARK_WAIT && gs_config.adopt && !gs_hip_bypass() && gs_engine_active())
		gs_hip_adopt_try(o->stream, spt, o->e.ev);
	GS_HIP_ADOPT_SCOPE_OF(o->stream, spt, false);
	if (gs_hip_bypass() || !gs_engine_active())
		return gs_hip_call_orig(o);
	gs_hip_skey_t k = gs_hip_stream_key(o->stream, spt);
	gs_rec_t *r;
	if (!o->e.ev || (k.flags & GS_STREAM_PASSTHRU) || !(r = gs_rec_scratch(8))) {
		gs_engine_event_use((uintptr_t)o->e.ev, name);
		return gs_hip_boundary_why(o, k, GS_FLUSH_EVENT, name);
	}
	r->kind = GS_REC_MARK;
	r->nbytes = 8;
	r->aux[0] = which;
	r->aux[1] = o->e.flags;
	r->aux[3] = which == GS_HIP_MARK_RECORD ? GS_MARK_RECORD : GS_MARK_WAIT;
	uint64_t ev = (uintptr_t)o->e.ev;
	memcpy(r->args, &ev, 8);
	return gs_hip_hold(r, o, k, name);
}

GS_EXPORT hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream)
{
	gs_hip_orig_t o = {.api = GS_HIP_API_EVRECORD, .stream = stream};
	o.e.ev = event;
	return gs_hip_mark(&o, 0, GS_HIP_MARK_RECORD, "hipEventRecord");
}

GS_EXPORT hipError_t hipStreamWaitEvent(hipStream_t stream, hipEvent_t event, unsigned int flags)
{
	gs_hip_orig_t o = {.api = GS_HIP_API_WAIT, .stream = stream};
	o.e.ev = event, o.e.flags = flags;
	return gs_hip_mark(&o, 0, GS_HIP_MARK_WAIT, "hipStreamWaitEvent");
}

GS_EXPORT hipError_t hipStreamWaitEvent_spt(hipStream_t stream, hipEvent_t event, unsigned int flags)
{
	gs_hip_orig_t o = {.api = GS_HIP_API_WAIT_SPT, .stream = stream};
	o.e.ev = event, o.e.flags = flags;
	return gs_hip_mark(&o, 1, GS_HIP_MARK_WAIT, "hipStreamWaitEvent_spt");
}

/*
 * Stream-ordered allocation (see cu_launch.c): an allocation submits
 * nothing, on the stream where its stream's work goes; a free is a mark
 * (GS_MARK_FREE) held with its stream's records and sent after them.
 */
GS_EXPORT hipError_t hipMallocAsync(void **p, size_t size, hipStream_t stream)
{
	(void)gs_hip_bypass(); /* resolves the real functions on first use */
	if (GS_UNLIKELY(!gs_hip_real.hipMallocAsync))
		return hipErrorNotSupported;
	GS_HIP_ADOPT_SCOPE_OF(stream, 0, true);
	return gs_hip_real.hipMallocAsync(p, size, stream);
}

GS_EXPORT hipError_t hipMallocFromPoolAsync(void **p, size_t size, hipMemPool_t pool, hipStream_t stream)
{
	(void)gs_hip_bypass();
	if (GS_UNLIKELY(!gs_hip_real.hipMallocFromPoolAsync))
		return hipErrorNotSupported;
	GS_HIP_ADOPT_SCOPE_OF(stream, 0, true);
	return gs_hip_real.hipMallocFromPoolAsync(p, size, pool, stream);
}

GS_EXPORT hipError_t hipFreeAsync(void *p, hipStream_t stream)
{
	bool bypass = gs_hip_bypass();
	if (GS_UNLIKELY(!gs_hip_real.hipFreeAsync))
		return hipErrorNotSupported;
	gs_hip_orig_t o = {.api = GS_HIP_API_FREE, .stream = stream};
	o.f.p = p;
	GS_HIP_ADOPT_SCOPE_OF(o.stream, 0, true);
	if (bypass || !gs_engine_active())
		return gs_hip_call_orig(&o);
	gs_hip_skey_t k = gs_hip_stream_key(o.stream, 0);
	gs_rec_t *r = p && !(k.flags & GS_STREAM_PASSTHRU) ? gs_rec_scratch(8) : NULL;
	if (!r)
		return gs_hip_boundary_why(&o, k, GS_FLUSH_FREE, "hipFreeAsync");
	r->kind = GS_REC_MARK;
	r->nbytes = 8;
	r->aux[0] = GS_HIP_MARK_FREE;
	r->aux[3] = GS_MARK_FREE;
	uint64_t a = (uintptr_t)p;
	memcpy(r->args, &a, 8);
	return gs_hip_hold(r, &o, k, "hipFreeAsync");
}

/* ---- events whose record a stream may hold (gs_event.h) -------------------- */

/*
 * An engine call about event ev (any event: `any`), unless graphshim is
 * bypassed; returns whether it is.  A query, elapsed time, destroying an
 * event or sharing it with another process first has the stream that
 * holds its record, if any, submit (gs_engine_event_use; sharing also
 * keeps it from being held again, gs_engine_event_share); an
 * application's graph may record or wait on any event.
 */
static bool gs_hip_event_call(void (*fn)(uint64_t, const char *), hipEvent_t ev, bool any,
			      const char *name)
{
	bool bypass = gs_hip_bypass(); /* resolves the runtime on first use */
	if (!bypass && gs_engine_active() && (ev || any))
		fn((uintptr_t)ev, name);
	return bypass;
}

static bool gs_hip_event_use(hipEvent_t ev, bool any, const char *name)
{
	return gs_hip_event_call(gs_engine_event_use, ev, any, name);
}

#define GS_HIP_EVENT_CALL(name, use, call)                                   \
	use;                                                                 \
	if (GS_UNLIKELY(!gs_hip_real.name))                                  \
		return hipErrorNotSupported;                                 \
	return gs_hip_real.name call

GS_EXPORT hipError_t hipEventQuery(hipEvent_t ev)
{
	if (!gs_hip_bypass() && ev && gs_engine_active() &&
	    gs_engine_event_query((uintptr_t)ev, "hipEventQuery"))
		return hipErrorNotReady;
	if (GS_UNLIKELY(!gs_hip_real.hipEventQuery))
		return hipErrorNotSupported;
	return gs_hip_real.hipEventQuery(ev);
}

/* What the synchronization waits for goes first; other threads' streams keep theirs. */
GS_EXPORT hipError_t hipEventSynchronize(hipEvent_t ev)
{
	if (!gs_hip_bypass() && gs_engine_active())
		gs_engine_event_synced((uintptr_t)ev, "hipEventSynchronize");
	if (GS_UNLIKELY(!gs_hip_real.hipEventSynchronize))
		return hipErrorNotSupported;
	return gs_hip_real.hipEventSynchronize(ev);
}

GS_EXPORT hipError_t hipEventDestroy(hipEvent_t ev)
{
	/* Held: destroyed once its holders submit (gs_engine_event_destroy). */
	if (!gs_hip_bypass() && ev && gs_engine_active() &&
	    gs_engine_event_destroy((uintptr_t)ev, "hipEventDestroy"))
		return hipSuccess;
	if (GS_UNLIKELY(!gs_hip_real.hipEventDestroy))
		return hipErrorNotSupported;
	return gs_hip_real.hipEventDestroy(ev);
}

GS_EXPORT hipError_t hipEventElapsedTime(float *ms, hipEvent_t a, hipEvent_t b)
{
	GS_HIP_EVENT_CALL(hipEventElapsedTime,
			  (gs_hip_event_use(a, false, "hipEventElapsedTime"),
			   gs_hip_event_use(b, false, "hipEventElapsedTime")),
			  (ms, a, b));
}

GS_EXPORT hipError_t hipIpcGetEventHandle(hipIpcEventHandle_t *h, hipEvent_t ev)
{
	GS_HIP_EVENT_CALL(hipIpcGetEventHandle,
			  gs_hip_event_call(gs_engine_event_share, ev, false, "hipIpcGetEventHandle"),
			  (h, ev));
}

GS_EXPORT hipError_t hipGraphLaunch(hipGraphExec_t g, hipStream_t stream)
{
	GS_HIP_ADOPT_SCOPE_OF(stream, 0, true);
	if (!gs_hip_event_use(NULL, true, "hipGraphLaunch")) {
		gs_hip_skey_t k = gs_hip_stream_key(stream, 0);
		gs_engine_flush_stream(k.handle, k.ctx, k.flags, GS_FLUSH_OTHER, "hipGraphLaunch");
	}
	if (GS_UNLIKELY(!gs_hip_real.hipGraphLaunch))
		return hipErrorNotSupported;
	gs_submit_drain();
	return gs_hip_real.hipGraphLaunch(g, stream);
}
