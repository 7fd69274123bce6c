/* The test-only core stand-in (cu_engine_stub.c): what it saw last. */
#ifndef GS_CU_ENGINE_STUB_H
#define GS_CU_ENGINE_STUB_H

#include "cu_internal.h"
#include "gs_lane.h"

typedef struct gs_stub {
	const gs_ops_t *ops;
	int inits, launches, flush_stream, flush_all, destroyed, captures;
	bool passthru; /* gs_engine_launch submits through ops at once */
	bool cold;     /* gs_engine_cold takes every launch it is offered */
	int cold_calls;
	uint64_t cold_key;
	uintptr_t handle;
	void *ctx;
	unsigned sflags;
	gs_flush_reason_t why;
	const char *api;
	gs_rec_t *last; /* copy of the last launched record */
	char last_call;   /* 'f': gs_engine_flush_stream, 'a': _flush_all, 'd': _stream_destroy */
	uintptr_t origin; /* gs_engine_event_origin's answer for every event (0: none) */
	void *origin_ctx;
	uintptr_t absorbs; /* the last stream gs_engine_stream_absorb was told of */
	uint64_t used[4];  /* the events of gs_engine_event_use's first calls */
	int nused;
	int free_begins; /* gs_engine_free_begin's calls */
	void (*during)(void); /* called inside gs_engine_launch, where set */
	bool query_busy; /* gs_engine_stream_query answers "not ready" (no flush) */
} gs_stub_t;

extern gs_stub_t gs_stub;
void gs_stub_reset(void);

/*
 * The cold lane (gs_lane.h, inline in the backend) reads the engine's own
 * globals; the stub has one stream state's lane, which
 * gs_stub_lane_open() makes the thread's last stream, cold and in a
 * segment: every launch the lane takes adds one to its len.
 */
extern gs_lane_t gs_stub_lane;
void gs_stub_lane_open(uintptr_t handle, void *ctx);

#endif
