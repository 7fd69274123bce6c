/* The test-only core stand-in (cu_engine_stub.c): what it saw last. */
#ifndef GS_CU_ENGINE_STUB_H
#define GS_CU_ENGINE_STUB_H

#include "cu_internal.h"

typedef struct gs_stub {
	const gs_ops_t *ops;
	int inits, launches, flush_stream, flush_all, destroyed, captures;
	bool passthru; /* gs_engine_launch submits through ops at once */
	bool cold;     /* gs_engine_cold takes every launch it is offered */
	bool lane;     /* gs_engine_cold_cached takes every launch it is offered */
	int cold_calls, lane_calls;
	uint64_t cold_key, lane_key;
	uintptr_t handle;
	void *ctx;
	unsigned sflags;
	gs_flush_reason_t why;
	const char *api;
	gs_rec_t *last; /* copy of the last launched record */
} gs_stub_t;

extern gs_stub_t gs_stub;
void gs_stub_reset(void);

#endif
