/*
 * Stream naming and the stream hooks that need more than a flush: destroy
 * (the engine forgets the stream) and the application's own capture.
 * Stream 0 is the legacy null stream of the current device;
 * hipStreamPerThread (and stream 0 of the _spt entry points) is the
 * per-thread stream, never held; any other stream's flags and device are
 * asked once (hipStreamGetFlags, hipGetStreamDeviceId) and cached until the
 * stream is destroyed.
 */
#include <pthread.h>
#include <stdlib.h>
#include "gs_hash.h"

#include "hip_internal.h"

typedef struct gs_hip_sinfo {
	hipStream_t s;
	void *ctx;
	unsigned flags;
	UT_hash_handle hh;
} gs_hip_sinfo_t;

static gs_hip_sinfo_t *gs_hip_streams;
static pthread_rwlock_t gs_hip_streams_lock = PTHREAD_RWLOCK_INITIALIZER;

void *gs_hip_current_ctx(void)
{
	int dev = 0;
	if (GS_HIP_REAL(gs_hip_real.hipGetDevice(&dev)) != hipSuccess)
		dev = 0;
	return (void *)(uintptr_t)(dev + 1);
}

gs_hip_skey_t gs_hip_stream_key(hipStream_t s, int spt)
{
	gs_hip_skey_t k = {(uintptr_t)s, NULL, 0};
	if (s == hipStreamPerThread || (!s && spt)) {
		k.handle = (uintptr_t)hipStreamPerThread;
		k.ctx = gs_hip_current_ctx();
		k.flags = GS_STREAM_PASSTHRU | GS_STREAM_BLOCKING;
		return k;
	}
	if (!s) {
		k.ctx = gs_hip_current_ctx();
		k.flags = GS_STREAM_LEGACY | GS_STREAM_BLOCKING;
		return k;
	}
	gs_hip_sinfo_t *e;
	pthread_rwlock_rdlock(&gs_hip_streams_lock);
	HASH_FIND_PTR(gs_hip_streams, &s, e);
	if (e) {
		k.ctx = e->ctx;
		k.flags = e->flags;
	}
	pthread_rwlock_unlock(&gs_hip_streams_lock);
	if (e)
		return k;
	unsigned fl = 0;
	if (GS_HIP_REAL(gs_hip_real.hipStreamGetFlags(s, &fl)) != hipSuccess) {
		/* Not a stream we can ask about: never hold work on it. */
		k.ctx = gs_hip_current_ctx();
		k.flags = GS_STREAM_PASSTHRU | GS_STREAM_BLOCKING;
		return k;
	}
	int dev = gs_hip_real.hipGetStreamDeviceId ? GS_HIP_REAL(gs_hip_real.hipGetStreamDeviceId(s)) : -1;
	k.ctx = dev >= 0 ? (void *)(uintptr_t)(dev + 1) : gs_hip_current_ctx();
	k.flags = (fl & hipStreamNonBlocking) ? 0 : GS_STREAM_BLOCKING;
	e = malloc(sizeof(*e));
	if (e) {
		e->s = s;
		e->ctx = k.ctx;
		e->flags = k.flags;
		gs_hip_sinfo_t *old;
		pthread_rwlock_wrlock(&gs_hip_streams_lock);
		HASH_FIND_PTR(gs_hip_streams, &s, old);
		if (old) {
			free(e);
		} else {
			GS_HASH_TRY();
			HASH_ADD_PTR(gs_hip_streams, s, e);
			if (gs_hash_oom)
				free(e); /* not cached: asked again next time */
		}
		pthread_rwlock_unlock(&gs_hip_streams_lock);
	}
	return k;
}

void gs_hip_stream_forget(hipStream_t s)
{
	gs_hip_sinfo_t *e;
	pthread_rwlock_wrlock(&gs_hip_streams_lock);
	HASH_FIND_PTR(gs_hip_streams, &s, e);
	if (e)
		HASH_DEL(gs_hip_streams, e);
	pthread_rwlock_unlock(&gs_hip_streams_lock);
	free(e);
}

GS_EXPORT hipError_t hipStreamDestroy(hipStream_t stream)
{
	if (gs_hip_bypass())
		return gs_hip_real.hipStreamDestroy ? gs_hip_real.hipStreamDestroy(stream) : hipErrorNotSupported;
	if (stream && stream != hipStreamPerThread) {
		gs_hip_skey_t k = gs_hip_stream_key(stream, 0);
		/* First: its adopted streams' joins flush its state, which the
		 * engine's destroy then drops. */
		gs_hip_adopt_destroyed(stream, "hipStreamDestroy");
		gs_engine_stream_destroy(k.handle, k.ctx, "hipStreamDestroy");
		gs_hip_stream_forget(stream);
	}
	return GS_HIP_REAL(gs_hip_real.hipStreamDestroy(stream));
}

GS_EXPORT hipError_t hipStreamBeginCapture(hipStream_t stream, hipStreamCaptureMode mode)
{
	if (gs_hip_bypass())
		return gs_hip_real.hipStreamBeginCapture ? gs_hip_real.hipStreamBeginCapture(stream, mode)
							 : hipErrorNotSupported;
	/* Stop holding before the capture starts, so nothing held can miss it;
	 * the capture sees its streams as the program made them (every
	 * adoption ends, once none can begin any more). */
	gs_engine_capture_begin("hipStreamBeginCapture", gs_hip_adopt_release_all);
	hipError_t rc = GS_HIP_REAL(gs_hip_real.hipStreamBeginCapture(stream, mode));
	if (rc != hipSuccess)
		gs_engine_capture_end("hipStreamBeginCapture");
	return rc;
}

GS_EXPORT hipError_t hipStreamEndCapture(hipStream_t stream, hipGraph_t *graph)
{
	if (gs_hip_bypass())
		return gs_hip_real.hipStreamEndCapture ? gs_hip_real.hipStreamEndCapture(stream, graph)
						       : hipErrorNotSupported;
	/* The capture ends even when the runtime reports it invalidated. */
	hipError_t rc = GS_HIP_REAL(gs_hip_real.hipStreamEndCapture(stream, graph));
	if (rc == hipSuccess || rc == hipErrorStreamCaptureInvalidated)
		gs_engine_capture_end("hipStreamEndCapture");
	return rc;
}
