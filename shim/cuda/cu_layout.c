/*
 * What graphshim knows of each kernel handle: its parameter layout (from
 * cuFuncGetParamInfo, or cuKernelGetParamInfo for CUkernel handles), whether
 * it is a CUkernel, and the limits a launch must respect to succeed.  Looked
 * up on every launch, so reads take no lock: slots hold pointers to
 * immutable entries, published with a release store and never freed (a
 * record or another thread may still hold one).  Module unload and context
 * destroy bump a generation, which turns every entry stale at once.
 *
 * Layouts are interned by content: equal layouts share one copy that lives
 * for the process, which is what gs_rec.h asks of a backend.
 */
#include <pthread.h>
#include <stdlib.h>
#include "gs_hash.h"
#include "gs_self.h"

#include "cu_internal.h"
#include "gs_stats.h"

#define GS_CU_FN_SLOTS 16384u /* power of two; at most 3/4 used */
#define GS_CU_MAX_PARAMS 8192u

static gs_cu_fn_t *gs_cu_fn_tab[GS_CU_FN_SLOTS];
static unsigned gs_cu_fn_used;
static uint32_t gs_cu_fn_gen = 1;
static pthread_mutex_t gs_cu_fn_lock = PTHREAD_MUTEX_INITIALIZER;
/*
 * Replaced entries, kept (a reader may still hold one) on a list rather
 * than dropped, so that leak checkers see them as reachable.
 */
static gs_cu_fn_t *gs_cu_fn_retired;

static void gs_cu_fn_retire(gs_cu_fn_t *e)
{
	e->retired = gs_cu_fn_retired;
	gs_cu_fn_retired = e;
}

typedef struct gs_cu_ilayout {
	UT_hash_handle hh;
	gs_layout_t l; /* must be last: flexible array */
} gs_cu_ilayout_t;
static gs_cu_ilayout_t *gs_cu_layouts;

const gs_layout_t *gs_cu_layout_intern(const gs_arg_t *arg, uint32_t nargs)
{
	size_t klen = sizeof(gs_layout_t) + nargs * sizeof(gs_arg_t);
	gs_cu_ilayout_t *it = calloc(1, sizeof(*it) + nargs * sizeof(gs_arg_t));
	if (!it)
		return NULL;
	it->l.nargs = nargs;
	for (uint32_t i = 0; i < nargs; i++) {
		it->l.arg[i] = arg[i];
		if (arg[i].off + arg[i].size > it->l.total)
			it->l.total = arg[i].off + arg[i].size;
	}
	gs_cu_ilayout_t *old = NULL;
	pthread_mutex_lock(&gs_cu_fn_lock);
	HASH_FIND(hh, gs_cu_layouts, &it->l, klen, old);
	if (!old) /* on OOM it is returned uninterned: still valid, never freed */
		HASH_ADD_KEYPTR(hh, gs_cu_layouts, &it->l, klen, it);
	pthread_mutex_unlock(&gs_cu_fn_lock);
	if (old) {
		free(it);
		return &old->l;
	}
	return &it->l;
}

/* Ask the driver for parameter k of f, as a CUfunction or as a CUkernel. */
static CUresult gs_cu_param_info(CUfunction f, bool kernel, uint32_t k, size_t *off, size_t *size)
{
	if (kernel)
		return gs_cu_real.cuKernelGetParamInfo
			       ? gs_cu_real.cuKernelGetParamInfo((CUkernel)f, k, off, size)
			       : CUDA_ERROR_NOT_SUPPORTED;
	return gs_cu_real.cuFuncGetParamInfo ? gs_cu_real.cuFuncGetParamInfo(f, k, off, size)
					     : CUDA_ERROR_NOT_SUPPORTED;
}

/* True when the driver knows f as a function of that kind at all. */
static bool gs_cu_handle_valid(CUfunction f, bool kernel)
{
	int v = 0;
	if (kernel) {
		CUdevice dev;
		return gs_cu_real.cuKernelGetAttribute && gs_cu_real.cuCtxGetDevice &&
		       gs_cu_real.cuCtxGetDevice(&dev) == CUDA_SUCCESS &&
		       gs_cu_real.cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, (CUkernel)f,
						       dev) == CUDA_SUCCESS;
	}
	return gs_cu_real.cuFuncGetAttribute &&
	       gs_cu_real.cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f) == CUDA_SUCCESS;
}

/*
 * With lazy loading (the default since CUDA 12.2) a function handle can
 * exist before its code is loaded; loading it is what its first launch
 * would do anyway.  True when it was not loaded and now is.
 */
static bool gs_cu_func_load(CUfunction f)
{
	CUfunctionLoadingState st = CU_FUNCTION_LOADING_STATE_LOADED;
	if (!gs_cu_real.cuFuncIsLoaded || !gs_cu_real.cuFuncLoad ||
	    gs_cu_real.cuFuncIsLoaded(&st, f) != CUDA_SUCCESS ||
	    st != CU_FUNCTION_LOADING_STATE_UNLOADED)
		return false;
	return gs_cu_real.cuFuncLoad(f) == CUDA_SUCCESS;
}

/*
 * The index past the last parameter answers CUDA_ERROR_INVALID_VALUE, but so
 * can a query that simply failed, and a layout cut short would bake garbage
 * into graph nodes.  So the end is believed only when the same index fails
 * twice and the index before it still answers as it did.  At index 0 that
 * check is made against the handle itself: a function the driver knows, of
 * which neither query can say a first parameter, has none (the driver could
 * not marshal kernelParams for it otherwise, so a launch with kernelParams
 * would fail without graphshim too).  Returns the status that ended the
 * query (CUDA_SUCCESS with *out and *n set when the layout was read).
 */
static CUresult gs_cu_query_params(CUfunction f, bool kernel, gs_arg_t **out, uint32_t *n)
{
	uint32_t cap = 16, k = 0;
	gs_arg_t *a = malloc(cap * sizeof(*a));
	if (!a)
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (;;) {
		size_t off = 0, size = 0;
		CUresult r = gs_cu_param_info(f, kernel, k, &off, &size);
		if (r == CUDA_ERROR_INVALID_VALUE)
			r = gs_cu_param_info(f, kernel, k, &off, &size);
		if (r == CUDA_ERROR_INVALID_VALUE) {
			size_t poff = 0, psize = 0;
			if (k > 0 ? gs_cu_param_info(f, kernel, k - 1, &poff, &psize) == CUDA_SUCCESS &&
					    poff == a[k - 1].off && psize == a[k - 1].size
				  : gs_cu_handle_valid(f, kernel) &&
					    gs_cu_param_info(f, !kernel, 0, &poff, &psize) != CUDA_SUCCESS)
				break;
			free(a);
			return r;
		}
		if (r != CUDA_SUCCESS || k >= GS_CU_MAX_PARAMS || off > UINT32_MAX ||
		    size > UINT32_MAX) {
			free(a);
			return r != CUDA_SUCCESS ? r : CUDA_ERROR_NOT_SUPPORTED;
		}
		if (k == cap) {
			gs_arg_t *b = realloc(a, 2 * cap * sizeof(*a));
			if (!b) {
				free(a);
				return CUDA_ERROR_OUT_OF_MEMORY;
			}
			a = b;
			cap *= 2;
		}
		a[k].off = (uint32_t)off;
		a[k].size = (uint32_t)size;
		k++;
	}
	*out = a;
	*n = k;
	return CUDA_SUCCESS;
}

static const char *gs_cu_err_name(CUresult r)
{
	const char *s = NULL;
	if (gs_cu_real.cuGetErrorName && gs_cu_real.cuGetErrorName(r, &s) == CUDA_SUCCESS && s)
		return s;
	return "unknown error";
}

const char *gs_cu_fn_name(CUfunction f, bool kernel)
{
	const char *s = NULL;
	CUresult r = kernel ? (gs_cu_real.cuKernelGetName
				       ? gs_cu_real.cuKernelGetName(&s, (CUkernel)f)
				       : CUDA_ERROR_NOT_SUPPORTED)
			    : (gs_cu_real.cuFuncGetName ? gs_cu_real.cuFuncGetName(&s, f)
							: CUDA_ERROR_NOT_SUPPORTED);
	return r == CUDA_SUCCESS ? s : NULL;
}

/* Kernels whose layout could not be read are named this many times, then counted. */
#define GS_CU_UNREADABLE_LOGGED 16u

/* Say which kernel passes through and what the driver answered. */
static void gs_cu_unreadable(CUfunction f, CUresult rf, CUresult rk)
{
	GS_STAT_INC(layouts_unreadable);
	static unsigned logged;
	unsigned n = __atomic_fetch_add(&logged, 1, __ATOMIC_RELAXED);
	if (n >= GS_CU_UNREADABLE_LOGGED)
		return;
	const char *name = gs_cu_fn_name(f, false);
	if (!name)
		name = gs_cu_fn_name(f, true);
	gs_log(GS_LOG_INFO, "cuda: the parameter layout of kernel %.200s could not be read "
	       "(cuFuncGetParamInfo: %s, cuKernelGetParamInfo: %s); its launches pass through%s",
	       name ? name : "(unnamed)", gs_cu_err_name(rf), gs_cu_err_name(rk),
	       n + 1 == GS_CU_UNREADABLE_LOGGED ? " (further kernels: layouts_unreadable)" : "");
}

/*
 * Limits change with cuFuncSetAttribute while readers use the entry, so
 * they are the one part of an entry stored in place (atomically).
 */
static void gs_cu_fn_limits(gs_cu_fn_t *e, CUfunction f)
{
	int v = 0;
	uint32_t mt = UINT32_MAX, ms = UINT32_MAX;
	if (e->rflags & GS_CU_RF_KERNEL) {
		CUdevice dev;
		if (gs_cu_real.cuKernelGetAttribute && gs_cu_real.cuCtxGetDevice &&
		    gs_cu_real.cuCtxGetDevice(&dev) == CUDA_SUCCESS) {
			if (gs_cu_real.cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
							    (CUkernel)f, dev) == CUDA_SUCCESS && v > 0)
				mt = (uint32_t)v;
			if (gs_cu_real.cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
							    (CUkernel)f, dev) == CUDA_SUCCESS && v >= 0)
				ms = (uint32_t)v;
		}
	} else if (gs_cu_real.cuFuncGetAttribute) {
		if (gs_cu_real.cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f) ==
			    CUDA_SUCCESS && v > 0)
			mt = (uint32_t)v;
		if (gs_cu_real.cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f) ==
			    CUDA_SUCCESS && v >= 0)
			ms = (uint32_t)v;
	}
	__atomic_store_n(&e->max_threads, mt, __ATOMIC_RELAXED);
	__atomic_store_n(&e->max_dyn_shmem, ms, __ATOMIC_RELAXED);
}

static gs_cu_fn_t *gs_cu_fn_make(CUfunction f, uint32_t gen)
{
	gs_cu_fn_t *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->func = f;
	e->gen = gen;
	gs_arg_t *a = NULL;
	uint32_t n = 0;
	CUresult rk = CUDA_ERROR_NOT_SUPPORTED;
	CUresult rf = gs_cu_query_params(f, false, &a, &n);
	if (rf != CUDA_SUCCESS && rf != CUDA_ERROR_OUT_OF_MEMORY && gs_cu_func_load(f))
		rf = gs_cu_query_params(f, false, &a, &n);
	if (rf == CUDA_SUCCESS) {
		e->layout = gs_cu_layout_intern(a, n);
	} else if ((rk = gs_cu_query_params(f, true, &a, &n)) == CUDA_SUCCESS) {
		e->rflags = GS_CU_RF_KERNEL;
		e->layout = gs_cu_layout_intern(a, n);
	}
	free(a);
	if (e->layout)
		gs_cu_fn_limits(e, f);
	else
		gs_cu_unreadable(f, rf, rk);
	return e;
}

static unsigned gs_cu_fn_slot(const void *f)
{
	return (unsigned)gs_mix64((uint64_t)(uintptr_t)f) & (GS_CU_FN_SLOTS - 1);
}

const gs_cu_fn_t *gs_cu_fn_get(CUfunction f)
{
	uint32_t gen = __atomic_load_n(&gs_cu_fn_gen, __ATOMIC_ACQUIRE);
	unsigned i = gs_cu_fn_slot(f);
	for (unsigned probe = 0; probe < GS_CU_FN_SLOTS; probe++) {
		gs_cu_fn_t *e = __atomic_load_n(&gs_cu_fn_tab[i], __ATOMIC_ACQUIRE);
		if (!e)
			break;
		if (e->func == f) {
			if (GS_LIKELY(e->gen == gen))
				return e;
			break;
		}
		i = (i + 1) & (GS_CU_FN_SLOTS - 1);
	}

	/* Miss: query without the lock (the driver may be slow), then publish. */
	gs_self_did(GS_SELF_DID_LAYOUT);
	gs_cu_fn_t *e = gs_cu_fn_make(f, gen);
	if (!e)
		return NULL;
	pthread_mutex_lock(&gs_cu_fn_lock);
	i = gs_cu_fn_slot(f);
	for (;;) {
		gs_cu_fn_t *o = gs_cu_fn_tab[i];
		if (!o) {
			if (gs_cu_fn_used >= GS_CU_FN_SLOTS / 4 * 3) {
				/*
				 * Full: start over.  Entries are never freed,
				 * so readers holding one are unaffected.
				 */
				for (unsigned j = 0; j < GS_CU_FN_SLOTS; j++) {
					if (gs_cu_fn_tab[j])
						gs_cu_fn_retire(gs_cu_fn_tab[j]);
					__atomic_store_n(&gs_cu_fn_tab[j], NULL,
							 __ATOMIC_RELAXED);
				}
				gs_cu_fn_used = 0;
				i = gs_cu_fn_slot(f);
			}
			gs_cu_fn_used++;
			__atomic_store_n(&gs_cu_fn_tab[i], e, __ATOMIC_RELEASE);
			break;
		}
		if (o->func == f) {
			/* The old entry is kept on purpose: a reader may hold it. */
			__atomic_store_n(&gs_cu_fn_tab[i], e, __ATOMIC_RELEASE);
			gs_cu_fn_retire(o);
			break;
		}
		i = (i + 1) & (GS_CU_FN_SLOTS - 1);
	}
	pthread_mutex_unlock(&gs_cu_fn_lock);
	return e;
}

/* The most shared memory of a held launch of any CUkernel-keyed entry. */
static uint64_t gs_cu_kernel_held_shmem;

void gs_cu_fn_held(const gs_cu_fn_t *fn, unsigned shmem)
{
	if (!shmem || shmem <= __atomic_load_n(&fn->held_shmem, __ATOMIC_RELAXED))
		return;
	/* Like the limits, the one other part of an entry stored in place. */
	gs_atomic_max(&((gs_cu_fn_t *)fn)->held_shmem, shmem);
	if (fn->rflags & GS_CU_RF_KERNEL)
		gs_atomic_max(&gs_cu_kernel_held_shmem, shmem);
}

/* An entry's figure; with no entry, anything may be held. */
static uint64_t gs_cu_fn_held_of(CUfunction f)
{
	const gs_cu_fn_t *e = gs_cu_fn_get(f);
	return e ? __atomic_load_n(&e->held_shmem, __ATOMIC_RELAXED) : UINT64_MAX;
}

uint64_t gs_cu_fn_held_shmem(CUfunction f, bool kernel)
{
	uint64_t h = gs_cu_fn_held_of(f), o;
	CUfunction kf = NULL;
	if (!kernel)
		o = __atomic_load_n(&gs_cu_kernel_held_shmem, __ATOMIC_RELAXED);
	else if (gs_cu_real.cuKernelGetFunction &&
		 gs_cu_real.cuKernelGetFunction(&kf, (CUkernel)f) == CUDA_SUCCESS && kf)
		o = gs_cu_fn_held_of(kf);
	else
		o = UINT64_MAX; /* the kernel's function here is not known */
	return o > h ? o : h;
}

void gs_cu_fn_refresh(CUfunction f)
{
	uint32_t gen = __atomic_load_n(&gs_cu_fn_gen, __ATOMIC_ACQUIRE);
	unsigned i = gs_cu_fn_slot(f);
	for (unsigned probe = 0; probe < GS_CU_FN_SLOTS; probe++) {
		gs_cu_fn_t *e = __atomic_load_n(&gs_cu_fn_tab[i], __ATOMIC_ACQUIRE);
		if (!e)
			return;
		if (e->func == f) {
			if (e->gen == gen && e->layout)
				gs_cu_fn_limits(e, f);
			return;
		}
		i = (i + 1) & (GS_CU_FN_SLOTS - 1);
	}
}

void gs_cu_fn_forget(void)
{
	__atomic_add_fetch(&gs_cu_fn_gen, 1, __ATOMIC_ACQ_REL);
}
