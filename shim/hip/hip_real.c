/*
 * Finds the real libamdhip64 and resolves every listed entry point once,
 * then starts the engine with the HIP operations table.  The library is
 * opened by name (the application has normally loaded it already, so this
 * returns the same copy) and looked up with the real dlsym, never through
 * RTLD_NEXT or an interposed dlsym, so a hook can never resolve to itself.
 * The 5.2 runtime exports hipExtModuleLaunchKernel and
 * hipHccModuleLaunchKernel with C++ names only; both spellings are tried.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

#include "hip_internal.h"
#include "gs_config.h"
#include "gs_log.h"

gs_hip_real_t gs_hip_real;
__thread int gs_hip_depth GS_TLS_IE;

static pthread_once_t gs_hip_once = PTHREAD_ONCE_INIT;
static bool gs_hip_failed = true;

/* C++ spellings of entry points the 5.2 runtime does not export as C. */
static const char *const gs_hip_mangled[][2] = {
	{"hipExtModuleLaunchKernel",
	 "_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j"},
	{"hipHccModuleLaunchKernel",
	 "_Z24hipHccModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_"},
};

typedef void *(*gs_dlsym_fn)(void *, const char *);

static gs_dlsym_fn gs_hip_dlsym_real(void)
{
	/* dlsym itself may be interposed by the CUDA backend: take libc's. */
	void *f = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
	if (!f)
		f = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
	return f ? (gs_dlsym_fn)f : dlsym;
}

static void *gs_hip_lookup(gs_dlsym_fn sym, void *lib, const char *name)
{
	void *f = sym(lib, name);
	for (size_t i = 0; !f && i < GS_ARRAY_SIZE(gs_hip_mangled); i++)
		if (!strcmp(name, gs_hip_mangled[i][0]))
			f = sym(lib, gs_hip_mangled[i][1]);
	return f;
}

static void gs_hip_init_once(void)
{
	/*
	 * GRAPHSHIM_HIP_LIBRARY (tests, odd installs) is read with the rest of
	 * the configuration, so never in secure-execution mode: a setuid
	 * program must not load a library its environment names.  The
	 * configuration is read here, before the engine starts, for it.
	 */
	gs_config_load_once();
	const char *path = gs_config.hip_library;
	void *lib = NULL;
	if (path[0])
		lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
	if (!lib)
		lib = dlopen("libamdhip64.so.5", RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
	if (!lib)
		lib = dlopen("libamdhip64.so", RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
	if (!lib)
		lib = dlopen("libamdhip64.so.6", RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
	if (!lib)
		lib = dlopen("libamdhip64.so.7", RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
	if (!lib)
		lib = dlopen("libamdhip64.so.5", RTLD_NOW | RTLD_GLOBAL);
	if (!lib)
		lib = dlopen("libamdhip64.so", RTLD_NOW | RTLD_GLOBAL);
	if (!lib) {
		gs_log(GS_LOG_ERROR, "hip: libamdhip64 not found; HIP calls cannot be forwarded");
		return;
	}
	gs_dlsym_fn sym = gs_hip_dlsym_real();
#define GS_HOOK(c, ret, name, params, args)                                    \
	*(void **)&gs_hip_real.name = gs_hip_lookup(sym, lib, #name);
#include "hip_api.def"
#undef GS_HOOK
	*(void **)&gs_hip_real.hipFuncGetParamInfo = sym(lib, "hipFuncGetParamInfo");
	if (!gs_hip_real.hipModuleLaunchKernel || !gs_hip_real.hipStreamGetFlags) {
		gs_log(GS_LOG_ERROR, "hip: libamdhip64 lacks hipModuleLaunchKernel; passing through");
		return;
	}
	gs_hip_failed = gs_engine_init(&gs_hip_ops);
	if (!gs_hip_failed && gs_config.adopt)
		pthread_atfork(NULL, NULL, gs_hip_adopt_forget);
}

bool gs_hip_init(void)
{
	pthread_once(&gs_hip_once, gs_hip_init_once);
	return gs_hip_failed;
}

long long gs_hip_max_patches(void)
{
	return gs_config.hip_max_patches; /* validated with the rest (gs_config.c) */
}
