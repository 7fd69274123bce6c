/*
 * CUDA front: streams, events, host functions and stream capture.  Every
 * stream-taking entry point has a legacy export and a _ptsz export sharing
 * one static implementation that is told what stream 0 means.
 */
#include <stdlib.h>

#include "cuda_front.h"

/* ---- streams ---- */
static CUresult stream_create(CUstream *ph, unsigned flags, int prio)
{
	gs_sim_stream_t *s;
	GS_CU_CHECK_INIT();
	if (!ph || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
		return CUDA_ERROR_INVALID_VALUE;
	gs_sim_ctx_t *ctx = gs_cu_ctx();
	if (!ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	CUresult r = gs_cu_err(gs_sim_stream_create(&s, ctx,
		(flags & CU_STREAM_NON_BLOCKING) ? GS_SIM_S_NONBLOCKING : GS_SIM_S_BLOCKING, prio));
	if (!r)
		*ph = (CUstream)s;
	return r;
}

CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
	return stream_create(phStream, Flags, 0);
}

/* Priorities run from 0 (lowest) to -5 (highest); clamped like the driver. */
CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
	if (priority > 0)
		priority = 0;
	if (priority < -5)
		priority = -5;
	return stream_create(phStream, flags, priority);
}

CUresult cuStreamDestroy(CUstream hStream)
{
	GS_CU_CHECK_INIT();
	if (!gs_sim_reg_is(hStream, GS_SIM_H_STREAM))
		return CUDA_ERROR_INVALID_HANDLE;
	gs_sim_stream_destroy((gs_sim_stream_t *)hStream);
	return CUDA_SUCCESS;
}

static CUresult stream_sync(CUstream h, gs_cu_dflt_t d)
{
	gs_sim_stream_t *s;
	CUresult r = gs_cu_stream(h, d, &s);
	return r ? r : gs_cu_err(gs_sim_stream_sync(s));
}
#define X(d) stream_sync(hStream, d)
GS_CU_PAIR(CUresult, cuStreamSynchronize, (CUstream hStream), X)
#undef X

static CUresult stream_query(CUstream h, gs_cu_dflt_t d)
{
	gs_sim_stream_t *s;
	CUresult r = gs_cu_stream(h, d, &s);
	return r ? r : gs_cu_err(gs_sim_stream_query(s));
}
#define X(d) stream_query(hStream, d)
GS_CU_PAIR(CUresult, cuStreamQuery, (CUstream hStream), X)
#undef X

static CUresult stream_flags(CUstream h, unsigned *flags, gs_cu_dflt_t d)
{
	gs_sim_stream_t *s;
	CUresult r = gs_cu_stream_out(h, d, flags, &s);
	if (r)
		return r;
	*flags = s->flags == GS_SIM_S_NONBLOCKING ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT;
	return CUDA_SUCCESS;
}
#define X(d) stream_flags(hStream, flags, d)
GS_CU_PAIR(CUresult, cuStreamGetFlags, (CUstream hStream, unsigned int *flags), X)
#undef X

static CUresult stream_prio(CUstream h, int *prio, gs_cu_dflt_t d)
{
	gs_sim_stream_t *s;
	CUresult r = gs_cu_stream_out(h, d, prio, &s);
	if (r)
		return r;
	*prio = s->priority;
	return CUDA_SUCCESS;
}
#define X(d) stream_prio(hStream, priority, d)
GS_CU_PAIR(CUresult, cuStreamGetPriority, (CUstream hStream, int *priority), X)
#undef X

static CUresult stream_ctx(CUstream h, CUcontext *pctx, gs_cu_dflt_t d)
{
	gs_sim_stream_t *s;
	CUresult r = gs_cu_stream_out(h, d, pctx, &s);
	if (r)
		return r;
	*pctx = (CUcontext)s->ctx;
	return CUDA_SUCCESS;
}
#define X(d) stream_ctx(hStream, pctx, d)
GS_CU_PAIR(CUresult, cuStreamGetCtx, (CUstream hStream, CUcontext *pctx), X)
#undef X

static CUresult stream_wait_event(CUstream h, CUevent ev, unsigned flags, gs_cu_dflt_t d)
{
	gs_sim_stream_t *s;
	CUresult r = gs_cu_stream(h, d, &s);
	if (r)
		return r;
	if (!gs_sim_reg_is(ev, GS_SIM_H_EVENT))
		return CUDA_ERROR_INVALID_HANDLE;
	if (flags & ~(unsigned)CU_EVENT_WAIT_EXTERNAL)
		return CUDA_ERROR_INVALID_VALUE;
	return gs_cu_err(gs_sim_stream_wait_event(s, (gs_sim_event_t *)ev));
}
#define X(d) stream_wait_event(hStream, hEvent, Flags, d)
GS_CU_PAIR(CUresult, cuStreamWaitEvent, (CUstream hStream, CUevent hEvent, unsigned int Flags), X)
#undef X

static CUresult launch_host(CUstream h, CUhostFn fn, void *ud, gs_cu_dflt_t d)
{
	gs_sim_stream_t *s;
	CUresult r = gs_cu_stream(h, d, &s);
	if (r)
		return r;
	return gs_cu_err(gs_sim_front_host_fn(s, fn, ud));
}
#define X(d) launch_host(hStream, fn, userData, d)
GS_CU_PAIR(CUresult, cuLaunchHostFunc, (CUstream hStream, CUhostFn fn, void *userData), X)
#undef X

/* The callback as cuStreamAddCallback gives it (gs_sim_front_callback). */
static void callback_invoke(void (*fn)(void), void *stream, void *ud)
{
	((CUstreamCallback)fn)((CUstream)stream, CUDA_SUCCESS, ud);
}

static CUresult add_callback(CUstream h, CUstreamCallback fn, void *ud, unsigned flags,
			     gs_cu_dflt_t d)
{
	gs_sim_stream_t *s;
	CUresult r = gs_cu_stream(h, d, &s);
	if (r)
		return r;
	return gs_cu_err(gs_sim_front_callback(s, callback_invoke, (void (*)(void))fn, h, ud, flags));
}
#define X(d) add_callback(hStream, callback, userData, flags, d)
GS_CU_PAIR(CUresult, cuStreamAddCallback,
	   (CUstream hStream, CUstreamCallback callback, void *userData, unsigned int flags), X)
#undef X

/* ---- events ---- */
CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
	gs_sim_event_t *e;
	GS_CU_CHECK_INIT();
	if (!phEvent)
		return CUDA_ERROR_INVALID_VALUE;
	if (!gs_cu_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	CUresult r = gs_cu_err(gs_sim_event_create(&e,
		(Flags & CU_EVENT_DISABLE_TIMING) ? GS_SIM_EV_NOTIMING : 0));
	if (!r)
		*phEvent = (CUevent)e;
	return r;
}

CUresult cuEventDestroy(CUevent hEvent)
{
	GS_CU_CHECK_INIT();
	if (!gs_sim_reg_is(hEvent, GS_SIM_H_EVENT))
		return CUDA_ERROR_INVALID_HANDLE;
	gs_sim_event_destroy((gs_sim_event_t *)hEvent);
	return CUDA_SUCCESS;
}

static CUresult event_record(CUevent ev, CUstream h, unsigned flags, gs_cu_dflt_t d)
{
	gs_sim_stream_t *s;
	CUresult r = gs_cu_stream(h, d, &s);
	if (r)
		return r;
	if (!gs_sim_reg_is(ev, GS_SIM_H_EVENT))
		return CUDA_ERROR_INVALID_HANDLE;
	if (flags & ~(unsigned)CU_EVENT_RECORD_EXTERNAL)
		return CUDA_ERROR_INVALID_VALUE;
	return gs_cu_err(gs_sim_event_record((gs_sim_event_t *)ev, s));
}
#define X(d) event_record(hEvent, hStream, 0, d)
GS_CU_PAIR(CUresult, cuEventRecord, (CUevent hEvent, CUstream hStream), X)
#undef X
#define X(d) event_record(hEvent, hStream, flags, d)
GS_CU_PAIR(CUresult, cuEventRecordWithFlags, (CUevent hEvent, CUstream hStream, unsigned int flags), X)
#undef X

CUresult cuEventQuery(CUevent hEvent)
{
	GS_CU_CHECK_INIT();
	if (!gs_sim_reg_is(hEvent, GS_SIM_H_EVENT))
		return CUDA_ERROR_INVALID_HANDLE;
	return gs_cu_err(gs_sim_event_query((gs_sim_event_t *)hEvent));
}

CUresult cuEventSynchronize(CUevent hEvent)
{
	GS_CU_CHECK_INIT();
	if (!gs_sim_reg_is(hEvent, GS_SIM_H_EVENT))
		return CUDA_ERROR_INVALID_HANDLE;
	return gs_cu_err(gs_sim_event_sync((gs_sim_event_t *)hEvent));
}

CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
	GS_CU_CHECK_INIT();
	if (!pMilliseconds)
		return CUDA_ERROR_INVALID_VALUE;
	if (!gs_sim_reg_is(hStart, GS_SIM_H_EVENT) || !gs_sim_reg_is(hEnd, GS_SIM_H_EVENT))
		return CUDA_ERROR_INVALID_HANDLE;
	return gs_cu_err(gs_sim_event_elapsed(pMilliseconds, (gs_sim_event_t *)hStart,
					      (gs_sim_event_t *)hEnd));
}

CUresult cuEventElapsedTime_v1(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
	return cuEventElapsedTime(pMilliseconds, hStart, hEnd);
}

/* ---- capture ---- */
static CUresult begin_capture(CUstream h, CUstreamCaptureMode mode, gs_cu_dflt_t d)
{
	gs_sim_stream_t *s;
	CUresult r = gs_cu_stream(h, d, &s);
	if (r)
		return r;
	if (s->legacy)
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL && mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
	    mode != CU_STREAM_CAPTURE_MODE_RELAXED)
		return CUDA_ERROR_INVALID_VALUE;
	return gs_cu_err(gs_sim_capture_begin(s, mode == CU_STREAM_CAPTURE_MODE_RELAXED ? 2 : 0));
}
#define X(d) begin_capture(hStream, mode, d)
GS_CU_PAIR(CUresult, cuStreamBeginCapture_v2, (CUstream hStream, CUstreamCaptureMode mode), X)
#undef X

static CUresult end_capture(CUstream h, CUgraph *pg, gs_cu_dflt_t d)
{
	gs_sim_stream_t *s;
	gs_sim_graph_t *g;
	CUresult r = gs_cu_stream_out(h, d, pg, &s);
	if (r)
		return r;
	r = gs_cu_err(gs_sim_capture_end(s, &g));
	if (r == CUDA_ERROR_STREAM_CAPTURE_UNMATCHED)
		return CUDA_ERROR_ILLEGAL_STATE;
	*pg = r ? NULL : (CUgraph)g;
	return r;
}
#define X(d) end_capture(hStream, phGraph, d)
GS_CU_PAIR(CUresult, cuStreamEndCapture, (CUstream hStream, CUgraph *phGraph), X)
#undef X

static CUstreamCaptureStatus cap_status(int st)
{
	return st == GS_SIM_CAP_ACTIVE ? CU_STREAM_CAPTURE_STATUS_ACTIVE
	     : st == GS_SIM_CAP_INVALIDATED ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
	     : CU_STREAM_CAPTURE_STATUS_NONE;
}

static CUresult is_capturing(CUstream h, CUstreamCaptureStatus *st, gs_cu_dflt_t d)
{
	gs_sim_stream_t *s;
	CUresult r = gs_cu_stream_out(h, d, st, &s);
	if (r)
		return r;
	*st = cap_status(gs_sim_capture_info(s, NULL, NULL, NULL, NULL));
	return CUDA_SUCCESS;
}
#define X(d) is_capturing(hStream, captureStatus, d)
GS_CU_PAIR(CUresult, cuStreamIsCapturing, (CUstream hStream, CUstreamCaptureStatus *captureStatus), X)
#undef X

/* The dependency array stays valid until this thread's next query, as the
 * real one stays valid until the next capture operation. */
static _Thread_local gs_sim_node_t **info_deps;

static CUresult capture_info(CUstream h, CUstreamCaptureStatus *st, cuuint64_t *id,
			     CUgraph *graph, const CUgraphNode **deps, const CUgraphEdgeData **edges,
			     size_t *ndeps, gs_cu_dflt_t d)
{
	gs_sim_stream_t *s;
	gs_sim_graph_t *g;
	uint64_t cid;
	size_t nd;
	CUresult r = gs_cu_stream_out(h, d, st, &s);
	if (r)
		return r;
	free(info_deps);
	info_deps = NULL;
	int cs = gs_sim_capture_info(s, &cid, &g, &info_deps, &nd);
	*st = cap_status(cs);
	if (cs == GS_SIM_CAP_NONE)
		return CUDA_SUCCESS; /* the other outputs are left untouched */
	if (id)
		*id = cid;
	if (graph)
		*graph = (CUgraph)g;
	if (deps)
		*deps = (const CUgraphNode *)info_deps;
	if (edges)
		*edges = NULL; /* all default edges */
	if (ndeps)
		*ndeps = nd;
	return CUDA_SUCCESS;
}
#define X(d) capture_info(hStream, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out, numDependencies_out, d)
GS_CU_PAIR(CUresult, cuStreamGetCaptureInfo_v3,
	   (CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out,
	    CUgraph *graph_out, const CUgraphNode **dependencies_out,
	    const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out), X)
#undef X
#define X(d) capture_info(hStream, captureStatus_out, id_out, graph_out, dependencies_out, NULL, numDependencies_out, d)
GS_CU_PAIR(CUresult, cuStreamGetCaptureInfo_v2,
	   (CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out,
	    CUgraph *graph_out, const CUgraphNode **dependencies_out, size_t *numDependencies_out), X)
#undef X
