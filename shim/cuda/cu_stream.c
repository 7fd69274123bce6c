/*
 * Streams and contexts as the engine sees them.  The driver names the
 * legacy default stream with 0 or CU_STREAM_LEGACY, and the calling
 * thread's per-thread default stream with CU_STREAM_PER_THREAD (or 0 in a
 * _ptsz/_ptds entry point).  The engine gets one key per stream and the
 * stream's kind; for ordinary streams the kind (blocking or not) comes from
 * cuStreamGetFlags once, cached per handle in a lock-free direct-mapped
 * table and forgotten when the stream is destroyed.
 */
#include "cu_internal.h"
#include "cu_devupd.h"

/*
 * The per-thread default stream cannot be named from another thread, so the
 * engine never holds work on it (GS_STREAM_PASSTHRU); its key is the address
 * of a thread-local byte, which no CUstream handle can equal.
 */
static __thread char gs_cu_pt_key __attribute__((tls_model("initial-exec")));

/* handle | 1 (valid) | 2 (blocking); handles are at least 4-byte aligned. */
#define GS_CU_SCACHE 1024u
static uintptr_t gs_cu_scache[GS_CU_SCACHE];

static unsigned gs_cu_scache_slot(uintptr_t h)
{
	return (unsigned)gs_mix64(h) & (GS_CU_SCACHE - 1);
}

static unsigned gs_cu_stream_flags(CUstream s)
{
	uintptr_t h = (uintptr_t)s;
	unsigned i = gs_cu_scache_slot(h);
	uintptr_t w = __atomic_load_n(&gs_cu_scache[i], __ATOMIC_RELAXED);
	if (GS_LIKELY((h & 3) == 0 && (w & ~(uintptr_t)3) == h && (w & 1)))
		return (w & 2) ? GS_STREAM_BLOCKING : 0;
	unsigned int f = 0;
	CUresult r = gs_cu_real.cuStreamGetFlags ? gs_cu_real.cuStreamGetFlags(s, &f)
						 : CUDA_ERROR_NOT_FOUND;
	if (r != CUDA_SUCCESS) {
		/* Let the driver report a bad handle; a good one passes through, which
		 * the statistics count (unkept) and this says why, once. */
		gs_log_once(GS_LOG_INFO, "cuda: cuStreamGetFlags(%p) failed (status %d): work on such "
			    "streams passes through", (void *)s, (int)r);
		return GS_STREAM_PASSTHRU;
	}
	unsigned sf = (f & CU_STREAM_NON_BLOCKING) ? 0 : GS_STREAM_BLOCKING;
	if ((h & 3) == 0)
		__atomic_store_n(&gs_cu_scache[i], h | 1 | (sf ? 2 : 0), __ATOMIC_RELAXED);
	return sf;
}

void gs_cu_stream_ref(CUstream s, int pt, gs_cu_sref_t *out)
{
	if (!s)
		s = pt ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY;
	out->rflags = 0;
	if (s == CU_STREAM_LEGACY) {
		out->handle = (uintptr_t)CU_STREAM_LEGACY;
		out->sflags = GS_STREAM_LEGACY;
	} else if (s == CU_STREAM_PER_THREAD) {
		out->handle = (uintptr_t)&gs_cu_pt_key;
		out->sflags = GS_STREAM_PASSTHRU | GS_STREAM_BLOCKING;
		out->rflags = GS_CU_RF_PERTHREAD;
	} else {
		out->handle = (uintptr_t)s;
		out->sflags = gs_cu_stream_flags(s);
	}
}

CUstream gs_cu_stream_of(uintptr_t handle, uint32_t rflags)
{
	if (rflags & GS_CU_RF_PERTHREAD)
		return CU_STREAM_PER_THREAD;
	return (CUstream)handle; /* CU_STREAM_LEGACY is its own key */
}

void gs_cu_stream_forget(CUstream s)
{
	uintptr_t h = (uintptr_t)s;
	unsigned i = gs_cu_scache_slot(h);
	uintptr_t w = __atomic_load_n(&gs_cu_scache[i], __ATOMIC_RELAXED);
	if ((w & ~(uintptr_t)3) == h)
		__atomic_compare_exchange_n(&gs_cu_scache[i], &w, 0, false,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

void gs_cu_streams_clear(void)
{
	for (unsigned i = 0; i < GS_CU_SCACHE; i++)
		__atomic_store_n(&gs_cu_scache[i], 0, __ATOMIC_RELAXED);
}

CUcontext gs_cu_ctx_current(void)
{
	CUcontext c = NULL;
	if (gs_cu_real.cuCtxGetCurrent && gs_cu_real.cuCtxGetCurrent(&c) != CUDA_SUCCESS)
		c = NULL;
	return c;
}

bool gs_cu_ctx_enter(CUcontext ctx)
{
	if (!ctx || gs_cu_ctx_current() == ctx || !gs_cu_real.cuCtxPushCurrent_v2)
		return false;
	return gs_cu_real.cuCtxPushCurrent_v2(ctx) == CUDA_SUCCESS;
}

void gs_cu_ctx_leave(bool pushed)
{
	CUcontext c;
	if (pushed && gs_cu_real.cuCtxPopCurrent_v2)
		gs_cu_real.cuCtxPopCurrent_v2(&c);
}

bool gs_cu_flush_stream(CUstream s, int pt, gs_flush_reason_t why, const char *api)
{
	gs_cu_sref_t r;
	bool busy = false;
	gs_cu_stream_ref(s, pt, &r);
	CUcontext ctx = gs_cu_ctx_current();
	gs_cu_depth++;
	if (why == GS_FLUSH_QUERY) /* the host looks at one stream */
		busy = gs_engine_stream_query(r.handle, ctx, r.sflags, api);
	else if (why == GS_FLUSH_SYNC) /* the host waits on one stream */
		gs_engine_flush_synced(r.handle, ctx, r.sflags, why, api);
	else
		gs_engine_flush_stream(r.handle, ctx, r.sflags, why, api);
	gs_cu_depth--;
	return busy;
}

/* An engine call about event ev, made from a hook (the depth raised). */
static void gs_cu_event_call(void (*fn)(uint64_t, const char *), CUevent ev, const char *api)
{
	if (!gs_cu_engine_ok())
		return;
	gs_cu_depth++;
	fn((uint64_t)(uintptr_t)ev, api);
	gs_cu_depth--;
}

void gs_cu_event_share(CUevent ev, const char *api)
{
	gs_cu_event_call(gs_engine_event_share, ev, api);
}

void gs_cu_event_use(CUevent ev, const char *api)
{
	gs_cu_event_call(gs_engine_event_use, ev, api);
}

void gs_cu_flush_all(gs_flush_reason_t why, const char *api)
{
	gs_cu_depth++;
	gs_engine_flush_all(why, api);
	gs_cu_depth--;
}

void gs_cu_forget(void)
{
	gs_cu_fn_forget();
	gs_cu_streams_clear();
	gs_cu_stand_forget();
	gs_cu_du_forget();
}
