/*
 * The exported CUDA driver entry points, one per name in cu_api.def.  Each
 * is a hidden function gs_cu_w_<name> plus an exported alias <name>, so the
 * table below can point at our own wrapper whatever the dynamic linker binds
 * <name> to.  What a wrapper does depends on its class:
 *
 *   HARMLESS  call the real function (no engine, no TLS)
 *   STREAM    submit the held work of the stream argument, then call it
 *   ALL       submit all held work, then call it
 *   FORGET    as ALL, then drop cached handles (module or context gone)
 *   CUSTOM    forward to a hand-written gs_cu_x_<name>(per_thread, ...)
 *   LANE      the wrapper itself is hand-written (cu_launch.c): the cold
 *             lane, then gs_cu_x_<name>
 */
#include "cu_internal.h"
#include "gs_submit.h"

gs_cu_real_t gs_cu_real;

/* Prototypes first (the wrappers are hidden, not static: aliases need them). */
#define GS_HOOK(cls, why, wrap, ret, name, base, params, args, strm, pt) \
	ret gs_cu_w_##name params;
#include "cu_api.def"
#undef GS_HOOK

/*
 * The real call; one that frees memory (class FREE) runs while no graph is
 * being built (gs_engine_free_begin).  The test is on a constant.
 */
#define GS_CU_FREE_CALL(why, name, args)                                    \
	do {                                                                \
		if (GS_FLUSH_##why != GS_FLUSH_FREE)                        \
			return gs_cu_real.name args;                        \
		bool on_ = gs_cu_engine_ok() && gs_engine_free_begin();     \
		__typeof__(gs_cu_real.name args) r_ = gs_cu_real.name args; \
		gs_engine_free_end(on_);                                    \
		return r_;                                                  \
	} while (0)

/*
 * The stream argument's adoption scope (cu_adopt.c): a hook that makes a
 * stream-ordered call on its stream argument makes it where that stream's
 * work goes.  The table names the argument (0 when there is none); calls
 * that set a stream's own attributes (reason STREAM) are not redirected.
 * A stream memory operation or external semaphore (reason EVENT in class
 * ALL) may wait for work that follows it elsewhere: its stream takes its
 * own work back first.
 */
#define GS_CU_ADOPT_ARG_0(why, name)
#define GS_CU_ADOPT_ARG_dst(why, name)
#define GS_CU_ADOPT_ARG_hStream(why, name) GS_CU_ADOPT_ARG(hStream, why, name)
#define GS_CU_ADOPT_ARG_stream(why, name) GS_CU_ADOPT_ARG(stream, why, name)
#define GS_CU_ADOPT_ARG(s, why, name)                                       \
	if (GS_FLUSH_##why == GS_FLUSH_EVENT)                               \
		gs_cu_adopt_release((s), #name);                            \
	CUstream gs_cu_nothing_ = NULL;                                     \
	GS_CU_ADOPT_SCOPE_OF(*(GS_FLUSH_##why != GS_FLUSH_STREAM ? &(s) : &gs_cu_nothing_), \
			     GS_FLUSH_##why != GS_FLUSH_STREAM)

#define GS_CU_WRAP_HARMLESS(why, ret, name, base, params, args, strm, pt)   \
	ret gs_cu_w_##name params                                           \
	{                                                                   \
		GS_CU_READY();                                              \
		if (GS_UNLIKELY(!gs_cu_real.name))                          \
			return gs_cu_missing(GS_CU_IDX_##name);             \
		return gs_cu_real.name args;                                \
	}

#define GS_CU_WRAP_STREAM(why, ret, name, base, params, args, strm, pt)     \
	ret gs_cu_w_##name params                                           \
	{                                                                   \
		GS_CU_READY();                                              \
		if (GS_UNLIKELY(!gs_cu_real.name))                          \
			return gs_cu_missing(GS_CU_IDX_##name);             \
		GS_CU_ADOPT_ARG_##strm(why, name);                          \
		/* During a capture nothing is held: no flush, no query. */ \
		if (gs_cu_elements_ok() &&                                  \
		    gs_cu_flush_stream(strm, pt, GS_FLUSH_##why, #name))    \
			return CUDA_ERROR_NOT_READY; /* (a query: held work) */ \
		gs_submit_drain();                                          \
		GS_CU_FREE_CALL(why, name, args);                           \
	}

#define GS_CU_WRAP_ALL(why, ret, name, base, params, args, strm, pt)        \
	ret gs_cu_w_##name params                                           \
	{                                                                   \
		GS_CU_READY();                                              \
		if (GS_UNLIKELY(!gs_cu_real.name))                          \
			return gs_cu_missing(GS_CU_IDX_##name);             \
		if (gs_cu_engine_ok())                                      \
			gs_cu_flush_all(GS_FLUSH_##why, #name);             \
		GS_CU_ADOPT_ARG_##strm(why, name);                          \
		gs_submit_drain();                                          \
		GS_CU_FREE_CALL(why, name, args);                           \
	}

/*
 * The handles this call may invalidate are forgotten after it returns, so a
 * launch racing with it on another thread cannot re-cache a dying handle.
 */
#define GS_CU_WRAP_FORGET(why, ret, name, base, params, args, strm, pt)     \
	ret gs_cu_w_##name params                                           \
	{                                                                   \
		GS_CU_READY();                                              \
		if (GS_UNLIKELY(!gs_cu_real.name))                          \
			return gs_cu_missing(GS_CU_IDX_##name);             \
		if (gs_cu_engine_ok()) {                                    \
			/* Joined back while their context lives, and    \
			 * before the engine forgets every stream (a join  \
			 * flushes its root: after, it made a new state). */ \
			if (GS_FLUSH_##why == GS_FLUSH_CONTEXT)             \
				gs_cu_adopt_release_all(#name);             \
			gs_cu_depth++;                                      \
			gs_engine_forget_funcs(#name);                      \
			gs_cu_depth--;                                      \
		}                                                           \
		gs_submit_drain();                                          \
		ret r_ = gs_cu_real.name args;                              \
		gs_cu_forget();                                             \
		return r_;                                                  \
	}

#define GS_CU_WRAP_CUSTOM(why, ret, name, base, params, args, strm, pt)     \
	ret gs_cu_w_##name params                                           \
	{                                                                   \
		return gs_cu_x_##base(pt, GS_CU_UNPAREN args);              \
	}

#define GS_CU_WRAP_LANE(why, ret, name, base, params, args, strm, pt)

#define GS_HOOK(cls, why, wrap, ret, name, base, params, args, strm, pt) \
	GS_CU_WRAP_##wrap(why, ret, name, base, params, args, strm, pt)
#include "cu_api.def"
#undef GS_HOOK

/* The exported names (the lane's are in cu_launch.c: an alias must be beside its target). */
#define GS_CU_ALIAS(ret, name, params) \
	GS_EXPORT ret name params __attribute__((alias("gs_cu_w_" #name)));
#define GS_CU_ALIAS_HARMLESS GS_CU_ALIAS
#define GS_CU_ALIAS_STREAM GS_CU_ALIAS
#define GS_CU_ALIAS_ALL GS_CU_ALIAS
#define GS_CU_ALIAS_FORGET GS_CU_ALIAS
#define GS_CU_ALIAS_CUSTOM GS_CU_ALIAS
#define GS_CU_ALIAS_LANE(ret, name, params)
#define GS_HOOK(cls, why, wrap, ret, name, base, params, args, strm, pt) \
	GS_CU_ALIAS_##wrap(ret, name, params)
#include "cu_api.def"
#undef GS_HOOK

const gs_cu_hook_t gs_cu_hooks[GS_CU_NHOOKS] = {
#define GS_HOOK(cls, why, wrap, ret, name, base, params, args, strm, pt)  \
	{ #name, (void *)gs_cu_w_##name, GS_CLASS_##cls, GS_FLUSH_##why, pt },
#include "cu_api.def"
#undef GS_HOOK
};
