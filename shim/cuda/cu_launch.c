/*
 * The sequence elements: kernel launches (cuLaunchKernel, cuLaunchKernelEx
 * with the launch attributes a graph node can carry, cu_attrs.c), async
 * copies that a graph memcpy node can carry (device-to-device and pinned
 * host memory) and 8/16/32-bit async memsets.  Each hook copies the
 * operation into the per-thread scratch record and hands it to the engine,
 * with the caller's own arguments attached so a pass-through submission
 * calls the driver exactly as the application did.  Anything the record
 * cannot express (an attribute no node carries, pageable memory, an
 * unreadable parameter layout, a launch the driver would reject) is a
 * boundary: its stream's held work is submitted and the call passes through.
 */
#include "cu_internal.h"
#include "gs_lane.h"
#include "gs_self.h"
#include "gs_stats.h"
#include "gs_submit.h"

/* ---- the original call --------------------------------------------------- */

static CUresult gs_cu_orig_call_raw(const gs_cu_orig_t *o)
{
	const gs_cu_real_t *R = &gs_cu_real;
	switch (o->op) {
	case GS_CU_OP_LAUNCH: {
		gs_cu_pfn_cuLaunchKernel fn = o->pt ? R->cuLaunchKernel_ptsz : R->cuLaunchKernel;
		if (!fn)
			return gs_cu_missing(o->pt ? GS_CU_IDX_cuLaunchKernel_ptsz
						   : GS_CU_IDX_cuLaunchKernel);
		return fn(o->u.k.f, o->u.k.grid[0], o->u.k.grid[1], o->u.k.grid[2],
			  o->u.k.block[0], o->u.k.block[1], o->u.k.block[2], o->u.k.shmem,
			  o->u.k.s, o->u.k.kp, o->u.k.extra);
	}
	case GS_CU_OP_LAUNCHEX: {
		gs_cu_pfn_cuLaunchKernelEx fn = o->pt ? R->cuLaunchKernelEx_ptsz : R->cuLaunchKernelEx;
		if (!fn)
			return gs_cu_missing(o->pt ? GS_CU_IDX_cuLaunchKernelEx_ptsz
						   : GS_CU_IDX_cuLaunchKernelEx);
		return fn(o->u.k.cfg, o->u.k.f, o->u.k.kp, o->u.k.extra);
	}
	case GS_CU_OP_LAUNCHCOOP: {
		gs_cu_pfn_cuLaunchCooperativeKernel fn =
			o->pt ? R->cuLaunchCooperativeKernel_ptsz : R->cuLaunchCooperativeKernel;
		if (!fn)
			return gs_cu_missing(o->pt ? GS_CU_IDX_cuLaunchCooperativeKernel_ptsz
						   : GS_CU_IDX_cuLaunchCooperativeKernel);
		return fn(o->u.k.f, o->u.k.grid[0], o->u.k.grid[1], o->u.k.grid[2],
			  o->u.k.block[0], o->u.k.block[1], o->u.k.block[2], o->u.k.shmem,
			  o->u.k.s, o->u.k.kp);
	}
	case GS_CU_OP_COPY: {
		const CUdeviceptr d = o->u.c.dst, s = o->u.c.src;
		const size_t n = o->u.c.n;
		CUstream st = o->u.c.s;
#define GS_CU_PICK(name) (o->pt ? R->name##_ptsz : R->name)
		switch (o->u.c.kind) {
		case GS_CU_COPY_HTOD: {
			gs_cu_pfn_cuMemcpyHtoDAsync_v2 fn = GS_CU_PICK(cuMemcpyHtoDAsync_v2);
			return fn ? fn(d, (const void *)(uintptr_t)s, n, st)
				  : gs_cu_missing(GS_CU_IDX_cuMemcpyHtoDAsync_v2);
		}
		case GS_CU_COPY_DTOH: {
			gs_cu_pfn_cuMemcpyDtoHAsync_v2 fn = GS_CU_PICK(cuMemcpyDtoHAsync_v2);
			return fn ? fn((void *)(uintptr_t)d, s, n, st)
				  : gs_cu_missing(GS_CU_IDX_cuMemcpyDtoHAsync_v2);
		}
		case GS_CU_COPY_DTOD: {
			gs_cu_pfn_cuMemcpyDtoDAsync_v2 fn = GS_CU_PICK(cuMemcpyDtoDAsync_v2);
			return fn ? fn(d, s, n, st) : gs_cu_missing(GS_CU_IDX_cuMemcpyDtoDAsync_v2);
		}
		default: {
			gs_cu_pfn_cuMemcpyAsync fn = GS_CU_PICK(cuMemcpyAsync);
			return fn ? fn(d, s, n, st) : gs_cu_missing(GS_CU_IDX_cuMemcpyAsync);
		}
		}
	}
	case GS_CU_OP_SET: {
		const CUdeviceptr d = o->u.m.dst;
		const size_t n = o->u.m.n;
		CUstream st = o->u.m.s;
		switch (o->u.m.width) {
		case 1: {
			gs_cu_pfn_cuMemsetD8Async fn = GS_CU_PICK(cuMemsetD8Async);
			return fn ? fn(d, (unsigned char)o->u.m.value, n, st)
				  : gs_cu_missing(GS_CU_IDX_cuMemsetD8Async);
		}
		case 2: {
			gs_cu_pfn_cuMemsetD16Async fn = GS_CU_PICK(cuMemsetD16Async);
			return fn ? fn(d, (unsigned short)o->u.m.value, n, st)
				  : gs_cu_missing(GS_CU_IDX_cuMemsetD16Async);
		}
		default: {
			gs_cu_pfn_cuMemsetD32Async fn = GS_CU_PICK(cuMemsetD32Async);
			return fn ? fn(d, o->u.m.value, n, st)
				  : gs_cu_missing(GS_CU_IDX_cuMemsetD32Async);
		}
		}
	}
	case GS_CU_OP_MARK: {
		CUevent ev = o->u.e.ev;
		CUstream st = o->u.e.s;
		switch (o->u.e.which) {
		case GS_CU_MARK_RECORD: {
			gs_cu_pfn_cuEventRecord fn = GS_CU_PICK(cuEventRecord);
			return fn ? fn(ev, st) : gs_cu_missing(GS_CU_IDX_cuEventRecord);
		}
		case GS_CU_MARK_RECORD_FLAGS: {
			gs_cu_pfn_cuEventRecordWithFlags fn = GS_CU_PICK(cuEventRecordWithFlags);
			return fn ? fn(ev, st, o->u.e.flags)
				  : gs_cu_missing(GS_CU_IDX_cuEventRecordWithFlags);
		}
		default: {
			gs_cu_pfn_cuStreamWaitEvent fn = GS_CU_PICK(cuStreamWaitEvent);
			return fn ? fn(st, ev, o->u.e.flags) : gs_cu_missing(GS_CU_IDX_cuStreamWaitEvent);
		}
		}
	}
	case GS_CU_OP_FREE: {
		gs_cu_pfn_cuMemFreeAsync fn = GS_CU_PICK(cuMemFreeAsync);
		if (!fn)
			return gs_cu_missing(GS_CU_IDX_cuMemFreeAsync);
		/* No graph is instantiated meanwhile (gs_engine_free_begin),
		 * also when the engine submits a held free (inside a hook:
		 * gs_cu_depth is not 0 there, so not gs_cu_engine_ok). */
		bool on = gs_engine_free_begin();
		CUresult st = fn(o->u.f.p, o->u.f.s);
		gs_engine_free_end(on);
		return st;
	}
#undef GS_CU_PICK
	}
	return CUDA_ERROR_INVALID_VALUE;
}

CUresult gs_cu_orig_call(const gs_cu_orig_t *o)
{
	gs_submit_drain(); /* after what was posted before it (gs_submit.h) */
	uint64_t t = gs_self_drv_begin();
	CUresult st = gs_cu_orig_call_raw(o);
	gs_self_drv_end(t, GS_SELF_SUBMIT);
	return st;
}

/* ---- records --------------------------------------------------------------- */

bool gs_cu_extra_parse(void **extra, void **buf, size_t *size)
{
	void *b = NULL;
	const size_t *sz = NULL;
	for (unsigned i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
		if (i >= 64)
			return true;
		if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
			b = extra[i + 1];
		else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
			sz = (const size_t *)extra[i + 1];
		else
			return true; /* an option we do not know how to replay */
	}
	if (!b || !sz || *sz > UINT32_MAX)
		return true;
	*buf = b;
	*size = *sz;
	return false;
}

gs_rec_t *gs_cu_rec_kernel(const gs_cu_fn_t *fn, CUfunction f,
			   const unsigned grid[3], const unsigned block[3],
			   unsigned shmem, void **kp, void **extra,
			   const gs_cu_attrs_t *at)
{
	const gs_layout_t *lay = NULL;
	void *buf = NULL;
	size_t nbytes;
	uint32_t rflags = fn ? fn->rflags : 0;

	if (extra) {
		if (kp || gs_cu_extra_parse(extra, &buf, &nbytes))
			return NULL;
		rflags |= GS_CU_RF_EXTRA;
	} else {
		if (!fn || !fn->layout)
			return NULL;
		lay = fn->layout;
		if (!kp && lay->nargs)
			return NULL;
		nbytes = lay->total;
	}
	gs_rec_t *r = gs_rec_scratch((uint32_t)nbytes);
	if (!r)
		return NULL;
	r->kind = GS_REC_KERNEL;
	r->func = f;
	r->layout = lay;
	r->flags = rflags;
	r->shmem = shmem;
	for (int i = 0; i < 3; i++) {
		r->grid[i] = grid[i];
		r->block[i] = block[i];
	}
	r->nbytes = (uint32_t)nbytes;
	r->aux[GS_CU_AUX_ATTRS] = (uintptr_t)at; /* part of the shape */
	if (lay) {
		for (uint32_t i = 0; i < lay->nargs; i++)
			memcpy(r->args + lay->arg[i].off, kp[i], lay->arg[i].size);
	} else if (nbytes) {
		memcpy(r->args, buf, nbytes);
	}
	return r;
}

/* Submit the stream's held work and call the driver as the caller did. */
static CUresult gs_cu_boundary(const gs_cu_orig_t *o, const gs_cu_sref_t *sr,
			       CUcontext ctx, gs_flush_reason_t why, const char *api)
{
	if (o->op == GS_CU_OP_LAUNCH || o->op == GS_CU_OP_LAUNCHEX || o->op == GS_CU_OP_LAUNCHCOOP) {
		GS_STAT_INC(kernels);
		GS_STAT_INC(boundary_launches);
	}
	gs_cu_depth++;
	gs_engine_flush_stream(sr->handle, ctx, sr->sflags, why, api);
	gs_cu_depth--;
	return gs_cu_orig_call(o);
}

static CUresult gs_cu_hold(gs_rec_t *r, const gs_cu_orig_t *o,
			   const gs_cu_sref_t *sr, CUcontext ctx, const char *api)
{
	r->ctx = ctx;
	r->flags |= sr->rflags;
	gs_rec_seal(r);
	r->orig = o;
	gs_cu_depth++;
	int st = gs_engine_launch(sr->handle, ctx, sr->sflags, r, api);
	gs_cu_depth--;
	return (CUresult)st;
}

/*
 * A cold stream's structural key of a launch: its function.  The grid, the
 * block and the dynamic shared memory are operands, which a graph node
 * takes new on every replay (gs_rec.h), and sequences are learned by shape:
 * with them in the key, a step whose attention grid grows with the
 * position (a dynamic KV cache) was a new cold segment at every token, so
 * a stream cold before it learned that step could not wake by its repeats.
 */
static inline uint64_t gs_cu_cold_key(CUfunction f)
{
	return (uintptr_t)f * 0x9fb21c651e98df25ULL;
}

/*
 * Whether a cooperative launch of f fits on the device all at once, as the
 * driver checks at the call (CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE
 * otherwise): a held one would meet that check only when submitted, or at
 * its graph's instantiation, and the application must see the error where
 * it made it.  False when the driver cannot say.  Two driver calls a
 * cooperative launch held (cuDNN's few a step); not cached, since the
 * function's attributes (its shared memory carveout) change the answer.
 */
static bool gs_cu_coop_fits(CUfunction f, const unsigned grid[3], uint64_t threads, unsigned shmem)
{
	const gs_cu_real_t *R = &gs_cu_real;
	int per_sm = 0, sms = 0;
	CUdevice dev;
	CUfunction kf = NULL;
	if (!R->cuOccupancyMaxActiveBlocksPerMultiprocessor || !R->cuCtxGetDevice ||
	    !R->cuDeviceGetAttribute || threads > INT32_MAX)
		return false;
	/* A CUkernel launched as a function is asked through its function in this context. */
	if (R->cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, f, (int)threads, shmem) &&
	    (!R->cuKernelGetFunction || R->cuKernelGetFunction(&kf, (CUkernel)f) || !kf ||
	     R->cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kf, (int)threads, shmem)))
		return false;
	if (R->cuCtxGetDevice(&dev) ||
	    R->cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev) ||
	    per_sm <= 0 || sms <= 0)
		return false;
	return (uint64_t)grid[0] * grid[1] * grid[2] <= (uint64_t)per_sm * (uint64_t)sms;
}

/*
 * Whether the driver would accept the launch (the limits every device of
 * compute capability 3.0 and later has, the function's own, a cluster that
 * divides the grid).  The grid, the block and the shared memory are
 * operands that drift, so every launch is checked, not only the first of
 * a shape.
 */
static bool gs_cu_launch_ok(const gs_cu_fn_t *fn, const unsigned grid[3], const unsigned block[3],
			    unsigned shmem, const gs_cu_attrs_t *at)
{
	uint64_t threads = (uint64_t)block[0] * block[1] * block[2];
	if (!grid[0] || !grid[1] || !grid[2] || !threads || grid[0] > 0x7fffffffu ||
	    grid[1] > 65535 || grid[2] > 65535 || block[0] > 1024 || block[1] > 1024 ||
	    block[2] > 64 || threads > __atomic_load_n(&fn->max_threads, __ATOMIC_RELAXED) ||
	    shmem > __atomic_load_n(&fn->max_dyn_shmem, __ATOMIC_RELAXED))
		return false;
	for (uint32_t i = 0; at && i < at->n; i++) {
		const CUlaunchAttribute *a = &at->a[i];
		if (a->id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION &&
		    (!a->value.clusterDim.x || !a->value.clusterDim.y || !a->value.clusterDim.z ||
		     grid[0] % a->value.clusterDim.x || grid[1] % a->value.clusterDim.y ||
		     grid[2] % a->value.clusterDim.z))
			return false;
		if (a->id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE && a->value.cooperative &&
		    !gs_cu_coop_fits((CUfunction)fn->func, grid, threads, shmem))
			return false;
	}
	return true;
}

static CUresult gs_cu_kernel(const gs_cu_orig_t *o, CUfunction f, const unsigned grid[3],
			     const unsigned block[3], unsigned shmem, CUstream s,
			     void **kp, void **extra, const char *api, const gs_cu_attrs_t *at)
{
	gs_cu_sref_t sr;
	gs_cu_stream_ref(s, o->pt, &sr);
	CUcontext ctx = gs_cu_ctx_current();
	if (!f || !ctx)
		return gs_cu_boundary(o, &sr, ctx, GS_FLUSH_ATTR, api);
	uint64_t key = gs_cu_cold_key(f) ^ gs_mix64((uintptr_t)at);
	gs_cu_depth++;
	bool cold = gs_engine_cold(sr.handle, ctx, sr.sflags, key);
	CUresult rc = cold ? gs_cu_orig_call(o) : CUDA_SUCCESS;
	gs_cu_depth--;
	if (cold)
		return rc;
	const gs_cu_fn_t *fn = gs_cu_fn_get(f);
	/*
	 * A launch the driver would reject must reach it now, so the
	 * application sees the error where it made it.
	 */
	if (!fn || !gs_cu_launch_ok(fn, grid, block, shmem, at))
		return gs_cu_boundary(o, &sr, ctx, GS_FLUSH_ATTR, api);
	gs_rec_t *r = gs_cu_rec_kernel(fn, f, grid, block, shmem, kp, extra, at);
	if (!r)
		return gs_cu_boundary(o, &sr, ctx, GS_FLUSH_ATTR, api);
	gs_cu_fn_held(fn, shmem);
	return gs_cu_hold(r, o, &sr, ctx, api);
}

/* A kernel launch call's own arguments (cuLaunchKernel's, cuLaunchCooperativeKernel's). */
static gs_cu_orig_t gs_cu_orig_kernel(int op, int pt, CUfunction f, unsigned gx, unsigned gy,
				      unsigned gz, unsigned bx, unsigned by, unsigned bz,
				      unsigned shmem, CUstream s, void **kp, void **extra)
{
	gs_cu_orig_t o = { .op = op, .pt = pt };
	o.u.k.f = f;
	o.u.k.grid[0] = gx, o.u.k.grid[1] = gy, o.u.k.grid[2] = gz;
	o.u.k.block[0] = bx, o.u.k.block[1] = by, o.u.k.block[2] = bz;
	o.u.k.shmem = shmem;
	o.u.k.s = s;
	o.u.k.kp = kp;
	o.u.k.extra = extra;
	return o;
}

CUresult gs_cu_x_cuLaunchKernel(int pt, CUfunction f, unsigned int gx, unsigned int gy,
				unsigned int gz, unsigned int bx, unsigned int by,
				unsigned int bz, unsigned int shmem, CUstream s,
				void **kp, void **extra)
{
	GS_CU_READY();
	gs_cu_orig_t o = gs_cu_orig_kernel(GS_CU_OP_LAUNCH, pt, f, gx, gy, gz, bx, by, bz, shmem, s, kp,
					   extra);
	GS_CU_ADOPT_SCOPE(o.u.k.s);
	if (!gs_cu_elements_ok())
		return gs_cu_orig_call(&o);
	gs_self_call_t sc;
	gs_self_call_begin(&sc);
	CUresult rc = gs_cu_kernel(&o, f, o.u.k.grid, o.u.k.block, shmem, o.u.k.s, kp, extra,
				   pt ? "cuLaunchKernel_ptsz" : "cuLaunchKernel", NULL);
	gs_self_call_end(&sc);
	return rc;
}

/* The interned attribute set of a cooperative launch: { COOPERATIVE = 1 }. */
static const gs_cu_attrs_t *gs_cu_coop_attrs(void)
{
	static const gs_cu_attrs_t *set;
	const gs_cu_attrs_t *at = __atomic_load_n(&set, __ATOMIC_ACQUIRE);
	if (!at) {
		CUlaunchAttribute a;
		memset(&a, 0, sizeof(a));
		a.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
		a.value.cooperative = 1;
		unsigned bad = 0;
		if (gs_cu_attrs_get(&a, 1, &at, &bad) || !at)
			return NULL;
		__atomic_store_n(&set, at, __ATOMIC_RELEASE); /* interned: the same pointer every time */
	}
	return at;
}

/*
 * cuLaunchCooperativeKernel: with GRAPHSHIM_COOPERATIVE, a kernel launch
 * with the cooperative attribute (what cuLaunchKernelEx makes of the same
 * launch), held and graphed like one; where it does not fit on the device
 * at once (gs_cu_coop_fits), or with the setting off (the default until
 * measured on a GPU), a boundary.  Either way counted in `kernels` (and a
 * boundary in `boundary_launches`), so that the statistics' kernels are a
 * profiler's: cuDNN launches some of its kernels this way (torchvision's
 * augmentations on an H200, 680 of 13,481).
 */
CUresult gs_cu_x_cuLaunchCooperativeKernel(int pt, CUfunction f, unsigned int gx, unsigned int gy,
					   unsigned int gz, unsigned int bx, unsigned int by,
					   unsigned int bz, unsigned int shmem, CUstream s, void **kp)
{
	GS_CU_READY();
	gs_cu_orig_t o = gs_cu_orig_kernel(GS_CU_OP_LAUNCHCOOP, pt, f, gx, gy, gz, bx, by, bz, shmem, s,
					   kp, NULL);
	GS_CU_ADOPT_SCOPE(o.u.k.s);
	if (!gs_cu_elements_ok())
		return gs_cu_orig_call(&o);
	const char *api = pt ? "cuLaunchCooperativeKernel_ptsz" : "cuLaunchCooperativeKernel";
	const gs_cu_attrs_t *at = gs_config.cooperative ? gs_cu_coop_attrs() : NULL;
	if (!at) {
		gs_cu_sref_t sr;
		gs_cu_stream_ref(o.u.k.s, pt, &sr);
		return gs_cu_boundary(&o, &sr, gs_cu_ctx_current(), GS_FLUSH_ATTR, api);
	}
	gs_self_call_t sc;
	gs_self_call_begin(&sc);
	CUresult rc = gs_cu_kernel(&o, f, o.u.k.grid, o.u.k.block, shmem, o.u.k.s, kp, NULL, api, at);
	gs_self_call_end(&sc);
	return rc;
}

static CUresult gs_cu_launch_ex(int pt, const CUlaunchConfig *cfg, CUfunction f,
				void **kp, void **extra)
{
	GS_CU_READY();
	gs_cu_orig_t o = { .op = GS_CU_OP_LAUNCHEX, .pt = pt };
	o.u.k.cfg = cfg;
	o.u.k.f = f;
	o.u.k.kp = kp;
	o.u.k.extra = extra;
	/* An adopted stream's launch goes where its work goes: a copy of the
	 * configuration names that stream. */
	CUlaunchConfig moved;
	CUstream hs = cfg ? cfg->hStream : NULL;
	GS_CU_ADOPT_SCOPE(hs);
	if (cfg && hs != cfg->hStream) {
		moved = *cfg;
		moved.hStream = hs;
		o.u.k.cfg = cfg = &moved;
	}
	if (!gs_cu_elements_ok() || !cfg)
		return gs_cu_orig_call(&o);
	const char *api = pt ? "cuLaunchKernelEx_ptsz" : "cuLaunchKernelEx";
	const gs_cu_attrs_t *at = NULL;
	unsigned bad = 0;
	if (cfg->numAttrs && gs_cu_attrs_get(cfg->attrs, cfg->numAttrs, &at, &bad)) {
		/* No graph node can carry it: the trace names the attribute.  An
		 * event the launch records is a use of that event: a stream
		 * holding a record of it, or a wait on it, submits first, or
		 * its older record would land after this one (gs_event.h). */
		for (unsigned i = 0; i < cfg->numAttrs && cfg->attrs; i++) {
			const CUlaunchAttribute *a = &cfg->attrs[i];
			if (a->id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT)
				gs_cu_event_use(a->value.programmaticEvent.event, api);
			else if (a->id == CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT)
				gs_cu_event_use(a->value.launchCompletionEvent.event, api);
		}
		gs_cu_sref_t sr;
		gs_cu_stream_ref(cfg->hStream, pt, &sr);
		return gs_cu_boundary(&o, &sr, gs_cu_ctx_current(), GS_FLUSH_ATTR,
				      gs_cu_attr_api(bad));
	}
	const unsigned grid[3] = { cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ };
	const unsigned block[3] = { cfg->blockDimX, cfg->blockDimY, cfg->blockDimZ };
	return gs_cu_kernel(&o, f, grid, block, cfg->sharedMemBytes, cfg->hStream, kp,
			    extra, api, at);
}

CUresult gs_cu_x_cuLaunchKernelEx(int pt, const CUlaunchConfig *cfg, CUfunction f,
				  void **kp, void **extra)
{
	gs_self_call_t sc;
	gs_self_call_begin(&sc);
	CUresult rc = gs_cu_launch_ex(pt, cfg, f, kp, extra);
	gs_self_call_end(&sc);
	return rc;
}

/*
 * The cold lane (gs_engine_cold_cached): the exported launch entry points
 * themselves.  A launch on the stream this thread's last launch went to,
 * while that stream is cold, goes to the driver with only a hash of its
 * structure computed: no copy of the call, the caller's own arguments
 * passed on as they came (a tail call), and a handful of cache lines (a
 * real launch evicts them all; docs/performance.md, "Pass-through cost").
 * An ordinary stream is named by its handle alone; the legacy default
 * stream's handle is every context's, so it costs one driver call for the
 * current context.  The per-thread default stream is never held on and
 * never takes the lane.  Every other launch takes gs_cu_x_<name>, which
 * caches the stream for the next one.  No lock is held when the driver is
 * called, so the depth need not be raised.
 */
static inline __attribute__((always_inline)) bool gs_cu_lane_take(int pt, CUstream s, CUfunction f,
								   uint64_t key)
{
	if (GS_UNLIKELY(__atomic_load_n(&gs_cu_lane.state, __ATOMIC_ACQUIRE) != GS_CU_ON) ||
	    gs_cu_depth || !f)
		return false;
	gs_cu_call_note();
	if (__atomic_load_n(&gs_cu_lane.adopt, __ATOMIC_RELAXED) || gs_submit_pending())
		return false; /* posted work goes first: the full path drains */
	if (!s)
		s = pt ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY;
	if (GS_LIKELY(s != CU_STREAM_LEGACY && s != CU_STREAM_PER_THREAD))
		return gs_engine_cold_cached((uintptr_t)s, NULL, key);
	CUcontext ctx = NULL;
	if (s == CU_STREAM_PER_THREAD || gs_cu_lane.ctx_get(&ctx) != CUDA_SUCCESS || !ctx)
		return false;
	return gs_engine_cold_cached((uintptr_t)CU_STREAM_LEGACY, ctx, key);
}

/*
 * Where the lane sends what it does not take: a function of the entry
 * point's own signature, so that both ways out of the wrapper are tail
 * calls and the wrapper keeps nothing on its stack.
 */
#define GS_CU_LANE_KERNEL(name, pt)                                                       \
	static __attribute__((noinline)) CUresult gs_cu_full_##name(                       \
		CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,           \
		unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,     \
		CUstream s, void **kp, void **extra)                                       \
	{                                                                                 \
		return gs_cu_x_cuLaunchKernel(pt, f, gx, gy, gz, bx, by, bz, shmem, s, kp, \
					      extra);                                     \
	}                                                                                 \
	GS_HOT CUresult gs_cu_w_##name(CUfunction f, unsigned int gx, unsigned int gy,     \
				       unsigned int gz, unsigned int bx, unsigned int by,  \
				       unsigned int bz, unsigned int shmem, CUstream s,    \
				       void **kp, void **extra);                           \
	GS_HOT CUresult gs_cu_w_##name(CUfunction f, unsigned int gx, unsigned int gy,     \
				       unsigned int gz, unsigned int bx, unsigned int by,  \
				       unsigned int bz, unsigned int shmem, CUstream s,    \
				       void **kp, void **extra)                            \
	{                                                                                 \
		gs_cu_pfn_cuLaunchKernel fn = gs_cu_lane.launch[pt];                       \
		if (GS_LIKELY(fn) && gs_cu_lane_take(pt, s, f, gs_cu_cold_key(f)))          \
			return fn(f, gx, gy, gz, bx, by, bz, shmem, s, kp, extra);          \
		return gs_cu_full_##name(f, gx, gy, gz, bx, by, bz, shmem, s, kp, extra);   \
	}                                                                                 \
	GS_EXPORT GS_HOT CUresult name(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, \
				unsigned int bx, unsigned int by, unsigned int bz,          \
				unsigned int shmem, CUstream s, void **kp, void **extra)    \
		__attribute__((alias("gs_cu_w_" #name)));

GS_CU_LANE_KERNEL(cuLaunchKernel, 0)
GS_CU_LANE_KERNEL(cuLaunchKernel_ptsz, 1)

#define GS_CU_LANE_KERNEL_EX(name, pt)                                                     \
	static __attribute__((noinline)) CUresult gs_cu_full_##name(                        \
		const CUlaunchConfig *cfg, CUfunction f, void **kp, void **extra)          \
	{                                                                                  \
		return gs_cu_x_cuLaunchKernelEx(pt, cfg, f, kp, extra);                     \
	}                                                                                  \
	GS_HOT CUresult gs_cu_w_##name(const CUlaunchConfig *cfg, CUfunction f, void **kp, \
				       void **extra);                                      \
	GS_HOT CUresult gs_cu_w_##name(const CUlaunchConfig *cfg, CUfunction f, void **kp, \
				       void **extra)                                       \
	{                                                                                  \
		gs_cu_pfn_cuLaunchKernelEx fn = gs_cu_lane.launch_ex[pt];                   \
		if (cfg && !cfg->numAttrs && GS_LIKELY(fn) &&                               \
		    gs_cu_lane_take(pt, cfg->hStream, f, gs_cu_cold_key(f)))                 \
			return fn(cfg, f, kp, extra);                                       \
		return gs_cu_full_##name(cfg, f, kp, extra);                                \
	}                                                                                  \
	GS_EXPORT GS_HOT CUresult name(const CUlaunchConfig *cfg, CUfunction f, void **kp,   \
				void **extra) __attribute__((alias("gs_cu_w_" #name)));

GS_CU_LANE_KERNEL_EX(cuLaunchKernelEx, 0)
GS_CU_LANE_KERNEL_EX(cuLaunchKernelEx_ptsz, 1)

/* ---- copies and memsets ---------------------------------------------------- */

/*
 * graphshim holds a copy or a memset only when the driver would accept it
 * (a held operation returns success at once, and the driver's refusal
 * could not reach the application where it made the call).  Its size and
 * its pointers are operands that drift from one pass to the next, so each
 * call is checked: every byte within one allocation of the right kind.
 */

/* The memory type of p (CU_MEMORYTYPE_HOST only for pinned memory), or 0. */
static unsigned gs_cu_memtype(CUdeviceptr p)
{
	unsigned int t = 0;
	if (!gs_cu_real.cuPointerGetAttribute ||
	    gs_cu_real.cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p) !=
		    CUDA_SUCCESS)
		return 0; /* pageable host memory, or not a pointer at all */
	return (t == CU_MEMORYTYPE_HOST || t == CU_MEMORYTYPE_DEVICE) ? t : 0;
}

/*
 * The memory type of [p, p+n) when one allocation holds all of it, or 0:
 * pageable memory, or a range the driver would refuse.
 */
static unsigned gs_cu_span(CUdeviceptr p, size_t n)
{
	unsigned t = gs_cu_memtype(p);
	CUdeviceptr start = 0;
	size_t size = 0;
	if (!t || !n)
		return 0;
	if (gs_cu_real.cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p) ==
		    CUDA_SUCCESS &&
	    gs_cu_real.cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, p) ==
		    CUDA_SUCCESS)
		return p >= start && n <= size && p - start <= size - n ? t : 0;
	/* No range to be had: pinned memory at both ends, as much as can be said. */
	return t == CU_MEMORYTYPE_HOST && gs_cu_memtype(p + n - 1) == CU_MEMORYTYPE_HOST ? t : 0;
}

static CUresult gs_cu_copy(gs_cu_orig_t *o, const char *api)
{
	gs_cu_sref_t sr;
	gs_cu_stream_ref(o->u.c.s, o->pt, &sr);
	CUcontext ctx = gs_cu_ctx_current();
	const CUdeviceptr d = o->u.c.dst, s = o->u.c.src;
	const size_t n = o->u.c.n;
	unsigned types = 0;
	bool ok = ctx && n;
	if (ok) {
		unsigned ts = gs_cu_span(s, n), td = gs_cu_span(d, n);
		switch (o->u.c.kind) {
		case GS_CU_COPY_HTOD:
			ok = ts == CU_MEMORYTYPE_HOST && td == CU_MEMORYTYPE_DEVICE;
			break;
		case GS_CU_COPY_DTOH:
			ok = ts == CU_MEMORYTYPE_DEVICE && td == CU_MEMORYTYPE_HOST;
			break;
		case GS_CU_COPY_DTOD:
			ok = ts == CU_MEMORYTYPE_DEVICE && td == CU_MEMORYTYPE_DEVICE;
			break;
		default:
			ok = ts && td;
			types = ts << 8 | td;
		}
	}
	if (!ok)
		return gs_cu_boundary(o, &sr, ctx, GS_FLUSH_COPY, api);
	gs_rec_t *r = gs_rec_scratch(16);
	if (!r)
		return gs_cu_boundary(o, &sr, ctx, GS_FLUSH_COPY, api);
	if (2 * gs_cu_granule(n) <= GS_CU_STAND_SIZE)
		gs_cu_stand_ensure(ctx);
	r->kind = GS_REC_COPY;
	r->nbytes = 16;
	r->aux[0] = n;
	r->aux[1] = (uint64_t)o->u.c.kind;
	r->aux[2] = types;
	memcpy(r->args, &d, 8);
	memcpy(r->args + 8, &s, 8);
	return gs_cu_hold(r, o, &sr, ctx, api);
}

#define GS_CU_COPY_HOOK(name, kind_, dtype, stype, dexpr, sexpr)                    \
	CUresult gs_cu_x_##name(int pt, dtype dst, stype src, size_t n, CUstream s) \
	{                                                                           \
		GS_CU_READY();                                                      \
		gs_cu_orig_t o = { .op = GS_CU_OP_COPY, .pt = pt };                 \
		o.u.c.kind = kind_;                                                 \
		o.u.c.dst = dexpr;                                                  \
		o.u.c.src = sexpr;                                                  \
		o.u.c.n = n;                                                        \
		o.u.c.s = s;                                                        \
		GS_CU_ADOPT_SCOPE(o.u.c.s);                                         \
		if (!gs_cu_elements_ok())                                           \
			return gs_cu_orig_call(&o);                                 \
		return gs_cu_copy(&o, pt ? #name "_ptsz" : #name);                  \
	}

GS_CU_COPY_HOOK(cuMemcpyHtoDAsync_v2, GS_CU_COPY_HTOD, CUdeviceptr, const void *,
		dst, (CUdeviceptr)(uintptr_t)src)
GS_CU_COPY_HOOK(cuMemcpyDtoHAsync_v2, GS_CU_COPY_DTOH, void *, CUdeviceptr,
		(CUdeviceptr)(uintptr_t)dst, src)
GS_CU_COPY_HOOK(cuMemcpyDtoDAsync_v2, GS_CU_COPY_DTOD, CUdeviceptr, CUdeviceptr,
		dst, src)
GS_CU_COPY_HOOK(cuMemcpyAsync, GS_CU_COPY_ANY, CUdeviceptr, CUdeviceptr, dst, src)

static CUresult gs_cu_set(gs_cu_orig_t *o, const char *api)
{
	gs_cu_sref_t sr;
	gs_cu_stream_ref(o->u.m.s, o->pt, &sr);
	CUcontext ctx = gs_cu_ctx_current();
	/* Misaligned, empty or out of bounds: the driver's own answer, now. */
	if (!ctx || !o->u.m.n || (o->u.m.dst & (o->u.m.width - 1)) ||
	    o->u.m.n > SIZE_MAX / o->u.m.width ||
	    gs_cu_span(o->u.m.dst, o->u.m.n * o->u.m.width) != CU_MEMORYTYPE_DEVICE)
		return gs_cu_boundary(o, &sr, ctx, GS_FLUSH_COPY, api);
	gs_rec_t *r = gs_rec_scratch(16);
	if (!r)
		return gs_cu_boundary(o, &sr, ctx, GS_FLUSH_COPY, api);
	if (o->u.m.n * o->u.m.width <= GS_CU_STAND_SIZE)
		gs_cu_stand_ensure(ctx);
	r->kind = GS_REC_SET;
	r->nbytes = 16;
	r->aux[0] = o->u.m.n;
	r->aux[1] = o->u.m.width;
	uint64_t v = o->u.m.value;
	memcpy(r->args, &o->u.m.dst, 8);
	memcpy(r->args + 8, &v, 8);
	return gs_cu_hold(r, o, &sr, ctx, api);
}

#define GS_CU_SET_HOOK(name, width_, vtype)                                         \
	CUresult gs_cu_x_##name(int pt, CUdeviceptr dst, vtype value, size_t n,     \
				CUstream s)                                         \
	{                                                                           \
		GS_CU_READY();                                                      \
		gs_cu_orig_t o = { .op = GS_CU_OP_SET, .pt = pt };                  \
		o.u.m.width = width_;                                               \
		o.u.m.value = value;                                                \
		o.u.m.dst = dst;                                                    \
		o.u.m.n = n;                                                        \
		o.u.m.s = s;                                                        \
		GS_CU_ADOPT_SCOPE(o.u.m.s);                                         \
		if (!gs_cu_elements_ok())                                           \
			return gs_cu_orig_call(&o);                                 \
		return gs_cu_set(&o, pt ? #name "_ptsz" : #name);                   \
	}

GS_CU_SET_HOOK(cuMemsetD8Async, 1, unsigned char)
GS_CU_SET_HOOK(cuMemsetD16Async, 2, unsigned short)
GS_CU_SET_HOOK(cuMemsetD32Async, 4, unsigned int)

/* ---- event records and waits ------------------------------------------------ */

/*
 * An event record or a wait on an event is no graph node, but it need not
 * end the stream's step either: it becomes a mark (gs_rec.h), kept in the
 * step at its place and submitted at its own call, after the stream's held
 * work.  So no event's record is held (unless GRAPHSHIM_ABSORB takes it into
 * its chunk: then every call that could observe it submits it first,
 * gs_event.h): what a query, a synchronize or another stream's wait
 * observes was submitted already.  The event is the
 * mark's operand (allocators hand out events from pools); which call and
 * its flags are its shape.  Streams graphshim does not hold on (the
 * per-thread default stream) and calls with no context or no event take
 * the boundary path, as before.
 */
static CUresult gs_cu_mark(gs_cu_orig_t *o, const char *api)
{
	gs_cu_sref_t sr;
	gs_cu_stream_ref(o->u.e.s, o->pt, &sr);
	CUcontext ctx = gs_cu_ctx_current();
	gs_rec_t *r = ctx && o->u.e.ev && !(sr.sflags & GS_STREAM_PASSTHRU) ? gs_rec_scratch(8) : NULL;
	if (!r) {
		gs_cu_event_use(o->u.e.ev, api);
		return gs_cu_boundary(o, &sr, ctx, GS_FLUSH_EVENT, api);
	}
	r->kind = GS_REC_MARK;
	r->nbytes = 8;
	r->aux[0] = (uint64_t)o->u.e.which;
	r->aux[1] = o->u.e.flags;
	r->aux[3] = o->u.e.which == GS_CU_MARK_WAIT ? GS_MARK_WAIT : GS_MARK_RECORD;
	memcpy(r->args, &o->u.e.ev, sizeof(o->u.e.ev));
	return gs_cu_hold(r, o, &sr, ctx, api);
}

#define GS_CU_MARK_BODY(which_, ev_, s_, flags_, name)                       \
	GS_CU_READY();                                                       \
	gs_cu_orig_t o = { .op = GS_CU_OP_MARK, .pt = pt };                  \
	o.u.e.which = which_;                                                \
	o.u.e.ev = ev_;                                                      \
	o.u.e.s = s_;                                                        \
	o.u.e.flags = flags_;                                                \
	if (which_ == GS_CU_MARK_WAIT && gs_config.adopt && gs_cu_engine_ok()) \
		gs_cu_adopt_try(o.u.e.s, pt, o.u.e.ev);                      \
	GS_CU_ADOPT_SCOPE_OF(o.u.e.s, false);                                \
	if (!gs_cu_elements_ok())                                            \
		return gs_cu_orig_call(&o);                                  \
	return gs_cu_mark(&o, pt ? name "_ptsz" : name)

CUresult gs_cu_x_cuEventRecord(int pt, CUevent ev, CUstream s)
{
	GS_CU_MARK_BODY(GS_CU_MARK_RECORD, ev, s, 0, "cuEventRecord");
}

CUresult gs_cu_x_cuEventRecordWithFlags(int pt, CUevent ev, CUstream s, unsigned int flags)
{
	GS_CU_MARK_BODY(GS_CU_MARK_RECORD_FLAGS, ev, s, flags, "cuEventRecordWithFlags");
}

CUresult gs_cu_x_cuStreamWaitEvent(int pt, CUstream s, CUevent ev, unsigned int flags)
{
	GS_CU_MARK_BODY(GS_CU_MARK_WAIT, ev, s, flags, "cuStreamWaitEvent");
}

/* ---- stream-ordered allocation ---------------------------------------------- */

/*
 * A pool allocator (PyTorch's cudaMallocAsync backend, CuPy's
 * MemoryAsyncPool, cuda.core's buffers) allocates and frees in stream order
 * around every temporary, and a step cut at each would be no step.  An
 * allocation submits nothing: work issued before it cannot use what it
 * returns, and a block it reuses was freed by a free that follows every
 * use held before that free.  It is made where its stream's work goes (an
 * adopted stream's root), so what uses the block is ordered after it.  A
 * free is a mark (GS_MARK_FREE): held with its stream's records, it goes
 * after them, with its chunk's graph or eagerly (gs_match_defer); later
 * work may go before it, which cannot use the block (no allocation returns
 * it until the free is made).  Memory goes back a chunk later at most.
 */
CUresult gs_cu_x_cuMemAllocAsync(int pt, CUdeviceptr *dptr, size_t n, CUstream s)
{
	GS_CU_READY();
	gs_cu_pfn_cuMemAllocAsync fn = pt ? gs_cu_real.cuMemAllocAsync_ptsz : gs_cu_real.cuMemAllocAsync;
	if (GS_UNLIKELY(!fn))
		return gs_cu_missing(pt ? GS_CU_IDX_cuMemAllocAsync_ptsz : GS_CU_IDX_cuMemAllocAsync);
	GS_CU_ADOPT_SCOPE(s);
	return fn(dptr, n, s);
}

CUresult gs_cu_x_cuMemAllocFromPoolAsync(int pt, CUdeviceptr *dptr, size_t n, CUmemoryPool pool,
					 CUstream s)
{
	GS_CU_READY();
	gs_cu_pfn_cuMemAllocFromPoolAsync fn =
		pt ? gs_cu_real.cuMemAllocFromPoolAsync_ptsz : gs_cu_real.cuMemAllocFromPoolAsync;
	if (GS_UNLIKELY(!fn))
		return gs_cu_missing(pt ? GS_CU_IDX_cuMemAllocFromPoolAsync_ptsz
					: GS_CU_IDX_cuMemAllocFromPoolAsync);
	GS_CU_ADOPT_SCOPE(s);
	return fn(dptr, n, pool, s);
}

CUresult gs_cu_x_cuMemFreeAsync(int pt, CUdeviceptr p, CUstream s)
{
	GS_CU_READY();
	gs_cu_orig_t o = { .op = GS_CU_OP_FREE, .pt = pt };
	o.u.f.p = p;
	o.u.f.s = s;
	GS_CU_ADOPT_SCOPE(o.u.f.s);
	if (!gs_cu_elements_ok())
		return gs_cu_orig_call(&o);
	const char *api = pt ? "cuMemFreeAsync_ptsz" : "cuMemFreeAsync";
	gs_cu_sref_t sr;
	gs_cu_stream_ref(o.u.f.s, pt, &sr);
	CUcontext ctx = gs_cu_ctx_current();
	gs_rec_t *r = ctx && p && !(sr.sflags & GS_STREAM_PASSTHRU) ? gs_rec_scratch(8) : NULL;
	if (!r)
		return gs_cu_boundary(&o, &sr, ctx, GS_FLUSH_FREE, api);
	r->kind = GS_REC_MARK;
	r->nbytes = 8;
	r->aux[0] = GS_CU_MARK_FREE;
	r->aux[3] = GS_MARK_FREE;
	memcpy(r->args, &p, sizeof(p));
	return gs_cu_hold(r, &o, &sr, ctx, api);
}
