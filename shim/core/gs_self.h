/*
 * GRAPHSHIM_SELFTIME: where a launch call's host time goes.  A backend
 * brackets each launch call it takes (not the cold lane's, which calls
 * the driver with nothing kept) with gs_self_call_begin/end, and each
 * call it makes to the vendor on the application's behalf with
 * gs_self_drv_begin/end, naming the kind: an eager submission (the
 * application's own call or a held record), a graph launch, a node patch.
 * At the call's end its time less the vendor's is graphshim's own, and
 * the call is counted by what it did: held (no vendor call), eager (a
 * submission, no graph), or chunk (it launched a graph).  The counters
 * are the statistics' host_*; off by default (two clock reads a call, one
 * a vendor call, and the counters' atomics).
 */
#ifndef GS_SELF_H
#define GS_SELF_H

#include "gs_clock.h"
#include "gs_common.h"
#include "gs_config.h"

enum { GS_SELF_SUBMIT = 1u, GS_SELF_GRAPH = 2u, GS_SELF_PATCH = 4u, GS_SELF_UPDATER = 8u };

typedef struct gs_self_tl {
	uint64_t drv_ns;    /* this thread's time in timed vendor calls, ever */
	uint64_t own_ns;    /* ... and graphshim's own in its launch calls, ever (the gate
			     * subtracts it from its eager passes' host time) */
	unsigned kinds;     /* GS_SELF_* made since the outermost call began */
	unsigned depth;     /* launch calls nested on this thread (a hook's own hooks) */
} gs_self_tl_t;

extern GS_TLS_IE __thread gs_self_tl_t gs_self_tl;

typedef struct gs_self_call {
	uint64_t t0, drv0;
} gs_self_call_t;

static inline void gs_self_call_begin(gs_self_call_t *c)
{
	c->t0 = 0;
	if (GS_LIKELY(!gs_config.selftime) || gs_self_tl.depth++)
		return;
	gs_self_tl.kinds = 0;
	c->drv0 = gs_self_tl.drv_ns;
	c->t0 = gs_clock_ns();
}

/* Count the call begun with c (nothing where it was nested or untimed). */
void gs_self_call_end_slow(const gs_self_call_t *c);

static inline void gs_self_call_end(const gs_self_call_t *c)
{
	if (GS_LIKELY(!gs_config.selftime))
		return;
	gs_self_call_end_slow(c);
}

static inline uint64_t gs_self_drv_begin(void)
{
	return GS_LIKELY(!gs_config.selftime) ? 0 : gs_clock_ns();
}

void gs_self_drv_end_slow(uint64_t t0, unsigned kind);

static inline void gs_self_drv_end(uint64_t t0, unsigned kind)
{
	if (GS_UNLIKELY(t0))
		gs_self_drv_end_slow(t0, kind);
}

#endif /* GS_SELF_H */
