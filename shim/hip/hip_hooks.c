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
#define GS_PRE_ALL(c, name) gs_engine_flush_all(GS_CAT(GS_FLUSH_, GS_C_REASON c), #name);
#define GS_PRE_STREAM(c, name)                                                \
	{                                                                     \
		gs_hip_skey_t gs_k_ = gs_hip_stream_key(GS_C_SARG c, GS_C_SPT c); \
		gs_engine_flush_stream(gs_k_.handle, gs_k_.ctx, gs_k_.flags,  \
				       GS_CAT(GS_FLUSH_, GS_C_REASON c), #name); \
	}

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
		if (!gs_bypass_) {                                            \
			GS_CAT(GS_PRE_, GS_C_KIND c)(c, name)                 \
		}                                                             \
		GS_CAT(GS_CALL_, GS_C_RK c)(c, name, args);                   \
	}

#define GS_HOOK(c, ret, name, params, args) GS_CAT(GS_WRAP_, GS_C_IMPL c)(c, ret, name, params, args)
#include "hip_api.def"
#undef GS_HOOK
