/*
 * Side streams adopted into the stream they fork from (GRAPHSHIM_ADOPT), on
 * HIP: the core's tables and fork rule (gs_adopt.c) with this backend's
 * joins, stream checks and scopes.  When stream T waits on an event last
 * recorded on stream R, after one closed fork of T from R and no spoilt one,
 * every stream-ordered call the program makes on T is made on R instead, so
 * the engine sees R's step whole; why that keeps every result, and where an
 * adoption ends: shim/cuda/cu_adopt.c.
 *
 * Unlike CUDA's, HIP's adoption is not armed lazily: with GRAPHSHIM_ADOPT
 * on, every hook that takes a stream read-locks the table and counts its
 * stream's work from the first call, so no call can have missed the count
 * or the lock, and no grace is needed.  The cost is a read lock a call.
 */
#include "gs_adopt.h"
#include "gs_config.h"
#include "hip_internal.h"
#include "gs_submit.h"

static int gs_hip_adopt_join(void *ev, uintptr_t first, uintptr_t later)
{
	if (!gs_hip_real.hipEventRecord || !gs_hip_real.hipStreamWaitEvent)
		return hipErrorNotSupported;
	gs_submit_drain(); /* the record follows what was posted on `first` */
	hipError_t rc = GS_HIP_REAL(gs_hip_real.hipEventRecord((hipEvent_t)ev, (hipStream_t)first));
	return rc == hipSuccess
		       ? GS_HIP_REAL(gs_hip_real.hipStreamWaitEvent((hipStream_t)later, (hipEvent_t)ev, 0))
		       : rc;
}

static void *gs_hip_adopt_event_new(void)
{
	hipEvent_t ev = NULL;
	if (!gs_hip_real.hipEventCreateWithFlags ||
	    GS_HIP_REAL(gs_hip_real.hipEventCreateWithFlags(&ev, hipEventDisableTiming)) != hipSuccess)
		return NULL;
	return ev;
}

static void gs_hip_adopt_event_free(void *ev)
{
	if (gs_hip_real.hipEventDestroy)
		GS_HIP_REAL(gs_hip_real.hipEventDestroy((hipEvent_t)ev));
}

/* Submit what the engine holds of stream s (a redirected stream: never the per-thread one). */
static void gs_hip_adopt_flush(hipStream_t s, int spt, const char *api)
{
	gs_hip_skey_t k = gs_hip_stream_key(s, spt);
	gs_engine_flush_stream(k.handle, k.ctx, k.flags, GS_FLUSH_STREAM, api);
}

static int gs_hip_adopt_give_back(void *ev, uintptr_t root, uintptr_t t, void *ctx, const char *api)
{
	(void)ctx; /* the join's event and both streams are of one device */
	gs_hip_adopt_flush((hipStream_t)root, 0, api);
	return gs_hip_adopt_join(ev, root, t);
}

static bool gs_hip_adopt_gone(int rc)
{
	return rc == hipErrorDeinitialized || rc == hipErrorContextIsDestroyed;
}

static const gs_adopt_ops_t gs_hip_adopt_ops = {
	.join = gs_hip_adopt_join,
	.event_new = gs_hip_adopt_event_new,
	.event_free = gs_hip_adopt_event_free,
	.give_back = gs_hip_adopt_give_back,
	.gone = gs_hip_adopt_gone,
	.ctx_current = gs_hip_current_ctx,
	.legacy = 0,
	.per_thread = (uintptr_t)hipStreamPerThread,
	.name = "hip",
};

static gs_adopt_t gs_hip_adoption = GS_ADOPT_INIT(&gs_hip_adopt_ops);

/* Stream s as the table names it: 0 for the legacy stream, the per-thread
 * handle for stream 0 of a _spt call. */
static uintptr_t gs_hip_adopt_handle(hipStream_t s, int spt)
{
	return !s && spt ? (uintptr_t)hipStreamPerThread : (uintptr_t)s;
}

void gs_hip_adopt_try(hipStream_t t, int spt, hipEvent_t ev)
{
	if (!gs_config.adopt || !ev || gs_engine_capture_begun())
		return;
	uintptr_t th = gs_hip_adopt_handle(t, spt);
	if (th == (uintptr_t)hipStreamPerThread)
		return;
	uintptr_t rh = 0;
	void *octx = NULL;
	if (!gs_engine_event_origin((uint64_t)(uintptr_t)ev, &rh, &octx))
		return;
	if (rh == th || rh == (uintptr_t)hipStreamPerThread)
		return;
	void *ctx = gs_hip_current_ctx();
	if (ctx != octx)
		return;
	/* t waits on root's event: the join of a fork of root's from t (root
	 * the side there), and a fork of t from root. */
	if (!gs_adopt_fork(&gs_hip_adoption, th, rh))
		return;
	/* Again under the lock: a capture that began meanwhile ends adoptions under it. */
	if (gs_adopt_take_begin(&gs_hip_adoption, th, &rh) && !gs_engine_capture_begun()) {
		gs_hip_skey_t tk = gs_hip_stream_key(t, spt), rk = gs_hip_stream_key((hipStream_t)rh, 0);
		/* Never into the legacy stream: its handle, 0, is the per-thread
		 * stream's in a _spt call a redirected one could be. */
		bool fits = th && rh && tk.ctx == ctx && rk.ctx == ctx && !(tk.flags & GS_STREAM_PASSTHRU) &&
			    !(rk.flags & GS_STREAM_PASSTHRU) &&
			    (!(tk.flags & GS_STREAM_BLOCKING) ||
			     (rk.flags & (GS_STREAM_LEGACY | GS_STREAM_BLOCKING)));
		void *join = fits ? gs_hip_adopt_event_new() : NULL;
		if (join) {
			/* t's held work first, then t's work so far joined into root. */
			gs_hip_adopt_flush(t, spt, "adopt");
			if (gs_hip_adopt_join(join, th, rh) == hipSuccess) {
				gs_adopt_insert(&gs_hip_adoption, th, rh, ctx, join);
				gs_engine_stream_absorb(rk.handle, rk.ctx, rk.flags);
			} else {
				gs_hip_adopt_event_free(join);
			}
		}
	}
	gs_adopt_take_end(&gs_hip_adoption);
}

gs_hip_adopt_scope_t gs_hip_adopt_enter(hipStream_t *s, int spt, bool work)
{
	gs_hip_adopt_scope_t g = {false};
	if (!s || !gs_config.adopt || gs_hip_bypass())
		return g;
	gs_adopt_rdlock(&gs_hip_adoption);
	g.locked = true;
	uintptr_t h = gs_hip_adopt_handle(*s, spt);
	if (h == (uintptr_t)hipStreamPerThread)
		return g;
	uintptr_t to = gs_adopt_redirect(&gs_hip_adoption, h);
	*s = (hipStream_t)to;
	if (work)
		gs_adopt_count(&gs_hip_adoption, to);
	return g;
}

void gs_hip_adopt_leave(gs_hip_adopt_scope_t *g)
{
	if (g->locked)
		gs_adopt_unlock(&gs_hip_adoption);
}

void gs_hip_adopt_release(hipStream_t t, int spt, const char *api)
{
	uintptr_t h = gs_hip_adopt_handle(t, spt);
	if (!gs_config.adopt || !h || h == (uintptr_t)hipStreamPerThread || gs_hip_bypass())
		return;
	gs_adopt_release(&gs_hip_adoption, h, api);
}

void gs_hip_adopt_destroyed(hipStream_t s, const char *api)
{
	if (!gs_config.adopt || !s || s == hipStreamPerThread)
		return;
	gs_adopt_destroyed(&gs_hip_adoption, (uintptr_t)s, api);
}

void gs_hip_adopt_release_all(const char *api)
{
	if (!gs_config.adopt || gs_hip_bypass())
		return;
	gs_adopt_release_all(&gs_hip_adoption, api);
}

void gs_hip_adopt_forget(void)
{
	gs_adopt_reset(&gs_hip_adoption);
}
