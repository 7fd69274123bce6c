/*
 * A test-only stand-in for the core, so the CUDA backend can be unit-tested
 * on its own: it records what the hooks ask of the engine and, when told to,
 * submits a launched record straight through the backend's ops (as the real
 * engine does for a pass-through stream).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "cu_engine_stub.h"
#include "gs_stats.h"
#include "gs_submit.h"

gs_stub_t gs_stub;
gs_hot_t gs_hot;
/* The backend reads a few settings (GRAPHSHIM_ADOPT); zero: every default off. */
gs_config_t gs_config;
/* The backend counts boundaries and unreadable layouts into the statistics. */
gs_stats_t gs_stats;
_Thread_local gs_lane_cache_t gs_lane_cache GS_TLS_IE;
gs_lane_t gs_stub_lane;

void gs_stub_reset(void)
{
	free(gs_stub.last);
	memset(&gs_stub, 0, sizeof(gs_stub));
	memset(&gs_hot, 0, sizeof(gs_hot));
	memset(&gs_lane_cache, 0, sizeof(gs_lane_cache));
	memset(&gs_stub_lane, 0, sizeof(gs_stub_lane));
}

void gs_stub_lane_open(uintptr_t handle, void *ctx)
{
	gs_hot.active = true;
	gs_hot.cold_limit = UINT64_MAX;
	gs_stub_lane.cold = true;
	gs_stub_lane.len = 1;
	gs_lane_cache.key.handle = handle;
	gs_lane_cache.key.ctx = ctx;
	gs_lane_cache.gen = gs_hot.generation;
	gs_lane_cache.lane = &gs_stub_lane;
}

void gs_lane_wait(gs_lane_t *l)
{
	while (__atomic_exchange_n(&l->spin, 1, __ATOMIC_ACQUIRE))
		;
}

bool gs_engine_init(const gs_ops_t *ops)
{
	gs_stub.ops = ops;
	gs_stub.inits++;
	return false;
}

void gs_engine_fini(void) {}
bool gs_engine_active(void) { return true; }
bool gs_engine_capturing(void) { return gs_stub.captures > 0; }
bool gs_engine_capture_begun(void) { return gs_stub.captures > 0; }

int gs_engine_launch(uintptr_t handle, void *ctx, unsigned sflags, gs_rec_t *rec,
		     const char *api)
{
	gs_stub.launches++;
	gs_stub.handle = handle;
	gs_stub.ctx = ctx;
	gs_stub.sflags = sflags;
	gs_stub.api = api;
	free(gs_stub.last);
	gs_stub.last = malloc(gs_rec_size(rec->nbytes));
	memcpy(gs_stub.last, rec, gs_rec_size(rec->nbytes));
	if (gs_stub.during)
		gs_stub.during();
	if (gs_stub.passthru)
		return gs_stub.ops->submit(rec, handle);
	return 0;
}

bool gs_engine_cold(uintptr_t handle, void *ctx, unsigned sflags, uint64_t key)
{
	gs_stub.cold_calls++;
	gs_stub.cold_key = key;
	gs_stub.handle = handle;
	gs_stub.ctx = ctx;
	gs_stub.sflags = sflags;
	return gs_stub.cold;
}



void gs_engine_stream_absorb(uintptr_t handle, void *ctx, unsigned sflags)
{
	gs_stub.absorbs = handle;
}

void gs_engine_flush_stream(uintptr_t handle, void *ctx, unsigned sflags,
			    gs_flush_reason_t why, const char *api)
{
	gs_stub.flush_stream++;
	gs_stub.last_call = 'f';
	gs_stub.handle = handle;
	gs_stub.sflags = sflags;
	gs_stub.why = why;
	gs_stub.api = api;
}

/* The stub has one context: the stream's own flush. */
void gs_engine_flush_synced(uintptr_t handle, void *ctx, unsigned sflags, gs_flush_reason_t why,
			    const char *api)
{
	gs_engine_flush_stream(handle, ctx, sflags, why, api);
}

/* A stream's query: "not ready" where the test says so, else its stream's flush. */
bool gs_engine_stream_query(uintptr_t handle, void *ctx, unsigned sflags, const char *api)
{
	if (gs_stub.query_busy)
		return true;
	gs_engine_flush_stream(handle, ctx, sflags, GS_FLUSH_QUERY, api);
	return false;
}

/* An event's synchronization: noted as a use of the event, with its reason. */
void gs_engine_event_synced(uint64_t ev, const char *api)
{
	gs_stub.why = GS_FLUSH_EVENT;
	gs_engine_event_use(ev, api);
}

void gs_engine_flush_all(gs_flush_reason_t why, const char *api)
{
	gs_stub.flush_all++;
	gs_stub.last_call = 'a';
	gs_stub.why = why;
	gs_stub.api = api;
}

void gs_engine_event_share(uint64_t ev, const char *api)
{
	gs_engine_event_use(ev, api);
}

/* No record is held in the stub: nothing to submit for an event, only noted. */
void gs_engine_event_use(uint64_t ev, const char *api)
{
	(void)api;
	if (gs_stub.nused < 4)
		gs_stub.used[gs_stub.nused] = ev;
	gs_stub.nused++;
}

bool gs_engine_event_query(uint64_t ev, const char *api)
{
	(void)ev;
	(void)api;
	return false;
}

bool gs_engine_event_destroy(uint64_t ev, const char *api)
{
	(void)ev;
	(void)api;
	return false;
}

void gs_engine_forget_funcs(const char *api)
{
	gs_engine_flush_all(GS_FLUSH_MODULE, api);
}

/* No builder here: nothing to keep a free from (counted). */
bool gs_engine_free_begin(void)
{
	gs_stub.free_begins++;
	return false;
}

void gs_engine_free_end(bool on)
{
	(void)on;
}

bool gs_engine_event_origin(uint64_t ev, uintptr_t *handle, void **ctx)
{
	(void)ev;
	*handle = gs_stub.origin;
	*ctx = gs_stub.origin_ctx;
	return gs_stub.origin != 0;
}

void gs_engine_stream_destroy(uintptr_t handle, void *ctx, const char *api)
{
	gs_stub.destroyed++;
	gs_stub.last_call = 'd';
	gs_stub.handle = handle;
}

/* As the engine: every stream flushed, the adoptions ended, then the capture counted. */
void gs_engine_capture_begin(const char *api, void (*release)(const char *api))
{
	gs_engine_flush_all(GS_FLUSH_CAPTURE, api);
	if (release)
		release(api);
	gs_stub.captures++;
}
void gs_engine_capture_end(const char *api) { gs_stub.captures--; }

const char *gs_flush_reason_name(gs_flush_reason_t r) { return "stub"; }

void gs_rec_seal(gs_rec_t *r)
{
	r->shape = 1;
	r->hash = gs_hash_bytes(1, r->args, r->nbytes);
}

gs_rec_t *gs_rec_scratch(uint32_t nbytes)
{
	static __thread gs_rec_t *scratch;
	static __thread uint32_t cap;
	if (!scratch || cap < nbytes) {
		free(scratch);
		scratch = malloc(gs_rec_size(nbytes));
		cap = nbytes;
	}
	memset(scratch, 0, gs_rec_size(nbytes));
	scratch->cap = cap;
	return scratch;
}

void gs_log(int level, const char *fmt, ...)
{
	va_list ap;
	if (level > GS_LOG_WARN)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* The submission thread (gs_submit.h): never anything posted here. */
uint64_t gs_submit_posted, gs_submit_done;
GS_TLS_IE __thread bool gs_submit_running;
void gs_submit_drain_slow(void)
{
}
