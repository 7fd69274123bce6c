/*
 * Where kernel parameter layouts come from.  A function handle (the
 * hipFunction_t of hipModuleGetFunction, or the host stub pointer that
 * hipLaunchKernel receives) maps to its layout, found in this order:
 *   1. hipFuncGetParamInfo, when the runtime has it (probed, never assumed);
 *   2. the AMDGPU metadata of the code object: read when a module is
 *      loaded (hipModuleLoad*, kept per module and looked up by name at
 *      hipModuleGetFunction) or, for host stubs, from the fat binary given
 *      to __hipRegisterFatBinary and the name __hipRegisterFunction gives.
 * No layout, no element: the launch passes through unchanged.  Layouts are
 * never freed (records point at them); unloading a module only unlinks its
 * functions so a reused handle cannot find a stale layout.
 */
#include <pthread.h>
#include <stdlib.h>
#include "gs_hash.h"

#include "hip_internal.h"
#include "gs_log.h"

typedef struct gs_hip_mod {
	const void *key; /* hipModule_t, or the modules pointer of a fat binary */
	gs_hip_codeobj_t co;
	const void *fatbin; /* fat binaries: parsed on first use */
	bool parsed;
	UT_hash_handle hh;
} gs_hip_mod_t;

typedef struct gs_hip_fn {
	const void *key; /* hipFunction_t or host stub */
	const void *mod;
	char *name;      /* host stubs: resolved lazily */
	const gs_layout_t *layout;
	bool resolved;
	uint64_t held_shmem; /* the most dynamic shared memory of a launch of it held */
	UT_hash_handle hh;
} gs_hip_fn_t;

static gs_hip_mod_t *gs_hip_mods;
static gs_hip_fn_t *gs_hip_fns;
static pthread_rwlock_t gs_hip_lay_lock = PTHREAD_RWLOCK_INITIALIZER;

/* The fat binary wrapper clang emits: magic "HIPF", version, the bundle. */
typedef struct gs_hip_fatbin_wrapper {
	uint32_t magic;
	uint32_t version;
	const void *binary;
	const void *unused;
} gs_hip_fatbin_wrapper_t;
#define GS_HIP_FATBIN_MAGIC 0x48495046u

/* Layouts read from the runtime, interned by content; they live for the
 * process (records point at them). */
typedef struct gs_hip_ilayout {
	UT_hash_handle hh;
	gs_layout_t l; /* must be last: flexible array */
} gs_hip_ilayout_t;
static gs_hip_ilayout_t *gs_hip_ilayouts;
static pthread_mutex_t gs_hip_ilayout_lock = PTHREAD_MUTEX_INITIALIZER;

static const gs_layout_t *gs_hip_layout_from_runtime(hipFunction_t f)
{
	/* The probe past the last parameter fails and sets the last error: only
	 * probe when no error of the application's is pending, then clear it. */
	if (!gs_hip_real.hipFuncGetParamInfo || !gs_hip_real.hipPeekAtLastError ||
	    GS_HIP_REAL(gs_hip_real.hipPeekAtLastError()) != hipSuccess)
		return NULL;
	size_t off[256], size[256], n = 0, total = 0;
	while (n < 256 && GS_HIP_REAL(gs_hip_real.hipFuncGetParamInfo(f, n, &off[n], &size[n])) == hipSuccess) {
		if (off[n] + size[n] > total)
			total = off[n] + size[n];
		n++;
	}
	GS_HIP_REAL(gs_hip_real.hipGetLastError()); /* the probe past the end failed */
	if (!n || n == 256)
		return NULL;
	gs_hip_ilayout_t *it = calloc(1, sizeof(*it) + n * sizeof(gs_arg_t));
	if (!it)
		return NULL;
	gs_layout_t *l = &it->l;
	l->nargs = (uint32_t)n;
	l->total = (uint32_t)total;
	for (size_t i = 0; i < n; i++) {
		l->arg[i].off = (uint32_t)off[i];
		l->arg[i].size = (uint32_t)size[i];
	}
	/* Interned: one copy per distinct layout, however often a program asks
	 * for its functions (each query leaked a copy before). */
	size_t klen = sizeof(gs_layout_t) + n * sizeof(gs_arg_t);
	gs_hip_ilayout_t *old = NULL;
	pthread_mutex_lock(&gs_hip_ilayout_lock);
	HASH_FIND(hh, gs_hip_ilayouts, l, klen, old);
	if (!old) /* on OOM it is returned uninterned: still valid, never freed */
		HASH_ADD_KEYPTR(hh, gs_hip_ilayouts, l, klen, it);
	pthread_mutex_unlock(&gs_hip_ilayout_lock);
	if (old) {
		free(it);
		return &old->l;
	}
	return l;
}

static void gs_hip_mod_drop(const void *key)
{
	gs_hip_mod_t *m;
	gs_hip_fn_t *f, *tmp;
	pthread_rwlock_wrlock(&gs_hip_lay_lock);
	HASH_FIND_PTR(gs_hip_mods, &key, m);
	if (m)
		HASH_DEL(gs_hip_mods, m);
	HASH_ITER(hh, gs_hip_fns, f, tmp) {
		if (f->mod == key) {
			HASH_DEL(gs_hip_fns, f);
			free(f->name);
			free(f);
		}
	}
	pthread_rwlock_unlock(&gs_hip_lay_lock);
	if (m) {
		gs_hip_codeobj_free(&m->co);
		free(m);
	}
}

/* Add a module's parsed code object (takes co). */
static void gs_hip_mod_add(const void *key, gs_hip_codeobj_t *co, const void *fatbin)
{
	gs_hip_mod_t *m = calloc(1, sizeof(*m));
	if (!m) {
		gs_hip_codeobj_free(co);
		return;
	}
	m->key = key;
	if (co)
		m->co = *co;
	m->fatbin = fatbin;
	m->parsed = !fatbin;
	/* A reused handle: the old module's functions (which point at its
	 * layouts) go with it. */
	gs_hip_mod_drop(key);
	pthread_rwlock_wrlock(&gs_hip_lay_lock);
	GS_HASH_TRY();
	HASH_ADD_PTR(gs_hip_mods, key, m);
	bool lost = gs_hash_oom;
	pthread_rwlock_unlock(&gs_hip_lay_lock);
	if (lost) { /* no table: its launches pass through */
		gs_hip_codeobj_free(&m->co);
		free(m);
	}
}

static void gs_hip_fn_add(const void *key, const void *mod, const char *name, const gs_layout_t *l,
			  bool resolved)
{
	gs_hip_fn_t *f = calloc(1, sizeof(*f)), *old;
	if (!f)
		return;
	f->key = key;
	f->mod = mod;
	f->name = name ? strdup(name) : NULL;
	f->layout = l;
	f->resolved = resolved;
	pthread_rwlock_wrlock(&gs_hip_lay_lock);
	HASH_FIND_PTR(gs_hip_fns, &key, old);
	if (old) {
		HASH_DEL(gs_hip_fns, old);
		free(old->name);
		free(old);
	}
	GS_HASH_TRY();
	HASH_ADD_PTR(gs_hip_fns, key, f);
	bool lost = gs_hash_oom;
	pthread_rwlock_unlock(&gs_hip_lay_lock);
	if (lost) {
		free(f->name);
		free(f);
	}
}

const gs_layout_t *gs_hip_layout_of(const void *func)
{
	gs_hip_fn_t *f;
	const gs_layout_t *l = NULL;
	bool resolved = false;
	pthread_rwlock_rdlock(&gs_hip_lay_lock);
	HASH_FIND_PTR(gs_hip_fns, &func, f);
	if (f) {
		l = f->layout;
		resolved = f->resolved;
	}
	pthread_rwlock_unlock(&gs_hip_lay_lock);
	if (!f || resolved)
		return l;
	/* A host stub seen for the first time: parse its fat binary now. */
	pthread_rwlock_wrlock(&gs_hip_lay_lock);
	HASH_FIND_PTR(gs_hip_fns, &func, f);
	if (f && !f->resolved) {
		gs_hip_mod_t *m;
		HASH_FIND_PTR(gs_hip_mods, &f->mod, m);
		if (m && !m->parsed) {
			m->parsed = true;
			const gs_hip_fatbin_wrapper_t *w = m->fatbin;
			size_t span = w && w->magic == GS_HIP_FATBIN_MAGIC ? gs_hip_codeobj_span(w->binary) : 0;
			if (!span || gs_hip_codeobj_parse(w->binary, span, &m->co))
				gs_log(GS_LOG_INFO, "hip: no kernel metadata in a fat binary; its launches pass through");
		}
		f->layout = m && f->name ? gs_hip_codeobj_find(&m->co, f->name) : NULL;
		f->resolved = true;
		l = f->layout;
	} else if (f) {
		l = f->layout;
	}
	pthread_rwlock_unlock(&gs_hip_lay_lock);
	return l;
}

void gs_hip_fn_held(const void *func, size_t shmem)
{
	gs_hip_fn_t *f;
	if (!shmem)
		return;
	pthread_rwlock_rdlock(&gs_hip_lay_lock);
	HASH_FIND_PTR(gs_hip_fns, &func, f);
	if (f)
		gs_atomic_max(&f->held_shmem, shmem);
	pthread_rwlock_unlock(&gs_hip_lay_lock);
}

uint64_t gs_hip_fn_held_shmem(const void *func)
{
	gs_hip_fn_t *f;
	uint64_t h = UINT64_MAX; /* a function not known here: any launch may be held */
	pthread_rwlock_rdlock(&gs_hip_lay_lock);
	HASH_FIND_PTR(gs_hip_fns, &func, f);
	if (f)
		h = __atomic_load_n(&f->held_shmem, __ATOMIC_RELAXED);
	pthread_rwlock_unlock(&gs_hip_lay_lock);
	return h;
}

const char *gs_hip_name_of(const void *func)
{
	gs_hip_fn_t *f;
	const char *name = NULL;
	pthread_rwlock_rdlock(&gs_hip_lay_lock);
	HASH_FIND_PTR(gs_hip_fns, &func, f);
	if (f)
		name = f->name; /* freed only when its module is unloaded */
	pthread_rwlock_unlock(&gs_hip_lay_lock);
	return name;
}

static void gs_hip_module_loaded(hipModule_t mod, const void *image, const char *path)
{
	gs_hip_codeobj_t co;
	bool bad = path ? gs_hip_codeobj_parse_file(path, &co)
			: gs_hip_codeobj_parse(image, gs_hip_codeobj_span(image), &co);
	if (bad)
		gs_log(GS_LOG_INFO, "hip: no kernel metadata in a module; launches with kernelParams pass through");
	gs_hip_mod_add(mod, bad ? NULL : &co, NULL);
}

GS_EXPORT hipError_t hipModuleLoad(hipModule_t *module, const char *fname)
{
	if (gs_hip_bypass())
		return gs_hip_real.hipModuleLoad ? gs_hip_real.hipModuleLoad(module, fname) : hipErrorNotSupported;
	gs_engine_flush_all(GS_FLUSH_MODULE, "hipModuleLoad");
	hipError_t rc = GS_HIP_REAL(gs_hip_real.hipModuleLoad(module, fname));
	if (rc == hipSuccess && module && fname)
		gs_hip_module_loaded(*module, NULL, fname);
	return rc;
}

GS_EXPORT hipError_t hipModuleLoadData(hipModule_t *module, const void *image)
{
	if (gs_hip_bypass())
		return gs_hip_real.hipModuleLoadData ? gs_hip_real.hipModuleLoadData(module, image)
						     : hipErrorNotSupported;
	gs_engine_flush_all(GS_FLUSH_MODULE, "hipModuleLoadData");
	hipError_t rc = GS_HIP_REAL(gs_hip_real.hipModuleLoadData(module, image));
	if (rc == hipSuccess && module && image)
		gs_hip_module_loaded(*module, image, NULL);
	return rc;
}

GS_EXPORT hipError_t hipModuleLoadDataEx(hipModule_t *module, const void *image, unsigned int numOptions,
					 hipJitOption *options, void **optionValues)
{
	if (gs_hip_bypass())
		return gs_hip_real.hipModuleLoadDataEx
			       ? gs_hip_real.hipModuleLoadDataEx(module, image, numOptions, options, optionValues)
			       : hipErrorNotSupported;
	gs_engine_flush_all(GS_FLUSH_MODULE, "hipModuleLoadDataEx");
	hipError_t rc = GS_HIP_REAL(gs_hip_real.hipModuleLoadDataEx(module, image, numOptions, options, optionValues));
	if (rc == hipSuccess && module && image)
		gs_hip_module_loaded(*module, image, NULL);
	return rc;
}

GS_EXPORT hipError_t hipModuleUnload(hipModule_t module)
{
	if (gs_hip_bypass())
		return gs_hip_real.hipModuleUnload ? gs_hip_real.hipModuleUnload(module) : hipErrorNotSupported;
	/* Its functions' handles may come back for other kernels: drop every
	 * sequence (and graph) that could name one. */
	gs_engine_forget_funcs("hipModuleUnload");
	gs_hip_mod_drop(module);
	return GS_HIP_REAL(gs_hip_real.hipModuleUnload(module));
}

GS_EXPORT hipError_t hipModuleGetFunction(hipFunction_t *function, hipModule_t module, const char *kname)
{
	gs_hip_init();
	if (!gs_hip_real.hipModuleGetFunction)
		return hipErrorNotSupported;
	hipError_t rc = GS_HIP_REAL(gs_hip_real.hipModuleGetFunction(function, module, kname));
	if (rc != hipSuccess || !function || !kname || gs_hip_depth)
		return rc;
	const gs_layout_t *l = gs_hip_layout_from_runtime(*function);
	if (!l) {
		gs_hip_mod_t *m;
		pthread_rwlock_rdlock(&gs_hip_lay_lock);
		HASH_FIND_PTR(gs_hip_mods, &module, m);
		l = m ? gs_hip_codeobj_find(&m->co, kname) : NULL;
		pthread_rwlock_unlock(&gs_hip_lay_lock);
	}
	gs_hip_fn_add(*function, module, kname, l, true);
	return rc;
}

GS_EXPORT void **__hipRegisterFatBinary(const void *data)
{
	gs_hip_init();
	if (!gs_hip_real.__hipRegisterFatBinary)
		return NULL;
	void **mods = GS_HIP_REAL(gs_hip_real.__hipRegisterFatBinary(data));
	if (mods && data)
		gs_hip_mod_add(mods, NULL, data); /* parsed when one of its kernels is launched */
	return mods;
}

GS_EXPORT void __hipUnregisterFatBinary(void **modules)
{
	/* As hipModuleUnload: its functions' layouts are freed with it. */
	if (!gs_hip_bypass())
		gs_engine_forget_funcs("__hipUnregisterFatBinary");
	gs_hip_mod_drop(modules);
	if (gs_hip_real.__hipUnregisterFatBinary)
		GS_HIP_REALV(gs_hip_real.__hipUnregisterFatBinary(modules));
}

GS_EXPORT void __hipRegisterFunction(void **modules, const void *hostFunction, char *deviceFunction,
				     const char *deviceName, unsigned int threadLimit, void *tid, void *bid,
				     void *blockDim, void *gridDim, int *wSize)
{
	gs_hip_init();
	if (hostFunction && deviceName)
		gs_hip_fn_add(hostFunction, modules, deviceName, NULL, false);
	if (gs_hip_real.__hipRegisterFunction)
		GS_HIP_REALV(gs_hip_real.__hipRegisterFunction(modules, hostFunction, deviceFunction, deviceName,
							       threadLimit, tid, bid, blockDim, gridDim, wSize));
}
