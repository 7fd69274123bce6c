/*
 * Start-up of the CUDA backend: open libcuda, resolve every exported name
 * into gs_cu_real with the real dlsym, index the real pointers (so dlsym and
 * cuGetProcAddress can hand out our wrappers instead), then start the engine
 * with our operations table.  The first hook call does this, on any thread,
 * possibly before main() or from another library's constructor.
 */
#include <dlfcn.h>
#include <pthread.h>

#include "cu_internal.h"

gs_cu_lane_t gs_cu_lane __attribute__((aligned(64)));
__thread int gs_cu_depth __attribute__((tls_model("initial-exec")));

static void *gs_cu_lib;
static pthread_once_t gs_cu_once = PTHREAD_ONCE_INIT;
/* Set while this thread runs the initialisation: hooks must not wait on it. */
static __thread int gs_cu_initialising __attribute__((tls_model("initial-exec")));

/*
 * Real pointer -> index into gs_cu_hooks.  Open addressing, written once
 * before gs_cu_lane.state leaves GS_CU_NONE and read-only afterwards.
 */
#define GS_CU_MAP_SIZE 2048u
_Static_assert(GS_CU_MAP_SIZE >= 2 * GS_CU_NHOOKS, "real-pointer map too small");
static struct {
	const void *real;
	int idx;
} gs_cu_map[GS_CU_MAP_SIZE];

_Static_assert(sizeof(gs_cu_real_t) == GS_CU_NHOOKS * sizeof(void *),
	       "gs_cu_real_t must be an array of pointers in effect");

static unsigned gs_cu_map_slot(const void *p)
{
	return (unsigned)gs_mix64((uint64_t)(uintptr_t)p) & (GS_CU_MAP_SIZE - 1);
}

static void gs_cu_map_add(const void *real, int idx)
{
	unsigned i = gs_cu_map_slot(real);
	while (gs_cu_map[i].real) {
		if (gs_cu_map[i].real == real) {
			/* Two names, one function: the first keeps it. */
			if (gs_cu_hooks[gs_cu_map[i].idx].cls != gs_cu_hooks[idx].cls)
				gs_log(GS_LOG_DEBUG, "cuda: %s and %s share one "
				       "entry point but not a class",
				       gs_cu_hooks[gs_cu_map[i].idx].name,
				       gs_cu_hooks[idx].name);
			return;
		}
		i = (i + 1) & (GS_CU_MAP_SIZE - 1);
	}
	gs_cu_map[i].real = real;
	gs_cu_map[i].idx = idx;
}

void *gs_cu_wrapper_for(const void *real)
{
	if (!real || __atomic_load_n(&gs_cu_lane.state, __ATOMIC_ACQUIRE) == GS_CU_NONE)
		return NULL;
	for (unsigned i = gs_cu_map_slot(real); gs_cu_map[i].real;
	     i = (i + 1) & (GS_CU_MAP_SIZE - 1))
		if (gs_cu_map[i].real == real)
			return gs_cu_hooks[gs_cu_map[i].idx].wrapper;
	return NULL;
}

void gs_cu_lane_fill(void)
{
	gs_cu_lane.launch[0] = gs_cu_real.cuLaunchKernel;
	gs_cu_lane.launch[1] = gs_cu_real.cuLaunchKernel_ptsz;
	gs_cu_lane.launch_ex[0] = gs_cu_real.cuLaunchKernelEx;
	gs_cu_lane.launch_ex[1] = gs_cu_real.cuLaunchKernelEx_ptsz;
	gs_cu_lane.ctx_get = gs_cu_real.cuCtxGetCurrent;
}

static void gs_cu_resolve(void)
{
	/*
	 * The soname, so that an application's own libcuda (or the simulator
	 * found through LD_LIBRARY_PATH) is the one we get.
	 */
	gs_cu_lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (!gs_cu_lib) {
		gs_log(GS_LOG_INFO, "cuda: libcuda.so.1 not loadable (%s); "
		       "CUDA calls will fail", dlerror());
		return;
	}
	void **slot = (void **)&gs_cu_real;
	unsigned found = 0;
	for (int i = 0; i < GS_CU_NHOOKS; i++) {
		void *p = gs_cu_dlsym_real(gs_cu_lib, gs_cu_hooks[i].name);
		if (!p)
			continue;
		/* Another thread may be reading the slot: publish it atomically. */
		__atomic_store_n(&slot[i], p, __ATOMIC_RELAXED);
		gs_cu_map_add(p, i);
		found++;
	}
	gs_cu_lane_fill();
	gs_log(GS_LOG_DEBUG, "cuda: %u of %d entry points resolved",
	       found, GS_CU_NHOOKS);
}

static void gs_cu_init_once(void)
{
	gs_cu_resolve();
	__atomic_store_n(&gs_cu_lane.state, GS_CU_RESOLVED, __ATOMIC_RELEASE);
	int next = GS_CU_OFF;
	if (gs_cu_lib && gs_cu_real.cuLaunchKernel && gs_cu_real.cuCtxGetCurrent) {
		gs_cu_depth++;
		bool failed = gs_engine_init(&gs_cu_ops);
		gs_cu_depth--;
		if (!failed)
			next = GS_CU_ON;
	}
	if (next == GS_CU_ON)
		gs_cu_cupti_init(); /* after the configuration (its log level) is read */
	if (next == GS_CU_ON && gs_config.adopt) {
		/* Armed at the first wait of a stream on another's event (cu_adopt.c). */
		pthread_atfork(NULL, NULL, gs_cu_adopt_forget);
	}
	__atomic_store_n(&gs_cu_lane.state, next, __ATOMIC_RELEASE);
}

void gs_cu_init(void)
{
	if (gs_cu_initialising)
		return;
	gs_cu_initialising = 1;
	pthread_once(&gs_cu_once, gs_cu_init_once);
	gs_cu_initialising = 0;
}

CUresult gs_cu_missing(int idx)
{
	static unsigned char logged[GS_CU_NHOOKS];
	if (idx >= 0 && idx < GS_CU_NHOOKS &&
	    !__atomic_exchange_n(&logged[idx], 1, __ATOMIC_RELAXED))
		gs_log(GS_LOG_WARN, "cuda: %s is not available from "
		       "libcuda.so.1", gs_cu_hooks[idx].name);
	if (__atomic_load_n(&gs_cu_lane.state, __ATOMIC_ACQUIRE) == GS_CU_NONE || !gs_cu_lib)
		return CUDA_ERROR_NOT_INITIALIZED;
	return CUDA_ERROR_NOT_SUPPORTED;
}
