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

#include <pthread.h>

enum { GS_SELF_SUBMIT = 1u, GS_SELF_GRAPH = 2u, GS_SELF_PATCH = 4u, GS_SELF_UPDATER = 8u };

/*
 * What a launch call did besides its kind, for the calls that took
 * graphshim GS_SELF_SLOW_NS of its own time or more (the statistics'
 * host_slow_*): where an average of eager calls' own time is high, these
 * say whether a few long calls make it and what those did.
 */
enum {
	GS_SELF_DID_ARM = 1u << 8,     /* armed a sequence (copied its records, planned its chunks) */
	GS_SELF_DID_BUILD = 1u << 9,   /* built graphs on the caller's thread */
	GS_SELF_DID_RELEASE = 1u << 10, /* submitted held records eagerly */
	GS_SELF_DID_GATE = 1u << 11,   /* made or read a gate's timer */
	GS_SELF_DID_LAYOUT = 1u << 12, /* asked the driver for a function's parameter layout */
	GS_SELF_DID_PEERS = 1u << 13,  /* flushed another stream tied to this one (legacy) */
	GS_SELF_DID_WAIT = 1u << 14,   /* waited for the builder (a free while it built) */
	GS_SELF_DID_LOCK = 1u << 15,   /* found a stream's lock or the stream table's taken */
	GS_SELF_DID_MISMATCH = 1u << 16, /* ended a match on a mismatch */
	GS_SELF_DID_VARIANT = 1u << 17, /* copied a variant's records for the builder */
	GS_SELF_DID_PUBLISH = 1u << 18, /* took graphs the builder had finished */
};
#define GS_SELF_SLOW_NS 16000u

typedef struct gs_self_tl {
	uint64_t drv_ns;    /* this thread's time in timed vendor calls, ever */
	uint64_t own_ns;    /* ... and graphshim's own in its launch calls, ever (the gate
			     * subtracts it from its eager passes' host time) */
	unsigned kinds;     /* GS_SELF_* made since the outermost call began */
	unsigned depth;     /* launch calls nested on this thread (a hook's own hooks) */
	unsigned want;      /* without GRAPHSHIM_SELFTIME, launch calls still to time for
			     * the gate (GRAPHSHIM_GATE_LESS_OWN: a trial's pass), own_ns
			     * only; a count, so that a pass that never ends stops it */
} gs_self_tl_t;

extern GS_TLS_IE __thread gs_self_tl_t gs_self_tl;

typedef struct gs_self_call {
	uint64_t t0, drv0;
} gs_self_call_t;

static inline void gs_self_call_begin(gs_self_call_t *c)
{
	c->t0 = 0;
	if (GS_UNLIKELY(gs_self_tl.depth)) {
		gs_self_tl.depth++; /* nested in a timed call: part of it */
		return;
	}
	if (GS_LIKELY(!gs_config.selftime)) {
		if (GS_LIKELY(!gs_self_tl.want))
			return;
		gs_self_tl.want--;
	}
	gs_self_tl.depth = 1;
	gs_self_tl.kinds = 0;
	c->drv0 = gs_self_tl.drv_ns;
	c->t0 = gs_clock_ns();
}

/* Count the call begun with c (nothing where it was nested or untimed). */
void gs_self_call_end_slow(const gs_self_call_t *c);

static inline void gs_self_call_end(const gs_self_call_t *c)
{
	if (GS_LIKELY(!gs_self_tl.depth))
		return; /* not timed */
	gs_self_call_end_slow(c);
}

/* Inside a timed launch call, the vendor's time is not graphshim's own. */
static inline uint64_t gs_self_drv_begin(void)
{
	return GS_LIKELY(!gs_self_tl.depth) ? 0 : gs_clock_ns();
}

void gs_self_drv_end_slow(uint64_t t0, unsigned kind);

/* Time the next n launch calls of this thread for the gate (their own_ns). */
static inline void gs_self_want(unsigned n)
{
	gs_self_tl.want = n;
}

/* Note that the launch call in progress did `did` (GS_SELF_DID_*). */
static inline void gs_self_did(unsigned did)
{
	if (GS_UNLIKELY(gs_config.selftime))
		gs_self_tl.kinds |= did;
}

/* pthread_mutex_lock(m), noting under GRAPHSHIM_SELFTIME that another thread had it. */
static inline void gs_self_lock(pthread_mutex_t *m)
{
	if (GS_UNLIKELY(gs_config.selftime)) {
		if (!pthread_mutex_trylock(m))
			return;
		gs_self_did(GS_SELF_DID_LOCK);
	}
	pthread_mutex_lock(m);
}

static inline void gs_self_drv_end(uint64_t t0, unsigned kind)
{
	if (GS_UNLIKELY(t0))
		gs_self_drv_end_slow(t0, kind);
}

#endif /* GS_SELF_H */
