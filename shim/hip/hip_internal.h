/*
 * Internal header of the HIP runtime backend.  The real libamdhip64 entry
 * points are resolved once into one typed table generated from
 * hip_api.def; the hooks (hip_hooks.c generic, hip_launch.c elements,
 * hip_module.c modules and registration, hip_stream.c streams) call
 * the engine and then the real function; hip_ops.c is what the engine
 * calls back.  Only this directory includes HIP headers.
 */
#ifndef GS_HIP_INTERNAL_H
#define GS_HIP_INTERNAL_H

#include <hip/hip_runtime_api.h>
#include <hip/hip_version.h>

#include "gs_common.h"
#include "gs_engine.h"
#include "hip_codeobj.h"

/* One typed pointer per listed entry point. */
typedef struct gs_hip_real {
#define GS_HOOK(c, ret, name, params, args) ret(*name) params;
#include "hip_api.def"
#undef GS_HOOK
	/* Optional (ROCm 7.2+): parameter layouts straight from the runtime. */
	hipError_t (*hipFuncGetParamInfo)(hipFunction_t f, size_t i, size_t *off, size_t *size);
} gs_hip_real_t;

extern gs_hip_real_t gs_hip_real;

/* Every hook, declared from the list (which the header's prototypes check). */
#define GS_HOOK(c, ret, name, params, args) GS_EXPORT ret name params;
#include "hip_api.def"
#undef GS_HOOK

/* Resolve the real functions and start the engine (once); false when usable. */
bool gs_hip_init(void);

/*
 * Calls made from inside the backend (ops, probes) must not be seen by the
 * hooks again if libamdhip64 calls its own exported functions.
 */
extern __thread int gs_hip_depth GS_TLS_IE;
#define GS_HIP_REAL(call) (gs_hip_depth++, __extension__({ __auto_type gs_r_ = (call); gs_hip_depth--; gs_r_; }))
#define GS_HIP_REALV(call) do { gs_hip_depth++; call; gs_hip_depth--; } while (0)

/* True when a hook should do nothing but call the real function. */
static inline bool gs_hip_bypass(void)
{
	return gs_hip_depth || gs_hip_init();
}

/* How the engine names one stream. */
typedef struct gs_hip_skey {
	uintptr_t handle;
	void *ctx;      /* the device key: device ordinal + 1 */
	unsigned flags; /* GS_STREAM_* */
} gs_hip_skey_t;

/* Name a stream; spt: stream 0 means the per-thread stream (the _spt entry points). */
gs_hip_skey_t gs_hip_stream_key(hipStream_t s, int spt);
/* Forget what was cached about a stream (destroyed). */
void gs_hip_stream_forget(hipStream_t s);

/* The device key of the calling thread's current device. */
void *gs_hip_current_ctx(void);

/* Kernel parameter layouts, per function handle (hipFunction_t or host stub). */
const gs_layout_t *gs_hip_layout_of(const void *func);
/* A launch of func with `shmem` bytes of dynamic shared memory may be held:
 * raise its high-water mark (functions not registered here have none). */
void gs_hip_fn_held(const void *func, size_t shmem);
/* The most dynamic shared memory of a held launch of func (UINT64_MAX when
 * func is not known here). */
uint64_t gs_hip_fn_held_shmem(const void *func);
/*
 * The kernel name of a function handle or host stub, as the module or the
 * registration gave it (hipModuleGetFunction, __hipRegisterFunction), or
 * NULL; valid until its module is unloaded.
 */
const char *gs_hip_name_of(const void *func);

/* Record flags (gs_rec_t.flags): how a record is submitted again. */
enum {
	GS_HIP_F_MODULE = 1,   /* hipModuleLaunchKernel: func is a hipFunction_t */
	GS_HIP_F_EXT = 2,      /* hipExtModuleLaunchKernel (resubmitted with global sizes) */
	GS_HIP_F_STUB = 3,     /* hipLaunchKernel: func is a host stub */
	GS_HIP_F_API_MASK = 0xf,
	GS_HIP_F_EXTRA = 1u << 4,  /* args[] is the opaque `extra` buffer image */
	GS_HIP_F_NOARGS = 1u << 5, /* no kernelParams and no extra */
	GS_HIP_F_COPY = 1u << 8,   /* copy: aux[0] bytes, aux[1] hipMemcpyKind */
	GS_HIP_F_SET8 = 1u << 9,   /* memset: aux[0] elements, aux[1] element size */
	GS_HIP_F_SET16 = 1u << 10,
	GS_HIP_F_SET32 = 1u << 11,
	GS_HIP_F_SETB = 1u << 12, /* hipMemsetAsync (int value, bytes) */
};

/*
 * The caller's own arguments (gs_rec_t.orig) so a pass-through repeats the
 * exact call.  Which member is valid follows `api`.
 */
typedef enum gs_hip_api {
	GS_HIP_API_MODULE = 1,
	GS_HIP_API_EXT,
	GS_HIP_API_LAUNCH,
	GS_HIP_API_LAUNCH_SPT,
	GS_HIP_API_MEMCPY,
	GS_HIP_API_MEMCPY_SPT,
	GS_HIP_API_HTOD,
	GS_HIP_API_DTOH,
	GS_HIP_API_DTOD,
	GS_HIP_API_MEMSET,
	GS_HIP_API_MEMSET8,
	GS_HIP_API_MEMSET16,
	GS_HIP_API_MEMSET32,
	GS_HIP_API_EVRECORD,
	GS_HIP_API_WAIT,
	GS_HIP_API_WAIT_SPT,
	GS_HIP_API_FREE,
} gs_hip_api_t;

/* What a mark record is, in its aux[0] (its flags in aux[1], the event in args[]). */
enum { GS_HIP_MARK_RECORD = 1, GS_HIP_MARK_WAIT, GS_HIP_MARK_FREE };

typedef struct gs_hip_orig {
	gs_hip_api_t api;
	hipStream_t stream;
	union {
		struct {
			hipFunction_t f;
			uint32_t g[3], b[3];
			size_t shmem;
			void **params, **extra;
			hipEvent_t start, stop;
			uint32_t flags;
		} k;
		struct {
			const void *f;
			dim3 grid, block;
			void **args;
			size_t shmem;
		} l;
		struct {
			void *dst;
			const void *src;
			size_t bytes;
			hipMemcpyKind kind;
		} c;
		struct {
			void *dst;
			uint32_t value;
			size_t count;
		} s;
		struct {
			hipEvent_t ev;
			unsigned flags;
		} e;
		struct {
			void *p;
		} f;
	};
} gs_hip_orig_t;

/* Call the real entry point with exactly the caller's arguments. */
hipError_t gs_hip_call_orig(const gs_hip_orig_t *o);
/* The real hipFreeAsync, while no graph is being built (hip_ops.c). */
hipError_t gs_hip_free_async(void *p, hipStream_t s);

/* The operations table (hip_ops.c). */
extern const gs_ops_t gs_hip_ops;

/* Re-pack an `extra` array for an opaque image; see hip_extra.c. */
typedef struct gs_hip_extra {
	void *v[5];
	size_t size;
} gs_hip_extra_t;
void gs_hip_extra_pack(gs_hip_extra_t *e, const void *image, size_t size);
/* Find the buffer of a caller's `extra` array; true when it is not the packed form. */
bool gs_hip_extra_parse(void **extra, const void **image, size_t *size);

/* Grid from HIP-ext global sizes; true when a global size is not a multiple. */
bool gs_hip_ext_grid(const uint32_t global[3], const uint32_t local[3], uint32_t grid[3]);

/* ---- adopted side streams (hip_adopt.c, GRAPHSHIM_ADOPT) ------------------ */

/* At a wait of stream t on ev: adopt t into the stream that recorded ev, where it may. */
void gs_hip_adopt_try(hipStream_t t, int spt, hipEvent_t ev);
/*
 * A hook's stream, redirected to where its work goes (*s replaced), with the
 * adoption table read-locked until the scope ends: declare it with
 * GS_HIP_ADOPT_SCOPE_OF at the top of every hook that makes a
 * stream-ordered call (work: it issues work there, not an event record or
 * wait).  Nothing when adoption is off or the hook is bypassed.
 */
typedef struct gs_hip_adopt_scope {
	bool locked;
} gs_hip_adopt_scope_t;
gs_hip_adopt_scope_t gs_hip_adopt_enter(hipStream_t *s, int spt, bool work);
void gs_hip_adopt_leave(gs_hip_adopt_scope_t *g);
#define GS_HIP_ADOPT_SCOPE_OF(s, spt, work)                                           \
	gs_hip_adopt_scope_t gs_hip_adopt_g_ __attribute__((cleanup(gs_hip_adopt_leave))) = \
		gs_hip_adopt_enter(&(s), (spt), (work))
/* Before a call that may depend on t's concurrency (a wait on a value or an
 * external semaphore): t takes its own work back. */
void gs_hip_adopt_release(hipStream_t t, int spt, const char *api);
/* s is being destroyed: streams adopted into it take their work back, and s's entry goes. */
void gs_hip_adopt_destroyed(hipStream_t s, const char *api);
/* Before the application's own capture, or a device's reset: every adopted
 * stream takes its work back, and the forks seen are forgotten. */
void gs_hip_adopt_release_all(const char *api);
/* In a forked child: no stream is adopted. */
void gs_hip_adopt_forget(void);

/* GRAPHSHIM_HIP_MAX_PATCHES (validated like gs_config.c). */
long long gs_hip_max_patches(void);

#endif /* GS_HIP_INTERNAL_H */
