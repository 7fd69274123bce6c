/*
 * HIP front: streams, events, host functions and stream capture.  Stream 0
 * is the null stream with legacy semantics (blocking streams wait for it and
 * it for them); hipStreamPerThread is the calling thread's own stream.  The
 * _spt exports graphshim hooks share one implementation with their twin,
 * told what stream 0 means.
 */
#include <stdlib.h>

#include "hip_front.h"

/* ---- streams ---- */
static hipError_t stream_create(hipStream_t *ph, unsigned flags, int prio)
{
	gs_sim_stream_t *s;
	if (!ph || (flags & ~(unsigned)hipStreamNonBlocking))
		return hipErrorInvalidValue;
	gs_sim_ctx_t *ctx = gs_hip_ctx();
	if (!ctx)
		return hipErrorOutOfMemory;
	hipError_t r = gs_hip_err(gs_sim_stream_create(&s, ctx,
		(flags & hipStreamNonBlocking) ? GS_SIM_S_NONBLOCKING : GS_SIM_S_BLOCKING, prio));
	if (!r)
		*ph = (hipStream_t)s;
	return r;
}

hipError_t hipStreamCreate(hipStream_t *stream)
{
	GS_HIP_RET(stream_create(stream, hipStreamDefault, 0));
}

hipError_t hipStreamCreateWithFlags(hipStream_t *stream, unsigned int flags)
{
	GS_HIP_RET(stream_create(stream, flags, 0));
}

/* Priorities run from 0 (lowest) to -2 (highest) on 5.2; clamped. */
hipError_t hipStreamCreateWithPriority(hipStream_t *stream, unsigned int flags, int priority)
{
	if (priority > 0)
		priority = 0;
	if (priority < -2)
		priority = -2;
	GS_HIP_RET(stream_create(stream, flags, priority));
}

hipError_t hipDeviceGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
	if (leastPriority)
		*leastPriority = 0;
	if (greatestPriority)
		*greatestPriority = -2;
	return hipSuccess;
}

/* Like the CUDA front, waits for the stream's work (see README). */
hipError_t hipStreamDestroy(hipStream_t stream)
{
	if (!gs_sim_reg_is(stream, GS_SIM_H_STREAM))
		GS_HIP_RET(hipErrorInvalidHandle);
	gs_sim_stream_destroy((gs_sim_stream_t *)stream);
	return hipSuccess;
}

static hipError_t stream_sync(hipStream_t h, gs_hip_dflt_t d)
{
	gs_sim_stream_t *s;
	hipError_t r = gs_hip_stream(h, d, &s);
	GS_HIP_RET(r ? r : gs_hip_err(gs_sim_stream_sync(s)));
}

#define X(d) stream_sync(stream, d)
GS_HIP_PAIR(hipStreamSynchronize, (hipStream_t stream), X)
#undef X

static hipError_t stream_query(hipStream_t h, gs_hip_dflt_t d)
{
	gs_sim_stream_t *s;
	hipError_t r = gs_hip_stream(h, d, &s);
	GS_HIP_RET(r ? r : gs_hip_err(gs_sim_stream_query(s)));
}

#define X(d) stream_query(stream, d)
GS_HIP_PAIR(hipStreamQuery, (hipStream_t stream), X)
#undef X

static hipError_t stream_flags(hipStream_t h, unsigned *flags, gs_hip_dflt_t d)
{
	gs_sim_stream_t *s;
	hipError_t r = gs_hip_stream_out(h, d, flags, &s);
	if (r)
		GS_HIP_RET(r);
	*flags = s->flags == GS_SIM_S_NONBLOCKING ? hipStreamNonBlocking : hipStreamDefault;
	return hipSuccess;
}

#define X(d) stream_flags(stream, flags, d)
GS_HIP_PAIR(hipStreamGetFlags, (hipStream_t stream, unsigned int *flags), X)
#undef X

hipError_t hipStreamGetPriority(hipStream_t stream, int *priority)
{
	gs_sim_stream_t *s;
	hipError_t r = gs_hip_stream_out(stream, GS_HIP_NULL, priority, &s);
	if (r)
		GS_HIP_RET(r);
	*priority = s->priority;
	return hipSuccess;
}

/* The device of a stream, -1 for a handle that is not one. */
int hipGetStreamDeviceId(hipStream_t stream)
{
	gs_sim_stream_t *s;
	return gs_hip_stream(stream, GS_HIP_NULL, &s) ? -1 : 0;
}

static hipError_t wait_event(hipStream_t h, hipEvent_t ev, unsigned flags, gs_hip_dflt_t d)
{
	gs_sim_stream_t *s;
	hipError_t r = gs_hip_stream(h, d, &s);
	if (r)
		GS_HIP_RET(r);
	if (!gs_sim_reg_is(ev, GS_SIM_H_EVENT))
		GS_HIP_RET(hipErrorInvalidHandle);
	if (flags)
		GS_HIP_RET(hipErrorInvalidValue);
	GS_HIP_RET(gs_hip_err(gs_sim_stream_wait_event(s, (gs_sim_event_t *)ev)));
}

#define X(d) wait_event(stream, event, flags, d)
GS_HIP_PAIR(hipStreamWaitEvent, (hipStream_t stream, hipEvent_t event, unsigned int flags), X)
#undef X

static hipError_t launch_host(hipStream_t h, hipHostFn_t fn, void *ud, gs_hip_dflt_t d)
{
	gs_sim_stream_t *s;
	hipError_t r = gs_hip_stream(h, d, &s);
	if (r)
		GS_HIP_RET(r);
	GS_HIP_RET(gs_hip_err(gs_sim_front_host_fn(s, fn, ud)));
}

hipError_t hipLaunchHostFunc(hipStream_t stream, hipHostFn_t fn, void *userData)
{
	return launch_host(stream, fn, userData, GS_HIP_NULL);
}

/* The callback as hipStreamAddCallback gives it (gs_sim_front_callback). */
static void callback_invoke(void (*fn)(void), void *stream, void *ud)
{
	((hipStreamCallback_t)fn)((hipStream_t)stream, hipSuccess, ud);
}

static hipError_t add_callback(hipStream_t h, hipStreamCallback_t fn, void *ud, unsigned flags,
			       gs_hip_dflt_t d)
{
	gs_sim_stream_t *s;
	hipError_t r = gs_hip_stream(h, d, &s);
	if (r)
		GS_HIP_RET(r);
	GS_HIP_RET(gs_hip_err(gs_sim_front_callback(s, callback_invoke, (void (*)(void))fn, h, ud,
						    flags)));
}

hipError_t hipStreamAddCallback(hipStream_t stream, hipStreamCallback_t callback, void *userData,
				unsigned int flags)
{
	return add_callback(stream, callback, userData, flags, GS_HIP_NULL);
}

/* ---- events ---- */
hipError_t hipEventCreateWithFlags(hipEvent_t *event, unsigned flags)
{
	gs_sim_event_t *e;
	const unsigned known = hipEventDefault | hipEventBlockingSync | hipEventDisableTiming |
			       hipEventInterprocess | hipEventReleaseToDevice | hipEventReleaseToSystem;
	if (!event || (flags & ~known))
		GS_HIP_RET(hipErrorInvalidValue);
	/* An interprocess event must not time, as in CUDA. */
	if ((flags & hipEventInterprocess) && !(flags & hipEventDisableTiming))
		GS_HIP_RET(hipErrorInvalidValue);
	if (!gs_hip_ctx())
		GS_HIP_RET(hipErrorOutOfMemory);
	hipError_t r = gs_hip_err(gs_sim_event_create(&e,
		(flags & hipEventDisableTiming) ? GS_SIM_EV_NOTIMING : 0));
	if (!r)
		*event = (hipEvent_t)e;
	GS_HIP_RET(r);
}

hipError_t hipEventCreate(hipEvent_t *event)
{
	return hipEventCreateWithFlags(event, hipEventDefault);
}

hipError_t hipEventDestroy(hipEvent_t event)
{
	if (!gs_sim_reg_is(event, GS_SIM_H_EVENT))
		GS_HIP_RET(hipErrorInvalidHandle);
	gs_sim_event_destroy((gs_sim_event_t *)event);
	return hipSuccess;
}

static hipError_t event_record(hipEvent_t ev, hipStream_t h, gs_hip_dflt_t d)
{
	gs_sim_stream_t *s;
	hipError_t r = gs_hip_stream(h, d, &s);
	if (r)
		GS_HIP_RET(r);
	if (!gs_sim_reg_is(ev, GS_SIM_H_EVENT))
		GS_HIP_RET(hipErrorInvalidHandle);
	GS_HIP_RET(gs_hip_err(gs_sim_event_record((gs_sim_event_t *)ev, s)));
}

hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream)
{
	return event_record(event, stream, GS_HIP_NULL);
}

hipError_t hipEventQuery(hipEvent_t event)
{
	if (!gs_sim_reg_is(event, GS_SIM_H_EVENT))
		GS_HIP_RET(hipErrorInvalidHandle);
	GS_HIP_RET(gs_hip_err(gs_sim_event_query((gs_sim_event_t *)event)));
}

hipError_t hipEventSynchronize(hipEvent_t event)
{
	if (!gs_sim_reg_is(event, GS_SIM_H_EVENT))
		GS_HIP_RET(hipErrorInvalidHandle);
	GS_HIP_RET(gs_hip_err(gs_sim_event_sync((gs_sim_event_t *)event)));
}

hipError_t hipEventElapsedTime(float *ms, hipEvent_t start, hipEvent_t stop)
{
	if (!ms)
		GS_HIP_RET(hipErrorInvalidValue);
	if (!gs_sim_reg_is(start, GS_SIM_H_EVENT) || !gs_sim_reg_is(stop, GS_SIM_H_EVENT))
		GS_HIP_RET(hipErrorInvalidHandle);
	GS_HIP_RET(gs_hip_err(gs_sim_event_elapsed(ms, (gs_sim_event_t *)start,
						   (gs_sim_event_t *)stop)));
}

/* ---- capture ---- */
static hipError_t begin_capture(hipStream_t h, hipStreamCaptureMode mode, gs_hip_dflt_t d)
{
	gs_sim_stream_t *s;
	hipError_t r = gs_hip_stream(h, d, &s);
	if (r)
		GS_HIP_RET(r);
	if (s->legacy)
		GS_HIP_RET(hipErrorStreamCaptureUnsupported);
	if (mode != hipStreamCaptureModeGlobal && mode != hipStreamCaptureModeThreadLocal &&
	    mode != hipStreamCaptureModeRelaxed)
		GS_HIP_RET(hipErrorInvalidValue);
	GS_HIP_RET(gs_hip_err(gs_sim_capture_begin(s, mode == hipStreamCaptureModeRelaxed ? 2 : 0)));
}

hipError_t hipStreamBeginCapture(hipStream_t stream, hipStreamCaptureMode mode)
{
	return begin_capture(stream, mode, GS_HIP_NULL);
}

static hipError_t end_capture(hipStream_t h, hipGraph_t *pg, gs_hip_dflt_t d)
{
	gs_sim_stream_t *s;
	gs_sim_graph_t *g;
	hipError_t r = gs_hip_stream_out(h, d, pg, &s);
	if (r)
		GS_HIP_RET(r);
	r = gs_hip_err(gs_sim_capture_end(s, &g));
	if (r == hipErrorStreamCaptureUnmatched)
		GS_HIP_RET(hipErrorIllegalState);
	*pg = r ? NULL : (hipGraph_t)g;
	GS_HIP_RET(r);
}

hipError_t hipStreamEndCapture(hipStream_t stream, hipGraph_t *pGraph)
{
	return end_capture(stream, pGraph, GS_HIP_NULL);
}

static hipStreamCaptureStatus cap_status(int st)
{
	return st == GS_SIM_CAP_ACTIVE ? hipStreamCaptureStatusActive
	     : st == GS_SIM_CAP_INVALIDATED ? hipStreamCaptureStatusInvalidated
	     : hipStreamCaptureStatusNone;
}

static hipError_t is_capturing(hipStream_t h, hipStreamCaptureStatus *st, gs_hip_dflt_t d)
{
	gs_sim_stream_t *s;
	hipError_t r = gs_hip_stream_out(h, d, st, &s);
	if (r)
		GS_HIP_RET(r);
	*st = cap_status(gs_sim_capture_info(s, NULL, NULL, NULL, NULL));
	return hipSuccess;
}

hipError_t hipStreamIsCapturing(hipStream_t stream, hipStreamCaptureStatus *pCaptureStatus)
{
	return is_capturing(stream, pCaptureStatus, GS_HIP_NULL);
}

hipError_t hipStreamGetCaptureInfo(hipStream_t stream, hipStreamCaptureStatus *pCaptureStatus,
				   unsigned long long *pId)
{
	gs_sim_stream_t *s;
	uint64_t id;
	hipError_t r = gs_hip_stream_out(stream, GS_HIP_NULL, pCaptureStatus, &s);
	if (r)
		GS_HIP_RET(r);
	int st = gs_sim_capture_info(s, &id, NULL, NULL, NULL);
	*pCaptureStatus = cap_status(st);
	if (pId && st != GS_SIM_CAP_NONE)
		*pId = id;
	return hipSuccess;
}
