/*
 * Hooks whose ordering rule is more than "flush, then call": stream
 * destruction, the application's own stream capture (the engine stands
 * aside while any is active), and function attributes (held launches must
 * still be valid under the new value, and cached limits must follow it).
 */
#include "cu_internal.h"
#include "gs_submit.h"

static CUresult gs_cu_stream_destroy(CUstream s, gs_cu_pfn_cuStreamDestroy_v2 fn,
				     int idx, const char *api)
{
	GS_CU_READY();
	if (GS_UNLIKELY(!fn))
		return gs_cu_missing(idx);
	if (s && s != CU_STREAM_LEGACY && s != CU_STREAM_PER_THREAD) {
		if (gs_cu_engine_ok()) {
			CUcontext ctx = gs_cu_ctx_current();
			/* First: its adopted streams' joins flush its state, which
			 * the engine's destroy then drops (in this order, or the
			 * flush made a new state, left behind with s's flags for
			 * the next stream given s's handle). */
			gs_cu_adopt_destroyed(s, api);
			gs_cu_depth++;
			gs_engine_stream_destroy((uintptr_t)s, ctx, api);
			gs_cu_depth--;
		}
		gs_cu_stream_forget(s);
	}
	gs_submit_drain();
	return fn(s);
}

CUresult gs_cu_x_cuStreamDestroy(int pt, CUstream s)
{
	return gs_cu_stream_destroy(s, gs_cu_real.cuStreamDestroy,
				    GS_CU_IDX_cuStreamDestroy, "cuStreamDestroy");
}

CUresult gs_cu_x_cuStreamDestroy_v2(int pt, CUstream s)
{
	return gs_cu_stream_destroy(s, gs_cu_real.cuStreamDestroy_v2,
				    GS_CU_IDX_cuStreamDestroy_v2, "cuStreamDestroy_v2");
}

/*
 * Captures the engine was told about and not yet told the end of, so that
 * an end without a begin (the engine came up in between) is never passed.
 */
static int gs_cu_captures;

/* Flush everything and tell the engine, before the driver begins a capture. */
static bool gs_cu_capture_begin(const char *api)
{
	if (!gs_cu_engine_ok())
		return false;
	/* The capture sees its streams as the program made them: every
	 * adoption ends, once none can begin any more. */
	gs_cu_depth++;
	gs_engine_capture_begin(api, gs_cu_adopt_release_all);
	gs_cu_depth--;
	__atomic_add_fetch(&gs_cu_captures, 1, __ATOMIC_RELAXED);
	return true;
}

static void gs_cu_capture_end(const char *api)
{
	int n = __atomic_load_n(&gs_cu_captures, __ATOMIC_RELAXED);
	while (n > 0 && !__atomic_compare_exchange_n(&gs_cu_captures, &n, n - 1, false,
						     __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	if (n <= 0)
		return;
	gs_cu_depth++;
	gs_engine_capture_end(api);
	gs_cu_depth--;
}

#define GS_CU_BEGIN(real, idx, api, call)                                     \
	do {                                                                  \
		GS_CU_READY();                                                \
		if (GS_UNLIKELY(!(real)))                                     \
			return gs_cu_missing(idx);                            \
		bool told = gs_cu_capture_begin(api);                         \
		gs_submit_drain();                                            \
		CUresult r = call;                                            \
		if (r != CUDA_SUCCESS && told)                                \
			gs_cu_capture_end(api);                               \
		return r;                                                     \
	} while (0)

CUresult gs_cu_x_cuStreamBeginCapture(int pt, CUstream s)
{
	gs_cu_pfn_cuStreamBeginCapture fn =
		pt ? gs_cu_real.cuStreamBeginCapture_ptsz : gs_cu_real.cuStreamBeginCapture;
	GS_CU_BEGIN(fn, pt ? GS_CU_IDX_cuStreamBeginCapture_ptsz : GS_CU_IDX_cuStreamBeginCapture,
		    "cuStreamBeginCapture", fn(s));
}

CUresult gs_cu_x_cuStreamBeginCapture_v2(int pt, CUstream s, CUstreamCaptureMode mode)
{
	gs_cu_pfn_cuStreamBeginCapture_v2 fn =
		pt ? gs_cu_real.cuStreamBeginCapture_v2_ptsz : gs_cu_real.cuStreamBeginCapture_v2;
	GS_CU_BEGIN(fn, pt ? GS_CU_IDX_cuStreamBeginCapture_v2_ptsz
			   : GS_CU_IDX_cuStreamBeginCapture_v2,
		    "cuStreamBeginCapture_v2", fn(s, mode));
}

CUresult gs_cu_x_cuStreamBeginCaptureToGraph(int pt, CUstream s, CUgraph g,
					     const CUgraphNode *deps,
					     const CUgraphEdgeData *data, size_t n,
					     CUstreamCaptureMode mode)
{
	gs_cu_pfn_cuStreamBeginCaptureToGraph fn =
		pt ? gs_cu_real.cuStreamBeginCaptureToGraph_ptsz
		   : gs_cu_real.cuStreamBeginCaptureToGraph;
	GS_CU_BEGIN(fn, pt ? GS_CU_IDX_cuStreamBeginCaptureToGraph_ptsz
			   : GS_CU_IDX_cuStreamBeginCaptureToGraph,
		    "cuStreamBeginCaptureToGraph", fn(s, g, deps, data, n, mode));
}

CUresult gs_cu_x_cuStreamEndCapture(int pt, CUstream s, CUgraph *pg)
{
	GS_CU_READY();
	gs_cu_pfn_cuStreamEndCapture fn =
		pt ? gs_cu_real.cuStreamEndCapture_ptsz : gs_cu_real.cuStreamEndCapture;
	gs_cu_pfn_cuStreamIsCapturing is =
		pt ? gs_cu_real.cuStreamIsCapturing_ptsz : gs_cu_real.cuStreamIsCapturing;
	if (GS_UNLIKELY(!fn))
		return gs_cu_missing(pt ? GS_CU_IDX_cuStreamEndCapture_ptsz
					: GS_CU_IDX_cuStreamEndCapture);
	/* Only a stream that was capturing ends a capture (even on error). */
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	bool was = is && is(s, &st) == CUDA_SUCCESS && st != CU_STREAM_CAPTURE_STATUS_NONE;
	CUresult r = fn(s, pg);
	if (was)
		gs_cu_capture_end("cuStreamEndCapture");
	return r;
}

/*
 * Held launches were checked against the limits when they were made and
 * reach the driver later: an attribute change must not make one of them
 * invalid.  A carveout is a hint; a dynamic shared memory limit no held
 * launch of the function exceeds (frameworks set it before every launch
 * of a kernel, to the same value) leaves them all valid.  Anything else
 * submits the held work first.
 */
static bool gs_cu_attr_needs_flush(CUfunction f, CUfunction_attribute a, int v, bool kernel)
{
	if (a == CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT)
		return false;
	if (a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES && v >= 0)
		return (uint64_t)v < gs_cu_fn_held_shmem(f, kernel);
	return true;
}

CUresult gs_cu_x_cuFuncSetAttribute(int pt, CUfunction f, CUfunction_attribute a, int v)
{
	GS_CU_READY();
	if (GS_UNLIKELY(!gs_cu_real.cuFuncSetAttribute))
		return gs_cu_missing(GS_CU_IDX_cuFuncSetAttribute);
	bool on = gs_cu_engine_ok();
	if (on && gs_cu_attr_needs_flush(f, a, v, false))
		gs_cu_flush_all(GS_FLUSH_OTHER, "cuFuncSetAttribute");
	CUresult r = gs_cu_real.cuFuncSetAttribute(f, a, v);
	if (on && r == CUDA_SUCCESS)
		gs_cu_fn_refresh(f);
	return r;
}

CUresult gs_cu_x_cuKernelSetAttribute(int pt, CUfunction_attribute a, int v, CUkernel k,
				      CUdevice dev)
{
	GS_CU_READY();
	if (GS_UNLIKELY(!gs_cu_real.cuKernelSetAttribute))
		return gs_cu_missing(GS_CU_IDX_cuKernelSetAttribute);
	bool on = gs_cu_engine_ok();
	if (on && gs_cu_attr_needs_flush((CUfunction)k, a, v, true))
		gs_cu_flush_all(GS_FLUSH_OTHER, "cuKernelSetAttribute");
	CUresult r = gs_cu_real.cuKernelSetAttribute(a, v, k, dev);
	if (on && r == CUDA_SUCCESS)
		gs_cu_fn_refresh((CUfunction)k);
	return r;
}

/* ---- events whose record a stream may hold (gs_event.h) -------------------- */

#define GS_CU_EVENT_CALL(name, use, call)                                    \
	GS_CU_READY();                                                       \
	if (GS_UNLIKELY(!gs_cu_real.name))                                   \
		return gs_cu_missing(GS_CU_IDX_##name);                      \
	use;                                                                 \
	return gs_cu_real.name call

CUresult gs_cu_x_cuEventQuery(int pt, CUevent ev)
{
	(void)pt;
	GS_CU_READY();
	if (GS_UNLIKELY(!gs_cu_real.cuEventQuery))
		return gs_cu_missing(GS_CU_IDX_cuEventQuery);
	if (ev && gs_cu_engine_ok()) {
		gs_cu_depth++;
		bool held = gs_engine_event_query((uint64_t)(uintptr_t)ev, "cuEventQuery");
		gs_cu_depth--;
		if (held)
			return CUDA_ERROR_NOT_READY;
	}
	return gs_cu_real.cuEventQuery(ev);
}

/* What the synchronization waits for goes first; other threads' streams keep theirs. */
CUresult gs_cu_x_cuEventSynchronize(int pt, CUevent ev)
{
	(void)pt;
	GS_CU_READY();
	if (GS_UNLIKELY(!gs_cu_real.cuEventSynchronize))
		return gs_cu_missing(GS_CU_IDX_cuEventSynchronize);
	if (gs_cu_engine_ok()) {
		gs_cu_depth++;
		gs_engine_event_synced((uint64_t)(uintptr_t)ev, "cuEventSynchronize");
		gs_cu_depth--;
	}
	gs_submit_drain();
	return gs_cu_real.cuEventSynchronize(ev);
}

/*
 * An event destroyed while a stream holds a record of it or a wait on it
 * is destroyed when they have gone (gs_engine_event_destroy): torch makes
 * and drops an event for each wait_stream, which would otherwise end the
 * match in progress every time.
 */
#define GS_CU_EVENT_DESTROY(name)                                            \
	CUresult gs_cu_x_##name(int pt, CUevent ev)                          \
	{                                                                    \
		(void)pt;                                                    \
		GS_CU_READY();                                               \
		if (GS_UNLIKELY(!gs_cu_real.name))                           \
			return gs_cu_missing(GS_CU_IDX_##name);              \
		if (ev && gs_cu_engine_ok()) {                               \
			gs_cu_depth++;                                       \
			bool later = gs_engine_event_destroy((uint64_t)(uintptr_t)ev, #name); \
			gs_cu_depth--;                                       \
			if (later)                                           \
				return CUDA_SUCCESS;                         \
		}                                                            \
		return gs_cu_real.name(ev);                                  \
	}
GS_CU_EVENT_DESTROY(cuEventDestroy)
GS_CU_EVENT_DESTROY(cuEventDestroy_v2)

#define GS_CU_ELAPSED(name)                                                  \
	CUresult gs_cu_x_##name(int pt, float *ms, CUevent a, CUevent b)     \
	{                                                                    \
		(void)pt;                                                    \
		GS_CU_EVENT_CALL(name, (gs_cu_event_use(a, #name), gs_cu_event_use(b, #name)), \
				 (ms, a, b));                                \
	}
GS_CU_ELAPSED(cuEventElapsedTime)
GS_CU_ELAPSED(cuEventElapsedTime_v2)

CUresult gs_cu_x_cuIpcGetEventHandle(int pt, CUipcEventHandle *h, CUevent ev)
{
	(void)pt;
	GS_CU_EVENT_CALL(cuIpcGetEventHandle, gs_cu_event_share(ev, "cuIpcGetEventHandle"), (h, ev));
}

CUresult gs_cu_x_cuGraphLaunch(int pt, CUgraphExec g, CUstream s)
{
	gs_cu_pfn_cuGraphLaunch fn = pt ? gs_cu_real.cuGraphLaunch_ptsz : gs_cu_real.cuGraphLaunch;
	GS_CU_READY();
	if (GS_UNLIKELY(!fn))
		return gs_cu_missing(pt ? GS_CU_IDX_cuGraphLaunch_ptsz : GS_CU_IDX_cuGraphLaunch);
	GS_CU_ADOPT_SCOPE(s);
	if (gs_cu_elements_ok()) {
		gs_cu_event_use(NULL, "cuGraphLaunch");
		gs_cu_flush_stream(s, pt, GS_FLUSH_OTHER, "cuGraphLaunch");
	}
	gs_submit_drain();
	return fn(g, s);
}
