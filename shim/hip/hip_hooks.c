/*
 * The generic hooks: one wrapper per entry point of hip_api.def whose class
 * is enough to decide what to do (flush all, flush its stream, nothing).
 * Elements and the few entry points with more to do are HAND in the list
 * and written in the other files; defining one here as well would be a
 * duplicate definition, so the compiler keeps the list and the hand-written
 * hooks in step.  Every wrapper is declared from the list first, which also
 * checks the list against the header's own prototypes.
 */
#include "hip_internal.h"

/* Field access on the class tuple (kind, reason, stream arg, spt, impl, rk). */
#define GS_C_KIND(k, r, s, t, i, x) k
#define GS_C_REASON(k, r, s, t, i, x) r
#define GS_C_SARG(k, r, s, t, i, x) s
#define GS_C_SPT(k, r, s, t, i, x) t
#define GS_C_IMPL(k, r, s, t, i, x) i
#define GS_C_RK(k, r, s, t, i, x) x
#define GS_CAT(a, b) GS_CAT_(a, b)
#define GS_CAT_(a, b) a##b

/* What a wrapper returns when the runtime lacks the entry point. */
#define GS_MISSING_E(ret) return hipErrorNotSupported
#define GS_MISSING_V(ret) return
#define GS_MISSING_P(ret)                                                     \
	do {                                                                  \
		ret gs_z_;                                                    \
		memset(&gs_z_, 0, sizeof(gs_z_));                             \
		return gs_z_;                                                 \
	} while (0)

/* The engine step of each class, before the real call. */
#define GS_PRE_HARMLESS(c, name)
#define GS_PRE_ALL(c, name)                                                   \
	if (GS_ADOPT_ENDS(name))                                              \
		gs_hip_adopt_release_all(#name);                              \
	gs_engine_flush_all(GS_CAT(GS_FLUSH_, GS_C_REASON c), #name);
/*
 * A query answered "not ready" without the runtime.  Every stream-class
 * hook returns hipError_t today; one that did not could not say "not
 * ready", so it does not compile until someone decides what it should do.
 */
#define GS_NOT_READY_E() return hipErrorNotReady
#define GS_NOT_READY_V() { _Static_assert(0, "a stream-class HIP hook returning void"); }
#define GS_NOT_READY_P() { _Static_assert(0, "a stream-class HIP hook returning no hipError_t"); }
/*
 * A stream's synchronization (reason SYNC): gs_engine_flush_synced; its
 * query (QUERY): gs_engine_stream_query, which may answer it.
 */
#define GS_PRE_STREAM(c, name)                                                \
	{                                                                     \
		gs_hip_skey_t gs_k_ = gs_hip_stream_key(GS_C_SARG c, GS_C_SPT c); \
		gs_flush_reason_t gs_w_ = GS_CAT(GS_FLUSH_, GS_C_REASON c);  \
		if (gs_w_ == GS_FLUSH_QUERY) {                                \
			if (gs_engine_stream_query(gs_k_.handle, gs_k_.ctx,   \
						   gs_k_.flags, #name))       \
				GS_CAT(GS_NOT_READY_, GS_C_RK c)();            \
		} else if (gs_w_ == GS_FLUSH_SYNC)                            \
			gs_engine_flush_synced(gs_k_.handle, gs_k_.ctx,       \
					       gs_k_.flags, gs_w_, #name);    \
		else                                                          \
			gs_engine_flush_stream(gs_k_.handle, gs_k_.ctx,       \
					       gs_k_.flags, gs_w_, #name);    \
	}

/*
 * The stream argument's adoption scope (hip_adopt.c): a hook that makes a
 * stream-ordered call on its stream argument makes it where that stream's
 * work goes.  The list names the argument (_ when there is none); a call
 * that sets a stream's own attributes (reason STREAM) is not redirected; a
 * wait on a value or an external semaphore (reason EVENT) may wait for work
 * that follows it elsewhere: its stream takes its own work back first.  A
 * device's reset or a context's end gives every adopted stream its work back.
 */
#define GS_ADOPT_ARG__(c, name)
#define GS_ADOPT_ARG_stream(c, name) GS_ADOPT_ARG(stream, c, name)
#define GS_ADOPT_ARG_hStream(c, name) GS_ADOPT_ARG(hStream, c, name)
#define GS_ADOPT_WHY(c) GS_CAT(GS_FLUSH_, GS_C_REASON c)
#define GS_ADOPT_ARG(s, c, name)                                              \
	if (!gs_bypass_ && GS_ADOPT_WHY(c) == GS_FLUSH_EVENT)                 \
		gs_hip_adopt_release((s), GS_C_SPT c, #name);                 \
	hipStream_t gs_nothing_ = NULL;                                       \
	GS_HIP_ADOPT_SCOPE_OF(*(GS_ADOPT_WHY(c) != GS_FLUSH_STREAM ? &(s) : &gs_nothing_), \
			      GS_C_SPT c, GS_ADOPT_WHY(c) != GS_FLUSH_STREAM);
#define GS_ADOPT_ENDS(name)                                                   \
	(!__builtin_strcmp(#name, "hipDeviceReset") || !__builtin_strcmp(#name, "hipCtxDestroy") || \
	 !__builtin_strcmp(#name, "hipDevicePrimaryCtxReset") ||               \
	 !__builtin_strcmp(#name, "hipDevicePrimaryCtxRelease"))

#define GS_WRAP_HAND(c, ret, name, params, args)
/* A call that frees memory (reason FREE) runs while no graph is being
 * built (gs_engine_free_begin); the test is on a constant. */
#define GS_CALL_E(c, name, args)                                              \
	do {                                                                  \
		if (GS_CAT(GS_FLUSH_, GS_C_REASON c) != GS_FLUSH_FREE)        \
			return gs_hip_real.name args;                         \
		bool gs_on_ = !gs_bypass_ && gs_engine_free_begin();          \
		hipError_t gs_r_ = gs_hip_real.name args;                     \
		gs_engine_free_end(gs_on_);                                   \
		return gs_r_;                                                 \
	} while (0)
#define GS_CALL_P(c, name, args) return gs_hip_real.name args
#define GS_CALL_V(c, name, args)                                              \
	do {                                                                  \
		gs_hip_real.name args;                                        \
		return;                                                       \
	} while (0)

#define GS_WRAP_AUTO(c, ret, name, params, args)                              \
	ret name params                                                       \
	{                                                                     \
		bool gs_bypass_ = gs_hip_bypass(); /* resolves on first use */ \
		if (GS_UNLIKELY(!gs_hip_real.name))                           \
			GS_CAT(GS_MISSING_, GS_C_RK c)(ret);                  \
		GS_CAT(GS_ADOPT_ARG_, GS_C_SARG c)(c, name)                   \
		if (!gs_bypass_) {                                            \
			GS_CAT(GS_PRE_, GS_C_KIND c)(c, name)                 \
		}                                                             \
		GS_CAT(GS_CALL_, GS_C_RK c)(c, name, args);                   \
	}

#define GS_HOOK(c, ret, name, params, args) GS_CAT(GS_WRAP_, GS_C_IMPL c)(c, ret, name, params, args)
#include "hip_api.def"
#undef GS_HOOK
