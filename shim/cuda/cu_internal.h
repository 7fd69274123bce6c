/*
 * The CUDA driver backend's internal header: the real driver functions
 * (typed, one per exported name, generated from cu_api.def), the backend's
 * state machine, and the helpers its hooks share.  Only shim/cuda/ includes
 * it; the core never sees a CUDA type.
 */
#ifndef GS_CU_INTERNAL_H
#define GS_CU_INTERNAL_H

#include <cuda.h>
#if __has_include(<cudaProfiler.h>)
#include <cudaProfiler.h>
#endif
/* Every exported name is defined as itself, so cuda.h's renames must go. */
#include "cu_api_undef.h"

#include "gs_config.h"
#include "gs_engine.h"
#include "gs_log.h"

/*
 * Types that only cuda.h's internal ABI block declares; the old unversioned
 * entry points (32-bit device pointers) use them.  Incomplete struct types
 * are enough: graphshim only passes the pointers through.
 */
typedef unsigned int CUdeviceptr_v1;
typedef struct CUDA_MEMCPY2D_v1_st CUDA_MEMCPY2D_v1;
typedef struct CUDA_MEMCPY3D_v1_st CUDA_MEMCPY3D_v1;
typedef struct CUDA_ARRAY_DESCRIPTOR_v1_st CUDA_ARRAY_DESCRIPTOR_v1;
typedef struct CUDA_ARRAY3D_DESCRIPTOR_v1_st CUDA_ARRAY3D_DESCRIPTOR_v1;

#define GS_CU_UNPAREN(...) __VA_ARGS__

/* One typed pointer type per exported name: gs_cu_pfn_<name>. */
#define GS_HOOK(cls, why, wrap, ret, name, base, params, args, strm, pt) \
	typedef ret(*gs_cu_pfn_##name) params;
#include "cu_api.def"
#undef GS_HOOK

/* The real functions, in cu_api.def order (an array of pointers in effect). */
typedef struct gs_cu_real {
#define GS_HOOK(cls, why, wrap, ret, name, base, params, args, strm, pt) \
	gs_cu_pfn_##name name;
#include "cu_api.def"
#undef GS_HOOK
} gs_cu_real_t;

enum {
#define GS_HOOK(cls, why, wrap, ret, name, base, params, args, strm, pt) \
	GS_CU_IDX_##name,
#include "cu_api.def"
#undef GS_HOOK
	GS_CU_NHOOKS
};

/* What the generated table knows of each exported name. */
typedef struct gs_cu_hook {
	const char *name;
	void *wrapper;       /* our exported function of that name */
	unsigned char cls;   /* gs_class_t */
	unsigned char why;   /* gs_flush_reason_t */
	unsigned char pt;    /* a _ptsz/_ptds variant: stream 0 is per-thread */
} gs_cu_hook_t;

extern gs_cu_real_t gs_cu_real;
extern const gs_cu_hook_t gs_cu_hooks[GS_CU_NHOOKS];

/* Hand-written hooks: gs_cu_x_<unsuffixed name>(per_thread, args...). */
#define GS_HOOK(cls, why, wrap, ret, name, base, params, args, strm, pt) \
	GS_CU_PROTO_##wrap(ret, base, params)
#define GS_CU_PROTO_CUSTOM(ret, base, params) \
	ret gs_cu_x_##base(int pt, GS_CU_UNPAREN params);
#define GS_CU_PROTO_LANE(ret, base, params) GS_CU_PROTO_CUSTOM(ret, base, params)
#define GS_CU_PROTO_ELEMENT(ret, base, params)
#define GS_CU_PROTO_STREAM(ret, base, params)
#define GS_CU_PROTO_ALL(ret, base, params)
#define GS_CU_PROTO_FORGET(ret, base, params)
#define GS_CU_PROTO_HARMLESS(ret, base, params)
#include "cu_api.def"
#undef GS_HOOK

/* ---- state (cu_init.c) --------------------------------------------------- */

enum {
	GS_CU_NONE = 0,     /* nothing resolved yet */
	GS_CU_RESOLVED = 1, /* real functions known; engine not (yet) on */
	GS_CU_ON = 2,       /* engine running: hooks may hold work */
	GS_CU_OFF = 3,      /* engine refused or absent: pass everything through */
};

/*
 * What a launch on a cold stream reads of the backend, on one cache line:
 * the state (GS_CU_*), and copies of the real launch entry points, [0]
 * plain and [1] per-thread (_ptsz), written before the state leaves
 * GS_CU_NONE.
 */
typedef struct gs_cu_lane {
	int state;
	gs_cu_pfn_cuLaunchKernel launch[2];
	gs_cu_pfn_cuLaunchKernelEx launch_ex[2];
	gs_cu_pfn_cuCtxGetCurrent ctx_get;
	bool adopt; /* adoption armed: the lane takes nothing (cu_adopt.c; atomic) */
} gs_cu_lane_t;
extern gs_cu_lane_t gs_cu_lane;
/* Copy the launch entry points from gs_cu_real into gs_cu_lane. */
void gs_cu_lane_fill(void);
/* Raised while graphshim itself is in the engine or the driver. */
extern __thread int gs_cu_depth __attribute__((tls_model("initial-exec")));

/* Initialise once (dlopen, resolve, engine); returns at once on re-entry. */
void gs_cu_init(void);
/* The status to return when a real function is missing; logs once. */
CUresult gs_cu_missing(int idx);
/* The wrapper for a real libcuda function pointer, or NULL. */
void *gs_cu_wrapper_for(const void *real);
/* The real dlsym (never ours). */
void *gs_cu_dlsym_real(void *handle, const char *name);
/* A function of the C library's own (dlsym, dlvsym), found without a lookup by name. */
void *gs_cu_libc_sym(const char *name);

#define GS_CU_READY()                                                         \
	do {                                                                  \
		if (GS_UNLIKELY(__atomic_load_n(&gs_cu_lane.state,            \
						__ATOMIC_ACQUIRE) == GS_CU_NONE)) \
			gs_cu_init();                                         \
	} while (0)

/* True when a hook may involve the engine. */
static inline bool gs_cu_engine_ok(void)
{
	return __atomic_load_n(&gs_cu_lane.state, __ATOMIC_ACQUIRE) == GS_CU_ON &&
	       gs_cu_depth == 0;
}

/* ---- streams (cu_stream.c) ---------------------------------------------- */

/* Record flags (gs_rec_t.flags) the backend defines. */
enum {
	GS_CU_RF_KERNEL = 1u << 0,    /* func is a CUkernel, not a CUfunction */
	GS_CU_RF_EXTRA = 1u << 1,     /* args[] is the opaque `extra` buffer */
	GS_CU_RF_PERTHREAD = 1u << 2, /* the stream is the per-thread default */
};

/* How the engine names one application stream. */
typedef struct gs_cu_sref {
	uintptr_t handle; /* engine key: CU_STREAM_LEGACY, a CUstream, or a per-thread key */
	unsigned sflags;  /* GS_STREAM_* */
	uint32_t rflags;  /* GS_CU_RF_PERTHREAD or 0 */
} gs_cu_sref_t;

void gs_cu_stream_ref(CUstream s, int pt, gs_cu_sref_t *out);
/* The CUstream to give the driver for an engine handle. */
CUstream gs_cu_stream_of(uintptr_t handle, uint32_t rflags);
void gs_cu_stream_forget(CUstream s);
void gs_cu_streams_clear(void);

/* The calling thread's current context (NULL when none). */
CUcontext gs_cu_ctx_current(void);

/* ---- adopted side streams (cu_adopt.c, GRAPHSHIM_ADOPT) ------------------- */

/* At a wait of stream t on ev: adopt t into the stream that recorded ev, where it may. */
void gs_cu_adopt_try(CUstream t, int pt, CUevent ev);
/*
 * A hook's stream, redirected to where its work goes (*s replaced), with the
 * adoption table read-locked until the scope ends: declare it with
 * GS_CU_ADOPT_SCOPE at the top of every hook that makes a stream-ordered call.
 */
typedef struct gs_cu_adopt_scope {
	bool locked;
} gs_cu_adopt_scope_t;
gs_cu_adopt_scope_t gs_cu_adopt_enter_on(CUstream *s, bool work);
void gs_cu_adopt_unlock(void);
/*
 * Each thread's count of stream calls (cu_adopt.c, the grace after arming):
 * its slot of gs_cu_calls, taken at its first (-1: none yet; GS_CU_THREADS:
 * the shared slot, no room).  Counted before the call reads whether
 * adoption is armed (twice for a launch that leaves the cold lane), so a
 * count three past the one seen at arming says the call in flight then
 * has returned.
 */
#define GS_CU_THREADS 256
extern uint64_t gs_cu_calls[GS_CU_THREADS + 1];
extern __thread int gs_cu_call_slot GS_TLS_IE;
int gs_cu_call_register(void);
static inline void gs_cu_call_note(void)
{
	int i = gs_cu_call_slot;
	if (GS_UNLIKELY(i < 0))
		i = gs_cu_call_register();
	__atomic_store_n(&gs_cu_calls[i], __atomic_load_n(&gs_cu_calls[i], __ATOMIC_RELAXED) + 1,
			 __ATOMIC_RELAXED);
}
/* Inline: with adoption not armed (the lane's flag, set once, at the first
 * wait of a stream on another's event) every stream hook pays one load,
 * not two calls. */
static inline gs_cu_adopt_scope_t gs_cu_adopt_enter(CUstream *s, bool work)
{
	gs_cu_call_note();
	if (GS_LIKELY(!__atomic_load_n(&gs_cu_lane.adopt, __ATOMIC_RELAXED)))
		return (gs_cu_adopt_scope_t){ false };
	return gs_cu_adopt_enter_on(s, work);
}
static inline void gs_cu_adopt_leave(gs_cu_adopt_scope_t *g)
{
	if (g->locked)
		gs_cu_adopt_unlock();
}
#define GS_CU_ADOPT_SCOPE_OF(s, work)                                           \
	gs_cu_adopt_scope_t gs_cu_adopt_g_ __attribute__((cleanup(gs_cu_adopt_leave))) = \
		gs_cu_adopt_enter(&(s), (work))
/* ... for a call that issues work on the stream (anything but an event record or wait). */
#define GS_CU_ADOPT_SCOPE(s) GS_CU_ADOPT_SCOPE_OF(s, true)
/* Before a call that may depend on t's concurrency (a stream memory
 * operation, an external semaphore): t takes its own work back. */
void gs_cu_adopt_release(CUstream t, const char *api);
/* t is being destroyed: streams adopted into it take their work back, and t's entry goes. */
void gs_cu_adopt_destroyed(CUstream t, const char *api);
/* Before the application's own capture, or a context's teardown: every adopted
 * stream takes its work back, and the forks seen are forgotten. */
void gs_cu_adopt_release_all(const char *api);
/* In a forked child: no stream is adopted. */
void gs_cu_adopt_forget(void);

/* ---- stand-ins (cu_stand.c) ----------------------------------------------- */

/* Bytes of a context's stand-in block: the largest memset, or twice a copy's
 * size rounded to 256, that a node can be made on with a stand-in. */
#define GS_CU_STAND_SIZE ((size_t)1 << 20)
/* On the application's thread, as it holds a copy or memset in ctx: make
 * sure ctx has its stand-in block (allocated once; cheap after that). */
void gs_cu_stand_ensure(CUcontext ctx);
/* After a call that may have destroyed a context: drop the slots whose
 * block went with it (gs_cu_forget). */
void gs_cu_stand_forget(void);
/* The stand-in block of ctx when it has need bytes, else 0 (graph builds). */
CUdeviceptr gs_cu_stand_mem(CUcontext ctx, size_t need);
/* Whether the driver knows no allocation at p now (freed since its call). */
bool gs_cu_dead(CUdeviceptr p);

/* A CUPTI tool injected (cu_cupti.c): read when the backend starts. */
void gs_cu_cupti_init(void);
bool gs_cu_cupti_seen(void);

/* n rounded up to the driver's allocation granule (256). */
static inline size_t gs_cu_granule(size_t n)
{
	return (n + 255) & ~(size_t)255;
}
/* Make ctx current for the length of an operation; returns true when pushed. */
bool gs_cu_ctx_enter(CUcontext ctx);
void gs_cu_ctx_leave(bool pushed);

/* Engine calls with the reentrancy depth raised. */
/* True only for reason QUERY, when the query is answered "not ready" without the
 * driver (gs_engine_stream_query). */
bool gs_cu_flush_stream(CUstream s, int pt, gs_flush_reason_t why, const char *api);
void gs_cu_flush_all(gs_flush_reason_t why, const char *api);
/* Before a call that observes or changes ev (NULL: any event): gs_engine_event_use. */
void gs_cu_event_use(CUevent ev, const char *api);
/* Event ev is shared with another process: never held from now on (gs_engine_event_share). */
void gs_cu_event_share(CUevent ev, const char *api);
/* Drop cached function layouts and stream flags (handles may be reused). */
void gs_cu_forget(void);

/* ---- functions and layouts (cu_layout.c) ---------------------------------- */

typedef struct gs_cu_fn {
	const void *func;
	uint32_t gen;              /* gs_cu_fn_gen when cached */
	uint32_t rflags;           /* GS_CU_RF_KERNEL or 0 */
	const gs_layout_t *layout; /* NULL: the layout could not be had */
	uint32_t max_threads;      /* per block; UINT32_MAX when unknown */
	uint32_t max_dyn_shmem;    /* bytes; UINT32_MAX when unknown */
	uint64_t held_shmem;       /* the most dynamic shared memory of a launch held */
	struct gs_cu_fn *retired;  /* next replaced entry (cu_layout.c) */
} gs_cu_fn_t;

/* The driver's name of a function or kernel handle, or NULL. */
const char *gs_cu_fn_name(CUfunction f, bool kernel);
/* The cached description of a function handle (never NULL once warmed). */
const gs_cu_fn_t *gs_cu_fn_get(CUfunction f);
/* Intern a layout: equal layouts share one never-freed copy. */
const gs_layout_t *gs_cu_layout_intern(const gs_arg_t *arg, uint32_t nargs);
/* A launch of fn asking for shmem bytes is held (entries only grow). */
void gs_cu_fn_held(const gs_cu_fn_t *fn, unsigned shmem);
/*
 * The most dynamic shared memory a held launch of f may ask for: f's own,
 * and for a CUkernel (kernel) that of its function in this context, or
 * for a CUfunction that of every CUkernel (a function may be a kernel's).
 */
uint64_t gs_cu_fn_held_shmem(CUfunction f, bool kernel);
/* Re-read the limits of f after cuFuncSetAttribute (if it is cached). */
void gs_cu_fn_refresh(CUfunction f);
/* Make every cached entry stale (module unloaded, context destroyed). */
void gs_cu_fn_forget(void);

/* ---- launch attributes (cu_attrs.c) ----------------------------------------- */

/* Attributes one launch may carry into a record; more make it a boundary. */
#define GS_CU_MAX_ATTRS 16
/* The record word (gs_rec_t.aux) naming a kernel launch's attribute set. */
#define GS_CU_AUX_ATTRS 3

/*
 * A canonical, interned set of launch attributes (never freed): the node
 * attributes in the caller's order, and programmatic stream serialization,
 * which a graph expresses as an edge rather than a node attribute.
 */
typedef struct gs_cu_attrs {
	uint32_t n;   /* node attributes in a[] */
	uint32_t pss; /* programmatic stream serialization was asked for */
	CUlaunchAttribute a[];
} gs_cu_attrs_t;

/*
 * The interned set for a launch's attribute list: *out is NULL when the
 * list changes nothing.  Returns -1 (and the offending id in *bad) when an
 * attribute cannot be carried by a graph node, so the launch is a boundary.
 */
int gs_cu_attrs_get(const CUlaunchAttribute *in, unsigned n, const gs_cu_attrs_t **out,
		    unsigned *bad);
/* Set a kernel node's attributes to the set's. */
CUresult gs_cu_attrs_apply(CUgraphNode node, const gs_cu_attrs_t *at);
/* The set as a launch's attribute list (room for GS_CU_MAX_ATTRS + 1); returns the count. */
unsigned gs_cu_attrs_fill(const gs_cu_attrs_t *at, CUlaunchAttribute *out);
/* "CLUSTER_DIMENSION" and so on. */
const char *gs_cu_attr_name(unsigned id);
/* The trace's name of a launch made a boundary by attribute id (logs once per id). */
const char *gs_cu_attr_api(unsigned id);

static inline const gs_cu_attrs_t *gs_cu_rec_attrs(const gs_rec_t *r)
{
	return (const gs_cu_attrs_t *)(uintptr_t)r->aux[GS_CU_AUX_ATTRS];
}

/* ---- records and the original call (cu_launch.c) ------------------------ */

enum { GS_CU_OP_LAUNCH = 1, GS_CU_OP_LAUNCHEX, GS_CU_OP_LAUNCHCOOP, GS_CU_OP_COPY, GS_CU_OP_SET,
       GS_CU_OP_MARK, GS_CU_OP_FREE };

/* What a mark record is, in its aux[0] (its flags in aux[1], the event or the address in args[]). */
enum { GS_CU_MARK_RECORD = 1, GS_CU_MARK_RECORD_FLAGS, GS_CU_MARK_WAIT, GS_CU_MARK_FREE };

/* Copy kinds kept in aux[1] of a copy record. */
enum {
	GS_CU_COPY_HTOD = 1,
	GS_CU_COPY_DTOH = 2,
	GS_CU_COPY_DTOD = 3,
	GS_CU_COPY_ANY = 4, /* cuMemcpyAsync; aux[2] holds (src type << 8 | dst type) */
};

/* The caller's own arguments, for a pass-through submission. */
typedef struct gs_cu_orig {
	int op;
	int pt;
	union {
		struct {
			CUfunction f;
			unsigned grid[3], block[3], shmem;
			CUstream s;
			void **kp, **extra;
			const CUlaunchConfig *cfg;
		} k;
		struct {
			int kind;
			CUdeviceptr dst, src;
			size_t n;
			CUstream s;
		} c;
		struct {
			unsigned width, value;
			CUdeviceptr dst;
			size_t n;
			CUstream s;
		} m;
		struct {
			int which; /* GS_CU_MARK_* */
			CUevent ev;
			CUstream s;
			unsigned flags;
		} e;
		struct {
			CUdeviceptr p;
			CUstream s;
		} f;
	} u;
} gs_cu_orig_t;

/* Call the real function the application called, with its own arguments. */
CUresult gs_cu_orig_call(const gs_cu_orig_t *o);

/*
 * Fill the per-thread scratch record for a kernel launch; NULL when the
 * launch cannot be a sequence element (the caller then passes it through).
 */
gs_rec_t *gs_cu_rec_kernel(const gs_cu_fn_t *fn, CUfunction f,
			   const unsigned grid[3], const unsigned block[3],
			   unsigned shmem, void **kp, void **extra,
			   const gs_cu_attrs_t *at);
/* Parse an `extra` array; true on failure (not the buffer form). */
bool gs_cu_extra_parse(void **extra, void **buf, size_t *size);

/* The backend's operations table (cu_ops.c). */
extern const gs_ops_t gs_cu_ops;

/* True when name is a CUDA driver name: "cu" and an upper-case letter. */
static inline bool gs_cu_name_is_cu(const char *name)
{
	return name && name[0] == 'c' && name[1] == 'u' && name[2] >= 'A' &&
	       name[2] <= 'Z';
}

/*
 * Elements are taken only while no application capture is open anywhere:
 * during one they go straight to the driver, with no query of our own
 * (with lazy module loading a parameter query loads the module, which
 * invalidated a thread-local capture on the H100).
 */
static inline bool gs_cu_elements_ok(void)
{
	return gs_cu_engine_ok() && !gs_engine_capturing();
}

#endif /* GS_CU_INTERNAL_H */
